"""Kafka's delayed operations of the ReplicaManager's purgatories: `kafka.server.DelayedProduce` (and its
ProducePartitionStatus), `DelayedFetch`, `DelayedDeleteRecords` (and DeleteRecordsPartitionStatus), and the
acks=all appends of `KafkaApis.handleWriteTxnMarkersRequest` (DelayedWriteTxnMarkers).

They are values: what a parked request waits for and the answer it gives. Completing and expiring them
(DelayedOperationPurgatory.checkAndComplete / tryCompleteElseWatch, the expiration reaper) is
`core.broker.replica_manager.ReplicaManager`'s (``_try_complete_*``, ``_complete_delayed_requests``,
``expire_delayed_operations``): it reads the partitions' high and low watermarks the ReplicaManager holds, and the
simulator's mutations patch those methods on ReplicaManager itself.
"""

from __future__ import annotations

import attrs

from core.broker.fetch_session import FetchContext
from messages.common import Errors, TopicPartition
from messages.replication import (
    GROUP_METADATA_TOPIC_NAME,
    DeleteRecordsPartitionResult,
    DeleteRecordsResponse,
    FetchPartition,
    FetchRequest,
    ProducePartitionResponse,
    ProduceResponse,
)
from messages.txn_markers import (
    TxnMarkerEntry,
    TxnMarkerPartitionResult,
    TxnMarkersWritten,
    WriteTxnMarkersResponse,
)


@attrs.define
class ProducePartitionStatus:
    """kafka.server.ProducePartitionStatus: ``required_offset`` = last appended offset + 1; ``acks_pending`` until
    the high watermark reaches it or the partition fails."""

    required_offset: int
    response: ProducePartitionResponse
    acks_pending: bool


@attrs.define
class DelayedProduce:
    """kafka.server.DelayedProduce: an acks=all produce, answered once every partition of it is done (its high
    watermark passed the records, or an error), or at its deadline (REQUEST_TIMED_OUT for the pending ones)."""

    reply_to: str
    status: dict[TopicPartition, ProducePartitionStatus]
    deadline_ms: float

    def response(self) -> ProduceResponse:
        return ProduceResponse(tuple(st.response for st in self.status.values()))


@attrs.define
class DelayedWriteTxnMarkers:
    """KafkaApis.handleWriteTxnMarkersRequest's appends: one acks=all append (a DelayedProduce) per marker, the
    response sent once all are done; ``errors`` the partitions refused before any append (no local log)."""

    reply_to: str
    markers: list[tuple[TxnMarkerEntry, DelayedProduce]]
    errors: list[TxnMarkerPartitionResult]
    deadline_ms: float

    def response(self) -> WriteTxnMarkersResponse:
        return WriteTxnMarkersResponse((*self.errors, *(
            TxnMarkerPartitionResult(marker.producer_id, tp, st.response.error)
            for marker, op in self.markers for tp, st in op.status.items())))

    def written_offsets_partitions(self) -> list[TxnMarkersWritten]:
        """scheduleHandleTxnCompletion's arguments: per marker, the ``__consumer_offsets`` partitions it reached."""
        out = []
        for marker, op in self.markers:
            parts = tuple(tp.partition for tp, st in op.status.items()
                          if tp.topic == GROUP_METADATA_TOPIC_NAME and st.response.error == Errors.NONE)
            if parts:
                out.append(TxnMarkersWritten(marker.producer_id, marker.committed, parts))
        return out


@attrs.define
class DeleteRecordsPartitionStatus:
    """kafka.server.DeleteRecordsPartitionStatus: ``required_offset`` the offset asked (the high watermark for -1);
    ``acks_pending`` until the partition's low watermark reaches it or the partition fails."""

    required_offset: int
    response: DeleteRecordsPartitionResult
    acks_pending: bool


@attrs.define
class DelayedDeleteRecords:
    """kafka.server.DelayedDeleteRecords: a DeleteRecords whose leaders moved their log start, answered once every
    replica's log start (the low watermark) reached the offset asked, or an error, or at its deadline
    (REQUEST_TIMED_OUT for the pending ones)."""

    reply_to: str
    status: dict[TopicPartition, DeleteRecordsPartitionStatus]
    deadline_ms: float

    def response(self) -> DeleteRecordsResponse:
        return DeleteRecordsResponse(tuple(st.response for st in self.status.values()))


@attrs.define
class DelayedFetch:
    """kafka.server.DelayedFetch: a fetch waiting for ``min_bytes`` or its ``max_wait_ms``."""

    reply_to: str
    request: FetchRequest
    context: FetchContext
    deadline_ms: float
    # its watch keys (DelayedOperationPurgatory): a produce to one partition looks at the fetches watching it only,
    # not at every partition of every parked follower session
    keys: frozenset[TopicPartition] = frozenset()
    # the partitions handle_fetch read when it parked this fetch, in the context's order: the others were idle then
    # (ReplicaManager._idle) and stay idle until something happens to them, which touches the fetch (``touched``);
    # an untouched fetch's expiry reads only these instead of testing every partition of the session again
    read: tuple[FetchPartition, ...] | None = None
    touched: bool = False
