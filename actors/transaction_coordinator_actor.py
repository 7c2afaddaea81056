"""TransactionCoordinatorActor ("transaction-coordinator"): Kafka's TransactionCoordinator, TransactionStateManager and
the TransactionMarkerChannelManager's decisions on one broker (core.coordinator.transaction).

It only moves messages: a NetRequest (InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn) runs as the core's
procedure for its type, whose `Respond` becomes a NetReply to "net"; the core's appends and reads of
``__transaction_state`` are asks to the replica manager (LocalRequest → LocalReply: acks=-1 appends, reads to the log
end, the log start as a ListOffsets EARLIEST); its ZooKeeper reads and producer-id block claims are ZkRequests to "zk";
its markers go to one TransactionMarkerChannelActor per broker, spawned on first use, whose answers
(TxnMarkersAnswered) come back here. The replica manager tells it which ``__transaction_state`` partitions this broker
now leads or follows (LeadershipChange, after becomeLeaderOrFollower and StopReplica), with the leader epoch that is
the coordinator epoch.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import Any

from actors import names
from actors.base import KActor
from actors.core_effects import EffectInterpreter
from actors.group_coordinator_actor import append_result, log_start_result, read_result
from actors.proc_driver import ProcDriver
from actors.txn_marker_channel_actor import TransactionMarkerChannelActor
from core.api import add_offsets_to_txn as add_offsets_to_txn_api
from core.api import add_partitions_to_txn as add_partitions_to_txn_api
from core.api import end_txn as end_txn_api
from core.api import init_producer_id as init_producer_id_api
from core.coordinator.transaction.transaction_coordinator import TransactionCoordinator, error_response
from core.coordinator.transaction.transaction_state_manager import AppendTxnLog, ReadTxnLog, ReadTxnLogStart
from core.coordinator.transaction.txn_marker_channel_manager import SendTxnMarkers
from core.effects import ReplyHandle, Respond
from core.security.authorizer import Authorized, Authorizer, RequestAuthorizer, request_authorizer
from messages.common import Errors, TopicPartition
from messages.net import NetReply, NetRequest
from messages.observability import CoordinatorLoadErrors
from messages.replication import (
    DEBUGGING_REPLICA_ID,
    EARLIEST_TIMESTAMP,
    FetchPartition,
    FetchRequest,
    LeadershipChange,
    ListOffsetsPartition,
    ListOffsetsRequest,
    LocalReply,
    LocalRequest,
    ProducePartition,
    ProduceRequest,
)
from messages.runtime import ActorInit, TimerFired
from messages.security import AuthorizerChanged
from messages.topic import TRANSACTION_STATE_TOPIC_NAME
from messages.transaction import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    EndTxnRequest,
    InitProducerIdRequest,
    TransactionCoordinatorConfig,
    TransactionCoordinatorInit,
    TxnMarkerChannelStart,
    TxnMarkersAnswered,
)
from messages.txn_markers import WriteTxnMarkersRequest
from messages.zk import ZkResponse

log = logging.getLogger("kactor.coordinator")


def produce_request(append: AppendTxnLog) -> ProduceRequest:
    """TransactionStateManager.appendTransactionToLog: acks=-1 within request.timeout.ms."""
    tp = TopicPartition(TRANSACTION_STATE_TOPIC_NAME, append.partition)
    return ProduceRequest(-1, append.timeout_ms, (ProducePartition(tp, append.records),))


def fetch_request(read: ReadTxnLog) -> FetchRequest:
    """loadTransactionsForTxnTopicPartition's log.read(offset, loadBufferSize, FetchLogEnd)."""
    tp = TopicPartition(TRANSACTION_STATE_TOPIC_NAME, read.partition)
    return FetchRequest(DEBUGGING_REPLICA_ID, (FetchPartition(tp, read.offset, partition_max_bytes=read.max_bytes),),
                        max_bytes=read.max_bytes)


def log_start_request(ask: ReadTxnLogStart) -> ListOffsetsRequest:
    tp = TopicPartition(TRANSACTION_STATE_TOPIC_NAME, ask.partition)
    return ListOffsetsRequest(DEBUGGING_REPLICA_ID, 0, (ListOffsetsPartition(tp, EARLIEST_TIMESTAMP),))


