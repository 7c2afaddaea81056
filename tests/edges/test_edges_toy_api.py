"""Adding an API is one module and one registry line (issue #42): a toy API — a made-up api key, its own request and
response schema, its own service — is registered in a fixture and served end to end through a real socket: a Kafka
frame from a raw client reaches the transport's listener, is decoded by the toy's unit, passes the one request front
(actors/request_front.py: the unit's authorization), is served by the toy's service and answered on the socket."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from typing import Any

import pytest

from actors import names
from actors.base import KActor
from actors.request_front import admit
from core.api import registry
from core.api.kactor_private import PrivateBodyCodec
from core.api.registry import ApiSpec, RequestContext
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import Authorized, RequestAuthorizer, allowed, refused
from messages.codec import dumps_bytes, loads
from messages.net import NetReply, NetRequest
from messages.registry import message
from protocol.framing import RequestHeader

TOY_KEY = 10042  # made up: a kactor-private key (>= 10000), never advertised
TOY_CODEC = PrivateBodyCodec(frozenset({TOY_KEY}))


@message
class ToyShoutRequest:
    """The toy's request schema: a word to shout back."""

    word: str
    principal: str = "User:ANONYMOUS"


@message
class ToyShoutResponse:
    """The toy's response schema."""

    shouted: str
    error_code: int = 0


class ToyShoutService(KActor):
    """The toy's service: an actor behind the one request front, as every broker component is."""

    def on_NetRequest(self, msg: NetRequest, sender: str) -> None:
        admitted = admit(self, msg, None)
        if admitted is not None and msg.reply_expected:
            self.post(names.NET, NetReply(msg.connection_id, msg.request_id,
                                          ToyShoutResponse(admitted.request.word.upper())))


# -- the toy's module: converters, authorization, its unit --------------------------------------------------------
def _from_wire(version: int, body: dict[str, Any], ctx: RequestContext | None = None) -> ToyShoutRequest:
    value = loads(body["json"])
    if not isinstance(value, ToyShoutRequest):
        raise ValueError(f"not a ToyShoutRequest: {type(value).__name__}")
    return value if ctx is None else ToyShoutRequest(value.word, ctx.principal)


def _authorize(request: ToyShoutRequest, auth: RequestAuthorizer) -> Authorized:
    """Words naming an internal topic are not shouted (a refusal the front answers on its own)."""
    if request.word.startswith("__") or not auth.allows(AclOperation.READ, ResourceType.TOPIC, request.word):
        return refused(ToyShoutResponse("", 29))
    return allowed(request)


TOY_UNIT = ApiSpec(TOY_KEY, "toy-shout", _from_wire, lambda v, r: {"json": dumps_bytes(r)},
                   lambda v, b, e: {"json": dumps_bytes(ToyShoutResponse("", e))},
                   request_type=ToyShoutRequest, authorize=_authorize, body_codec=TOY_CODEC)


@pytest.fixture
def toy_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[ApiSpec]:
    """The toy API registered for this test only: its one registry line."""
    monkeypatch.setattr(registry, "_UNITS", dict(registry._UNITS))
    registry.register(TOY_UNIT)
    yield TOY_UNIT


def _call(port: int, correlation_id: int, request: ToyShoutRequest) -> ToyShoutResponse:
    with socket.create_connection(("127.0.0.1", port), timeout=10.0) as sock:
        sock.sendall(TOY_CODEC.encode_request(RequestHeader(TOY_KEY, 0, correlation_id, "toy-client"),
                                              {"json": dumps_bytes(request)}))
        (size,) = struct.unpack(">i", _exact(sock, 4))
        corr, body = TOY_CODEC.decode_response(TOY_KEY, 0, _exact(sock, size))
    assert corr == correlation_id
    response = loads(body["json"])
    assert isinstance(response, ToyShoutResponse)
    return response


def _exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        assert chunk, "the broker closed the connection"
        buf += chunk
    return bytes(buf)


def test_a_toy_api_registered_in_a_fixture_is_served_end_to_end_through_a_real_socket(toy_api: ApiSpec,
                                                                                        make_node: Any) -> None:
    node = make_node("toy-broker", extra={"toy-shout": ToyShoutService})
    assert registry.spec_for_key(TOY_KEY) is toy_api and registry.unit_of(ToyShoutRequest("x")) is toy_api
    assert TOY_KEY not in registry.registered_keys()  # a private key is not advertised in ApiVersions
    assert _call(node.port, 7, ToyShoutRequest("hello")) == ToyShoutResponse("HELLO")
    # the unit's authorization runs in the one request front: refused there, never reaching the service
    assert _call(node.port, 8, ToyShoutRequest("__consumer_offsets")) == ToyShoutResponse("", 29)


def test_without_its_registry_line_the_toy_key_is_not_served(make_node: Any) -> None:
    """The same frame with the unit not registered: Kafka's unknown api key, the connection closed unanswered."""
    node = make_node("toy-broker", extra={"toy-shout": ToyShoutService})
    with socket.create_connection(("127.0.0.1", node.port), timeout=10.0) as sock:
        sock.sendall(TOY_CODEC.encode_request(RequestHeader(TOY_KEY, 0, 1, "toy-client"),
                                              {"json": dumps_bytes(ToyShoutRequest("hello"))}))
        assert sock.recv(4) == b""
