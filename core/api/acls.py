"""DescribeAcls (29), CreateAcls (30), DeleteAcls (31), v0-2: what the three share, as Kafka 2.6.3's KafkaApis and the
request / response classes (DescribeAclsRequest, CreateAclsRequest, DeleteAclsRequest and their responses) have it.

The three are served by the admin edge handler (route "edge:admin", zk_bridge/admin/admin_manager.py), which reads and
writes the ACLs in ZooKeeper: each API's procedure (core/api/describe_acls.py, create_acls.py, delete_acls.py) takes
the request body and answers a body holding every field of the newest version, fitted to the request's version on the
way out. Here: the wire fields as ACL values, KafkaApis' steps before the authorizer (no authorizer configured:
SECURITY_DISABLED; Cluster DESCRIBE / ALTER refused: CLUSTER_AUTHORIZATION_FAILED) and each request's error answer
(``getErrorResponse``: every creation / filter failed alike).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from core.api.admin import AdminRequest, fit_response
from core.api.registry import AdminService, ApiSpec, RequestContext, register, spec_for_key
from core.security.acl import (
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from core.security.authorizer import RequestAuthorizer
from messages.common import Errors
from protocol.api_versions import ApiKeys

Body = dict[str, Any]
# KafkaApis' messages: DescribeAcls sets its own text, Create / DeleteAcls carry a SecurityDisabledException's
NO_AUTHORIZER = "No Authorizer is configured on the broker"
NO_AUTHORIZER_EXCEPTION = NO_AUTHORIZER + "."


class InvalidCreationError(ValueError):
    """CreateAclsRequest.validate's IllegalArgumentException: a creation with an UNKNOWN (code 0) field. Kafka fails
    the request's parse (and closes the connection); here the converter refuses it, which answers INVALID_REQUEST for
    every creation."""

    error = Errors.INVALID_REQUEST


# -- wire fields as ACL values ----------------------------------------------------------------------------------------
def binding_filter(d: Body) -> AclBindingFilter:
    """DescribeAclsRequest.filter / DeleteAclsRequest.aclBindingFilter: a code Kafka does not know reads as UNKNOWN
    (which matches nothing); v0's absent pattern type is the schema's default, LITERAL."""
    return AclBindingFilter(
        ResourcePatternFilter(ResourceType.from_code(d["resource_type_filter"]), d.get("resource_name_filter"),
                              PatternType.from_code(d.get("pattern_type_filter", PatternType.LITERAL.code))),
        AccessControlEntryFilter(d.get("principal_filter"), d.get("host_filter"),
                                 AclOperation.from_code(d["operation"]),
                                 AclPermissionType.from_code(d["permission_type"])))


def binding_of(creation: Body) -> AclBinding:
    """CreateAclsRequest.aclBinding: ValueError with the message of ResourcePattern's / AccessControlEntry's
    IllegalArgumentException for an ANY (or MATCH) where a creation needs a concrete value."""
    resource_type = ResourceType.from_code(creation["resource_type"])
    pattern_type = PatternType.from_code(creation.get("resource_pattern_type", PatternType.LITERAL.code))
    operation = AclOperation.from_code(creation["operation"])
    permission = AclPermissionType.from_code(creation["permission_type"])
    if resource_type is ResourceType.ANY:
        raise ValueError("resourceType must not be ANY")
    if pattern_type in (PatternType.MATCH, PatternType.ANY):
        raise ValueError(f"patternType must not be {pattern_type}")
    if operation is AclOperation.ANY:
        raise ValueError("operation must not be ANY")
    if permission is AclPermissionType.ANY:
        raise ValueError("permissionType must not be ANY")
    return AclBinding(ResourcePattern(resource_type, creation["resource_name"], pattern_type),
                      AccessControlEntry(creation["principal"], creation["host"], operation, permission))


def acl_description(entry: AccessControlEntry) -> Body:
    return {"principal": entry.principal, "host": entry.host, "operation": entry.operation.code,
            "permission_type": entry.permission_type.code}


def resources_of(bindings: Iterable[AclBinding]) -> list[Body]:
    """DescribeAclsResponse.aclsResources: the bindings grouped by resource pattern (in the order given, each
    binding once: Kafka collects them in a HashSet first)."""
    grouped: dict[ResourcePattern, dict[AccessControlEntry, None]] = {}
    for b in bindings:
        grouped.setdefault(b.pattern, {})[b.entry] = None
    return [{"resource_type": p.resource_type.code, "resource_name": p.name, "pattern_type": p.pattern_type.code,
             "acls": [acl_description(e) for e in entries]} for p, entries in grouped.items()]


def matching_acl(binding: AclBinding, error: Errors = Errors.NONE, message: str | None = None) -> Body:
    """DeleteAclsResponse.matchingAcl."""
    return {"error_code": int(error), "error_message": message, "resource_type": binding.pattern.resource_type.code,
            "resource_name": binding.pattern.name, "pattern_type": binding.pattern.pattern_type.code,
            **acl_description(binding.entry)}


# -- error answers (each request's getErrorResponse) -------------------------------------------------------------------
def _message(error: int) -> str | None:
    return NO_AUTHORIZER_EXCEPTION if error == Errors.SECURITY_DISABLED else None


def describe_error(version: int, body: Body, error: int, message: str | None = None) -> Body:
    message = NO_AUTHORIZER if error == Errors.SECURITY_DISABLED else message
    return fit_response(ApiKeys.DESCRIBE_ACLS, version, {"throttle_time_ms": 0, "error_code": error,
                                                 "error_message": message, "resources": []})


def create_error(version: int, body: Body, error: int, message: str | None = None) -> Body:
    return fit_response(ApiKeys.CREATE_ACLS, version, {"throttle_time_ms": 0, "results": [
        {"error_code": error, "error_message": message or _message(error)} for _ in body.get("creations") or []]})


def delete_error(version: int, body: Body, error: int, message: str | None = None) -> Body:
    return fit_response(ApiKeys.DELETE_ACLS, version, {"throttle_time_ms": 0, "filter_results": [
        {"error_code": error, "error_message": message or _message(error), "matching_acls": []}
        for _ in body.get("filters") or []]})


def error_response(api_key: int) -> Callable[..., Body]:
    """The ACL API's unit's error answer, which also takes a message (``(version, body, error, message=None)``)."""
    spec = spec_for_key(api_key)
    assert spec is not None, api_key
    return spec.error_response


def not_authorized(auth: RequestAuthorizer) -> str:
    """The message of KafkaApis.authorizeClusterOperation's ClusterAuthorizationException: Kafka's ``Request
    $request is not authorized.`` names the whole RequestChannel.Request; here its session (principal and host)."""
    return f"Request of session Session({auth.principal},/{auth.host}) is not authorized."


def refusal(api_key: int, version: int, body: Body, auth: RequestAuthorizer) -> Body | None:
    """KafkaApis' steps before the authorizer is asked: authorizeClusterOperation (DESCRIBE on the Cluster for
    DescribeAcls, ALTER for the others: CLUSTER_AUTHORIZATION_FAILED), then ``authorizer match { case None }``
    (SECURITY_DISABLED). None: serve the request. With no authorizer every operation is authorized, so the first never
    refuses then."""
    operation = AclOperation.DESCRIBE if api_key == ApiKeys.DESCRIBE_ACLS else AclOperation.ALTER
    if not auth.allows_cluster(operation):
        return error_response(api_key)(version, body, int(Errors.CLUSTER_AUTHORIZATION_FAILED), not_authorized(auth))
    if not auth.enabled:
        return error_response(api_key)(version, body, int(Errors.SECURITY_DISABLED))
    return None


# -- registration ------------------------------------------------------------------------------------------------------
def _from_wire(api_key: int) -> Any:
    def request_from_wire(version: int, body: Body, ctx: RequestContext) -> AdminRequest:
        if api_key == ApiKeys.CREATE_ACLS:
            for c in body.get("creations") or ():
                # CreateAclsRequest.validate: the UNKNOWN code itself (an unknown code parses, as UNKNOWN, later)
                if 0 in (c.get("resource_pattern_type", PatternType.LITERAL.code), c["resource_type"],
                         c["permission_type"], c["operation"]):
                    raise InvalidCreationError(f"CreatableAcls contain unknown elements: {body.get('creations')}")
        return AdminRequest(api_key, version, body)
    return request_from_wire


def _to_wire(api_key: int) -> Any:
    return lambda version, body: fit_response(api_key, version, body)


# served by the admin server, which authorizes them as KafkaApis does (`refusal`)
register(ApiSpec(ApiKeys.DESCRIBE_ACLS, AdminService("serve_describe_acls"), _from_wire(ApiKeys.DESCRIBE_ACLS),
                 _to_wire(ApiKeys.DESCRIBE_ACLS), describe_error))
register(ApiSpec(ApiKeys.CREATE_ACLS, AdminService("serve_create_acls"), _from_wire(ApiKeys.CREATE_ACLS),
                 _to_wire(ApiKeys.CREATE_ACLS), create_error))
register(ApiSpec(ApiKeys.DELETE_ACLS, AdminService("serve_delete_acls"), _from_wire(ApiKeys.DELETE_ACLS),
                 _to_wire(ApiKeys.DELETE_ACLS), delete_error))
