"""core/broker/log.py with transactions (Kafka 2.6.3's Log.append / analyzeAndValidateProducerState /
updateTxnIndex, lastStableOffset, collectAbortedTransactions, loadProducerState, recoverSegment, truncateTo): markers
complete transactions, ABORT markers go to the segment's ``.txnindex``, the last stable offset is the least of the
high watermark and the first unstable offset, and a restart, a recovery or a truncation leaves exactly the state the
batches imply."""

from __future__ import annotations

import os

import pytest

from core.broker.api_error import ApiError
from core.broker.log import Log
from core.broker.log_config import LogConfig
from core.broker.producer_state import COORDINATOR, ProducerStateManager
from core.broker.transaction_index import ENTRY_SIZE, AbortedTxn
from messages.common import Errors, TopicPartition
from protocol.records import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    EndTransactionMarker,
    Record,
    build_batch,
    build_end_txn_marker_batch,
    iter_batches,
)

TP = TopicPartition("t", 0)
T0 = 1_700_000_000_000
TRANSACTIONAL = 0x10


def txn_batch(pid: int, seq: int, n: int = 2, epoch: int = 0, tag: str = "v") -> bytes:
    return build_batch([Record(i, i, None, f"{tag}{i}".encode()) for i in range(n)], first_timestamp=T0,
                       producer_id=pid, producer_epoch=epoch, base_sequence=seq, attributes=TRANSACTIONAL)


def end(log: Log, pid: int, commit: bool, epoch: int = 0, coordinator_epoch: int = 0) -> int:
    """A coordinator's marker appended as WriteTxnMarkers does; its offset."""
    marker = EndTransactionMarker(CONTROL_COMMIT if commit else CONTROL_ABORT, coordinator_epoch)
    info = log.append_as_leader(build_end_txn_marker_batch(pid, epoch, marker, T0), 0, T0, COORDINATOR)
    return info.first_offset


def state_of(manager: ProducerStateManager) -> tuple:
    """Everything the producers' state holds, comparable."""
    return (
        sorted((pid, e.producer_epoch, e.coordinator_epoch, e.current_txn_first_offset, e.last_seq, e.last_offset,
                e.last_timestamp) for pid, e in manager.producers.items()),
        sorted((t.producer_id, t.first_offset, t.last_offset) for t in manager.ongoing_txns.values()),
    )


def interleaved(log: Log) -> None:
    """Producer 1 at 0-1, producer 2 at 2-3, producer 1 at 4-5; producer 1 aborts (6), producer 3 at 7-8."""
    log.append_as_leader(txn_batch(1, 0), 0, T0)
    log.append_as_leader(txn_batch(2, 0), 0, T0)
    log.append_as_leader(txn_batch(1, 2), 0, T0)
    assert end(log, 1, commit=False) == 6
    log.append_as_leader(txn_batch(3, 0), 0, T0)


def test_the_last_stable_offset_is_the_high_watermark_bounded_by_the_first_unstable_offset(tmp_path):
    log = Log(str(tmp_path), TP)
    interleaved(log)
    assert log.log_end_offset == 9 and log.first_unstable_offset == 0
    log.update_high_watermark(9)
    # producer 1's aborted transaction is replicated now; producer 2's (from 2) is still open
    assert (log.first_unstable_offset, log.last_stable_offset) == (2, 2)
    assert end(log, 2, commit=True) == 9
    log.update_high_watermark(9)  # the marker is not replicated yet: producer 2's transaction is still unstable
    assert log.last_stable_offset == 2
    assert log.maybe_increment_high_watermark(10)
    assert (log.first_unstable_offset, log.last_stable_offset) == (7, 7)  # producer 3's, open from 7
    log.update_high_watermark(5)
    assert log.last_stable_offset == 5  # never above the high watermark


