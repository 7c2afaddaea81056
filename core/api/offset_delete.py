"""OffsetDelete (47, v0): not served yet (issue #26 brings it in full, with GROUP_SUBSCRIBED_TO_TOPIC). Until then
it is answered UNSUPPORTED_VERSION, at the top and for every partition: what Kafka answers a request it cannot serve
(``AbstractRequest.getErrorResponse`` of an UnsupportedVersionException). The implementation replaces this module."""

from __future__ import annotations

from core.api.admin import fit_response
from core.api.not_configured import ROUTE, Body, always, answered_with, no_response
from core.api.registry import ApiSpec, register
from messages.common import Errors
from protocol.api_versions import API_KEYS

OFFSET_DELETE = API_KEYS["OffsetDelete"]


def error_response(version: int, body: Body, error: int) -> Body:
    return fit_response(OFFSET_DELETE, version, {"error_code": error, "throttle_time_ms": 0, "topics": [
        {"name": t["name"], "partitions": [{"partition_index": p["partition_index"], "error_code": error}
                                           for p in t["partitions"]]} for t in body.get("topics") or []]})


register(ApiSpec(OFFSET_DELETE, ROUTE, answered_with(always(Errors.UNSUPPORTED_VERSION)), no_response,
                 error_response))
