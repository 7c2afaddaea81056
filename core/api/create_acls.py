"""CreateAcls (30): Kafka 2.6.3's KafkaApis.handleCreateAcls and AclAuthorizer.createAcls, once the request passed
`core.api.acls.refusal` (ALTER on the Cluster, an authorizer configured).

Each creation becomes a binding; one with ANY where a value is needed fails the whole request, every creation
UNKNOWN_SERVER_ERROR without a message (Kafka's ResourcePattern / AccessControlEntry constructors throw an
IllegalArgumentException out of the handler). Then, per creation: a CLUSTER resource not named ``kafka-cluster`` or an
empty name is INVALID_REQUEST with KafkaApis' message; AclAuthorizer.validateAclBinding's refusal (an UNKNOWN field, a
``/`` in the name) is INVALID_REQUEST "Failed to create ACL"; a principal that is not ``type:name`` fails every
creation on its resource with UNKNOWN_SERVER_ERROR (AclEntry's parse, inside that resource's update), as does a write
that failed. The others are added, one conditional write per resource (core/security/acl_store.py) and a change
notification, which every broker's authorizer cache follows.
"""

from __future__ import annotations

from core.api.acls import Body, binding_of
from core.effects import Proc
from core.security.acl import CLUSTER_NAME, AclBinding, ResourcePattern, ResourceType, parse_kafka_principal
from core.security.acl_store import ZkAclAuthorizer
from messages.common import Errors

FAILED_TO_CREATE = "Failed to create ACL"  # AclAuthorizer.createAcls' InvalidRequestException


def _result(error: Errors = Errors.NONE, message: str | None = None) -> Body:
    return {"error_code": int(error), "error_message": message}


def handler_check(binding: AclBinding) -> str | None:
    """KafkaApis.handleCreateAcls' own checks: the InvalidRequestException's message, or None."""
    pattern = binding.pattern
    if pattern.resource_type is ResourceType.CLUSTER and pattern.name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    if not pattern.name:
        return "Invalid empty resource name"
    return None


def _principal_ok(binding: AclBinding) -> bool:
    try:
        parse_kafka_principal(binding.entry.principal)
    except ValueError:
        return False
    return True


def create_acls(body: Body, store: ZkAclAuthorizer) -> Proc[Body]:
    """The CreateAcls answer: one result per creation, in the request's order."""
    creations = body.get("creations") or []
    try:
        bindings = [binding_of(c) for c in creations]
    except ValueError:
        return {"throttle_time_ms": 0,
                "results": [_result(Errors.UNKNOWN_SERVER_ERROR) for _ in creations]}
    results: list[Body | None] = [None] * len(bindings)
    for i, binding in enumerate(bindings):
        message = handler_check(binding)
        if message is not None:
            results[i] = _result(Errors.INVALID_REQUEST, message)
    # a resource with an unparsable principal among its new entries fails as a whole (AclEntry inside the update)
    bad_patterns: set[ResourcePattern] = {b.pattern for i, b in enumerate(bindings)
                                          if results[i] is None and not _principal_ok(b)}
    for i, binding in enumerate(bindings):
        if results[i] is None and binding.pattern in bad_patterns:
            results[i] = _result(Errors.UNKNOWN_SERVER_ERROR)
    to_create = [i for i, r in enumerate(results) if r is None]
    outcomes = yield from store.create_acls([bindings[i] for i in to_create])
    for i, error in zip(to_create, outcomes, strict=True):
        if error is None:
            results[i] = _result()
        elif type(error) is ValueError:  # validateAclBinding's IllegalArgumentException
            results[i] = _result(Errors.INVALID_REQUEST, FAILED_TO_CREATE)
        else:  # a failed write: apiException(e), an ApiException without a mapping
            results[i] = _result(Errors.UNKNOWN_SERVER_ERROR)
    return {"throttle_time_ms": 0, "results": results}
