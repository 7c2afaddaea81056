"""An inbound request being handled (`InFlight`) and the frames its answer becomes (KafkaApis.sendResponse's
encoding): the answer to a request that expects one, an acks=0 produce's (nothing, or a close), a whole-request error
answer. Shared by the dispatch (edges/net/inbound.py) and the quota layer (edges/net/quota_layer.py), which measures
the frame before it is written."""

from __future__ import annotations

import logging
from typing import Any

from core.api.registry import ApiSpec
from core.quota.enforcement import ANONYMOUS_PRINCIPAL
from edges.net.framing import encode_inbound_response

log = logging.getLogger("kactor.edges.transport")

# The answer of a request the client expects none for, in its turn (Kafka's NoOpResponse): nothing is written.
NO_RESPONSE = b""


class InFlight:
    """An inbound request being handled: what its answer needs to become a response frame."""

    __slots__ = ("conn_id", "spec", "version", "correlation_id", "body", "silent", "client_id", "size", "net_ns",
                 "principal")

    def __init__(self, conn_id: int, spec: ApiSpec, version: int, correlation_id: int, body: dict[str, Any],
                 silent: bool = False, client_id: str = "", size: int = 0,
                 principal: str | None = ANONYMOUS_PRINCIPAL) -> None:
        self.conn_id = conn_id
        self.spec = spec
        self.version = version
        self.correlation_id = correlation_id
        self.body = body  # the decoded request body: error_response needs it
        self.silent = silent  # the client expects no answer (acks=0): only an error is acted on, by closing
        self.client_id = client_id
        self.size = size  # the request's size in bytes (the produce quota's measure)
        self.net_ns = 0  # the time this edge spent decoding and converting it (the request quota's measure)
        # the connection's KafkaPrincipal when the request was read (request.session: the user its quotas are
        # resolved by); None: not measured, an ApiVersions a SASL connection sends before it authenticates (2.6.3's
        # SaslServerAuthenticator answers it itself, never through KafkaApis' quotas)
        self.principal = principal


def silent_frame(name: str, inflight: InFlight, response: Any) -> bytes | None:
    """KafkaApis.handleProduceRequest for acks=0: an answer with an error closes the connection (None), so the
    client notices and refreshes its metadata; a clean one is dropped."""
    try:
        failed = inflight.spec.failed is not None and inflight.spec.failed(response)
    except Exception:  # noqa: BLE001 - an answer we cannot read: closing is what an error would do
        log.exception("%s: cannot read a %s answer", name, inflight.spec.name)
        failed = True
    if not failed:
        return NO_RESPONSE
    log.info("%s: closing connection %d due to an error during %s request with correlation id %d from client id "
             "%s with ack=0: %r", name, inflight.conn_id, inflight.spec.name, inflight.correlation_id,
             inflight.client_id, response)
    return None


def response_frame(name: str, inflight: InFlight, response: Any) -> bytes | None:
    """KafkaApis.sendResponse: the answer's frame; None (close) when it cannot be encoded."""
    try:
        wire = inflight.spec.response_to_wire(inflight.version, response)
        return encode_inbound_response(inflight.spec, inflight.version, inflight.correlation_id, wire)
    except Exception:  # noqa: BLE001 - our own bug: the connection is closed rather than left waiting
        log.exception("%s: cannot encode a %s v%d response", name, inflight.spec.name, inflight.version)
        return None


def error_frame(name: str, inflight: InFlight, error: int) -> bytes | None:
    """AbstractRequest.getErrorResponse: the whole request answered with ``error``; None (close) when even
    that cannot be built."""
    try:
        wire = inflight.spec.error_response(inflight.version, inflight.body, error)
        return encode_inbound_response(inflight.spec, inflight.version, inflight.correlation_id, wire)
    except Exception:  # noqa: BLE001
        log.exception("%s: cannot build the %s v%d error response", name, inflight.spec.name, inflight.version)
        return None
