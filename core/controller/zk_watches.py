"""The controller's ZooKeeper watch handlers and their registry: Kafka's ZNodeChangeHandler /
ZNodeChildChangeHandler objects and the maps ZooKeeperClient keeps of them (``zNodeChangeHandlers``,
``zNodeChildChangeHandlers``).

This is the one place that says which watch goes where. A read of a path with a registered handler is issued with a
watch (ZooKeeperClient.shouldWatch, used by core.zk_client.KafkaZkClient); when the watch fires, `events_for_watch`
names the controller event the handler enqueues (ZooKeeperClient's watcher calling handleCreation / handleDeletion /
handleDataChange / handleChildChange). The edge only arms and re-arms what the reads asked for and reports what
fired; it holds no routing of its own.
"""

from __future__ import annotations

from typing import Any

import attrs

from messages import controller_events as ev
from messages.common import TopicPartition
from messages.zk import ZkWatchEvent
from protocol.zk import paths


@attrs.frozen
class ZNodeChangeHandler:
    """Kafka's ZNodeChangeHandler: the event enqueued on creation / deletion / data change of ``path``
    (None = no-op)."""

    path: str
    on_creation: Any = None
    on_deletion: Any = None
    on_data_change: Any = None


class ZkWatches:
    """ZooKeeperClient's handler registry: one ZNodeChangeHandler per path, one child-change event per path."""

    def __init__(self) -> None:
        self._node_handlers: dict[str, ZNodeChangeHandler] = {}
        self._child_handlers: dict[str, Any] = {}

    # -- ZooKeeperClient.shouldWatch ----------------------------------------------------------------------------------
    def watch_data(self, path: str) -> bool:
        """shouldWatch for GetData / Exists: a ZNodeChangeHandler is registered for the path."""
        return path in self._node_handlers

    def watch_children(self, path: str) -> bool:
        """shouldWatch for GetChildren: a ZNodeChildChangeHandler is registered for the path."""
        return path in self._child_handlers

    # -- registration -------------------------------------------------------------------------------------------------
    def register_node_handler(self, handler: ZNodeChangeHandler) -> None:
        """ZooKeeperClient.registerZNodeChangeHandler"""
        self._node_handlers[handler.path] = handler

    def unregister_node_handler(self, path: str) -> None:
        """ZooKeeperClient.unregisterZNodeChangeHandler"""
        self._node_handlers.pop(path, None)

    def register_child_handler(self, path: str, event: Any) -> None:
        """ZooKeeperClient.registerZNodeChildChangeHandler: ``event`` is what handleChildChange enqueues."""
        self._child_handlers[path] = event

    def unregister_child_handler(self, path: str) -> None:
        """ZooKeeperClient.unregisterZNodeChildChangeHandler"""
        self._child_handlers.pop(path, None)

    # -- the watcher ---------------------------------------------------------------------------------------------------
    def events_for_watch(self, watch: ZkWatchEvent) -> list[Any]:
        """The events the handlers registered for ``watch.path`` enqueue (Kafka's ZooKeeperClient watcher)."""
        if watch.kind == "CHILD":
            event = self._child_handlers.get(watch.path)
            return [event] if event is not None else []
        handler = self._node_handlers.get(watch.path)
        if handler is None:
            return []
        if watch.kind == "CREATED":
            event = handler.on_creation
        elif watch.kind == "DELETED":
            event = handler.on_deletion
        elif watch.kind == "CHANGED":
            event = handler.on_data_change
        else:
            event = None
        return [event] if event is not None else []


# -- the handlers KafkaController registers (KafkaController.scala's *Handler classes) ---------------------------------
def controller_change_handler() -> ZNodeChangeHandler:
    """ControllerChangeHandler: /controller created or changed → ControllerChange; deleted → Reelect."""
    return ZNodeChangeHandler(paths.ControllerZNode, ev.ControllerChange(), ev.Reelect(), ev.ControllerChange())


def preferred_replica_election_handler() -> ZNodeChangeHandler:
    """PreferredReplicaElectionHandler: /admin/preferred_replica_election created → ReplicaLeaderElection."""
    return ZNodeChangeHandler(paths.PreferredReplicaElectionZNode,
                              on_creation=ev.ReplicaLeaderElection(None, ev.PREFERRED, ev.ZK_TRIGGERED))


def partition_reassignment_handler() -> ZNodeChangeHandler:
    """PartitionReassignmentHandler: /admin/reassign_partitions created → ZkPartitionReassignment."""
    return ZNodeChangeHandler(paths.ReassignPartitionsZNode, on_creation=ev.ZkPartitionReassignment())


def broker_modifications_handler(broker_id: int) -> ZNodeChangeHandler:
    """BrokerModificationsHandler: /brokers/ids/<id> data changed → BrokerModifications."""
    return ZNodeChangeHandler(paths.BrokerIdZNode.path(broker_id), on_data_change=ev.BrokerModifications(broker_id))


def partition_modifications_handler(topic: str) -> ZNodeChangeHandler:
    """PartitionModificationsHandler: /brokers/topics/<t> data changed → PartitionModifications."""
    return ZNodeChangeHandler(paths.TopicZNode.path(topic), on_data_change=ev.PartitionModifications(topic))


def partition_reassignment_isr_change_handler(tp: TopicPartition) -> ZNodeChangeHandler:
    """PartitionReassignmentIsrChangeHandler: the state znode of a reassigning partition changed."""
    return ZNodeChangeHandler(paths.TopicPartitionStateZNode.path(tp),
                              on_data_change=ev.PartitionReassignmentIsrChange(tp))


# The ZNodeChildChangeHandlers onControllerFailover registers, in Kafka's order: BrokerChangeHandler,
# TopicChangeHandler, TopicDeletionHandler, LogDirEventNotificationHandler, IsrChangeNotificationHandler.
CONTROLLER_CHILD_HANDLERS: tuple[tuple[str, Any], ...] = (
    (paths.BrokerIdsZNode, ev.BrokerChange()),
    (paths.TopicsZNode, ev.TopicChange()),
    (paths.DeleteTopicsZNode, ev.TopicDeletion()),
    (paths.LogDirEventNotificationZNode, ev.LogDirEventNotification()),
    (paths.IsrChangeNotificationZNode, ev.IsrChangeNotification()),
)
