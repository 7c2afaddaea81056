"""AddPartitionsToTxn (24, v0-1) as Kafka 2.6 serves it, routed to the transaction coordinator
(KafkaApis.handleAddPartitionToTxnRequest → TransactionCoordinator.handleAddPartitionsToTransaction): the partitions
join the producer's transaction, written to ``__transaction_state`` before the answer. v1 is v0 (the throttle time
is answered after throttling)."""

from __future__ import annotations

from typing import Any

from core.api.admin import fit_response
from core.api.registry import ApiSpec, RequestContext, register, transaction_coordinator, with_principal
from core.api.topic_groups import error_of
from core.coordinator.transaction.transaction_coordinator import TransactionCoordinator
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.common import Errors, TopicPartition
from messages.topic import INTERNAL_TOPICS
from messages.transaction import AddPartitionsToTxnRequest, AddPartitionsToTxnResponse
from protocol.api_versions import ApiKeys


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext | None = None
                      ) -> AddPartitionsToTxnRequest:
    # kio (Kafka 3.9's schemas) names the v0-3 fields "v3_and_below_..."
    return AddPartitionsToTxnRequest(
        body["v3_and_below_transactional_id"], body["v3_and_below_producer_id"], body["v3_and_below_producer_epoch"],
        tuple(TopicPartition(t["name"], p) for t in body["v3_and_below_topics"] for p in t["partitions"]))


def response_to_wire(version: int, response: AddPartitionsToTxnResponse) -> dict[str, Any]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for tp, error in response.errors:
        topics.setdefault(tp.topic, []).append({"partition_index": tp.partition,
                                                "partition_error_code": int(error)})
    return fit_response(ApiKeys.ADD_PARTITIONS_TO_TXN, version, {
        "throttle_time_ms": 0, "results_by_topic_v3_and_below": [
        {"name": t, "results_by_partition": ps} for t, ps in topics.items()]})


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    """AddPartitionsToTxnRequest.getErrorResponse: every partition with the error."""
    e = error_of(error)
    return response_to_wire(version, AddPartitionsToTxnResponse(tuple(
        (TopicPartition(t["name"], p), e) for t in body.get("v3_and_below_topics") or [] for p in t["partitions"])))


def authorize(request: AddPartitionsToTxnRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleAddPartitionToTxnRequest: WRITE on the transactional id, else every partition answers
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED; then WRITE on each topic, internal topics never authorized
    (``partitionsToAdd.filterNot(tp => Topic.isInternal(tp.topic))``): with any refused, none is added — the refused
    answer TOPIC_AUTHORIZATION_FAILED, the others OPERATION_NOT_ATTEMPTED.

    Run with or without an authorizer (``ALLOW_ALL``): a transaction holding a ``__transaction_state`` partition
    would have the coordinator write a marker into its own log, which no loader can read."""
    if not auth.allows(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id):
        return refused(AddPartitionsToTxnResponse(tuple((tp, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
                                                        for tp in request.partitions)))
    topics = auth.filter(AclOperation.WRITE, ResourceType.TOPIC,
                         (tp.topic for tp in request.partitions if tp.topic not in INTERNAL_TOPICS))
    if all(tp.topic in topics for tp in request.partitions):
        return allowed(request)
    return refused(AddPartitionsToTxnResponse(tuple(
        (tp, Errors.OPERATION_NOT_ATTEMPTED if tp.topic in topics else Errors.TOPIC_AUTHORIZATION_FAILED)
        for tp in request.partitions)))


register(ApiSpec(ApiKeys.ADD_PARTITIONS_TO_TXN, transaction_coordinator(
    TransactionCoordinator.handle_add_partitions,
    lambda r, e: AddPartitionsToTxnResponse(tuple((tp, e) for tp in r.partitions))),
    with_principal(request_from_wire), response_to_wire, error_response,
    request_type=AddPartitionsToTxnRequest, authorize=authorize))
