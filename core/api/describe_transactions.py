"""DescribeTransactions (65, v0; KIP-664, Kafka 3.0), beyond Kafka 2.6: the transaction coordinator's state of
transactional ids (KafkaApis.handleDescribeTransactionsRequest → TransactionCoordinator.handleDescribeTransactions),
for kafka-transactions.sh's describe and find-hanging. DESCRIBE on each transactional id, else
TRANSACTIONAL_ID_AUTHORIZATION_FAILED for that id."""

from __future__ import annotations

from typing import Any

import attrs

from core.api.registry import ApiSpec, RequestContext, register, transaction_coordinator, with_principal
from core.api.topic_groups import error_of
from core.coordinator.transaction.transaction_admin import handle_describe_transactions
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.common import Errors, TopicPartition
from messages.transaction_admin import (
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
    TransactionDescription,
)
from protocol.api_versions import ApiKeys


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext | None = None
                      ) -> DescribeTransactionsRequest:
    return DescribeTransactionsRequest(tuple(body["transactional_ids"]))


def response_to_wire(version: int, response: DescribeTransactionsResponse) -> dict[str, Any]:
    states = []
    for t in response.transactions:
        topics: dict[str, list[int]] = {}
        for tp in t.partitions:
            topics.setdefault(tp.topic, []).append(tp.partition)
        states.append({"error_code": int(t.error), "transactional_id": t.transactional_id,
                       "transaction_state": t.state, "transaction_timeout_ms": t.transaction_timeout_ms,
                       "transaction_start_time_ms": t.transaction_start_time_ms, "producer_id": t.producer_id,
                       "producer_epoch": t.producer_epoch,
                       "topics": [{"topic": n, "partitions": ps} for n, ps in topics.items()]})
    return {"throttle_time_ms": 0, "transaction_states": states}


def response_from_wire(version: int, body: dict[str, Any]) -> DescribeTransactionsResponse:
    return DescribeTransactionsResponse(tuple(
        TransactionDescription(s["transactional_id"], error_of(s["error_code"]), s["transaction_state"],
                               s["transaction_timeout_ms"], s["transaction_start_time_ms"], s["producer_id"],
                               s["producer_epoch"],
                               tuple(TopicPartition(t["topic"], p) for t in s["topics"] for p in t["partitions"]))
        for s in body["transaction_states"]))


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    e = error_of(error)
    return response_to_wire(version, DescribeTransactionsResponse(tuple(
        TransactionDescription(t, e) for t in body.get("transactional_ids") or [])))


def authorize(request: DescribeTransactionsRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleDescribeTransactionsRequest: DESCRIBE on each transactional id."""
    ok = tuple(t for t in request.transactional_ids
               if auth.allows(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, t))
    denied = tuple(TransactionDescription(t, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
                   for t in request.transactional_ids if t not in ok)
    if not denied:
        return allowed(request)
    if not ok:
        return refused(DescribeTransactionsResponse(denied))
    return allowed(attrs.evolve(request, transactional_ids=ok),
                   lambda r: attrs.evolve(r, transactions=r.transactions + denied))


register(ApiSpec(ApiKeys.DESCRIBE_TRANSACTIONS, transaction_coordinator(
    handle_describe_transactions,
    lambda r, e: DescribeTransactionsResponse(tuple(TransactionDescription(t, e) for t in r.transactional_ids))),
    with_principal(request_from_wire), response_to_wire, error_response,
    request_type=DescribeTransactionsRequest, authorize=authorize))
