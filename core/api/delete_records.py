"""DeleteRecords (21, v0-2): not served yet (issue #26 brings it in full: the log start offset with its checkpoint, a
purgatory for its acks). Until then every partition is answered UNSUPPORTED_VERSION with low watermark -1: what
Kafka answers a request it cannot serve (``AbstractRequest.getErrorResponse`` of an UnsupportedVersionException),
which clients report as "the broker does not support" the call rather than retry it. The implementation replaces this
module."""

from __future__ import annotations

from core.api.admin import fit_response
from core.api.not_configured import ROUTE, Body, always, answered_with, no_response
from core.api.registry import ApiSpec, register
from messages.common import Errors
from protocol.api_versions import API_KEYS

DELETE_RECORDS = API_KEYS["DeleteRecords"]
INVALID_LOW_WATERMARK = -1  # DeleteRecordsResponse.INVALID_LOW_WATERMARK


def error_response(version: int, body: Body, error: int) -> Body:
    """DeleteRecordsRequest.getErrorResponse: every partition with the error and an invalid low watermark."""
    return fit_response(DELETE_RECORDS, version, {"throttle_time_ms": 0, "topics": [
        {"name": t["name"], "partitions": [
            {"partition_index": p["partition_index"], "low_watermark": INVALID_LOW_WATERMARK, "error_code": error}
            for p in t["partitions"]]} for t in body.get("topics") or []]})


register(ApiSpec(DELETE_RECORDS, ROUTE, answered_with(always(Errors.UNSUPPORTED_VERSION)), no_response,
                 error_response))
