"""Kafka's shared value types: TopicPartition, LeaderAndIsr, ReplicaAssignment, broker registrations, error codes.

Names and constants follow `kafka.api.LeaderAndIsr`, `kafka.controller.ReplicaAssignment` and
`org.apache.kafka.common.protocol.Errors` so an engineer who knows Kafka finds them where expected.
"""

from __future__ import annotations

import enum

import attrs

from messages.registry import message, wire_enum

# kafka.api.LeaderAndIsr constants
INITIAL_LEADER_EPOCH = 0
INITIAL_ZK_VERSION = 0
NO_LEADER = -1
NO_EPOCH = -1
LEADER_DURING_DELETE = -2
EPOCH_DURING_DELETE = -2

# kafka.controller.KafkaController constants
INITIAL_CONTROLLER_EPOCH = 0
INITIAL_CONTROLLER_EPOCH_ZK_VERSION = 0

# kafka.zk.ZkVersion
MATCH_ANY_VERSION = -1
UNKNOWN_VERSION = -2


@wire_enum
class Errors(enum.IntEnum):
    """The error codes used on the controller/broker paths (reference §9.6)."""

    NONE = 0
    UNKNOWN_SERVER_ERROR = -1
    OFFSET_OUT_OF_RANGE = 1
    CORRUPT_MESSAGE = 2
    UNKNOWN_TOPIC_OR_PARTITION = 3
    LEADER_NOT_AVAILABLE = 5
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    BROKER_NOT_AVAILABLE = 8
    REPLICA_NOT_AVAILABLE = 9
    MESSAGE_TOO_LARGE = 10
    STALE_CONTROLLER_EPOCH = 11
    OFFSET_METADATA_TOO_LARGE = 12
    NETWORK_EXCEPTION = 13  # a verification's send failed (KIP-890's AddPartitionsToTxnManager, 3.6)
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    INVALID_TOPIC_EXCEPTION = 17
    RECORD_LIST_TOO_LARGE = 18
    NOT_ENOUGH_REPLICAS = 19
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
    INVALID_REQUIRED_ACKS = 21
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    INVALID_COMMIT_OFFSET_SIZE = 28
    TOPIC_AUTHORIZATION_FAILED = 29
    GROUP_AUTHORIZATION_FAILED = 30
    CLUSTER_AUTHORIZATION_FAILED = 31
    INVALID_TIMESTAMP = 32
    ILLEGAL_SASL_STATE = 34
    UNSUPPORTED_VERSION = 35
    TOPIC_ALREADY_EXISTS = 36
    INVALID_PARTITIONS = 37
    INVALID_REPLICATION_FACTOR = 38
    INVALID_REPLICA_ASSIGNMENT = 39
    INVALID_CONFIG = 40
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42
    UNSUPPORTED_FOR_MESSAGE_FORMAT = 43
    POLICY_VIOLATION = 44
    OUT_OF_ORDER_SEQUENCE_NUMBER = 45
    DUPLICATE_SEQUENCE_NUMBER = 46
    INVALID_PRODUCER_EPOCH = 47
    INVALID_TXN_STATE = 48
    INVALID_PRODUCER_ID_MAPPING = 49
    INVALID_TRANSACTION_TIMEOUT = 50
    CONCURRENT_TRANSACTIONS = 51
    TRANSACTION_COORDINATOR_FENCED = 52
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
    SECURITY_DISABLED = 54
    OPERATION_NOT_ATTEMPTED = 55
    KAFKA_STORAGE_ERROR = 56
    LOG_DIR_NOT_FOUND = 57
    UNKNOWN_PRODUCER_ID = 59
    REASSIGNMENT_IN_PROGRESS = 60
    DELEGATION_TOKEN_AUTH_DISABLED = 61
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED = 64
    NON_EMPTY_GROUP = 68
    GROUP_ID_NOT_FOUND = 69
    FETCH_SESSION_ID_NOT_FOUND = 70
    INVALID_FETCH_SESSION_EPOCH = 71
    LISTENER_NOT_FOUND = 72
    TOPIC_DELETION_DISABLED = 73
    FENCED_LEADER_EPOCH = 74
    UNKNOWN_LEADER_EPOCH = 75
    UNSUPPORTED_COMPRESSION_TYPE = 76
    STALE_BROKER_EPOCH = 77
    OFFSET_NOT_AVAILABLE = 78
    MEMBER_ID_REQUIRED = 79
    PREFERRED_LEADER_NOT_AVAILABLE = 80
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
    ELECTION_NOT_NEEDED = 84
    NO_REASSIGNMENT_IN_PROGRESS = 85
    GROUP_SUBSCRIBED_TO_TOPIC = 86
    INVALID_RECORD = 87
    UNSTABLE_OFFSET_COMMIT = 88
    INVALID_UPDATE_VERSION = 95
    BROKER_ID_NOT_REGISTERED = 102
    TRANSACTIONAL_ID_NOT_FOUND = 105  # DescribeTransactions (KIP-664, 3.0)


