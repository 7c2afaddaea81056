"""Broker ↔ broker replication and client → broker produce/fetch messages (Produce v8, Fetch v11, ListOffsets v5)
and OffsetsForLeaderEpoch v3 (field for field Kafka's OffsetForLeaderEpochRequest/Response JSON schema, snake_case).

Records are Kafka v2 record batches as ``bytes`` (protocol/records.py), stored by the log as received with offsets
and the partitionLeaderEpoch assigned; a record's leader epoch is its batch's partitionLeaderEpoch. ListOffsets v5,
and the in-process LocalRequest / LocalReply and LeadershipChange of the group coordinator, are here too.
"""

from __future__ import annotations

from typing import Any

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
class ProducePartition:
    """ProduceRequest.TopicData[].PartitionData[]: one partition's ``records``, Kafka v2 record batches as the
    producer sent them (offsets and partitionLeaderEpoch are assigned by the leader's log)."""

    tp: TopicPartition
    records: bytes
    # not NONE: the partition is answered with this error and nothing is appended (a v0-2 message set the wire
    # edge could not convert: Kafka's per-partition CORRUPT_MESSAGE / UNSUPPORTED_COMPRESSION_TYPE answer)
    error: Errors = Errors.NONE


@message
class ProduceRequest:
    """ProduceRequest (v3-v8 fields): append each partition's batches on its leader. ``acks``: 0 = no answer,
    1 = the leader appended, -1 = every ISR member has them (the request waits in the produce purgatory until the
    high watermark passes every partition's records, at most ``timeout_ms``: Kafka's DelayedProduce)."""

    acks: int
    timeout_ms: int
    partitions: tuple[ProducePartition, ...]
    transactional_id: str | None = None
    # an in-process coordinator's append (Kafka's AppendOrigin.Coordinator: the group coordinator's transactional
    # offset commits): producer epochs are checked, sequences are not; never set from the wire
    coordinator: bool = False
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)
    # a coordinator's TxnOffsetCommit under KIP-890 verification (Kafka 3.7, KAFKA-15449): ``verify_only`` starts the
    # verification of the batch's transaction on the partition (its guard, the transaction coordinator asked) and
    # appends nothing; the append that follows names the same ``verification_token`` (3.7 hands the guard back)
    verify_only: bool = False
    verification_token: int = 0


@message
class ProducePartitionResponse:
    """ProduceResponse.Responses[].PartitionResponses[] (v8): ``base_offset`` of the partition's first record,
    ``log_append_time_ms`` (-1 unless the topic's message.timestamp.type is LogAppendTime), ``record_errors``
    (batch index, message) for INVALID_RECORD (KIP-467)."""

    tp: TopicPartition
    error: Errors
    base_offset: int = -1
    log_append_time_ms: int = -1
    log_start_offset: int = -1
    record_errors: tuple[tuple[int, str | None], ...] = ()
    error_message: str | None = None


@message
class ProduceResponse:
    partitions: tuple[ProducePartitionResponse, ...]
    throttle_time_ms: int = 0


@message
class FetchPartition:
    """FetchRequest.Topics[].Partitions[] (v11): where to read from and the fetcher's view of the leader epoch
    (``leader_epoch`` = Kafka's current_leader_epoch, -1 = none); ``log_start_offset`` is a follower's own (-1 for
    consumers)."""

    tp: TopicPartition
    fetch_offset: int
    leader_epoch: int = NO_LEADER_EPOCH
    log_start_offset: int = -1
    partition_max_bytes: int = 1048576


@message
class FetchRequest:
    """FetchRequest (v11) from a follower (``replica_id`` = its broker id) or a consumer (-1).

    A fetch whose read finds fewer than ``min_bytes`` waits in the leader's fetch purgatory up to ``max_wait_ms``
    (Kafka's DelayedFetch). ``max_bytes`` bounds the whole response, ``partition_max_bytes`` each partition; at
    least one batch is returned if the first partition with data has one (KIP-74). ``isolation_level`` 1
    (READ_COMMITTED) reads up to the last stable offset (the high watermark bounded by the first open or not yet
    replicated transaction) and is answered the aborted transactions overlapping what it read.

    Fetch sessions (KIP-227): a full request with ``session_epoch`` 0 asks the leader for a session; the next ones
    name it (``session_id``, epoch 1, 2, ...) and carry only the partitions whose fetch state changed, plus the
    ``forgotten`` ones; the leader then answers only the partitions with something new. ``fetcher_id`` tells a
    follower's fetchers apart (on the wire: the client id ``broker-<replica_id>-fetcher-<fetcher_id>``).
    """

    replica_id: int
    partitions: tuple[FetchPartition, ...]
    max_wait_ms: int = 0
    min_bytes: int = 0
    max_bytes: int = 52428800
    isolation_level: int = 0
    session_id: int = INVALID_SESSION_ID
    session_epoch: int = FINAL_EPOCH
    forgotten: tuple[TopicPartition, ...] = ()
    fetcher_id: int = 0
    rack_id: str = ""
    # a consumer's Fetch v11+: KafkaApis gives it a ClientMetadata, so it may read a follower (up to its HW)
    client_metadata: bool = False
    listener: str = ""  # the listener the request came in on (ClientMetadata.listenerName: the replicas' endpoints)
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)


