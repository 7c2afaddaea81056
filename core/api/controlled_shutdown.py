"""ControlledShutdown (key 7, v0-3): a broker asks the controller to move its leaderships away before it stops
(``KafkaServer.controlledShutdown`` sends v3 at IBP 2.6; ``KafkaApis.handleControlledShutdownRequest`` hands it to
the controller's event queue).

Every broker runs a controller candidate, so every broker routes the request to its controller actor; one that is
not the active controller answers STALE_CONTROLLER_EPOCH, as 2.6's does: ``doControlledShutdown`` throws
ControllerMovedException when ``!isActive`` and ``Errors.forException`` maps that exception to code 11 (not to
NOT_CONTROLLER, 41) — decided by the controller core (``KafkaController.process_controlled_shutdown``).

Versions (ControlledShutdownRequest.json): v0 (request header v0, no client id) and v1 carry ``broker_id``; v2 adds
``broker_epoch`` (-1 before: "unknown", which the controller accepts); v3 is v2 made flexible. The response is
``error_code`` + ``remaining_partitions`` in all four.
"""

from __future__ import annotations

from typing import Any

from core.api.registry import ApiSpec, ControllerService, RequestContext, register, with_principal
from core.api.topic_groups import error_of
from core.security.acl import AclOperation
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages import controller_events as ev
from messages.common import NO_EPOCH, Errors, TopicPartition
from messages.requests import ControlledShutdownRequest, ControlledShutdownResponse
from protocol.api_versions import ApiKeys

SEND_VERSION = 3  # KafkaServer.controlledShutdown at IBP >= KAFKA_2_4_IV0


def request_from_wire(version: int, body: dict[str, Any],
                      ctx: RequestContext | None = None) -> ControlledShutdownRequest:
    return ControlledShutdownRequest(body["broker_id"], body.get("broker_epoch", NO_EPOCH))


def request_to_wire(request: ControlledShutdownRequest) -> dict[str, Any]:
    return {"broker_id": request.broker_id, "broker_epoch": request.broker_epoch}


def response_to_wire(version: int, response: ControlledShutdownResponse) -> dict[str, Any]:
    return {"error_code": int(response.error), "remaining_partitions": [
        {"topic_name": tp.topic, "partition_index": tp.partition} for tp in response.remaining_partitions]}


def response_from_wire(version: int, body: dict[str, Any]) -> ControlledShutdownResponse:
    return ControlledShutdownResponse(error_of(body["error_code"]), tuple(
        TopicPartition(p["topic_name"], p["partition_index"]) for p in body["remaining_partitions"]))


def error_response(version: int, body: dict[str, Any], error: int) -> dict[str, Any]:
    """ControlledShutdownRequest.getErrorResponse: the error and no remaining partitions."""
    return {"error_code": error, "remaining_partitions": []}


def authorize(request: ControlledShutdownRequest, auth: RequestAuthorizer) -> Authorized:
    """KafkaApis.handleControlledShutdownRequest's authorizeClusterOperation(CLUSTER_ACTION)."""
    if auth.allows_cluster(AclOperation.CLUSTER_ACTION):
        return allowed(request)
    return refused(ControlledShutdownResponse(Errors.CLUSTER_AUTHORIZATION_FAILED))


SPEC = ApiSpec(ApiKeys.CONTROLLED_SHUTDOWN,
               ControllerService(lambda r: ev.ControlledShutdown(r.broker_id, r.broker_epoch)),
               with_principal(request_from_wire), response_to_wire, error_response,
               request_type=ControlledShutdownRequest, authorize=authorize, send_version=SEND_VERSION,
               request_to_wire=request_to_wire, response_from_wire=response_from_wire)
register(SPEC)
