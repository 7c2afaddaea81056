"""InitProducerId (v0-3): a producer id for an idempotent producer, served by the AdminManager, which hands ids out of
the broker's ProducerIdManager block (edges/producer_id_manager.py). Its own edge handler ("edge:producer_id"), so
that a producer's first request never waits behind an admin request that waits for the controller (the transport
runs each edge handler's requests in order on one thread; Kafka parks those in a purgatory instead)."""

from __future__ import annotations

from core.api.admin import Body, fit_response, passthrough
from core.api.registry import ApiSpec, register

INIT_PRODUCER_ID = 22
ROUTE = "edge:producer_id"
NO_PRODUCER_ID = -1  # RecordBatch.NO_PRODUCER_ID
NO_PRODUCER_EPOCH = -1  # RecordBatch.NO_PRODUCER_EPOCH


def response_to_wire(version: int, body: Body) -> Body:
    return fit_response(INIT_PRODUCER_ID, version, body)


def error_response(version: int, body: Body, error_code: int) -> Body:
    """InitProducerIdRequest.getErrorResponse: the error with no producer id and no epoch."""
    return fit_response(INIT_PRODUCER_ID, version, {"throttle_time_ms": 0, "error_code": error_code,
                                                    "producer_id": NO_PRODUCER_ID,
                                                    "producer_epoch": NO_PRODUCER_EPOCH})


register(ApiSpec(api_key=INIT_PRODUCER_ID, route=ROUTE, request_from_wire=passthrough(INIT_PRODUCER_ID),
                 response_to_wire=response_to_wire, error_response=error_response))
