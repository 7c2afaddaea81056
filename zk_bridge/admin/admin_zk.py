"""The subset of Kafka 2.6's ``kafka.zk.AdminZkClient`` (and the ``KafkaZkClient`` reads behind it) that the admin
tools use, over a synchronous kazoo client.

Every refusal is decided from reads before the first write, so a refused command leaves ZooKeeper unchanged. Where
Kafka writes two znodes non-transactionally (topic config, then topic assignment; config, then change
notification) this writes them in one ZooKeeper transaction: same end state, no half-written topic on a race.
The writes are core.zk_client.KafkaZkClient's procedures, the brokers' own, run synchronously (zk_bridge.blocking);
a failed write raises kazoo's exception for its result code, as a kazoo call would. Payloads go through
`protocol.zk.znodes`, byte-compatible with Kafka's ``ZkData``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import (
    BadVersionError,
    ConnectionLoss,
    KazooException,
    NoAuthError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    SessionExpiredError,
    ZookeeperError,
)
from kazoo.protocol.states import ZnodeStat

from core.broker import log_config
from core.controller.errors import KeeperError
from core.effects import Proc
from core.quota import quota_configs
from core.zk_client import KafkaZkClient
from messages.common import Broker, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from messages.zk import (
    BADVERSION,
    CONNECTIONLOSS,
    NOAUTH,
    NODEEXISTS,
    NONODE,
    NOTEMPTY,
    OK,
    RUNTIMEINCONSISTENCY,
    SESSIONEXPIRED,
    ZkOpResult,
)
from protocol.zk import paths, znodes
from zk_bridge.admin import (
    AdminOperationException,
    IllegalArgumentException,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidTopicException,
    TopicAlreadyMarkedForDeletionException,
    TopicExistsException,
    UnknownTopicOrPartitionException,
    ZooKeeperUnreachable,
    topic_name,
)
from zk_bridge.admin.assignment import BrokerMetadata, assign_replicas_to_brokers, validate_replica_assignment
from zk_bridge.blocking import BlockingZk

R = TypeVar("R")
DEFAULT_CONNECT_TIMEOUT_S = 5.0
SESSION_TIMEOUT_S = 10.0
RACK_AWARE_ENFORCED = "enforced"
RACK_AWARE_DISABLED = "disabled"
RACK_AWARE_SAFE = "safe"
TOPIC_CONFIG_TYPE = "topics"  # ConfigType.Topic
BROKER_CONFIG_TYPE = "brokers"  # ConfigType.Broker
CLIENT_CONFIG_TYPE = "clients"  # ConfigType.Client
USER_CONFIG_TYPE = "users"  # ConfigType.User
DEFAULT_ENTITY = "<default>"  # ConfigEntityName.Default


def _sasl_options(zk: KazooClient) -> dict[str, str] | None:
    """The SASL options ``zk`` was made with (kazoo keeps them on its connection), for a second session as the same
    identity; None without SASL."""
    options = getattr(zk._connection, "sasl_options", None)  # kazoo has no public accessor
    return dict(options) if options else None


class AdminZkClient:
    """kafka.zk.AdminZkClient (+ the KafkaZkClient reads it relies on) over a started kazoo client.

    Writes, and the reads whose KafkaZkClient procedure behaves as the tools need, run core.zk_client's procedures.
    The reads left here decode strictly: a malformed znode stops the command with a clear message (ZnodeDecodeError),
    where the controller's procedures log it and go on serving."""

    def __init__(self, zk: KazooClient) -> None:
        self.zk = zk

    def ensure_chroot(self) -> None:
        """Create the session's chroot if it is missing, as a broker does at start-up
        (KafkaServer.createChrootIfNecessary; with the session's login and ACLs), so that what is written before the
        first broker starts — the inter-broker SCRAM user, as Kafka's docs bootstrap SASL — lands where the brokers
        will read it. (Kafka's ConfigCommand fails there with a NoNode for the chroot.)"""
        chroot = self.zk.chroot
        if not chroot or self.zk.exists("/") is not None:
            return
        root = KazooClient(hosts=",".join(f"{host}:{port}" for host, port in self.zk.hosts),
                           timeout=SESSION_TIMEOUT_S, auth_data=list(self.zk.auth_data),
                           default_acl=self.zk.default_acl, sasl_options=_sasl_options(self.zk))
        root.start(timeout=DEFAULT_CONNECT_TIMEOUT_S)
        try:
            root.ensure_path(chroot)
        finally:
            root.stop()
            root.close()

    def _run(self, proc: Proc[R]) -> R:
        """Run a KafkaZkClient procedure; its failure raises kazoo's exception for the result code."""
        try:
            with BlockingZk(self.zk) as b:
                r = b.run(proc)
        except KeeperError as e:
            raise _kazoo_error(e.code, e.path) from None
        except TimeoutError as e:
            raise ZooKeeperUnreachable(f"ZooKeeper did not answer: {e}") from None
        return r

    # -- raw helpers -----------------------------------------------------------------------------------------------
    def get_data(self, path: str) -> tuple[str | None, ZnodeStat | None]:
        """(data as text or None, stat); (None, None) if the node does not exist."""
        try:
            data, stat = self.zk.get(path)
        except NoNodeError:
            return None, None
        return (None if data is None else data.decode("utf-8")), stat

    def get_children(self, path: str) -> list[str]:
        """Children of ``path`` (sorted); [] if it does not exist."""
        try:
            return sorted(self.zk.get_children(path))
        except NoNodeError:
            return []

    def exists(self, path: str) -> bool:
        return self.zk.exists(path) is not None

    # -- brokers ---------------------------------------------------------------------------------------------------
    def get_all_brokers_in_cluster(self) -> list[Broker]:
        """KafkaZkClient.getAllBrokersInCluster: registered brokers sorted by id; epoch = czxid of the registration."""
        brokers: list[Broker] = []
        for child in self.get_children(paths.BrokerIdsZNode):
            if not child.isdigit():
                continue
            data, stat = self.get_data(paths.BrokerIdZNode.path(int(child)))
            if stat is None:  # went away between listing and reading
                continue
            brokers.append(znodes.decode_broker(int(child), data, epoch=stat.czxid))
        return sorted(brokers, key=lambda b: b.id)

    def get_sorted_broker_list(self) -> list[int]:
        """KafkaZkClient.getSortedBrokerList."""
        return self._run(KafkaZkClient().get_sorted_broker_list())

    def get_broker_metadatas(self, rack_aware_mode: str = RACK_AWARE_ENFORCED,
                             broker_list: Sequence[int] | None = None) -> list[BrokerMetadata]:
        """AdminZkClient.getBrokerMetadatas: registered brokers (optionally only those in ``broker_list``),
        sorted by id, with racks unless rack awareness is disabled."""
        brokers = self.get_all_brokers_in_cluster()
        if broker_list is not None:
            wanted = set(broker_list)
            brokers = [b for b in brokers if b.id in wanted]
        with_rack = [b for b in brokers if b.rack is not None]
        if rack_aware_mode == RACK_AWARE_ENFORCED and with_rack and len(with_rack) < len(brokers):
            raise AdminOperationException("Not all brokers have rack information. Add --disable-rack-aware in "
                                          "command line to make replica assignment without rack information.")
        drop_racks = rack_aware_mode == RACK_AWARE_DISABLED or (
            rack_aware_mode == RACK_AWARE_SAFE and len(with_rack) < len(brokers))
        return sorted(BrokerMetadata(b.id, None if drop_racks else b.rack) for b in brokers)

    # -- controller ------------------------------------------------------------------------------------------------
    def get_controller_id(self) -> int | None:
        """KafkaZkClient.getControllerId."""
        data, _ = self.get_data(paths.ControllerZNode)
        return znodes.decode_controller(data) if data is not None else None

    def get_controller_epoch(self) -> tuple[int, int] | None:
        """KafkaZkClient.getControllerEpoch: (epoch, zkVersion of /controller_epoch), or None."""
        return self._run(KafkaZkClient().get_controller_epoch())

    # -- topics ----------------------------------------------------------------------------------------------------
    def get_all_topics_in_cluster(self) -> list[str]:
        """KafkaZkClient.getAllTopicsInCluster (sorted)."""
        return self._run(KafkaZkClient().get_all_topics_in_cluster())

    def topic_exists(self, topic: str) -> bool:
        """KafkaZkClient.topicExists."""
        return self.exists(paths.TopicZNode.path(topic))

    def get_full_replica_assignment(self, topic: str) -> dict[int, ReplicaAssignment]:
        """KafkaZkClient.getFullReplicaAssignmentForTopics for one topic: partition id → ReplicaAssignment
        ({} if the topic does not exist)."""
        data, _ = self.get_data(paths.TopicZNode.path(topic))
        decoded = znodes.decode_topic_assignment(topic, data)
        return {tp.partition: ra for tp, ra in sorted(decoded.items())}

    def get_replica_assignment_for_topics(self, topics: Sequence[str] | set[str]) -> dict[TopicPartition, list[int]]:
        """KafkaZkClient.getReplicaAssignmentForTopics: partition → replicas, for the topics that exist."""
        result: dict[TopicPartition, list[int]] = {}
        for topic in sorted(set(topics)):
            for p, ra in self.get_full_replica_assignment(topic).items():
                result[TopicPartition(topic, p)] = list(ra.replicas)
        return result

    def get_all_partitions(self) -> set[TopicPartition]:
        """KafkaZkClient.getAllPartitions."""
        return set(self.get_replica_assignment_for_topics(self.get_all_topics_in_cluster()))

    def get_topic_partition_state(self, tp: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        """KafkaZkClient.getTopicPartitionState: the state znode (leader, epoch, ISR), None if absent."""
        path = paths.TopicPartitionStateZNode.path(tp)
        data, stat = self.get_data(path)
        if stat is None:
            return None
        return znodes.decode_partition_state(data, stat.version, path)

    def is_topic_marked_for_deletion(self, topic: str) -> bool:
        """KafkaZkClient.isTopicMarkedForDeletion."""
        return self.exists(paths.DeleteTopicsTopicZNode.path(topic))

    def get_topic_deletions(self) -> list[str]:
        """KafkaZkClient.getTopicDeletions."""
        return self._run(KafkaZkClient().get_topic_deletions())

    def fetch_topic_config(self, topic: str) -> dict[str, str]:
        """AdminZkClient.fetchEntityConfig(ConfigType.Topic, topic)."""
        return self.fetch_entity_config(TOPIC_CONFIG_TYPE, topic)

    def fetch_entity_config(self, entity_type: str, entity_name: str) -> dict[str, str]:
        """AdminZkClient.fetchEntityConfig: /config/<type>/<name> ({} if absent)."""
        path = paths.ConfigEntityZNode.path(entity_type, entity_name)
        data, _ = self.get_data(path)
        return znodes.decode_config_entity(data, path)

    def get_all_entities_with_config(self, entity_type: str) -> list[str]:
        """KafkaZkClient.getAllEntitiesWithConfig: the children of /config/<type> (sorted)."""
        return self.get_children(paths.ConfigEntityTypeZNode.path(entity_type))

    # -- admin znodes ----------------------------------------------------------------------------------------------
    def get_partition_reassignment(self) -> dict[TopicPartition, tuple[int, ...]]:
        """KafkaZkClient.getPartitionReassignment: {} if absent or unparsable (Kafka logs and treats it as empty)."""
        data, _ = self.get_data(paths.ReassignPartitionsZNode)
        try:
            return znodes.decode_reassign_partitions(data)
        except znodes.ZnodeDecodeError:
            return {}

    def reassign_partitions_in_progress(self) -> bool:
        """KafkaZkClient.reassignPartitionsInProgress: the legacy znode exists."""
        return self.exists(paths.ReassignPartitionsZNode)

    def get_preferred_replica_election(self) -> set[TopicPartition]:
        """KafkaZkClient.getPreferredReplicaElection (invalid JSON → empty)."""
        return self._run(KafkaZkClient().get_preferred_replica_election())

    # -- topic creation --------------------------------------------------------------------------------------------
    def validate_topic_create(self, topic: str, assignment: Mapping[int, Sequence[int]],
                              config: Mapping[str, str]) -> None:
        """AdminZkClient.validateTopicCreate (name, existence, '.'/'_' collisions, assignment shape, configs)."""
        topic_name.validate(topic)
        if self.topic_exists(topic):
            raise TopicExistsException(f"Topic '{topic}' already exists.")
        if topic_name.has_collision_chars(topic):
            all_topics = self.get_all_topics_in_cluster()
            if topic in all_topics:
                raise TopicExistsException(f"Topic '{topic}' already exists.")
            colliding = [t for t in all_topics if topic_name.has_collision(topic, t)]
            if colliding:
                raise InvalidTopicException(f"Topic '{topic}' collides with existing topics: {', '.join(colliding)}")
        if len({len(r) for r in assignment.values()}) != 1:
            raise InvalidReplicaAssignmentException("All partitions should have the same number of replicas")
        for replicas in assignment.values():
            if len(replicas) != len(set(replicas)):
                raise InvalidReplicaAssignmentException(
                    f"Duplicate replica assignment found: {_fmt_assignment(assignment)}")
        n = len(assignment)
        if sum(p for p in assignment if p >= 0) != n * (n - 1) // 2 or any(p < 0 for p in assignment):
            raise InvalidReplicaAssignmentException("partitions should be a consecutive 0-based integer sequence")
        log_config.validate(dict(config))

    def create_topic(self, topic: str, partitions: int, replication_factor: int,
                     config: Mapping[str, str] | None = None, rack_aware_mode: str = RACK_AWARE_ENFORCED,
                     fixed_start_index: int = -1, replica_shift: int | None = None) -> dict[int, list[int]]:
        """AdminZkClient.createTopic: place replicas on the registered brokers, then createTopicWithAssignment."""
        brokers = self.get_broker_metadatas(rack_aware_mode)
        assignment = assign_replicas_to_brokers(brokers, partitions, replication_factor, fixed_start_index,
                                                replica_shift=replica_shift)
        self.create_topic_with_assignment(topic, config or {}, assignment)
        return assignment

    def create_topic_with_assignment(self, topic: str, config: Mapping[str, str],
                                     assignment: Mapping[int, Sequence[int]], validate: bool = True) -> None:
        """AdminZkClient.createTopicWithAssignment: /config/topics/<t> (set or create), then /brokers/topics/<t>
        (version 2, empty adding/removing maps); here both in one transaction."""
        if validate:
            self.validate_topic_create(topic, assignment, config)
        kzk = KafkaZkClient()
        self._run(kzk.create_parents(paths.ConfigEntityTypeZNode.path(TOPIC_CONFIG_TYPE), paths.TopicsZNode))
        r = self._run(kzk.create_topic_assignment_with_config(
            topic, {TopicPartition(topic, p): ReplicaAssignment(tuple(r)) for p, r in assignment.items()}, config,
            self.exists(paths.ConfigEntityZNode.path(TOPIC_CONFIG_TYPE, topic))))
        if r is not None and any(inner.code == NODEEXISTS for inner in r.results or ()):
            raise TopicExistsException(f"Topic '{topic}' already exists.")
        _raise_transaction_failure(r)

    def change_topic_config(self, topic: str, config: Mapping[str, str]) -> None:
        """AdminZkClient.changeTopicConfig: validateTopicConfig (legal name, existing topic, LogConfig.validate),
        then changeEntityConfig."""
        topic_name.validate(topic)
        if not self.topic_exists(topic):
            raise AdminOperationException(f"Topic \"{topic}\" does not exist.")
        log_config.validate(dict(config))
        self._change_entity_config(TOPIC_CONFIG_TYPE, topic, config)

    def change_broker_config(self, broker: int | None, config: Mapping[str, str]) -> None:
        """AdminZkClient.changeBrokerConfig(Option[Int]): DynamicConfig.Broker.validate, then changeEntityConfig
        on /config/brokers/<id>, or /config/brokers/<default> for None."""
        from zk_bridge.admin.dynamic_broker_config import validate_config_types

        validate_config_types(config)
        self._change_entity_config(BROKER_CONFIG_TYPE, DEFAULT_ENTITY if broker is None else str(broker), config)

    def change_configs(self, entity_type: str, entity_name: str, config: Mapping[str, str]) -> None:
        """AdminZkClient.changeConfigs for the entity types kactor has (topics, clients, users, brokers)."""
        if entity_type == TOPIC_CONFIG_TYPE:
            self.change_topic_config(entity_name, config)
        elif entity_type == CLIENT_CONFIG_TYPE:
            self.change_client_id_config(entity_name, config)
        elif entity_type == USER_CONFIG_TYPE:
            self.change_user_or_user_client_id_config(entity_name, config)
        elif entity_type == BROKER_CONFIG_TYPE:
            self.change_broker_config(parse_broker(entity_name), config)
        else:
            raise IllegalArgumentException(f"{entity_type} is not a known entityType. Should be one of "
                                           f"{TOPIC_CONFIG_TYPE}, {CLIENT_CONFIG_TYPE}, {BROKER_CONFIG_TYPE}")

    # -- client quotas (the admin_quotas module decides; these are AdminZkClient's writes and reads for it) ----------
    def change_client_id_config(self, sanitized_client_id: str, config: Mapping[str, str]) -> None:
        """AdminZkClient.changeClientIdConfig: DynamicConfig.Client.validate, then /config/clients/<client-id>."""
        _validate_quota_config(config, user=False)
        self._change_entity_config(CLIENT_CONFIG_TYPE, sanitized_client_id, config)

    def change_user_or_user_client_id_config(self, sanitized_entity_name: str, config: Mapping[str, str]) -> None:
        """AdminZkClient.changeUserOrUserClientIdConfig: /config/users/<user> (DynamicConfig.User.validate) or
        /config/users/<user>/clients/<client-id> and the <default> user (DynamicConfig.Client.validate)."""
        _validate_quota_config(config, user=not (sanitized_entity_name == DEFAULT_ENTITY
                                                or "/clients" in sanitized_entity_name))
        self._change_entity_config(USER_CONFIG_TYPE, sanitized_entity_name, config)

    def fetch_all_entity_configs(self, entity_type: str) -> dict[str, dict[str, str]]:
        """AdminZkClient.fetchAllEntityConfigs: every /config/<type>/<name>'s config, by name."""
        return {name: self.fetch_entity_config(entity_type, name)
                for name in self.get_all_entities_with_config(entity_type)}

    def fetch_all_child_entity_configs(self, root_type: str, child_type: str) -> dict[str, dict[str, str]]:
        """AdminZkClient.fetchAllChildEntityConfigs: /config/<root>/<name>/<child>/<child name>'s configs, by
        "<name>/<child>/<child name>" (the <user, client-id> quotas)."""
        out: dict[str, dict[str, str]] = {}
        for name in self.get_all_entities_with_config(root_type):
            for child in self.get_all_entities_with_config(f"{root_type}/{name}/{child_type}"):
                path = f"{name}/{child_type}/{child}"
                out[path] = self.fetch_entity_config(root_type, path)
        return out

    def _change_entity_config(self, entity_type: str, entity_name: str, config: Mapping[str, str]) -> None:
        """AdminZkClient.changeEntityConfig: setOrCreateEntityConfigs (/config/<type>/<name> =
        ``{"version":1,"config":{...}}``), then createConfigChangeNotification (a persistent sequential
        /config/changes/config_change_<seq> = ``{"version":2,"entity_path":"<type>/<name>"}``); here in one
        transaction."""
        self.ensure_chroot()
        kzk = KafkaZkClient()
        # the entity's parent: /config/<type>, or /config/users/<user>/clients for a <user, client-id> quota
        parent = paths.ConfigEntityZNode.path(entity_type, entity_name).rsplit("/", 1)[0]
        self._run(kzk.create_parents(parent, paths.ConfigEntityChangeNotificationZNode))
        _raise_transaction_failure(self._run(kzk.change_entity_config(
            entity_type, entity_name, config, self.exists(paths.ConfigEntityZNode.path(entity_type, entity_name)))))

    # -- partitions ------------------------------------------------------------------------------------------------
    def create_new_partitions_assignment(self, topic: str, existing: Mapping[int, ReplicaAssignment],
                                         all_brokers: Sequence[BrokerMetadata], num_partitions: int,
                                         replica_assignment: Mapping[int, Sequence[int]] | None = None,
                                         replica_shift: int | None = None) -> dict[int, list[int]]:
        """AdminZkClient.createNewPartitionsAssignment: validate and place the partitions to add."""
        if 0 not in existing:
            raise AdminOperationException(f"Unexpected existing replica assignment for topic '{topic}', "
                                          f"partition id 0 is missing. Assignment: {dict(existing)}")
        partition0 = existing[0].replicas
        to_add = num_partitions - len(existing)
        if to_add <= 0:
            raise InvalidPartitionsException(
                f"The number of partitions for a topic can only be increased. Topic {topic} currently has "
                f"{len(existing)} partitions, {num_partitions} would not be an increase.")
        if replica_assignment:
            validate_replica_assignment(replica_assignment, len(partition0), {b.id for b in all_brokers})
            return {p: list(r) for p, r in replica_assignment.items()}
        start_index = next((i for i, b in enumerate(all_brokers) if b.id >= partition0[0]), 0)
        return assign_replicas_to_brokers(all_brokers, to_add, len(partition0), start_index, len(existing),
                                          replica_shift=replica_shift)

    def add_partitions(self, topic: str, existing: Mapping[int, ReplicaAssignment],
                       all_brokers: Sequence[BrokerMetadata], num_partitions: int,
                       replica_assignment: Mapping[int, Sequence[int]] | None = None,
                       validate_only: bool = False, replica_shift: int | None = None) -> dict[int, list[int]]:
        """AdminZkClient.addPartitions: the new partitions' assignment merged into /brokers/topics/<t>.

        Departs from Kafka 2.6 (an unconditional write of ``existing`` + the new partitions): the write is conditional
        on the version of the assignment it is merged into, and the existing partitions are written as that read
        found them. A reassignment the controller wrote after the caller read ``existing`` (its adding/removing
        replicas) is kept, not clobbered (kactor chaos seed 43: the topic znode lost a running reassignment's replica
        set, leaving an ISR member outside the replicas); a change of the partitions themselves fails clearly."""
        path = paths.TopicZNode.path(topic)
        data, stat = self.get_data(path)
        new = self.create_new_partitions_assignment(topic, existing, all_brokers, num_partitions,
                                                    replica_assignment, replica_shift)
        current = {tp.partition: ra for tp, ra in znodes.decode_topic_assignment(topic, data).items()} \
            if data is not None else dict(existing)
        if set(current) != set(existing):
            raise AdminOperationException(f"The partitions of topic '{topic}' changed while adding partitions "
                                          f"({len(existing)} -> {len(current)}); nothing was written, try again")
        combined = {TopicPartition(topic, p): ra for p, ra in current.items()}
        combined.update({TopicPartition(topic, p): ReplicaAssignment(tuple(r)) for p, r in new.items()})
        if not validate_only:
            if stat is None:
                raise UnknownTopicOrPartitionException(f"Topic '{topic}' does not exist")
            _raise_for(self._run(KafkaZkClient().set_topic_assignment(topic, combined, stat.version)), path)
        return {tp.partition: list(ra.replicas) for tp, ra in sorted(combined.items())}

    # -- deletion --------------------------------------------------------------------------------------------------
    def delete_topic(self, topic: str) -> None:
        """AdminZkClient.deleteTopic: create /admin/delete_topics/<t> (no data)."""
        if not self.topic_exists(topic):
            raise UnknownTopicOrPartitionException(f"Topic `{topic}` to delete does not exist")
        kzk = KafkaZkClient()
        self._run(kzk.create_parents(paths.DeleteTopicsZNode))
        r = self._run(kzk.create_delete_topic_path(topic))
        if r is not None and r.code == NODEEXISTS:
            raise TopicAlreadyMarkedForDeletionException(f"Topic {topic} is already marked for deletion.")
        _raise_for(r, paths.DeleteTopicsTopicZNode.path(topic))

    # -- reassignment / election znodes ----------------------------------------------------------------------------
    def create_partition_reassignment(self, reassignment: Mapping[TopicPartition, Sequence[int]]) -> None:
        """KafkaZkClient.createPartitionReassignment: create /admin/reassign_partitions (fails if it exists)."""
        kzk = KafkaZkClient()
        self._run(kzk.create_parents(paths.AdminZNode))
        _raise_for(self._run(kzk.create_partition_reassignment(reassignment)), paths.ReassignPartitionsZNode)

    def create_preferred_replica_election(self, partitions: set[TopicPartition]) -> None:
        """KafkaZkClient.createPreferredReplicaElection: raises kazoo's NodeExistsError if one is pending."""
        kzk = KafkaZkClient()
        self._run(kzk.create_parents(paths.AdminZNode))
        _raise_for(self._run(kzk.create_preferred_replica_election(partitions)), paths.PreferredReplicaElectionZNode)


def _validate_quota_config(config: Mapping[str, str], user: bool) -> None:
    try:
        quota_configs.validate(config, user)
    except ValueError as e:
        raise IllegalArgumentException(str(e)) from None


def parse_broker(broker: str) -> int | None:
    """AdminZkClient.parseBroker: None for ``<default>``, else the broker id."""
    if broker == DEFAULT_ENTITY:
        return None
    try:
        return int(broker)
    except ValueError:
        raise IllegalArgumentException(f"Error parsing broker {broker}. The broker's Entity Name must be a single "
                                       "integer value") from None


def _fmt_assignment(assignment: Mapping[int, Sequence[int]]) -> str:
    """Scala's Map.toString of an assignment: ``Map(0 -> List(1, 2))``."""
    inner = ", ".join(f"{p} -> List({', '.join(map(str, r))})" for p, r in sorted(assignment.items()))
    return f"Map({inner})"


_KAZOO_ERRORS: dict[str, type[ZookeeperError]] = {
    NOAUTH: NoAuthError, NONODE: NoNodeError, NODEEXISTS: NodeExistsError, BADVERSION: BadVersionError,
    NOTEMPTY: NotEmptyError, CONNECTIONLOSS: ConnectionLoss, SESSIONEXPIRED: SessionExpiredError,
}


def _kazoo_error(code: str, path: str | None) -> KazooException:
    """kazoo's exception for a result code, as the kazoo call would have raised it."""
    return _KAZOO_ERRORS.get(code, ZookeeperError)(path or code)


def _raise_for(r: ZkOpResult | None, path: str) -> None:
    if r is not None and r.code != OK:
        raise _kazoo_error(r.code, path)


def _raise_transaction_failure(r: ZkOpResult | None) -> None:
    """A transaction that failed: name the operation that failed (the others only rolled back)."""
    if r is None or r.code == OK:
        return
    failed = next((inner.code for inner in r.results or () if inner.code not in (OK, RUNTIMEINCONSISTENCY)),
                  r.code)
    raise AdminOperationException(f"ZooKeeper transaction failed: {_KAZOO_ERRORS.get(failed, ZookeeperError).__name__}")
