"""core/broker/producer_state.py's KIP-890 part 1 state (Kafka 3.6): the verification entry and its guard, which an
end marker or the producer's first transactional append clears (KAFKA-14884), the lowest sequence it keeps, and its
expiry."""

from __future__ import annotations

import pytest

from core.broker.api_error import ApiError
from core.broker.producer_state import (
    CLIENT,
    COORDINATOR,
    REPLICATION,
    ProducerBatch,
    ProducerStateManager,
)
from messages.common import Errors
from protocol.records import CONTROL_ABORT, CONTROL_COMMIT, EndTransactionMarker

PID = 5


def txn_batch(seq: int, offset: int, epoch: int = 0, n: int = 1) -> ProducerBatch:
    return ProducerBatch(PID, epoch, seq, n - 1, offset, 1000 + offset, is_transactional=True)


def marker(offset: int, kind: int = CONTROL_ABORT, epoch: int = 0) -> ProducerBatch:
    return ProducerBatch(PID, epoch, -1, 0, offset, 1000 + offset, is_transactional=True, is_control=True,
                         marker=EndTransactionMarker(kind, 0))


def apply(state: ProducerStateManager, batch: ProducerBatch, origin: str = CLIENT) -> None:
    infos = state.prepare([batch], origin)
    state.update(infos)
    for txn in infos.completed:
        state.complete_txn(txn)


def test_a_producer_without_an_open_transaction_needs_a_verified_guard():
    state = ProducerStateManager()
    with pytest.raises(ApiError) as e:
        state.check_verification(PID, True, None, verification_enabled=True)
    assert e.value.error == Errors.INVALID_TXN_STATE
    assert str(e.value) == "Record was not part of an ongoing transaction"
    guard = state.maybe_start_transaction_verification(PID, 0, 0, now_ms=0)
    assert guard is not None and state.verification_guard(PID) is guard
    state.check_verification(PID, True, guard, verification_enabled=True)  # verified: may append
    # disabled, or not transactional: nothing checked
    state.check_verification(PID, True, None, verification_enabled=False)
    state.check_verification(PID, False, None, verification_enabled=True)


def test_the_first_transactional_append_ends_verification_and_later_ones_need_none():
    state = ProducerStateManager()
    guard = state.maybe_start_transaction_verification(PID, 0, 0, now_ms=0)
    state.check_verification(PID, True, guard, verification_enabled=True)
    apply(state, txn_batch(0, 0))
    assert state.verification_states == {}
    assert state.has_ongoing_transaction(PID)
    # the transaction is open here: no verification started, no guard needed
    assert state.maybe_start_transaction_verification(PID, 1, 0, now_ms=1) is None
    state.check_verification(PID, True, None, verification_enabled=True)


def test_kafka_14884_an_abort_between_verification_and_append_invalidates_the_guard():
    """The coordinator verified the partition, then aborted the transaction (its marker written here) before the
    produce reached the log: the stale guard is refused, so the late batch does not open a transaction nobody will
    end."""
    state = ProducerStateManager()
    apply(state, txn_batch(0, 0))
    apply(state, marker(1), COORDINATOR)  # the first transaction ends; the producer has none open
    guard = state.maybe_start_transaction_verification(PID, 1, 0, now_ms=5)
    assert guard is not None
    apply(state, marker(2), COORDINATOR)  # the abort that lands between the verification and the append
    with pytest.raises(ApiError) as e:
        state.check_verification(PID, True, guard, verification_enabled=True)
    assert e.value.error == Errors.INVALID_TXN_STATE
    # a new verification (the retry) makes a new guard: the old one never matches it (ABA)
    fresh = state.maybe_start_transaction_verification(PID, 1, 0, now_ms=6)
    assert fresh is not None and fresh is not guard
    with pytest.raises(ApiError):
        state.check_verification(PID, True, guard, verification_enabled=True)
    state.check_verification(PID, True, fresh, verification_enabled=True)


def test_a_replicated_marker_clears_the_entry_too():
    state = ProducerStateManager()
    state.maybe_start_transaction_verification(PID, 0, 0, now_ms=0)
    apply(state, marker(0, CONTROL_COMMIT), REPLICATION)
    assert state.verification_guard(PID) is None


def test_a_higher_sequence_may_not_overtake_the_lowest_one_seen_while_verifying():
    """VerificationStateEntry's lowest sequence: seq 0 failed verification with a retriable error; seq 1, verified,
    is OUT_OF_ORDER_SEQUENCE_NUMBER until 0 is written; a newer epoch resets it."""
    state = ProducerStateManager()
    state.maybe_start_transaction_verification(PID, 0, 0, now_ms=0)
    guard = state.maybe_start_transaction_verification(PID, 1, 0, now_ms=1)
    entry = state.verification_states[PID]
    assert (entry.lowest_sequence, entry.epoch) == (0, 0)
    state.check_verification(PID, True, guard, verification_enabled=True)
    with pytest.raises(ApiError) as e:
        state.prepare([txn_batch(1, 0)], CLIENT)
    assert e.value.error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
    apply(state, txn_batch(0, 0))  # the lowest one is written: the entry ends
    assert PID not in state.verification_states
    state.maybe_start_transaction_verification(PID + 1, 4, 1, now_ms=2)
    state.maybe_start_transaction_verification(PID + 1, 0, 2, now_ms=3)
    other = state.verification_states[PID + 1]
    assert (other.lowest_sequence, other.epoch) == (0, 2)


def test_unverified_entries_expire_with_producers():
    state = ProducerStateManager()
    state.maybe_start_transaction_verification(PID, 0, 0, now_ms=1000)
    state.remove_expired_producers(1000 + 59_999, expiration_ms=60_000)
    assert PID in state.verification_states
    state.remove_expired_producers(1000 + 60_000, expiration_ms=60_000)
    assert state.verification_states == {}
