"""StopReplica (key 5, v0-3): the controller's StopReplicaRequest, served by the replica manager
(``KafkaApis.handleStopReplicaRequest`` → ``ReplicaManager.stopReplicas``) and sent at v3 by the controller's channels
(IBP 2.6, KIP-570).

Versions (StopReplicaRequest.json): v0 is one ``delete_partitions`` flag for a flat list of partitions; v1 adds
``broker_epoch`` and groups the partition indexes by topic; v2 is v1 made flexible; v3 gives every partition its own
``leader_epoch`` and ``delete_partition``. Before v3 every partition takes the request's flag and leader epoch -1
(``StopReplicaRequest.partitionStates``: the field's default, LeaderAndIsr.NoEpoch, which stops the replica whatever
its epoch). The response is ``error_code`` + ``partition_errors`` in all four.
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
from messages.common import NO_EPOCH, Errors, wire_topic_partition
from messages.requests import PartitionError, StopReplicaPartitionState, StopReplicaRequest, StopReplicaResponse
from protocol.api_versions import ApiKeys

SEND_VERSION = 3  # what an IBP 2.6 controller sends (KAFKA_2_6_IV0)


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext | None = None) -> StopReplicaRequest:
    """StopReplicaRequest.partitionStates() at any version, in the request's order."""
    if version >= 3:
        states = tuple(StopReplicaPartitionState(wire_topic_partition(t["topic_name"], p["partition_index"]),
                                                 p["leader_epoch"], p["delete_partition"])
                       for t in body["topic_states"] for p in t["partition_states"])
    else:
        delete = body["delete_partitions"]
        if version == 0:
            tps = [wire_topic_partition(p["topic_name"], p["partition_index"]) for p in body["ungrouped_partitions"]]
        else:
            tps = [wire_topic_partition(t["name"], i) for t in body["topics"] for i in t["partition_indexes"]]
        states = tuple(StopReplicaPartitionState(tp, NO_EPOCH, delete) for tp in tps)
    return StopReplicaRequest(controller_id=body["controller_id"], controller_epoch=body["controller_epoch"],
                              broker_epoch=body.get("broker_epoch", NO_EPOCH), partition_states=states)



def _state_to_wire(s: StopReplicaPartitionState) -> dict[str, Any]:
    return {"partition_index": s.topic_partition.partition, "leader_epoch": s.leader_epoch,
            "delete_partition": s.delete_partition}


def request_to_wire(request: StopReplicaRequest) -> dict[str, Any]:
    """The v3 body (StopReplicaRequest.Builder.build: ``topic_states`` with each partition's epoch and flag)."""
    return control_request_to_wire(request, _state_to_wire)


response_to_wire = partition_errors_response_to_wire


def response_from_wire(version: int, body: dict[str, Any]) -> StopReplicaResponse:
    return partition_errors_response_from_wire(StopReplicaResponse, body)


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    """StopReplicaRequest.getErrorResponse: the error at the top and for every partition of the request."""
    return response_to_wire(version, every_partition_failed(StopReplicaResponse, request_from_wire(version, body),
                                                            error))


def authorize(request: Any, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis' authorizeClusterOperation(CLUSTER_ACTION) of a controller request: refused, its error answer
    (getErrorResponse) with CLUSTER_AUTHORIZATION_FAILED."""
    if auth.allows_cluster(AclOperation.CLUSTER_ACTION):
        return allowed(request)
    error = Errors.CLUSTER_AUTHORIZATION_FAILED
    return refused(StopReplicaResponse(error, tuple(PartitionError(s.topic_partition, error)
                                                    for s in request.partition_states)))


def split(request: StopReplicaRequest, shards: int) -> dict[int, StopReplicaRequest]:
    """Every shard's part: its partitions' states, maybe none (each shard fences stale controllers on its own)."""
    groups = by_shard(request.partition_states, lambda st: st.topic_partition, shards)
    return {i: attrs.evolve(request, partition_states=tuple(groups.get(i, ()))) for i in range(shards)}


def merge(request: StopReplicaRequest, parts: dict[int, StopReplicaResponse]) -> StopReplicaResponse:
    answers = answers_of(parts)
    return StopReplicaResponse(first_error(a.error for a in answers), tuple(sorted(
        (pe for a in answers for pe in a.partition_errors), key=lambda pe: pe.topic_partition)))


SHARDED = ShardedRequest(StopReplicaRequest, split, merge, lambda part, error: StopReplicaResponse(error),
                         lambda rm, part, now_ms, reply: rm.handle_stop_replica(part, now_ms),
                         changes_partitions=True)


SPEC = ApiSpec(ApiKeys.STOP_REPLICA, ReplicaManagerService(SHARDED), with_principal(request_from_wire),
               response_to_wire, error_response, request_type=StopReplicaRequest, authorize=authorize,
               send_version=SEND_VERSION, request_to_wire=request_to_wire, response_from_wire=response_from_wire)
register(SPEC)
