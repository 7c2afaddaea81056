"""The group coordinator's requests and responses (Kafka 2.6's FindCoordinator, JoinGroup, SyncGroup, Heartbeat,
LeaveGroup, OffsetCommit, OffsetFetch, DescribeGroups, ListGroups, DeleteGroups), as the coordinator sees them:
one internal value per API whatever the wire version (core/api/{find_coordinator,group,offsets}.py convert), with
Kafka's field names in snake case. Also the coordinator actor's start (GroupCoordinatorInit) and its configuration.
"""

from __future__ import annotations

from typing import Any

from messages.common import Errors, TopicPartition
from messages.registry import message
from messages.transaction import TransactionCoordinatorConfig

UNKNOWN_MEMBER_ID = ""  # JoinGroupRequest.UNKNOWN_MEMBER_ID
NO_GENERATION = -1  # GroupCoordinator.NoGeneration / OffsetCommitRequest.DEFAULT_GENERATION_ID
COORDINATOR_TYPE_GROUP = 0  # FindCoordinatorRequest.CoordinatorType.GROUP
COORDINATOR_TYPE_TRANSACTION = 1


@message
class GroupCoordinatorConfig:
    """KafkaConfig's group.* and offsets.* settings (GroupConfig + OffsetConfig), Kafka 2.6's defaults."""

    offsets_topic_num_partitions: int = 50
    offsets_topic_replication_factor: int = 3
    offsets_topic_segment_bytes: int = 104857600
    group_initial_rebalance_delay_ms: int = 3000
    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1800000
    group_max_size: int = 2147483647
    offsets_retention_minutes: int = 10080
    offset_metadata_max_bytes: int = 4096
    offset_commit_timeout_ms: int = 5000
    offsets_retention_check_interval_ms: int = 600000

    @classmethod
    def from_kafka_config(cls, cfg: Any) -> GroupCoordinatorConfig:
        """GroupCoordinator.apply's GroupConfig + OffsetConfig from the broker's KafkaConfig."""
        return cls(cfg["offsets.topic.num.partitions"], cfg["offsets.topic.replication.factor"],
                   cfg["offsets.topic.segment.bytes"], cfg["group.initial.rebalance.delay.ms"],
                   cfg["group.min.session.timeout.ms"], cfg["group.max.session.timeout.ms"], cfg["group.max.size"],
                   cfg["offsets.retention.minutes"], cfg["offset.metadata.max.bytes"], cfg["offsets.commit.timeout.ms"],
                   cfg["offsets.retention.check.interval.ms"])


@message
class GroupCoordinatorInit:
    """The broker process starts its group coordinator (GroupCoordinator.startup). FindCoordinator, which it serves,
    creates ``__transaction_state`` with ``transaction_config``'s settings."""

    broker_id: int
    config: GroupCoordinatorConfig
    transaction_config: TransactionCoordinatorConfig = TransactionCoordinatorConfig()


@message
class FindCoordinatorRequest:
    key: str
    key_type: int = COORDINATOR_TYPE_GROUP
    listener: str = ""  # the listener the request came in on: the coordinator's endpoint on that listener answers
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)


@message
class FindCoordinatorResponse:
    error: Errors
    node_id: int = -1
    host: str = ""
    port: int = -1
    error_message: str | None = None


@message
class JoinGroupProtocol:
    name: str
    metadata: bytes


@message
class JoinGroupRequest:
    group_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    member_id: str
    protocol_type: str
    protocols: tuple[JoinGroupProtocol, ...]
    group_instance_id: str | None = None
    require_known_member_id: bool = False  # KIP-394: KafkaApis sets it for v4+ without a group.instance.id
    client_id: str = ""
    client_host: str = ""
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)


@message
class JoinGroupMember:
    member_id: str
    metadata: bytes
    group_instance_id: str | None = None


@message
class JoinGroupResponse:
    error: Errors
    generation_id: int = NO_GENERATION
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    member_id: str = ""
    members: tuple[JoinGroupMember, ...] = ()


@message
class SyncGroupAssignment:
    member_id: str
    assignment: bytes


@message
class SyncGroupRequest:
    group_id: str
    generation_id: int
    member_id: str
    assignments: tuple[SyncGroupAssignment, ...] = ()
    group_instance_id: str | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)


