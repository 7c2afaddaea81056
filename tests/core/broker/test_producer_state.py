"""core/broker/producer_state.py: Kafka 2.6's ProducerStateManager for idempotent and transactional producers."""

from __future__ import annotations

from collections import deque

import pytest

from core.broker.api_error import ApiError
from core.broker.producer_state import (
    CLIENT,
    COORDINATOR,
    INT_MAX,
    REPLICATION,
    CompletedTxn,
    ProducerBatch,
    ProducerStateManager,
    decode_snapshot,
    encode_snapshot,
    increment_sequence,
)
from messages.common import Errors
from protocol.records import CONTROL_ABORT, CONTROL_COMMIT, EndTransactionMarker


def pb(seq: int, n: int, offset: int, epoch: int = 0, pid: int = 1) -> ProducerBatch:
    return ProducerBatch(pid, epoch, seq, n - 1, offset, 1000 + offset)


def append(state: ProducerStateManager, batch: ProducerBatch) -> None:
    state.update(state.prepare([batch], CLIENT))


def test_duplicates_of_the_last_five_batches_only():
    state = ProducerStateManager()
    for i in range(6):
        append(state, pb(i * 2, 2, i * 2))
    assert state.find_duplicate(pb(0, 2, 99)) is None  # the sixth-latest batch is forgotten
    dup = state.find_duplicate(pb(2, 2, 99))
    assert (dup.first_offset, dup.last_offset, dup.first_seq, dup.last_seq) == (2, 3, 2, 3)
    assert state.find_duplicate(pb(2, 3, 99)) is None  # a different sequence range is no duplicate
    assert state.find_duplicate(pb(2, 2, 99, epoch=1)) is None


def test_sequence_and_epoch_errors_as_kafka_2_6_3():
    """ProducerAppendInfo.checkSequence (2.6.3): an unknown producer may start at any sequence (KIP-360: its state
    may have gone with retention); after that its sequences must follow on."""
    state = ProducerStateManager()
    append(state, pb(3, 1, 0, pid=9))
    assert state.producers[9].last_seq == 3
    with pytest.raises(ApiError) as e:
        append(state, pb(5, 1, 1, pid=9))
    assert e.value.error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
    append(state, pb(4, 1, 1, pid=9))
    append(state, pb(0, 2, 0, epoch=5))
    for batch, error in ((pb(3, 1, 2, epoch=5), Errors.OUT_OF_ORDER_SEQUENCE_NUMBER),
                         (pb(2, 1, 2, epoch=4), Errors.INVALID_PRODUCER_EPOCH),
                         (pb(1, 1, 2, epoch=6), Errors.OUT_OF_ORDER_SEQUENCE_NUMBER)):
        with pytest.raises(ApiError) as e:
            append(state, batch)
        assert e.value.error == error
    append(state, pb(0, 1, 2, epoch=6))  # a new epoch starts at 0 and forgets the old batches
    assert state.producers[1].producer_epoch == 6 and len(state.producers[1].batches) == 1
    # replication (a follower, recovery) is not checked
    state.update(state.prepare([pb(40, 1, 3, epoch=6)], REPLICATION))
    assert state.producers[1].last_seq == 40


def test_a_producer_whose_state_went_with_retention_continues_at_its_sequence():
    """KIP-360 (2.5+): truncate_head forgets a producer whose last batch is below the new log start; its next batch
    (sequence 7, same epoch) is accepted, and then followed on (2.4 answered UNKNOWN_PRODUCER_ID)."""
    state = ProducerStateManager()
    append(state, pb(0, 7, 0, epoch=2))
    state.truncate_head(10)
    assert state.producers == {}
    append(state, pb(7, 1, 10, epoch=2))
    assert (state.producers[1].producer_epoch, state.producers[1].last_seq) == (2, 7)
    with pytest.raises(ApiError) as e:
        append(state, pb(9, 1, 11, epoch=2))
    assert e.value.error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_sequences_wrap_at_int_max():
    assert increment_sequence(INT_MAX, 1) == 0 and increment_sequence(INT_MAX - 1, 3) == 1
    state = ProducerStateManager()
    state.update(state.prepare([pb(INT_MAX - 1, 2, 0)], REPLICATION))
    append(state, pb(0, 1, 2))
    assert state.producers[1].last_seq == 0


def test_snapshot_round_trip_keeps_each_producers_last_batch():
    state = ProducerStateManager()
    append(state, pb(0, 2, 0, pid=7))
    append(state, pb(2, 3, 2, pid=7))
    append(state, pb(0, 1, 5, pid=9, epoch=3))
    entries = {e.producer_id: e for e in decode_snapshot(encode_snapshot(state.producers.values()))}
    assert [(m.first_seq, m.last_seq, m.first_offset, m.last_offset, m.timestamp) for m in entries[7].batches] == [
        (2, 4, 2, 4, 1002)]
    assert entries[9].producer_epoch == 3 and entries[9].last_offset == 5


