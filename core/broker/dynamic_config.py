"""A broker's dynamic configuration, as Kafka 2.6's ``kafka.server.DynamicConfigManager`` over a
``kafka.common.ZkNodeChangeNotificationListener`` on ``/config/changes``, with the TopicConfigHandler and
BrokerConfigHandler (+ DynamicLogConfig) it dispatches to.

`ConfigManager.process_notifications` is one run of the listener: read the children of ``/config/changes`` (arming
the child watch), process in order every ``config_change_<seq>`` whose number is above the last one processed (a
notification that cannot be processed is logged and skipped, as Kafka does), then delete those older than
``changeExpirationMs`` (15 minutes). A change notification names an entity (``topics/<t>``, ``brokers/<id>``,
``brokers/<default>``); its handler re-reads that entity's whole config from ``/config/<type>/<name>``.

What the handlers decide goes out as effects: `Reconfigure` (TopicConfigChanged / LogConfigDefaultsChanged, for the
logs and, the defaults, the controller; the quotas), `Enqueue` (the controller events TopicUncleanLeaderElectionEnable /
UncleanLeaderElectionEnable for the controller of this process, which acts on them only while it is active) and
`messages.credentials.UserCredentialsChanged` (a user's SCRAM credentials, for the listeners' CredentialCache).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from core.broker.log_config import (
    UNCLEAN_LEADER_ELECTION_ENABLE,
    LogConfig,
    effective_broker_config,
    log_defaults_from_broker_config,
    scala_to_boolean,
)
from core.controller.errors import KeeperError
from core.effects import Enqueue, Proc, Reconfigure
from core.quota.client_quota_manager import desanitize
from core.quota.replication_quota_manager import (
    ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND,
    DEFAULT_REPLICATION_THROTTLED_RATE,
    FOLLOWER_REPLICATION_THROTTLED_RATE,
    LEADER_REPLICATION_THROTTLED_RATE,
)
from core.security.credential_cache import scram_entries
from core.zk_client import KafkaZkClient
from messages import controller_events as ev
from messages.credentials import UserCredentialsChanged
from messages.dynamic_config import LogConfigDefaultsChanged, TopicConfigChanged
from messages.quota import ClientQuotaConfigChanged, ReplicationQuotasChanged
from messages.zk import NONODE, OK, ZkOpResult
from protocol.zk import paths, znodes

log = logging.getLogger("kactor.config")

CHANGE_EXPIRATION_MS = 15 * 60 * 1000  # DynamicConfigManager's changeExpirationMs
DEFAULT_ENTITY = "<default>"  # ConfigEntityName.Default
TOPIC, CLIENT, USER, BROKER = "topics", "clients", "users", "brokers"  # ConfigType
CONFIG_TYPES = (TOPIC, CLIENT, USER, BROKER)  # the handlers KafkaServer registers (ZK mode, 2.6)


class NotificationError(ValueError):
    """A change notification Kafka's ConfigChangedNotificationHandler refuses (IllegalArgumentException)."""


def change_number(name: str) -> int:
    """ZkNodeChangeNotificationListener.changeNumber: ``config_change_0000000042`` → 42."""
    return int(name[len(paths.CONFIG_CHANGE_PREFIX):])


def entity_of_notification(data: str) -> tuple[str, str] | None:
    """ConfigChangedNotificationHandler.processNotification: (entity type, entity name) of a notification, None
    for data that is not JSON (ignored: it may come from the deprecated TopicConfigManager). Raises
    NotificationError for JSON of the wrong shape, with Kafka's message (protocol.zk.znodes decodes it)."""
    try:
        return znodes.decode_config_change(data, config_types=CONFIG_TYPES)
    except znodes.ZnodeDecodeError as e:
        raise NotificationError(e.reason) from None


class ChangeNotificationWatch:
    """The handler registry of ZkNodeChangeNotificationListener: its ZNodeChildChangeHandler on /config/changes, so
    a read of that node's children arms the child watch."""

    def watch_data(self, path: str) -> bool:
        return False

    def watch_children(self, path: str) -> bool:
        return path == paths.ConfigEntityChangeNotificationZNode


