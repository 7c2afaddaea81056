"""The group membership APIs (Kafka 2.6's versions), routed to the group coordinator: JoinGroup (11, v0-7),
SyncGroup (14, v0-5), Heartbeat (12, v0-4), LeaveGroup (13, v0-4), DescribeGroups (15, v0-5), ListGroups (16,
v0-4), DeleteGroups (42, v0-2). Each body converts to one internal request of messages/group.py whatever its version,
as KafkaApis' handlers read them, and the internal response back to the version asked.
"""

from __future__ import annotations

from typing import Any

import attrs

from core.api.admin import fit_response
from core.api.registry import ApiSpec, RequestContext, group_coordinator, register, with_principal
from core.coordinator.group.group_coordinator import GroupCoordinator, join_error
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.common import Errors
from messages.group import (
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    DescribedGroup,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupProtocol,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    ListGroupsRequest,
    ListGroupsResponse,
    MemberIdentity,
    SyncGroupAssignment,
    SyncGroupRequest,
    SyncGroupResponse,
)
from protocol.api_versions import ApiKeys

# DescribeGroups v3+ include_authorized_operations: what a broker without an authorizer allows on a group
# (AclOperation READ 3, DELETE 6, DESCRIBE 8 as a bit field); otherwise Integer.MIN_VALUE ("not asked")
GROUP_AUTHORIZED_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8)
AUTHORIZED_OPERATIONS_OMITTED = -(1 << 31)


# -- JoinGroup -------------------------------------------------------------------------------------------------------
def join_group_from_wire(version: int, body: dict[str, Any], ctx: RequestContext) -> JoinGroupRequest:
    """KafkaApis.handleJoinGroupRequest: v0 has no rebalance timeout (the session timeout serves); KIP-394's member
    id is required of dynamic members from v4."""
    instance = body.get("group_instance_id") if version >= 5 else None
    session = body["session_timeout_ms"]
    return JoinGroupRequest(body["group_id"], session, body["rebalance_timeout_ms"] if version >= 1 else session,
                            body["member_id"], body["protocol_type"],
                            tuple(JoinGroupProtocol(p["name"], bytes(p["metadata"])) for p in body["protocols"]),
                            instance, version >= 4 and instance is None, ctx.client_id, ctx.client_host)


def join_group_to_wire(version: int, r: JoinGroupResponse) -> dict[str, Any]:
    return fit_response(ApiKeys.JOIN_GROUP, version, {
        "throttle_time_ms": 0, "error_code": int(r.error), "generation_id": r.generation_id,
        "protocol_type": r.protocol_type,
        # before v7 the protocol name is not nullable: GroupCoordinator.NoProtocol
        "protocol_name": r.protocol_name if version >= 7 else (r.protocol_name or ""),
        "leader": r.leader, "member_id": r.member_id,
        "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id, "metadata": m.metadata}
                    for m in r.members]})


