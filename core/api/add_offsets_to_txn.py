"""AddOffsetsToTxn (25, v0-1) as Kafka 2.6 serves it, routed to the transaction coordinator
(KafkaApis.handleAddOffsetsToTxnRequest): the group's ``__consumer_offsets`` partition joins the producer's
transaction, so that its TxnOffsetCommit is completed by the transaction's marker. v1 is v0."""

from __future__ import annotations

from typing import Any

from core.api.admin import fit_response
from core.api.registry import ApiSpec, RequestContext, register, transaction_coordinator, with_principal
from core.api.topic_groups import error_of
from core.coordinator.transaction.transaction_coordinator import TransactionCoordinator
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.common import Errors
from messages.transaction import AddOffsetsToTxnRequest, AddOffsetsToTxnResponse
from protocol.api_versions import ApiKeys


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext | None = None
                      ) -> AddOffsetsToTxnRequest:
    return AddOffsetsToTxnRequest(body["transactional_id"], body["producer_id"], body["producer_epoch"],
                                  body["group_id"])


def response_to_wire(version: int, response: AddOffsetsToTxnResponse) -> dict[str, Any]:
    return fit_response(ApiKeys.ADD_OFFSETS_TO_TXN, version, {"throttle_time_ms": 0, "error_code": int(response.error)})


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    return response_to_wire(version, AddOffsetsToTxnResponse(error_of(error)))


def authorize(request: AddOffsetsToTxnRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleAddOffsetsToTxnRequest: WRITE on the transactional id
    (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then READ on the group (GROUP_AUTHORIZATION_FAILED)."""
    if not auth.allows(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id):
        return refused(AddOffsetsToTxnResponse(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
    if not auth.allows(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return refused(AddOffsetsToTxnResponse(Errors.GROUP_AUTHORIZATION_FAILED))
    return allowed(request)


register(ApiSpec(ApiKeys.ADD_OFFSETS_TO_TXN, transaction_coordinator(TransactionCoordinator.handle_add_offsets,
                                                               lambda r, e: AddOffsetsToTxnResponse(e)),
                 with_principal(request_from_wire), response_to_wire, error_response,
                 request_type=AddOffsetsToTxnRequest, authorize=authorize))
