"""ListOffsets (key 2, v0-5): the offset of a time in a partition's log (-1 latest, -2 earliest), served by the
replica manager (``KafkaApis.handleListOffsetRequest`` → ``ReplicaManager.fetchOffsetForTimestamp``).

Versions (ListOffsetsRequest.json): v0 asks up to ``max_num_offsets`` offsets and is answered with
``old_style_offsets``; v1 asks one offset and answers it with its timestamp; v2 adds ``isolation_level`` and
``throttle_time_ms``; v4 the client's ``current_leader_epoch`` and the answer's ``leader_epoch``; v5 is v4 where a
follower may answer OFFSET_NOT_AVAILABLE (KIP-207: a leader whose high watermark is behind).

A follower sends v5 to its leader after an OFFSET_OUT_OF_RANGE fetch (``AbstractFetcherThread.fetchOffsetAndTruncate``,
IBP 2.6's ``ReplicaFetcherThread.fetchEarliestOffsetFromLeader`` / ``fetchLatestOffsetFromLeader``).

v0 is answered with the one offset v1+ would give (or none on an error): 2.6's ``legacyFetchOffsetsForTimestamp``
lists segment base offsets older than the time, a reading of segments no client since Kafka 0.10.1 relies on.
"""

from __future__ import annotations

from typing import Any

import attrs

from core.api.registry import ApiSpec, ReplicaManagerService, RequestContext, register
from core.api.topic_groups import error_of, group_by_topic
from core.broker.shards import ShardedRequest, answers_of, by_shard, in_request_order
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import ANONYMOUS, Authorized, RequestAuthorizer, allowed
from messages.common import Errors, TopicPartition
from messages.replication import (
    NO_LEADER_EPOCH,
    ListOffsetsPartition,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
)
from protocol.api_versions import ApiKeys

SEND_VERSION = 5  # ReplicaFetcherThread at IBP >= KAFKA_2_2_IV1


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext | None = None) -> ListOffsetsRequest:
    return ListOffsetsRequest(body["replica_id"], body.get("isolation_level", 0), tuple(
        ListOffsetsPartition(TopicPartition(t["name"], p["partition_index"]), p["timestamp"],
                             p.get("current_leader_epoch", NO_LEADER_EPOCH))
        for t in body["topics"] for p in t["partitions"]), ctx.principal if ctx is not None else ANONYMOUS)


def authorize_list_offsets(request: ListOffsetsRequest, auth: RequestAuthorizer
                           ) -> tuple[ListOffsetsRequest, tuple[ListOffsetsPartitionResponse, ...]]:
    """KafkaApis.handleListOffsetRequest's authorization: a partition of a topic without DESCRIBE answers
    TOPIC_AUTHORIZATION_FAILED. Returns the request of the partitions allowed and the answers of those refused."""
    if not auth.enabled:
        return request, ()
    allowed = auth.filter(AclOperation.DESCRIBE, ResourceType.TOPIC, (p.tp.topic for p in request.partitions))
    refused = tuple(ListOffsetsPartitionResponse(p.tp, Errors.TOPIC_AUTHORIZATION_FAILED)
                    for p in request.partitions if p.tp.topic not in allowed)
    if not refused:
        return request, ()
    return attrs.evolve(request, partitions=tuple(p for p in request.partitions if p.tp.topic in allowed)), refused


def with_refused(response: ListOffsetsResponse, refused: tuple[ListOffsetsPartitionResponse, ...]
                 ) -> ListOffsetsResponse:
    """The refused partitions' answers, then the others'."""
    return attrs.evolve(response, partitions=refused + response.partitions) if refused else response


def authorize(request: ListOffsetsRequest, auth: RequestAuthorizer) -> Authorized:
    """`authorize_list_offsets` for the request front: the refused partitions are answered beside the others."""
    body, refused = authorize_list_offsets(request, auth)
    return allowed(body, (lambda r: with_refused(r, refused)) if refused else None)


