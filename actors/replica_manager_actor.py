"""ReplicaManagerActor ("replica-manager"): serves the API units whose service is the replica manager
(`core.api.registry.ReplicaManagerService`) — LeaderAndIsr, UpdateMetadata, StopReplica, Fetch, Produce, ListOffsets,
OffsetsForLeaderEpoch, DescribeLogDirs... (KafkaApis → ReplicaManager) — and Metadata, from the network
(NetRequest → NetReply) or from another actor of the process (LocalRequest → LocalReply: the group coordinator
reading and writing ``__consumer_offsets``, Kafka's in-process replicaManager.appendRecords / readFromLocalLog).

The partitions themselves live in a bounded set of PartitionActor shards (``kactor.partition.actors``). This actor
splits each request by shard, hands each shard its part, merges the parts' answers into the one response Kafka's
ReplicaManager gives, and sends it back over the transport; a request from the network first passes the one request
front (actors/request_front.py: KafkaApis' authorization); how each request type is split and merged is its unit's
(its core/api module), so this actor knows none of them. Controller requests reach every shard (even with no
partitions for it) so each shard tracks the controller epoch and fences stale controllers on its own.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import Any

import attrs

from actors import names
from actors.base import KActor
from actors.partition_actor import PartitionActor
from actors.request_front import admit
from core.api.registry import ReplicaManagerService, sharded_unit_of, unit_of
from core.broker.metadata_cache import MetadataCache
from core.broker.replica_manager import FUTURE_LOCAL_REPLICA_ID
from core.broker.shards import ShardedRequest, SplitRefused
from core.security.authorizer import ALLOW_ALL, Authorizer
from messages.broker_lifecycle import BrokerRegistered, BrokerShutdownComplete, ReplicaManagerInit
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
from messages.quota import ReplicationQuotasChanged
from messages.replication import DEBUGGING_REPLICA_ID, FetchRequest, LocalReply, LocalRequest
from messages.runtime import ActorInit
from messages.security import AuthorizerChanged
from messages.txn_markers import TxnMarkersWritten

log = logging.getLogger("kactor.broker")

@attrs.define
class _Pending:
    """A request split over shards: answered (NetReply, or LocalReply to ``local_reply_to``) once all have."""

    connection_id: int
    request_id: int
    reply_expected: bool
    request: Any
    unit: ShardedRequest
    waiting: set[int]
    parts: dict[int, Any] = attrs.Factory(dict)
    local_reply_to: str | None = None
    finish: Callable[[Any], Any] | None = None  # the front's last step on the merged answer (refused partitions)


class ReplicaManagerActor(KActor):
    def on_start(self) -> None:
        self.shards = 0
        self.shard_names: tuple[str, ...] = ()  # names.shard(i) of each shard, made once
        self.tokens = itertools.count(1)
        self.pending: dict[int, _Pending] = {}
        self.shutdown: ReplicaManagerShutdown | None = None
        self.stopped: set[int] = set()
        self.log_dirs: tuple[str, ...] = ()
        self.failed_dirs: set[int] = set()
        self.shutting_down = False
        # KafkaApis' MetadataCache, whole: the shards each cache only their own partitions' states
        self.metadata_cache = MetadataCache(-1)
        self.authorizer: Authorizer | None = None  # KafkaApis' authorizer (None: authorizer.class.name empty)

    def on_AuthorizerChanged(self, msg: AuthorizerChanged, sender: str) -> None:
        """AclAuthorizer's cache, loaded or changed (the config manager follows the ACL change notifications)."""
        self.authorizer = Authorizer.from_message(msg)

    def on_ReplicaManagerInit(self, msg: ReplicaManagerInit, sender: str) -> None:
        self.shards = max(1, msg.partition_actors)
        self.shard_names = tuple(names.shard(i) for i in range(self.shards))
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
        """KafkaApis.handle for the replica manager's units: the request front, then the unit's service — the whole
        MetadataCache answers Metadata here (KafkaApis.handleTopicMetadataRequest) and takes UpdateMetadata before
        the shards do (handleUpdateMetadataRequest); the shards serve the rest."""
        admitted = admit(self, msg, self.authorizer)
        if admitted is None:
            return
        service = admitted.spec.service
        if not isinstance(service, ReplicaManagerService):
            log.warning("replica-manager cannot handle %s", admitted.spec.name)
            return
        if service.from_cache is not None:
            if msg.reply_expected:
                self.post(names.NET, NetReply(msg.connection_id, msg.request_id,
                                              service.from_cache(self.metadata_cache, admitted.request, admitted.auth)))
            return
        if service.updates_cache:
            self.metadata_cache.maybe_update(admitted.request)
        self._dispatch(admitted.request, msg.connection_id, msg.request_id, msg.reply_expected, None, admitted.finish)

    def on_LocalRequest(self, msg: LocalRequest, sender: str) -> None:
        """An in-process request (the group coordinator's): answered with LocalReply to ``msg.reply_to``, acks=0
        included; a Metadata request from the whole cache, here. A fetch as the debugging replica (-2) reads to the
        log end, as the group coordinator's loading reads its own log (GroupMetadataManager.doLoadGroupsAndOffsets:
        FetchLogEnd)."""
        body = msg.body
        spec = unit_of(body)
        service = None if spec is None else spec.service
        if isinstance(service, ReplicaManagerService) and service.from_cache is not None:
            # FindCoordinator's lookup of a coordinator in the cache
            self.post(msg.reply_to, LocalReply(msg.token, service.from_cache(self.metadata_cache, body, ALLOW_ALL)))
            return
        if isinstance(body, FetchRequest) and body.replica_id == DEBUGGING_REPLICA_ID:
            body = attrs.evolve(body, replica_id=FUTURE_LOCAL_REPLICA_ID)
        self._dispatch(body, 0, msg.token, True, msg.reply_to)

    def _reply(self, connection_id: int, request_id: int, local_reply_to: str | None, response: Any) -> None:
        if local_reply_to is None:
            self.post(names.NET, NetReply(connection_id, request_id, response))
        else:
            self.post(local_reply_to, LocalReply(request_id, response))

    def _dispatch(self, body: Any, connection_id: int, request_id: int, reply_expected: bool,
                  local_reply_to: str | None, finish: Callable[[Any], Any] | None = None) -> None:
        if self.shutdown is not None or self.shards == 0:
            return  # shutting down: the sender's timeout / retry takes over, as with a closed socket
        try:
            unit = sharded_unit_of(body)
            parts = unit.split(body, self.shards)
        except SplitRefused as refused:
            if reply_expected:
                self._reply(connection_id, request_id, local_reply_to, refused.response)
            return
        except TypeError as e:
            log.warning("%s", e)
            return
        if not parts:  # a fetch, produce or list-offsets with no partitions
            if reply_expected:
                merged = unit.merge(body, {})
                self._reply(connection_id, request_id, local_reply_to, merged if finish is None else finish(merged))
            return
        token = next(self.tokens)
        self.pending[token] = _Pending(connection_id, request_id, reply_expected, body, unit, set(parts), {},
                                       local_reply_to, finish)
        shard_names = self.shard_names
        for i, part in parts.items():
            self.post(shard_names[i], ShardRequest(token, part))

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
            merged = p.unit.merge(p.request, p.parts)
            self._reply(p.connection_id, p.request_id, p.local_reply_to,
                        merged if p.finish is None else p.finish(merged))

    def on_TxnMarkersWritten(self, msg: TxnMarkersWritten, sender: str) -> None:
        """A shard wrote a transaction's markers to ``__consumer_offsets`` partitions: on to the group coordinator
        (GroupCoordinator.scheduleHandleTxnCompletion), behind the shard's answers sent before it (`core_effects`)."""
        if self.runtime.has_actor(names.GROUP_COORDINATOR):
            self.post(names.GROUP_COORDINATOR, msg)

    def on_TopicConfigChanged(self, msg: TopicConfigChanged, sender: str) -> None:
        """TopicConfigHandler → LogManager: every shard's logs of the topic take the new overrides."""
        for i in range(self.shards):
            self.post(names.shard(i), msg)

    def on_LogConfigDefaultsChanged(self, msg: LogConfigDefaultsChanged, sender: str) -> None:
        """DynamicLogConfig.reconfigure → LogManager: every shard's logs take the new broker defaults."""
        for i in range(self.shards):
            self.post(names.shard(i), msg)

    def on_ReplicationQuotasChanged(self, msg: ReplicationQuotasChanged, sender: str) -> None:
        """BrokerConfigHandler → the ReplicationQuotaManagers: every shard takes the broker's new rates."""
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
