"""ReplicaManagerActor ("replica-manager"): the broker's request front for the request types of
core/api/broker_requests.py — LeaderAndIsr, UpdateMetadata, StopReplica, Fetch, Produce, ListOffsets,
OffsetsForLeaderEpoch, DescribeLogDirs (KafkaApis → ReplicaManager) — and Metadata, from the network
(NetRequest → NetReply) or from another actor of the process (LocalRequest → LocalReply: the group coordinator
reading and writing ``__consumer_offsets``, Kafka's in-process replicaManager.appendRecords / readFromLocalLog).

The partitions themselves live in a bounded set of PartitionActor shards (``kactor.partition.actors``). This actor
splits each request by shard, hands each shard its part, merges the parts' answers into the one response Kafka's
ReplicaManager gives, and sends it back over the transport; how each request type is split and merged is its unit's
(core/api/broker_requests.py), so this actor knows none of them. Controller requests reach every shard (even with no
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
from core.api import alter_replica_log_dirs as alter_replica_log_dirs_api
from core.api import delete_records as delete_records_api
from core.api import describe_log_dirs as describe_log_dirs_api
from core.api import fetch as fetch_api
from core.api import kactor_private as kactor_private_api
from core.api import leader_and_isr as leader_and_isr_api
from core.api import list_offsets as list_offsets_api
from core.api import offset_for_leader_epoch as offset_for_leader_epoch_api
from core.api import stop_replica as stop_replica_api
from core.api import update_metadata as update_metadata_api
from core.api import write_txn_markers as write_txn_markers_api
from core.api.broker_requests import unit_of
from core.api.fetch import authorize_fetch
from core.api.list_offsets import authorize_list_offsets
from core.api.metadata import handle_metadata_request
from core.api.produce import authorize_produce
from core.broker.metadata_cache import MetadataCache
from core.broker.replica_manager import FUTURE_LOCAL_REPLICA_ID
from core.broker.shards import ShardedRequest, SplitRefused
from core.security.authorizer import Authorized, Authorizer, RequestAuthorizer, request_authorizer
from messages.broker_lifecycle import BrokerRegistered, BrokerShutdownComplete, ReplicaManagerInit
from messages.common import Errors
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
from messages.quota import ReplicationQuotasChanged
from messages.replication import (
    DEBUGGING_REPLICA_ID,
    GROUP_METADATA_TOPIC_NAME,
    AlterReplicaLogDirsRequest,
    DeleteRecordsRequest,
    DescribeLogDirsRequest,
    DescribeMetadataCacheRequest,
    FetchRequest,
    ListOffsetsRequest,
    LocalReply,
    LocalRequest,
    OffsetsForLeaderEpochRequest,
    ProduceRequest,
)
from messages.requests import (
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from messages.runtime import ActorInit
from messages.security import AuthorizerChanged
from messages.txn_markers import WriteTxnMarkersRequest

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
        self.authorizer: Authorizer | None = None  # KafkaApis' authorizer (None: authorizer.class.name empty)

    def on_AuthorizerChanged(self, msg: AuthorizerChanged, sender: str) -> None:
        """AclAuthorizer's cache, loaded or changed (the config manager follows the ACL change notifications)."""
        self.authorizer = Authorizer.from_message(msg)

    def _auth(self, msg: NetRequest) -> RequestAuthorizer:
        return request_authorizer(self.authorizer, msg.body.principal, msg.client_host)

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
        check = _AUTHORIZE.get(type(msg.body))
        if check is not None and self.authorizer is not None:
            decision = check(msg.body, self._auth(msg))
            if decision.request is None:
                if msg.reply_expected:
                    self.post(names.NET, NetReply(msg.connection_id, msg.request_id, decision.answer))
                return
            self._dispatch(decision.request, msg.connection_id, msg.request_id, msg.reply_expected, None,
                           decision.finish)
            return
        front = _FRONT.get(type(msg.body))
        body = msg.body if front is None else front(self, msg)
        if body is not None:
            self._dispatch(body, msg.connection_id, msg.request_id, msg.reply_expected, None)

    # -- KafkaApis' steps of a request before (or instead of) ReplicaManager's, by request type (`_FRONT`) ----------
    def _metadata(self, msg: NetRequest) -> None:
        """KafkaApis.handleTopicMetadataRequest, from the whole cache: answered here, no shard sees it."""
        if msg.reply_expected:
            self.post(names.NET, NetReply(msg.connection_id, msg.request_id,
                                          handle_metadata_request(self.metadata_cache, msg.body, self._auth(msg))))

    def _update_metadata(self, msg: NetRequest) -> UpdateMetadataRequest | None:
        """KafkaApis.handleUpdateMetadataRequest: the whole cache is updated here, the shards' parts by them."""
        if self._refused_cluster_action(msg, update_metadata_api.authorize):
            return None
        self.metadata_cache.maybe_update(msg.body)
        return msg.body

    def _controller_request(self, msg: NetRequest) -> Any:
        """KafkaApis.handleLeaderAndIsrRequest / handleStopReplicaRequest: CLUSTER_ACTION first."""
        authorize = leader_and_isr_api.authorize if isinstance(msg.body, LeaderAndIsrRequest) else \
            stop_replica_api.authorize
        return None if self._refused_cluster_action(msg, authorize) else msg.body

    def _refused_cluster_action(self, msg: NetRequest, authorize: Callable[[Any, RequestAuthorizer], Any]) -> bool:
        """authorizeClusterOperation(CLUSTER_ACTION): a refused controller request is answered its error response."""
        if self.authorizer is None:
            return False
        refusal = authorize(msg.body, self._auth(msg))
        if refusal is not None and msg.reply_expected:
            self.post(names.NET, NetReply(msg.connection_id, msg.request_id, refusal))
        return refusal is not None

    def _produce(self, msg: NetRequest) -> ProduceRequest:
        """KafkaApis.handleProduceRequest's authorization and internalTopicsAllowed (only AdminUtils.AdminClientId's
        may append to an internal topic); a refused topic's answer is TOPIC_AUTHORIZATION_FAILED whatever else."""
        body = msg.body if msg.client_id == ADMIN_CLIENT_ID else refuse_internal_topics(msg.body)
        return authorize_produce(body, self._auth(msg))

    def _fetch(self, msg: NetRequest) -> None:
        """KafkaApis.handleFetchRequest's authorization: the refused partitions answered beside the others."""
        body, refused = authorize_fetch(msg.body, self._auth(msg))
        self._dispatch(body, msg.connection_id, msg.request_id, msg.reply_expected, None,
                       (lambda r: fetch_api.with_refused(r, refused)) if refused else None)

    def _list_offsets(self, msg: NetRequest) -> None:
        """KafkaApis.handleListOffsetRequest's authorization: the refused partitions answered beside the others."""
        body, refused = authorize_list_offsets(msg.body, self._auth(msg))
        self._dispatch(body, msg.connection_id, msg.request_id, msg.reply_expected, None,
                       (lambda r: list_offsets_api.with_refused(r, refused)) if refused else None)

    def on_LocalRequest(self, msg: LocalRequest, sender: str) -> None:
        """An in-process request (the group coordinator's): answered with LocalReply to ``msg.reply_to``, acks=0
        included; a Metadata request from the whole cache, here. A fetch as the debugging replica (-2) reads to the
        log end, as the group coordinator's loading reads its own log (GroupMetadataManager.doLoadGroupsAndOffsets:
        FetchLogEnd)."""
        body = msg.body
        if isinstance(body, MetadataRequest):  # FindCoordinator's lookup of a coordinator in the cache
            self.post(msg.reply_to, LocalReply(msg.token, handle_metadata_request(self.metadata_cache, body)))
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
            unit = unit_of(body)
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
        self.pending[token] = _Pending(connection_id, request_id, reply_expected, body, unit, set(parts),
                                       local_reply_to=local_reply_to, finish=finish)
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
            merged = p.unit.merge(p.request, p.parts)
            self._reply(p.connection_id, p.request_id, p.local_reply_to,
                        merged if p.finish is None else p.finish(merged))

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


