"""InitProducerId (22, v0-3) as Kafka 2.6 serves it, routed to the transaction coordinator
(KafkaApis.handleInitProducerIdRequest → TransactionCoordinator.handleInitProducerId): an idempotent producer (no
transactional id) gets a new producer id at epoch 0; a transactional one its id's producer id with the epoch bumped
(KIP-360 on v3: with the producer's current id and epoch). v1 is v0; v2 is flexible; v3 adds the producer's id and
epoch."""

from __future__ import annotations

from typing import Any

from core.api.admin import fit_response
from core.api.registry import ApiSpec, RequestContext, register, transaction_coordinator, with_principal
from core.api.topic_groups import error_of
from core.coordinator.transaction.transaction_coordinator import TransactionCoordinator
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.common import Errors
from messages.transaction import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, InitProducerIdRequest, InitProducerIdResponse
from protocol.api_versions import ApiKeys


def request_from_wire(version: int, body: dict[str, Any], ctx: RequestContext | None = None
                      ) -> InitProducerIdRequest:
    return InitProducerIdRequest(body.get("transactional_id"), body.get("transaction_timeout_ms", 0),
                                 body.get("producer_id", NO_PRODUCER_ID), body.get("producer_epoch", NO_PRODUCER_EPOCH))


def response_to_wire(version: int, response: InitProducerIdResponse) -> dict[str, Any]:
    return fit_response(ApiKeys.INIT_PRODUCER_ID, version, {"throttle_time_ms": 0, "error_code": int(response.error),
                                                    "producer_id": response.producer_id,
                                                    "producer_epoch": response.producer_epoch})


def error_response(version: int, body: dict[str, Any], error_code: int) -> dict[str, Any]:
    """InitProducerIdRequest.getErrorResponse: the error with no producer id and no epoch."""
    return response_to_wire(version, InitProducerIdResponse(error_of(error_code)))


def authorize(request: InitProducerIdRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleInitProducerIdRequest: WRITE on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
    or, for an idempotent producer, IDEMPOTENT_WRITE on the Cluster (CLUSTER_AUTHORIZATION_FAILED)."""
    if request.transactional_id is not None:
        if not auth.allows(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id):
            return refused(InitProducerIdResponse(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
    elif not auth.allows_cluster(AclOperation.IDEMPOTENT_WRITE):
        return refused(InitProducerIdResponse(Errors.CLUSTER_AUTHORIZATION_FAILED))
    return allowed(request)


register(ApiSpec(ApiKeys.INIT_PRODUCER_ID, transaction_coordinator(TransactionCoordinator.handle_init_producer_id,
                                                             lambda r, e: InitProducerIdResponse(e)),
                 with_principal(request_from_wire), response_to_wire, error_response,
                 request_type=InitProducerIdRequest, authorize=authorize))
