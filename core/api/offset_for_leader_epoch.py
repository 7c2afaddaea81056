"""OffsetForLeaderEpoch (key 23, v0-3): the end offset of a leader epoch in the leader's log (KIP-101/279/320),
served by the replica manager (``KafkaApis.handleOffsetForLeaderEpochRequest`` →
``ReplicaManager.lastOffsetForLeaderEpoch``) and sent at v3 by the replica fetchers for their truncating partitions.

Versions (OffsetForLeaderEpochRequest.json): v0-1 ask ``leader_epoch`` per partition; v2 adds the fetcher's
``current_leader_epoch`` (-1 before: not fenced); v3 adds ``replica_id`` (-2 before, DEBUGGING_REPLICA_ID). The
response's ``leader_epoch`` arrives in v1 (v0 answers only the end offset) and ``throttle_time_ms`` in v2.
"""

from __future__ import annotations

from typing import Any

import attrs

from core.api.registry import ApiSpec, ReplicaManagerService, RequestContext, register, with_principal
from core.api.topic_groups import error_of
from core.broker.shards import ShardedRequest, answers_of, shard_of
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.common import Errors, TopicPartition
from messages.replication import (
    DEBUGGING_REPLICA_ID,
    NO_LEADER_EPOCH,
    OffsetForLeaderPartition,
    OffsetForLeaderPartitionResult,
    OffsetForLeaderTopic,
    OffsetForLeaderTopicResult,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
)
from protocol.api_versions import ApiKeys

SEND_VERSION = 3  # ReplicaFetcherThread at IBP >= KAFKA_2_3_IV1


def request_from_wire(version: int, body: dict[str, Any],
                      ctx: RequestContext | None = None) -> OffsetsForLeaderEpochRequest:
    return OffsetsForLeaderEpochRequest(tuple(
        OffsetForLeaderTopic(t["topic"], tuple(
            OffsetForLeaderPartition(p["partition"], p.get("current_leader_epoch", NO_LEADER_EPOCH), p["leader_epoch"])
            for p in t["partitions"]))
        for t in body["topics"]), body.get("replica_id", DEBUGGING_REPLICA_ID))


def request_to_wire(request: OffsetsForLeaderEpochRequest) -> dict[str, Any]:
    return {"replica_id": request.replica_id, "topics": [
        {"topic": t.topic, "partitions": [
            {"partition": p.partition, "current_leader_epoch": p.current_leader_epoch, "leader_epoch": p.leader_epoch}
            for p in t.partitions]} for t in request.topics]}


def response_to_wire(version: int, response: OffsetsForLeaderEpochResponse) -> dict[str, Any]:
    def partition(p: OffsetForLeaderPartitionResult) -> dict[str, Any]:
        out = {"error_code": int(p.error_code), "partition": p.partition, "end_offset": p.end_offset}
        if version >= 1:
            out["leader_epoch"] = p.leader_epoch
        return out

    body: dict[str, Any] = {"topics": [{"topic": t.topic, "partitions": [partition(p) for p in t.partitions]}
                                       for t in response.topics]}
    if version >= 2:
        body["throttle_time_ms"] = response.throttle_time_ms
    return body


def response_from_wire(version: int, body: dict[str, Any]) -> OffsetsForLeaderEpochResponse:
    return OffsetsForLeaderEpochResponse(tuple(
        OffsetForLeaderTopicResult(t["topic"], tuple(
            OffsetForLeaderPartitionResult(error_of(p["error_code"]), p["partition"],
                                           p.get("leader_epoch", NO_LEADER_EPOCH), p["end_offset"])
            for p in t["partitions"]))
        for t in body["topics"]), body.get("throttle_time_ms", 0))


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    """OffsetsForLeaderEpochRequest.getErrorResponse: every partition with the error, UNDEFINED epoch and offset."""
    e = error_of(error)
    return response_to_wire(version, OffsetsForLeaderEpochResponse(tuple(
        OffsetForLeaderTopicResult(t["topic"], tuple(
            OffsetForLeaderPartitionResult(e, p["partition"], NO_LEADER_EPOCH, -1) for p in t["partitions"]))
        for t in body["topics"])))


def authorize(request: OffsetsForLeaderEpochRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleOffsetForLeaderEpochRequest: CLUSTER_ACTION on the Cluster (a follower) allows every
    partition; otherwise (a consumer, KIP-320) a topic without DESCRIBE answers TOPIC_AUTHORIZATION_FAILED for each
    of its partitions (epoch and offset -1)."""
    if auth.allows_cluster(AclOperation.CLUSTER_ACTION):
        return allowed(request)
    topics = auth.filter(AclOperation.DESCRIBE, ResourceType.TOPIC, (t.topic for t in request.topics))
    denied = tuple(OffsetForLeaderTopicResult(t.topic, tuple(
        OffsetForLeaderPartitionResult(Errors.TOPIC_AUTHORIZATION_FAILED, p.partition, -1, -1) for p in t.partitions))
        for t in request.topics if t.topic not in topics)
    if not denied:
        return allowed(request)
    rest = tuple(t for t in request.topics if t.topic in topics)
    if not rest:
        return refused(OffsetsForLeaderEpochResponse(denied))
    return allowed(attrs.evolve(request, topics=rest), lambda r: attrs.evolve(r, topics=r.topics + denied))


def split(request: OffsetsForLeaderEpochRequest, shards: int) -> dict[int, OffsetsForLeaderEpochRequest]:
    per_shard: dict[int, dict[str, list[OffsetForLeaderPartition]]] = {}
    for t in request.topics:
        for q in t.partitions:
            shard = shard_of(TopicPartition(t.topic, q.partition), shards)
            per_shard.setdefault(shard, {}).setdefault(t.topic, []).append(q)
    return {i: attrs.evolve(request, topics=tuple(attrs.evolve(t, partitions=tuple(per_shard[i][t.topic]))
                                                  for t in request.topics if t.topic in per_shard[i]))
            for i in sorted(per_shard)}


def merge(request: OffsetsForLeaderEpochRequest, parts: dict[int, OffsetsForLeaderEpochResponse]
          ) -> OffsetsForLeaderEpochResponse:
    """In the request's topic and partition order."""
    found = {(t.topic, r.partition): r for a in answers_of(parts) for t in a.topics for r in t.partitions}
    topics = []
    for rt in request.topics:
        results = tuple(found[(rt.topic, q.partition)] for q in rt.partitions if (rt.topic, q.partition) in found)
        if results:
            topics.append(OffsetForLeaderTopicResult(rt.topic, results))
    return OffsetsForLeaderEpochResponse(tuple(topics))


def error(request: OffsetsForLeaderEpochRequest, code: Errors) -> OffsetsForLeaderEpochResponse:
    return OffsetsForLeaderEpochResponse(tuple(
        OffsetForLeaderTopicResult(t.topic, tuple(OffsetForLeaderPartitionResult(code, q.partition, -1, -1)
                                                  for q in t.partitions)) for t in request.topics))


def response_failed(response: OffsetsForLeaderEpochResponse) -> bool:
    return any(r.error_code != Errors.NONE for t in response.topics for r in t.partitions)


SHARDED = ShardedRequest(OffsetsForLeaderEpochRequest, split, merge, error,
                         lambda rm, part, now_ms, reply: rm.handle_offsets_for_leader_epoch(part, now_ms),
                         response_type=OffsetsForLeaderEpochResponse, response_failed=response_failed,
                         handle_response=lambda rm, leader, response, now_ms:
                         rm.handle_epoch_response(leader, response, now_ms))


SPEC = ApiSpec(ApiKeys.OFFSET_FOR_LEADER_EPOCH, ReplicaManagerService(SHARDED), with_principal(request_from_wire),
               response_to_wire, error_response, request_type=OffsetsForLeaderEpochRequest, authorize=authorize,
               send_version=SEND_VERSION, request_to_wire=request_to_wire, response_from_wire=response_from_wire)
register(SPEC)
