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
from protocol.api_versions import API_KEYS

CREATE = API_KEYS["CreateDelegationToken"]
RENEW = API_KEYS["RenewDelegationToken"]
EXPIRE = API_KEYS["ExpireDelegationToken"]
DESCRIBE = API_KEYS["DescribeDelegationToken"]
ERROR_TIMESTAMP = -1  # DelegationTokenManager.ErrorTimestamp


def create_error(version: int, body: Body, error: int) -> Body:
    """CreateDelegationTokenResponse.prepareResponse(throttle, error, owner): the owner, no token."""
    return fit_response(CREATE, version, {
        "error_code": error, "principal_type": "User", "principal_name": "ANONYMOUS",
        "issue_timestamp_ms": ERROR_TIMESTAMP, "expiry_timestamp_ms": ERROR_TIMESTAMP,
        "max_timestamp_ms": ERROR_TIMESTAMP, "token_id": "", "hmac": b"", "throttle_time_ms": 0})


def _expiry_error(api_key: int) -> Callable[[int, Body, int], Body]:
    return lambda version, body, error: fit_response(api_key, version, {
        "error_code": error, "expiry_timestamp_ms": ERROR_TIMESTAMP, "throttle_time_ms": 0})


renew_error = _expiry_error(RENEW)
expire_error = _expiry_error(EXPIRE)


def describe_error(version: int, body: Body, error: int) -> Body:
    return fit_response(DESCRIBE, version, {"error_code": error, "tokens": [], "throttle_time_ms": 0})


_NOT_ALLOWED = answered_with(always(Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED))
register(ApiSpec(CREATE, ROUTE, _NOT_ALLOWED, no_response, create_error))
register(ApiSpec(RENEW, ROUTE, _NOT_ALLOWED, no_response, renew_error))
register(ApiSpec(EXPIRE, ROUTE, _NOT_ALLOWED, no_response, expire_error))
register(ApiSpec(DESCRIBE, ROUTE, _NOT_ALLOWED, no_response, describe_error))