class ConfigManager:
    """DynamicConfigManager of broker ``broker_id`` (state of its change listener and of its config handlers).

    ``static_config`` is the broker's server.properties values of the dynamically updatable log configs (broker
    names). ``clock`` gives milliseconds (the actor's clock; a test's frozen one)."""

    def __init__(self, broker_id: int, static_config: Mapping[str, str], clock: Callable[[], float],
                 change_expiration_ms: int = CHANGE_EXPIRATION_MS) -> None:
        self.broker_id = broker_id
        self.static_config = dict(static_config)
        self.clock = clock
        self.change_expiration_ms = change_expiration_ms
        self.last_executed_change = -1  # ZkNodeChangeNotificationListener.lastExecutedChange
        self.dynamic_default: dict[str, str] = {}  # /config/brokers/<default>
        self.dynamic_broker: dict[str, str] = {}  # /config/brokers/<broker_id>
        self.log_defaults = log_defaults_from_broker_config(self.static_config)
        self.zk = KafkaZkClient(ChangeNotificationWatch())

    # -- DynamicConfigManager.startup ---------------------------------------------------------------------------------
    def startup(self) -> Proc[None]:
        """configChangeListener.init() (process the notifications there are), then apply every existing topic and
        broker config through its handler, as Kafka bootstraps the overrides. The shards read a topic's config
        when they first host it (Partition.createLog), so the bootstrap of topics only tells the controller about
        topics with unclean leader election enabled. /config/changes is created first if missing (the broker's
        createTopLevelPaths may not have run yet): a child watch needs the node."""
        try:
            yield from self.zk.create_parents(paths.ConfigEntityChangeNotificationZNode)
        except KeeperError as e:
            log.warning("Cannot create %s: %s", paths.ConfigEntityChangeNotificationZNode, e.code)
        yield from self.process_notifications()
        yield from self._bootstrap_quotas()
        for entity_type in (TOPIC, BROKER):
            children = yield from self.zk.get_all_entities_with_config_raw(entity_type)
            names = sorted(children.children or ()) if children.code == OK else []
            if not names:
                continue
            config_paths = [paths.ConfigEntityZNode.path(entity_type, n) for n in names]
            results = yield from self.zk.get_entity_configs_raw(entity_type, names)
            for name, path, r in zip(names, config_paths, results, strict=True):
                config = self._decode(path, r)
                if config is None:
                    continue
                if entity_type == TOPIC:
                    if scala_to_boolean(config.get(UNCLEAN_LEADER_ELECTION_ENABLE)):
                        yield Enqueue(ev.TopicUncleanLeaderElectionEnable(name))
                else:
                    yield from self._broker_config_changed(name, config)

    def _bootstrap_quotas(self) -> Proc[None]:
        """DynamicConfigManager.startup for the ClientIdConfigHandler and UserConfigHandler: every
        /config/clients/<client-id>, /config/users/<user> and /config/users/<user>/clients/<client-id>
        (fetchAllEntityConfigs, fetchAllChildEntityConfigs) applied to the quota managers."""
        entities: list[tuple[str, str]] = []
        for entity_type in (CLIENT, USER):
            children = yield from self.zk.get_all_entities_with_config_raw(entity_type)
            entities += [(entity_type, n) for n in sorted(children.children or ()) if children.code == OK]
        for user in [n for t, n in entities if t == USER]:
            children = yield from self.zk.get_all_entities_with_config_raw(
                paths.UserClientIdQuotaEntity.children_type(user))
            if children.code == OK:
                entities += [(USER, paths.UserClientIdQuotaEntity.name(user, c))
                             for c in sorted(children.children or ())]
        for entity_type, name in entities:
            (r,) = yield from self.zk.get_entity_configs_raw(entity_type, (name,))
            config = self._decode(paths.ConfigEntityZNode.path(entity_type, name), r)
            if config is None:
                continue
            try:
                yield from self._quota_entity_changed(entity_type, name, config)
            except ValueError as e:
                log.error("Cannot apply the quotas of %s/%s: %s", entity_type, name, e)

    # -- ZkNodeChangeNotificationListener.processNotifications -------------------------------------------------------
    def process_notifications(self) -> Proc[int]:
        """One run of the listener; returns how many notifications were processed."""
        root = paths.ConfigEntityChangeNotificationZNode
        children = yield from self.zk.get_children_raw(root)
        if children.code != OK:
            if children.code != NONODE:
                log.error("Error while processing notification change for path = %s: %s", root, children.code)
            return 0
        notifications = sorted(children.children or ())
        if not notifications:
            return 0
        now = self.clock()
        new = [n for n in notifications if change_number(n) > self.last_executed_change]
        processed = 0
        if new:
            log.info("Processing notification(s) to %s", root)
            results = yield from self.zk.get_data_raw([f"{root}/{n}" for n in new])
            for name, r in zip(new, results, strict=True):
                yield from self._process_notification(f"{root}/{name}", r)
                self.last_executed_change = change_number(name)
                processed += 1
        yield from self._purge_obsolete_notifications(now, notifications)
        return processed

    def _process_notification(self, path: str, r: ZkOpResult) -> Proc[None]:
        """processNotification: read it and hand it to the ConfigChangedNotificationHandler; a failure is logged."""
        if r.code != OK or r.data is None:
            log.warning("read null data from %s", path)
            return
        try:
            entity = entity_of_notification(r.data)
        except NotificationError as e:
            log.error("error processing change notification %s from %s: %s", r.data, path, e)
            return
        if entity is None:
            return
        entity_type, name = entity
        config_path = paths.ConfigEntityZNode.path(entity_type, name)
        (config_r,) = yield from self.zk.get_entity_configs_raw(entity_type, (name,))
        config = self._decode(config_path, config_r)
        if config is None:
            return
        log.info("Processing override for entityPath: %s/%s with config: %s", entity_type, name, config)
        try:
            if entity_type == TOPIC:
                yield from self._topic_config_changed(name, config)
            elif entity_type == BROKER:
                yield from self._broker_config_changed(name, config)
            else:
                yield from self._quota_entity_changed(entity_type, name, config)
        except ValueError as e:
            log.error("error processing change notification %s from %s: %s", r.data, path, e)

    def _purge_obsolete_notifications(self, now: float, notifications: list[str]) -> Proc[None]:
        """purgeObsoleteNotifications: delete every notification created more than changeExpirationMs ago."""
        root = paths.ConfigEntityChangeNotificationZNode
        node_paths = [f"{root}/{n}" for n in notifications]
        stats = yield from self.zk.exists_raw(node_paths)
        expired = [p for p, s in zip(node_paths, stats, strict=True)
                   if s.code == OK and s.stat is not None and now - s.stat.ctime > self.change_expiration_ms]
        if expired:
            log.debug("Purging %d change notification(s)", len(expired))
            yield from self.zk.delete_paths(expired)

    @staticmethod
    def _decode(path: str, r: ZkOpResult) -> dict[str, str] | None:
        """AdminZkClient.fetchEntityConfig: a missing node is an empty config; undecodable content is logged."""
        if r.code == NONODE:
            return {}
        if r.code != OK:
            log.error("Cannot read %s: %s", path, r.code)
            return None
        try:
            return znodes.decode_config_entity(r.data, path)
        except znodes.ZnodeDecodeError as e:
            log.error("%s", e)
            return None

    # -- the config handlers -----------------------------------------------------------------------------------------
    def _topic_config_changed(self, topic: str, config: dict[str, str]) -> Proc[None]:
        """TopicConfigHandler.processConfigChanges: the hosted logs take the new overrides; unclean leader election
        enabled for the topic → the controller (if active) elects leaders for its offline partitions."""
        yield Reconfigure(TopicConfigChanged(topic, tuple(config.items())))
        if scala_to_boolean(config.get(UNCLEAN_LEADER_ELECTION_ENABLE)):
            yield Enqueue(ev.TopicUncleanLeaderElectionEnable(topic))

    @staticmethod
    def _quota_entity_changed(entity_type: str, name: str, config: dict[str, str]) -> Proc[None]:
        """ClientIdConfigHandler / UserConfigHandler.processConfigChanges: the quotas, then, for a user entity that is
        neither ``<default>`` nor a <user, client-id> one, CredentialProvider.updateCredentials with the desanitized
        user name (`UserCredentialsChanged`, for the SASL listeners' credential cache)."""
        yield quota_config_changed(entity_type, name, config)
        if entity_type == USER and "/" not in name and name != DEFAULT_ENTITY:
            yield UserCredentialsChanged(desanitize(name), scram_entries(config))

    def _broker_config_changed(self, name: str, config: dict[str, str]) -> Proc[None]:
        """BrokerConfigHandler.processConfigChanges → DynamicBrokerConfig.updateDefaultConfig / updateBrokerConfig →
        DynamicLogConfig.reconfigure. Another broker's config is not ours to apply. Kafka reads the dynamic broker
        configs before its controller starts; here the controller starts with server.properties and learns the
        dynamic values from the startup pass, which compares with those."""
        if name == DEFAULT_ENTITY:
            self.dynamic_default = dict(config)
        else:
            try:
                broker_id = int(name.strip())
            except ValueError:
                raise ValueError(f"For input string: \"{name}\"") from None
            if broker_id != self.broker_id:
                return
            self.dynamic_broker = dict(config)
            try:
                quotas = replication_quotas_changed(config)
            except ValueError as e:  # the other updates still apply; Kafka's handler would stop at its toLong
                log.error("Cannot apply the replication quotas of broker %s: %s", name, e)
            else:
                yield quotas
        before = self.log_defaults
        after = log_defaults_from_broker_config(
            effective_broker_config(self.static_config, self.dynamic_default, self.dynamic_broker))
        try:
            new_config = LogConfig.from_props(after, {})
        except ValueError as e:
            log.error("Dynamic log config update failed: %s", e)
            return
        self.log_defaults = after
        if after == before:
            return
        change = LogConfigDefaultsChanged(tuple(sorted(after.items())))
        yield Reconfigure(change)
        if new_config.unclean_leader_election_enable and not LogConfig.from_props(before, {}).\
                unclean_leader_election_enable:
            yield Enqueue(ev.UncleanLeaderElectionEnable())