@message
class AbortedTransaction:
    """FetchResponse.Responses[].Partitions[].AbortedTransactions[] (v4+): a transaction of ``producer_id``
    aborted, whose first record is at ``first_offset``."""

    producer_id: int
    first_offset: int


@message
class FetchPartitionData:
    """FetchResponse.Responses[].Partitions[] (v11): ``records`` are whole v2 batches as the leader's log holds
    them (offsets and partitionLeaderEpoch in their headers). ``log_end_offset`` is kactor-internal (not on the
    wire): the leader's log end offset at read time, which a follower uses to truncate after an unclean election."""

    tp: TopicPartition
    error: Errors
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    records: bytes = b""
    log_end_offset: int = -1
    preferred_read_replica: int = -1
    # READ_COMMITTED reads: the aborted transactions overlapping ``records`` (None otherwise: null on the wire)
    aborted_transactions: tuple[AbortedTransaction, ...] | None = None


@message
class FetchResponse:
    """``error``: a top-level error (FETCH_SESSION_ID_NOT_FOUND / INVALID_FETCH_SESSION_EPOCH: start a new
    session); ``session_id``: the session the leader keeps for the fetcher (0: none)."""

    partitions: tuple[FetchPartitionData, ...]
    error: Errors = Errors.NONE
    session_id: int = INVALID_SESSION_ID
    throttle_time_ms: int = 0


LATEST_TIMESTAMP = -1  # ListOffsetRequest.LATEST_TIMESTAMP
EARLIEST_TIMESTAMP = -2  # ListOffsetRequest.EARLIEST_TIMESTAMP


@message
class ListOffsetsPartition:
    """ListOffsetRequest.Topics[].Partitions[] (v5): ``timestamp`` -1 = the latest offset, -2 = the earliest, else
    the first offset whose batch's max timestamp is at or after it."""

    tp: TopicPartition
    timestamp: int
    current_leader_epoch: int = NO_LEADER_EPOCH


@message
class ListOffsetsRequest:
    """ListOffsetRequest (v5): ``replica_id`` -1 for consumers (-2: debugging, any replica may answer);
    ``isolation_level`` 1 (READ_COMMITTED) caps -1 at the last stable offset."""

    replica_id: int
    isolation_level: int
    partitions: tuple[ListOffsetsPartition, ...]
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)


@message
class ListOffsetsPartitionResponse:
    tp: TopicPartition
    error: Errors
    timestamp: int = -1
    offset: int = -1
    leader_epoch: int = -1


@message
class ListOffsetsResponse:
    partitions: tuple[ListOffsetsPartitionResponse, ...]


@message
class LocalRequest:
    """A request from another actor of this broker process to the replica manager (the group coordinator reading
    and writing ``__consumer_offsets``): ``body`` is a ProduceRequest, FetchRequest or ListOffsetsRequest; the
    answer goes to the actor named ``reply_to`` as LocalReply(token, internal response) — a ProduceResponse for
    acks=0 too (Kafka's in-process appendRecords always calls back)."""

    token: int
    body: Any
    reply_to: str


@message
class LocalReply:
    token: int
    body: Any


from messages.topic import GROUP_METADATA_TOPIC_NAME  # noqa: E402,F401 - re-exported where it was


@message
class LeadershipChange:
    """KafkaApis.handleLeaderAndIsrRequest's ``onLeadershipChange`` after becomeLeaderOrFollower, for the
    coordinator of ``topic`` (``__consumer_offsets``: the group coordinator; ``__transaction_state``: the transaction
    coordinator): the partitions this broker became leader of (``elected``: (partition, leader epoch), onElection)
    and became a follower of (``resigned``: (partition, leader epoch), onResignation). Each replica-manager shard
    sends its own partitions' part."""

    elected: tuple[tuple[int, int], ...]
    resigned: tuple[tuple[int, int], ...]
    topic: str = GROUP_METADATA_TOPIC_NAME