def request_to_wire(request: ListOffsetsRequest) -> dict[str, Any]:
    """The v5 body, partitions grouped by topic in order of first appearance."""
    return {"replica_id": request.replica_id, "isolation_level": request.isolation_level, "topics": [
        {"name": topic, "partitions": [{"partition_index": p.tp.partition, "current_leader_epoch":
                                        p.current_leader_epoch, "timestamp": p.timestamp} for p in parts]}
        for topic, parts in group_by_topic(request.partitions, _tp)]}


def _partition_to_wire(version: int, p: ListOffsetsPartitionResponse) -> dict[str, Any]:
    out: dict[str, Any] = {"partition_index": p.tp.partition, "error_code": int(p.error)}
    if version == 0:
        out["old_style_offsets"] = [p.offset] if p.error == Errors.NONE and p.offset >= 0 else []
        return out
    out["timestamp"] = p.timestamp
    out["offset"] = p.offset
    if version >= 4:
        out["leader_epoch"] = p.leader_epoch
    return out


def _tp(p: ListOffsetsPartition | ListOffsetsPartitionResponse) -> TopicPartition:
    return p.tp


def response_to_wire(version: int, response: ListOffsetsResponse) -> dict[str, Any]:
    body: dict[str, Any] = {"topics": [
        {"name": topic, "partitions": [_partition_to_wire(version, p) for p in parts]}
        for topic, parts in group_by_topic(response.partitions, _tp)]}
    if version >= 2:
        body["throttle_time_ms"] = 0
    return body


def response_from_wire(version: int, body: dict[str, Any]) -> ListOffsetsResponse:
    """A leader's answer at any version (v0's old_style_offsets: the first, if any)."""
    out = []
    for t in body["topics"]:
        for p in t["partitions"]:
            tp = TopicPartition(t["name"], p["partition_index"])
            if version == 0:
                offsets = p["old_style_offsets"]
                out.append(ListOffsetsPartitionResponse(tp, error_of(p["error_code"]), -1,
                                                        offsets[0] if offsets else -1))
            else:
                out.append(ListOffsetsPartitionResponse(tp, error_of(p["error_code"]), p["timestamp"], p["offset"],
                                                        p.get("leader_epoch", NO_LEADER_EPOCH)))
    return ListOffsetsResponse(tuple(out))


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    """ListOffsetRequest.getErrorResponse: every partition with the error, no offset."""
    e = error_of(error)
    return response_to_wire(version, ListOffsetsResponse(tuple(
        ListOffsetsPartitionResponse(TopicPartition(t["name"], p["partition_index"]), e)
        for t in body["topics"] for p in t["partitions"])))


def split(request: ListOffsetsRequest, shards: int) -> dict[int, ListOffsetsRequest]:
    return {i: attrs.evolve(request, partitions=tuple(parts))
            for i, parts in sorted(by_shard(request.partitions, lambda q: q.tp, shards).items())}


def merge(request: ListOffsetsRequest, parts: dict[int, ListOffsetsResponse]) -> ListOffsetsResponse:
    return ListOffsetsResponse(tuple(in_request_order((q.tp for q in request.partitions),
                                                      (r for a in answers_of(parts) for r in a.partitions))))


def error(request: ListOffsetsRequest, code: Errors) -> ListOffsetsResponse:
    return ListOffsetsResponse(tuple(ListOffsetsPartitionResponse(q.tp, code) for q in request.partitions))


def response_failed(response: ListOffsetsResponse) -> bool:
    return any(r.error != Errors.NONE for r in response.partitions)


SHARDED = ShardedRequest(ListOffsetsRequest, split, merge, error,
                         lambda rm, part, now_ms, reply: rm.handle_list_offsets(part, now_ms),
                         response_type=ListOffsetsResponse, response_failed=response_failed,
                         handle_response=lambda rm, leader, response, now_ms:
                         rm.handle_list_offsets_response(leader, response, now_ms))


SPEC = ApiSpec(ApiKeys.LIST_OFFSETS, ReplicaManagerService(SHARDED), request_from_wire, response_to_wire,
               error_response, request_type=ListOffsetsRequest, authorize=authorize, send_version=SEND_VERSION,
               request_to_wire=request_to_wire, response_from_wire=response_from_wire)
register(SPEC)
