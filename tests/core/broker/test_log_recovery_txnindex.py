"""Log recovery rebuilds a segment's ``.txnindex`` as Kafka 2.6.3's LogSegment.recover(producerStateManager, ...)
does (txnIndex.reset(), then per batch updateProducerState: updateTxnIndex(completedTxn, lastStableOffset) before
completeTxn), so after recovery the index holds exactly the aborted transactions of the surviving batches.

Found by `kactor sim --seeds 46 --steps 50 --txn-check` (issue #40): broker 1 lost power; the clean-shutdown marker
of its previous restart came back with the power loss (its unlink never reached the disk), the ``.log`` kept a torn
prefix and the ``.txnindex`` an entry for an ABORT marker the log no longer held; the load recovered the torn tail
but left the txnindex as it was, and re-fetching that marker from the leader raised "The last offset of appended
transactions must increase sequentially, but 44 is not greater than current last offset 44"."""

from __future__ import annotations

import os

import pytest

from core.broker.log import Log
from core.broker.log_config import LogConfig
from core.broker.log_segment import LogSegment
from core.broker.producer_state import COORDINATOR, ProducerStateManager
from core.broker.transaction_index import AbortedTxn, CorruptIndexError, TransactionIndex
from messages.common import TopicPartition
from protocol.records import CONTROL_ABORT, EndTransactionMarker, Record, build_batch, build_end_txn_marker_batch

TP = TopicPartition("t", 0)
T0 = 1_700_000_000_000
TRANSACTIONAL = 0x10
ABORTS = [AbortedTxn(1, 0, 4, 2), AbortedTxn(2, 2, 7, 5), AbortedTxn(3, 5, 8, 9)]


def txn_batch(pid: int, seq: int) -> bytes:
    return build_batch([Record(i, i, None, f"v{i}".encode()) for i in range(2)], first_timestamp=T0,
                       producer_id=pid, producer_epoch=0, base_sequence=seq, attributes=TRANSACTIONAL)


def abort(log: Log, pid: int) -> int:
    marker = build_end_txn_marker_batch(pid, 0, EndTransactionMarker(CONTROL_ABORT, 0), T0)
    return log.append_as_leader(marker, 0, T0, COORDINATOR).first_offset


def three_aborts(directory: str, config: LogConfig | None = None) -> Log:
    """Producer 1 at 0-1, producer 2 at 2-3, producer 1 aborts (4), producer 3 at 5-6, producer 2 aborts (7),
    producer 3 aborts (8): the txnindex is ABORTS, each entry's last stable offset bounded by the transactions of
    the others still open when its marker completed it."""
    log = Log(directory, TP, config=config or LogConfig())
    log.append_as_leader(txn_batch(1, 0), 0, T0)
    log.append_as_leader(txn_batch(2, 0), 0, T0)
    assert abort(log, 1) == 4
    log.append_as_leader(txn_batch(3, 0), 0, T0)
    assert abort(log, 2) == 7
    assert abort(log, 3) == 8
    assert [e for s in log.segments for e in s.txn_index.entries()] == ABORTS
    return log


def batch_ends(segment: LogSegment) -> list[tuple[int, int]]:
    """(end position, next offset) of each batch of the segment."""
    return [(pos + size, last + 1) for pos, _base, last, size in segment.frames()]


def test_sanity_check_refuses_an_entry_before_the_segment_or_at_or_past_its_next_offset(tmp_path):
    """TransactionIndex.sanityCheck (an entry whose marker is below the start offset), and kactor's bound: none at or
    past the segment's next offset."""
    index = TransactionIndex(str(tmp_path), 10)
    index.sanity_check(10)  # no file: nothing to check
    index.append(AbortedTxn(1, 10, 12, 13))
    index.sanity_check(13)
    with pytest.raises(CorruptIndexError, match="not below the segment's next offset 12"):
        index.sanity_check(12)
    low = TransactionIndex(str(tmp_path / "low"), 10)
    os.mkdir(tmp_path / "low")
    low.append(AbortedTxn(1, 3, 9, 10))
    with pytest.raises(CorruptIndexError, match="less than start offset 10"):
        low.sanity_check(20)


@pytest.mark.parametrize("cut_back", [1, 30, 61])
def test_recover_rebuilds_exactly_the_aborted_transactions_of_the_surviving_batches(tmp_path, cut_back):
    """A torn tail (every cut from one byte into the last ABORT marker to inside the one before): LogSegment.recover
    on an empty producer state cuts the torn batch and the txnindex keeps exactly the entries whose marker
    survived, with the last stable offsets the appends wrote; the producers' state is the surviving batches'."""
    log = three_aborts(str(tmp_path))
    segment = log.segments[0]
    log.close()
    path = segment.log_path
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(size - cut_back)
    ends = batch_ends(segment)
    survivors = max(nxt for end, nxt in [(0, 0), *ends] if end <= size - cut_back)
    fresh = LogSegment(log.dir, 0, log.config.index_interval_bytes, None)
    state = ProducerStateManager()
    assert fresh.recover(state) > 0
    assert fresh.next_offset == survivors < 9
    expected = [t for t in ABORTS if t.last_offset < survivors]
    assert fresh.txn_index.entries() == expected
    reloaded = TransactionIndex(log.dir, 0)
    reloaded.load()
    assert reloaded.entries() == expected  # on disk, not only in memory
    ongoing = sorted((t.producer_id, t.first_offset) for t in state.ongoing_txns.values())
    assert ongoing == [(t.producer_id, t.first_offset) for t in ABORTS if t.last_offset >= survivors]


