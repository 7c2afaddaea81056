"""ControllerActor: Kafka's controller event thread. Its mailbox is the controller event queue.

Inputs (ZooKeeper watches and session changes, broker responses, timers, controlled-shutdown requests) become
controller events and wait in a FIFO; one event is processed at a time by the functional core
(core.controller.kafka_controller.KafkaController.process), even across ZooKeeper round trips, exactly as
Kafka's single controller-event-thread. Queue time and processing time of each event are recorded
(Kafka's EventQueueTimeMs and per-state RateAndTimeMs) as ControllerEventProcessed messages to "metrics".

Topic deletion is the TopicDeletionActor's: an event's procedure that calls the deletion manager waits for its reply
as it waits for ZooKeeper (a TopicDeletionRequest, answered by a TopicDeletionReply), and meanwhile the controller
carries out what the deletion actor asks of it (ControllerInstructionRequest: state transitions, znode deletes) —
nested procedures of the event in progress, not queued events, so no other event interleaves.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any

import attrs
from thespian.actors import ActorExitRequest

from actors import names
from actors.base import KActor
from actors.broker_channel_actor import BrokerChannelActor
from actors.core_effects import EffectInterpreter
from actors.proc_driver import ProcDriver
from actors.request_front import admit
from core.api.registry import ControllerService
from core.broker.log_config import UNCLEAN_LEADER_ELECTION_ENABLE, parse_boolean
from core.controller.errors import exception_of, raised_error
from core.controller.kafka_controller import KafkaController
from core.effects import AddBrokerChannel, RemoveBrokerChannel, SendRequest
from core.security.authorizer import Authorizer
from messages import controller_events as ev
from messages.broker_lifecycle import ControllerInit
from messages.channel import ChannelResponse, ChannelStart, ChannelStop
from messages.common import Errors
from messages.dynamic_config import LogConfigDefaultsChanged
from messages.net import NetReply, NetRequest
from messages.observability import ControllerEventProcessed, ControllerEventStarted
from messages.requests import (
    ControlledShutdownResponse,
    LeaderAndIsrResponse,
    StopReplicaResponse,
    UpdateMetadataResponse,
)
from messages.runtime import ActorInit, TimerFired
from messages.security import AuthorizerChanged
from messages.topic_deletion import (
    ControllerInstructionReply,
    ControllerInstructionRequest,
    DeletionStimulus,
    TopicDeletionManagerInit,
    TopicDeletionReply,
    TopicDeletionRequest,
)
from messages.zk import ZkResponse, ZkSessionEvent, ZkWatchEvent

OPTIONAL_RECIPIENTS = frozenset(names.BROKER_EPOCH_LISTENERS)

log = logging.getLogger("kactor.controller")

AUTO_REBALANCE_TIMER = "auto-leader-rebalance"


@attrs.define
class _Queued:
    event: Any
    enqueued_ms: float
    reply: tuple[int, int] | None = None  # (connection_id, request_id) of a ControlledShutdown request


class ControllerActor(KActor):
    def on_start(self) -> None:
        self.controller: KafkaController | None = None
        self.authorizer: Authorizer | None = None  # KafkaApis' authorizer (None: authorizer.class.name empty)
        self.queue: deque[_Queued] = deque()
        self.current: _Queued | None = None
        self.started_ms = 0.0
        self.driver = ProcDriver(self, EffectInterpreter(self, optional=OPTIONAL_RECIPIENTS, own={
            SendRequest: self._send_request,
            AddBrokerChannel: self._add_channel,
            RemoveBrokerChannel: lambda effect: self._remove_channel(effect.broker_id),
        }), {DeletionStimulus: self._ask_topic_deletion})
        self.channels: dict[int, str] = {}
        self._draining = False

    # -- inputs that become events ----------------------------------------------------------------------------------
    def on_ControllerInit(self, msg: ControllerInit, sender: str) -> None:
        self.controller = KafkaController(msg.config)
        if self.runtime.has_actor(names.TOPIC_DELETION):
            self.post(names.TOPIC_DELETION, TopicDeletionManagerInit(msg.config.broker_id,
                                                                     msg.config.delete_topic_enable))

    def on_ZkWatchEvent(self, msg: ZkWatchEvent, sender: str) -> None:
        for event in self._core().events_for_watch(msg):
            self.put(event)

    def on_ZkSessionEvent(self, msg: ZkSessionEvent, sender: str) -> None:
        for event in self._core().events_for_session(msg):
            if isinstance(event, ev.Expire):
                self.clear_and_put(event)
            else:
                self.put(event)

    def on_ZkResponse(self, msg: ZkResponse, sender: str) -> None:
        self.driver.on_zk_response(msg)

    # -- the TopicDeletionActor: its replies, and its instructions served while the event waits ----------------------
    def _ask_topic_deletion(self, request_id: int, stimulus: DeletionStimulus) -> tuple[str, TopicDeletionRequest]:
        return names.TOPIC_DELETION, TopicDeletionRequest(request_id, stimulus, self.name)

    def on_TopicDeletionReply(self, msg: TopicDeletionReply, sender: str) -> None:
        self.driver.resume(msg.request_id, msg.change, None if msg.error is None else exception_of(msg.error))

    def on_ControllerInstructionRequest(self, msg: ControllerInstructionRequest, sender: str) -> None:
        def done(result: Any, error: BaseException | None) -> None:
            reply = ControllerInstructionReply(msg.request_id, result) if error is None else \
                ControllerInstructionReply(msg.request_id, None, raised_error(error))
            self.post(msg.reply_to, reply)

        self.driver.run(self._core().deletion_client.carry_out(msg.instruction), done)

    def on_TimerFired(self, msg: TimerFired, sender: str) -> None:
        if msg.key == AUTO_REBALANCE_TIMER:
            self.put(ev.AutoPreferredReplicaLeaderElection())

    def on_AuthorizerChanged(self, msg: AuthorizerChanged, sender: str) -> None:
        """AclAuthorizer's cache, loaded or changed (the config manager follows the ACL change notifications)."""
        self.authorizer = Authorizer.from_message(msg)

    def on_NetRequest(self, msg: NetRequest, sender: str) -> None:
        """The request front (its unit, KafkaApis' authorization), then the unit's KafkaController event, answered
        when it is processed (ControlledShutdown)."""
        admitted = admit(self, msg, self.authorizer)
        if admitted is None:
            return
        service = admitted.spec.service
        if isinstance(service, ControllerService):
            self.put(service.event(admitted.request), reply=(msg.connection_id, msg.request_id))
        else:
            log.warning("controller: unexpected request %s", admitted.spec.name)

    def on_ChannelResponse(self, msg: ChannelResponse, sender: str) -> None:
        resp = msg.response
        if isinstance(resp, LeaderAndIsrResponse):
            self.put(ev.LeaderAndIsrResponseReceived(resp, msg.broker_id))
        elif isinstance(resp, UpdateMetadataResponse):
            self.put(ev.UpdateMetadataResponseReceived(resp, msg.broker_id))
        elif isinstance(resp, StopReplicaResponse):
            event = self._core().event_for_stop_replica_response(msg.broker_id, msg.request, resp)
            if event is not None:
                self.put(event)

    def on_LogConfigDefaultsChanged(self, msg: LogConfigDefaultsChanged, sender: str) -> None:
        """The broker's log defaults changed dynamically (its config manager, DynamicLogConfig). Kafka's controller
        reads unclean.leader.election.enable through its KafkaConfig, whose values include the dynamic ones, at the
        time of each election: the new default is taken at once, not queued, like a change to that shared config."""
        core = self._core()
        try:
            enabled = parse_boolean(dict(msg.config).get(UNCLEAN_LEADER_ELECTION_ENABLE, "false"))
        except ValueError as e:
            log.error("controller: ignoring log defaults: %s", e)
            return
        old = core.config
        if old.unclean_leader_election_enable == enabled:
            return
        new = attrs.evolve(old, unclean_leader_election_enable=enabled)
        for holder in (core, core.partition_state_machine, core.replica_state_machine):
            if getattr(holder, "config", None) is old:
                holder.config = new

    def on_unhandled(self, body: Any, sender: str) -> None:
        if type(body) in ev.CONTROLLER_STATE_OF:
            self.put(body)  # an event sent directly, e.g. Startup from the kafka-server actor
        else:
            super().on_unhandled(body, sender)

    # -- the event queue (ControllerEventManager) -------------------------------------------------------------------
    def put(self, event: Any, reply: tuple[int, int] | None = None) -> None:
        self.queue.append(_Queued(event, self.now_ms(), reply))
        self._process_queue()

    def clear_and_put(self, event: Any) -> None:
        """ControllerEventManager.clearAndPut: drop (preempt) everything queued, then queue ``event``."""
        while self.queue:
            self._preempt(self.queue.popleft())
        self.put(event)

    def _preempt(self, item: _Queued) -> None:
        if item.reply is not None:  # ControlledShutdown's preempt: callback(Failure(ControllerMovedException))
            self.post(names.NET, NetReply(*item.reply, ControlledShutdownResponse(Errors.STALE_CONTROLLER_EPOCH)))

    def _process_queue(self) -> None:
        # A loop, not recursion: events that need no ZooKeeper round trip complete synchronously, inside
        # driver.run, and their _event_done comes back here while the loop is running (``_draining``).
        if self._draining:
            return
        self._draining = True
        try:
            while self.current is None and self.queue:
                self.current = self.queue.popleft()
                self.started_ms = self.now_ms()
                core = self._core()
                core.now_ms = self.started_ms
                item = self.current
                self.driver.run(core.process(item.event), self._event_done)
                if self.current is item:  # waiting for ZooKeeper: the ControllerState gauge shows it meanwhile
                    self.post(names.METRICS, ControllerEventStarted(type(item.event).__name__,
                                                                core.controller_state(item.event), self.started_ms))
        finally:
            self._draining = False

    def _event_done(self, result: Any, error: BaseException | None) -> None:
        item, self.current = self.current, None
        assert item is not None
        if error is not None:
            log.error("controller: error processing %s: %s", type(item.event).__name__, error, exc_info=error)
        if item.reply is not None:
            reply = result if isinstance(result, ControlledShutdownResponse) else \
                ControlledShutdownResponse(Errors.UNKNOWN_SERVER_ERROR)
            self.post(names.NET, NetReply(*item.reply, reply))
        core = self._core()
        self.post(names.METRICS, ControllerEventProcessed(
            type(item.event).__name__, core.controller_state(item.event), item.enqueued_ms, self.started_ms,
            self.now_ms(), len(self.queue)))
        self.post(names.METRICS, core.gauges())
        # An event that waited for ZooKeeper completes here, from on_ZkResponse: the events queued meanwhile are
        # next (Kafka's event thread takes the next event as soon as process() returns).
        self._process_queue()

    # -- effects of the core -----------------------------------------------------------------------------------------
    def _send_request(self, effect: SendRequest) -> None:
        name = self.channels.get(effect.broker_id)
        if name is None:
            log.info("Not sending request %s to broker %d, since it is offline.",
                     type(effect.request).__name__, effect.broker_id)
        else:
            self.post(name, effect)

    def _add_channel(self, effect: AddBrokerChannel) -> None:
        broker_id = effect.broker.id
        if broker_id in self.channels:
            return  # ControllerChannelManager.addBroker is idempotent
        name = names.channel(broker_id)
        addr = self.createActor(BrokerChannelActor)
        self.runtime.register(name, addr)
        self.send(addr, ActorInit(name, self.runtime.key))
        self.channels[broker_id] = name
        self.post(name, ChannelStart(effect.broker, self.name,
                                     listener_name=self._core().config.inter_broker_listener_name))

    def _remove_channel(self, broker_id: int) -> None:
        name = self.channels.pop(broker_id, None)
        if name is None:
            return
        addr = self.runtime.address(name)
        self.post(name, ChannelStop())
        self.runtime.unregister(name)
        self.send(addr, ActorExitRequest())

    def _core(self) -> KafkaController:
        if self.controller is None:
            raise RuntimeError("ControllerActor used before ControllerInit")
        return self.controller
