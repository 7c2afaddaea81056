"""__transaction_state's records byte for byte as 2.6.3's TransactionLog writes them (its Schema-based v0 key and
value, derived field by field below), and TransactionMetadata's transitions: the valid ones, and every other one
refused."""

from __future__ import annotations

import pytest

from core.coordinator.transaction.transaction_log import (
    TxnLogFormatError,
    TxnLogValue,
    key_to_bytes,
    read_txn_record_key,
    read_txn_record_value,
    value_to_bytes,
)
from core.coordinator.transaction.transaction_metadata import (
    VALID_PREVIOUS_STATES,
    IllegalTxnStateError,
    TransactionMetadata,
    TransactionState,
)
from messages.common import TopicPartition

S = TransactionState


def test_key_bytes():
    # int16 version 0, string "txn" (int16 length, UTF-8)
    assert key_to_bytes("txn") == bytes.fromhex("0000" "0003" "74786e")
    assert read_txn_record_key(key_to_bytes("tx-é")) == "tx-é"
    with pytest.raises(TxnLogFormatError):
        read_txn_record_key(bytes.fromhex("0001" "0003" "74786e"))


def test_value_bytes_of_an_ongoing_transaction():
    value = TxnLogValue(5, 2, 60000, S.ONGOING.byte, frozenset({TopicPartition("t", 1), TopicPartition("t", 0)}),
                        1000, 900)
    assert value_to_bytes(value) == bytes.fromhex(
        "0000"  # version 0
        "0000000000000005"  # producer_id
        "0002"  # producer_epoch
        "0000ea60"  # transaction_timeout 60000
        "01"  # transaction_status Ongoing
        "00000001" "0001" "74" "00000002" "00000000" "00000001"  # [{topic "t", partition_ids [0, 1]}]
        "00000000000003e8"  # transaction_entry_timestamp 1000
        "0000000000000384")  # transaction_start_timestamp 900
    assert read_txn_record_value(value_to_bytes(value)) == value


def test_value_bytes_of_an_empty_transaction_has_null_partitions():
    value = TxnLogValue(5, 0, 60000, S.EMPTY.byte, frozenset(), 1000, -1)
    raw = value_to_bytes(value)
    assert raw[17:21] == bytes.fromhex("ffffffff")
    assert read_txn_record_value(raw) == value
    with pytest.raises(ValueError):
        value_to_bytes(TxnLogValue(5, 0, 60000, S.EMPTY.byte, frozenset({TopicPartition("t", 0)}), 1000, -1))


def test_a_truncated_value_does_not_decode():
    raw = value_to_bytes(TxnLogValue(5, 0, 60000, S.COMPLETE_ABORT.byte, frozenset(), 1000, 1))
    with pytest.raises(TxnLogFormatError):
        read_txn_record_value(raw[:-1])


def test_state_bytes():
    assert [(s.kafka_name, s.byte) for s in S] == [
        ("Empty", 0), ("Ongoing", 1), ("PrepareCommit", 2), ("PrepareAbort", 3), ("CompleteCommit", 4),
        ("CompleteAbort", 5), ("Dead", 6), ("PrepareEpochFence", 7)]


def _metadata(state: TransactionState, epoch: int = 3) -> TransactionMetadata:
    return TransactionMetadata("t", 7, -1, epoch, -1, 1000, state,
                               set() if state in (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT)
                               else {TopicPartition("a", 0)}, 10 if state is not S.EMPTY else -1, 20)


def _prepare(m: TransactionMetadata, target: TransactionState):
    if target is S.EMPTY:
        return m.prepare_increment_producer_epoch(1000, None, 30)
    if target is S.ONGOING:
        return m.prepare_add_partitions({TopicPartition("b", 0)}, 30)
    if target in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
        return m.prepare_abort_or_commit(target, 30)
    if target in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
        return m.prepare_complete(30)
    if target is S.DEAD:
        return m.prepare_dead()
    return m.prepare_fence_producer_epoch()


@pytest.mark.parametrize("target", list(S))
@pytest.mark.parametrize("current", list(S))
def test_every_transition_is_allowed_exactly_from_its_valid_previous_states(current, target):
    m = _metadata(current)
    if target in (S.COMPLETE_COMMIT, S.COMPLETE_ABORT):
        # prepareComplete chooses its target from the current state
        allowed = current in (S.PREPARE_COMMIT, S.PREPARE_ABORT)
    else:
        allowed = current in VALID_PREVIOUS_STATES[target]
    if not allowed:
        with pytest.raises(IllegalTxnStateError):
            _prepare(m, target)
        assert m.pending_state is None
        return
    transit = _prepare(m, target)
    assert m.pending_state is transit.txn_state
    if transit.txn_state in (S.DEAD, S.PREPARE_EPOCH_FENCE):
        return  # Dead leaves the cache; PrepareEpochFence is taken over by PrepareAbort
    m.complete_transition_to(transit)
    assert (m.state, m.pending_state, m.txn_last_update_timestamp) == (transit.txn_state, None, 30)


def test_transitions_write_what_kafka_writes():
    m = _metadata(S.EMPTY)
    t = m.prepare_add_partitions({TopicPartition("a", 0)}, 50)
    assert (t.txn_start_timestamp, t.topic_partitions) == (50, frozenset({TopicPartition("a", 0)}))
    m.complete_transition_to(t)
    t = m.prepare_add_partitions({TopicPartition("a", 1)}, 60)
    assert t.txn_start_timestamp == 50  # still the same transaction
    m.complete_transition_to(t)
    t = m.prepare_fence_producer_epoch()
    assert (t.txn_state, t.producer_epoch, t.last_producer_epoch) == (S.PREPARE_EPOCH_FENCE, 4, -1)
    with pytest.raises(IllegalTxnStateError):  # one pending transition at a time
        m.prepare_abort_or_commit(S.PREPARE_ABORT, 70)
    m.pending_state = None
    m.complete_transition_to(m.prepare_abort_or_commit(S.PREPARE_COMMIT, 70))
    t = m.prepare_complete(80)
    assert (t.txn_state, t.topic_partitions, t.txn_start_timestamp) == (S.COMPLETE_COMMIT, frozenset(), 50)
    m.complete_transition_to(t)
    assert m.topic_partitions == set()


def test_a_written_state_that_does_not_follow_is_refused():
    m = _metadata(S.ONGOING)
    t = m.prepare_abort_or_commit(S.PREPARE_COMMIT, 30)
    m.producer_epoch = 9  # another epoch installed meanwhile
    with pytest.raises(IllegalTxnStateError):
        m.complete_transition_to(t)