def join_group_error(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    return join_group_to_wire(version, JoinGroupResponse(Errors(error), member_id=body.get("member_id", "")))


# -- SyncGroup -------------------------------------------------------------------------------------------------------
def sync_group_from_wire(version: int, body: dict[str, Any], ctx: RequestContext) -> SyncGroupRequest:
    return SyncGroupRequest(body["group_id"], body["generation_id"], body["member_id"],
                            tuple(SyncGroupAssignment(a["member_id"], bytes(a["assignment"]))
                                  for a in body["assignments"]),
                            body.get("group_instance_id") if version >= 3 else None,
                            body.get("protocol_type") if version >= 5 else None,
                            body.get("protocol_name") if version >= 5 else None)


def sync_group_to_wire(version: int, r: SyncGroupResponse) -> dict[str, Any]:
    return fit_response(ApiKeys.SYNC_GROUP, version, {"throttle_time_ms": 0, "error_code": int(r.error),
                                              "protocol_type": r.protocol_type, "protocol_name": r.protocol_name,
                                              "assignment": r.assignment})


def sync_group_error(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    return sync_group_to_wire(version, SyncGroupResponse(Errors(error)))


# -- Heartbeat -------------------------------------------------------------------------------------------------------
def heartbeat_from_wire(version: int, body: dict[str, Any], ctx: RequestContext) -> HeartbeatRequest:
    return HeartbeatRequest(body["group_id"], body["generation_id"], body["member_id"],
                            body.get("group_instance_id") if version >= 3 else None)


def heartbeat_to_wire(version: int, r: HeartbeatResponse) -> dict[str, Any]:
    return fit_response(ApiKeys.HEARTBEAT, version, {"throttle_time_ms": 0, "error_code": int(r.error)})


def heartbeat_error(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    return heartbeat_to_wire(version, HeartbeatResponse(Errors(error)))


# -- LeaveGroup ------------------------------------------------------------------------------------------------------
def leave_group_from_wire(version: int, body: dict[str, Any], ctx: RequestContext) -> LeaveGroupRequest:
    """v0-2 name one member (``member_id``), v3+ a batch (KIP-345)."""
    if version < 3:
        return LeaveGroupRequest(body["group_id"], (MemberIdentity(body["member_id"]),))
    return LeaveGroupRequest(body["group_id"], tuple(MemberIdentity(m["member_id"], m.get("group_instance_id"))
                                                     for m in body["members"]))


def leave_group_to_wire(version: int, r: LeaveGroupResponse) -> dict[str, Any]:
    """LeaveGroupResponse: before v3 the one member's error is the response's error (unless there is a top-level
    one)."""
    error = r.error
    if version < 3 and error is Errors.NONE and r.members:
        error = r.members[0].error
    return fit_response(ApiKeys.LEAVE_GROUP, version, {
        "throttle_time_ms": 0, "error_code": int(error),
        "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id, "error_code": int(m.error)}
                    for m in r.members]})


def leave_group_error(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    return leave_group_to_wire(version, LeaveGroupResponse(Errors(error)))


# -- DescribeGroups --------------------------------------------------------------------------------------------------
def describe_groups_from_wire(version: int, body: dict[str, Any], ctx: RequestContext) -> DescribeGroupsRequest:
    return DescribeGroupsRequest(tuple(body["groups"]), bool(body.get("include_authorized_operations", False)))


def describe_groups_to_wire(version: int, r: DescribeGroupsResponse) -> dict[str, Any]:
    ops = GROUP_AUTHORIZED_OPERATIONS if r.include_authorized_operations else AUTHORIZED_OPERATIONS_OMITTED
    return fit_response(ApiKeys.DESCRIBE_GROUPS, version, {"throttle_time_ms": 0, "groups": [{
        "error_code": int(g.error), "group_id": g.group_id, "group_state": g.state, "protocol_type": g.protocol_type,
        "protocol_data": g.protocol, "authorized_operations": ops,
        "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id, "client_id": m.client_id,
                     "client_host": m.client_host, "member_metadata": m.metadata, "member_assignment": m.assignment}
                    for m in g.members]} for g in r.groups]})


def describe_groups_error(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    return describe_groups_to_wire(version, DescribeGroupsResponse(tuple(
        DescribedGroup(Errors(error), g) for g in body.get("groups", ()))))


# -- ListGroups ------------------------------------------------------------------------------------------------------
def list_groups_from_wire(version: int, body: dict[str, Any], ctx: RequestContext) -> ListGroupsRequest:
    return ListGroupsRequest(tuple(body.get("states_filter", ())) if version >= 4 else ())


def list_groups_to_wire(version: int, r: ListGroupsResponse) -> dict[str, Any]:
    return fit_response(ApiKeys.LIST_GROUPS, version, {"throttle_time_ms": 0, "error_code": int(r.error), "groups": [
        {"group_id": g.group_id, "protocol_type": g.protocol_type, "group_state": g.state} for g in r.groups]})


def list_groups_error(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    return list_groups_to_wire(version, ListGroupsResponse(Errors(error)))


# -- DeleteGroups ----------------------------------------------------------------------------------------------------
def delete_groups_from_wire(version: int, body: dict[str, Any], ctx: RequestContext) -> DeleteGroupsRequest:
    return DeleteGroupsRequest(tuple(body["groups_names"]))


def delete_groups_to_wire(version: int, r: DeleteGroupsResponse) -> dict[str, Any]:
    return fit_response(ApiKeys.DELETE_GROUPS, version, {"throttle_time_ms": 0, "results": [
        {"group_id": g, "error_code": int(e)} for g, e in r.results]})


def delete_groups_error(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    return delete_groups_to_wire(version, DeleteGroupsResponse(tuple((g, Errors(error))
                                                                     for g in body.get("groups_names", ()))))


def authorize_group_membership(request: JoinGroupRequest | SyncGroupRequest | HeartbeatRequest | LeaveGroupRequest,
                               auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleJoinGroupRequest / handleSyncGroupRequest / handleHeartbeatRequest / handleLeaveGroupRequest:
    READ on the group, else the answer is GROUP_AUTHORIZATION_FAILED (a JoinGroup's with the member id it sent)."""
    if auth.allows(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return allowed(request)
    error = Errors.GROUP_AUTHORIZATION_FAILED
    if isinstance(request, JoinGroupRequest):
        return refused(JoinGroupResponse(error, member_id=request.member_id))
    if isinstance(request, SyncGroupRequest):
        return refused(SyncGroupResponse(error))
    if isinstance(request, HeartbeatRequest):
        return refused(HeartbeatResponse(error))
    return refused(LeaveGroupResponse(error))


def authorize_describe_groups(request: DescribeGroupsRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleDescribeGroupRequest: a group without DESCRIBE answers GROUP_AUTHORIZATION_FAILED, in the
    request's order among the groups described."""
    groups = auth.filter(AclOperation.DESCRIBE, ResourceType.GROUP, request.groups)
    if all(g in groups for g in request.groups):
        return allowed(request)
    rest = tuple(g for g in request.groups if g in groups)

    def merged(r: DescribeGroupsResponse) -> DescribeGroupsResponse:
        described = {g.group_id: g for g in r.groups}
        return attrs.evolve(r, groups=tuple(described.get(g) or DescribedGroup(Errors.GROUP_AUTHORIZATION_FAILED, g)
                                            for g in request.groups))

    if not rest:
        return refused(merged(DescribeGroupsResponse((), request.include_authorized_operations)))
    return allowed(attrs.evolve(request, groups=rest), merged)


def authorize_list_groups(request: ListGroupsRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleListGroupsRequest: DESCRIBE on the Cluster lists every group, else only those with DESCRIBE."""
    if auth.allows_cluster(AclOperation.DESCRIBE):
        return allowed(request)
    return allowed(request, lambda r: attrs.evolve(r, groups=tuple(
        g for g in r.groups if auth.allows(AclOperation.DESCRIBE, ResourceType.GROUP, g.group_id))))


def authorize_delete_groups(request: DeleteGroupsRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleDeleteGroupsRequest: a group without DELETE answers GROUP_AUTHORIZATION_FAILED."""
    groups = auth.filter(AclOperation.DELETE, ResourceType.GROUP, request.groups)
    denied = tuple((g, Errors.GROUP_AUTHORIZATION_FAILED) for g in dict.fromkeys(request.groups) if g not in groups)
    if not denied:
        return allowed(request)
    rest = tuple(g for g in request.groups if g in groups)
    if not rest:
        return refused(DeleteGroupsResponse(denied))
    return allowed(attrs.evolve(request, groups=rest), lambda r: attrs.evolve(r, results=r.results + denied))


_GROUP_UNITS = (  # (key, request type, from wire, to wire, wire error, GroupCoordinator's procedure, its error answer,
    # KafkaApis' authorization)
    (ApiKeys.JOIN_GROUP, JoinGroupRequest, join_group_from_wire, join_group_to_wire, join_group_error,
     GroupCoordinator.handle_join_group, lambda r, e: join_error(r.member_id, e), authorize_group_membership),
    (ApiKeys.SYNC_GROUP, SyncGroupRequest, sync_group_from_wire, sync_group_to_wire, sync_group_error,
     GroupCoordinator.handle_sync_group, lambda r, e: SyncGroupResponse(e), authorize_group_membership),
    (ApiKeys.HEARTBEAT, HeartbeatRequest, heartbeat_from_wire, heartbeat_to_wire, heartbeat_error,
     GroupCoordinator.handle_heartbeat, lambda r, e: HeartbeatResponse(e), authorize_group_membership),
    (ApiKeys.LEAVE_GROUP, LeaveGroupRequest, leave_group_from_wire, leave_group_to_wire, leave_group_error,
     GroupCoordinator.handle_leave_group, lambda r, e: LeaveGroupResponse(e), authorize_group_membership),
    (ApiKeys.DESCRIBE_GROUPS, DescribeGroupsRequest, describe_groups_from_wire, describe_groups_to_wire,
     describe_groups_error, GroupCoordinator.handle_describe_groups,
     lambda r, e: DescribeGroupsResponse(tuple(DescribedGroup(e, g) for g in r.groups)), authorize_describe_groups),
    (ApiKeys.LIST_GROUPS, ListGroupsRequest, list_groups_from_wire, list_groups_to_wire, list_groups_error,
     GroupCoordinator.handle_list_groups, lambda r, e: ListGroupsResponse(e), authorize_list_groups),
    (ApiKeys.DELETE_GROUPS, DeleteGroupsRequest, delete_groups_from_wire, delete_groups_to_wire, delete_groups_error,
     GroupCoordinator.handle_delete_groups, lambda r, e: DeleteGroupsResponse(tuple((g, e) for g in r.groups)),
     authorize_delete_groups),
)
for _key, _type, _from, _to, _err, _handle, _error, _authorize in _GROUP_UNITS:
    register(ApiSpec(_key, group_coordinator(_handle, _error), with_principal(_from), _to, _err,  # type: ignore[arg-type]
                     request_type=_type, authorize=_authorize))