@message
class DescribeMetadataCacheRequest:
    """kactor introspection (not a Kafka API): what this broker's MetadataCache holds for ``topics`` (all topics if
    empty) — the partition states exactly as the controller's last UpdateMetadata left them (ISR not filtered by
    liveness, unlike a Kafka Metadata response), the alive brokers and the controller id. Lets tests and tools see
    that an ISR change reached every broker."""

    topics: tuple[str, ...] = ()
    principal: str = "User:ANONYMOUS"  # the sender's KafkaPrincipal (inbound: RequestContext's), for the authorizer


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
    principal: str = "User:ANONYMOUS"  # the sender's KafkaPrincipal (inbound: RequestContext's), for the authorizer


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


INVALID_OFFSET_LAG = -1  # DescribeLogDirsResponse.INVALID_OFFSET_LAG: no local replica to measure against


@message
class DescribeLogDirsRequest:
    """DescribeLogDirsRequest (API key 35): the log dirs of this broker and, in each, the logs of ``partitions``
    (every log the broker has when None: the request's null topics, ``isAllTopicPartitions``)."""

    partitions: tuple[TopicPartition, ...] | None = None
    principal: str = "User:ANONYMOUS"  # the sender's KafkaPrincipal (inbound: RequestContext's), for the authorizer


@message
class LogDirPartition:
    """DescribeLogDirsResponse.Results[].Topics[].Partitions[]: a log's size in bytes, how far its end is behind
    (the high watermark for a current replica, the current log's end for a future one) and whether it is the
    ``-future`` log of a replica moving between dirs."""

    partition: int
    size: int
    offset_lag: int
    is_future: bool = False


@message
class LogDirTopic:
    name: str
    partitions: tuple[LogDirPartition, ...]


@message
class LogDirResult:
    """One log dir (its absolute path): NONE with its logs, or KAFKA_STORAGE_ERROR when it is offline."""

    error: Errors
    log_dir: str
    topics: tuple[LogDirTopic, ...] = ()


@message
class DescribeLogDirsResponse:
    results: tuple[LogDirResult, ...]


HIGH_WATERMARK = -1  # DeleteRecordsRequest.HIGH_WATERMARK: delete up to the partition's high watermark
INVALID_LOW_WATERMARK = -1  # DeleteRecordsResponse.INVALID_LOW_WATERMARK


@message
class AlterReplicaLogDir:
    """AlterReplicaLogDirsRequest.Dirs[]: move ``tp``'s replica on this broker to ``log_dir`` (an absolute path)."""

    tp: TopicPartition
    log_dir: str


@message
class AlterReplicaLogDirsRequest:
    """AlterReplicaLogDirsRequest (API key 34): each partition once (the request's map: the last dir named wins)."""

    dirs: tuple[AlterReplicaLogDir, ...]
    principal: str = "User:ANONYMOUS"  # the sender's KafkaPrincipal (inbound: RequestContext's), for the authorizer


@message
class AlterReplicaLogDirResult:
    tp: TopicPartition
    error: Errors


@message
class AlterReplicaLogDirsResponse:
    results: tuple[AlterReplicaLogDirResult, ...]
    throttle_time_ms: int = 0


@message
class DeleteRecordsPartition:
    """DeleteRecordsRequest.Topics[].Partitions[]: delete the records before ``offset`` (-1: the high watermark)."""

    tp: TopicPartition
    offset: int


@message
class DeleteRecordsRequest:
    """DeleteRecordsRequest (API key 21): answered once every partition's low watermark (the smallest log start
    offset of its replicas) reached its offset, or at ``timeout_ms``."""

    timeout_ms: int
    partitions: tuple[DeleteRecordsPartition, ...]
    principal: str = "User:ANONYMOUS"  # the sender's KafkaPrincipal (inbound: RequestContext's), for the authorizer


@message
class DeleteRecordsPartitionResult:
    tp: TopicPartition
    error: Errors
    low_watermark: int = INVALID_LOW_WATERMARK


@message
class DeleteRecordsResponse:
    partitions: tuple[DeleteRecordsPartitionResult, ...]
    throttle_time_ms: int = 0
