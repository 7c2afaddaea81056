"""KafkaController (kafka.controller.KafkaController, Kafka 2.6, ZooKeeper mode): what each controller event does.

`KafkaController.process(event)` is a procedure (generator of effects, see core.effects) that processes ONE event,
exactly as Kafka's ``process(event)`` on the controller event thread: ZooKeeper reads/writes are yielded as ZkBatch
effects (pipelined, one batch per step covering every partition of the step), requests leave through the request
batches as SendRequest effects, broker channels are started/stopped with AddBrokerChannel / RemoveBrokerChannel, the
auto-rebalance timer is a Schedule / Cancel, follow-up events the controller enqueues itself are ``Enqueue(event)``
and state-change log records ``StateChange(record)``: the core names no actor.

ZooKeeper: reads and writes go through `self.zk_client` (core.zk_client.KafkaZkClient). Watches: Kafka registers
ZNodeChangeHandler / ZNodeChildChangeHandler objects per path and its ZooKeeperClient arms a watch on every read of a
path with a registered handler; `self.watches` (core.controller.zk_watches.ZkWatches) is that registry, and
`events_for_watch` maps a fired watch to the event the registered handler would enqueue.

Errors: a ControllerMovedError escaping an event → maybeResign(); any other exception is logged and swallowed.
No clock reads: the /controller timestamp comes from ``now_ms``, set by the caller before each event.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from core.controller.config import AUTO_LEADER_REBALANCE_INITIAL_DELAY_MS, AUTO_LEADER_REBALANCE_TIMER, ControllerConfig
from core.controller.context import ControllerContext
from core.controller.election import (
    ControlledShutdownPartitionLeaderElectionStrategy,
    OfflinePartitionLeaderElectionStrategy,
    PreferredReplicaPartitionLeaderElectionStrategy,
)
from core.controller.errors import ControllerMovedError, IllegalStateError, KeeperError, StateChangeFailedError
from core.controller.partition_state_machine import ZkPartitionStateMachine, ordered
from core.controller.reassignment import PartitionReassignment
from core.controller.replica_state_machine import ZkReplicaStateMachine
from core.controller.request_batch import (
    ControllerBrokerRequestBatch,
    stop_replica_partition_errors_for_deleting_topics,
)
from core.controller.states import (
    NewPartition,
    NewReplica,
    OfflinePartition,
    OfflineReplica,
    OnlinePartition,
    OnlineReplica,
    ReplicaDeletionSuccessful,
)
from core.controller.topic_deletion_client import ControllerDeletionClient, RemoteTopicDeletionManager, SentFacts
from core.controller.zk_watches import (
    CONTROLLER_CHILD_HANDLERS,
    ZkWatches,
    ZNodeChangeHandler,
    broker_modifications_handler,
    controller_change_handler,
    partition_modifications_handler,
    partition_reassignment_handler,
    preferred_replica_election_handler,
)
from core.effects import (
    AddBrokerChannel,
    BrokerEpochChanged,
    Cancel,
    Enqueue,
    Proc,
    RemoveBrokerChannel,
    Schedule,
    StateChange,
)
from core.zk_client import KafkaZkClient
from messages import controller_events as ev
from messages.broker_lifecycle import BrokerRegistered
from messages.common import (
    NO_LEADER,
    Broker,
    Errors,
    LeaderAndIsr,
    PartitionAndReplica,
    ReplicaAssignment,
    TopicPartition,
)
from messages.observability import ControllerChanged, ControllerGauges
from messages.requests import (
    ControlledShutdownResponse,
    LeaderAndIsrResponse,
    PartitionError,
    StopReplicaRequest,
    StopReplicaResponse,
    UpdateMetadataResponse,
)
from messages.zk import (
    CONNECTIONLOSS,
    OK,
    SESSIONEXPIRED,
    Exists,
    ZkSessionEvent,
    ZkWatchEvent,
)
from protocol.zk import paths

log = logging.getLogger("kactor.controller")
state_change_log = logging.getLogger("kactor.state.change")



class StaleBrokerEpochError(Exception):
    """Kafka's StaleBrokerEpochException."""


class BrokerNotAvailableError(Exception):
    """Kafka's BrokerNotAvailableException."""


def error_for_exception(e: BaseException) -> Errors:
    """Errors.forException for the exceptions the controller maps into responses."""
    if isinstance(e, ControllerMovedError):
        return Errors.STALE_CONTROLLER_EPOCH
    if isinstance(e, StaleBrokerEpochError):
        return Errors.STALE_BROKER_EPOCH
    if isinstance(e, BrokerNotAvailableError):
        return Errors.BROKER_NOT_AVAILABLE
    return Errors.UNKNOWN_SERVER_ERROR