def replication_quotas_changed(config: Mapping[str, str]) -> Reconfigure:
    """BrokerConfigHandler.processConfigChanges' quota updates (2.6.3): ``getOrDefault`` of the broker's own
    entity only (``<default>`` does not set a replication quota in 2.6), Long.MaxValue when absent; ValueError for a
    value that is not a long (Kafka's toLong throws)."""
    def get_or_default(prop: str) -> int:
        text = config.get(prop)
        if text is None:
            return DEFAULT_REPLICATION_THROTTLED_RATE
        try:
            return int(text.strip())
        except ValueError:
            raise ValueError(f"For input string: \"{text}\"") from None

    return Reconfigure(ReplicationQuotasChanged(get_or_default(LEADER_REPLICATION_THROTTLED_RATE),
                                                get_or_default(FOLLOWER_REPLICATION_THROTTLED_RATE),
                                                get_or_default(ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND)))


def quota_config_changed(entity_type: str, name: str, config: dict[str, str]) -> Reconfigure:
    """ClientIdConfigHandler / UserConfigHandler.processConfigChanges: the quota change for the broker's quota
    managers; a user entity path is ``<user>`` or ``<user>/clients/<client-id>`` (ValueError otherwise, Kafka's
    IllegalArgumentException)."""
    if entity_type == CLIENT:
        return Reconfigure(ClientQuotaConfigChanged(None, name, tuple(config.items())))
    entity = paths.UserClientIdQuotaEntity.parse(name)
    if entity is None:
        raise ValueError(f"Invalid quota entity path: {name}")
    return Reconfigure(ClientQuotaConfigChanged(entity[0], entity[1], tuple(config.items())))
