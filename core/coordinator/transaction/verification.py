"""KIP-890 part 1 (Kafka 3.6): transaction verification on the partition leader, the decisions of both sides.

Before a partition leader appends a client's transactional batch that would open a transaction on the partition (the
producer has none open there), it asks the transactional id's coordinator whether the partition is in the producer's
ongoing transaction (an AddPartitionsToTxn v4 ``verify_only`` request, ReplicaManager.appendRecords →
AddPartitionsToTxnManager). The coordinator answers from its cached metadata
(`verify_partitions_in_transaction`, TransactionCoordinator.handleVerifyPartitionsInTransaction); the leader turns
the answer into the produce's error (`unverified_append_error`, ReplicaManager.appendRecords' ``unverifiedResults``)
or, verified, appends with the guard the producer state gave it (core/broker/producer_state.py).

Without it (2.6, or ``transaction.partition.verification.enable=false``) a transactional produce to a partition that
AddPartitionsToTxn never named is appended, no marker ever ends it, and every read_committed reader of the partition
stalls at its first offset.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import attrs

from core.coordinator.group.group_metadata_manager import partition_for
from core.coordinator.transaction.transaction_metadata import TransactionState
from core.effects import Proc, ReplyHandle, Respond
from messages.common import Broker, Errors, TopicPartition
from messages.transaction import AddPartitionsToTxnResponse
from protocol.records import TRANSACTIONAL_BIT

# KafkaConfig.TransactionPartitionVerificationEnableProp (3.6; default true; dynamic, with producer.id.expiration.ms:
# ProducerStateManagerConfig.RECONFIGURABLE_CONFIGS)
TRANSACTION_PARTITION_VERIFICATION_ENABLE = "transaction.partition.verification.enable"
TRANSACTION_PARTITION_VERIFICATION_ENABLE_DEFAULT = True
TRANSACTION_PARTITION_VERIFICATION_ENABLE_DOC = ("Enable verification that checks that the partition has been added "
                                                 "to the transaction before writing transactional records to the "
                                                 "partition")

# The errors that mean "could not verify now": the producer is told NOT_ENOUGH_REPLICAS, which a 2.6 producer retries
# (ReplicaManager.appendRecords' mapping). NETWORK_EXCEPTION (the ask's send failed or timed out) is among them as in
# Kafka 3.7.1/3.8 (KAFKA-16386): 3.6.0 answered it as it was, which older clients do not all retry.
_RETRIABLE_VERIFICATION_ERRORS = frozenset({Errors.CONCURRENT_TRANSACTIONS, Errors.NETWORK_EXCEPTION,
                                            Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.COORDINATOR_NOT_AVAILABLE,
                                            Errors.NOT_COORDINATOR})


def verify_partitions_in_transaction(state: Errors | object | None, transactional_id: str | None, producer_id: int,
                                     producer_epoch: int, partitions: Iterable[TopicPartition]
                                     ) -> dict[TopicPartition, Errors]:
    """TransactionCoordinator.handleVerifyPartitionsInTransaction: each partition NONE if it is in the producer's
    transaction as the coordinator's cache holds it, INVALID_TXN_STATE if not; the whole request one error when the
    id is missing (INVALID_REQUEST), the coordinator cannot answer (``state`` an Errors:
    TransactionStateManager.getTransactionState's NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS), the id is unknown
    or holds another producer (INVALID_PRODUCER_ID_MAPPING), the epoch differs (3.6's PRODUCER_FENCED, which the
    leader turns into INVALID_PRODUCER_EPOCH; kactor's 2.6 error set answers INVALID_PRODUCER_EPOCH at once) or the
    transaction is ending (PrepareCommit / PrepareAbort: CONCURRENT_TRANSACTIONS). A pending state is not looked at:
    the append's guard is the final check.

    ``state``: the id's `CoordinatorEpochAndTxnMetadata` (anything with ``transaction_metadata``), None (unknown) or
    an Errors."""
    parts = list(dict.fromkeys(partitions))
    if not transactional_id:
        return dict.fromkeys(parts, Errors.INVALID_REQUEST)
    if isinstance(state, Errors):
        return dict.fromkeys(parts, state)
    if state is None:
        return dict.fromkeys(parts, Errors.INVALID_PRODUCER_ID_MAPPING)
    m = state.transaction_metadata  # type: ignore[attr-defined]
    if m.producer_id != producer_id:
        return dict.fromkeys(parts, Errors.INVALID_PRODUCER_ID_MAPPING)
    if m.producer_epoch != producer_epoch:
        return dict.fromkeys(parts, Errors.INVALID_PRODUCER_EPOCH)
    if m.state in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT):
        return dict.fromkeys(parts, Errors.CONCURRENT_TRANSACTIONS)
    return {tp: Errors.NONE if tp in m.topic_partitions else Errors.INVALID_TXN_STATE for tp in parts}


def unverified_append_error(error: Errors) -> tuple[Errors, str | None]:
    """ReplicaManager.appendRecords (3.6): what a produce to a partition that failed verification answers, with the
    message its response carries. INVALID_TXN_STATE: "Partition was not added to the transaction"; the
    coordinator's retriable errors become NOT_ENOUGH_REPLICAS (a 2.6 producer retries it, where it would abort on
    an unexpected coordinator error); any other error is answered as it is."""
    if error == Errors.INVALID_TXN_STATE:
        return error, "Partition was not added to the transaction"
    if error in _RETRIABLE_VERIFICATION_ERRORS:
        return Errors.NOT_ENOUGH_REPLICAS, ("Unable to verify the partition has been added to the transaction. "
                                            f"Underlying error: {error.name}")
    return error, None


# ReplicaManager.maybeStartTransactionVerificationForPartitions' invokeCallback (Kafka 3.7): the coordinator's errors
# a TxnOffsetCommit's verification answers NOT_ENOUGH_REPLICAS (the group coordinator then maps them)
_COORDINATOR_APPEND_RETRIABLE = _RETRIABLE_VERIFICATION_ERRORS - {Errors.NETWORK_EXCEPTION}


def coordinator_verification_error(error: Errors) -> Errors:
    """ReplicaManager.maybeStartTransactionVerificationForPartitions' invokeCallback (Kafka 3.7, the group
    coordinator's path: GroupCoordinator.handleTxnCommitOffsets): CONCURRENT_TRANSACTIONS and the coordinator's
    retriable errors become NOT_ENOUGH_REPLICAS; anything else (INVALID_TXN_STATE, INVALID_PRODUCER_ID_MAPPING,
    INVALID_PRODUCER_EPOCH, NETWORK_EXCEPTION) is passed on as it is, for
    GroupMetadataManager.maybeConvertOffsetCommitError (`group_metadata_manager.maybe_convert_offset_commit_error`)."""
    return Errors.NOT_ENOUGH_REPLICAS if error in _COORDINATOR_APPEND_RETRIABLE else error


def verification_response_errors(top_level: Errors, results: Mapping[TopicPartition, Errors],
                                 partitions: Iterable[TopicPartition]) -> dict[TopicPartition, Errors]:
    """AddPartitionsToTxnManager.AddPartitionsToTxnHandler.onComplete: the partitions that were not verified, with
    their errors. A top-level error fails every partition (CLUSTER_AUTHORIZATION_FAILED, which a producer must not
    see, as INVALID_TXN_STATE); a partition the answer does not name was verified."""
    if top_level != Errors.NONE:
        error = Errors.INVALID_TXN_STATE if top_level == Errors.CLUSTER_AUTHORIZATION_FAILED else top_level
        return dict.fromkeys(partitions, error)
    return {tp: e for tp, e in results.items() if e != Errors.NONE}


def transaction_coordinator_partition(transactional_id: str, transaction_log_partitions: int) -> int:
    """TransactionCoordinator.partitionFor as KafkaApis.handleProduceRequest asks it (``transactionStatePartition``):
    Utils.abs(transactionalId.hashCode) % the partition count of ``__transaction_state``."""
    return partition_for(transactional_id, transaction_log_partitions)


# a v2 batch header from its attributes to its base sequence: attributes int16, lastOffsetDelta int32, first and max
# timestamps int64, producerId int64, producerEpoch int16, baseSequence int32
_FROM_ATTRIBUTES = struct.Struct(">hiqqqhi")
_ATTRIBUTES_AT = 21


class TransactionalBatch(NamedTuple):
    """What verification reads of a transactional batch's header, named: the leader's verification entry and the
    coordinator's request take these in different orders (a swap once made the epoch the entry's lowest sequence)."""

    producer_id: int
    producer_epoch: int
    base_sequence: int


def transactional_batch(records: bytes) -> TransactionalBatch | None:
    """The (producer id, producer epoch, base sequence) of a partition's first batch (a produce carries one) when it
    is transactional and has a producer id (partitionEntriesForVerification's ``batch.hasProducerId &&
    batch.isTransactional``); None otherwise or when the bytes hold no whole header (the append refuses them)."""
    if len(records) < _ATTRIBUTES_AT + _FROM_ATTRIBUTES.size:
        return None
    attributes, _, _, _, producer_id, epoch, base_sequence = _FROM_ATTRIBUTES.unpack_from(records, _ATTRIBUTES_AT)
    if not attributes & TRANSACTIONAL_BIT or producer_id < 0:
        return None
    return TransactionalBatch(producer_id, epoch, base_sequence)


@attrs.frozen(slots=True)
class VerifyPartitionsInTxn:
    """An ask of the partition leader's core (AddPartitionsToTxnManager.addTxnData): send the transaction
    coordinator on ``broker`` an AddPartitionsToTxn v4 ``verify_only`` request for ``partitions`` of the producer's
    transaction. Answered with ``(top-level error, {partition: error})`` — a failed send or a timeout NETWORK_EXCEPTION
    at the top level, as the manager's NetworkClient reports a disconnection."""

    broker: Broker
    transactional_id: str
    producer_id: int
    producer_epoch: int
    partitions: tuple[TopicPartition, ...]


def handle_verify_partitions_in_transaction(coordinator: Any, request: Any, reply_to: ReplyHandle) -> Proc[None]:
    """KafkaApis.handleAddPartitionsToTxnRequest's ``verifyOnly`` branch → TransactionCoordinator
    .handleVerifyPartitionsInTransaction, answered at once from the coordinator's cache."""
    txn_id = request.transactional_id
    state = coordinator.state_manager.get_transaction_state(txn_id) if txn_id else None
    errors = verify_partitions_in_transaction(state, txn_id, request.producer_id, request.producer_epoch,
                                              request.partitions)
    yield Respond(reply_to, AddPartitionsToTxnResponse(tuple(errors.items()), transactional_id=txn_id))