class KafkaController:
    """One broker's controller module: candidate or active controller. See the module docstring."""

    def __init__(self, config: ControllerConfig, broker_epoch: int = -1) -> None:
        self.config = config
        self.broker_id = config.broker_id
        self.now_ms: float = 0.0
        self.broker_info: str | None = config.broker_registration
        self.broker_epoch = broker_epoch
        self.ctx = ControllerContext()
        self.active_controller_id = -1
        self._was_active = False
        self.broker_request_batch = ControllerBrokerRequestBatch(self.broker_id, self.ctx)
        # ZooKeeperClient's handler registry, and KafkaZkClient over it
        self.watches = ZkWatches()
        self.zk_client = KafkaZkClient(self.watches)
        self.replica_state_machine = ZkReplicaStateMachine(
            config, self.ctx, ControllerBrokerRequestBatch(self.broker_id, self.ctx), self.zk_client)
        self.partition_state_machine = ZkPartitionStateMachine(
            config, self.ctx, ControllerBrokerRequestBatch(self.broker_id, self.ctx), self.zk_client)
        # TopicDeletionManager runs in the TopicDeletionActor: the controller calls it and carries out its requests
        sent = SentFacts()
        self.topic_deletion_manager = RemoteTopicDeletionManager(config, self.ctx, sent)
        self.deletion_client = ControllerDeletionClient(self.ctx, self.replica_state_machine,
                                                        self.partition_state_machine, self, sent)
        self.reassignment = PartitionReassignment(self.ctx, self.broker_request_batch, self.replica_state_machine,
                                                  self.partition_state_machine, self.topic_deletion_manager,
                                                  self.zk_client, self)
        self._broker_modifications_handlers: set[int] = set()
        self._partition_modifications_handlers: set[str] = set()
        # ControllerChannelManager: the brokers that have a channel
        self._channels: set[int] = set()
        self._dispatch: dict[type, Callable[[Any], Proc[Any]]] = {
            ev.Startup: lambda e: self.process_startup(),
            ev.ControllerChange: lambda e: self.process_controller_change(),
            ev.Reelect: lambda e: self.process_reelect(),
            ev.RegisterBrokerAndReelect: lambda e: self.process_register_broker_and_reelect(),
            ev.Expire: lambda e: self.process_expire(),
            ev.ShutdownEventThread: lambda e: self.process_shutdown_event_thread(),
            ev.BrokerChange: lambda e: self.process_broker_change(),
            ev.BrokerModifications: lambda e: self.process_broker_modification(e.broker_id),
            ev.TopicChange: lambda e: self.process_topic_change(),
            ev.PartitionModifications: lambda e: self.process_partition_modifications(e.topic),
            ev.TopicDeletion: lambda e: self.process_topic_deletion(),
            ev.TopicDeletionStopReplicaResponseReceived:
                lambda e: self.process_topic_deletion_stop_replica_response_received(
                    e.replica_id, e.request_error, e.partition_errors),
            ev.ZkPartitionReassignment: lambda e: self.reassignment.process_zk_partition_reassignment(),
            ev.ApiPartitionReassignment: lambda e: self.reassignment.process_api_partition_reassignment(
                e.reassignments),
            ev.ListPartitionReassignments: lambda e: self.reassignment.process_list_partition_reassignments(
                e.partitions),
            ev.PartitionReassignmentIsrChange: lambda e: self.reassignment.process_partition_reassignment_isr_change(
                e.topic_partition),
            ev.IsrChangeNotification: lambda e: self.process_isr_change_notification(),
            ev.LogDirEventNotification: lambda e: self.process_log_dir_event_notification(),
            ev.ReplicaLeaderElection: lambda e: self.process_replica_leader_election(
                e.partitions, e.election_type, e.trigger),
            ev.AutoPreferredReplicaLeaderElection: lambda e: self.process_auto_preferred_replica_leader_election(),
            ev.UncleanLeaderElectionEnable: lambda e: self.process_unclean_leader_election_enable(),
            ev.TopicUncleanLeaderElectionEnable: lambda e: self.process_topic_unclean_leader_election_enable(e.topic),
            ev.ControlledShutdown: lambda e: self.process_controlled_shutdown(e.broker_id, e.broker_epoch),
            ev.LeaderAndIsrResponseReceived: lambda e: self.process_leader_and_isr_response_received(
                e.response, e.broker_id),
            ev.UpdateMetadataResponseReceived: lambda e: self.process_update_metadata_response_received(
                e.response, e.broker_id),
        }
        missing = set(ev.CONTROLLER_EVENT_TYPES) - set(self._dispatch)
        assert not missing, f"controller events without a process method: {missing}"

    # ================================================================================================================
    # public API (the ControllerActor's)
    # ================================================================================================================
    @property
    def is_active(self) -> bool:
        """KafkaController.isActive"""
        return self.active_controller_id == self.broker_id

    @property
    def epoch(self) -> int:
        return self.ctx.epoch

    def process(self, event: Any, now_ms: float | None = None) -> Proc[Any]:
        """KafkaController.process(event): dispatch on the event type (TypeError for an unknown type).

        Returns the reply of events that have one (ControlledShutdownResponse, election / reassignment results),
        else None. A ControllerMovedError → maybeResign(); any other exception is logged and swallowed (the reply is
        then the event's error reply).
        """
        handler = self._dispatch.get(type(event))
        if handler is None:
            raise TypeError(f"not a controller event: {type(event).__name__}")
        if now_ms is not None:
            self.now_ms = now_ms
        try:
            return (yield from handler(event))
        except GeneratorExit:
            raise
        except ControllerMovedError as e:
            log.info("Controller moved to another broker when processing %s: %s", type(event).__name__, e)
            yield from self.maybe_resign()
        except KeeperError as e:
            # A lost session (the ensemble stopping under us, as at a Ctrl-C of `kactor cluster`) is an expected
            # outcome, not a bug: one line, no stack. Other ZooKeeper codes keep their traceback.
            gone = e.code in (SESSIONEXPIRED, CONNECTIONLOSS)
            log.error("Error processing event %s: %s", type(event).__name__ if gone else event, e, exc_info=not gone)
        except Exception:
            log.error("Error processing event %s", event, exc_info=True)
        return self._error_reply(event)

    def _error_reply(self, event: Any) -> Any:
        if isinstance(event, ev.ControlledShutdown):
            return ControlledShutdownResponse(Errors.UNKNOWN_SERVER_ERROR)
        if isinstance(event, ev.ApiPartitionReassignment):
            return ev.AlterReassignmentsReply(Errors.UNKNOWN_SERVER_ERROR)
        if isinstance(event, ev.ListPartitionReassignments):
            return ev.ListReassignmentsReply(Errors.UNKNOWN_SERVER_ERROR)
        return None

    def controller_state(self, event: Any) -> str:
        """The ControllerState name of ``event`` (ControllerEvent.state)."""
        return ev.CONTROLLER_STATE_OF[type(event)]

    def events_for_watch(self, watch: ZkWatchEvent) -> list[Any]:
        """The events the handlers registered for ``watch.path`` enqueue (Kafka's ZooKeeperClient watcher)."""
        return self.watches.events_for_watch(watch)

    def events_for_session(self, session: ZkSessionEvent) -> list[Any]:
        """The controller's StateChangeHandler: EXPIRED → Expire (clearAndPut); REESTABLISHED →
        RegisterBrokerAndReelect."""
        if session.state == "EXPIRED":
            return [ev.Expire()]
        if session.state == "REESTABLISHED":
            return [ev.RegisterBrokerAndReelect()]
        return []

    def event_for_stop_replica_response(self, broker_id: int, request: StopReplicaRequest,
                                        response: StopReplicaResponse) -> Any:
        """The StopReplica response callback (sendStopReplicaRequests.responseCallback): the response's partition
        errors only, so a top-level error without partition errors (stale broker epoch, stale controller epoch) raises
        no event. TopicDeletionStopReplicaResponseReceived for the partitions of topics whose deletion started that
        were sent with deletePartition=true (None if there are none)."""
        errors = stop_replica_partition_errors_for_deleting_topics(self.ctx, request, response)
        if not errors:
            return None
        return ev.TopicDeletionStopReplicaResponseReceived(
            broker_id, response.error, tuple(PartitionError(tp, e) for tp, e in errors.items()))

    def gauges(self) -> ControllerGauges:
        """KafkaController.updateMetrics: the gauges (all 0 when not active)."""
        if not self.is_active:
            return ControllerGauges(False, 0, 0, 0, 0, 0, 0, 0)
        ctx = self.ctx
        replicas_to_delete = 0
        for topic in ctx.topics_to_be_deleted:
            replicas_to_delete += sum(1 for r in ctx.replicas_for_topic(topic)
                                      if ctx.replica_states.get(r) != ReplicaDeletionSuccessful)
        return ControllerGauges(
            active=True, controller_epoch=ctx.epoch, offline_partitions=ctx.offline_partition_count,
            preferred_replica_imbalance=ctx.preferred_replica_imbalance_count, global_topics=len(ctx.all_topics),
            global_partitions=ctx.partition_with_leaders_count(), topics_to_delete=len(ctx.topics_to_be_deleted),
            replicas_to_delete=replicas_to_delete)

    # ================================================================================================================
    # ZooKeeper access (self.zk_client; the handler registry is self.watches)
    # ================================================================================================================
    def register_node_handler(self, handler: ZNodeChangeHandler) -> None:
        """KafkaZkClient.registerZNodeChangeHandler"""
        self.watches.register_node_handler(handler)

    def unregister_node_handler(self, path: str) -> None:
        """KafkaZkClient.unregisterZNodeChangeHandler"""
        self.watches.unregister_node_handler(path)

    def register_node_handler_and_check_existence(self, handler: ZNodeChangeHandler) -> Proc[bool]:
        """registerZNodeChangeHandlerAndCheckExistence: register, then exists (arms a watch even on a missing node)."""
        self.register_node_handler(handler)
        return (yield from self.zk_client.register_znode_change_handler_and_check_existence(handler.path))

    def delete_topic_deletions(self, topics: Iterable[str], epoch_zk_version: int) -> Proc[None]:
        """ControllerDeletionClient.deleteTopicDeletions (fenced)."""
        yield from self.zk_client.delete_topic_deletions(topics, epoch_zk_version)

    def delete_topic(self, topic: str, epoch_zk_version: int) -> Proc[None]:
        """ControllerDeletionClient.deleteTopic, as TopicDeletionManager.completeDeleteTopic calls it: deleteTopicZNode
        (/brokers/topics/<t>, recursive), then deleteTopicConfigs (/config/topics/<t>), then deleteTopicDeletions
        (/admin/delete_topics/<t>), each fenced and each answered before the next is sent. The marker goes last, so
        a controller that fails in between leaves it and the next controller completes the deletion. As in
        KafkaZkClient.deleteRecursive, a recursive delete that fails other than NONODE throws."""
        yield from self.reassignment.remove_deleted_topic(topic)
        yield from self.zk_client.delete_topic_znode(topic, epoch_zk_version)
        yield from self.zk_client.delete_topic_configs((topic,), epoch_zk_version)
        yield from self.zk_client.delete_topic_deletions((topic,), epoch_zk_version)

    def mute_partition_modifications(self, topic: str) -> None:
        """ControllerDeletionClient.mutePartitionModifications."""
        self.unregister_partition_modifications_handlers((topic,))

    def send_metadata_update(self, partitions: Iterable[TopicPartition]) -> Proc[None]:
        """ControllerDeletionClient.sendMetadataUpdate."""
        yield from self.send_update_metadata_request(self.ctx.live_or_shutting_down_broker_ids(), partitions)

    # ================================================================================================================
    # election, resignation
    # ================================================================================================================
    def process_startup(self) -> Proc[None]:
        """processStartup: register the /controller handler (exists watch) and elect()."""
        yield from self.register_node_handler_and_check_existence(controller_change_handler())
        yield from self.elect()

    def process_controller_change(self) -> Proc[None]:
        """processControllerChange"""
        yield from self.maybe_resign()

    def process_reelect(self) -> Proc[None]:
        """processReelect"""
        yield from self.maybe_resign()
        yield from self.elect()

    def process_register_broker_and_reelect(self) -> Proc[None]:
        """processRegisterBrokerAndReelect: re-register /brokers/ids/<id> (new czxid = new broker epoch); reelect."""
        if self.broker_info is not None:
            r = yield from self.zk_client.register_broker(self.broker_id, self.broker_info)
            if r.code != OK:
                raise KeeperError(r.code, paths.BrokerIdZNode.path(self.broker_id))
            if r.stat is not None:
                self.broker_epoch = r.stat.czxid
                # the broker side learns its new epoch too (KafkaController.brokerEpoch is what KafkaApis checks
                # requests against), so a request from before the expiry is refused as stale
                yield BrokerEpochChanged(BrokerRegistered(self.broker_id, self.broker_epoch))
        else:
            log.warning("No broker registration to re-register for broker %d", self.broker_id)
        yield from self.process_reelect()

    def process_expire(self) -> Proc[None]:
        """processExpire"""
        self.active_controller_id = -1
        yield from self.on_controller_resignation()

    def process_shutdown_event_thread(self) -> Proc[None]:
        log.error("Received a ShutdownEventThread event. This type of event is supposed to be handle by "
                  "ControllerEventThread")
        return
        yield  # pragma: no cover

    def elect(self) -> Proc[None]:
        """KafkaController.elect (§2.1)."""
        self.active_controller_id = yield from self.zk_client.get_controller_id()
        if self.active_controller_id != -1:
            log.debug("Broker %d has been elected as the controller, so stopping the election process.",
                      self.active_controller_id)
            return
        try:
            epoch, epoch_zk_version = yield from self.zk_client.register_controller_and_increment_controller_epoch(
                self.broker_id, int(self.now_ms))
            self.ctx.epoch = epoch
            self.ctx.epoch_zk_version = epoch_zk_version
            self.active_controller_id = self.broker_id
            self._was_active = True
            log.info("%d successfully elected as the controller. Epoch incremented to %d and epoch zk version is now "
                     "%d", self.broker_id, epoch, epoch_zk_version)
            yield StateChange(ControllerChanged(self.broker_id, epoch, True))
            yield from self.on_controller_failover()
        except GeneratorExit:
            raise
        except ControllerMovedError:
            yield from self.maybe_resign()
            if self.active_controller_id != -1:
                log.debug("Broker %d was elected as controller instead of broker %d", self.active_controller_id,
                          self.broker_id)
            else:
                log.warning("A controller has been elected but just resigned, this will result in another round of "
                            "election")
        except Exception:
            log.error("Error while electing or becoming controller on broker %d. Trigger controller movement "
                      "immediately", self.broker_id, exc_info=True)
            yield from self.trigger_controller_move()

    def maybe_resign(self) -> Proc[None]:
        """KafkaController.maybeResign"""
        was_active = self.is_active
        yield from self.register_node_handler_and_check_existence(controller_change_handler())
        self.active_controller_id = yield from self.zk_client.get_controller_id()
        if was_active and not self.is_active:
            yield from self.on_controller_resignation()

    def trigger_controller_move(self) -> Proc[None]:
        """KafkaController.triggerControllerMove: resign and delete /controller (fenced by our epoch zkVersion)."""
        self.active_controller_id = yield from self.zk_client.get_controller_id()
        if not self.is_active:
            log.warning("Controller has already moved when trying to trigger controller movement")
            return
        try:
            expected = self.ctx.epoch_zk_version
            self.active_controller_id = -1
            yield from self.on_controller_resignation()
            yield from self.zk_client.delete_controller(expected)
        except ControllerMovedError:
            log.warning("Controller has already moved when trying to trigger controller movement")

    def handle_illegal_state(self, e: Exception) -> Proc[None]:
        """KafkaController.handleIllegalState: clear the batch, move the controller, rethrow."""
        log.error("Forcing the controller to resign")
        self.broker_request_batch.clear()
        yield from self.trigger_controller_move()
        raise e

    def on_controller_failover(self) -> Proc[None]:
        """KafkaController.onControllerFailover (2.6, §4.1)."""
        log.info("Registering handlers")
        for path, event in CONTROLLER_CHILD_HANDLERS:
            self.watches.register_child_handler(path, event)
        self.register_node_handler(preferred_replica_election_handler())
        self.register_node_handler(partition_reassignment_handler())
        # registerZNodeChangeHandlerAndCheckExistence of both, pipelined
        yield from self.zk_client.retry_requests_until_connected((
            Exists(paths.PreferredReplicaElectionZNode, True), Exists(paths.ReassignPartitionsZNode, True)))
        log.info("Deleting log dir event notifications and isr change notifications")
        yield from self.zk_client.delete_all_notifications(self.ctx.epoch_zk_version)
        log.info("Initializing controller context")
        yield from self.initialize_controller_context()
        log.info("Fetching topic deletions in progress")
        to_delete, ineligible = yield from self.fetch_topic_deletions_in_progress()
        log.info("Initializing topic deletion manager")
        yield from self.topic_deletion_manager.init(to_delete, ineligible)
        # brokers must learn the live brokers before the LeaderAndIsr requests of the state machines' startup
        log.info("Sending update metadata request")
        yield from self.send_update_metadata_request(self.ctx.live_or_shutting_down_broker_ids(), ())
        yield from self.replica_state_machine.startup()
        yield from self.partition_state_machine.startup()
        log.info("Ready to serve as the new controller with epoch %d", self.ctx.epoch)
        yield from self.reassignment.initialize_partition_reassignments()
        yield from self.topic_deletion_manager.try_topic_deletion()
        pending = yield from self.fetch_pending_preferred_replica_elections()
        yield from self.on_replica_election(pending, ev.PREFERRED, ev.ZK_TRIGGERED)
        if self.config.auto_leader_rebalance_enable:
            yield Schedule(AUTO_LEADER_REBALANCE_TIMER, AUTO_LEADER_REBALANCE_INITIAL_DELAY_MS)

    def on_controller_resignation(self) -> Proc[None]:
        """KafkaController.onControllerResignation (§2.5)."""
        log.debug("Resigning")
        for path in (paths.IsrChangeNotificationZNode, paths.LogDirEventNotificationZNode):
            self.watches.unregister_child_handler(path)
        self.unregister_node_handler(paths.ReassignPartitionsZNode)
        self.unregister_node_handler(paths.PreferredReplicaElectionZNode)
        self.unregister_broker_modifications_handler(list(self._broker_modifications_handlers))
        # shutdown leader rebalance scheduler
        yield Cancel(AUTO_LEADER_REBALANCE_TIMER)
        self.reassignment.unregister_partition_reassignment_isr_change_handlers()
        self.partition_state_machine.shutdown()
        self.watches.unregister_child_handler(paths.TopicsZNode)
        self.unregister_partition_modifications_handlers(list(self._partition_modifications_handlers))
        self.watches.unregister_child_handler(paths.DeleteTopicsZNode)
        self.replica_state_machine.shutdown()
        self.watches.unregister_child_handler(paths.BrokerIdsZNode)
        # controllerChannelManager.shutdown()
        for broker_id in sorted(self._channels):
            yield RemoveBrokerChannel(broker_id)
        self._channels.clear()
        self.broker_request_batch.clear()
        self.replica_state_machine.batch.clear()
        self.partition_state_machine.batch.clear()
        self.ctx.reset_context()
        if self._was_active:
            self._was_active = False
            yield StateChange(ControllerChanged(self.broker_id, -1, False))
        log.info("Resigned")

    # ================================================================================================================
    # handlers registry
    # ================================================================================================================
    def register_broker_modifications_handler(self, broker_ids: Iterable[int]) -> None:
        """registerBrokerModificationsHandler (the data watches are armed by the reads of the registrations)."""
        for b in broker_ids:
            self.register_node_handler(broker_modifications_handler(b))
            self._broker_modifications_handlers.add(b)

    def unregister_broker_modifications_handler(self, broker_ids: Iterable[int]) -> None:
        for b in broker_ids:
            if b in self._broker_modifications_handlers:
                self._broker_modifications_handlers.discard(b)
                self.unregister_node_handler(paths.BrokerIdZNode.path(b))

    def register_partition_modifications_handlers(self, topics: Iterable[str]) -> None:
        """registerPartitionModificationsHandlers. Kafka 2.6's controller does not watch /config/topics/<t>: a
        topic's unclean.leader.election.enable becoming true reaches it as TopicUncleanLeaderElectionEnable from the
        broker's config manager (TopicConfigHandler)."""
        for t in topics:
            self.register_node_handler(partition_modifications_handler(t))
            self._partition_modifications_handlers.add(t)

    def unregister_partition_modifications_handlers(self, topics: Iterable[str]) -> None:
        for t in topics:
            if t in self._partition_modifications_handlers:
                self._partition_modifications_handlers.discard(t)
                self.unregister_node_handler(paths.TopicZNode.path(t))

    # ================================================================================================================
    # context initialisation
    # ================================================================================================================
    def initialize_controller_context(self) -> Proc[None]:
        """KafkaController.initializeControllerContext (§4.2)."""
        ctx = self.ctx
        brokers = yield from self.zk_client.get_all_broker_and_epochs_in_cluster()
        ctx.set_live_brokers({b: b.epoch for b in brokers.values()})
        log.info("Initialized broker epochs cache: %s", ctx.live_broker_id_and_epochs())
        topics = yield from self.zk_client.get_all_topics_in_cluster()
        ctx.set_all_topics(topics)
        self.register_partition_modifications_handlers(topics)
        assignments = yield from self.zk_client.get_full_replica_assignment_for_topics(ordered(set(topics)))
        for tp, assignment in assignments.items():
            ctx.update_partition_full_replica_assignment(tp, assignment)
            if assignment.is_being_reassigned:
                ctx.partitions_being_reassigned.add(tp)
        ctx.clear_partition_leadership_info()
        ctx.shutting_down_broker_ids.clear()
        self.register_broker_modifications_handler(ctx.live_or_shutting_down_broker_ids())
        yield from self.update_leader_and_isr_cache()
        # controllerChannelManager.startup()
        for broker in ctx.live_or_shutting_down_brokers():
            yield from self._add_channel(broker)
        log.info("Currently active brokers in the cluster: %s", sorted(ctx.live_broker_ids()))
        log.info("Current list of topics in the cluster: %d topics", len(ctx.all_topics))

    def _add_channel(self, broker: Broker) -> Proc[None]:
        self._channels.add(broker.id)
        yield AddBrokerChannel(broker)

    def _remove_channel(self, broker_id: int) -> Proc[None]:
        self._channels.discard(broker_id)
        yield RemoveBrokerChannel(broker_id)

    def update_leader_and_isr_cache(self, partitions: Iterable[TopicPartition] | None = None) -> Proc[None]:
        """updateLeaderAndIsrCache: read the state znodes (all partitions by default) into the context."""
        parts = list(self.ctx.iter_all_partitions()) if partitions is None else ordered(partitions)
        states = yield from self.zk_client.get_topic_partition_states(ordered(parts))
        for tp, info in states.items():
            self.ctx.put_partition_leadership_info(tp, info)

    def fetch_topic_deletions_in_progress(self) -> Proc[tuple[set[str], set[str]]]:
        """fetchTopicDeletionsInProgress: (queued topics, topics with an offline replica or being reassigned)."""
        ctx = self.ctx
        to_delete = set((yield from self.zk_client.get_topic_deletions()))
        with_offline: set[str] = set()
        for tp in ctx.iter_all_partitions():
            if tp.topic in with_offline:
                continue
            if any(not ctx.is_replica_online(r, tp) for r in ctx.partition_replica_assignment(tp)):
                with_offline.add(tp.topic)
        reassigning = {tp.topic for tp in ctx.partitions_being_reassigned}
        ineligible = with_offline | reassigning
        log.info("List of topics to be deleted: %s", ",".join(sorted(to_delete)))
        log.info("List of topics ineligible for deletion: %s", ",".join(sorted(ineligible)))
        return to_delete, ineligible

    def fetch_pending_preferred_replica_elections(self) -> Proc[set[TopicPartition]]:
        """fetchPendingPreferredReplicaElections: the znode's partitions that are not yet led by their preferred
        replica, of existing topics not queued for deletion."""
        undergoing = yield from self.zk_client.get_preferred_replica_election()
        ctx = self.ctx
        pending: set[TopicPartition] = set()
        for tp in undergoing:
            replicas = ctx.partition_replica_assignment(tp)
            if not replicas:
                continue  # topic deleted
            info = ctx.partition_leadership_info(tp)
            if info is not None and info.leader_and_isr.leader == replicas[0]:
                continue  # completed
            if self.topic_deletion_manager.is_topic_queued_up_for_deletion(tp.topic):
                continue
            pending.add(tp)
        log.info("Resuming preferred replica election for partitions: %s", sorted(pending))
        return pending

    # ================================================================================================================
    # requests
    # ================================================================================================================
    def send_update_metadata_request(self, brokers: Iterable[int], partitions: Iterable[TopicPartition]) -> Proc[None]:
        """KafkaController.sendUpdateMetadataRequest"""
        try:
            self.broker_request_batch.new_batch()
            self.broker_request_batch.add_update_metadata_request_for_brokers(sorted(brokers), ordered(partitions))
            yield from self.broker_request_batch.send_requests_to_brokers(self.ctx.epoch)
        except IllegalStateError as e:
            yield from self.handle_illegal_state(e)

    # ================================================================================================================
    # broker lifecycle
    # ================================================================================================================
    def on_broker_log_dir_failure(self, broker_ids: Iterable[int]) -> Proc[None]:
        """onBrokerLogDirFailure: all replicas on those brokers → OnlineReplica (LeaderAndIsr probes the dirs)."""
        ids = sorted(set(broker_ids))
        log.info("Handling log directory failure for brokers %s", ids)
        replicas = self.ctx.replicas_on_brokers(ids)
        yield from self.replica_state_machine.handle_state_changes(replicas, OnlineReplica)

    def on_broker_startup(self, new_brokers: list[int]) -> Proc[None]:
        """KafkaController.onBrokerStartup (Kafka 2.6, §4.3 and reference Corrections 4)."""
        log.info("New broker startup callback for %s", ",".join(map(str, new_brokers)))
        ctx = self.ctx
        for b in new_brokers:
            ctx.replicas_on_offline_dirs.pop(b, None)
        new_set = set(new_brokers)
        existing = ctx.live_or_shutting_down_broker_ids() - new_set
        yield from self.send_update_metadata_request(existing, ())
        # every partition with a leadership record, those of topics queued for deletion included (2.6's
        # partitionLeadershipInfo.keySet; they go out with leader -2 so the new broker drops them)
        yield from self.send_update_metadata_request(new_brokers, ctx.partitions_leadership_info().keys())
        all_replicas_on_new = ctx.replicas_on_brokers(new_set)
        yield from self.replica_state_machine.handle_state_changes(all_replicas_on_new, OnlineReplica)
        yield from self.partition_state_machine.trigger_online_partition_state_change()
        yield from self.reassignment.maybe_resume_reassignments(
            lambda tp, assignment: any(r in new_set for r in assignment.target_replicas))
        to_delete = {r.topic_partition.topic for r in all_replicas_on_new
                     if self.topic_deletion_manager.is_topic_queued_up_for_deletion(r.topic_partition.topic)}
        if to_delete:
            log.info("Some replicas for topics scheduled for deletion %s are on the newly restarted brokers %s. "
                     "Signaling restart of topic deletion for these topics", sorted(to_delete), new_brokers)
            yield from self.topic_deletion_manager.resume_deletion_for_topics(to_delete)
        self.register_broker_modifications_handler(new_brokers)

    def on_broker_failure(self, dead_brokers: list[int]) -> Proc[None]:
        """KafkaController.onBrokerFailure (§4.4)."""
        log.info("Broker failure callback for %s", ",".join(map(str, dead_brokers)))
        ctx = self.ctx
        for b in dead_brokers:
            ctx.replicas_on_offline_dirs.pop(b, None)
        was_shutting_down = [b for b in dead_brokers if b in ctx.shutting_down_broker_ids]
        ctx.shutting_down_broker_ids.difference_update(dead_brokers)
        if was_shutting_down:
            log.info("Removed %s from list of shutting down brokers.", was_shutting_down)
        yield from self.on_replicas_become_offline(ctx.replicas_on_brokers(dead_brokers))
        self.unregister_broker_modifications_handler(dead_brokers)

    def on_broker_update(self, updated_broker_id: int) -> Proc[None]:
        """onBrokerUpdate"""
        log.info("Broker info update callback for %d", updated_broker_id)
        yield from self.send_update_metadata_request(self.ctx.live_or_shutting_down_broker_ids(), ())

    def on_replicas_become_offline(self, new_offline_replicas: Iterable[PartitionAndReplica]) -> Proc[None]:
        """KafkaController.onReplicasBecomeOffline (2.6, §4.5)."""
        tdm = self.topic_deletion_manager
        replicas = ordered(set(new_offline_replicas))
        for_deletion = [r for r in replicas if tdm.is_topic_queued_up_for_deletion(r.topic_partition.topic)]
        not_for_deletion = [r for r in replicas if not tdm.is_topic_queued_up_for_deletion(r.topic_partition.topic)]
        partitions_with_offline_leader = self.ctx.partitions_with_offline_leader()
        yield from self.partition_state_machine.handle_state_changes(partitions_with_offline_leader, OfflinePartition)
        yield from self.partition_state_machine.trigger_online_partition_state_change()
        yield from self.replica_state_machine.handle_state_changes(not_for_deletion, OfflineReplica)
        if for_deletion:
            yield from tdm.fail_replica_deletion(for_deletion)
        if not partitions_with_offline_leader:
            yield from self.send_update_metadata_request(self.ctx.live_or_shutting_down_broker_ids(), ())

    def on_new_partition_creation(self, new_partitions: Iterable[TopicPartition]) -> Proc[None]:
        """KafkaController.onNewPartitionCreation (§4.6)."""
        partitions = ordered(set(new_partitions))
        log.info("New partition creation callback for %d partitions", len(partitions))
        psm, rsm = self.partition_state_machine, self.replica_state_machine
        yield from psm.handle_state_changes(partitions, NewPartition)
        yield from rsm.handle_state_changes(self.ctx.replicas_for_partition(partitions), NewReplica)
        yield from psm.handle_state_changes(partitions, OnlinePartition, OfflinePartitionLeaderElectionStrategy(False))
        yield from rsm.handle_state_changes(self.ctx.replicas_for_partition(partitions), OnlineReplica)

    def process_broker_change(self) -> Proc[None]:
        """processBrokerChange: new / dead / bounced (czxid grew) brokers (§3.4)."""
        if not self.is_active:
            return
        ctx = self.ctx
        current = yield from self.zk_client.get_all_broker_and_epochs_in_cluster()
        cur_ids = set(current)
        known = ctx.live_or_shutting_down_broker_ids()
        known_epochs = ctx.live_broker_id_and_epochs()
        new_ids = sorted(cur_ids - known)
        dead_ids = sorted(known - cur_ids)
        bounced_ids = sorted(b for b in cur_ids & known if current[b].epoch > known_epochs[b])
        log.info("Newly added brokers: %s, deleted brokers: %s, bounced brokers: %s, all live brokers: %s",
                 new_ids, dead_ids, bounced_ids, sorted(cur_ids))
        for b in new_ids:
            yield from self._add_channel(current[b])
        for b in bounced_ids:
            yield from self._remove_channel(b)
        for b in bounced_ids:
            yield from self._add_channel(current[b])
        for b in dead_ids:
            yield from self._remove_channel(b)
        if new_ids:
            ctx.add_live_brokers({current[b]: current[b].epoch for b in new_ids})
            yield from self.on_broker_startup(new_ids)
        if bounced_ids:
            ctx.remove_live_brokers(bounced_ids)
            yield from self.on_broker_failure(bounced_ids)
            ctx.add_live_brokers({current[b]: current[b].epoch for b in bounced_ids})
            yield from self.on_broker_startup(bounced_ids)
        if dead_ids:
            ctx.remove_live_brokers(dead_ids)
            yield from self.on_broker_failure(dead_ids)

    def process_broker_modification(self, broker_id: int) -> Proc[None]:
        """processBrokerModification: a changed registration (endpoints) → UpdateMetadata to every broker."""
        if not self.is_active:
            return
        new = yield from self.zk_client.get_broker(broker_id)
        if new is None:
            return
        old = self.ctx.live_or_shutting_down_broker(broker_id)
        if old is not None and new.endpoints != old.endpoints:
            log.info("Updated broker metadata: %s -> %s", old, new)
            self.ctx.update_broker_metadata(old, attrs.evolve(new, epoch=old.epoch))
            yield from self.on_broker_update(broker_id)

    # ================================================================================================================
    # topics
    # ================================================================================================================
    def process_topic_change(self) -> Proc[None]:
        """processTopicChange: new topics → onNewPartitionCreation; deleted topics leave the context."""
        if not self.is_active:
            return
        ctx = self.ctx
        topics = set((yield from self.zk_client.get_all_topics_in_cluster()))
        new_topics = topics - ctx.all_topics
        deleted = ctx.all_topics - topics
        ctx.set_all_topics(topics)
        self.register_partition_modifications_handlers(sorted(new_topics))
        added = yield from self.zk_client.get_full_replica_assignment_for_topics(ordered(new_topics))
        for t in sorted(deleted):
            ctx.remove_topic(t)
        for tp, assignment in added.items():
            ctx.update_partition_full_replica_assignment(tp, assignment)
        log.info("New topics: [%s], deleted topics: [%s], %d new partitions", ",".join(sorted(new_topics)),
                 ",".join(sorted(deleted)), len(added))
        if added:
            yield from self.on_new_partition_creation(added.keys())

    def process_partition_modifications(self, topic: str) -> Proc[None]:
        """processPartitionModifications: new partitions of an existing topic (reverted while it is being deleted)."""
        if not self.is_active:
            return
        ctx = self.ctx
        assignment = yield from self.zk_client.get_full_replica_assignment_for_topics((topic,))
        to_add = {tp: a for tp, a in assignment.items() if not ctx.partition_replica_assignment(tp)}
        if self.topic_deletion_manager.is_topic_queued_up_for_deletion(topic):
            if to_add:
                log.warning("Skipping adding partitions %s for topic %s since it is currently being deleted",
                            ",".join(str(tp.partition) for tp in sorted(to_add)), topic)
                yield from self._restore_partition_replica_assignment(topic, assignment)
            else:
                log.info("Ignoring partition change during topic deletion as no new partitions are added")
        elif to_add:
            log.info("New partitions to be added %s", sorted(to_add))
            for tp, a in to_add.items():
                ctx.update_partition_full_replica_assignment(tp, a)
            yield from self.on_new_partition_creation(to_add.keys())

    def _restore_partition_replica_assignment(self, topic: str,
                                              new_assignment: Mapping[TopicPartition, ReplicaAssignment]) -> Proc[None]:
        """restorePartitionReplicaAssignment: rewrite the topic znode with the partitions that exist (fenced)."""
        log.info("Restoring the partition replica assignment for topic %s", topic)
        existing = set((yield from self.zk_client.get_topic_partitions(topic)))
        restored = {tp: self.ctx.partition_full_replica_assignment(tp) for tp in new_assignment
                    if str(tp.partition) in existing}
        yield from self.zk_client.set_topic_assignment_raw(topic, restored, self.ctx.epoch_zk_version)

    def process_topic_deletion(self) -> Proc[None]:
        """processTopicDeletion (§3.4)."""
        if not self.is_active:
            return
        ctx = self.ctx
        to_delete = set((yield from self.zk_client.get_topic_deletions()))
        non_existent = to_delete - ctx.all_topics
        if non_existent:
            log.warning("Ignoring request to delete non-existing topics %s", ",".join(sorted(non_existent)))
            yield from self.delete_topic_deletions(sorted(non_existent), ctx.epoch_zk_version)
        to_delete -= non_existent
        if self.config.delete_topic_enable:
            if to_delete:
                log.info("Starting topic deletion for topics %s", ",".join(sorted(to_delete)))
                reassigning = {tp.topic for tp in ctx.partitions_being_reassigned}
                for t in sorted(to_delete & reassigning):
                    yield from self.topic_deletion_manager.mark_topic_ineligible_for_deletion(
                        {t}, "topic reassignment in progress")
                yield from self.topic_deletion_manager.enqueue_topics_for_deletion(to_delete)
        else:
            log.info("Removing %s since delete topic is disabled", sorted(to_delete))
            yield from self.delete_topic_deletions(sorted(to_delete), ctx.epoch_zk_version)

    def process_topic_deletion_stop_replica_response_received(
            self, replica_id: int, request_error: Errors, partition_errors: Iterable[PartitionError]) -> Proc[None]:
        """processTopicDeletionStopReplicaResponseReceived"""
        if not self.is_active:
            return
        errors = {pe.topic_partition: pe.error for pe in partition_errors}
        if request_error != Errors.NONE:
            in_error = set(errors)
        else:
            in_error = {tp for tp, e in errors.items() if e is not Errors.NONE}
        yield from self.topic_deletion_manager.fail_replica_deletion(
            PartitionAndReplica(tp, replica_id) for tp in in_error)
        if len(in_error) != len(errors):
            deleted = set(errors) - in_error
            yield from self.topic_deletion_manager.complete_replica_deletion(
                PartitionAndReplica(tp, replica_id) for tp in deleted)

    # ================================================================================================================
    # notifications
    # ================================================================================================================
    def process_isr_change_notification(self) -> Proc[None]:
        """processIsrChangeNotification: refresh the listed partitions' leader/ISR from ZooKeeper, UpdateMetadata
        for them to every broker; finally delete the processed notifications (fenced)."""
        if not self.is_active:
            return
        zk = self.zk_client
        children = yield from zk.get_all_isr_change_notifications()
        partitions = yield from zk.get_partitions_from_isr_change_notifications(children)
        try:
            if partitions:
                yield from self.update_leader_and_isr_cache(partitions)
                yield from self.send_update_metadata_request(self.ctx.live_or_shutting_down_broker_ids(), partitions)
        except GeneratorExit:
            raise
        except BaseException:
            yield from zk.delete_isr_change_notifications(children, self.ctx.epoch_zk_version)
            raise
        yield from zk.delete_isr_change_notifications(children, self.ctx.epoch_zk_version)

    def process_log_dir_event_notification(self) -> Proc[None]:
        """processLogDirEventNotification: LeaderAndIsr probes for every replica on the brokers that reported a log dir
        failure; finally delete the processed notifications (fenced)."""
        if not self.is_active:
            return
        zk = self.zk_client
        children = yield from zk.get_all_log_dir_event_notifications()
        broker_ids = yield from zk.get_broker_ids_from_log_dir_events(children)
        try:
            yield from self.on_broker_log_dir_failure(broker_ids)
        except GeneratorExit:
            raise
        except BaseException:
            yield from zk.delete_log_dir_event_notifications(children, self.ctx.epoch_zk_version)
            raise
        yield from zk.delete_log_dir_event_notifications(children, self.ctx.epoch_zk_version)

    # ================================================================================================================
    # leader elections
    # ================================================================================================================
    def on_replica_election(self, partitions: Iterable[TopicPartition], election_type: str, trigger: str
                            ) -> Proc[dict[TopicPartition, LeaderAndIsr | Exception]]:
        """onReplicaElection: PREFERRED → PreferredReplica strategy, UNCLEAN → Offline(allowUnclean = admin).
        Non-admin triggers rethrow ControllerMoved and (unless AutoTriggered) delete the preferred election znode
        and re-enqueue ReplicaLeaderElection(None, PREFERRED, ZkTriggered) to re-arm its watch."""
        parts = ordered(set(partitions))
        log.info("Starting replica leader election (%s) for %d partitions triggered by %s", election_type,
                 len(parts), trigger)
        try:
            if election_type == ev.PREFERRED:
                strategy: Any = PreferredReplicaPartitionLeaderElectionStrategy()
            else:
                strategy = OfflinePartitionLeaderElectionStrategy(trigger == ev.ADMIN_CLIENT_TRIGGERED)
            results = yield from self.partition_state_machine.handle_state_changes(parts, OnlinePartition, strategy)
            if trigger != ev.ADMIN_CLIENT_TRIGGERED:
                for tp, r in results.items():
                    if isinstance(r, ControllerMovedError):
                        raise r
                    if isinstance(r, Exception):
                        log.error("Error completing replica leader election (%s) for partition %s: %s",
                                  election_type, tp, r)
        except GeneratorExit:
            raise
        except BaseException:
            if trigger != ev.ADMIN_CLIENT_TRIGGERED:
                yield from self.remove_partitions_from_preferred_replica_election(
                    parts, trigger == ev.AUTO_TRIGGERED)
            raise
        if trigger != ev.ADMIN_CLIENT_TRIGGERED:
            yield from self.remove_partitions_from_preferred_replica_election(parts, trigger == ev.AUTO_TRIGGERED)
        return results

    def remove_partitions_from_preferred_replica_election(self, partitions: Iterable[TopicPartition],
                                                          is_triggered_by_auto_rebalance: bool) -> Proc[None]:
        """removePartitionsFromPreferredReplicaElection"""
        for tp in partitions:
            info = self.ctx.partition_leadership_info(tp)
            replicas = self.ctx.partition_replica_assignment(tp)
            if info is None or not replicas:
                continue
            if info.leader_and_isr.leader == replicas[0]:
                log.info("Partition %s completed preferred replica leader election. New leader is %d", tp, replicas[0])
            else:
                log.warning("Partition %s failed to complete preferred replica leader election to %d. Leader is still "
                            "%d", tp, replicas[0], info.leader_and_isr.leader)
        if not is_triggered_by_auto_rebalance:
            yield from self.zk_client.delete_preferred_replica_election(self.ctx.epoch_zk_version)
            # Ensure we detect future preferred replica leader elections
            yield Enqueue(ev.ReplicaLeaderElection(None, ev.PREFERRED, ev.ZK_TRIGGERED))

    def process_replica_leader_election(self, partitions_opt: tuple[TopicPartition, ...] | None, election_type: str,
                                        trigger: str) -> Proc[tuple[ev.ReplicaElectionResult, ...]]:
        """processReplicaLeaderElection (§3.4); the reply is one ReplicaElectionResult per requested partition."""
        if not self.is_active:
            return tuple(ev.ReplicaElectionResult(tp, Errors.NOT_CONTROLLER) for tp in (partitions_opt or ()))
        if trigger != ev.ADMIN_CLIENT_TRIGGERED:
            exists = yield from self.register_node_handler_and_check_existence(
                preferred_replica_election_handler())
            if not exists:
                return ()
        if partitions_opt is not None:
            partitions = set(partitions_opt)
        else:
            partitions = yield from self.zk_client.get_preferred_replica_election()
        ctx = self.ctx
        known = {tp for tp in partitions if ctx.partition_replica_assignment(tp)}
        unknown = partitions - known
        for tp in sorted(unknown):
            log.info("Skipping replica leader election (%s) for partition %s by %s since it doesn't exist.",
                     election_type, tp, trigger)
        being_deleted = {tp for tp in known if self.topic_deletion_manager.is_topic_queued_up_for_deletion(tp.topic)}
        if being_deleted:
            log.warning("Skipping replica leader election (%s) for partitions %s by %s since the respective topics "
                        "are being deleted", election_type, sorted(being_deleted), trigger)
        live = known - being_deleted
        electable: set[TopicPartition] = set()
        already_valid: set[TopicPartition] = set()
        for tp in live:
            info = ctx.partition_leadership_info(tp)
            leader = info.leader_and_isr.leader if info is not None else NO_LEADER
            if election_type == ev.PREFERRED:
                needs = leader != ctx.partition_replica_assignment(tp)[0]
            else:
                needs = leader == NO_LEADER or leader not in ctx.live_broker_ids()
            (electable if needs else already_valid).add(tp)
        results = yield from self.on_replica_election(electable, election_type, trigger)
        out: list[ev.ReplicaElectionResult] = []
        for tp, r in sorted(results.items()):
            if isinstance(r, StateChangeFailedError):
                err = (Errors.PREFERRED_LEADER_NOT_AVAILABLE if election_type == ev.PREFERRED
                       else Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE)
                out.append(ev.ReplicaElectionResult(tp, err, message=str(r)))
            elif isinstance(r, Exception):
                out.append(ev.ReplicaElectionResult(tp, error_for_exception(r), message=str(r)))
            else:
                out.append(ev.ReplicaElectionResult(tp, Errors.NONE, leader=r.leader))
        out.extend(ev.ReplicaElectionResult(tp, Errors.ELECTION_NOT_NEEDED) for tp in sorted(already_valid))
        out.extend(ev.ReplicaElectionResult(tp, Errors.INVALID_TOPIC_EXCEPTION, message="The topic is being deleted")
                   for tp in sorted(being_deleted))
        out.extend(ev.ReplicaElectionResult(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION,
                                            message="The partition does not exist.") for tp in sorted(unknown))
        return tuple(out)

    def process_auto_preferred_replica_leader_election(self) -> Proc[None]:
        """processAutoPreferredReplicaLeaderElection: check, then (always) reschedule."""
        if not self.is_active:
            return
        try:
            log.info("Processing automatic preferred replica leader election")
            yield from self.check_and_trigger_auto_leader_rebalance()
        except GeneratorExit:
            raise
        except BaseException:
            yield Schedule(AUTO_LEADER_REBALANCE_TIMER, self.config.leader_imbalance_check_interval_ms)
            raise
        yield Schedule(AUTO_LEADER_REBALANCE_TIMER, self.config.leader_imbalance_check_interval_ms)

    def check_and_trigger_auto_leader_rebalance(self) -> Proc[None]:
        """checkAndTriggerAutoLeaderRebalance (Kafka 2.6, §8.5 and reference Corrections 11): per preferred broker, if
        the share of its partitions not led by it is > leader.imbalance.per.broker.percentage, onReplicaElection for
        those whose preferred replica is online (one election, one request batch, per imbalanced broker), only while
        no partition is being reassigned."""
        ctx = self.ctx
        tdm = self.topic_deletion_manager
        by_preferred: dict[int, list[TopicPartition]] = {}
        for tp in ctx.iter_all_partitions():
            if tdm.is_topic_queued_up_for_deletion(tp.topic):
                continue
            replicas = ctx.partition_replica_assignment(tp)
            if replicas:
                by_preferred.setdefault(replicas[0], []).append(tp)
        threshold = self.config.leader_imbalance_per_broker_percentage / 100
        for broker, tps in sorted(by_preferred.items()):
            not_preferred = [tp for tp in tps if (info := ctx.partition_leadership_info(tp)) is not None
                             and info.leader_and_isr.leader != broker]
            ratio = len(not_preferred) / len(tps)
            log.debug("Leader imbalance ratio for broker %d is %f", broker, ratio)
            if ratio > threshold:
                candidates = [tp for tp in not_preferred
                              if ctx.is_replica_online(broker, tp)
                              and not ctx.partitions_being_reassigned
                              and not tdm.is_topic_queued_up_for_deletion(tp.topic)
                              and tp.topic in ctx.all_topics]
                yield from self.on_replica_election(candidates, ev.PREFERRED, ev.AUTO_TRIGGERED)

    def process_unclean_leader_election_enable(self) -> Proc[None]:
        """processUncleanLeaderElectionEnable"""
        if not self.is_active:
            return
        log.info("Unclean leader election has been enabled by default")
        yield from self.partition_state_machine.trigger_online_partition_state_change()

    def process_topic_unclean_leader_election_enable(self, topic: str) -> Proc[None]:
        """processTopicUncleanLeaderElectionEnable: the broker's TopicConfigHandler saw the topic's
        unclean.leader.election.enable become true; offline partitions of the topic are elected again (the election
        reads the topic's config itself, ZkPartitionStateMachine.collectUncleanLeaderElectionState)."""
        if not self.is_active:
            return
        log.info("Unclean leader election has been enabled for topic %s", topic)
        yield from self.partition_state_machine.trigger_online_partition_state_change(topic)

    # ================================================================================================================
    # controlled shutdown
    # ================================================================================================================
    def process_controlled_shutdown(self, broker_id: int, broker_epoch: int) -> Proc[ControlledShutdownResponse]:
        """processControlledShutdown: Try(doControlledShutdown) → the response (exceptions become error codes)."""
        try:
            remaining = yield from self.do_controlled_shutdown(broker_id, broker_epoch)
        except GeneratorExit:
            raise
        except Exception as e:
            log.info("Controlled shutdown of broker %d failed: %s", broker_id, e)
            return ControlledShutdownResponse(error_for_exception(e))
        return ControlledShutdownResponse(Errors.NONE, tuple(sorted(remaining)))

    def do_controlled_shutdown(self, broker_id: int, broker_epoch: int) -> Proc[set[TopicPartition]]:
        """doControlledShutdown (§4.7): move leadership off the broker, StopReplica + OfflineReplica for the replicas
        it follows; returns the partitions it still leads."""
        if not self.is_active:
            raise ControllerMovedError("Controller moved to another broker. Aborting controlled shutdown")
        ctx = self.ctx
        if broker_epoch != -1 and ctx.is_live_or_shutting_down(broker_id):
            cached = ctx.live_broker_epoch(broker_id)
            if broker_epoch < cached:
                msg = (f"Received controlled shutdown request from an old broker epoch {broker_epoch} for broker "
                       f"{broker_id}. Current broker epoch is {cached}.")
                log.info(msg)
                raise StaleBrokerEpochError(msg)
        log.info("Shutting down broker %d", broker_id)
        if not ctx.is_live_or_shutting_down(broker_id):
            raise BrokerNotAvailableError(f"Broker id {broker_id} does not exist.")
        ctx.shutting_down_broker_ids.add(broker_id)
        to_act_on = [tp for tp in ordered(ctx.partitions_on_broker(broker_id))  # sorted by (topic, partition) key
                     if len(ctx.partition_replica_assignment(tp)) > 1
                     and ctx.partition_leadership_info(tp) is not None
                     and not self.topic_deletion_manager.is_topic_queued_up_for_deletion(tp.topic)]
        led: list[TopicPartition] = []
        followed: list[TopicPartition] = []
        for tp in to_act_on:
            info = ctx.partition_leadership_info(tp)
            (led if info is not None and info.leader_and_isr.leader == broker_id else followed).append(tp)
        yield from self.partition_state_machine.handle_state_changes(
            led, OnlinePartition, ControlledShutdownPartitionLeaderElectionStrategy())
        try:
            self.broker_request_batch.new_batch()
            for tp in followed:
                self.broker_request_batch.add_stop_replica_request_for_brokers((broker_id,), tp, False)
            yield from self.broker_request_batch.send_requests_to_brokers(ctx.epoch)
        except IllegalStateError as e:
            yield from self.handle_illegal_state(e)
        yield from self.replica_state_machine.handle_state_changes(
            [PartitionAndReplica(tp, broker_id) for tp in followed], OfflineReplica)
        return ctx.partition_leaders_on_broker(broker_id)

    # ================================================================================================================
    # broker responses
    # ================================================================================================================
    def process_leader_and_isr_response_received(self, response: LeaderAndIsrResponse, broker_id: int) -> Proc[None]:
        """processLeaderAndIsrResponseReceived: KAFKA_STORAGE_ERROR partitions are on an offline log dir."""
        if not self.is_active:
            return
        if response.error != Errors.NONE:
            state_change_log.error("Received error %s in LeaderAndIsr response %s from broker %d", response.error,
                                   response, broker_id)
            return
        offline = {pe.topic_partition for pe in response.partition_errors if pe.error == Errors.KAFKA_STORAGE_ERROR}
        online = {pe.topic_partition for pe in response.partition_errors if pe.error == Errors.NONE}
        previous = self.ctx.replicas_on_offline_dirs.get(broker_id, set())
        current = (previous - online) | offline
        self.ctx.replicas_on_offline_dirs[broker_id] = current
        new_offline = current - previous
        if new_offline:
            state_change_log.info("Mark replicas %s on broker %d as offline", sorted(new_offline), broker_id)
            yield from self.on_replicas_become_offline(PartitionAndReplica(tp, broker_id) for tp in new_offline)

    def process_update_metadata_response_received(self, response: UpdateMetadataResponse,
                                                  broker_id: int) -> Proc[None]:
        """processUpdateMetadataResponseReceived: log an error response."""
        if not self.is_active:
            return
        if response.error != Errors.NONE:
            state_change_log.error("Received error %s in UpdateMetadata response %s from broker %d", response.error,
                                   response, broker_id)
        return
        yield  # pragma: no cover
