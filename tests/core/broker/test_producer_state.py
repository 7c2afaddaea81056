"""core/broker/producer_state.py: Kafka 2.6's ProducerStateManager for idempotent (non-transactional) producers."""

from __future__ import annotations

import pytest

from core.broker.api_error import ApiError
from core.broker.producer_state import (
    CLIENT,
    INT_MAX,
    REPLICATION,
    ProducerBatch,
    ProducerStateManager,
    decode_snapshot,
    encode_snapshot,
    increment_sequence,
)
from messages.common import Errors


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
