"""Kafka's ZooKeeper paths, named as the objects of ``kafka.zk.ZkData`` (Kafka 2.6) so they are found where expected.

Scala ``object XZNode { def path = ... }`` becomes a constant ``XZNode`` (fixed path) or a class with a static
``path(...)`` (parameterised path); parsers go the other way (a watched path back to its topic / partition / id).
"""

from __future__ import annotations

import re

from messages.common import TopicPartition

# -- fixed paths (ZkData.scala objects whose `path` takes no argument) ---------------------------------------------
ControllerZNode = "/controller"
ControllerEpochZNode = "/controller_epoch"
BrokersZNode = "/brokers"
BrokerIdsZNode = "/brokers/ids"
TopicsZNode = "/brokers/topics"
BrokerSequenceIdZNode = "/brokers/seqid"
AdminZNode = "/admin"
DeleteTopicsZNode = "/admin/delete_topics"
ReassignPartitionsZNode = "/admin/reassign_partitions"
PreferredReplicaElectionZNode = "/admin/preferred_replica_election"
IsrChangeNotificationZNode = "/isr_change_notification"
LogDirEventNotificationZNode = "/log_dir_event_notification"
ConfigZNode = "/config"
ConfigEntityChangeNotificationZNode = "/config/changes"
ClusterZNode = "/cluster"
ClusterIdZNode = "/cluster/id"
ConsumerPathZNode = "/consumers"
ProducerIdBlockZNode = "/latest_producer_id_block"

# Sequence prefixes (IsrChangeNotificationSequenceZNode.SequenceNumberPrefix etc.)
ISR_CHANGE_PREFIX = "isr_change_"
LOG_DIR_EVENT_PREFIX = "log_dir_event_"
CONFIG_CHANGE_PREFIX = "config_change_"

# ZkData.PersistentZkPaths: created empty at broker startup (KafkaZkClient.createTopLevelPaths), in Kafka's order.
PERSISTENT_ZK_PATHS: tuple[str, ...] = (
    ConsumerPathZNode,
    BrokerIdsZNode,
    TopicsZNode,
    ConfigEntityChangeNotificationZNode,
    DeleteTopicsZNode,
    BrokerSequenceIdZNode,
    IsrChangeNotificationZNode,
    ProducerIdBlockZNode,
    LogDirEventNotificationZNode,
    "/config/topics",
    "/config/clients",
    "/config/users",
    "/config/brokers",
    "/config/ips",
)


# -- parameterised paths ---------------------------------------------------------------------------------------------
class BrokerIdZNode:
    """BrokerIdZNode: /brokers/ids/<id> (ephemeral, the broker's registration)."""

    @staticmethod
    def path(broker_id: int) -> str:
        return f"{BrokerIdsZNode}/{broker_id}"


class TopicZNode:
    """TopicZNode: /brokers/topics/<topic> (the replica assignment)."""

    @staticmethod
    def path(topic: str) -> str:
        return f"{TopicsZNode}/{topic}"


class TopicPartitionsZNode:
    """TopicPartitionsZNode: /brokers/topics/<topic>/partitions."""

    @staticmethod
    def path(topic: str) -> str:
        return f"{TopicZNode.path(topic)}/partitions"


class TopicPartitionZNode:
    """TopicPartitionZNode: /brokers/topics/<topic>/partitions/<p>."""

    @staticmethod
    def path(tp: TopicPartition) -> str:
        return f"{TopicPartitionsZNode.path(tp.topic)}/{tp.partition}"


class TopicPartitionStateZNode:
    """TopicPartitionStateZNode: /brokers/topics/<topic>/partitions/<p>/state (leader, epoch, ISR)."""

    @staticmethod
    def path(tp: TopicPartition) -> str:
        return f"{TopicPartitionZNode.path(tp)}/state"


class DeleteTopicsTopicZNode:
    """DeleteTopicsTopicZNode: /admin/delete_topics/<topic> (a topic marked for deletion)."""

    @staticmethod
    def path(topic: str) -> str:
        return f"{DeleteTopicsZNode}/{topic}"


class IsrChangeNotificationSequenceZNode:
    """IsrChangeNotificationSequenceZNode: /isr_change_notification/isr_change_<seq>."""

    SequenceNumberPrefix = ISR_CHANGE_PREFIX

    @staticmethod
    def path(sequence_number: str = "") -> str:
        """With no sequence number this is the prefix to create a PERSISTENT_SEQUENTIAL node with."""
        return f"{IsrChangeNotificationZNode}/{ISR_CHANGE_PREFIX}{sequence_number}"

    @staticmethod
    def sequence_number(path: str) -> str:
        return sequence_number(path, ISR_CHANGE_PREFIX)


