"""EndTxn (26, v0-1) as Kafka 2.6 serves it, routed to the transaction coordinator (KafkaApis.handleEndTxnRequest →
TransactionCoordinator.handleEndTransaction): PrepareCommit / PrepareAbort is written to ``__transaction_state``
(acks=-1) before the answer; the markers follow. v1 is v0."""

from __future__ import annotations

from typing import Any

from core.api.admin import fit_response
from core.api.registry import ApiSpec, RequestContext, register, transaction_coordinator, with_principal
from core.api.topic_groups import error_of
from core.coordinator.transaction.transaction_coordinator import TransactionCoordinator
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.common import Errors
from messages.transaction import EndTxnRequest, EndTxnResponse
from protocol.api_versions import ApiKeys


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext | None = None) -> EndTxnRequest:
    return EndTxnRequest(body["transactional_id"], body["producer_id"], body["producer_epoch"],
                         bool(body["committed"]))


def response_to_wire(version: int, response: EndTxnResponse) -> dict[str, Any]:
    return fit_response(ApiKeys.END_TXN, version, {"throttle_time_ms": 0, "error_code": int(response.error)})


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    return response_to_wire(version, EndTxnResponse(error_of(error)))


def authorize(request: EndTxnRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleEndTxnRequest: WRITE on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED)."""
    if auth.allows(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id):
        return allowed(request)
    return refused(EndTxnResponse(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))


register(ApiSpec(ApiKeys.END_TXN, transaction_coordinator(TransactionCoordinator.handle_end_txn,
                                                    lambda r, e: EndTxnResponse(e)),
                 with_principal(request_from_wire), response_to_wire, error_response,
                 request_type=EndTxnRequest, authorize=authorize))
