"""GroupCoordinatorActor ("group-coordinator"): Kafka's GroupCoordinator and GroupMetadataManager on one broker
(core.coordinator.group), and FindCoordinator.

It only moves messages: a NetRequest's group request runs as the procedure of its type's handler in the core
(`core.coordinator.group.group_coordinator.GROUP_REQUESTS`, FindCoordinator included), whose `Respond` effects become
NetReply to "net" (the typed `core.effects.ReplyHandle` names the request; this actor alone knows its connection and
request ids); the core's effects go through the shared `actors.core_effects.EffectInterpreter` (its timers are this
actor's timers); its appends and reads of ``__consumer_offsets`` are asks to the replica manager (LocalRequest →
LocalReply, acks=-1 for appends, reads to the log end, the log start as a ListOffsets EARLIEST), each answer read as
the ask that made it expects; FindCoordinator's leader lookup is an ask of the replica manager's metadata cache
(a MetadataRequest); FindCoordinator's and startup's ZooKeeper reads and the creation of
``__consumer_offsets`` are ZkRequests to "zk". The replica manager tells it which ``__consumer_offsets`` partitions
this broker now leads or follows (LeadershipChange, after becomeLeaderOrFollower and StopReplica), and when a
transaction's markers reached them (TxnMarkersWritten: the offsets committed in it become the groups' or go).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import Any

from actors import names
from actors.base import KActor
from actors.core_effects import EffectInterpreter
from actors.proc_driver import ProcDriver
from core.api import group as group_api
from core.api import offset_delete as offset_delete_api
from core.api import txn_offset_commit as txn_offset_commit_api
from core.api.find_coordinator import authorize_find_coordinator
from core.api.group import authorize_group_membership
from core.api.offsets import authorize_offset_commit, authorize_offset_fetch
from core.coordinator.group.find_coordinator import ReadMetadataCache
from core.coordinator.group.group_coordinator import GroupCoordinator, error_response
from core.coordinator.group.group_metadata_manager import (
    GROUP_METADATA_TOPIC_NAME,
    LOAD_BUFFER_SIZE,
    Appended,
    AppendToLog,
    Fork,
    LogRead,
    LogStart,
    ReadLog,
    ReadLogStart,
)
from core.effects import ReplyHandle, Respond
from core.security.authorizer import Authorized, Authorizer, RequestAuthorizer, request_authorizer
from messages.common import Errors, TopicPartition
from messages.group import (
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    FindCoordinatorRequest,
    GroupCoordinatorConfig,
    GroupCoordinatorInit,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListGroupsRequest,
    OffsetCommitRequest,
    OffsetDeleteRequest,
    OffsetFetchRequest,
    SyncGroupRequest,
    TxnOffsetCommitRequest,
)
from messages.metadata import MetadataResponse
from messages.net import NetReply, NetRequest
from messages.observability import CoordinatorLoadErrors
from messages.replication import (
    DEBUGGING_REPLICA_ID,
    EARLIEST_TIMESTAMP,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    LeadershipChange,
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
    LocalReply,
    LocalRequest,
    ProducePartition,
    ProduceRequest,
    ProduceResponse,
)
from messages.runtime import TimerFired
from messages.security import AuthorizerChanged
from messages.txn_markers import TxnMarkersWritten
from messages.zk import ZkResponse

log = logging.getLogger("kactor.coordinator")


def produce_request(append: AppendToLog) -> ProduceRequest:
    """GroupMetadataManager.appendForGroup (acks=-1 within offsets.commit.timeout.ms), or the tombstones' append
    with requiredAcks 0 (cleanupGroupMetadata); appendRecords' origin is Coordinator, so a TxnOffsetCommit's
    transactional batch (base sequence 0 each time) has its producer epoch checked and no sequence."""
    tp = TopicPartition(GROUP_METADATA_TOPIC_NAME, append.partition)
    return ProduceRequest(append.acks, append.timeout_ms, (ProducePartition(tp, append.records),), coordinator=True)


def fetch_request(read: ReadLog) -> FetchRequest:
    """doLoadGroupsAndOffsets' log.read(offset, loadBufferSize, FetchLogEnd): the debugging replica id reads to
    the log end."""
    tp = TopicPartition(GROUP_METADATA_TOPIC_NAME, read.partition)
    return FetchRequest(DEBUGGING_REPLICA_ID, (FetchPartition(tp, read.offset, partition_max_bytes=LOAD_BUFFER_SIZE),),
                        max_bytes=LOAD_BUFFER_SIZE)


def log_start_request(ask: ReadLogStart) -> ListOffsetsRequest:
    """Log.logStartOffset of this broker's replica: ListOffsets EARLIEST as the debugging replica (any replica
    answers, as the coordinator's own log read does not ask for leadership)."""
    tp = TopicPartition(GROUP_METADATA_TOPIC_NAME, ask.partition)
    return ListOffsetsRequest(DEBUGGING_REPLICA_ID, 0, (ListOffsetsPartition(tp, EARLIEST_TIMESTAMP),))


