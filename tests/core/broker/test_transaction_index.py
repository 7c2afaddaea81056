"""core/broker/transaction_index.py: Kafka 2.6's TransactionIndex (``.txnindex``, 34-byte AbortedTxn entries)."""

from __future__ import annotations

import os
import struct

import pytest

from core.broker.transaction_index import ENTRY_SIZE, AbortedTxn, CorruptIndexError, TransactionIndex, decode_entries


def test_entries_are_kafkas_34_bytes_and_the_file_appears_with_the_first():
    assert ENTRY_SIZE == 34
    assert AbortedTxn(5, 10, 20, 21).encode() == struct.pack(">hqqqq", 0, 5, 10, 20, 21)


def test_append_in_marker_order_read_back_truncate_and_delete(tmp_path):
    index = TransactionIndex(str(tmp_path), 100)
    assert index.path.endswith("00000000000000000100.txnindex") and not os.path.exists(index.path)
    index.append(AbortedTxn(1, 100, 105, 106))
    index.append(AbortedTxn(2, 101, 110, 111))
    with pytest.raises(ValueError):
        index.append(AbortedTxn(3, 102, 110, 111))  # not after the last marker
    assert os.path.getsize(index.path) == 2 * ENTRY_SIZE
    reopened = TransactionIndex(str(tmp_path), 100)
    reopened.load()
    assert reopened.entries() == [AbortedTxn(1, 100, 105, 106), AbortedTxn(2, 101, 110, 111)]
    reopened.truncate_to(110)  # the marker at 110 goes
    assert reopened.entries() == [AbortedTxn(1, 100, 105, 106)] and os.path.getsize(index.path) == ENTRY_SIZE
    reopened.append(AbortedTxn(2, 101, 108, 109))  # after a truncation the next marker may come earlier
    reopened.delete()
    assert not os.path.exists(index.path) and reopened.entries() == []


def test_a_torn_last_entry_is_cut_off_on_load_and_a_bad_version_is_corrupt(tmp_path):
    index = TransactionIndex(str(tmp_path), 0)
    index.append(AbortedTxn(1, 0, 5, 6))
    with open(index.path, "ab") as f:
        f.write(b"\x00" * 10)
    index.load()
    assert index.size == ENTRY_SIZE and os.path.getsize(index.path) == ENTRY_SIZE
    with pytest.raises(CorruptIndexError):
        decode_entries(struct.pack(">hqqqq", 1, 1, 0, 5, 6))


def test_collect_aborted_txns_overlapping_the_range_and_complete_once_an_lso_reaches_the_bound(tmp_path):
    """TransactionIndex.collectAbortedTxns: lastOffset >= fetchOffset and firstOffset < upperBound; the search is
    complete at the first entry whose lastStableOffset >= upperBound."""
    index = TransactionIndex(str(tmp_path), 0)
    for txn in (AbortedTxn(1, 0, 4, 5), AbortedTxn(2, 3, 9, 10), AbortedTxn(3, 12, 15, 16), AbortedTxn(4, 20, 25, 30)):
        index.append(txn)
    result = index.collect_aborted_txns(5, 13)
    assert [t.producer_id for t in result.aborted] == [2, 3] and result.is_complete  # entry 3's LSO 16 >= 13
    result = index.collect_aborted_txns(0, 100)
    assert [t.producer_id for t in result.aborted] == [1, 2, 3, 4] and not result.is_complete
    assert index.collect_aborted_txns(26, 100).aborted == ()
