"""DescribeLogDirs (35, v0-2): this broker's log dirs and the size and lag of each log in them, as
``KafkaApis.handleDescribeLogDirsRequest`` → ``ReplicaManager.describeLogDirs`` answer it (what
``kafka-log-dirs.sh --describe`` and the admin clients' ``describeLogDirs`` read).

Served by the replica manager: every shard describes the logs it holds (its own LogManager over the broker's dirs),
and the parts merge per dir. Per configured dir (absolute path, in ``log.dirs`` order): KAFKA_STORAGE_ERROR when it
is offline, else NONE with its logs grouped by topic — the partitions asked for (all when the request's topics are
null), a topic whose logs in that dir are all left out still listed with none, as Kafka's groupBy-then-filter does.
Each log: its size in bytes (all segments), its offset lag — ``max(high watermark - log end offset, 0)`` for a current
replica (so 0), ``max(current log end - its log end, 0)`` for the ``-future`` log of a replica being moved to that dir
(AlterReplicaLogDirs), -1 when no partition is hosted for it — and ``is_future_key``, true for that future log.

Versions (DescribeLogDirsRequest.json): v1 is v0 (the response may be throttled first), v2 is v1 made flexible.
"""

from __future__ import annotations

from typing import Any

from core.api.registry import ApiSpec, ReplicaManagerService, RequestContext, register, with_principal
from core.broker.shards import ShardedRequest, answers_of
from core.effects import Proc
from core.security.acl import AclOperation
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.common import Errors, TopicPartition
from messages.replication import (
    INVALID_OFFSET_LAG,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    LogDirPartition,
    LogDirResult,
    LogDirTopic,
)
from protocol.api_versions import ApiKeys


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext | None = None) -> DescribeLogDirsRequest:
    topics = body.get("topics")
    if topics is None:
        return DescribeLogDirsRequest(None)
    # a set in Kafka: each partition once
    return DescribeLogDirsRequest(tuple(dict.fromkeys(TopicPartition(t["topic"], p)
                                                      for t in topics for p in t["partitions"])))


def response_to_wire(version: int, response: DescribeLogDirsResponse) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "results": [
        {"error_code": int(r.error), "log_dir": r.log_dir, "topics": [
            {"name": t.name, "partitions": [
                {"partition_index": p.partition, "partition_size": p.size, "offset_lag": p.offset_lag,
                 "is_future_key": p.is_future} for p in t.partitions]} for t in r.topics]}
        for r in response.results]}


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    """DescribeLogDirsRequest.getErrorResponse: no dirs (v0-2 have no error field of their own)."""
    return response_to_wire(version, DescribeLogDirsResponse(()))


def describe_log_dirs(replica_manager: Any, request: DescribeLogDirsRequest) -> Proc[DescribeLogDirsResponse]:
    """ReplicaManager.describeLogDirs over the logs of one shard's LogManager."""
    log_manager = replica_manager.log_manager
    by_dir: dict[str, dict[str, list[LogDirPartition]]] = {}
    wanted = None if request.partitions is None else frozenset(request.partitions)
    logs = [(tp, False, log) for tp, log in log_manager.all_logs.items()]
    logs += [(tp, True, log) for tp, log in log_manager.future_logs.items()]
    for tp, future, log in sorted(logs, key=lambda item: (item[0], item[1])):
        topics = by_dir.setdefault(log.parent_dir, {})
        partitions = topics.setdefault(tp.topic, [])
        if wanted is not None and tp not in wanted:
            continue
        partitions.append(LogDirPartition(tp.partition, log.size, _offset_lag(replica_manager, tp, log, future),
                                          future))
    results = []
    for log_dir in log_manager.log_dirs:
        if not log_manager.is_log_dir_online(log_dir):
            results.append(LogDirResult(Errors.KAFKA_STORAGE_ERROR, log_dir))
            continue
        results.append(LogDirResult(Errors.NONE, log_dir, tuple(
            LogDirTopic(topic, tuple(ps)) for topic, ps in sorted(by_dir.get(log_dir, {}).items()))))
    yield from ()
    return DescribeLogDirsResponse(tuple(results))


def _offset_lag(replica_manager: Any, tp: TopicPartition, log: Any, future: bool) -> int:
    """ReplicaManager.getLogEndOffsetLag: against the hosted partition's log — its high watermark for the current
    log, its log end for the future one."""
    partition = replica_manager.get_partition(tp)
    local = getattr(partition, "log", None)
    if local is None:
        return INVALID_OFFSET_LAG
    return max((local.log_end_offset if future else local.high_watermark) - log.log_end_offset, 0)


def merge(request: DescribeLogDirsRequest, parts: dict[int, DescribeLogDirsResponse]) -> DescribeLogDirsResponse:
    """Each dir once, in the shards' (the broker's) dir order: offline if any shard found it so, else every shard's
    topics, by name, each topic's partitions by number."""
    answers = answers_of(parts)
    if not answers:
        return DescribeLogDirsResponse(())
    merged = []
    for i, first in enumerate(answers[0].results):
        per_shard = [a.results[i] for a in answers]
        error = next((r.error for r in per_shard if r.error != Errors.NONE), Errors.NONE)
        if error != Errors.NONE:
            merged.append(LogDirResult(error, first.log_dir))
            continue
        topics: dict[str, list[LogDirPartition]] = {}
        for r in per_shard:
            for t in r.topics:
                topics.setdefault(t.name, []).extend(t.partitions)
        merged.append(LogDirResult(Errors.NONE, first.log_dir, tuple(
            LogDirTopic(name, tuple(sorted(ps, key=lambda p: (p.partition, p.is_future))))
            for name, ps in sorted(topics.items()))))
    return DescribeLogDirsResponse(tuple(merged))


# every shard holds logs in every dir
SHARDED = ShardedRequest(DescribeLogDirsRequest, lambda request, shards: dict.fromkeys(range(shards), request),
                         merge, lambda request, code: DescribeLogDirsResponse(()),
                         lambda rm, part, now_ms, reply: describe_log_dirs(rm, part))

def authorize(request: DescribeLogDirsRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleDescribeLogDirsRequest: DESCRIBE on the Cluster, else an empty answer."""
    if auth.allows_cluster(AclOperation.DESCRIBE):
        return allowed(request)
    return refused(DescribeLogDirsResponse(()))


register(ApiSpec(ApiKeys.DESCRIBE_LOG_DIRS, ReplicaManagerService(SHARDED), with_principal(request_from_wire),
                 response_to_wire, error_response, request_type=DescribeLogDirsRequest, authorize=authorize))