def metadata_result(response: Any) -> MetadataResponse:
    """The cache's answer; anything else reads as a cache that knows nothing (COORDINATOR_NOT_AVAILABLE)."""
    return response if isinstance(response, MetadataResponse) else MetadataResponse((), None, -1, ())


def log_start_result(response: Any) -> LogStart:
    if isinstance(response, ListOffsetsResponse) and response.partitions:
        p = response.partitions[0]
        return LogStart(p.error, p.offset)
    return LogStart(Errors.UNKNOWN_SERVER_ERROR)


def append_result(response: Any) -> Errors:
    if isinstance(response, ProduceResponse) and response.partitions:
        return response.partitions[0].error
    return Errors.UNKNOWN_SERVER_ERROR


def appended_result(response: Any) -> Appended:
    """The partition's error and the batch's base offset (appendedBatchOffset)."""
    if isinstance(response, ProduceResponse) and response.partitions:
        p = response.partitions[0]
        return Appended(p.error, p.base_offset)
    return Appended(Errors.UNKNOWN_SERVER_ERROR)


def read_result(response: Any) -> LogRead:
    if isinstance(response, FetchResponse) and response.partitions:
        p = response.partitions[0]
        return LogRead(p.error if response.error is Errors.NONE else response.error, p.records, p.log_start_offset,
                       p.log_end_offset)
    return LogRead(Errors.UNKNOWN_SERVER_ERROR)


