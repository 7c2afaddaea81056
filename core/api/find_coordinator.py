"""FindCoordinator (10, v0-3) as Kafka 2.6 serves it, routed to the group coordinator: v0 asks for a group's
coordinator by group id; v1+ name the key type (0 group, 1 transaction) and answer an error message."""

from __future__ import annotations

from typing import Any

from core.api.admin import fit_response
from core.api.registry import ApiSpec, RequestContext, group_coordinator, register, with_principal
from core.coordinator.group.group_coordinator import GroupCoordinator
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.common import Errors
from messages.group import COORDINATOR_TYPE_GROUP, FindCoordinatorRequest, FindCoordinatorResponse
from protocol.api_versions import ApiKeys

# Errors.message() of the errors FindCoordinator answers (Kafka writes it as the response's error message)
_MESSAGES = {Errors.COORDINATOR_NOT_AVAILABLE: "The coordinator is not available.",
             Errors.NOT_COORDINATOR: "This is not the correct coordinator.",
             Errors.COORDINATOR_LOAD_IN_PROGRESS: "The coordinator is loading and hence can't process requests."}


def find_coordinator_from_wire(version: int, body: dict[str, Any], ctx: RequestContext) -> FindCoordinatorRequest:
    return FindCoordinatorRequest(body["key"], body.get("key_type", COORDINATOR_TYPE_GROUP) if version >= 1
                                  else COORDINATOR_TYPE_GROUP, ctx.listener)


def find_coordinator_to_wire(version: int, r: FindCoordinatorResponse) -> dict[str, Any]:
    """An error answers Node.noNode(): id -1, host "", port -1."""
    ok = r.error is Errors.NONE
    return fit_response(ApiKeys.FIND_COORDINATOR, version, {
        "throttle_time_ms": 0, "error_code": int(r.error),
        "error_message": r.error_message if r.error_message is not None else _MESSAGES.get(r.error),
        "node_id": r.node_id if ok else -1, "host": r.host if ok else "", "port": r.port if ok else -1})


def find_coordinator_error(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    return find_coordinator_to_wire(version, FindCoordinatorResponse(Errors(error)))


def authorize_find_coordinator(request: FindCoordinatorRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleFindCoordinatorRequest: DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED) or on the
    transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED)."""
    if request.key_type == COORDINATOR_TYPE_GROUP:
        resource, error = ResourceType.GROUP, Errors.GROUP_AUTHORIZATION_FAILED
    else:
        resource, error = ResourceType.TRANSACTIONAL_ID, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    if auth.allows(AclOperation.DESCRIBE, resource, request.key):
        return allowed(request)
    return refused(FindCoordinatorResponse(error, error_message=_REFUSED[error]))


_REFUSED = {Errors.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",  # the exceptions' default messages
            Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "Transactional Id authorization failed."}

register(ApiSpec(ApiKeys.FIND_COORDINATOR, group_coordinator(GroupCoordinator.handle_find_coordinator,
                                                     lambda r, e: FindCoordinatorResponse(e)),
                 with_principal(find_coordinator_from_wire), find_coordinator_to_wire, find_coordinator_error,
                 request_type=FindCoordinatorRequest, authorize=authorize_find_coordinator))
