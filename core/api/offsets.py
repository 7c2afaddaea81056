"""OffsetCommit (8, v0-8) and OffsetFetch (9, v0-7) as Kafka 2.6 serves them, routed to the group coordinator.

KafkaApis reads them so: OffsetCommit v1 carries a commit timestamp per partition, v2-v4 a retention time (the
offsets then expire at commit time + retention: value v1), v6+ the leader epoch, v7+ the group instance id; a null
metadata is stored as "". OffsetFetch v2+ may ask for every committed partition (null topics) and has a top-level
error; before v2 an error is each partition's. Departure: v0 commits and fetches go to __consumer_offsets too (2.6
keeps v0's offsets in ZooKeeper, for clients older than 0.8.2).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from core.api.admin import fit_response
from core.api.registry import ApiSpec, RequestContext, group_coordinator, register, with_principal
from core.coordinator.group.group_coordinator import GroupCoordinator
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.common import Errors, TopicPartition
from messages.group import (
    NO_GENERATION,
    UNKNOWN_MEMBER_ID,
    OffsetCommitPartition,
    OffsetCommitPartitionResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchPartitionData,
    OffsetFetchRequest,
    OffsetFetchResponse,
)
from protocol.api_versions import ApiKeys


def _by_topic(tps: Iterable[TopicPartition]) -> dict[str, list[TopicPartition]]:
    out: dict[str, list[TopicPartition]] = {}
    for tp in tps:
        out.setdefault(tp.topic, []).append(tp)
    return out


# -- OffsetCommit ----------------------------------------------------------------------------------------------------
def offset_commit_from_wire(version: int, body: dict[str, Any], ctx: RequestContext) -> OffsetCommitRequest:
    partitions = tuple(
        OffsetCommitPartition(TopicPartition(t["name"], p["partition_index"]), p["committed_offset"],
                              p.get("committed_leader_epoch", -1) if version >= 6 else -1, p.get("committed_metadata"),
                              p.get("commit_timestamp", -1) if version == 1 else -1)
        for t in body["topics"] for p in t["partitions"])
    return OffsetCommitRequest(body["group_id"], partitions,
                               body.get("generation_id", NO_GENERATION) if version >= 1 else NO_GENERATION,
                               body.get("member_id", UNKNOWN_MEMBER_ID) if version >= 1 else UNKNOWN_MEMBER_ID,
                               body.get("group_instance_id") if version >= 7 else None,
                               body.get("retention_time_ms", -1) if 2 <= version <= 4 else -1)


def _commit_body(version: int, errors: Iterable[tuple[TopicPartition, Errors]]) -> dict[str, Any]:
    errs = dict(errors)
    return fit_response(ApiKeys.OFFSET_COMMIT, version, {"throttle_time_ms": 0, "topics": [
        {"name": topic, "partitions": [{"partition_index": tp.partition, "error_code": int(errs[tp])} for tp in tps]}
        for topic, tps in _by_topic(errs).items()]})


def offset_commit_to_wire(version: int, r: OffsetCommitResponse) -> dict[str, Any]:
    return _commit_body(version, ((p.tp, p.error) for p in r.partitions))


def offset_commit_error(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    return _commit_body(version, ((TopicPartition(t["name"], p["partition_index"]), Errors(error))
                                  for t in body.get("topics", ()) for p in t["partitions"]))


# -- OffsetFetch -----------------------------------------------------------------------------------------------------
def offset_fetch_from_wire(version: int, body: dict[str, Any], ctx: RequestContext) -> OffsetFetchRequest:
    topics = body.get("topics")
    partitions = None if topics is None else tuple(TopicPartition(t["name"], p) for t in topics
                                                   for p in t["partition_indexes"])
    return OffsetFetchRequest(body["group_id"], partitions, bool(body.get("require_stable", False)))


def _fetch_body(version: int, error: Errors, data: Iterable[OffsetFetchPartitionData]) -> dict[str, Any]:
    rows = {d.tp: d for d in data}
    return fit_response(ApiKeys.OFFSET_FETCH, version, {"throttle_time_ms": 0, "error_code": int(error), "topics": [
        {"name": topic, "partitions": [{
            "partition_index": tp.partition, "committed_offset": rows[tp].offset,
            "committed_leader_epoch": rows[tp].leader_epoch, "metadata": rows[tp].metadata,
            "error_code": int(rows[tp].error)} for tp in tps]} for topic, tps in _by_topic(rows).items()]})


def offset_fetch_to_wire(version: int, r: OffsetFetchResponse) -> dict[str, Any]:
    """OffsetFetchResponse: a top-level error comes with the partitions asked, each failed with it
    (OffsetFetchRequest.getErrorResponse); from v2 the error stands alone."""
    return _fetch_body(version, r.error, () if version >= 2 and r.error is not Errors.NONE else r.partitions)


def offset_fetch_error(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    topics = body.get("topics") or ()
    return offset_fetch_to_wire(version, OffsetFetchResponse(Errors(error), tuple(
        OffsetFetchPartitionData(TopicPartition(t["name"], p), error=Errors(error))
        for t in topics for p in t["partition_indexes"])))


# -- KafkaApis' authorization -----------------------------------------------------------------------------------------
def authorize_offset_commit(request: OffsetCommitRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleOffsetCommitRequest: READ on the group, else every partition answers
    GROUP_AUTHORIZATION_FAILED; then a partition of a topic without READ answers TOPIC_AUTHORIZATION_FAILED and is
    not committed (nothing left: the refusals are the answer)."""
    if not auth.enabled:
        return allowed(request)
    if not auth.allows(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return refused(OffsetCommitResponse(tuple(OffsetCommitPartitionResponse(p.tp, Errors.GROUP_AUTHORIZATION_FAILED)
                                                  for p in request.partitions)))
    return authorize_committed_topics(request, auth, OffsetCommitResponse)


def authorize_committed_topics(request: Any, auth: RequestAuthorizer,
                               response: Callable[[tuple[OffsetCommitPartitionResponse, ...]], Any]) -> Authorized:
    """KafkaApis' topic step of OffsetCommit and TxnOffsetCommit: a partition of a topic without READ answers
    TOPIC_AUTHORIZATION_FAILED and is not committed; the rest go on, their answers after the refusals (nothing left:
    the refusals, as ``response``, are the answer)."""
    topics = auth.filter(AclOperation.READ, ResourceType.TOPIC, (p.tp.topic for p in request.partitions))
    denied = tuple(OffsetCommitPartitionResponse(p.tp, Errors.TOPIC_AUTHORIZATION_FAILED) for p in request.partitions
                   if p.tp.topic not in topics)
    if not denied:
        return allowed(request)
    rest = tuple(p for p in request.partitions if p.tp.topic in topics)
    if not rest:
        return refused(response(denied))
    return allowed(attrs.evolve(request, partitions=rest),
                   lambda r: attrs.evolve(r, partitions=denied + r.partitions))


def authorize_offset_fetch(request: OffsetFetchRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleOffsetFetchRequest: DESCRIBE on the group, else GROUP_AUTHORIZATION_FAILED; a partition asked
    of a topic without DESCRIBE answers TOPIC_AUTHORIZATION_FAILED (OffsetFetchResponse.UNAUTHORIZED_PARTITION), and
    all the group's partitions (none asked) leave those topics out."""
    if not auth.enabled:
        return allowed(request)
    if not auth.allows(AclOperation.DESCRIBE, ResourceType.GROUP, request.group_id):
        return refused(OffsetFetchResponse(Errors.GROUP_AUTHORIZATION_FAILED, tuple(
            OffsetFetchPartitionData(tp, error=Errors.GROUP_AUTHORIZATION_FAILED) for tp in request.partitions or ())))

    def visible(r: OffsetFetchResponse) -> OffsetFetchResponse:
        topics = auth.filter(AclOperation.DESCRIBE, ResourceType.TOPIC, (p.tp.topic for p in r.partitions))
        return attrs.evolve(r, partitions=tuple(p for p in r.partitions if p.tp.topic in topics))

    if request.partitions is None:
        return allowed(request, visible)
    topics = auth.filter(AclOperation.DESCRIBE, ResourceType.TOPIC, (tp.topic for tp in request.partitions))
    denied = tuple(OffsetFetchPartitionData(tp, error=Errors.TOPIC_AUTHORIZATION_FAILED)
                   for tp in request.partitions if tp.topic not in topics)
    if not denied:
        return allowed(request)

    def with_denied(r: OffsetFetchResponse) -> OffsetFetchResponse:
        return r if r.error is not Errors.NONE else attrs.evolve(r, partitions=r.partitions + denied)

    return allowed(attrs.evolve(request, partitions=tuple(tp for tp in request.partitions if tp.topic in topics)),
                   with_denied)


register(ApiSpec(ApiKeys.OFFSET_COMMIT, group_coordinator(
    GroupCoordinator.handle_commit_offsets,
    lambda r, e: OffsetCommitResponse(tuple(OffsetCommitPartitionResponse(p.tp, e) for p in r.partitions))),
    with_principal(offset_commit_from_wire), offset_commit_to_wire, offset_commit_error,
    request_type=OffsetCommitRequest, authorize=authorize_offset_commit))
register(ApiSpec(ApiKeys.OFFSET_FETCH, group_coordinator(
    GroupCoordinator.handle_fetch_offsets,
    lambda r, e: OffsetFetchResponse(e, tuple(OffsetFetchPartitionData(tp, error=e) for tp in r.partitions or ()))),
    with_principal(offset_fetch_from_wire), offset_fetch_to_wire, offset_fetch_error,
    request_type=OffsetFetchRequest, authorize=authorize_offset_fetch))
