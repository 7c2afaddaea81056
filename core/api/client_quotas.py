"""DescribeClientQuotas (key 48) and AlterClientQuotas (key 49), KIP-546, served by the AdminManager edge handler
(route "edge:admin", zk_bridge/admin/admin_quotas.py) as Kafka 2.6.3's KafkaApis hands them to AdminManager.

As for the other admin APIs (core/api/admin.py), the decoded body is the request and the handler answers with the
response body. ``error_response`` is each request's ``getErrorResponse``: DescribeClientQuotas answers the error at
the top with null entries; AlterClientQuotas answers every entity of the request with it (entity entries collapsed
per entity type as ``ClientQuotaEntity``'s map does).
"""

from __future__ import annotations

from typing import Any

from core.api.admin import fit_response, passthrough
from core.api.registry import AdminService, ApiSpec, register
from core.security.acl import AclOperation
from protocol.api_versions import ApiKeys

Body = dict[str, Any]


def entity_entries(entity: list[Body]) -> dict[str, str | None]:
    """A request's entity as ClientQuotaEntity holds it: entity type → name (null for the default), the last of a
    type repeated winning (a HashMap's put)."""
    out: dict[str, str | None] = {}
    for e in entity:
        out[e["entity_type"]] = e["entity_name"]
    return out


def filter_components(body: Body) -> list[tuple[str, int, str | None]]:
    """DescribeClientQuotasRequest's components as (entity type, match type, match)."""
    return [(c["entity_type"], c["match_type"], c.get("match")) for c in body.get("components") or []]


def entity_data(entries: dict[str, str | None]) -> list[Body]:
    """The response's entity array of a ClientQuotaEntity."""
    return [{"entity_type": t, "entity_name": n} for t, n in entries.items()]


def describe_error(version: int, body: Body, error_code: int) -> Body:
    """DescribeClientQuotasRequest.getErrorResponse."""
    return fit_response(ApiKeys.DESCRIBE_CLIENT_QUOTAS, version, {"throttle_time_ms": 0, "error_code": error_code,
                                                          "error_message": None, "entries": None})


def alter_error(version: int, body: Body, error_code: int) -> Body:
    """AlterClientQuotasRequest.getErrorResponse: every entity of the request with the error."""
    entities: list[dict[str, str | None]] = []
    for entry in body.get("entries") or []:
        e = entity_entries(entry.get("entity") or [])
        if e not in entities:
            entities.append(e)
    return fit_response(ApiKeys.ALTER_CLIENT_QUOTAS, version, {"throttle_time_ms": 0, "entries": [
        {"error_code": error_code, "error_message": None, "entity": entity_data(e)} for e in entities]})


def _response_to_wire(api_key: int) -> Any:
    return lambda version, body: fit_response(api_key, version, body)


# KafkaApis.handleDescribeClientQuotasRequest / handleAlterClientQuotasRequest: DESCRIBE_CONFIGS / ALTER_CONFIGS on the
# Cluster (authorizeClusterOperation)
register(ApiSpec(ApiKeys.DESCRIBE_CLIENT_QUOTAS, AdminService("serve_describe_client_quotas",
                                                              cluster_operation=AclOperation.DESCRIBE_CONFIGS),
                 passthrough(ApiKeys.DESCRIBE_CLIENT_QUOTAS), _response_to_wire(ApiKeys.DESCRIBE_CLIENT_QUOTAS),
                 describe_error))
register(ApiSpec(ApiKeys.ALTER_CLIENT_QUOTAS, AdminService("serve_alter_client_quotas",
                                                           cluster_operation=AclOperation.ALTER_CONFIGS),
                 passthrough(ApiKeys.ALTER_CLIENT_QUOTAS), _response_to_wire(ApiKeys.ALTER_CLIENT_QUOTAS), alter_error))
