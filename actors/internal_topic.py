"""The coordinators' "internal topic" edge: their appends to and reads of ``__consumer_offsets`` and
``__transaction_state`` as in-process asks of the replica manager (Kafka's replicaManager.appendRecords and
log.read), and how each answer is read back. The group and transaction coordinator actors share it.
"""

from __future__ import annotations

from typing import Any

from core.coordinator.coordinator_loader import LogRead, LogStart
from core.coordinator.group.group_metadata_manager import Appended
from messages.common import Errors, TopicPartition
from messages.replication import (
    CONSUMER_REPLICA_ID,
    DEBUGGING_REPLICA_ID,
    EARLIEST_TIMESTAMP,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ProducePartition,
    ProduceRequest,
    ProduceResponse,
)


def append(topic: str, partition: int, records: bytes, acks: int, timeout_ms: int,
           coordinator: bool = False, transactional_id: str | None = None,
           verification_token: int = 0) -> ProduceRequest:
    """replicaManager.appendRecords of a coordinator's records (``coordinator``: AppendOrigin.Coordinator, whose
    transactional batches have their producer epoch checked and no sequence; a TxnOffsetCommit's names its
    transactional id and the token of its verification, 3.7's appendForGroup with verificationGuards)."""
    return ProduceRequest(acks, timeout_ms, (ProducePartition(TopicPartition(topic, partition), records),),
                          transactional_id, coordinator=coordinator, verification_token=verification_token)


def verify(topic: str, partition: int, transactional_id: str, records: bytes, token: int,
           timeout_ms: int) -> ProduceRequest:
    """ReplicaManager.maybeStartTransactionVerificationForPartition (Kafka 3.7) of a coordinator's transactional
    batch: a ``verify_only`` request, answered with the verification's error and nothing appended."""
    return ProduceRequest(-1, timeout_ms, (ProducePartition(TopicPartition(topic, partition), records),),
                          transactional_id, coordinator=True, verify_only=True, verification_token=token)


def read(topic: str, partition: int, offset: int, max_bytes: int) -> FetchRequest:
    """A loader's log.read(offset, maxBytes, FetchLogEnd): the debugging replica id reads to the log end."""
    return FetchRequest(DEBUGGING_REPLICA_ID, (FetchPartition(TopicPartition(topic, partition), offset,
                                                              partition_max_bytes=max_bytes),), max_bytes=max_bytes)


def await_high_watermark(topic: str, partition: int, offset: int, max_wait_ms: int) -> FetchRequest:
    """A coordinator waiting for its log's high watermark to pass ``offset`` (`AwaitHighWatermark`): a consumer's
    Fetch from ``offset`` with min_bytes 1, which the leader's fetch purgatory holds until the high watermark moves
    past it or ``max_wait_ms`` passes; its records are not used (one batch at most)."""
    return FetchRequest(CONSUMER_REPLICA_ID, (FetchPartition(TopicPartition(topic, partition), offset,
                                                             partition_max_bytes=1),),
                        max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1)


def read_log_start(topic: str, partition: int) -> ListOffsetsRequest:
    """Log.logStartOffset of this broker's replica: ListOffsets EARLIEST as the debugging replica (any replica
    answers, as the coordinator's own log read does not ask for leadership)."""
    return ListOffsetsRequest(DEBUGGING_REPLICA_ID, 0, (ListOffsetsPartition(TopicPartition(topic, partition),
                                                                             EARLIEST_TIMESTAMP),))


def append_result(response: Any) -> Errors:
    if isinstance(response, ProduceResponse) and response.partitions:
        return response.partitions[0].error
    return Errors.UNKNOWN_SERVER_ERROR


def appended_result(response: Any) -> Appended:
    """The partition's error and the batch's base offset (appendedBatchOffset)."""
    if isinstance(response, ProduceResponse) and response.partitions:
        p = response.partitions[0]
        return Appended(p.error, p.base_offset)
    return Appended(Errors.UNKNOWN_SERVER_ERROR)


def read_result(response: Any) -> LogRead:
    if isinstance(response, FetchResponse) and response.partitions:
        p = response.partitions[0]
        return LogRead(p.error if response.error is Errors.NONE else response.error, p.records, p.log_start_offset,
                       p.log_end_offset, p.high_watermark)
    return LogRead(Errors.UNKNOWN_SERVER_ERROR)


def log_start_result(response: Any) -> LogStart:
    if isinstance(response, ListOffsetsResponse) and response.partitions:
        p = response.partitions[0]
        return LogStart(p.error, p.offset)
    return LogStart(Errors.UNKNOWN_SERVER_ERROR)
