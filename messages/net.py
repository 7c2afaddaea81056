"""Messages of the network edge: actors ask the actor "net" to carry a body to an actor in another process.

Outbound: ``NetSend`` to "net"; when ``reply_to`` is set, exactly one of ``NetResponse`` / ``NetSendFailed`` comes
back to ``reply_to`` with the caller's ``request_id`` (a reply is never silently lost). Inbound: the edge injects
``NetRequest`` into the addressed actor, which answers by posting ``NetReply`` to "net".

On the socket these are Kafka requests and responses (edges/transport.py): a body is an internal request or
response, converted to and from its Kafka API by core/api's ApiSpecs; actors never see Kafka's bytes.
"""

from __future__ import annotations

from typing import Any

from messages.registry import message


@message
class NetSend:
    """Deliver ``body`` to actor ``to`` in the process listening at host:port.

    ``reply_to`` None means fire-and-forget (a failure is only logged). ``timeout_ms`` None means the transport's
    default request timeout.
    """

    host: str
    port: int
    to: str
    body: Any
    request_id: int
    reply_to: str | None = None
    timeout_ms: float | None = None


@message
class NetResponse:
    """The remote actor's answer to the NetSend with this ``request_id``."""

    request_id: int
    body: Any


@message
class NetSendFailed:
    """The NetSend with this ``request_id`` got no answer: connection failure, timeout, or no such remote actor."""

    request_id: int
    error: str


@message
class NetRequest:
    """A request from another process, injected into the addressed actor (sender "edge:net").

    Answer (when ``reply_expected``) with ``NetReply(connection_id, request_id, body)`` posted to "net".
    ``body`` is the internal request (core/api's ``request_from_wire``); ``api_version``, ``client_id`` and
    ``client_host`` are the Kafka request header's version and client id and the peer's address (Kafka's
    RequestContext), -1 / "" where unknown (traces written before the Kafka protocol).
    """

    connection_id: int
    request_id: int
    body: Any
    reply_expected: bool
    api_version: int = -1
    client_id: str = ""
    client_host: str = ""


@message
class NetReply:
    """An actor's answer to a NetRequest, posted to "net"."""

    connection_id: int
    request_id: int
    body: Any


@message
class NetClose:
    """Drop the connection to host:port (its pending requests fail with NetSendFailed); the next send reconnects."""

    host: str
    port: int