@message
@attrs.frozen(order=False, cache_hash=True)
class TopicPartition:
    topic: str
    partition: int

    # Hand-written ordering: sorted() over thousands of partitions is on every controller request path, and
    # attrs' generic comparison (type check + two tuple builds per call) cost ~7 % of a replay.
    def __lt__(self, other: TopicPartition) -> bool:
        return (self.topic, self.partition) < (other.topic, other.partition)

    def __le__(self, other: TopicPartition) -> bool:
        return (self.topic, self.partition) <= (other.topic, other.partition)

    def __gt__(self, other: TopicPartition) -> bool:
        return (self.topic, self.partition) > (other.topic, other.partition)

    def __ge__(self, other: TopicPartition) -> bool:
        return (self.topic, self.partition) >= (other.topic, other.partition)

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"

    @classmethod
    def parse(cls, text: str) -> TopicPartition:
        """Parse Kafka's ``topic-partition`` notation (topics may contain '-')."""
        topic, sep, part = text.rpartition("-")
        if not sep or not topic or not part.lstrip("-").isdigit():
            raise ValueError(f"not a topic-partition: {text!r} (expected TOPIC-PARTITION, e.g. orders-0)")
        return cls(topic, int(part))


# The wire decoders' TopicPartitions, one object per (topic, partition): a dict keyed by one finds another of the
# same value by identity, without TopicPartition.__eq__ (a follower's fetches name the same partitions every time)
_INTERNED: dict[tuple[str, int], TopicPartition] = {}
_INTERNED_MAX = 100_000  # entries; forgotten wholesale past this (topics come and go)


def wire_topic_partition(topic: str, partition: int) -> TopicPartition:
    """TopicPartition(topic, partition) for a decoder (``partition`` an int, as the codec reads it): the same object
    for the same value while it is remembered."""
    key = (topic, partition)
    tp = _INTERNED.get(key)
    if tp is None:
        if len(_INTERNED) >= _INTERNED_MAX:
            _INTERNED.clear()
        tp = _INTERNED[key] = TopicPartition(topic, partition)
    return tp


@message
@attrs.frozen(order=False, cache_hash=True)
class PartitionAndReplica:
    """kafka.controller.PartitionAndReplica: one replica of one partition."""

    topic_partition: TopicPartition
    replica: int

    # Hand-written, as TopicPartition's: a controlled shutdown sorts 5,000 of them per state change, and attrs'
    # generic comparison was a tenth of the controller's time there (py-spy).
    def sort_key(self) -> tuple[str, int, int]:
        tp = self.topic_partition
        return (tp.topic, tp.partition, self.replica)

    def __lt__(self, other: PartitionAndReplica) -> bool:
        return self.sort_key() < other.sort_key()

    def __le__(self, other: PartitionAndReplica) -> bool:
        return self.sort_key() <= other.sort_key()

    def __gt__(self, other: PartitionAndReplica) -> bool:
        return self.sort_key() > other.sort_key()

    def __ge__(self, other: PartitionAndReplica) -> bool:
        return self.sort_key() >= other.sort_key()

    def __str__(self) -> str:
        return f"[Topic={self.topic_partition.topic},Partition={self.topic_partition.partition},Replica={self.replica}]"


