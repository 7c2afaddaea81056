"""DescribeAcls (29): Kafka 2.6.3's KafkaApis.handleDescribeAcls over AclAuthorizer.acls(filter), once the request
passed `core.api.acls.refusal` (DESCRIBE on the Cluster, an authorizer configured)."""

from __future__ import annotations

from core.api.acls import Body, binding_filter, resources_of
from core.security.acl_store import ZkAclAuthorizer
from messages.common import Errors


def describe_acls(body: Body, store: ZkAclAuthorizer) -> Body:
    """The bindings of the store's cache that the request's filter matches, grouped by resource (the cache's order:
    resource type, pattern type, name descending; a resource's entries in its znode's order). A filter with an
    UNKNOWN field matches nothing: the broker's parse of a DescribeAclsRequest does not validate it."""
    return {"throttle_time_ms": 0, "error_code": int(Errors.NONE), "error_message": None,
            "resources": resources_of(store.acls(binding_filter(body)))}
