"""AlterReplicaLogDirs (34, v0-1): not served yet (issue #26 brings it in full: the ``-future`` replica and its swap).
Until then every partition is answered UNSUPPORTED_VERSION, what Kafka answers a request it cannot serve
(``AbstractRequest.getErrorResponse`` of an UnsupportedVersionException). The implementation replaces this module."""

from __future__ import annotations

from core.api.admin import fit_response
from core.api.not_configured import ROUTE, Body, always, answered_with, no_response
from core.api.registry import ApiSpec, register
from messages.common import Errors
from protocol.api_versions import API_KEYS

ALTER_REPLICA_LOG_DIRS = API_KEYS["AlterReplicaLogDirs"]


def error_response(version: int, body: Body, error: int) -> Body:
    """AlterReplicaLogDirsRequest.getErrorResponse: every partition of every dir with the error, by topic."""
    partitions: dict[str, list[int]] = {}
    for d in body.get("dirs") or []:
        for t in d["topics"]:
            partitions.setdefault(t["name"], []).extend(t["partitions"])
    return fit_response(ALTER_REPLICA_LOG_DIRS, version, {"throttle_time_ms": 0, "results": [
        {"topic_name": name, "partitions": [{"partition_index": p, "error_code": error} for p in ps]}
        for name, ps in partitions.items()]})


register(ApiSpec(ALTER_REPLICA_LOG_DIRS, ROUTE, answered_with(always(Errors.UNSUPPORTED_VERSION)), no_response,
                 error_response))
