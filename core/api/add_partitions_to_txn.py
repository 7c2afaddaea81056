"""AddPartitionsToTxn (24, v0-1) as Kafka 2.6 serves it, routed to the transaction coordinator
(KafkaApis.handleAddPartitionToTxnRequest → TransactionCoordinator.handleAddPartitionsToTransaction): the partitions
join the producer's transaction, written to ``__transaction_state`` before the answer. v1 is v0 (the throttle time
is answered after throttling).

Beyond 2.6 (Kafka 3.6): v2 and v3 (flexible) are v1; v4 is the broker-to-broker batch whose ``verify_only``
transactions a partition leader sends (KIP-890 part 1: ReplicaManager.appendRecords → AddPartitionsToTxnManager),
answered by TransactionCoordinator.handleVerifyPartitionsInTransaction and refused CLUSTER_AUTHORIZATION_FAILED
without CLUSTER_ACTION. kactor's leaders send one transaction per v4 request (``SEND_VERSION``); a v4 request is
read as its first transaction."""

from __future__ import annotations

from typing import Any

from core.api.admin import fit_response
from core.api.registry import ApiSpec, RequestContext, register, transaction_coordinator, with_principal
from core.api.topic_groups import error_of
from core.coordinator.transaction.transaction_coordinator import TransactionCoordinator
from core.coordinator.transaction.verification import handle_verify_partitions_in_transaction
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.common import Errors, TopicPartition
from messages.topic import INTERNAL_TOPICS
from messages.transaction import AddPartitionsToTxnRequest, AddPartitionsToTxnResponse
from protocol.api_versions import ApiKeys

SEND_VERSION = 4  # the verify-only request partition leaders send (AddPartitionsToTxnRequest.Builder.forBroker)


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext | None = None
                      ) -> AddPartitionsToTxnRequest:
    if version >= 4:
        t = body["transactions"][0]
        return AddPartitionsToTxnRequest(t["transactional_id"], t["producer_id"], t["producer_epoch"], tuple(
            TopicPartition(topic["name"], p) for topic in t["topics"] for p in topic["partitions"]),
            verify_only=bool(t["verify_only"]))
    # kio (Kafka 3.9's schemas) names the v0-3 fields "v3_and_below_..."
    return AddPartitionsToTxnRequest(
        body["v3_and_below_transactional_id"], body["v3_and_below_producer_id"], body["v3_and_below_producer_epoch"],
        tuple(TopicPartition(t["name"], p) for t in body["v3_and_below_topics"] for p in t["partitions"]))


def response_to_wire(version: int, response: AddPartitionsToTxnResponse) -> dict[str, Any]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for tp, error in response.errors:
        topics.setdefault(tp.topic, []).append({"partition_index": tp.partition,
                                                "partition_error_code": int(error)})
    if version >= 4:
        results = [] if response.error != Errors.NONE else [{
            "transactional_id": response.transactional_id,
            "topic_results": [{"name": t, "results_by_partition": ps} for t, ps in topics.items()]}]
        return {"throttle_time_ms": 0, "error_code": int(response.error), "results_by_transaction": results}
    return fit_response(ApiKeys.ADD_PARTITIONS_TO_TXN, version, {
        "throttle_time_ms": 0, "results_by_topic_v3_and_below": [
        {"name": t, "results_by_partition": ps} for t, ps in topics.items()]})


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    """AddPartitionsToTxnRequest.getErrorResponse: every partition with the error (v4: the top-level error)."""
    e = error_of(error)
    if version >= 4:
        return response_to_wire(version, AddPartitionsToTxnResponse((), e))
    return response_to_wire(version, AddPartitionsToTxnResponse(tuple(
        (TopicPartition(t["name"], p), e) for t in body.get("v3_and_below_topics") or [] for p in t["partitions"])))


def request_to_wire(request: AddPartitionsToTxnRequest) -> dict[str, Any]:
    """v4 as AddPartitionsToTxnRequest.Builder.forBroker builds it: one transaction."""
    topics: dict[str, list[int]] = {}
    for tp in request.partitions:
        topics.setdefault(tp.topic, []).append(tp.partition)
    return {"transactions": [{"transactional_id": request.transactional_id, "producer_id": request.producer_id,
                              "producer_epoch": request.producer_epoch, "verify_only": request.verify_only,
                              "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]}]}


def response_from_wire(version: int, body: dict[str, Any]) -> AddPartitionsToTxnResponse:
    """v4's answer: its top-level error and the first transaction's partitions."""
    results = body.get("results_by_transaction") or []
    first = results[0] if results else {"transactional_id": "", "topic_results": []}
    return AddPartitionsToTxnResponse(tuple(
        (TopicPartition(t["name"], p["partition_index"]), error_of(p["partition_error_code"]))
        for t in first["topic_results"] for p in t["results_by_partition"]), error_of(body.get("error_code", 0)),
        first["transactional_id"])


def handle(coordinator: TransactionCoordinator, request: AddPartitionsToTxnRequest, reply_to: Any) -> Any:
    """handleAddPartitionsToTxnRequest: a verify-only transaction is verified (3.6), the others added."""
    if request.verify_only:
        return handle_verify_partitions_in_transaction(coordinator, request, reply_to)
    return coordinator.handle_add_partitions(request, reply_to)


def authorize(request: AddPartitionsToTxnRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleAddPartitionToTxnRequest: WRITE on the transactional id, else every partition answers
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED; then WRITE on each topic, internal topics never authorized
    (``partitionsToAdd.filterNot(tp => Topic.isInternal(tp.topic))``): with any refused, none is added — the refused
    answer TOPIC_AUTHORIZATION_FAILED, the others OPERATION_NOT_ATTEMPTED.

    Run with or without an authorizer (``ALLOW_ALL``): a transaction holding a ``__transaction_state`` partition
    would have the coordinator write a marker into its own log, which no loader can read.

    A verify-only request (v4, from a partition leader) needs CLUSTER_ACTION on the Cluster instead
    (authorizeClusterOperation), else the whole answer is CLUSTER_AUTHORIZATION_FAILED."""
    if request.verify_only:
        if auth.allows_cluster(AclOperation.CLUSTER_ACTION):
            return allowed(request)
        return refused(AddPartitionsToTxnResponse((), Errors.CLUSTER_AUTHORIZATION_FAILED,
                                                  request.transactional_id))
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
    handle, lambda r, e: AddPartitionsToTxnResponse(tuple((tp, e) for tp in r.partitions),
                                                    transactional_id=r.transactional_id)),
    with_principal(request_from_wire), response_to_wire, error_response,
    request_type=AddPartitionsToTxnRequest, authorize=authorize, send_version=SEND_VERSION,
    request_to_wire=request_to_wire, response_from_wire=response_from_wire))
