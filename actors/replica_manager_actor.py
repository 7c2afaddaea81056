"""ReplicaManagerActor ("replica-manager"): the broker's request front for LeaderAndIsr, UpdateMetadata,
StopReplica, Fetch and Produce (KafkaApis → ReplicaManager).

The partitions themselves live in a bounded set of PartitionActor shards (``kactor.partition.actors``). This actor
splits each request by shard, hands each shard its part, merges the parts' answers into the one response Kafka's
ReplicaManager gives, and sends it back over the transport. Controller requests reach every shard (even with no
partitions for it) so each shard tracks the controller epoch and fences stale controllers on its own.
"""

from __future__ import annotations

import itertools
import logging
from collections import defaultdict
from typing import Any

import attrs

from actors import names
from actors.base import KActor
from actors.partition_actor import PartitionActor, shard_of
from core.broker.replica_manager import FETCH_SESSION_ID_NOT_FOUND, SESSION_ID_STRIDE
from messages.broker_lifecycle import BrokerRegistered, BrokerShutdownComplete, ReplicaManagerInit
from messages.common import Errors, TopicPartition
from messages.dynamic_config import LogConfigDefaultsChanged, TopicConfigChanged
from messages.net import NetReply, NetRequest
from messages.partition import (
    LogDirFailure,
    ReplicaManagerShutdown,
    ReplicaManagerShuttingDown,
    ShardBrokerEpoch,
    ShardInit,
    ShardReply,
    ShardRequest,
    ShardShutdown,
    ShardShuttingDown,
    ShardStopped,
)
from messages.replication import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INVALID_SESSION_ID,
    DescribeMetadataCacheRequest,
    DescribeMetadataCacheResponse,
    FetchRequest,
    FetchResponse,
    OffsetForLeaderTopicResult,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
    ProduceRequest,
)
from messages.requests import (
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    StopReplicaRequest,
    StopReplicaResponse,
    UpdateMetadataRequest,
    UpdateMetadataResponse,
)
from messages.runtime import ActorInit

log = logging.getLogger("kactor.broker")

class SessionRoutingError(TypeError):
    """An incremental fetch names a session no shard can hold, or partitions of other shards."""


@attrs.define
class _Pending:
    connection_id: int
    request_id: int
    reply_expected: bool
    request: Any
    waiting: set[int]
    parts: dict[int, Any] = attrs.Factory(dict)


def split_request(body: Any, shards: int) -> dict[int, Any]:
    """Each shard's part of ``body``; controller requests give every shard a part, client requests only the shards
    that host one of their partitions."""
    if isinstance(body, (LeaderAndIsrRequest, StopReplicaRequest)):
        by_shard: dict[int, list[Any]] = defaultdict(list)
        for st in body.partition_states:
            by_shard[shard_of(st.topic_partition, shards)].append(st)
        return {i: attrs.evolve(body, partition_states=tuple(by_shard.get(i, ()))) for i in range(shards)}
    if isinstance(body, UpdateMetadataRequest):
        # Each shard caches the metadata of its own partitions (the only ones it is asked about) and every live
        # broker (leaders' endpoints); a shard without partitions in the request updates its brokers only. One
        # copy of a 10,000-partition request instead of one per shard, in memory, per update and in the trace.
        by_shard = defaultdict(list)
        for st in body.partition_states:
            by_shard[shard_of(st.topic_partition, shards)].append(st)
        return {i: attrs.evolve(body, partition_states=tuple(by_shard.get(i, ()))) for i in range(shards)}
    if isinstance(body, FetchRequest):
        if body.session_id != INVALID_SESSION_ID:
            # an incremental fetch goes to the shard holding its session, and may only name that shard's partitions
            shard = body.session_id % SESSION_ID_STRIDE
            if shard >= shards or any(shard_of(fp.tp, shards) != shard for fp in body.partitions):
                raise SessionRoutingError(body.session_id)
            return {shard: body}
        groups: dict[int, list[Any]] = defaultdict(list)
        for fp in body.partitions:
            groups[shard_of(fp.tp, shards)].append(fp)
        # a session lives in one shard: a full request spanning several (brokers with different shard counts)
        # is served without one
        epoch = FINAL_EPOCH if len(groups) > 1 and body.session_epoch == INITIAL_EPOCH else body.session_epoch
        return {i: attrs.evolve(body, partitions=tuple(parts), session_epoch=epoch)
                for i, parts in sorted(groups.items())}
    if isinstance(body, ProduceRequest):
        return {shard_of(body.tp, shards): body}
    if isinstance(body, OffsetsForLeaderEpochRequest):
        per_shard: dict[int, dict[str, list[Any]]] = defaultdict(dict)
        for t in body.topics:
            for q in t.partitions:
                per_shard[shard_of(TopicPartition(t.topic, q.partition), shards)].setdefault(t.topic, []).append(q)
        return {i: attrs.evolve(body, topics=tuple(attrs.evolve(t, partitions=tuple(per_shard[i][t.topic]))
                                                   for t in body.topics if t.topic in per_shard[i]))
                for i in sorted(per_shard)}
    if isinstance(body, DescribeMetadataCacheRequest):
        return dict.fromkeys(range(shards), body)  # each shard holds its partitions' part of the cache
    raise TypeError(f"replica-manager cannot handle {type(body).__name__}")


