"""ReplicaManagerActor ("replica-manager"): the broker's request front for LeaderAndIsr, UpdateMetadata,
StopReplica, Fetch, Produce, ListOffsets and OffsetsForLeaderEpoch (KafkaApis → ReplicaManager), from the network
(NetRequest → NetReply) or from another actor of the process (LocalRequest → LocalReply: the group coordinator
reading and writing ``__consumer_offsets``, Kafka's in-process replicaManager.appendRecords / readFromLocalLog).

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
from core.api.metadata import handle_metadata_request
from core.broker.fetch_session import SESSION_ID_STRIDE
from core.broker.metadata_cache import MetadataCache
from core.broker.replica_manager import FUTURE_LOCAL_REPLICA_ID
from messages.broker_lifecycle import BrokerRegistered, BrokerShutdownComplete, ReplicaManagerInit
from messages.common import Errors, TopicPartition
from messages.dynamic_config import LogConfigDefaultsChanged, TopicConfigChanged
from messages.metadata import MetadataRequest
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
    DEBUGGING_REPLICA_ID,
    FINAL_EPOCH,
    GROUP_METADATA_TOPIC_NAME,
    INITIAL_EPOCH,
    INVALID_SESSION_ID,
    DescribeMetadataCacheRequest,
    DescribeMetadataCacheResponse,
    FetchRequest,
    FetchResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    LocalReply,
    LocalRequest,
    OffsetForLeaderTopicResult,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
    ProduceRequest,
    ProduceResponse,
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
    """A request split over shards: answered (NetReply, or LocalReply to ``local_reply_to``) once all have."""

    connection_id: int
    request_id: int
    reply_expected: bool
    request: Any
    waiting: set[int]
    parts: dict[int, Any] = attrs.Factory(dict)
    local_reply_to: str | None = None


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
        produce: dict[int, list[Any]] = defaultdict(list)
        for pp in body.partitions:
            produce[shard_of(pp.tp, shards)].append(pp)
        return {i: attrs.evolve(body, partitions=tuple(parts)) for i, parts in sorted(produce.items())}
    if isinstance(body, ListOffsetsRequest):
        offsets: dict[int, list[Any]] = defaultdict(list)
        for q in body.partitions:
            offsets[shard_of(q.tp, shards)].append(q)
        return {i: attrs.evolve(body, partitions=tuple(parts)) for i, parts in sorted(offsets.items())}
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


# Topic.InternalTopics: a client's produce may not append to them (only the coordinators do, in-process, through
# LocalRequest, and AdminUtils.AdminClientId's requests: KafkaApis' internalTopicsAllowed)
INTERNAL_TOPICS = frozenset({GROUP_METADATA_TOPIC_NAME, "__transaction_state"})
ADMIN_CLIENT_ID = "__admin_client"  # AdminUtils.AdminClientId


def refuse_internal_topics(body: ProduceRequest) -> ProduceRequest:
    """ReplicaManager.appendToLocalLog with internalTopicsAllowed=false: each partition of an internal topic is
    answered INVALID_TOPIC_EXCEPTION ("Cannot append to internal topic") and nothing is appended to it."""
    if not any(pp.tp.topic in INTERNAL_TOPICS for pp in body.partitions):
        return body
    return attrs.evolve(body, partitions=tuple(
        attrs.evolve(pp, records=b"", error=Errors.INVALID_TOPIC_EXCEPTION) if pp.tp.topic in INTERNAL_TOPICS else pp
        for pp in body.partitions))


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
    if isinstance(request, (ProduceRequest, ListOffsetsRequest)):
        # in the request's partition order (a partition named twice: its answers in turn, as Kafka's map gives one)
        by_tp: dict[TopicPartition, list[Any]] = defaultdict(list)
        for a in answers:
            for r in a.partitions:
                by_tp[r.tp].append(r)
        ordered = [by_tp[q.tp].pop(0) for q in request.partitions if by_tp[q.tp]]
        if isinstance(request, ProduceRequest):
            return ProduceResponse(tuple(ordered))
        return ListOffsetsResponse(tuple(ordered))
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
        # KafkaApis' MetadataCache, whole: the shards each cache only their own partitions' states
        self.metadata_cache = MetadataCache(-1)

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
        if isinstance(body, MetadataRequest):  # KafkaApis.handleTopicMetadataRequest, from the whole cache
            if msg.reply_expected:
                self.post(names.NET, NetReply(msg.connection_id, msg.request_id,
                                              handle_metadata_request(self.metadata_cache, body)))
            return
        if isinstance(body, UpdateMetadataRequest):
            self.metadata_cache.maybe_update(body)
        if isinstance(body, ProduceRequest) and msg.client_id != ADMIN_CLIENT_ID:
            body = refuse_internal_topics(body)
        self._dispatch(body, msg.connection_id, msg.request_id, msg.reply_expected, None)

    def on_LocalRequest(self, msg: LocalRequest, sender: str) -> None:
        """An in-process request (the group coordinator's): answered with LocalReply to ``msg.reply_to``, acks=0
        included. A fetch as the debugging replica (-2) reads to the log end, as the group coordinator's loading
        reads its own log (GroupMetadataManager.doLoadGroupsAndOffsets: FetchLogEnd)."""
        body = msg.body
        if isinstance(body, FetchRequest) and body.replica_id == DEBUGGING_REPLICA_ID:
            body = attrs.evolve(body, replica_id=FUTURE_LOCAL_REPLICA_ID)
        self._dispatch(body, 0, msg.token, True, msg.reply_to)

    def _reply(self, connection_id: int, request_id: int, local_reply_to: str | None, response: Any) -> None:
        if local_reply_to is None:
            self.post(names.NET, NetReply(connection_id, request_id, response))
        else:
            self.post(local_reply_to, LocalReply(request_id, response))

    def _dispatch(self, body: Any, connection_id: int, request_id: int, reply_expected: bool,
                  local_reply_to: str | None) -> None:
        if self.shutdown is not None or self.shards == 0:
            return  # shutting down: the sender's timeout / retry takes over, as with a closed socket
        try:
            parts = split_request(body, self.shards)
        except SessionRoutingError:
            if reply_expected:
                self._reply(connection_id, request_id, local_reply_to,
                            FetchResponse((), Errors.FETCH_SESSION_ID_NOT_FOUND))
            return
        except TypeError as e:
            log.warning("%s", e)
            return
        if not parts:  # a fetch, produce or list-offsets with no partitions
            if reply_expected:
                self._reply(connection_id, request_id, local_reply_to, merge_responses(body, {}))
            return
        token = next(self.tokens)
        self.pending[token] = _Pending(connection_id, request_id, reply_expected, body, set(parts),
                                       local_reply_to=local_reply_to)
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
            self._reply(p.connection_id, p.request_id, p.local_reply_to, merge_responses(p.request, p.parts))

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
