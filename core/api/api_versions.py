"""ApiVersions (key 18, v0-3): the versions this broker serves — protocol's 2.6 table, filtered to the api keys that
have a registered ApiSpec (a key nobody serves is not advertised). Answered by the edge itself: it needs no state.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from core.api.registry import ApiSpec, RequestContext, register, registered_keys
from messages.common import Errors
from messages.metadata import ApiVersionsRequest, ApiVersionsResponse
from protocol.api_versions import API_VERSIONS, KAFKA_2_6_API_VERSIONS, ApiKeys

ROUTE = "edge:api_versions"

# ApiVersionsRequest.isValid (KIP-511): the client software name and version
_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext) -> ApiVersionsRequest:
    return ApiVersionsRequest(body.get("client_software_name", ""), body.get("client_software_version", ""))


def is_valid(request: ApiVersionsRequest, version: int) -> bool:
    """ApiVersionsRequest.isValid: from v3 both software fields must match Kafka's pattern."""
    if version < 3:
        return True
    return bool(_SOFTWARE.fullmatch(request.client_software_name)
                and _SOFTWARE.fullmatch(request.client_software_version))


def handle_api_versions_request(request: ApiVersionsRequest, version: int,
                                served: Iterable[int] | None = None) -> ApiVersionsResponse:
    """KafkaApis.handleApiVersionsRequest: every served key with 2.6's range; INVALID_REQUEST (with no keys, as
    ApiVersionsRequest.getErrorResponse) for a v3 request whose software name or version is not valid."""
    if not is_valid(request, version):
        return ApiVersionsResponse(Errors.INVALID_REQUEST, ())
    keys = registered_keys() if served is None else frozenset(served)
    # ApiVersions itself is always served: a client must be able to ask
    keys = (keys | {ApiKeys.API_VERSIONS}) & KAFKA_2_6_API_VERSIONS.keys()
    # Only 2.6.3's table is advertised: the keys and versions served beyond it (KIP-664's, AddPartitionsToTxn v4) are
    # asked for by kactor's own brokers and tools, and a client that saw them took kactor for a 3.x broker
    # (kafka-python 3 infers 3.6, and its read_committed consumer then read nothing)
    return ApiVersionsResponse(Errors.NONE, tuple((k, KAFKA_2_6_API_VERSIONS[k].min_version,
                                                   KAFKA_2_6_API_VERSIONS[k].max_version) for k in sorted(keys)))


def response_to_wire(version: int, response: ApiVersionsResponse) -> dict[str, Any]:
    body: dict[str, Any] = {
        "error_code": int(response.error),
        "api_keys": [{"api_key": k, "min_version": lo, "max_version": hi} for k, lo, hi in response.api_keys],
    }
    if version >= 1:
        body["throttle_time_ms"] = response.throttle_time_ms
    return body


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    """ApiVersionsRequest.getErrorResponse: the error, and ApiVersions' own range for UNSUPPORTED_VERSION."""
    keys: tuple[tuple[int, int, int], ...] = ()
    if error == Errors.UNSUPPORTED_VERSION:
        r = API_VERSIONS[ApiKeys.API_VERSIONS]
        keys = ((ApiKeys.API_VERSIONS, r.min_version, r.max_version),)
    return response_to_wire(version, ApiVersionsResponse(Errors(error), keys))


SPEC = ApiSpec(ApiKeys.API_VERSIONS, ROUTE, request_from_wire, response_to_wire, error_response)
register(SPEC)
