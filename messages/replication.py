"""Broker ↔ broker replication and client → broker produce/fetch messages (a reduced Fetch v11 / Produce v8), and
OffsetsForLeaderEpoch v3 (field for field Kafka's OffsetForLeaderEpochRequest/Response JSON schema, snake_case).

Records are carried as text values; offsets are implied (a fetch returns the records from ``fetch_offset`` on); the
leader epochs of the records are carried as (partitionLeaderEpoch, baseOffset) runs, what Kafka's record batch
headers hold.
"""

from __future__ import annotations

from messages.common import Errors, TopicPartition
from messages.registry import message
from messages.requests import UpdateMetadataPartitionState

CONSUMER_REPLICA_ID = -1  # FetchRequest.CONSUMER_REPLICA_ID (ordinary consumers)
# FetchMetadata (KIP-227): session id 0 = no session; epoch 0 = a full request that asks for a new session,
# -1 = a full request without a session, ≥ 1 = the next incremental request of the session
INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
NO_LEADER_EPOCH = -1  # RecordBatch.NO_PARTITION_LEADER_EPOCH: "current leader epoch not provided"
DEBUGGING_REPLICA_ID = -2  # OffsetForLeaderEpochRequest.ReplicaId's default (a "debug" consumer)


@message
class FetchPartition:
    """One partition of a FetchRequest: where to read from, the fetcher's view of the leader epoch (-1 = none)."""

    tp: TopicPartition
    fetch_offset: int
    leader_epoch: int = NO_LEADER_EPOCH
    # a follower's own high watermark (-1: not given): with it the leader leaves the partition out of the response
    # when there is nothing new (no records, same HW, follower at the leader's LEO) — see ReplicaManager._fetch_response
    high_watermark: int = -1


@message
class FetchRequest:
    """A fetch from a follower (``replica_id`` = its broker id) or a consumer (-1), batching many partitions.

    ``max_wait_ms`` / ``min_records``: a fetch that finds fewer than ``min_records`` records waits in the leader's
    fetch purgatory up to ``max_wait_ms`` (Kafka's min_bytes / max_wait). 0 = answer at once.

    Fetch sessions (KIP-227, reduced): a follower's full request with ``session_epoch`` 0 asks the leader for a
    session; later requests name it (``session_id``, epoch 1, 2, ...) and carry only the partitions whose fetch
    state changed, plus the ``forgotten`` ones, so an idle follower's request does not grow with its partition
    count. ``fetcher_id`` tells the follower's fetchers apart (one session each; a new full request replaces it).
    """

    replica_id: int
    partitions: tuple[FetchPartition, ...]
    max_wait_ms: int = 0
    min_records: int = 0
    session_id: int = INVALID_SESSION_ID
    session_epoch: int = FINAL_EPOCH
    forgotten: tuple[TopicPartition, ...] = ()
    fetcher_id: int = 0


@message
class FetchPartitionData:
    """``record_epochs``: the (partitionLeaderEpoch, baseOffset) of each run of ``records`` with one leader epoch
    (the record batches' headers; empty in a consumer's answer). A follower appends the records with these epochs,
    so its leader-epoch cache matches the leader's."""

    tp: TopicPartition
    error: Errors
    high_watermark: int = -1
    log_end_offset: int = -1
    records: tuple[str, ...] = ()
    record_epochs: tuple[tuple[int, int], ...] = ()


@message
class FetchResponse:
    """``error``: a top-level error (an unknown fetch session / a wrong session epoch: start a new session);
    ``session_id``: the session the leader keeps for the fetcher (0: none)."""

    partitions: tuple[FetchPartitionData, ...]
    error: Errors = Errors.NONE
    session_id: int = INVALID_SESSION_ID


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


@message
class DescribeMetadataCacheRequest:
    """kactor introspection (not a Kafka API): what this broker's MetadataCache holds for ``topics`` (all topics if
    empty) — the partition states exactly as the controller's last UpdateMetadata left them (ISR not filtered by
    liveness, unlike a Kafka Metadata response), the alive brokers and the controller id. Lets tests and tools see
    that an ISR change reached every broker."""

    topics: tuple[str, ...] = ()


@message
class DescribeMetadataCacheResponse:
    controller_id: int
    alive_brokers: tuple[int, ...]
    partition_states: tuple[UpdateMetadataPartitionState, ...]


@message
class OffsetForLeaderPartition:
    """OffsetForLeaderEpochRequest.Topics[].Partitions[] (v3)."""

    partition: int
    current_leader_epoch: int
    leader_epoch: int


@message
class OffsetForLeaderTopic:
    """OffsetForLeaderEpochRequest.Topics[] (v3)."""

    topic: str
    partitions: tuple[OffsetForLeaderPartition, ...]


@message
class OffsetsForLeaderEpochRequest:
    """OffsetForLeaderEpochRequest v3 (API key 23): for each partition, the end offset of the largest leader epoch
    ≤ ``leader_epoch`` in the leader's log, fenced by ``current_leader_epoch`` (KIP-101, KIP-279, KIP-320). A
    follower's fetcher sends it for its truncating partitions (``replica_id`` = its broker id; v3+)."""

    topics: tuple[OffsetForLeaderTopic, ...]
    replica_id: int = DEBUGGING_REPLICA_ID


@message
class OffsetForLeaderPartitionResult:
    """OffsetForLeaderEpochResponse.Topics[].Partitions[] (v3): ``error_code`` NONE, FENCED_LEADER_EPOCH,
    UNKNOWN_LEADER_EPOCH, NOT_LEADER_FOR_PARTITION (6, NOT_LEADER_OR_FOLLOWER since 2.7),
    UNKNOWN_TOPIC_OR_PARTITION or KAFKA_STORAGE_ERROR; ``leader_epoch`` / ``end_offset`` -1 when undefined."""

    error_code: Errors
    partition: int
    leader_epoch: int
    end_offset: int


@message
class OffsetForLeaderTopicResult:
    """OffsetForLeaderEpochResponse.Topics[] (v3)."""

    topic: str
    partitions: tuple[OffsetForLeaderPartitionResult, ...]


@message
class OffsetsForLeaderEpochResponse:
    """OffsetForLeaderEpochResponse v3."""

    topics: tuple[OffsetForLeaderTopicResult, ...]
    throttle_time_ms: int = 0