def merge_responses(request: Any, parts: dict[int, Any]) -> Any:
    """The one response for ``request`` from its shards' answers (shard order, so the result is deterministic)."""
    answers = [parts[i] for i in sorted(parts)]
    if isinstance(request, (LeaderAndIsrRequest, StopReplicaRequest)):
        cls = LeaderAndIsrResponse if isinstance(request, LeaderAndIsrRequest) else StopReplicaResponse
        error = next((a.error for a in answers if a.error != Errors.NONE), Errors.NONE)
        errors = tuple(sorted((pe for a in answers for pe in a.partition_errors), key=lambda pe: pe.topic_partition))
        return cls(error, errors)
    if isinstance(request, UpdateMetadataRequest):
        return UpdateMetadataResponse(next((a.error for a in answers if a.error != Errors.NONE), Errors.NONE))
    if isinstance(request, FetchRequest):
        if len(answers) == 1:
            return answers[0]  # one shard (a session's): its answer as is
        data = {d.tp: d for a in answers for d in a.partitions}
        error = next((a.error for a in answers if a.error != Errors.NONE), Errors.NONE)
        return FetchResponse(tuple(data[fp.tp] for fp in request.partitions if fp.tp in data), error)
    if isinstance(request, DescribeMetadataCacheRequest):
        first = answers[0]
        order = {t: i for i, t in enumerate(request.topics)}
        states = sorted((st for a in answers for st in a.partition_states),
                        key=lambda st: (order.get(st.topic_partition.topic, 0) if order else st.topic_partition.topic,
                                        st.topic_partition.partition))
        return DescribeMetadataCacheResponse(first.controller_id, first.alive_brokers, tuple(states))
    if isinstance(request, ProduceRequest):
        return answers[0]
    if isinstance(request, OffsetsForLeaderEpochRequest):
        # in the request's topic and partition order
        found = {(t.topic, r.partition): r for a in answers for t in a.topics for r in t.partitions}
        topics = []
        for rt in request.topics:
            results = tuple(found[(rt.topic, q.partition)] for q in rt.partitions if (rt.topic, q.partition) in found)
            if results:
                topics.append(OffsetForLeaderTopicResult(rt.topic, results))
        return OffsetsForLeaderEpochResponse(tuple(topics))
    raise TypeError(type(request).__name__)


