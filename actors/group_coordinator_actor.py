"""GroupCoordinatorActor ("group-coordinator"): Kafka's GroupCoordinator and GroupMetadataManager on one broker
(core.coordinator.group), and FindCoordinator.

It only moves messages: a NetRequest's group request runs as a procedure of the core, whose `Respond` effects become
NetReply to "net" (the reply handle is the request's connection and request ids); the core's timers are this actor's
timers; its appends and reads of ``__consumer_offsets`` are asks to the replica manager (LocalRequest → LocalReply,
acks=-1 for appends, reads to the log end, the log start as a ListOffsets EARLIEST); FindCoordinator's and startup's
ZooKeeper reads and the creation of ``__consumer_offsets`` are ZkRequests to "zk". The replica manager tells it which
``__consumer_offsets`` partitions this broker now leads or follows (LeadershipChange, after becomeLeaderOrFollower and
StopReplica).
"""

from __future__ import annotations

import logging
from typing import Any

from actors import names
from actors.base import KActor
from actors.proc_driver import ProcDriver
from core.coordinator.group.find_coordinator import find_coordinator
from core.coordinator.group.group_coordinator import GroupCoordinator, error_response
from core.coordinator.group.group_metadata_manager import (
    GROUP_METADATA_TOPIC_NAME,
    LOAD_BUFFER_SIZE,
    AppendToLog,
    Fork,
    LogRead,
    LogStart,
    ReadLog,
    ReadLogStart,
)
from core.effects import Cancel, Respond, Schedule
from core.zk_client import KafkaZkClient
from messages.common import Errors, TopicPartition
from messages.group import FindCoordinatorRequest, FindCoordinatorResponse, GroupCoordinatorConfig, GroupCoordinatorInit
from messages.net import NetReply, NetRequest
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
from messages.zk import ZkResponse

log = logging.getLogger("kactor.coordinator")


def _handle(connection_id: int, request_id: int) -> str:
    return f"{connection_id}/{request_id}"


def _ids(handle: str) -> tuple[int, int]:
    connection_id, request_id = handle.split("/")
    return int(connection_id), int(request_id)


def produce_request(append: AppendToLog) -> ProduceRequest:
    """GroupMetadataManager.appendForGroup (acks=-1 within offsets.commit.timeout.ms), or the tombstones' append
    with requiredAcks 0 (cleanupGroupMetadata)."""
    tp = TopicPartition(GROUP_METADATA_TOPIC_NAME, append.partition)
    return ProduceRequest(append.acks, append.timeout_ms, (ProducePartition(tp, append.records),))


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


def log_start_result(response: Any) -> LogStart:
    if isinstance(response, ListOffsetsResponse) and response.partitions:
        p = response.partitions[0]
        return LogStart(p.error, p.offset)
    return LogStart(Errors.UNKNOWN_SERVER_ERROR)


def append_result(response: Any) -> Errors:
    if isinstance(response, ProduceResponse) and response.partitions:
        return response.partitions[0].error
    return Errors.UNKNOWN_SERVER_ERROR


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
        self.zk = KafkaZkClient()
        self.outstanding: set[str] = set()  # reply handles of requests not answered yet
        self.driver = ProcDriver(self, self._effect, asks={
            AppendToLog: lambda rid, e: (names.REPLICA_MANAGER, LocalRequest(rid, produce_request(e), self.name)),
            ReadLog: lambda rid, e: (names.REPLICA_MANAGER, LocalRequest(rid, fetch_request(e), self.name)),
            ReadLogStart: lambda rid, e: (names.REPLICA_MANAGER, LocalRequest(rid, log_start_request(e), self.name)),
        })

    def on_GroupCoordinatorInit(self, msg: GroupCoordinatorInit, sender: str) -> None:
        self.coordinator = GroupCoordinator(msg.broker_id, msg.config, self.now_ms)
        self.driver.run(self.coordinator.startup(self.zk), self._done)

    # -- inputs ------------------------------------------------------------------------------------------------------
    def on_NetRequest(self, msg: NetRequest, sender: str) -> None:
        handle = _handle(msg.connection_id, msg.request_id)
        self.outstanding.add(handle)
        if isinstance(msg.body, FindCoordinatorRequest):
            self.driver.run(find_coordinator(self.zk, self.coordinator.config, self.coordinator.manager.num_partitions,
                                             msg.body), lambda result, error: self._found(handle, result, error))
            return
        try:
            proc = self.coordinator.handle(msg.body, handle)
        except TypeError as e:
            log.error("group-coordinator: %s", e)
            self.outstanding.discard(handle)
            return
        self.driver.run(proc, lambda result, error: self._handled(handle, msg.body, error))

    def on_LeadershipChange(self, msg: LeadershipChange, sender: str) -> None:
        for partition, _epoch in msg.elected:
            self.driver.run(self.coordinator.on_election(partition), self._done)
        for partition, _epoch in msg.resigned:
            self.driver.run(self.coordinator.on_resignation(partition), self._done)

    def on_TimerFired(self, msg: TimerFired, sender: str) -> None:
        self.driver.run(self.coordinator.on_timer(msg.key), self._done)

    def on_ZkResponse(self, msg: ZkResponse, sender: str) -> None:
        self.driver.on_zk_response(msg)

    def on_LocalReply(self, msg: LocalReply, sender: str) -> None:
        if isinstance(msg.body, FetchResponse):
            value: Any = read_result(msg.body)
        elif isinstance(msg.body, ListOffsetsResponse):
            value = log_start_result(msg.body)
        else:
            value = append_result(msg.body)
        self.driver.resume(msg.token, value)

    # -- outputs -----------------------------------------------------------------------------------------------------
    def _found(self, handle: str, result: Any, error: BaseException | None) -> None:
        if error is not None:
            log.warning("FindCoordinator failed: %s", error)
            response = FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE)
        else:
            response, count = result
            if count is not None:
                self.coordinator.manager.num_partitions = count
        self._effect(Respond(handle, response))

    def _handled(self, handle: str, request: Any, error: BaseException | None) -> None:
        """A request's procedure ended; if it failed before answering, the request gets UNKNOWN_SERVER_ERROR
        rather than no answer (its connection would wait for ever)."""
        if error is not None:
            self._done(None, error)
            if handle in self.outstanding:
                self._effect(Respond(handle, error_response(request, Errors.UNKNOWN_SERVER_ERROR)))

    def _done(self, result: Any, error: BaseException | None) -> None:
        if error is not None:
            log.error("group coordinator procedure failed: %s", error, exc_info=error)

    def _effect(self, effect: Any) -> None:
        if isinstance(effect, Respond):
            self.outstanding.discard(effect.reply_to)
            connection_id, request_id = _ids(effect.reply_to)
            self.post(names.NET, NetReply(connection_id, request_id, effect.response))
        elif isinstance(effect, Schedule):
            self.schedule(effect.key, effect.delay_ms)
        elif isinstance(effect, Cancel):
            self.cancel_timer(effect.key)
        elif isinstance(effect, Fork):
            self.driver.run(effect.proc, self._done)
        else:
            raise TypeError(f"group-coordinator: unexpected effect {type(effect).__name__}")
