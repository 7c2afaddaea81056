"""The transaction coordinator's requests and responses (Kafka 2.6's InitProducerId with a transactional id,
AddPartitionsToTxn, AddOffsetsToTxn, EndTxn), as the coordinator sees them: one internal value per API whatever the
wire version (core/api/{init_producer_id,add_partitions_to_txn,add_offsets_to_txn,end_txn}.py convert), with Kafka's
field names in snake case. Also the coordinator actor's start (TransactionCoordinatorInit) and its configuration.
"""

from __future__ import annotations

from typing import Any

from messages.common import Errors, TopicPartition
from messages.registry import message
from messages.txn_markers import TxnMarkerEntry, TxnMarkerPartitionResult

NO_PRODUCER_ID = -1  # RecordBatch.NO_PRODUCER_ID
NO_PRODUCER_EPOCH = -1  # RecordBatch.NO_PRODUCER_EPOCH


@message
class TransactionCoordinatorConfig:
    """KafkaConfig's transaction.* settings (Kafka's TransactionConfig), Kafka 2.6's defaults."""

    transactional_id_expiration_ms: int = 604800000
    transaction_max_timeout_ms: int = 900000
    transaction_log_num_partitions: int = 50
    transaction_log_replication_factor: int = 3
    transaction_log_segment_bytes: int = 104857600
    transaction_log_load_buffer_size: int = 5242880
    transaction_log_min_isr: int = 2
    abort_timed_out_transactions_interval_ms: int = 10000
    remove_expired_transactional_ids_interval_ms: int = 3600000
    request_timeout_ms: int = 30000
    # the broker's message.max.bytes: the bound of a batch of expired ids' tombstones (2.6.3 reads the partition's
    # max.message.bytes, which kactor's __transaction_state inherits from it)
    message_max_bytes: int = 1048588

    @classmethod
    def from_kafka_config(cls, cfg: Any) -> TransactionCoordinatorConfig:
        """TransactionCoordinator.apply's TransactionConfig from the broker's KafkaConfig."""
        return cls(cfg["transactional.id.expiration.ms"], cfg["transaction.max.timeout.ms"],
                   cfg["transaction.state.log.num.partitions"], cfg["transaction.state.log.replication.factor"],
                   cfg["transaction.state.log.segment.bytes"], cfg["transaction.state.log.load.buffer.size"],
                   cfg["transaction.state.log.min.isr"],
                   cfg["transaction.abort.timed.out.transaction.cleanup.interval.ms"],
                   cfg["transaction.remove.expired.transaction.cleanup.interval.ms"], cfg["request.timeout.ms"],
                   cfg["message.max.bytes"])


@message
class TransactionCoordinatorInit:
    """The broker process starts its transaction coordinator (TransactionCoordinator.startup)."""

    broker_id: int
    config: TransactionCoordinatorConfig
    offsets_topic_num_partitions: int = 50  # for AddOffsetsToTxn's __consumer_offsets partition of a group
    inter_broker_listener_name: str = "PLAINTEXT"  # the listener the markers are sent on


@message
class InitProducerIdRequest:
    transactional_id: str | None
    transaction_timeout_ms: int
    producer_id: int = NO_PRODUCER_ID  # v3: the producer's current id and epoch (KIP-360), else -1
    producer_epoch: int = NO_PRODUCER_EPOCH
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)


@message
class InitProducerIdResponse:
    error: Errors
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH


@message
class AddPartitionsToTxnRequest:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    partitions: tuple[TopicPartition, ...]
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)
    # v4 (Kafka 3.6, KIP-890 part 1): a partition leader asks whether the partitions are in the transaction
    verify_only: bool = False


@message
class AddPartitionsToTxnResponse:
    errors: tuple[tuple[TopicPartition, Errors], ...]
    error: Errors = Errors.NONE  # v4's top-level error (CLUSTER_AUTHORIZATION_FAILED for a v4 from a client)
    transactional_id: str = ""  # v4 answers name their transaction


@message
class AddOffsetsToTxnRequest:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    group_id: str
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)


@message
class AddOffsetsToTxnResponse:
    error: Errors


@message
class EndTxnRequest:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    committed: bool  # TransactionResult.COMMIT, else ABORT
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)


@message
class EndTxnResponse:
    error: Errors


@message
class TxnMarkerChannelStart:
    """A TransactionMarkerChannelActor's broker, the listener it reaches it on, and how long it waits for an answer
    (request.timeout.ms)."""

    broker: Any
    listener_name: str
    request_timeout_ms: float
    coordinator: str


@message
class TxnMarkersAnswered:
    """A TransactionMarkerChannelActor to its coordinator: the answer to ``markers`` (each partition's error, as the
    WriteTxnMarkersResponse said), or None when the request failed (disconnected, timed out): the markers are sent
    again, to the leaders found then."""

    broker_id: int
    markers: tuple[TxnMarkerEntry, ...]
    errors: tuple[TxnMarkerPartitionResult, ...] | None
