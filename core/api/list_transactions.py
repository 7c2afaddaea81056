"""ListTransactions (66, v0; KIP-664, Kafka 3.0), beyond Kafka 2.6: the transactional ids this broker's transaction
coordinator holds, filtered by state and producer id (KafkaApis.handleListTransactionsRequest →
TransactionCoordinator.handleListTransactions), for kafka-transactions.sh's list and find-hanging. An id the
principal may not DESCRIBE is left out."""

from __future__ import annotations

from typing import Any

import attrs

from core.api.registry import ApiSpec, RequestContext, register, transaction_coordinator, with_principal
from core.api.topic_groups import error_of
from core.coordinator.transaction.transaction_admin import handle_list_transactions
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import Authorized, RequestAuthorizer, allowed
from messages.transaction_admin import ListTransactionsRequest, ListTransactionsResponse
from protocol.api_versions import ApiKeys


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext | None = None
                      ) -> ListTransactionsRequest:
    return ListTransactionsRequest(tuple(body["state_filters"]), tuple(body["producer_id_filters"]))


def response_to_wire(version: int, response: ListTransactionsResponse) -> dict[str, Any]:
    return {"throttle_time_ms": 0, "error_code": int(response.error),
            "unknown_state_filters": list(response.unknown_state_filters),
            "transaction_states": [{"transactional_id": t.transactional_id, "producer_id": t.producer_id,
                                    "transaction_state": t.state} for t in response.transactions]}


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    return response_to_wire(version, ListTransactionsResponse(error_of(error)))


def authorize(request: ListTransactionsRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleListTransactionsRequest: the listing keeps the ids the principal may DESCRIBE."""
    if not auth.enabled:
        return allowed(request)
    return allowed(request, lambda r: attrs.evolve(r, transactions=tuple(
        t for t in r.transactions
        if auth.allows(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, t.transactional_id))))


register(ApiSpec(ApiKeys.LIST_TRANSACTIONS, transaction_coordinator(
    handle_list_transactions, lambda r, e: ListTransactionsResponse(e)),
    with_principal(request_from_wire), response_to_wire, error_response,
    request_type=ListTransactionsRequest, authorize=authorize))