def test_expired_and_retained_away_producers_are_forgotten():
    state = ProducerStateManager()
    append(state, pb(0, 1, 0, pid=1))  # timestamp 1000
    append(state, pb(0, 1, 50, pid=2))  # timestamp 1050
    state.remove_expired_producers(now_ms=1049 + 7 * 24 * 3600 * 1000)
    assert sorted(state.producers) == [2]
    append(state, pb(0, 1, 60, pid=3))
    state.truncate_head(55)
    assert sorted(state.producers) == [3]


# ------------------------------------------------------------------------------------------------- transactions

def txn(seq: int, n: int, offset: int, epoch: int = 0, pid: int = 1) -> ProducerBatch:
    return ProducerBatch(pid, epoch, seq, n - 1, offset, 1000 + offset, is_transactional=True)


def marker(offset: int, commit: bool, coordinator_epoch: int = 0, epoch: int = 0, pid: int = 1) -> ProducerBatch:
    return ProducerBatch(pid, epoch, -1, 0, offset, 1000 + offset, True, True,
                         EndTransactionMarker(CONTROL_COMMIT if commit else CONTROL_ABORT, coordinator_epoch))


def end(state: ProducerStateManager, batch: ProducerBatch, origin: str = COORDINATOR) -> CompletedTxn:
    infos = state.prepare([batch], origin)
    state.update(infos)
    (completed,) = infos.completed
    state.complete_txn(completed)
    return completed


def test_a_transactional_batch_opens_a_transaction_and_a_marker_completes_it():
    """ProducerAppendInfo.appendDataBatch / appendEndTxnMarker: the first transactional batch opens the
    transaction at its offset, later ones join it, the marker completes it; it stays unstable until the high
    watermark passes the marker (ProducerStateManager.firstUnstableOffset / onHighWatermarkUpdated)."""
    state = ProducerStateManager()
    assert state.first_unstable_offset is None
    append(state, txn(0, 2, 10, pid=1))
    append(state, txn(0, 1, 12, pid=2))
    append(state, txn(2, 3, 13, pid=1))
    assert state.first_unstable_offset == 10 and state.producers[1].current_txn_first_offset == 10
    assert list(state.ongoing_txns) == [10, 12]
    with pytest.raises(ApiError) as e:  # a non-transactional write inside the transaction
        append(state, pb(5, 1, 16, pid=1))
    assert e.value.error == Errors.INVALID_TXN_STATE
    completed = end(state, marker(16, commit=False, pid=1))
    assert completed == CompletedTxn(1, 10, 16, is_aborted=True)
    # the txnindex entry's LSO would be producer 2's open transaction
    assert state.last_stable_offset(completed) == 12
    assert state.producers[1].current_txn_first_offset is None and list(state.ongoing_txns) == [12]
    assert state.first_unstable_offset == 10  # unreplicated until the HW passes offset 16
    state.on_high_watermark_updated(16)
    assert state.first_unstable_offset == 10
    state.on_high_watermark_updated(17)
    assert state.first_unstable_offset == 12
    completed = end(state, marker(17, commit=True, pid=2))
    assert completed == CompletedTxn(2, 12, 17, is_aborted=False) and state.last_stable_offset(completed) == 18
    state.on_high_watermark_updated(18)
    assert state.first_unstable_offset is None
    # after its marker the producer may write non-transactionally again
    append(state, pb(5, 1, 18, pid=1))


def test_a_batch_of_a_transaction_its_marker_ended_is_no_duplicate_of_the_next_ones():
    """Beyond 2.6.3 (`kactor chaos` seed 8): the next transaction re-using an aborted one's sequences under the same
    epoch is OUT_OF_ORDER_SEQUENCE_NUMBER, not a duplicate answered NONE with nothing appended; a retry while the
    transaction is open is still the duplicate Kafka finds, and replicas and followers learn the marker too."""
    state = ProducerStateManager()
    append(state, txn(0, 2, 10))
    dup = state.find_duplicate(txn(0, 2, 99))  # the retry of T1's batch while T1 is open
    assert (dup.first_offset, dup.last_offset) == (10, 11)
    end(state, marker(12, commit=False))
    assert state.producers[1].last_marker_offset == 12
    assert state.find_duplicate(txn(0, 2, 99)) is None  # T2's batch re-using sequences 0-1
    with pytest.raises(ApiError) as e:
        append(state, txn(0, 2, 13))
    assert e.value.error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
    append(state, txn(2, 1, 13))  # T2 continuing the sequence is appended
    assert state.find_duplicate(txn(2, 1, 99)).first_offset == 13  # and its own retry is a duplicate
    # a follower replicating the same batches and marker answers the same once it leads
    follower = ProducerStateManager()
    follower.load_batches([txn(0, 2, 10), marker(12, commit=False), txn(2, 1, 13)])
    assert follower.find_duplicate(txn(0, 2, 99)) is None and follower.find_duplicate(txn(2, 1, 99)) is not None
    # and a producer that bumped its epoch starts afresh at 0, as in Kafka
    append(state, txn(0, 2, 14, epoch=1))
    assert state.find_duplicate(txn(0, 2, 99, epoch=1)).first_offset == 14


