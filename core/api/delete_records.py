"""DeleteRecords (key 21, v0-2): move partitions' log start offsets forward, served by the replica manager
(``KafkaApis.handleDeleteRecordsRequest`` → ``ReplicaManager.deleteRecords``): each leader moves its log start to the
offset asked (-1: its high watermark) and the answer waits until every replica's log start reached it (the low
watermark), or ``timeout_ms``. Followers take the leader's log start from its fetch answers; the segments wholly below
it go at the next retention pass; the log-start-offset checkpoint keeps it over a restart.

Versions (DeleteRecordsRequest.json): v1 is v0 (the throttle time is answered after throttling); v2 is flexible.
"""

from __future__ import annotations

from typing import Any

import attrs

from core.api.registry import ApiSpec, ReplicaManagerService, RequestContext, register, with_principal
from core.api.topic_groups import error_of, group_by_topic
from core.broker.shards import ShardedRequest, answers_of, by_shard, in_request_order
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.common import Errors, TopicPartition
from messages.replication import (
    INVALID_LOW_WATERMARK,
    DeleteRecordsPartition,
    DeleteRecordsPartitionResult,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
)
from protocol.api_versions import ApiKeys

SEND_VERSION = 1  # what Kafka 2.6's admin client sends (v2 is the flexible v1)


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext | None = None) -> DeleteRecordsRequest:
    return DeleteRecordsRequest(body["timeout_ms"], tuple(
        DeleteRecordsPartition(TopicPartition(t["name"], p["partition_index"]), p["offset"])
        for t in body["topics"] for p in t["partitions"]))


def request_to_wire(request: DeleteRecordsRequest) -> dict[str, Any]:
    return {"timeout_ms": request.timeout_ms, "topics": [
        {"name": topic, "partitions": [{"partition_index": p.tp.partition, "offset": p.offset} for p in parts]}
        for topic, parts in group_by_topic(request.partitions, _tp)]}


def _tp(p: DeleteRecordsPartition | DeleteRecordsPartitionResult) -> TopicPartition:
    return p.tp


def response_to_wire(version: int, response: DeleteRecordsResponse) -> dict[str, Any]:
    return {"throttle_time_ms": response.throttle_time_ms, "topics": [
        {"name": topic, "partitions": [{"partition_index": p.tp.partition, "low_watermark": p.low_watermark,
                                        "error_code": int(p.error)} for p in parts]}
        for topic, parts in group_by_topic(response.partitions, _tp)]}


def response_from_wire(version: int, body: dict[str, Any]) -> DeleteRecordsResponse:
    return DeleteRecordsResponse(tuple(
        DeleteRecordsPartitionResult(TopicPartition(t["name"], p["partition_index"]), error_of(p["error_code"]),
                                     p["low_watermark"])
        for t in body["topics"] for p in t["partitions"]), body.get("throttle_time_ms", 0))


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    """DeleteRecordsRequest.getErrorResponse: every partition with the error and an invalid low watermark."""
    e = error_of(error)
    return response_to_wire(version, DeleteRecordsResponse(tuple(
        DeleteRecordsPartitionResult(TopicPartition(t["name"], p["partition_index"]), e, INVALID_LOW_WATERMARK)
        for t in body.get("topics") or [] for p in t["partitions"])))


def authorize(request: DeleteRecordsRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleDeleteRecordsRequest: DELETE on each topic, else TOPIC_AUTHORIZATION_FAILED (nothing deleted)."""
    topics = auth.filter(AclOperation.DELETE, ResourceType.TOPIC, (p.tp.topic for p in request.partitions))
    denied = tuple(DeleteRecordsPartitionResult(p.tp, Errors.TOPIC_AUTHORIZATION_FAILED) for p in request.partitions
                   if p.tp.topic not in topics)
    if not denied:
        return allowed(request)
    rest = tuple(p for p in request.partitions if p.tp.topic in topics)
    if not rest:
        return refused(DeleteRecordsResponse(denied))
    return allowed(attrs.evolve(request, partitions=rest), lambda r: attrs.evolve(r, partitions=denied + r.partitions))


def split(request: DeleteRecordsRequest, shards: int) -> dict[int, DeleteRecordsRequest]:
    return {i: attrs.evolve(request, partitions=tuple(parts))
            for i, parts in sorted(by_shard(request.partitions, _tp, shards).items())}


def merge(request: DeleteRecordsRequest, parts: dict[int, DeleteRecordsResponse]) -> DeleteRecordsResponse:
    return DeleteRecordsResponse(tuple(in_request_order((q.tp for q in request.partitions),
                                                        (r for a in answers_of(parts) for r in a.partitions))))


def error(request: DeleteRecordsRequest, code: Errors) -> DeleteRecordsResponse:
    return DeleteRecordsResponse(tuple(DeleteRecordsPartitionResult(q.tp, code) for q in request.partitions))


SHARDED = ShardedRequest(DeleteRecordsRequest, split, merge, error,
                         lambda rm, part, now_ms, reply: rm.handle_delete_records(part, now_ms, reply))


SPEC = ApiSpec(ApiKeys.DELETE_RECORDS, ReplicaManagerService(SHARDED), with_principal(request_from_wire),
               response_to_wire, error_response, request_type=DeleteRecordsRequest, authorize=authorize,
               send_version=SEND_VERSION, request_to_wire=request_to_wire, response_from_wire=response_from_wire)
register(SPEC)
