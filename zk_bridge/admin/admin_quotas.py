"""DescribeClientQuotas and AlterClientQuotas (KIP-546) as Kafka 2.6.3's AdminManager.describeClientQuotas /
alterClientQuotas answer them for KafkaApis, over the znodes AdminZkClient reads and writes:
``/config/clients/<client-id>``, ``/config/users/<user>`` and ``/config/users/<user>/clients/<client-id>``, names
sanitized (``Sanitizer``) and ``<default>`` for a default entity, each ``{"version":1,"config":{...}}`` with a
``/config/changes/config_change_<seq>`` notification, from which every broker's config manager applies the quota.

Errors are 2.6.3's: an empty entity, an entity type other than ``user`` / ``client-id``, an empty name or an unknown
config key are INVALID_REQUEST for that entity (a removal of any key is accepted); a byte rate that is not a whole
number is INVALID_REQUEST ("must be a Long value"); a filter naming a custom entity type is UNSUPPORTED_VERSION and a
repeated or empty filter type INVALID_REQUEST, for the whole DescribeClientQuotas request.
"""

from __future__ import annotations

import logging
import math
from decimal import Decimal
from typing import Any

from core.api.client_quotas import entity_data, entity_entries, filter_components
from core.quota.client_quota_manager import DEFAULT, desanitize, sanitize
from core.quota.quota_configs import QUOTA_CONFIG_TYPES, USER_CONFIG_TYPES, is_quota_config
from messages.common import Errors
from protocol.zk import paths
from zk_bridge.admin import AdminError
from zk_bridge.admin.api_errors import AdminOps, Body, InvalidRequestException, api_error

log = logging.getLogger("kactor.admin_manager")

USER = "user"  # ClientQuotaEntity.USER
CLIENT_ID = "client-id"  # ClientQuotaEntity.CLIENT_ID
CLIENT_CONFIG_TYPE, USER_CONFIG_TYPE = "clients", "users"
MATCH_TYPE_EXACT, MATCH_TYPE_DEFAULT, MATCH_TYPE_SPECIFIED = 0, 1, 2
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1
_ANY = object()  # a filter component that matches any specified name (match == null)


class UnsupportedVersionException(AdminError):  # noqa: N818 (Kafka's exception names)
    """org.apache.kafka.common.errors.UnsupportedVersionException."""


class _UnexpectedError(AdminError):
    """What Kafka raises as an unmapped exception (IllegalStateException, NullPointerException,
    IllegalArgumentException): UNKNOWN_SERVER_ERROR with no message."""


def _error_of(e: BaseException) -> tuple[Errors, str | None]:
    if isinstance(e, UnsupportedVersionException):
        return Errors.UNSUPPORTED_VERSION, str(e)
    if isinstance(e, _UnexpectedError):
        log.info("client quota request failed: %s", e)
        return Errors.UNKNOWN_SERVER_ERROR, None
    return api_error(e)


def sanitize_entity_name(name: str | None) -> str:
    """AdminManager.sanitizeEntityName: null (the default entity) is <default>."""
    return DEFAULT if name is None else sanitize(name)


def desanitize_entity_name(name: str) -> str | None:
    return None if name == DEFAULT else desanitize(name)


# -- DescribeClientQuotas ---------------------------------------------------------------------------------------------
def describe_client_quotas(ops: AdminOps, version: int, body: Body) -> Body:
    """KafkaApis.handleDescribeClientQuotasRequest: the matching entities with their quotas, or the request's
    error at the top (DescribeClientQuotasResponse(throttleTimeMs, e): null entries)."""
    try:
        entries = _describe(ops, body)
    except Exception as e:  # noqa: BLE001 - KafkaApis.handleError: the request's error response
        error, message = _error_of(e)
        return {"throttle_time_ms": 0, "error_code": int(error), "error_message": message, "entries": None}
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "entries": [
        {"entity": entity_data(entity), "values": [{"key": k, "value": v} for k, v in values.items()]}
        for entity, values in entries]}


