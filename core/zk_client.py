"""KafkaZkClient (kafka.zk.KafkaZkClient, Kafka 2.6): every ZooKeeper procedure of kactor, in one place.

Each method is a procedure (a generator of effects, see core.effects) that yields `ZkBatch` effects — ops pipelined
in one round trip, optionally fenced by /controller_epoch's zkVersion — and is resumed with their results. The
controller, the broker side (registration, ISR writes, controlled shutdown), the admin tools and the demo use these
procedures; the paths and payloads come from protocol.zk.paths / protocol.zk.znodes (Kafka's ZkData) only.

Watches: as in Kafka's ZooKeeperClient, a read of a path for which a handler is registered is issued with a watch.
The registry is passed in (`Watches`; the controller's is core.controller.zk_watches.ZkWatches); a client without
one (the broker side, the tools) arms no watches.

Bad data: a znode that does not decode raises ZnodeDecodeError where Kafka's decode throws; where Kafka tolerates a
malformed znode (Json.parseBytes → None: skipped, treated as empty or absent) the procedure catches it and logs.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

import attrs

from core.controller.errors import ConfigError, ControllerMovedError, KeeperError
from core.effects import Proc
from core.security import acl_znodes
from core.security.acl import AccessControlEntry, ResourcePattern
from messages.common import Broker, LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition
from messages.zk import (
    BADVERSION,
    CONTROLLER_MOVED,
    NODEEXISTS,
    NONODE,
    OK,
    Create,
    Delete,
    Exists,
    GetChildren,
    GetData,
    Multi,
    RegisterBroker,
    SetData,
    ZkBatch,
    ZkOpResult,
)
from protocol.zk import paths, znodes
from protocol.zk.znodes import ZnodeDecodeError

log = logging.getLogger("kactor.zk_client")

UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable"
TOPIC_CONFIG_TYPE = "topics"  # ConfigType.Topic
NO_FENCE = -1  # ZkVersion.MatchAnyVersion: the batch is not fenced by /controller_epoch


class Watches(Protocol):
    """ZooKeeperClient.shouldWatch: whether a read of ``path`` arms a watch (a handler is registered for it)."""

    def watch_data(self, path: str) -> bool: ...

    def watch_children(self, path: str) -> bool: ...


class _NoWatches:
    def watch_data(self, path: str) -> bool:
        return False

    def watch_children(self, path: str) -> bool:
        return False


NO_WATCHES: Watches = _NoWatches()


@attrs.frozen
class UpdateLeaderAndIsrResult:
    """KafkaZkClient.UpdateLeaderAndIsrResult: ``finished_partitions`` maps to the written LeaderAndIsr (zkVersion =
    the new znode version) or the exception; ``partitions_to_retry`` hit BADVERSION."""

    finished_partitions: dict[TopicPartition, LeaderAndIsr | Exception]
    partitions_to_retry: list[TopicPartition]


def parse_bool_config(name: str, value: Any) -> bool:
    """ConfigDef BOOLEAN parsing: "true"/"false" ignoring case (or a bool)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text == "true":
        return True
    if text == "false":
        return False
    raise ConfigError(f"Invalid value {value} for configuration {name}: Expected value to be either true or false")


def partition_state_or_none(r: ZkOpResult, tp: TopicPartition, zk_version: int | None = None
                            ) -> LeaderIsrAndControllerEpoch | None:
    """TopicPartitionStateZNode.decode of a GetData result as KafkaZkClient's callers apply it (Json.parseBytes →
    None): None for no data or a znode that does not decode (logged). ``zk_version`` defaults to the result's."""
    version = zk_version if zk_version is not None else (r.stat.version if r.stat is not None else 0)
    try:
        return znodes.decode_partition_state(r.data or None, version, paths.TopicPartitionStateZNode.path(tp))
    except ZnodeDecodeError as e:
        log.error("Ignoring the state of %s: %s", tp, e)
        return None


