"""core/coordinator/transaction/verification.py: KIP-890 part 1's decisions (Kafka 3.6) — the coordinator's answer to
a verify-only AddPartitionsToTxn and the error a produce that failed verification answers."""

from __future__ import annotations

import pytest

from core.coordinator.transaction.transaction_metadata import TransactionMetadata
from core.coordinator.transaction.transaction_metadata import TransactionState as S
from core.coordinator.transaction.transaction_state_manager import CoordinatorEpochAndTxnMetadata
from core.coordinator.transaction.verification import (
    transaction_coordinator_partition,
    transactional_batch,
    unverified_append_error,
    verification_response_errors,
    verify_partitions_in_transaction,
)
from messages.common import Errors, TopicPartition

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)


def state(st: S = S.ONGOING, pid: int = 7, epoch: int = 3, parts=(A0,)) -> CoordinatorEpochAndTxnMetadata:
    return CoordinatorEpochAndTxnMetadata(1, TransactionMetadata("t", pid, -1, epoch, -1, 60000, st, set(parts)))


def test_a_partition_never_added_is_invalid_txn_state_and_an_added_one_verified():
    assert verify_partitions_in_transaction(state(), "t", 7, 3, [A0, A1]) == {A0: Errors.NONE,
                                                                             A1: Errors.INVALID_TXN_STATE}


def test_after_the_transaction_ended_no_partition_is_in_it():
    """CompleteAbort / CompleteCommit clear the partitions (removed when the end marker is persisted): a produce
    delayed past its transaction's end is not verified."""
    assert verify_partitions_in_transaction(state(S.COMPLETE_ABORT, parts=()), "t", 7, 3, [A0]) == {
        A0: Errors.INVALID_TXN_STATE}


@pytest.mark.parametrize("st, pid, epoch, txn_id, expected", [
    (state(S.PREPARE_COMMIT), 7, 3, "t", Errors.CONCURRENT_TRANSACTIONS),
    (state(S.PREPARE_ABORT), 7, 3, "t", Errors.CONCURRENT_TRANSACTIONS),
    (state(), 8, 3, "t", Errors.INVALID_PRODUCER_ID_MAPPING),
    (state(), 7, 2, "t", Errors.INVALID_PRODUCER_EPOCH),  # 3.6's PRODUCER_FENCED, as the leader maps it
    (None, 7, 3, "t", Errors.INVALID_PRODUCER_ID_MAPPING),
    (Errors.NOT_COORDINATOR, 7, 3, "t", Errors.NOT_COORDINATOR),
    (Errors.COORDINATOR_LOAD_IN_PROGRESS, 7, 3, "t", Errors.COORDINATOR_LOAD_IN_PROGRESS),
    (state(), 7, 3, "", Errors.INVALID_REQUEST),
])
def test_whole_request_errors(st, pid, epoch, txn_id, expected):
    assert verify_partitions_in_transaction(st, txn_id, pid, epoch, [A0, B0]) == {A0: expected, B0: expected}


def test_the_produce_answer_for_an_unverified_partition():
    assert unverified_append_error(Errors.INVALID_TXN_STATE) == (Errors.INVALID_TXN_STATE,
                                                                "Partition was not added to the transaction")
    for retriable in (Errors.CONCURRENT_TRANSACTIONS, Errors.COORDINATOR_LOAD_IN_PROGRESS,
                      Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
        error, message = unverified_append_error(retriable)
        assert error == Errors.NOT_ENOUGH_REPLICAS
        assert message == ("Unable to verify the partition has been added to the transaction. Underlying error: "
                           + retriable.name)
    assert unverified_append_error(Errors.INVALID_PRODUCER_EPOCH) == (Errors.INVALID_PRODUCER_EPOCH, None)


def test_the_leader_reads_the_coordinator_answer():
    assert verification_response_errors(Errors.NONE, {A0: Errors.NONE, A1: Errors.INVALID_TXN_STATE}, [A0, A1]) == {
        A1: Errors.INVALID_TXN_STATE}
    # the producer must not see the inter-broker CLUSTER_AUTHORIZATION_FAILED
    assert verification_response_errors(Errors.CLUSTER_AUTHORIZATION_FAILED, {}, [A0]) == {
        A0: Errors.INVALID_TXN_STATE}
    assert verification_response_errors(Errors.NOT_COORDINATOR, {}, [A0, B0]) == {A0: Errors.NOT_COORDINATOR,
                                                                                 B0: Errors.NOT_COORDINATOR}


def test_the_leader_finds_the_coordinator_partition_as_kafka_apis():
    # Utils.abs(String.hashCode) % partitions, String.hashCode computed here as Java does
    h = 0
    for ch in "my-txn":
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    h = h - 2**32 if h >= 2**31 else h
    assert transaction_coordinator_partition("my-txn", 50) == abs(h) % 50


def test_transactional_batch_reads_the_header_by_name():
    """The fields come back named, so the leader's verification entry (producer id, sequence, epoch) cannot take the
    epoch for the sequence again; a non-transactional batch or a cut header is not one."""
    from protocol.records import TRANSACTIONAL_BIT, Record, build_batch

    data = build_batch([Record(0, 0, None, b"v")], producer_id=7, producer_epoch=3, base_sequence=41,
                       attributes=TRANSACTIONAL_BIT)
    batch = transactional_batch(data)
    assert batch is not None
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (7, 3, 41)
    assert transactional_batch(build_batch([Record(0, 0, None, b"v")], producer_id=7, producer_epoch=3,
                                           base_sequence=41)) is None
    assert transactional_batch(data[:40]) is None