def _component_match(match_type: int, match: str | None) -> Any:
    """DescribeClientQuotasRequest.filter's component: the name to match exactly, None for the default entity,
    _ANY for any specified name."""
    if match_type == MATCH_TYPE_EXACT:
        if match is None:
            raise _UnexpectedError("ClientQuotaFilterComponent.ofEntity: null entity name")
        return match
    if match_type == MATCH_TYPE_DEFAULT:
        return None
    if match_type == MATCH_TYPE_SPECIFIED:
        return _ANY
    raise _UnexpectedError(f"Unexpected match type: {match_type}")


def _describe(ops: AdminOps, body: Body) -> list[tuple[dict[str, str | None], dict[str, float]]]:
    """AdminManager.describeClientQuotas + handleDescribeClientQuotas."""
    strict = bool(body.get("strict"))
    matches = [(t, _component_match(mt, m)) for t, mt, m in filter_components(body)]
    user_c: list[Any] = []
    client_c: list[Any] = []
    for entity_type, match in matches:
        if entity_type == USER:
            if user_c:
                raise InvalidRequestException("Duplicate user filter component entity type")
            user_c.append(match)
        elif entity_type == CLIENT_ID:
            if client_c:
                raise InvalidRequestException("Duplicate client filter component entity type")
            client_c.append(match)
        elif entity_type == "":
            raise InvalidRequestException("Unexpected empty filter component entity type")
        else:
            raise UnsupportedVersionException(f"Custom entity type '{entity_type}' not supported")

    exact_user = bool(user_c) and user_c[0] is not _ANY
    exact_client = bool(client_c) and client_c[0] is not _ANY
    exclude_user = strict and not user_c
    exclude_client = strict and not client_c
    user = user_c[0] if exact_user else None
    client = client_c[0] if exact_client else None
    admin = ops.admin

    found: dict[tuple[Any, Any], dict[str, str]] = {}  # (user, client id): None = default, _ABSENT = not part
    if exact_user and exclude_client:
        found[(user, _ABSENT)] = admin.fetch_entity_config(USER_CONFIG_TYPE, sanitize_entity_name(user))
    elif not exclude_user and not exact_client:
        for name, props in admin.fetch_all_entity_configs(USER_CONFIG_TYPE).items():
            found[(desanitize_entity_name(name), _ABSENT)] = props
    if exclude_user and exact_client:
        found[(_ABSENT, client)] = admin.fetch_entity_config(CLIENT_CONFIG_TYPE, sanitize_entity_name(client))
    elif not exact_user and not exclude_client:
        for name, props in admin.fetch_all_entity_configs(CLIENT_CONFIG_TYPE).items():
            found[(_ABSENT, desanitize_entity_name(name))] = props
    if exact_user and exact_client:
        path = paths.UserClientIdQuotaEntity.name(sanitize_entity_name(user), sanitize_entity_name(client))
        found[(user, client)] = admin.fetch_entity_config(USER_CONFIG_TYPE, path)
    elif not exclude_user and not exclude_client:
        for name, props in admin.fetch_all_child_entity_configs(USER_CONFIG_TYPE, CLIENT_CONFIG_TYPE).items():
            entity = paths.UserClientIdQuotaEntity.parse(name)
            if entity is None or entity[1] is None:
                raise _UnexpectedError(f"Unexpected config path: {name}")
            found[(desanitize_entity_name(entity[0]), desanitize_entity_name(entity[1]))] = props

    def matches(component: list[Any], name: Any) -> bool:
        if component:
            if component[0] is _ANY:
                return name is not _ABSENT
            return name is not _ABSENT and name == component[0]
        return name is _ABSENT or not strict

    out = []
    for (u, c), props in found.items():
        quota_props = {k: v for k, v in props.items() if is_quota_config(k)}
        if quota_props and matches(user_c, u) and matches(client_c, c):
            entity: dict[str, str | None] = {}
            if u is not _ABSENT:
                entity[USER] = u
            if c is not _ABSENT:
                entity[CLIENT_ID] = c
            out.append((entity, {k: _parse_double(k, v) for k, v in quota_props.items()}))
    return out


_ABSENT: Any = object()  # an entity that has no user (or no client id) part


def _parse_double(key: str, value: str) -> float:
    try:
        return float(value.strip())
    except ValueError:
        raise _UnexpectedError(f"Unexpected client quota configuration value: {key} -> {value}") from None