class LogDirEventNotificationSequenceZNode:
    """LogDirEventNotificationSequenceZNode: /log_dir_event_notification/log_dir_event_<seq>."""

    SequenceNumberPrefix = LOG_DIR_EVENT_PREFIX
    LogDirFailureEvent = 1

    @staticmethod
    def path(sequence_number: str = "") -> str:
        return f"{LogDirEventNotificationZNode}/{LOG_DIR_EVENT_PREFIX}{sequence_number}"

    @staticmethod
    def sequence_number(path: str) -> str:
        return sequence_number(path, LOG_DIR_EVENT_PREFIX)


class ConfigEntityTypeZNode:
    """ConfigEntityTypeZNode: /config/<entityType> (topics, clients, users, brokers, ips)."""

    @staticmethod
    def path(entity_type: str) -> str:
        return f"{ConfigZNode}/{entity_type}"


class ConfigEntityZNode:
    """ConfigEntityZNode: /config/<entityType>/<entityName>."""

    @staticmethod
    def path(entity_type: str, entity_name: str) -> str:
        return f"{ConfigEntityTypeZNode.path(entity_type)}/{entity_name}"


class UserClientIdQuotaEntity:
    """The entity name of a <user, client-id> quota under /config/users (ConfigType.User with ConfigType.Client as
    its child type, as AdminZkClient.fetchAllChildEntityConfigs and UserConfigHandler read it):
    ``<sanitized user>/clients/<sanitized client-id>``."""

    CHILD_TYPE = "clients"  # ConfigType.Client

    @staticmethod
    def name(sanitized_user: str, sanitized_client_id: str) -> str:
        return f"{sanitized_user}/{UserClientIdQuotaEntity.CHILD_TYPE}/{sanitized_client_id}"

    @staticmethod
    def children_type(sanitized_user: str) -> str:
        """The "entity type" whose entities are the user's client ids: /config/users/<user>/clients."""
        return f"users/{sanitized_user}/{UserClientIdQuotaEntity.CHILD_TYPE}"

    @staticmethod
    def parse(name: str) -> tuple[str, str | None] | None:
        """(user, client id) of a /config/users entity name (``<user>`` or ``<user>/clients/<client-id>``); None
        for any other shape (UserConfigHandler's "Invalid quota entity path")."""
        parts = name.split("/")
        if len(parts) == 1:
            return parts[0], None
        if len(parts) == 3 and parts[1] == UserClientIdQuotaEntity.CHILD_TYPE:
            return parts[0], parts[2]
        return None


class ConfigEntityChangeNotificationSequenceZNode:
    """ConfigEntityChangeNotificationSequenceZNode: /config/changes/config_change_<seq>."""

    SequenceNumberPrefix = CONFIG_CHANGE_PREFIX

    @staticmethod
    def create_path() -> str:
        return f"{ConfigEntityChangeNotificationZNode}/{CONFIG_CHANGE_PREFIX}"


# -- ACLs (ZkData.scala's ZkAclStore / ZkAclChangeStore, AclAuthorizer's storage) ----------------------------------
LiteralAclZNode = "/kafka-acl"  # LiteralAclStore.aclPath
ExtendedAclZNode = "/kafka-acl-extended"
LiteralAclChangeZNode = "/kafka-acl-changes"  # LiteralAclChangeStore.aclChangePath
ExtendedAclChangeZNode = "/kafka-acl-extended-changes"  # ExtendedAclChangeStore.aclChangePath
ACL_CHANGE_PREFIX = "acl_changes_"  # ZkAclChangeStore.SequenceNumberPrefix


class ZkAclStore:
    """ZkAclStore for a specific pattern type, named as PatternType's constant (``LITERAL``, ``PREFIXED``): LITERAL
    ACLs live under /kafka-acl, the others under /kafka-acl-extended/<pattern type in lower case>; a resource's node
    is ``<store>/<ResourceType in Pascal case>/<name>``. Its change notifications go to /kafka-acl-changes (LITERAL)
    or /kafka-acl-extended-changes."""

    @staticmethod
    def acl_path(pattern_type: str) -> str:
        return LiteralAclZNode if pattern_type == "LITERAL" else f"{ExtendedAclZNode}/{pattern_type.lower()}"

    @staticmethod
    def path(pattern_type: str, resource_type: str, name: str | None = None) -> str:
        """ZkAclStore.path(resourceType) or path(resourceType, resourceName) (ResourceZNode.path)."""
        base = f"{ZkAclStore.acl_path(pattern_type)}/{resource_type}"
        return base if name is None else f"{base}/{name}"

    @staticmethod
    def change_path(pattern_type: str) -> str:
        """The aclChangePath of the store's ZkAclChangeStore."""
        return LiteralAclChangeZNode if pattern_type == "LITERAL" else ExtendedAclChangeZNode

    @staticmethod
    def change_create_path(pattern_type: str) -> str:
        """ZkAclChangeStore.createPath: the prefix of a persistent-sequential acl_changes_<seq> node."""
        return f"{ZkAclStore.change_path(pattern_type)}/{ACL_CHANGE_PREFIX}"