class ReplicaManagerActor(KActor):
    def on_start(self) -> None:
        self.shards = 0
        self.tokens = itertools.count(1)
        self.pending: dict[int, _Pending] = {}
        self.shutdown: ReplicaManagerShutdown | None = None
        self.stopped: set[int] = set()
        self.log_dirs: tuple[str, ...] = ()
        self.failed_dirs: set[int] = set()
        self.shutting_down = False

    def on_ReplicaManagerInit(self, msg: ReplicaManagerInit, sender: str) -> None:
        self.shards = max(1, msg.partition_actors)
        self.log_dirs = tuple(msg.log_dirs)
        for i in range(self.shards):
            name = names.shard(i)
            addr = self.createActor(PartitionActor)
            self.runtime.register(name, addr)
            self.send(addr, ActorInit(name, self.runtime.key))
            self.post(name, ShardInit(i, self.shards, msg))
            if self.shutting_down:
                self.post(name, ShardShuttingDown())

    def on_LogDirFailure(self, msg: LogDirFailure, sender: str) -> None:
        for i in range(self.shards):
            self.post(names.shard(i), msg)
        self.failed_dirs.add(msg.dir_index)
        if self.log_dirs and len(self.failed_dirs) >= len(self.log_dirs):
            # LogManager.handleLogDirFailure: with no live log dir left the broker cannot serve anything and halts
            reason = f"Shutdown broker because all log dirs in {', '.join(self.log_dirs)} have failed"
            log.critical("%s", reason)
            self.post(names.KAFKA_SERVER, BrokerShutdownComplete(False, reason, True))

    def on_BrokerRegistered(self, msg: BrokerRegistered, sender: str) -> None:
        for i in range(self.shards):
            self.post(names.shard(i), ShardBrokerEpoch(msg.broker_epoch))

    def on_NetRequest(self, msg: NetRequest, sender: str) -> None:
        body = msg.body
        if self.shutdown is not None or self.shards == 0:
            return  # shutting down: the sender's timeout / retry takes over, as with a closed socket
        try:
            parts = split_request(body, self.shards)
        except SessionRoutingError:
            if msg.reply_expected:
                self.post(names.NET, NetReply(msg.connection_id, msg.request_id,
                                          FetchResponse((), FETCH_SESSION_ID_NOT_FOUND)))
            return
        except TypeError as e:
            log.warning("%s", e)
            return
        if not parts:  # a fetch with no partitions
            if msg.reply_expected:
                self.post(names.NET, NetReply(msg.connection_id, msg.request_id, merge_responses(body, {})))
            return
        token = next(self.tokens)
        self.pending[token] = _Pending(msg.connection_id, msg.request_id, msg.reply_expected, body, set(parts))
        for i, part in parts.items():
            self.post(names.shard(i), ShardRequest(token, part))

    def on_ShardReply(self, msg: ShardReply, sender: str) -> None:
        p = self.pending.get(msg.token)
        if p is None or msg.shard not in p.waiting:
            return
        p.waiting.discard(msg.shard)
        p.parts[msg.shard] = msg.body
        if p.waiting:
            return
        del self.pending[msg.token]
        if p.reply_expected:
            self.post(names.NET, NetReply(p.connection_id, p.request_id, merge_responses(p.request, p.parts)))

    def on_TopicConfigChanged(self, msg: TopicConfigChanged, sender: str) -> None:
        """TopicConfigHandler → LogManager: every shard's logs of the topic take the new overrides."""
        for i in range(self.shards):
            self.post(names.shard(i), msg)

    def on_LogConfigDefaultsChanged(self, msg: LogConfigDefaultsChanged, sender: str) -> None:
        """DynamicLogConfig.reconfigure → LogManager: every shard's logs take the new broker defaults."""
        for i in range(self.shards):
            self.post(names.shard(i), msg)

    def on_ReplicaManagerShuttingDown(self, msg: ReplicaManagerShuttingDown, sender: str) -> None:
        """KafkaServer's isShuttingDown, shared with its ReplicaManager: every shard stops adding fetchers."""
        if self.shutting_down:
            return
        self.shutting_down = True
        for i in range(self.shards):
            self.post(names.shard(i), ShardShuttingDown())

    def on_ReplicaManagerShutdown(self, msg: ReplicaManagerShutdown, sender: str) -> None:
        if self.shutdown is not None:
            return
        self.shutdown = msg
        # ReplicaManager.shutdown stops its LogDirFailureHandler first: no dir goes offline after this point
        probe = self.runtime.edges.log_dirs
        if probe is not None:
            probe.close()
        if self.shards == 0:
            self.post(names.KAFKA_SERVER, msg.complete)
        for i in range(self.shards):
            self.post(names.shard(i), ShardShutdown())

    def on_ShardStopped(self, msg: ShardStopped, sender: str) -> None:
        self.stopped.add(msg.shard)
        if self.shutdown is not None and len(self.stopped) == self.shards:
            self.post(names.KAFKA_SERVER, self.shutdown.complete)
