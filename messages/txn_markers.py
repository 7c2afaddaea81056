"""WriteTxnMarkers (key 27) between a transaction coordinator and partition leaders, and what the leader tells its
group coordinator once markers reached ``__consumer_offsets``.

`WriteTxnMarkersRequest` mirrors WriteTxnMarkersRequest.json v0 (one `TxnMarkerEntry` per producer: its epoch,
COMMIT or ABORT, the coordinator's epoch and the partitions to mark); `WriteTxnMarkersResponse` answers an error per
(producer, partition). `TxnMarkersWritten` is KafkaApis.handleWriteTxnMarkersRequest's call of
``GroupCoordinator.scheduleHandleTxnCompletion``: the offsets a producer committed in its transaction to those
``__consumer_offsets`` partitions become visible (COMMIT) or are dropped (ABORT).
"""

from __future__ import annotations

from messages.common import Errors, TopicPartition
from messages.registry import message


@message
class TxnMarkerEntry:
    """WriteTxnMarkersRequest.Markers[]: ``committed`` is TransactionResult COMMIT (True) or ABORT (False)."""

    producer_id: int
    producer_epoch: int
    committed: bool
    coordinator_epoch: int
    partitions: tuple[TopicPartition, ...]


@message
class WriteTxnMarkersRequest:
    markers: tuple[TxnMarkerEntry, ...]
    principal: str = "User:ANONYMOUS"  # the sender's KafkaPrincipal (inbound: RequestContext's), for the authorizer


@message
class TxnMarkerPartitionResult:
    """One partition's answer for one producer's marker."""

    producer_id: int
    tp: TopicPartition
    error: Errors


@message
class WriteTxnMarkersResponse:
    results: tuple[TxnMarkerPartitionResult, ...]


@message
class TxnMarkersWritten:
    """GroupCoordinator.scheduleHandleTxnCompletion(producerId, offsetsPartitions, transactionResult): the markers
    of ``producer_id``'s transaction (``committed``: COMMIT, else ABORT) are in these ``__consumer_offsets``
    partitions, appended and replicated to the ISR. The group coordinator materialises (or drops) the offsets the
    producer committed in the transaction to the groups of those partitions."""

    producer_id: int
    committed: bool
    offsets_partitions: tuple[int, ...]