class TransactionCoordinatorActor(KActor):
    def on_start(self) -> None:
        # until TransactionCoordinatorInit: not active, transactional requests are COORDINATOR_NOT_AVAILABLE
        self.coordinator = TransactionCoordinator(-1, TransactionCoordinatorConfig(), self.now_ms)
        self.listener_name = "PLAINTEXT"
        self.authorizer: Authorizer | None = None  # KafkaApis' authorizer (None: authorizer.class.name empty)
        self.tokens = itertools.count(1)
        self.load_errors_published = 0  # the partition_load_errors the metrics actor was last told
        self.outstanding: dict[int, tuple[int, int]] = {}  # token → (connection, request) of a request not answered
        self.reading: dict[int, Callable[[Any], Any]] = {}  # ask id → what its LocalReply's body becomes
        self.channels: dict[int, str] = {}  # broker id → its TransactionMarkerChannelActor
        self.driver = ProcDriver(self, EffectInterpreter(self, respond=self._respond,
                                                         own={SendTxnMarkers: self._send_markers}), asks={
            AppendTxnLog: lambda rid, e: self._ask(rid, produce_request(e), append_result),
            ReadTxnLog: lambda rid, e: self._ask(rid, fetch_request(e), read_result),
            ReadTxnLogStart: lambda rid, e: self._ask(rid, log_start_request(e), log_start_result),
        })

    def on_TransactionCoordinatorInit(self, msg: TransactionCoordinatorInit, sender: str) -> None:
        self.coordinator = TransactionCoordinator(msg.broker_id, msg.config, self.now_ms,
                                                  msg.offsets_topic_num_partitions)
        self.listener_name = msg.inter_broker_listener_name
        self.driver.run(self.coordinator.startup(), self._done)

    # -- inputs ------------------------------------------------------------------------------------------------------
    def on_AuthorizerChanged(self, msg: AuthorizerChanged, sender: str) -> None:
        """AclAuthorizer's cache, loaded or changed (the config manager follows the ACL change notifications)."""
        self.authorizer = Authorizer.from_message(msg)

    def on_NetRequest(self, msg: NetRequest, sender: str) -> None:
        check = _AUTHORIZE.get(type(msg.body))
        if check is not None:  # without an authorizer too (ALLOW_ALL): AddPartitionsToTxn refuses internal topics
            decision = check(msg.body, request_authorizer(self.authorizer, msg.body.principal, msg.client_host))
            if decision.request is None:
                if msg.reply_expected:
                    self.post(names.NET, NetReply(msg.connection_id, msg.request_id, decision.answer))
                return
        token = next(self.tokens)
        handle = ReplyHandle(token)
        try:
            proc = self.coordinator.handle(msg.body, handle)
        except TypeError as e:
            log.error("transaction-coordinator: %s", e)
            return
        self.outstanding[token] = (msg.connection_id, msg.request_id)
        self.driver.run(proc, lambda result, error: self._handled(handle, msg.body, error))

    def on_LeadershipChange(self, msg: LeadershipChange, sender: str) -> None:
        for partition, epoch in msg.elected:
            self.driver.run(self.coordinator.on_election(partition, epoch), self._loaded)
        for partition, epoch in msg.resigned:
            self.driver.run(self.coordinator.on_resignation(partition, epoch), self._done)

    def on_TxnMarkersAnswered(self, msg: TxnMarkersAnswered, sender: str) -> None:
        if msg.errors is None:
            self.driver.run(self.coordinator.on_markers_disconnect(msg.markers), self._done)
        else:
            errors = {(r.producer_id, r.tp): r.error for r in msg.errors}
            self.driver.run(self.coordinator.on_markers_response(msg.markers, errors), self._done)

    def on_TimerFired(self, msg: TimerFired, sender: str) -> None:
        self.driver.run(self.coordinator.on_timer(msg.key), self._done)

    def on_ZkResponse(self, msg: ZkResponse, sender: str) -> None:
        self.driver.on_zk_response(msg)

    def on_LocalReply(self, msg: LocalReply, sender: str) -> None:
        result = self.reading.pop(msg.token, None)
        if result is not None:
            self.driver.resume(msg.token, result(msg.body))

    # -- outputs -----------------------------------------------------------------------------------------------------
    def _ask(self, rid: int, request: Any, result: Callable[[Any], Any]) -> tuple[str, LocalRequest]:
        self.reading[rid] = result
        return names.REPLICA_MANAGER, LocalRequest(rid, request, self.name)

    def _send_markers(self, effect: SendTxnMarkers) -> None:
        """TransactionMarkerChannelManager.addMarkersForBroker: the broker's channel, created on first use."""
        broker = effect.broker
        name = self.channels.get(broker.id)
        if name is None:
            name = self.channels[broker.id] = names.txn_marker_channel(broker.id)
            addr = self.createActor(TransactionMarkerChannelActor)
            self.runtime.register(name, addr)
            self.send(addr, ActorInit(name, self.runtime.key))
        self.post(name, TxnMarkerChannelStart(broker, self.listener_name, self.coordinator.config.request_timeout_ms,
                                              self.name))
        self.post(name, WriteTxnMarkersRequest(effect.markers))

    def _respond(self, effect: Respond) -> None:
        handle = effect.reply_to
        assert isinstance(handle, ReplyHandle)
        ids = self.outstanding.pop(handle.token, None)
        if ids is not None:
            self.post(names.NET, NetReply(ids[0], ids[1], effect.response))

    def _handled(self, handle: ReplyHandle, request: Any, error: BaseException | None) -> None:
        """A request's procedure ended; if it failed before answering, the request gets UNKNOWN_SERVER_ERROR."""
        if error is not None:
            self._done(None, error)
            if handle.token in self.outstanding:
                self._respond(Respond(handle, error_response(request, Errors.UNKNOWN_SERVER_ERROR)))

    def _loaded(self, result: Any, error: BaseException | None) -> None:
        """An election's load ended: a failed one is counted in the metrics actor's
        transaction-coordinator-metrics partition-load-error-total."""
        self._done(result, error)
        errors = self.coordinator.state_manager.partition_load_errors
        if errors != self.load_errors_published and self.runtime.has_actor(names.METRICS):
            self.load_errors_published = errors
            self.post(names.METRICS, CoordinatorLoadErrors("transaction-coordinator-metrics", errors))

    def _done(self, result: Any, error: BaseException | None) -> None:
        if error is not None:
            log.error("transaction coordinator procedure failed: %s", error, exc_info=error)


# KafkaApis' authorization of the requests this actor serves, by request type (each API's unit decides)
_AUTHORIZE: dict[type, Callable[[Any, RequestAuthorizer], Authorized]] = {
    InitProducerIdRequest: init_producer_id_api.authorize,
    AddPartitionsToTxnRequest: add_partitions_to_txn_api.authorize,
    AddOffsetsToTxnRequest: add_offsets_to_txn_api.authorize,
    EndTxnRequest: end_txn_api.authorize,
}
