"""LeaderAndIsr (key 4, v0-4): the controller's LeaderAndIsrRequest, served by the replica manager
(``KafkaApis.handleLeaderAndIsrRequest`` → ``ReplicaManager.becomeLeaderOrFollower``) and sent at v4 by the
controller's channels (``ControllerChannelManager``, IBP 2.6).

Versions (LeaderAndIsrRequest.json): v0-1 carry ``ungrouped_partition_states`` naming each partition's topic; v1 adds
``is_new``; v2 groups them under ``topic_states`` and adds ``broker_epoch``; v3 adds ``adding_replicas`` /
``removing_replicas``; v4 is v3 made flexible. The response is ``error_code`` + ``partition_errors`` in all five.

``live_leaders`` carry one endpoint per broker on the wire (``Broker.node(interBrokerListenerName)``): a received
leader is a ``Broker`` with that one endpoint and no epoch. kactor's broker, like Kafka 2.6's, reads the leaders'
endpoints from its MetadataCache, not from this list; the sending side writes each broker's first endpoint, which is
its inter-broker one in every configuration kactor starts (one listener; see docs/wire-protocol.md).
"""

from __future__ import annotations

from typing import Any

import attrs

from core.api.registry import ApiSpec, ReplicaManagerService, RequestContext, register, with_principal
from core.api.topic_groups import (
    control_request_to_wire,
    every_partition_failed,
    partition_errors_response_from_wire,
    partition_errors_response_to_wire,
)
from core.broker.shards import ShardedRequest, answers_of, by_shard, first_error
from core.security.acl import AclOperation
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.common import NO_EPOCH, Broker, EndPoint, Errors, wire_topic_partition
from messages.requests import LeaderAndIsrPartitionState, LeaderAndIsrRequest, LeaderAndIsrResponse, PartitionError
from protocol.api_versions import ApiKeys

SEND_VERSION = 4  # what an IBP 2.6 controller sends (LeaderAndIsrRequest.Builder at KAFKA_2_4_IV1+)


def _state_from_wire(topic: str, p: dict[str, Any]) -> LeaderAndIsrPartitionState:
    # positional, as update_metadata's: attrs' keyword calls cost 10-35 % more over 100,000 partitions
    return LeaderAndIsrPartitionState(
        wire_topic_partition(topic, p["partition_index"]), p["controller_epoch"], p["leader"], p["leader_epoch"],
        tuple(p["isr"]), p["zk_version"], tuple(p["replicas"]), tuple(p.get("adding_replicas", ())),
        tuple(p.get("removing_replicas", ())), p.get("is_new", False))


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext | None = None) -> LeaderAndIsrRequest:
    """LeaderAndIsrRequest.partitionStates(): v0-1's flat list or v2+'s topic groups, flattened in order."""
    if version < 2:
        states = tuple(_state_from_wire(p["topic_name"], p) for p in body["ungrouped_partition_states"])
    else:
        states = tuple(_state_from_wire(t["topic_name"], p)
                       for t in body["topic_states"] for p in t["partition_states"])
    leaders = tuple(Broker(b["broker_id"], (EndPoint(b["host_name"], b["port"]),)) for b in body["live_leaders"])
    return LeaderAndIsrRequest(controller_id=body["controller_id"], controller_epoch=body["controller_epoch"],
                               broker_epoch=body.get("broker_epoch", NO_EPOCH), partition_states=states,
                               live_leaders=leaders)


def _state_to_wire(s: LeaderAndIsrPartitionState) -> dict[str, Any]:
    return {"partition_index": s.topic_partition.partition, "controller_epoch": s.controller_epoch,
            "leader": s.leader, "leader_epoch": s.leader_epoch, "isr": s.isr, "zk_version": s.zk_version,
            "replicas": s.replicas, "adding_replicas": s.adding_replicas,
            "removing_replicas": s.removing_replicas, "is_new": s.is_new}


def request_to_wire(request: LeaderAndIsrRequest) -> dict[str, Any]:
    """The v4 body (LeaderAndIsrRequest.Builder.build: partition states grouped by topic)."""
    return control_request_to_wire(request, _state_to_wire) | {
        "live_leaders": [_leader_to_wire(b) for b in request.live_leaders]}



def _leader_to_wire(b: Broker) -> dict[str, Any]:
    ep = b.endpoints[0] if b.endpoints else EndPoint("", -1)
    return {"broker_id": b.id, "host_name": ep.host, "port": ep.port}


response_to_wire = partition_errors_response_to_wire


def response_from_wire(version: int, body: dict[str, Any]) -> LeaderAndIsrResponse:
    return partition_errors_response_from_wire(LeaderAndIsrResponse, body)


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    """LeaderAndIsrRequest.getErrorResponse: the error at the top and for every partition of the request."""
    return response_to_wire(version, every_partition_failed(LeaderAndIsrResponse, request_from_wire(version, body),
                                                            error))


def authorize(request: Any, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis' authorizeClusterOperation(CLUSTER_ACTION) of a controller request: refused, its error answer
    (getErrorResponse) with CLUSTER_AUTHORIZATION_FAILED."""
    if auth.allows_cluster(AclOperation.CLUSTER_ACTION):
        return allowed(request)
    error = Errors.CLUSTER_AUTHORIZATION_FAILED
    return refused(LeaderAndIsrResponse(error, tuple(PartitionError(s.topic_partition, error)
                                                     for s in request.partition_states)))


def split(request: LeaderAndIsrRequest, shards: int) -> dict[int, LeaderAndIsrRequest]:
    """Every shard's part: its partitions' states, maybe none (each shard fences stale controllers on its own)."""
    groups = by_shard(request.partition_states, lambda st: st.topic_partition, shards)
    return {i: attrs.evolve(request, partition_states=tuple(groups.get(i, ()))) for i in range(shards)}


def merge(request: LeaderAndIsrRequest, parts: dict[int, LeaderAndIsrResponse]) -> LeaderAndIsrResponse:
    answers = answers_of(parts)
    return LeaderAndIsrResponse(first_error(a.error for a in answers), tuple(sorted(
        (pe for a in answers for pe in a.partition_errors), key=lambda pe: pe.topic_partition)))


SHARDED = ShardedRequest(LeaderAndIsrRequest, split, merge, lambda part, error: LeaderAndIsrResponse(error),
                         lambda rm, part, now_ms, reply: rm.handle_leader_and_isr(part, now_ms),
                         changes_partitions=True)


SPEC = ApiSpec(ApiKeys.LEADER_AND_ISR, ReplicaManagerService(SHARDED), with_principal(request_from_wire),
               response_to_wire, error_response, request_type=LeaderAndIsrRequest, authorize=authorize,
               send_version=SEND_VERSION, request_to_wire=request_to_wire, response_from_wire=response_from_wire)
register(SPEC)