@message
class SyncGroupResponse:
    error: Errors
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol_name: str | None = None


@message
class HeartbeatRequest:
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)


@message
class HeartbeatResponse:
    error: Errors


@message
class MemberIdentity:
    member_id: str
    group_instance_id: str | None = None


@message
class LeaveGroupRequest:
    group_id: str
    members: tuple[MemberIdentity, ...]
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)


@message
class LeaveGroupMemberResponse:
    member_id: str
    group_instance_id: str | None
    error: Errors


@message
class LeaveGroupResponse:
    error: Errors
    members: tuple[LeaveGroupMemberResponse, ...] = ()


@message
class OffsetCommitPartition:
    tp: TopicPartition
    committed_offset: int
    committed_leader_epoch: int = -1
    committed_metadata: str | None = None
    commit_timestamp: int = -1  # OffsetCommit v1 only; -1 = the broker's time


@message
class OffsetCommitRequest:
    group_id: str
    partitions: tuple[OffsetCommitPartition, ...]
    generation_id: int = NO_GENERATION
    member_id: str = UNKNOWN_MEMBER_ID
    group_instance_id: str | None = None
    retention_time_ms: int = -1  # v2-v4; -1 = the broker's offsets.retention.minutes
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)


@message
class OffsetCommitPartitionResponse:
    tp: TopicPartition
    error: Errors


@message
class OffsetCommitResponse:
    partitions: tuple[OffsetCommitPartitionResponse, ...]


@message
class TxnOffsetCommitRequest:
    """TxnOffsetCommit (KIP-98; KIP-447's member, generation and instance id from v3): offsets committed inside the
    producer's transaction, pending until its marker."""

    transactional_id: str
    group_id: str
    producer_id: int
    producer_epoch: int
    partitions: tuple[OffsetCommitPartition, ...]
    generation_id: int = NO_GENERATION
    member_id: str = UNKNOWN_MEMBER_ID
    group_instance_id: str | None = None
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)


@message
class TxnOffsetCommitResponse:
    partitions: tuple[OffsetCommitPartitionResponse, ...]


@message
class OffsetFetchRequest:
    group_id: str
    partitions: tuple[TopicPartition, ...] | None  # None: every partition the group committed (v2+)
    require_stable: bool = False
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)


@message
class OffsetFetchPartitionData:
    tp: TopicPartition
    offset: int = -1
    leader_epoch: int = -1
    metadata: str | None = ""
    error: Errors = Errors.NONE


@message
class OffsetFetchResponse:
    error: Errors
    partitions: tuple[OffsetFetchPartitionData, ...] = ()


@message
class DescribeGroupsRequest:
    groups: tuple[str, ...]
    include_authorized_operations: bool = False  # v3+
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)


@message
class DescribedGroupMember:
    member_id: str
    client_id: str
    client_host: str
    metadata: bytes = b""
    assignment: bytes = b""
    group_instance_id: str | None = None


@message
class DescribedGroup:
    error: Errors
    group_id: str
    state: str = ""
    protocol_type: str = ""
    protocol: str = ""
    members: tuple[DescribedGroupMember, ...] = ()


@message
class DescribeGroupsResponse:
    groups: tuple[DescribedGroup, ...]
    include_authorized_operations: bool = False  # the request's: the answer then carries the allowed operations


@message
class ListGroupsRequest:
    states_filter: tuple[str, ...] = ()
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)


@message
class ListedGroup:
    group_id: str
    protocol_type: str
    state: str


@message
class ListGroupsResponse:
    error: Errors
    groups: tuple[ListedGroup, ...] = ()


@message
class DeleteGroupsRequest:
    groups: tuple[str, ...]
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)


@message
class DeleteGroupsResponse:
    results: tuple[tuple[str, Errors], ...]


@message
class OffsetDeleteRequest:
    """OffsetDeleteRequest (KIP-496): the committed offsets of ``partitions`` go from ``group_id``."""

    group_id: str
    partitions: tuple[TopicPartition, ...]
    principal: str = "User:ANONYMOUS"  # the connection's KafkaPrincipal, for the authorizer (RequestContext's)


@message
class OffsetDeleteResponse:
    """The group's error (then no partitions), or each partition's."""

    error: Errors
    partitions: tuple[tuple[TopicPartition, Errors], ...] = ()
