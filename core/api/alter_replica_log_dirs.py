"""AlterReplicaLogDirs (34, v0-1): move replicas of this broker to other dirs of its ``log.dirs``, served by the
replica manager (``KafkaApis.handleAlterReplicaLogDirsRequest`` → ``ReplicaManager.alterReplicaLogDirs``; the move
itself, the ``-future`` log and its swap, is core/broker/alter_log_dirs.py). What ``kafka-reassign-partitions.sh``
sends for a plan's ``log_dirs`` and the admin clients' ``alterReplicaLogDirs``.

Each partition goes to the shard hosting it; the answer lists every partition once (the request's map), grouped by
topic. Versions (AlterReplicaLogDirsRequest.json): v1 is v0 (the response may be throttled first).
"""

from __future__ import annotations

from typing import Any

import attrs

from core.api.registry import ApiSpec, ReplicaManagerService, RequestContext, register, with_principal
from core.api.topic_groups import error_of, group_by_topic
from core.broker.shards import ShardedRequest, answers_of, by_shard
from core.security.acl import AclOperation
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.common import Errors, TopicPartition
from messages.replication import (
    AlterReplicaLogDir,
    AlterReplicaLogDirResult,
    AlterReplicaLogDirsRequest,
    AlterReplicaLogDirsResponse,
)
from protocol.api_versions import ApiKeys

SEND_VERSION = 1  # what Kafka 2.6's admin client sends


def request_from_wire(version: int, body: dict[str, Any],
                      ctx: RequestContext | None = None) -> AlterReplicaLogDirsRequest:
    return AlterReplicaLogDirsRequest(tuple(AlterReplicaLogDir(TopicPartition(t["name"], p), d["path"])
                                            for d in body["dirs"] for t in d["topics"] for p in t["partitions"]))


def request_to_wire(request: AlterReplicaLogDirsRequest) -> dict[str, Any]:
    by_dir: dict[str, list[AlterReplicaLogDir]] = {}
    for d in request.dirs:
        by_dir.setdefault(d.log_dir, []).append(d)
    return {"dirs": [{"path": path, "topics": [
        {"name": topic, "partitions": [d.tp.partition for d in ds]} for topic, ds in group_by_topic(items, _tp)]}
        for path, items in by_dir.items()]}


def _tp(item: AlterReplicaLogDir | AlterReplicaLogDirResult) -> TopicPartition:
    return item.tp


def response_to_wire(version: int, response: AlterReplicaLogDirsResponse) -> dict[str, Any]:
    return {"throttle_time_ms": response.throttle_time_ms, "results": [
        {"topic_name": topic, "partitions": [{"partition_index": r.tp.partition, "error_code": int(r.error)}
                                             for r in results]}
        for topic, results in group_by_topic(response.results, _tp)]}


def response_from_wire(version: int, body: dict[str, Any]) -> AlterReplicaLogDirsResponse:
    return AlterReplicaLogDirsResponse(tuple(
        AlterReplicaLogDirResult(TopicPartition(t["topic_name"], p["partition_index"]), error_of(p["error_code"]))
        for t in body["results"] for p in t["partitions"]), body.get("throttle_time_ms", 0))


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    """AlterReplicaLogDirsRequest.getErrorResponse: every partition of every dir with the error."""
    e = error_of(error)
    return response_to_wire(version, AlterReplicaLogDirsResponse(tuple(
        AlterReplicaLogDirResult(TopicPartition(t["name"], p), e)
        for d in body.get("dirs") or [] for t in d["topics"] for p in t["partitions"])))


def authorize(request: AlterReplicaLogDirsRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleAlterReplicaLogDirsRequest: ALTER on the Cluster, else every partition answers
    CLUSTER_AUTHORIZATION_FAILED."""
    if auth.allows_cluster(AclOperation.ALTER):
        return allowed(request)
    return refused(AlterReplicaLogDirsResponse(tuple(AlterReplicaLogDirResult(d.tp, Errors.CLUSTER_AUTHORIZATION_FAILED)
                                                     for d in request.dirs)))


def split(request: AlterReplicaLogDirsRequest, shards: int) -> dict[int, AlterReplicaLogDirsRequest]:
    return {i: attrs.evolve(request, dirs=tuple(ds)) for i, ds in sorted(by_shard(request.dirs, _tp, shards).items())}


def merge(request: AlterReplicaLogDirsRequest,
          parts: dict[int, AlterReplicaLogDirsResponse]) -> AlterReplicaLogDirsResponse:
    """Each partition once, in the order the request first named it."""
    by_tp = {r.tp: r for a in answers_of(parts) for r in a.results}
    order = dict.fromkeys(d.tp for d in request.dirs)
    return AlterReplicaLogDirsResponse(tuple(by_tp[tp] for tp in order if tp in by_tp))


def error(request: AlterReplicaLogDirsRequest, code: Errors) -> AlterReplicaLogDirsResponse:
    return AlterReplicaLogDirsResponse(tuple(AlterReplicaLogDirResult(tp, code)
                                             for tp in dict.fromkeys(d.tp for d in request.dirs)))


SHARDED = ShardedRequest(AlterReplicaLogDirsRequest, split, merge, error,
                         lambda rm, part, now_ms, reply: rm.handle_alter_replica_log_dirs(part, now_ms))


SPEC = ApiSpec(ApiKeys.ALTER_REPLICA_LOG_DIRS, ReplicaManagerService(SHARDED), with_principal(request_from_wire),
               response_to_wire, error_response, request_type=AlterReplicaLogDirsRequest, authorize=authorize,
               send_version=SEND_VERSION, request_to_wire=request_to_wire, response_from_wire=response_from_wire)
register(SPEC)
