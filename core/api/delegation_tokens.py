"""Create (38), Renew (39), Expire (40) and DescribeDelegationToken (41), v0-2, on a PLAINTEXT listener (every kactor
listener): KafkaApis' ``allowTokenRequests`` refuses token requests over PLAINTEXT before it looks at
``delegation.token.master.key``, so each is answered DELEGATION_TOKEN_REQUEST_NOT_ALLOWED (Create for the request's
principal, User:ANONYMOUS, with no token; Renew / Expire with expiry -1, ``DelegationTokenManager.ErrorTimestamp``;
Describe with no tokens)."""

from __future__ import annotations

from collections.abc import Callable

from core.api.admin import fit_response
from core.api.not_configured import ROUTE, Body, always, answered_with, no_response
from core.api.registry import ApiSpec, register
from messages.common import Errors
from protocol.api_versions import ApiKeys

ERROR_TIMESTAMP = -1  # DelegationTokenManager.ErrorTimestamp


def create_error(version: int, body: Body, error: int) -> Body:
    """CreateDelegationTokenResponse.prepareResponse(throttle, error, owner): the owner, no token."""
    return fit_response(ApiKeys.CREATE_DELEGATION_TOKEN, version, {
        "error_code": error, "principal_type": "User", "principal_name": "ANONYMOUS",
        "issue_timestamp_ms": ERROR_TIMESTAMP, "expiry_timestamp_ms": ERROR_TIMESTAMP,
        "max_timestamp_ms": ERROR_TIMESTAMP, "token_id": "", "hmac": b"", "throttle_time_ms": 0})


def _expiry_error(api_key: int) -> Callable[[int, Body, int], Body]:
    return lambda version, body, error: fit_response(api_key, version, {
        "error_code": error, "expiry_timestamp_ms": ERROR_TIMESTAMP, "throttle_time_ms": 0})


renew_error = _expiry_error(ApiKeys.RENEW_DELEGATION_TOKEN)
expire_error = _expiry_error(ApiKeys.EXPIRE_DELEGATION_TOKEN)


def describe_error(version: int, body: Body, error: int) -> Body:
    return fit_response(ApiKeys.DESCRIBE_DELEGATION_TOKEN, version,
                        {"error_code": error, "tokens": [], "throttle_time_ms": 0})


_NOT_ALLOWED = answered_with(always(Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED))
register(ApiSpec(ApiKeys.CREATE_DELEGATION_TOKEN, ROUTE, _NOT_ALLOWED, no_response, create_error))
register(ApiSpec(ApiKeys.RENEW_DELEGATION_TOKEN, ROUTE, _NOT_ALLOWED, no_response, renew_error))
register(ApiSpec(ApiKeys.EXPIRE_DELEGATION_TOKEN, ROUTE, _NOT_ALLOWED, no_response, expire_error))
register(ApiSpec(ApiKeys.DESCRIBE_DELEGATION_TOKEN, ROUTE, _NOT_ALLOWED, no_response, describe_error))
