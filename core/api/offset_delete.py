"""OffsetDelete (47, v0; KIP-496) as Kafka 2.6 serves it, routed to the group coordinator: a group's committed offsets
of the partitions named go, unless the group's consumers subscribe to their topics."""

from __future__ import annotations

from typing import Any

import attrs

from core.api.admin import fit_response
from core.api.registry import ApiSpec, RequestContext, group_coordinator, register, with_principal
from core.coordinator.group.group_coordinator import GroupCoordinator
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.common import Errors, TopicPartition
from messages.group import OffsetDeleteRequest, OffsetDeleteResponse
from protocol.api_versions import ApiKeys


def offset_delete_from_wire(version: int, body: dict[str, Any], ctx: RequestContext) -> OffsetDeleteRequest:
    return OffsetDeleteRequest(body["group_id"], tuple(TopicPartition(t["name"], p["partition_index"])
                                                       for t in body["topics"] for p in t["partitions"]))


def offset_delete_to_wire(version: int, r: OffsetDeleteResponse) -> dict[str, Any]:
    """KafkaApis.handleOffsetDeleteRequest: a group error alone (getErrorResponse: no topics), else each
    partition's error grouped by topic."""
    topics: dict[str, list[dict[str, Any]]] = {}
    for tp, error in r.partitions:
        topics.setdefault(tp.topic, []).append({"partition_index": tp.partition, "error_code": int(error)})
    return fit_response(ApiKeys.OFFSET_DELETE, version, {
        "error_code": int(r.error), "throttle_time_ms": 0,
        "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]})


def offset_delete_error(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    return offset_delete_to_wire(version, OffsetDeleteResponse(Errors(error)))


def authorize(request: OffsetDeleteRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleOffsetDeleteRequest: DELETE on the group (GROUP_AUTHORIZATION_FAILED), then READ on each
    topic (TOPIC_AUTHORIZATION_FAILED per partition, its offsets kept)."""
    if not auth.allows(AclOperation.DELETE, ResourceType.GROUP, request.group_id):
        return refused(OffsetDeleteResponse(Errors.GROUP_AUTHORIZATION_FAILED))
    topics = auth.filter(AclOperation.READ, ResourceType.TOPIC, (tp.topic for tp in request.partitions))
    denied = tuple((tp, Errors.TOPIC_AUTHORIZATION_FAILED) for tp in request.partitions if tp.topic not in topics)
    if not denied:
        return allowed(request)
    rest = tuple(tp for tp in request.partitions if tp.topic in topics)

    def merged(r: OffsetDeleteResponse) -> OffsetDeleteResponse:
        return r if r.error is not Errors.NONE else attrs.evolve(r, partitions=r.partitions + denied)

    return allowed(attrs.evolve(request, partitions=rest), merged)


register(ApiSpec(ApiKeys.OFFSET_DELETE, group_coordinator(GroupCoordinator.handle_delete_offsets,
                                                  lambda r, e: OffsetDeleteResponse(e)),
                 with_principal(offset_delete_from_wire), offset_delete_to_wire, offset_delete_error,
                 request_type=OffsetDeleteRequest, authorize=authorize))