# -- znode ACLs (ZkData.sensitivePath / ZkData.defaultAcls) --------------------------------------------------------
DelegationTokensZNode = "/delegation_token/tokens"  # DelegationTokensZNode (kactor writes none; the path stays closed)

# ZkData.SensitiveRootPaths: what lies under these is credentials (SCRAM users, broker passwords, tokens), so a
# secure znode there is not world-readable either.
SENSITIVE_ROOT_PATHS: tuple[str, ...] = (
    ConfigEntityTypeZNode.path("users"),  # ConfigType.User
    ConfigEntityTypeZNode.path("brokers"),  # ConfigType.Broker
    DelegationTokensZNode,
)

# A znode ACL entry as ZooKeeper's org.apache.zookeeper.data.ACL: (perms, scheme, id); ZooDefs.Perms bits.
ZnodeAcl = tuple[int, str, str]
PERMS_READ = 1
PERMS_ALL = 31  # READ | WRITE | CREATE | DELETE | ADMIN
OPEN_ACL_UNSAFE: tuple[ZnodeAcl, ...] = ((PERMS_ALL, "world", "anyone"),)  # ZooDefs.Ids.OPEN_ACL_UNSAFE
# ZooDefs.Ids.CREATOR_ALL_ACL: ZooKeeper replaces ("auth", "") with the creating session's authenticated ids (the
# brokers' SASL user, sasl:<username>, as in Kafka; kactor's digest user, digest:<user>:<hash>; both when the session
# has both logins), so only those identities may write, create children, delete or change the ACL.
CREATOR_ALL_ACL: tuple[ZnodeAcl, ...] = ((PERMS_ALL, "auth", ""),)
READ_ACL_UNSAFE: tuple[ZnodeAcl, ...] = ((PERMS_READ, "world", "anyone"),)  # ZooDefs.Ids.READ_ACL_UNSAFE


def sensitive_path(path: str) -> bool:
    """ZkData.sensitivePath: under one of SENSITIVE_ROOT_PATHS (Kafka's plain prefix test, kept as it is)."""
    return any(path.startswith(root) for root in SENSITIVE_ROOT_PATHS)


def default_acls(is_secure: bool, path: str) -> tuple[ZnodeAcl, ...]:
    """ZkData.defaultAcls: the ACL a znode at ``path`` is created with. A secure client (zookeeper.set.acl=true)
    gives its own identity every right and the world read, except on sensitive paths; the old consumers' path stays
    open (other clients write under it), as does every znode of a client that is not secure."""
    if not is_secure or path == ConsumerPathZNode:
        return OPEN_ACL_UNSAFE
    return CREATOR_ALL_ACL if sensitive_path(path) else CREATOR_ALL_ACL + READ_ACL_UNSAFE


# -- parsers ---------------------------------------------------------------------------------------------------------
_STATE_RE = re.compile(r"^/brokers/topics/([^/]+)/partitions/(\d+)/state$")
_TOPIC_RE = re.compile(r"^/brokers/topics/([^/]+)$")
_BROKER_RE = re.compile(r"^/brokers/ids/(\d+)$")
_DELETE_RE = re.compile(r"^/admin/delete_topics/([^/]+)$")


def sequence_number(path: str, prefix: str) -> str:
    """The ``0000000042`` suffix of a sequential node, as Kafka's ``sequenceNumber(path)`` (text after the prefix)."""
    i = path.rfind(prefix)
    if i < 0:
        raise ValueError(f"{path!r} is not a {prefix}<seq> node")
    return path[i + len(prefix):]


def topic_partition_from_state_path(path: str) -> TopicPartition:
    """/brokers/topics/<t>/partitions/<p>/state → TopicPartition(t, p)."""
    m = _STATE_RE.match(path)
    if m is None:
        raise ValueError(f"not a partition state path: {path!r}")
    return TopicPartition(m.group(1), int(m.group(2)))


def topic_from_path(path: str) -> str:
    """/brokers/topics/<t> → t (the node PartitionModifications watches)."""
    m = _TOPIC_RE.match(path)
    if m is None:
        raise ValueError(f"not a topic path: {path!r}")
    return m.group(1)


def broker_id_from_path(path: str) -> int:
    """/brokers/ids/<id> → id (the node BrokerModifications watches)."""
    m = _BROKER_RE.match(path)
    if m is None:
        raise ValueError(f"not a broker registration path: {path!r}")
    return int(m.group(1))


def parent(path: str) -> str:
    """The parent of an absolute znode path ('/' for a top-level node)."""
    head = path.rstrip("/").rpartition("/")[0]
    return head or "/"