# the request types KafkaApis handles partly or wholly before ReplicaManager: what the front does with a NetRequest of
# that type, returning the request its shards then serve (None: answered here)
_FRONT: dict[type, Callable[[ReplicaManagerActor, NetRequest], Any]] = {
    MetadataRequest: ReplicaManagerActor._metadata,
    UpdateMetadataRequest: ReplicaManagerActor._update_metadata,
    LeaderAndIsrRequest: ReplicaManagerActor._controller_request,
    StopReplicaRequest: ReplicaManagerActor._controller_request,
    ProduceRequest: ReplicaManagerActor._produce,
    FetchRequest: ReplicaManagerActor._fetch,
    ListOffsetsRequest: ReplicaManagerActor._list_offsets,
}

# KafkaApis' authorization of the other requests the shards serve, by request type (each API's unit decides)
_AUTHORIZE: dict[type, Callable[[Any, RequestAuthorizer], Authorized]] = {
    DeleteRecordsRequest: delete_records_api.authorize,
    WriteTxnMarkersRequest: write_txn_markers_api.authorize,
    AlterReplicaLogDirsRequest: alter_replica_log_dirs_api.authorize,
    DescribeLogDirsRequest: describe_log_dirs_api.authorize,
    OffsetsForLeaderEpochRequest: offset_for_leader_epoch_api.authorize,
    DescribeMetadataCacheRequest: kactor_private_api.authorize,
}
