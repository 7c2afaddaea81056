"""OffsetDelete (47, v0; KIP-496) as Kafka 2.6 serves it, routed to the group coordinator: a group's committed offsets
of the partitions named go, unless the group's consumers subscribe to their topics."""

from __future__ import annotations

from typing import Any

from core.api.admin import fit_response
from core.api.registry import ApiSpec, RequestContext, Route, register
from messages.common import Errors, TopicPartition
from messages.group import OffsetDeleteRequest, OffsetDeleteResponse

OFFSET_DELETE = 47


def offset_delete_from_wire(version: int, body: dict[str, Any], ctx: RequestContext) -> OffsetDeleteRequest:
    return OffsetDeleteRequest(body["group_id"], tuple(TopicPartition(t["name"], p["partition_index"])
                                                       for t in body["topics"] for p in t["partitions"]))


def offset_delete_to_wire(version: int, r: OffsetDeleteResponse) -> dict[str, Any]:
    """KafkaApis.handleOffsetDeleteRequest: a group error alone (getErrorResponse: no topics), else each
    partition's error grouped by topic."""
    topics: dict[str, list[dict[str, Any]]] = {}
    for tp, error in r.partitions:
        topics.setdefault(tp.topic, []).append({"partition_index": tp.partition, "error_code": int(error)})
    return fit_response(OFFSET_DELETE, version, {
        "error_code": int(r.error), "throttle_time_ms": 0,
        "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]})


def offset_delete_error(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    return offset_delete_to_wire(version, OffsetDeleteResponse(Errors(error)))


register(ApiSpec(OFFSET_DELETE, Route.GROUP_COORDINATOR, offset_delete_from_wire, offset_delete_to_wire,
                 offset_delete_error))