@message
class LeaderAndIsr:
    """kafka.api.LeaderAndIsr: leader, leader epoch, ISR and the state znode's version (zkVersion)."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int

    @classmethod
    def initial(cls, leader: int, isr: tuple[int, ...]) -> LeaderAndIsr:
        return cls(leader, INITIAL_LEADER_EPOCH, tuple(isr), INITIAL_ZK_VERSION)

    def new_leader(self, leader: int) -> LeaderAndIsr:
        """newLeader: epoch + 1, same ISR, zkVersion kept as the expected version of the write."""
        return LeaderAndIsr(leader, self.leader_epoch + 1, self.isr, self.zk_version)

    def new_leader_and_isr(self, leader: int, isr: tuple[int, ...]) -> LeaderAndIsr:
        return LeaderAndIsr(leader, self.leader_epoch + 1, tuple(isr), self.zk_version)

    def new_epoch_and_zk_version(self) -> LeaderAndIsr:
        """newEpochAndZkVersion: same leader and ISR, epoch + 1."""
        return LeaderAndIsr(self.leader, self.leader_epoch + 1, self.isr, self.zk_version)

    def with_zk_version(self, zk_version: int) -> LeaderAndIsr:
        """LeaderAndIsr.withZkVersion; built directly, not by attrs.evolve (~10 µs a call, and a controlled shutdown
        makes 10,000)."""
        return LeaderAndIsr(self.leader, self.leader_epoch, self.isr, zk_version)

@message
class LeaderIsrAndControllerEpoch:
    """kafka.controller.LeaderIsrAndControllerEpoch: a partition state znode's content plus its version."""

    leader_and_isr: LeaderAndIsr
    controller_epoch: int


@message
class ReplicaAssignment:
    """kafka.controller.ReplicaAssignment (KIP-455): replicas plus the adding / removing sets of a reassignment."""

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()

    @property
    def origin_replicas(self) -> tuple[int, ...]:
        return tuple(r for r in self.replicas if r not in self.adding_replicas)

    @property
    def target_replicas(self) -> tuple[int, ...]:
        return tuple(r for r in self.replicas if r not in self.removing_replicas)

    @property
    def is_being_reassigned(self) -> bool:
        return bool(self.adding_replicas) or bool(self.removing_replicas)

    def reassign_to(self, target: tuple[int, ...]) -> ReplicaAssignment:
        """reassignTo: full = distinct(target ++ origin); adding = full − origin; removing = full − target."""
        origin = self.origin_replicas
        full = tuple(dict.fromkeys((*target, *origin)))
        return ReplicaAssignment(
            full,
            tuple(r for r in full if r not in origin),
            tuple(r for r in full if r not in target),
        )

    def remove_replica(self, replica: int) -> ReplicaAssignment:
        return ReplicaAssignment(
            tuple(r for r in self.replicas if r != replica),
            tuple(r for r in self.adding_replicas if r != replica),
            tuple(r for r in self.removing_replicas if r != replica),
        )


@message
class EndPoint:
    """kafka.cluster.EndPoint: one listener of a broker."""

    host: str
    port: int
    listener_name: str = "PLAINTEXT"
    security_protocol: str = "PLAINTEXT"

    @property
    def connection_string(self) -> str:
        return f"{self.listener_name}://{self.host}:{self.port}"


@message
class Broker:
    """kafka.cluster.Broker as the controller caches it: id, endpoints, rack, and its epoch (czxid)."""

    id: int
    endpoints: tuple[EndPoint, ...]
    rack: str | None = None
    epoch: int = -1

    def endpoint(self, listener_name: str = "PLAINTEXT") -> EndPoint:
        for ep in self.endpoints:
            if ep.listener_name == listener_name:
                return ep
        raise KeyError(f"broker {self.id} has no listener {listener_name}")