class GroupCoordinatorActor(KActor):
    def on_start(self) -> None:
        # until GroupCoordinatorInit: not active, every group request is answered COORDINATOR_NOT_AVAILABLE
        self.coordinator = GroupCoordinator(-1, GroupCoordinatorConfig(), self.now_ms)
        self.tokens = itertools.count(1)
        self.load_errors_published = 0  # the partition_load_errors the metrics actor was last told
        self.outstanding: dict[int, tuple[int, int]] = {}  # token → (connection, request) of a request not answered
        self.finishing: dict[int, Callable[[Any], Any]] = {}  # token → the refused parts its answer gets
        self.authorizer: Authorizer | None = None  # KafkaApis' authorizer (None: authorizer.class.name empty)
        self.reading: dict[int, Callable[[Any], Any]] = {}  # ask id → what its LocalReply's body becomes
        self.driver = ProcDriver(self, EffectInterpreter(self, respond=self._respond, own={Fork: self._fork}), asks={
            AppendToLog: lambda rid, e: self._ask(rid, produce_request(e), appended_result),
            ReadLog: lambda rid, e: self._ask(rid, fetch_request(e), read_result),
            ReadLogStart: lambda rid, e: self._ask(rid, log_start_request(e), log_start_result),
            ReadMetadataCache: lambda rid, e: self._ask(rid, e.request(), metadata_result),
        })

    def on_GroupCoordinatorInit(self, msg: GroupCoordinatorInit, sender: str) -> None:
        self.coordinator = GroupCoordinator(msg.broker_id, msg.config, self.now_ms, msg.transaction_config)
        self.driver.run(self.coordinator.startup(self.coordinator.zk), self._done)

    # -- inputs ------------------------------------------------------------------------------------------------------
    def on_AuthorizerChanged(self, msg: AuthorizerChanged, sender: str) -> None:
        """AclAuthorizer's cache, loaded or changed (the config manager follows the ACL change notifications)."""
        self.authorizer = Authorizer.from_message(msg)

    def on_NetRequest(self, msg: NetRequest, sender: str) -> None:
        body = msg.body
        check = _AUTHORIZE.get(type(body))
        finish = None
        if check is not None and self.authorizer is not None:
            decision = check(body, request_authorizer(self.authorizer, body.principal, msg.client_host))
            if decision.request is None:
                if msg.reply_expected:
                    self.post(names.NET, NetReply(msg.connection_id, msg.request_id, decision.answer))
                return
            body, finish = decision.request, decision.finish
        token = next(self.tokens)
        handle = ReplyHandle(token)
        try:
            proc = self.coordinator.handle(body, handle)
        except TypeError as e:
            log.error("group-coordinator: %s", e)
            return
        self.outstanding[token] = (msg.connection_id, msg.request_id)
        if finish is not None:
            self.finishing[token] = finish
        self.driver.run(proc, lambda result, error: self._handled(handle, body, error))

    def on_LeadershipChange(self, msg: LeadershipChange, sender: str) -> None:
        for partition, _epoch in msg.elected:
            self.driver.run(self.coordinator.on_election(partition), self._loaded)
        for partition, _epoch in msg.resigned:
            self.driver.run(self.coordinator.on_resignation(partition), self._done)

    def on_TxnMarkersWritten(self, msg: TxnMarkersWritten, sender: str) -> None:
        """GroupCoordinator.scheduleHandleTxnCompletion: the replica manager wrote a transaction's markers to these
        ``__consumer_offsets`` partitions."""
        self.driver.run(self.coordinator.handle_txn_completion(msg.producer_id, set(msg.offsets_partitions),
                                                               msg.committed), self._done)

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
        """An ask of the replica manager; its answer is read by ``result`` when it comes."""
        self.reading[rid] = result
        return names.REPLICA_MANAGER, LocalRequest(rid, request, self.name)

    def _respond(self, effect: Respond) -> None:
        handle = effect.reply_to
        assert isinstance(handle, ReplyHandle)
        ids = self.outstanding.pop(handle.token, None)
        finish = self.finishing.pop(handle.token, None)
        if ids is not None:
            response = effect.response if finish is None else finish(effect.response)
            self.post(names.NET, NetReply(ids[0], ids[1], response))

    def _fork(self, effect: Fork) -> None:
        self.driver.run(effect.proc, self._done)

    def _handled(self, handle: ReplyHandle, request: Any, error: BaseException | None) -> None:
        """A request's procedure ended; if it failed before answering, the request gets UNKNOWN_SERVER_ERROR
        rather than no answer (its connection would wait for ever)."""
        if error is not None:
            self._done(None, error)
            if handle.token in self.outstanding:
                self._respond(Respond(handle, error_response(request, Errors.UNKNOWN_SERVER_ERROR)))

    def _loaded(self, result: Any, error: BaseException | None) -> None:
        """An election's load ended: a failed one is counted in the metrics actor's
        group-coordinator-metrics partition-load-error-total."""
        self._done(result, error)
        errors = self.coordinator.manager.partition_load_errors
        if errors != self.load_errors_published and self.runtime.has_actor(names.METRICS):
            self.load_errors_published = errors
            self.post(names.METRICS, CoordinatorLoadErrors("group-coordinator-metrics", errors))

    def _done(self, result: Any, error: BaseException | None) -> None:
        if error is not None:
            log.error("group coordinator procedure failed: %s", error, exc_info=error)


# KafkaApis' authorization of the requests this actor serves, by request type (each API's unit decides)
_AUTHORIZE: dict[type, Callable[[Any, RequestAuthorizer], Authorized]] = {
    FindCoordinatorRequest: authorize_find_coordinator,
    JoinGroupRequest: authorize_group_membership,
    SyncGroupRequest: authorize_group_membership,
    HeartbeatRequest: authorize_group_membership,
    LeaveGroupRequest: authorize_group_membership,
    OffsetCommitRequest: authorize_offset_commit,
    OffsetFetchRequest: authorize_offset_fetch,
    TxnOffsetCommitRequest: txn_offset_commit_api.authorize,
    DescribeGroupsRequest: group_api.authorize_describe_groups,
    ListGroupsRequest: group_api.authorize_list_groups,
    DeleteGroupsRequest: group_api.authorize_delete_groups,
    OffsetDeleteRequest: offset_delete_api.authorize,
}