# -- AlterClientQuotas ------------------------------------------------------------------------------------------------
def alter_client_quotas(ops: AdminOps, version: int, body: Body) -> Body:
    """KafkaApis.handleAlterClientQuotasRequest → AdminManager.alterClientQuotas: each entry applied (or, with
    validate_only, only checked) on its own; the answer has one entry per entity."""
    validate_only = bool(body.get("validate_only"))
    results: dict[tuple[tuple[str, str | None], ...], tuple[dict[str, str | None], Errors, str | None]] = {}
    for entry in body.get("entries") or []:
        entity = entity_entries(entry.get("entity") or [])
        try:
            _alter_entity_quotas(ops, entity, entry.get("ops") or [], validate_only)
            error, message = Errors.NONE, None
        except Exception as e:  # noqa: BLE001 - ApiError.fromThrowable, per entity
            log.info("Error encountered while updating client quotas: %s", e)
            error, message = _error_of(e)
        key = tuple(sorted(entity.items(), key=lambda kv: kv[0]))
        results[key] = (entity, error, message)
    return {"throttle_time_ms": 0, "entries": [
        {"error_code": int(error), "error_message": message, "entity": entity_data(entity)}
        for entity, error, message in results.values()]}


def _entity_to_sanitized_user_client_id(entity: dict[str, str | None]) -> tuple[str | None, str | None]:
    """AdminManager.entityToSanitizedUserClientId."""
    if not entity:
        raise InvalidRequestException("Invalid empty client quota entity")
    user = client = None
    for entity_type, name in entity.items():
        if entity_type == USER:
            user = sanitize_entity_name(name)
        elif entity_type == CLIENT_ID:
            client = sanitize_entity_name(name)
        else:
            raise InvalidRequestException(f"Unhandled client quota entity type: {entity_type}")
        if name is not None and name == "":
            raise InvalidRequestException(f"Empty {entity_type} not supported")
    return user, client


def _alter_entity_quotas(ops: AdminOps, entity: dict[str, str | None], alterations: list[Body],
                         validate_only: bool) -> None:
    user, client = _entity_to_sanitized_user_client_id(entity)
    if user is not None and client is not None:
        path, config_type, types = paths.UserClientIdQuotaEntity.name(user, client), USER_CONFIG_TYPE, USER_CONFIG_TYPES
    elif user is not None:
        path, config_type, types = user, USER_CONFIG_TYPE, USER_CONFIG_TYPES
    elif client is not None:
        path, config_type, types = client, CLIENT_CONFIG_TYPE, QUOTA_CONFIG_TYPES
    else:
        raise InvalidRequestException("Invalid empty client quota entity")
    props = dict(ops.admin.fetch_entity_config(config_type, path))
    for op in alterations:
        key = op["key"]
        if op.get("remove"):
            props.pop(key, None)
            continue
        value = float(op["value"])
        kind = types.get(key)
        if kind is None:
            raise InvalidRequestException(f"Invalid configuration key {key}")
        if kind == "DOUBLE":
            props[key] = java_double_to_string(value)
        elif kind == "LONG":
            epsilon = 1e-6
            long_value = _to_long(value + epsilon)
            if abs(float(long_value) - value) > epsilon:
                raise InvalidRequestException(f"Configuration {key} must be a Long value")
            props[key] = str(long_value)
        else:
            raise _UnexpectedError(f"Unexpected config type {kind}")
    if not validate_only:
        ops.admin.change_configs(config_type, path, props)


def _to_long(x: float) -> int:
    """Scala's Double.toLong: toward zero, NaN 0, saturated at Long's bounds."""
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return LONG_MAX if x > 0 else LONG_MIN
    return max(LONG_MIN, min(LONG_MAX, int(x)))


def java_double_to_string(v: float) -> str:
    """java.lang.Double.toString: plain between 10^-3 and 10^7, else computerized scientific notation
    (``1.0E7``, ``1.5E-4``); the shortest digits that read back as ``v``."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "-0.0" if math.copysign(1.0, v) < 0 else "0.0"
    if 1e-3 <= abs(v) < 1e7:
        text = repr(v)
        return text if "." in text else f"{text}.0"
    sign, digits, exponent = Decimal(repr(v)).as_tuple()
    d = "".join(map(str, digits)).rstrip("0") or "0"
    e = len(digits) + int(exponent) - 1
    return f"{'-' if sign else ''}{d[0]}.{d[1:] or '0'}E{e}"