def test_an_abort_marker_writes_the_txnindex_entry_with_the_lso_it_leaves(tmp_path):
    """Log.append → segment.updateTxnIndex(completedTxn, producerStateManager.lastStableOffset(completedTxn)):
    producer 1's aborted transaction spans 0-6, and producer 2's transaction still open at 2 bounds its LSO."""
    log = Log(str(tmp_path), TP)
    interleaved(log)
    path = os.path.join(log.dir, "00000000000000000000.txnindex")
    assert os.path.getsize(path) == ENTRY_SIZE
    assert log.segments[0].txn_index.entries() == [AbortedTxn(1, 0, 6, 2)]
    end(log, 2, commit=True)  # a commit writes nothing
    assert os.path.getsize(path) == ENTRY_SIZE
    end(log, 3, commit=False)
    assert log.segments[0].txn_index.entries() == [AbortedTxn(1, 0, 6, 2), AbortedTxn(3, 7, 10, 11)]
    assert [(t.producer_id, t.first_offset) for t in log.collect_aborted_transactions(3, 7)] == [(1, 0)]
    assert [(t.producer_id, t.first_offset) for t in log.collect_aborted_transactions(6, 11)] == [(1, 0), (3, 7)]
    assert log.collect_aborted_transactions(10, 11) == [AbortedTxn(3, 7, 10, 11)]


def test_markers_are_checked_as_a_coordinator_appends_and_refused_from_clients(tmp_path):
    log = Log(str(tmp_path), TP)
    log.append_as_leader(txn_batch(1, 0, epoch=2), 0, T0)
    end(log, 1, commit=True, epoch=2, coordinator_epoch=4)
    log.append_as_leader(txn_batch(1, 2, epoch=2), 0, T0)
    for kwargs, error in (({"coordinator_epoch": 3, "epoch": 2}, Errors.TRANSACTION_COORDINATOR_FENCED),
                          ({"coordinator_epoch": 4, "epoch": 1}, Errors.INVALID_PRODUCER_EPOCH)):
        with pytest.raises(ApiError) as e:
            end(log, 1, commit=False, **kwargs)
        assert e.value.error == error
    with pytest.raises(ApiError) as e:  # a client may not write a control batch
        log.append_as_leader(build_end_txn_marker_batch(1, 2, EndTransactionMarker(CONTROL_ABORT, 4), T0), 0, T0)
    assert e.value.error == Errors.INVALID_RECORD
    assert log.log_end_offset == 5 and log.producer_state.producers[1].current_txn_first_offset == 3
    # a non-transactional batch of the producer inside its transaction
    plain = build_batch([Record(0, 0, None, b"x")], first_timestamp=T0, producer_id=1, producer_epoch=2,
                        base_sequence=4)
    with pytest.raises(ApiError) as e:
        log.append_as_leader(plain, 0, T0)
    assert e.value.error == Errors.INVALID_TXN_STATE and log.log_end_offset == 5


def test_a_restart_rebuilds_exactly_from_the_snapshot_or_the_batches(tmp_path):
    """A clean close snapshots the producers (their open transactions with them); without a snapshot the batches are
    replayed (a crash): either way the reopened log's state, first unstable offset and txnindex are the same."""
    config = LogConfig(segment_bytes=300)
    log = Log(str(tmp_path / "clean"), TP, config=config)
    interleaved(log)
    end(log, 3, commit=True)
    log.append_as_leader(txn_batch(2, 2), 0, T0)
    log.update_high_watermark(log.log_end_offset)
    assert len(log.segments) > 1
    before = state_of(log.producer_state)
    before_index = [s.txn_index.entries() for s in log.segments]
    assert before[1] == [(2, 2, None)] and log.last_stable_offset == 2
    log.close()
    assert f"{log.log_end_offset:020d}.snapshot" in os.listdir(log.dir)
    reopened = Log(str(tmp_path / "clean"), TP, config=config, high_watermark=log.log_end_offset,
                   recovery_point=log.log_end_offset, clean_shutdown=True)
    assert state_of(reopened.producer_state) == before and reopened.last_stable_offset == 2
    assert [s.txn_index.entries() for s in reopened.segments] == before_index
    # a crash: no snapshot at the end, no recovery point, every txnindex lost — recovery finds it all again
    for name in os.listdir(log.dir):
        if name.endswith((".snapshot", ".txnindex")):
            os.unlink(os.path.join(log.dir, name))
    crashed = Log(str(tmp_path / "clean"), TP, config=config, high_watermark=log.log_end_offset)
    assert state_of(crashed.producer_state) == before and crashed.last_stable_offset == 2
    assert [s.txn_index.entries() for s in crashed.segments] == before_index