class KafkaZkClient:
    """Kafka's KafkaZkClient over the `ZkBatch` effect. ``watches`` is ZooKeeperClient's handler registry."""

    def __init__(self, watches: Watches = NO_WATCHES) -> None:
        self.watches = watches

    # ================================================================================================================
    # the request pipeline
    # ================================================================================================================
    def retry_requests_until_connected(self, ops: Iterable[Any], expected_controller_epoch_zk_version: int = NO_FENCE
                                       ) -> Proc[tuple[ZkOpResult, ...]]:
        """KafkaZkClient.retryRequestsUntilConnected: one pipelined batch (the edge re-sends it across a connection
        loss), fenced by /controller_epoch's zkVersion unless it is NO_FENCE; a failed fence raises
        ControllerMovedError. An empty batch is not sent."""
        op_tuple = tuple(ops)
        if not op_tuple:
            return ()
        results = yield ZkBatch(op_tuple, expected_controller_epoch_zk_version)
        for r in results:
            if r.code == CONTROLLER_MOVED:
                raise ControllerMovedError("Controller epoch zkVersion check fails. Expected zkVersion = "
                                           f"{expected_controller_epoch_zk_version}")
        return results

    _zk = retry_requests_until_connected

    def get_data(self, path: str) -> GetData:
        """A GetDataRequest, watched if a handler is registered (ZooKeeperClient.shouldWatch)."""
        return GetData(path, self.watches.watch_data(path))

    def get_children_request(self, path: str) -> GetChildren:
        """A GetChildrenRequest, watched if a child handler is registered."""
        return GetChildren(path, self.watches.watch_children(path))

    def get_children(self, path: str) -> Proc[list[str]]:
        """KafkaZkClient.getChildren: the sorted children of ``path`` (none if it does not exist)."""
        (r,) = yield from self._zk((self.get_children_request(path),))
        if r.code == NONODE:
            return []
        if r.code != OK:
            raise KeeperError(r.code, path)
        return sorted(r.children or ())

    def path_exists(self, path: str) -> Proc[bool]:
        """KafkaZkClient.pathExists (an exists watch is armed if a handler is registered)."""
        (r,) = yield from self._zk((Exists(path, self.watches.watch_data(path)),))
        if r.code == OK:
            return True
        if r.code == NONODE:
            return False
        raise KeeperError(r.code, path)

    def register_znode_change_handler_and_check_existence(self, path: str) -> Proc[bool]:
        """KafkaZkClient.registerZNodeChangeHandlerAndCheckExistence, once the caller registered the handler: an
        exists with a watch, armed even on a missing node (creation fires it)."""
        (r,) = yield from self._zk((Exists(path, True),))
        if r.code == OK:
            return True
        if r.code == NONODE:
            return False
        raise KeeperError(r.code, path)

    # ================================================================================================================
    # broker registration (KafkaServer.startup)
    # ================================================================================================================
    def create_top_level_paths(self) -> Proc[None]:
        """KafkaZkClient.createTopLevelPaths: ZkData.PersistentZkPaths, created empty (existing ones are kept)."""
        results = yield from self._zk(Create(p, make_parents=True) for p in paths.PERSISTENT_ZK_PATHS)
        for p, r in zip(paths.PERSISTENT_ZK_PATHS, results, strict=True):
            if r.code not in (OK, NODEEXISTS):
                raise KeeperError(r.code, p)

    def register_broker(self, broker_id: int, broker_info: str) -> Proc[ZkOpResult]:
        """KafkaZkClient.registerBroker: the checked ephemeral create of /brokers/ids/<id>; the result's czxid is the
        broker epoch. The caller decides what a NODEEXISTS (a previous session's registration) means."""
        (r,) = yield from self._zk((RegisterBroker(paths.BrokerIdZNode.path(broker_id), broker_info),))
        return r

    # ================================================================================================================
    # controller election
    # ================================================================================================================
    def get_controller_id(self) -> Proc[int]:
        """KafkaZkClient.getControllerId (-1 if there is no controller or its znode does not decode)."""
        (r,) = yield from self._zk((self.get_data(paths.ControllerZNode),))
        if r.code == NONODE:
            return -1
        if r.code != OK:
            raise KeeperError(r.code, paths.ControllerZNode)
        try:
            cid = znodes.decode_controller(r.data)
        except ZnodeDecodeError:
            log.warning("Failed to parse the controller info %r", r.data)
            return -1
        return cid if cid is not None else -1

    def register_controller_and_increment_controller_epoch(self, controller_id: int, timestamp_ms: int
                                                           ) -> Proc[tuple[int, int]]:
        """KafkaZkClient.registerControllerAndIncrementControllerEpoch: multi [create /controller (ephemeral),
        setData /controller_epoch (expected version)]; NODEEXISTS / BADVERSION → verify the transaction's outcome
        (checkControllerAndEpoch). Returns (new epoch, its zkVersion); ControllerMovedError if another won."""
        cur_epoch, cur_version = yield from self._get_or_create_controller_epoch()
        new_epoch = cur_epoch + 1
        data = znodes.encode_controller(controller_id, timestamp_ms)
        (m,) = yield from self._zk((Multi((
            Create(paths.ControllerZNode, data, ephemeral=True),
            SetData(paths.ControllerEpochZNode, znodes.encode_controller_epoch(new_epoch), cur_version),
        )),))
        if m.code == OK:
            inner = m.results[1] if m.results else None
            return new_epoch, (inner.stat.version if inner is not None and inner.stat is not None else cur_version + 1)
        if m.code in (NODEEXISTS, BADVERSION):
            ctl, ep = yield from self._zk((self.get_data(paths.ControllerZNode), GetData(paths.ControllerEpochZNode)))
            if ctl.code == NONODE:
                raise ControllerMovedError("The ephemeral node at /controller went away while checking whether the "
                                           "controller election succeeds. Aborting controller startup procedure")
            if ctl.code == OK and ep.code == OK and ep.stat is not None:
                try:
                    owner = znodes.decode_controller(ctl.data)
                    stored_epoch = znodes.decode_controller_epoch(ep.data)
                except ZnodeDecodeError:
                    owner, stored_epoch = None, -1
                if owner == controller_id and stored_epoch == new_epoch:
                    return new_epoch, ep.stat.version
            raise ControllerMovedError("Controller moved to another broker. Aborting controller startup procedure")
        raise KeeperError(m.code, paths.ControllerZNode)

    def get_controller_epoch(self) -> Proc[tuple[int, int] | None]:
        """KafkaZkClient.getControllerEpoch: (epoch, zkVersion of /controller_epoch), None if it does not exist."""
        (r,) = yield from self._zk((GetData(paths.ControllerEpochZNode),))
        if r.code == NONODE:
            return None
        if r.code != OK or r.stat is None:
            raise KeeperError(r.code, paths.ControllerEpochZNode)
        return znodes.decode_controller_epoch(r.data), r.stat.version

    def _get_or_create_controller_epoch(self) -> Proc[tuple[int, int]]:
        """getControllerEpoch, else maybeCreateControllerEpochZNode: (epoch, zkVersion); a new node holds 0 at
        version 0 (a create that loses a race reads again)."""
        while True:
            (r,) = yield from self._zk((GetData(paths.ControllerEpochZNode),))
            if r.code == OK and r.stat is not None:
                return znodes.decode_controller_epoch(r.data), r.stat.version
            if r.code != NONODE:
                raise KeeperError(r.code, paths.ControllerEpochZNode)
            (c,) = yield from self._zk((Create(paths.ControllerEpochZNode, znodes.encode_controller_epoch(0)),))
            if c.code == OK:
                return 0, 0
            if c.code != NODEEXISTS:
                raise KeeperError(c.code, paths.ControllerEpochZNode)

    def delete_controller(self, expected_controller_epoch_zk_version: int) -> Proc[None]:
        """KafkaZkClient.deleteController (fenced)."""
        yield from self._zk((Delete(paths.ControllerZNode),), expected_controller_epoch_zk_version)

    # ================================================================================================================
    # brokers
    # ================================================================================================================
    def get_all_broker_and_epochs_in_cluster(self) -> Proc[dict[int, Broker]]:
        """KafkaZkClient.getAllBrokerAndEpochsInCluster: id → Broker (epoch = czxid), reads watched. Brokers whose
        registration vanished in between are skipped; an undecodable registration is logged and skipped."""
        ids: list[int] = []
        for child in (yield from self.get_children(paths.BrokerIdsZNode)):
            try:
                ids.append(int(child))
            except ValueError:
                log.warning("Ignoring non-numeric broker registration %s", child)
        ids.sort()
        results = yield from self._zk(GetData(paths.BrokerIdZNode.path(b), True) for b in ids)
        brokers: dict[int, Broker] = {}
        for b, r in zip(ids, results, strict=True):
            if r.code == OK and r.stat is not None:
                try:
                    brokers[b] = znodes.decode_broker(b, r.data, r.stat.czxid)
                except ZnodeDecodeError as e:
                    log.error("Ignoring broker %d: %s", b, e)
            elif r.code != NONODE:
                raise KeeperError(r.code, paths.BrokerIdZNode.path(b))
        return brokers

    def get_sorted_broker_list(self) -> Proc[list[int]]:
        """KafkaZkClient.getSortedBrokerList: the registered broker ids, sorted."""
        children = yield from self.get_children(paths.BrokerIdsZNode)
        return sorted(int(c) for c in children if c.isdigit())

    def get_broker(self, broker_id: int) -> Proc[Broker | None]:
        """KafkaZkClient.getBroker: the registration of ``broker_id`` (epoch = czxid), None if absent. A registration
        that does not decode raises ZnodeDecodeError, as Kafka's BrokerIdZNode.decode throws."""
        path = paths.BrokerIdZNode.path(broker_id)
        (r,) = yield from self._zk((self.get_data(path),))
        if r.code != OK or r.stat is None or r.data is None:
            return None
        return znodes.decode_broker(broker_id, r.data, r.stat.czxid)

    # ================================================================================================================
    # topics and partitions
    # ================================================================================================================
    def get_all_topics_in_cluster(self) -> Proc[list[str]]:
        """KafkaZkClient.getAllTopicsInCluster (sorted; watched if the TopicChange handler is registered)."""
        return (yield from self.get_children(paths.TopicsZNode))

    def get_full_replica_assignment_for_topics(self, topics: Sequence[str]
                                               ) -> Proc[dict[TopicPartition, ReplicaAssignment]]:
        """KafkaZkClient.getFullReplicaAssignmentForTopics: one GetData per topic, pipelined, in ``topics`` order
        (arms the PartitionModifications watches where registered). An undecodable assignment is logged and
        skipped."""
        results = yield from self._zk(self.get_data(paths.TopicZNode.path(t)) for t in topics)
        out: dict[TopicPartition, ReplicaAssignment] = {}
        for t, r in zip(topics, results, strict=False):
            if r.code == OK:
                try:
                    out.update(znodes.decode_topic_assignment(t, r.data))
                except ZnodeDecodeError as e:
                    log.error("Ignoring the assignment of topic %s: %s", t, e)
            elif r.code != NONODE:
                raise KeeperError(r.code, paths.TopicZNode.path(t))
        return out

    def set_topic_assignment_raw(self, topic: str, assignment: Mapping[TopicPartition, ReplicaAssignment],
                                 expected_controller_epoch_zk_version: int) -> Proc[ZkOpResult]:
        """KafkaZkClient.setTopicAssignmentRaw (fenced)."""
        (r,) = yield from self._zk(
            (SetData(paths.TopicZNode.path(topic), znodes.encode_topic_assignment(assignment)),),
            expected_controller_epoch_zk_version)
        return r

    def get_topic_partitions(self, topic: str) -> Proc[list[str]]:
        """KafkaZkClient.getTopicPartitions: the partition numbers under /brokers/topics/<t>/partitions, as text."""
        return (yield from self.get_children(paths.TopicPartitionsZNode.path(topic)))

    def get_topic_partition_states(self, partitions: Sequence[TopicPartition]
                                   ) -> Proc[dict[TopicPartition, LeaderIsrAndControllerEpoch]]:
        """KafkaZkClient.getTopicPartitionStates: pipelined, in ``partitions`` order (arms the reassignment ISR
        watches where registered); partitions without a state, or whose state does not decode, are left out."""
        results = yield from self._zk(self.get_data(paths.TopicPartitionStateZNode.path(tp)) for tp in partitions)
        out: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        for tp, r in zip(partitions, results, strict=True):
            if r.code == OK and r.stat is not None:
                decoded = partition_state_or_none(r, tp)
                if decoded is not None:
                    out[tp] = decoded
        return out

    def get_topic_partition_states_raw(self, partitions: Sequence[TopicPartition]) -> Proc[tuple[ZkOpResult, ...]]:
        """KafkaZkClient.getTopicPartitionStatesRaw: one unwatched GetData per partition state znode, pipelined,
        results in order."""
        results = yield ZkBatch(tuple(GetData(paths.TopicPartitionStateZNode.path(tp)) for tp in partitions))
        return results

    def create_topic_partition_states_raw(
        self, states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch], expected_controller_epoch_zk_version: int
    ) -> Proc[list[tuple[TopicPartition, ZkOpResult]]]:
        """KafkaZkClient.createTopicPartitionStatesRaw: create ``/partitions`` of each topic and ``/partitions/<p>``
        of each partition (result codes ignored), then each ``.../state`` node, all epoch-fenced — pipelined in ONE
        batch (ZooKeeper applies a session's requests in order, so this equals Kafka's three round trips).

        Returns (partition, result of its state create) in ``states`` order; raises ControllerMovedError on a failed
        fence."""
        partitions = list(states)
        topics = list(dict.fromkeys(tp.topic for tp in partitions))
        ops: list[Any] = [Create(paths.TopicPartitionsZNode.path(t)) for t in topics]
        ops.extend(Create(paths.TopicPartitionZNode.path(tp)) for tp in partitions)
        first_state = len(ops)
        ops.extend(Create(paths.TopicPartitionStateZNode.path(tp), znodes.encode_partition_state(states[tp]))
                   for tp in partitions)
        results = yield from self._zk(ops, expected_controller_epoch_zk_version)
        return list(zip(partitions, results[first_state:], strict=True))

    def update_leader_and_isr(
        self, leader_and_isrs: Mapping[TopicPartition, LeaderAndIsr], controller_epoch: int,
        expected_controller_epoch_zk_version: int,
    ) -> Proc[UpdateLeaderAndIsrResult]:
        """KafkaZkClient.updateLeaderAndIsr: conditional (zkVersion) setData of each state znode, epoch-fenced,
        pipelined.

        OK → LeaderAndIsr with the new zkVersion; BADVERSION → retry; other code → KeeperError. A failed fence raises
        ControllerMovedError; any other exception thrown into the procedure fails every partition.
        """
        if not leader_and_isrs:
            return UpdateLeaderAndIsrResult({}, [])
        partitions = list(leader_and_isrs)
        ops = tuple(
            SetData(paths.TopicPartitionStateZNode.path(tp),
                    znodes.encode_partition_state(LeaderIsrAndControllerEpoch(leader_and_isrs[tp], controller_epoch)),
                    leader_and_isrs[tp].zk_version)
            for tp in partitions
        )
        try:
            results = yield from self._zk(ops, expected_controller_epoch_zk_version)
        except ControllerMovedError:
            raise
        except Exception as e:  # noqa: BLE001 - Kafka: any other exception fails every partition
            return UpdateLeaderAndIsrResult({tp: e for tp in partitions}, [])
        finished: dict[TopicPartition, LeaderAndIsr | Exception] = {}
        retry: list[TopicPartition] = []
        for tp, r in zip(partitions, results, strict=True):
            if r.code == OK:
                finished[tp] = leader_and_isrs[tp].with_zk_version(r.stat.version if r.stat is not None else -1)
            elif r.code == BADVERSION:
                retry.append(tp)
            else:
                finished[tp] = KeeperError(r.code, paths.TopicPartitionStateZNode.path(tp))
        return UpdateLeaderAndIsrResult(finished, retry)

    def conditional_update_partition_states(self, updates: Sequence[tuple[TopicPartition, LeaderIsrAndControllerEpoch]]
                                            ) -> Proc[list[tuple[int | None, str]]]:
        """ReplicationUtils.updateLeaderAndIsr for many partitions in ONE pipelined batch (the broker's ISR writes,
        ZkPartitionStateStore.expandIsr / shrinkIsr): a conditional setData of each state on its LeaderAndIsr's
        zkVersion, not fenced. A BADVERSION is re-checked (checkLeaderAndIsrZkData): if the znode already holds
        exactly what was to be written, the write succeeded with the znode's version. Returns per update (new
        zkVersion or None, result code)."""
        if not updates:
            return []
        results = yield from self._zk(
            SetData(paths.TopicPartitionStateZNode.path(tp), znodes.encode_partition_state(state),
                    state.leader_and_isr.zk_version)
            for tp, state in updates)
        outcomes: list[tuple[int | None, str]] = [
            (r.stat.version if r.ok and r.stat is not None else None, r.code) for r in results]
        recheck = [i for i, r in enumerate(results) if r.code == BADVERSION]
        if recheck:
            reads = yield from self._zk(GetData(paths.TopicPartitionStateZNode.path(updates[i][0])) for i in recheck)
            for i, r in zip(recheck, reads, strict=True):
                if not (r.ok and r.stat is not None):
                    continue
                stored = partition_state_or_none(r, updates[i][0])
                if stored is not None and _same_partition_state(stored, updates[i][1]):
                    outcomes[i] = (r.stat.version, OK)
        return outcomes

    # ================================================================================================================
    # configs
    # ================================================================================================================
    def get_log_configs(self, topics: Iterable[str], defaults: Mapping[str, Any]
                        ) -> Proc[tuple[dict[str, dict[str, Any]], dict[str, Exception]]]:
        """KafkaZkClient.getLogConfigs: read ``/config/topics/<t>`` of each topic (NONODE = no overrides) and merge
        the overrides over ``defaults`` (the broker's config). Returns (configs, failures) per topic; a topic whose
        read fails with another code, whose config does not decode, or whose ``unclean.leader.election.enable`` does
        not parse, is a failure."""
        topic_list = list(dict.fromkeys(topics))
        if not topic_list:
            return {}, {}
        results = yield ZkBatch(tuple(GetData(_topic_config_path(t)) for t in topic_list))
        configs: dict[str, dict[str, Any]] = {}
        failed: dict[str, Exception] = {}
        for topic, r in zip(topic_list, results, strict=True):
            try:
                if r.code == OK:
                    overrides = znodes.decode_config_entity(r.data or None, _topic_config_path(topic))
                elif r.code == NONODE:
                    overrides = {}
                else:
                    raise KeeperError(r.code, _topic_config_path(topic))
                merged: dict[str, Any] = dict(defaults)
                merged.update(overrides)
                merged[UNCLEAN_LEADER_ELECTION_ENABLE] = parse_bool_config(
                    UNCLEAN_LEADER_ELECTION_ENABLE, merged.get(UNCLEAN_LEADER_ELECTION_ENABLE, False))
                configs[topic] = merged
            except Exception as e:  # noqa: BLE001 - LogConfig.fromProps failures are per topic
                failed[topic] = e
        return configs, failed

    # ================================================================================================================
    # topic deletion
    # ================================================================================================================
    def get_topic_deletions(self) -> Proc[list[str]]:
        """KafkaZkClient.getTopicDeletions (sorted; watched if the TopicDeletion handler is registered)."""
        return (yield from self.get_children(paths.DeleteTopicsZNode))

    def delete_topic_deletions(self, topics: Iterable[str], expected_controller_epoch_zk_version: int) -> Proc[None]:
        """KafkaZkClient.deleteTopicDeletions (fenced)."""
        yield from self._zk((Delete(paths.DeleteTopicsTopicZNode.path(t)) for t in topics),
                            expected_controller_epoch_zk_version)

    def delete_topic_znode(self, topic: str, expected_controller_epoch_zk_version: int) -> Proc[None]:
        """KafkaZkClient.deleteTopicZNode: /brokers/topics/<t>, recursive (fenced); as deleteRecursive, a failure
        other than NONODE throws."""
        path = paths.TopicZNode.path(topic)
        (r,) = yield from self._zk((Delete(path, recursive=True),), expected_controller_epoch_zk_version)
        if r.code not in (OK, NONODE):
            raise KeeperError(r.code, path)

    def delete_topic_configs(self, topics: Iterable[str], expected_controller_epoch_zk_version: int) -> Proc[None]:
        """KafkaZkClient.deleteTopicConfigs: /config/topics/<t> of each topic (fenced)."""
        yield from self._zk((Delete(_topic_config_path(t)) for t in topics), expected_controller_epoch_zk_version)

    # ================================================================================================================
    # preferred replica election
    # ================================================================================================================
    def get_preferred_replica_election(self) -> Proc[set[TopicPartition]]:
        """KafkaZkClient.getPreferredReplicaElection (invalid JSON → empty, as Kafka's decode)."""
        (r,) = yield from self._zk((self.get_data(paths.PreferredReplicaElectionZNode),))
        if r.code == NONODE:
            return set()
        if r.code != OK:
            raise KeeperError(r.code, paths.PreferredReplicaElectionZNode)
        try:
            return znodes.decode_preferred_replica_election(r.data)
        except ZnodeDecodeError as e:
            log.warning("Ignoring preferred replica election due to invalid json: %s", e)
            return set()

    def delete_preferred_replica_election(self, expected_controller_epoch_zk_version: int) -> Proc[None]:
        """KafkaZkClient.deletePreferredReplicaElection (fenced)."""
        yield from self._zk((Delete(paths.PreferredReplicaElectionZNode),), expected_controller_epoch_zk_version)

    # ================================================================================================================
    # ISR change and log dir event notifications
    # ================================================================================================================
    def get_all_isr_change_notifications(self) -> Proc[list[str]]:
        """KafkaZkClient.getAllIsrChangeNotifications: the sorted isr_change_<seq> children (watched)."""
        return (yield from self.get_children(paths.IsrChangeNotificationZNode))

    def get_partitions_from_isr_change_notifications(self, children: Sequence[str]) -> Proc[set[TopicPartition]]:
        """KafkaZkClient.getPartitionsFromIsrChangeNotifications: the union of the notifications' partitions; one
        that does not decode is logged and skipped, one that vanished is skipped."""
        results = yield from self._notification_data(paths.IsrChangeNotificationZNode, children)
        partitions: set[TopicPartition] = set()
        for c, r in zip(children, results, strict=True):
            if r.code == OK:
                try:
                    partitions |= znodes.decode_isr_change(r.data, f"{paths.IsrChangeNotificationZNode}/{c}")
                except ZnodeDecodeError as e:
                    log.warning("Ignoring ISR change notification %s: %s", c, e)
        return partitions

    def delete_isr_change_notifications(self, children: Iterable[str], expected_controller_epoch_zk_version: int
                                        ) -> Proc[None]:
        """KafkaZkClient.deleteIsrChangeNotifications(sequenceNumbers, epochZkVersion) (fenced)."""
        yield from self._delete_children(paths.IsrChangeNotificationZNode, children,
                                         expected_controller_epoch_zk_version)

    def get_all_log_dir_event_notifications(self) -> Proc[list[str]]:
        """KafkaZkClient.getAllLogDirEventNotifications: the sorted log_dir_event_<seq> children (watched)."""
        return (yield from self.get_children(paths.LogDirEventNotificationZNode))

    def get_broker_ids_from_log_dir_events(self, children: Sequence[str]) -> Proc[list[int]]:
        """KafkaZkClient.getBrokerIdsFromLogDirEvents: the brokers that reported a log dir failure, in notification
        order; one that does not decode is logged and skipped."""
        results = yield from self._notification_data(paths.LogDirEventNotificationZNode, children)
        broker_ids: list[int] = []
        for c, r in zip(children, results, strict=True):
            if r.code == OK:
                try:
                    b = znodes.decode_log_dir_event(r.data, f"{paths.LogDirEventNotificationZNode}/{c}")
                except ZnodeDecodeError as e:
                    log.warning("Ignoring log dir event notification %s: %s", c, e)
                    continue
                if b is not None:
                    broker_ids.append(b)
        return broker_ids

    def delete_log_dir_event_notifications(self, children: Iterable[str], expected_controller_epoch_zk_version: int
                                           ) -> Proc[None]:
        """KafkaZkClient.deleteLogDirEventNotifications(sequenceNumbers, epochZkVersion) (fenced)."""
        yield from self._delete_children(paths.LogDirEventNotificationZNode, children,
                                         expected_controller_epoch_zk_version)

    def propagate_isr_changes(self, partitions: Iterable[TopicPartition]) -> Proc[bool]:
        """KafkaZkClient.propagateIsrChanges: create one persistent-sequential isr_change_<seq> node listing the
        partitions; returns success."""
        (r,) = yield from self._zk((Create(paths.IsrChangeNotificationSequenceZNode.path(),
                                           znodes.encode_isr_change(partitions), sequential=True),))
        return r.ok

    def propagate_log_dir_event(self, broker_id: int) -> Proc[bool]:
        """KafkaZkClient.propagateLogDirEvent: create a persistent-sequential log_dir_event_<seq> node naming the
        broker; returns success."""
        (r,) = yield from self._zk((Create(paths.LogDirEventNotificationSequenceZNode.path(),
                                           znodes.encode_log_dir_event(broker_id), sequential=True),))
        return r.ok

    def delete_all_notifications(self, expected_controller_epoch_zk_version: int) -> Proc[None]:
        """KafkaZkClient.deleteLogDirEventNotifications + deleteIsrChangeNotifications (epochZkVersion), as
        onControllerFailover calls them: both children reads pipelined (arming the child watches), then every
        notification deleted in one fenced batch."""
        parents = (paths.LogDirEventNotificationZNode, paths.IsrChangeNotificationZNode)
        results = yield from self._zk(self.get_children_request(p) for p in parents)
        deletes = [Delete(f"{p}/{c}") for p, r in zip(parents, results, strict=True) if r.code == OK
                   for c in sorted(r.children or ())]
        yield from self._zk(deletes, expected_controller_epoch_zk_version)

    def _notification_data(self, parent: str, children: Sequence[str]) -> Proc[tuple[ZkOpResult, ...]]:
        return (yield from self._zk(GetData(f"{parent}/{c}") for c in children))

    def _delete_children(self, parent: str, children: Iterable[str], expected_controller_epoch_zk_version: int
                         ) -> Proc[None]:
        yield from self._zk((Delete(f"{parent}/{c}") for c in children), expected_controller_epoch_zk_version)

    # ================================================================================================================
    # dynamic configs (DynamicConfigManager and its change-notification listener; Partition.createLog's
    # fetchTopicConfig): raw results, each caller decides what a failed read means
    # ================================================================================================================
    def get_children_raw(self, path: str) -> Proc[ZkOpResult]:
        """KafkaZkClient.getChildren, raw: the GetChildren result (watched if a child handler is registered)."""
        (r,) = yield from self._zk((self.get_children_request(path),))
        return r

    def get_all_entities_with_config_raw(self, entity_type: str) -> Proc[ZkOpResult]:
        """KafkaZkClient.getAllEntitiesWithConfig, raw: the children of /config/<type>."""
        return (yield from self.get_children_raw(paths.ConfigEntityTypeZNode.path(entity_type)))

    def get_entity_configs_raw(self, entity_type: str, entity_names: Sequence[str]) -> Proc[tuple[ZkOpResult, ...]]:
        """KafkaZkClient.getEntitiesConfigs, raw: one GetData of /config/<type>/<name> per entity, pipelined, in
        order (decode each with znodes.decode_config_entity)."""
        return (yield from self._zk(GetData(paths.ConfigEntityZNode.path(entity_type, n)) for n in entity_names))

    def get_data_raw(self, znode_paths: Sequence[str]) -> Proc[tuple[ZkOpResult, ...]]:
        """KafkaZkClient.getDataAndStat of each path, pipelined, raw."""
        return (yield from self._zk(self.get_data(p) for p in znode_paths))

    def exists_raw(self, znode_paths: Sequence[str]) -> Proc[tuple[ZkOpResult, ...]]:
        """The stat of each path (Exists), pipelined, raw."""
        return (yield from self._zk(Exists(p, self.watches.watch_data(p)) for p in znode_paths))

    def delete_paths(self, znode_paths: Sequence[str]) -> Proc[tuple[ZkOpResult, ...]]:
        """KafkaZkClient.deletePath of each path, pipelined (a path already gone answers NONODE)."""
        return (yield from self._zk(Delete(p) for p in znode_paths))

    # ================================================================================================================
    # what the admin tools write (AdminZkClient's calls)
    # ================================================================================================================
    def create_parents(self, *znode_paths: str) -> Proc[None]:
        """ZooKeeperClient's createRecursive of each path's ancestors and itself, kept if they exist."""
        results = yield from self._zk(Create(p, make_parents=True) for p in znode_paths)
        for p, r in zip(znode_paths, results, strict=True):
            if r.code not in (OK, NODEEXISTS):
                raise KeeperError(r.code, p)

    def entity_config_op(self, entity_type: str, entity_name: str, config: Mapping[str, str],
                         exists: bool) -> SetData | Create:
        """The op of KafkaZkClient.setOrCreateEntityConfigs: set /config/<type>/<name> if it ``exists``, else create
        it (as part of a transaction)."""
        path = paths.ConfigEntityZNode.path(entity_type, entity_name)
        data = znodes.encode_config_entity(dict(config))
        return SetData(path, data) if exists else Create(path, data)

    def create_topic_assignment_with_config(self, topic: str, assignment: Mapping[TopicPartition, ReplicaAssignment],
                                            config: Mapping[str, str], config_exists: bool) -> Proc[ZkOpResult]:
        """AdminZkClient.createTopicWithAssignment's writes — KafkaZkClient.setOrCreateEntityConfigs, then
        createTopicAssignment — in one transaction (same end state, no half-written topic on a race). Returns the
        transaction's result; NODEEXISTS means the topic exists."""
        (r,) = yield from self._zk((Multi((
            self.entity_config_op(TOPIC_CONFIG_TYPE, topic, config, config_exists),
            Create(paths.TopicZNode.path(topic), znodes.encode_topic_assignment(assignment)),
        )),))
        return r

    def change_entity_config(self, entity_type: str, entity_name: str, config: Mapping[str, str],
                             config_exists: bool) -> Proc[ZkOpResult]:
        """AdminZkClient.changeEntityConfig's writes — KafkaZkClient.setOrCreateEntityConfigs, then
        createConfigChangeNotification (a persistent-sequential config_change_<seq>) — in one transaction."""
        (r,) = yield from self._zk((Multi((
            self.entity_config_op(entity_type, entity_name, config, config_exists),
            Create(paths.ConfigEntityChangeNotificationSequenceZNode.create_path(),
                   znodes.encode_config_change(f"{entity_type}/{entity_name}"), sequential=True),
        )),))
        return r

    def set_topic_assignment(self, topic: str, assignment: Mapping[TopicPartition, ReplicaAssignment],
                             expected_version: int) -> Proc[ZkOpResult]:
        """KafkaZkClient.setTopicAssignment, conditional on the topic znode's version (a concurrent change fails
        with BADVERSION instead of being lost)."""
        (r,) = yield from self._zk((SetData(paths.TopicZNode.path(topic), znodes.encode_topic_assignment(assignment),
                                            expected_version),))
        return r

    def create_delete_topic_path(self, topic: str) -> Proc[ZkOpResult]:
        """KafkaZkClient.createDeleteTopicPath: /admin/delete_topics/<t>, no data; NODEEXISTS if already marked."""
        (r,) = yield from self._zk((Create(paths.DeleteTopicsTopicZNode.path(topic), ""),))
        return r

    def create_partition_reassignment(self, reassignment: Mapping[TopicPartition, Sequence[int]]
                                      ) -> Proc[ZkOpResult]:
        """KafkaZkClient.createPartitionReassignment: /admin/reassign_partitions; NODEEXISTS if one is pending."""
        data = znodes.encode_reassign_partitions({tp: tuple(r) for tp, r in reassignment.items()})
        (r,) = yield from self._zk((Create(paths.ReassignPartitionsZNode, data),))
        return r

    def create_preferred_replica_election(self, partitions: Iterable[TopicPartition]) -> Proc[ZkOpResult]:
        """KafkaZkClient.createPreferredReplicaElection; NODEEXISTS if one is pending."""
        (r,) = yield from self._zk((Create(paths.PreferredReplicaElectionZNode,
                                           znodes.encode_preferred_replica_election(partitions)),))
        return r

    # ================================================================================================================
    # partition reassignment: /admin/reassign_partitions (the controller's; maintained by controller-seams)
    # ================================================================================================================
    def reassign_partitions_in_progress(self) -> Proc[bool]:
        """KafkaZkClient.reassignPartitionsInProgress: /admin/reassign_partitions exists (an exists watch is armed if
        its handler is registered). Any answer but OK counts as "not in progress"."""
        path = paths.ReassignPartitionsZNode
        (r,) = yield from self._zk((Exists(path, self.watches.watch_data(path)),))
        return r.code == OK

    def get_partition_reassignment(self) -> Proc[dict[TopicPartition, tuple[int, ...]]]:
        """KafkaZkClient.getPartitionReassignment: the partitions and target replicas listed (none if the znode is
        absent); JSON that does not decode is logged and treated as empty, as Kafka does."""
        path = paths.ReassignPartitionsZNode
        (r,) = yield from self._zk((self.get_data(path),))
        if r.code == NONODE:
            return {}
        if r.code != OK:
            raise KeeperError(r.code, path)
        try:
            return znodes.decode_reassign_partitions(r.data)
        except ZnodeDecodeError as e:
            log.warning("Ignoring partition reassignment due to invalid json: %s", e)
            return {}

    def set_or_create_partition_reassignment(self, reassignment: Mapping[TopicPartition, Sequence[int]],
                                             expected_controller_epoch_zk_version: int) -> Proc[None]:
        """KafkaZkClient.setOrCreatePartitionReassignment (fenced): set the znode's data, or create it if it is
        gone; any other failure raises KeeperError."""
        path = paths.ReassignPartitionsZNode
        data = znodes.encode_reassign_partitions(reassignment)
        (r,) = yield from self._zk((SetData(path, data),), expected_controller_epoch_zk_version)
        if r.code == NONODE:
            (r,) = yield from self._zk((Create(path, data),), expected_controller_epoch_zk_version)
        if r.code != OK:
            raise KeeperError(r.code, path)

    def delete_partition_reassignment(self, expected_controller_epoch_zk_version: int) -> Proc[None]:
        """KafkaZkClient.deletePartitionReassignment (fenced; a znode already gone is not an error)."""
        yield from self._zk((Delete(paths.ReassignPartitionsZNode),), expected_controller_epoch_zk_version)


    # ================================================================================================================
    # ACLs (KafkaZkClient's "Acl management methods", AclAuthorizer's storage; the caller reads a resource's znode
    # with get_data_raw and decodes it with core.security.acl_znodes)
    # ================================================================================================================
    def create_acl_paths(self) -> Proc[None]:
        """KafkaZkClient.createAclPaths: each store's root and resource-type nodes, and the two change paths."""
        yield from self.create_parents(*acl_znodes.acl_paths())

    def conditional_set_acls_for_resource(self, resource: ResourcePattern, acls: Sequence[AccessControlEntry],
                                          expected_version: int) -> Proc[ZkOpResult]:
        """KafkaZkClient.conditionalSetAclsForResource: the set's result (BADVERSION / NONODE: a lost race)."""
        (r,) = yield from self._zk((SetData(acl_znodes.resource_path(resource), acl_znodes.encode_acls(acls),
                                            expected_version),))
        return r

    def create_acls_for_resource_if_not_exists(self, resource: ResourcePattern, acls: Sequence[AccessControlEntry]
                                               ) -> Proc[ZkOpResult]:
        """KafkaZkClient.createAclsForResourceIfNotExists: the create's result (NODEEXISTS: a lost race)."""
        (r,) = yield from self._zk((Create(acl_znodes.resource_path(resource), acl_znodes.encode_acls(acls)),))
        return r

    def conditional_delete_acls_for_resource(self, resource: ResourcePattern, expected_version: int
                                             ) -> Proc[ZkOpResult]:
        """KafkaZkClient.conditionalDelete of a resource's znode: the delete's result (NONODE: already gone,
        BADVERSION: a lost race)."""
        (r,) = yield from self._zk((Delete(acl_znodes.resource_path(resource), expected_version),))
        return r

    def create_acl_change_notification(self, resource: ResourcePattern) -> Proc[None]:
        """KafkaZkClient.createAclChangeNotification: a persistent-sequential acl_changes_<seq> in the change store
        of the resource's pattern type."""
        path = acl_znodes.change_create_path(resource.pattern_type)
        (r,) = yield from self._zk((Create(path, acl_znodes.encode_acl_change(resource), sequential=True),))
        if r.code != OK:
            raise KeeperError(r.code, path)

def _topic_config_path(topic: str) -> str:
    return paths.ConfigEntityZNode.path(TOPIC_CONFIG_TYPE, topic)


def _same_partition_state(a: LeaderIsrAndControllerEpoch, b: LeaderIsrAndControllerEpoch) -> bool:
    """Equal contents, whatever the zkVersion (ReplicationUtils.checkLeaderAndIsrZkData)."""
    return (a.controller_epoch == b.controller_epoch and a.leader_and_isr.leader == b.leader_and_isr.leader
            and a.leader_and_isr.leader_epoch == b.leader_and_isr.leader_epoch
            and tuple(a.leader_and_isr.isr) == tuple(b.leader_and_isr.isr))