def test_marker_fencing_by_coordinator_epoch_and_producer_epoch():
    """checkCoordinatorEpoch: an older coordinator's marker is TRANSACTION_COORDINATOR_FENCED; checkProducerEpoch:
    an older producer epoch INVALID_PRODUCER_EPOCH (2.6's ProducerFencedException). A replica only warns."""
    state = ProducerStateManager()
    append(state, txn(0, 1, 0, epoch=3))
    end(state, marker(1, commit=True, coordinator_epoch=5, epoch=3))
    assert state.producers[1].coordinator_epoch == 5
    append(state, txn(1, 1, 2, epoch=3))
    for batch, error in ((marker(3, False, coordinator_epoch=4, epoch=3), Errors.TRANSACTION_COORDINATOR_FENCED),
                         (marker(3, False, coordinator_epoch=5, epoch=2), Errors.INVALID_PRODUCER_EPOCH)):
        with pytest.raises(ApiError) as e:
            state.prepare([batch], COORDINATOR)
        assert e.value.error == error
    assert end(state, marker(3, False, coordinator_epoch=4, epoch=3), REPLICATION).first_offset == 2
    # a marker bumping the producer's epoch (an abort by a coordinator after InitProducerId) forgets its batches
    end(state, marker(4, False, coordinator_epoch=5, epoch=4))
    entry = state.producers[1]
    assert (entry.producer_epoch, len(entry.batches), entry.coordinator_epoch) == (4, 0, 5)


def test_a_marker_with_no_open_transaction_completes_an_empty_one_at_its_offset():
    state = ProducerStateManager()
    completed = end(state, marker(7, commit=False, pid=9, epoch=1))
    assert completed == CompletedTxn(9, 7, 7, True) and state.first_unstable_offset == 7
    state.on_high_watermark_updated(8)
    assert state.first_unstable_offset is None


def test_snapshot_keeps_open_transactions_coordinator_epochs_and_marker_only_producers():
    """writeSnapshot / readSnapshot: CoordinatorEpoch and CurrentTxnFirstOffset (-1: none) per producer, producers
    known only by their markers with -1 last sequence / offset; loading reopens the open transactions."""
    state = ProducerStateManager()
    append(state, txn(0, 2, 0, pid=1, epoch=2))
    end(state, marker(2, commit=True, pid=8, epoch=0, coordinator_epoch=3))
    append(state, txn(2, 1, 3, pid=1, epoch=2))
    data = encode_snapshot(state.producers.values())
    assert len(data) == 2 + 4 + 4 + 2 * 46
    loaded = ProducerStateManager()
    loaded.load_snapshot(decode_snapshot(data))
    assert list(loaded.ongoing_txns) == [0] and loaded.first_unstable_offset == 0
    one, eight = loaded.producers[1], loaded.producers[8]
    assert (one.producer_epoch, one.current_txn_first_offset, one.last_seq, one.last_offset) == (2, 0, 2, 3)
    assert (eight.producer_epoch, eight.coordinator_epoch, eight.batches, eight.last_timestamp) == (0, 3, deque(),
                                                                                                    1002)
    assert eight.current_txn_first_offset is None
    # the next batch of producer 1 follows on in its transaction
    append(loaded, txn(3, 1, 4, pid=1, epoch=2))
    assert list(loaded.ongoing_txns) == [0]


def test_truncate_head_and_expiry_with_transactions():
    state = ProducerStateManager()
    append(state, txn(0, 2, 0, pid=1))
    append(state, txn(0, 1, 2, pid=2))
    state.remove_expired_producers(now_ms=10**12)  # an open transaction keeps its producer
    assert sorted(state.producers) == [1, 2]
    state.truncate_head(2)  # producer 1's last batch is below the log start: it and its transaction go
    assert sorted(state.producers) == [2] and list(state.ongoing_txns) == [2]


def test_a_marker_replicated_with_later_batches_records_the_last_stable_offset_at_the_marker():
    """Beyond 2.6.3 (`kactor sim --txn-check` seed 2059): a follower's one append of [T1's ABORT marker at 1, producer
    1's next transaction at 2, producer 2's at 4] records for T1 the last stable offset at its marker (2: nothing of
    another producer open before it), not producer 2's transaction opened after it (4, Kafka's: it asks once the whole
    append is applied), which made the txnindex search stop before the aborted transaction at 2."""
    state = ProducerStateManager()
    state.update(state.prepare([txn(0, 1, 0)], REPLICATION))
    infos = state.prepare([marker(1, commit=False), txn(1, 2, 2), txn(0, 2, 4, pid=2)], REPLICATION)
    state.update(infos)
    (t1,) = infos.completed
    assert state.last_stable_offset(t1) == 2
    # a transaction of another producer open before the marker still holds it
    state2 = ProducerStateManager()
    state2.update(state2.prepare([txn(0, 1, 0), txn(0, 1, 1, pid=2)], REPLICATION))
    infos = state2.prepare([marker(2, commit=False), txn(0, 1, 3, pid=3)], REPLICATION)
    state2.update(infos)
    assert state2.last_stable_offset(infos.completed[0]) == 1