def test_a_follower_replicating_the_leaders_batches_has_the_same_state_and_txnindex(tmp_path):
    leader = Log(str(tmp_path / "leader"), TP)
    interleaved(leader)
    end(leader, 2, commit=True)
    follower = Log(str(tmp_path / "follower"), TP)
    follower.append_as_follower(leader.read(0, 1 << 20), T0)
    assert follower.log_end_offset == leader.log_end_offset == 10
    assert state_of(follower.producer_state) == state_of(leader.producer_state)
    assert follower.segments[0].txn_index.entries() == leader.segments[0].txn_index.entries() == [
        AbortedTxn(1, 0, 6, 2)]
    follower.update_high_watermark(10)
    leader.update_high_watermark(10)
    assert follower.last_stable_offset == leader.last_stable_offset == 7


def test_truncation_reopens_a_transaction_whose_marker_it_removes_and_drops_its_txnindex_entry(tmp_path):
    """Log.truncateTo → LogSegment.truncateTo (txnIndex.truncateTo) and rebuildProducerState: a follower cut back
    below producer 1's ABORT marker has the transaction open again; cut below its first batch, forgotten."""
    log = Log(str(tmp_path), TP)
    interleaved(log)
    log.truncate_to(6)
    assert log.log_end_offset == 6 and log.segments[0].txn_index.entries() == []
    assert not os.path.exists(os.path.join(log.dir, "00000000000000000000.txnindex"))
    assert state_of(log.producer_state)[1] == [(1, 0, None), (2, 2, None)]
    log.update_high_watermark(6)
    assert log.last_stable_offset == 0
    log.truncate_to(2)
    assert state_of(log.producer_state)[1] == [(1, 0, None)] and 2 not in log.producer_state.producers
    log.truncate_to(0)
    assert log.producer_state.producers == {} and log.first_unstable_offset is None


def test_the_log_start_moving_past_a_transaction_forgets_it(tmp_path):
    """DeleteRecords / retention → ProducerStateManager.truncateHead; an open transaction partly below the log start
    leaves the first unstable offset at the log start (maybeIncrementFirstUnstableOffset)."""
    log = Log(str(tmp_path), TP)
    log.append_as_leader(txn_batch(1, 0), 0, T0)
    log.append_as_leader(txn_batch(2, 0), 0, T0)
    log.append_as_leader(txn_batch(1, 2), 0, T0)
    log.update_high_watermark(6)
    assert log.last_stable_offset == 0
    log.maybe_increment_log_start_offset(1)
    assert log.first_unstable_offset == 1 and log.last_stable_offset == 1
    log.maybe_increment_log_start_offset(6)
    assert log.producer_state.producers == {} and log.last_stable_offset == 6


def test_read_committed_data_ends_before_the_lso(tmp_path):
    log = Log(str(tmp_path), TP)
    interleaved(log)
    log.update_high_watermark(9)
    data = log.read(0, 1 << 20, max_offset=log.last_stable_offset)
    assert [b.base_offset for b in iter_batches(data)] == [0]  # batches below the LSO (2) only


def test_recovering_only_the_last_segment_starts_from_the_snapshot_at_its_base(tmp_path):
    """Log.recoverSegment: the producer state a recovered segment is replayed on is the one at its base offset
    (the snapshot the roll wrote there), so an ABORT marker in it gets its transaction's first offset from an earlier
    segment and the LSO of another producer's transaction still open."""
    config = LogConfig(segment_bytes=100)
    log = Log(str(tmp_path), TP, config=config)
    log.append_as_leader(txn_batch(1, 0, n=1), 0, T0)  # segment 0: producer 1's transaction from 0
    log.append_as_leader(txn_batch(2, 0, n=1), 0, T0)  # segment 1: producer 2's from 1
    assert end(log, 1, commit=False) == 2  # segment 2: producer 1 aborts
    assert [s.base_offset for s in log.segments] == [0, 1, 2]
    assert log.segments[2].txn_index.entries() == [AbortedTxn(1, 0, 2, 1)]
    assert "00000000000000000002.snapshot" in os.listdir(log.dir)
    os.unlink(os.path.join(log.dir, "00000000000000000002.txnindex"))
    # a crash after the roll to segment 2: segments 0-1 are below the recovery point, segment 2 is recovered
    reopened = Log(str(tmp_path), TP, config=config, recovery_point=2)
    assert reopened.segments[2].txn_index.entries() == [AbortedTxn(1, 0, 2, 1)]
    assert state_of(reopened.producer_state) == state_of(log.producer_state)
