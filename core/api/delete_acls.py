"""DeleteAcls (31): Kafka 2.6.3's KafkaApis.handleDeleteAcls and AclAuthorizer.deleteAcls, once the request passed
`core.api.acls.refusal` (ALTER on the Cluster, an authorizer configured).

Every cached resource, and each resource a filter names exactly, that some filter matches has the entries the
filters match removed with one conditional write and a change notification (core/security/acl_store.py). Each filter
answers the bindings it removed (a binding counts for the first filter that matched it); a binding whose resource
could not be written carries UNKNOWN_SERVER_ERROR. A filter with an UNKNOWN field matches nothing (the broker's parse
of a DeleteAclsRequest does not validate it).
"""

from __future__ import annotations

from core.api.acls import Body, binding_filter, matching_acl
from core.effects import Proc
from core.security.acl_store import ZkAclAuthorizer
from messages.common import Errors


def delete_acls(body: Body, store: ZkAclAuthorizer) -> Proc[Body]:
    """The DeleteAcls answer: one filter result per filter, in the request's order."""
    filters = [binding_filter(f) for f in body.get("filters") or []]
    removed = yield from store.delete_acls(filters)
    return {"throttle_time_ms": 0, "filter_results": [
        {"error_code": int(Errors.NONE), "error_message": None, "matching_acls": [
            matching_acl(d.binding) if d.error is None else matching_acl(d.binding, Errors.UNKNOWN_SERVER_ERROR)
            for d in deleted]}
        for deleted in removed]}
