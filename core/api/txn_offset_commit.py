"""TxnOffsetCommit (28, v0-3) as Kafka 2.6.3 serves it, routed to the group coordinator
(KafkaApis.handleTxnOffsetCommitRequest → GroupCoordinator.handleTxnCommitOffsets): a transactional producer's
offsets for one group, written to the group's ``__consumer_offsets`` partition in the producer's transaction and
pending until its COMMIT / ABORT marker. v2 adds each partition's leader epoch, v3 (KIP-447) the consumer's
generation, member id and group instance id, which the coordinator then checks. A null metadata is stored as ""
(OffsetAndMetadata.NoMetadata). One group, one coordinator: nothing to split.

Departure (as OffsetCommit's): the topics are not checked against the metadata cache (2.6 answers
UNKNOWN_TOPIC_OR_PARTITION for a partition it does not know).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.api.admin import fit_response
from core.api.offsets import authorize_committed_topics
from core.api.registry import ApiSpec, RequestContext, group_coordinator, register, with_principal
from core.api.topic_groups import group_by_topic
from core.coordinator.group.group_coordinator import GroupCoordinator
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import Authorized, RequestAuthorizer, refused
from messages.common import Errors, TopicPartition
from messages.group import (
    NO_GENERATION,
    UNKNOWN_MEMBER_ID,
    OffsetCommitPartition,
    OffsetCommitPartitionResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
from protocol.api_versions import ApiKeys


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext | None = None
                      ) -> TxnOffsetCommitRequest:
    partitions = tuple(
        OffsetCommitPartition(TopicPartition(t["name"], p["partition_index"]), p["committed_offset"],
                              p.get("committed_leader_epoch", -1) if version >= 2 else -1, p.get("committed_metadata"))
        for t in body["topics"] for p in t["partitions"])
    v3 = version >= 3
    return TxnOffsetCommitRequest(body["transactional_id"], body["group_id"], body["producer_id"],
                                  body["producer_epoch"], partitions,
                                  body.get("generation_id", NO_GENERATION) if v3 else NO_GENERATION,
                                  body.get("member_id", UNKNOWN_MEMBER_ID) if v3 else UNKNOWN_MEMBER_ID,
                                  body.get("group_instance_id") if v3 else None)


def _body(version: int, errors: Iterable[tuple[TopicPartition, Errors]]) -> dict[str, Any]:
    """Each partition once (Kafka answers from a map: a partition named twice is answered once), under its
    topic."""
    errs = dict(errors)
    return fit_response(ApiKeys.TXN_OFFSET_COMMIT, version, {"throttle_time_ms": 0, "topics": [
        {"name": topic, "partitions": [{"partition_index": tp.partition, "error_code": int(errs[tp])} for tp in tps]}
        for topic, tps in group_by_topic(errs, lambda tp: tp)]})


def response_to_wire(version: int, response: TxnOffsetCommitResponse) -> dict[str, Any]:
    return _body(version, ((p.tp, p.error) for p in response.partitions))


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    return _body(version, ((TopicPartition(t["name"], p["partition_index"]), Errors(error))
                           for t in body.get("topics") or () for p in t["partitions"]))


def authorize(request: TxnOffsetCommitRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleTxnOffsetCommitRequest: WRITE on the transactional id, else every partition answers
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED; READ on the group, else GROUP_AUTHORIZATION_FAILED; then a partition of a
    topic without READ answers TOPIC_AUTHORIZATION_FAILED and is not committed."""
    whole = None
    if not auth.allows(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id):
        whole = Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif not auth.allows(AclOperation.READ, ResourceType.GROUP, request.group_id):
        whole = Errors.GROUP_AUTHORIZATION_FAILED
    if whole is not None:
        return refused(TxnOffsetCommitResponse(tuple(OffsetCommitPartitionResponse(p.tp, whole)
                                                     for p in request.partitions)))
    return authorize_committed_topics(request, auth, TxnOffsetCommitResponse)


register(ApiSpec(ApiKeys.TXN_OFFSET_COMMIT, group_coordinator(
    GroupCoordinator.handle_txn_commit_offsets,
    lambda r, e: TxnOffsetCommitResponse(tuple(OffsetCommitPartitionResponse(p.tp, e) for p in r.partitions))),
    with_principal(request_from_wire), response_to_wire, error_response,
    request_type=TxnOffsetCommitRequest, authorize=authorize))
