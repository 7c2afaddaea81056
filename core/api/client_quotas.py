"""DescribeClientQuotas (48, v0) and AlterClientQuotas (49, v0): not served yet (issue #26 brings them in full, with
quota enforcement). Until then they are answered UNSUPPORTED_VERSION — DescribeClientQuotas as a whole,
AlterClientQuotas for each entity — what Kafka answers a request it cannot serve
(``AbstractRequest.getErrorResponse`` of an UnsupportedVersionException). The implementation replaces this module."""

from __future__ import annotations

from core.api.admin import fit_response
from core.api.not_configured import ROUTE, Body, always, answered_with, no_response
from core.api.registry import ApiSpec, register
from messages.common import Errors
from protocol.api_versions import API_KEYS

DESCRIBE_CLIENT_QUOTAS = API_KEYS["DescribeClientQuotas"]
ALTER_CLIENT_QUOTAS = API_KEYS["AlterClientQuotas"]


def describe_error(version: int, body: Body, error: int) -> Body:
    return fit_response(DESCRIBE_CLIENT_QUOTAS, version, {"throttle_time_ms": 0, "error_code": error,
                                                          "error_message": Errors(error).name, "entries": None})


def alter_error(version: int, body: Body, error: int) -> Body:
    return fit_response(ALTER_CLIENT_QUOTAS, version, {"throttle_time_ms": 0, "entries": [
        {"error_code": error, "error_message": Errors(error).name,
         "entity": entry["entity"]}  # the response's entity is the request's (type, name) pairs
        for entry in body.get("entries") or []]})


_UNSUPPORTED = answered_with(always(Errors.UNSUPPORTED_VERSION))
register(ApiSpec(DESCRIBE_CLIENT_QUOTAS, ROUTE, _UNSUPPORTED, no_response, describe_error))
register(ApiSpec(ALTER_CLIENT_QUOTAS, ROUTE, _UNSUPPORTED, no_response, alter_error))