def test_recover_resets_a_txnindex_entry_past_the_recovered_end(tmp_path):
    """An entry appended to the txnindex whose marker the log never held (the index's append reached the disk, the
    log's did not) goes: the index is rebuilt, not kept."""
    log = three_aborts(str(tmp_path))
    log.close()
    index = TransactionIndex(log.dir, 0)
    index.load()
    index.append(AbortedTxn(4, 9, 12, 13))
    fresh = LogSegment(log.dir, 0, log.config.index_interval_bytes, None)
    assert fresh.recover(ProducerStateManager()) == 0
    assert fresh.next_offset == 9 and fresh.txn_index.entries() == ABORTS


def _follower_refetches(reopened: Log, leader_bytes: bytes) -> None:
    """The follower fetches the lost batches again from the leader: each ABORT marker is indexed once more."""
    reopened.append_as_follower(leader_bytes, T0)
    assert reopened.log_end_offset == 9
    assert reopened.segments[0].txn_index.entries() == ABORTS


@pytest.mark.parametrize("whole_batches", [False, True])
def test_a_clean_shutdown_marker_back_after_a_power_loss_does_not_keep_a_lost_markers_entry(tmp_path,
                                                                                            whole_batches):
    """Seed 46: the log is opened as cleanly shut down (the marker a power loss brought back) while its ``.log``
    lost the last ABORT marker — torn inside it (the tail check sends the load to a recovery) or cut at a batch
    boundary (the txnindex's sanity check does) — and its ``.txnindex`` kept that marker's entry. The load leaves
    the txnindex of the surviving batches, and re-fetching the marker from the leader indexes it again instead of
    failing the partition."""
    log = three_aborts(str(tmp_path))
    leader_bytes = log.read(8, 1 << 20)
    segment = log.segments[0]
    log.close()
    ends = batch_ends(segment)
    keep = ends[-2][0] if whole_batches else ends[-1][0] - 3
    with open(segment.log_path, "r+b") as f:
        f.truncate(keep)
    reopened = Log(str(tmp_path), TP, high_watermark=8, recovery_point=9, clean_shutdown=True)
    assert reopened.log_end_offset == 8
    assert reopened.segments[0].txn_index.entries() == ABORTS[:2]
    # producer 3's transaction is open again: its marker is gone
    assert sorted(t.first_offset for t in reopened.producer_state.ongoing_txns.values()) == [5]
    _follower_refetches(reopened, leader_bytes)


def test_an_empty_log_beside_a_txnindex_is_recovered_not_taken_as_new(tmp_path):
    """A power loss kept none of the ``.log``'s bytes nor its offset and time indexes, but kept the ``.txnindex``:
    the segment is not a new log's; its recovery leaves no txnindex, and the follower's re-fetch from 0 indexes the
    three aborts again."""
    log = three_aborts(str(tmp_path))
    leader_bytes = log.read(0, 1 << 20)
    segment = log.segments[0]
    log.close()
    for path in (segment.offset_index.path, segment.time_index.path, *(
            os.path.join(log.dir, n) for n in os.listdir(log.dir) if n.endswith(".snapshot"))):
        if os.path.exists(path):
            os.unlink(path)
    with open(segment.log_path, "r+b") as f:
        f.truncate(0)
    reopened = Log(str(tmp_path), TP)
    assert reopened.log_end_offset == 0
    assert not os.path.exists(segment.txn_index.path) and reopened.segments[0].txn_index.entries() == []
    reopened.append_as_follower(leader_bytes, T0)
    assert reopened.segments[0].txn_index.entries() == ABORTS


def test_a_trusted_segment_whose_txnindex_fails_its_check_is_recovered_on_the_state_at_its_base(tmp_path):
    """Log.loadSegmentFiles → sanityCheck → recoverSegment: a segment below the recovery point whose txnindex holds
    an entry past its end is recovered on the producers' state at its base offset (a transaction begun in an
    earlier segment keeps its first offset, another producer's open one bounds the last stable offset)."""
    config = LogConfig(segment_bytes=100)  # one batch a segment
    log = three_aborts(str(tmp_path), config)
    bases = [s.base_offset for s in log.segments]
    assert bases == [0, 2, 4, 5, 7, 8]
    log.close()
    index = TransactionIndex(log.dir, 4)
    index.load()
    index.append(AbortedTxn(9, 4, 6, 7))  # segment 4 holds only offset 4
    reopened = Log(str(tmp_path), TP, config=config, high_watermark=9, recovery_point=9)
    assert [s.txn_index.entries() for s in reopened.segments] == [[], [], [ABORTS[0]], [], [ABORTS[1]], [ABORTS[2]]]
    assert reopened.log_end_offset == 9
