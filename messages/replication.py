"""Broker ↔ broker replication and client → broker produce/fetch messages (a reduced Fetch v11 / Produce v8).

Records are carried as text values; offsets are implied (a fetch returns the records from ``fetch_offset`` on).
"""

from __future__ import annotations

from messages.common import Errors, TopicPartition
from messages.registry import message

CONSUMER_REPLICA_ID = -1  # FetchRequest.CONSUMER_REPLICA_ID (ordinary consumers)
NO_LEADER_EPOCH = -1  # RecordBatch.NO_PARTITION_LEADER_EPOCH: "current leader epoch not provided"


@message
class FetchPartition:
    """One partition of a FetchRequest: where to read from, and the fetcher's view of the leader epoch (-1 = none)."""

    tp: TopicPartition
    fetch_offset: int
    leader_epoch: int = NO_LEADER_EPOCH


@message
class FetchRequest:
    """A fetch from a follower (``replica_id`` = its broker id) or a consumer (-1), batching many partitions.

    ``max_wait_ms`` / ``min_records``: a fetch that finds fewer than ``min_records`` records waits in the leader's
    fetch purgatory up to ``max_wait_ms`` (Kafka's min_bytes / max_wait). 0 = answer at once.
    """

    replica_id: int
    partitions: tuple[FetchPartition, ...]
    max_wait_ms: int = 0
    min_records: int = 0


@message
class FetchPartitionData:
    tp: TopicPartition
    error: Errors
    high_watermark: int = -1
    log_end_offset: int = -1
    records: tuple[str, ...] = ()


@message
class FetchResponse:
    partitions: tuple[FetchPartitionData, ...]


@message
class ProduceRequest:
    """Append ``records`` to ``tp``'s leader. ``acks``: 1 = leader append, -1 = all ISR members (waits in the
    produce purgatory until the high watermark passes the records, at most ``timeout_ms``)."""

    tp: TopicPartition
    records: tuple[str, ...]
    acks: int = 1
    timeout_ms: int = 30000


@message
class ProduceResponse:
    tp: TopicPartition
    error: Errors
    base_offset: int = -1
    high_watermark: int = -1
