"""The connection layers under the inbound dispatch, each on its own (issue #42): the quota layer
(edges/net/quota_layer.py: KafkaApis.sendResponseMaybeThrottle and KIP-219's throttled channels), the authentication
layer (edges/net/sasl_layer.py: the failed authentication's delayed close, KIP-368's session expiry and
re-authentication), the TLS layer (edges/net/tls.py's TlsLayer: SslTransportLayer's handshake) and the Acceptor
(edges/net/acceptor.py), with stand-ins for the dispatch above and the selector below. The same behaviour through a
real socket and the whole transport is pinned by test_edges_client_quotas.py, test_edges_sasl.py,
test_edges_failed_authentication_delay.py and test_edges_tls.py."""

from __future__ import annotations

import itertools
import socket
import ssl
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest

from core.api.registry import spec_for_key
from core.security.sasl import SASL_HANDSHAKE, ListenerSasl, parse_jaas_config
from edges.net.acceptor import Acceptor
from edges.net.answers import InFlight
from edges.net.quota_layer import QuotaLayer, now_ms
from edges.net.sasl import monotonic_ms
from edges.net.sasl_layer import SaslLayer
from edges.net.selector import Conn
from edges.net.tls import TlsConn, TlsLayer, tls_to_plaintext
from edges.net.tls_context import server_context
from protocol.api_versions import ApiKeys
from protocol.errors import FrameTooLargeError
from tests.support.tls_certs import STORE_PASSWORD, Pki, make_pki

JAAS = {"PLAIN": parse_jaas_config('org.apache.kafka.common.security.plain.PlainLoginModule required '
                                   'user_alice="alice-secret";')[0]}
# ApiVersions with its answer already on the wire: the layer's frames without an actor's response type
SPEC = attrs.evolve(spec_for_key(ApiKeys.API_VERSIONS), response_to_wire=lambda version, response: response)
ANSWER_V0 = {"error_code": 0, "api_keys": []}
ANSWER = {**ANSWER_V0, "throttle_time_ms": 0}  # v1
ANSWER_FRAME = b"\x00\x00\x00\x0a\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00"  # size 10, correlation id 7, no keys


@pytest.fixture
def conn() -> Iterator[Conn]:
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    yield Conn(1, ours, False, None, "127.0.0.1:5555", "SASL_PLAINTEXT", "127.0.0.1")
    ours.close()
    theirs.close()


class FakeLoop:
    """The selector as the layers see it: what they asked of it, recorded."""

    def __init__(self) -> None:
        self.events: dict[int, int] = {}
        self.submitted: list[tuple[Any, ...]] = []

    def set_events(self, conn: Conn, events: int) -> None:
        self.events[conn.conn_id] = events

    def submit(self, cmd: tuple[Any, ...]) -> bool:
        self.submitted.append(cmd)
        return True

    def guarded(self, conn: Conn, fn: Callable[[Conn], None], close: Callable[[Conn, str], None]) -> None:
        fn(conn)


class FakeChannels:
    """The dispatch above the authentication layer (Inbound's one-in-flight bookkeeping), recorded."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def answer(self, conn: Conn, rid: int, frame: bytes | None) -> None:
        self.calls.append(("answer", rid, frame))

    def expect_answer(self, conn: Conn, rid: int, queued: bool) -> None:
        self.calls.append(("expect_answer", rid, queued))

    def close_after_flush(self, conn: Conn, reason: str) -> None:
        self.calls.append(("close_after_flush", bytes(b"".join(conn.out)), reason))

    def forget_waiting(self, conn: Conn) -> None:
        self.calls.append(("forget_waiting",))

    def close(self, conn: Conn, reason: str) -> None:
        self.calls.append(("close", reason))

    def flush(self, conn: Conn) -> None:
        self.calls.append(("flush",))


# -- the quota layer ------------------------------------------------------------------------------------------------
class FakeQuotas:
    """ClientQuotas as the layer calls it: every answer throttled ``throttle_ms``, the users it was asked about."""

    def __init__(self, throttle_ms: int) -> None:
        self.throttle_ms = throttle_ms
        self.principals: list[str] = []

    def answer(self, api_key: int, client_id: str, body: dict[str, Any], request_bytes: int,
               request_body: dict[str, Any], net_ns: int, encode: Any, principal: str) -> tuple[bytes, int]:
        self.principals.append(principal)
        return encode(dict(body, throttle_time_ms=self.throttle_ms)), self.throttle_ms

    def silent(self, api_key: int, client_id: str, request_bytes: int, request_body: dict[str, Any], net_ns: int,
               principal: str) -> int:
        self.principals.append(principal)
        return self.throttle_ms


def inflight(principal: str | None = "User:alice", silent: bool = False) -> InFlight:
    return InFlight(1, SPEC, 1, 7, {}, silent, "c", 10, principal)


def test_without_client_quotas_an_answer_is_only_encoded() -> None:
    layer = QuotaLayer("b", None)
    assert layer.frame(InFlight(1, SPEC, 0, 7, {}), ANSWER_V0) == (ANSWER_FRAME, 0)
    assert layer.frame(InFlight(1, SPEC, 0, 7, {}, silent=True), ANSWER_V0) == (b"", 0)  # acks=0: nothing written


def test_an_answer_carries_its_throttle_time_and_the_principals_user_is_measured() -> None:
    quotas = FakeQuotas(250)
    layer = QuotaLayer("b", quotas)  # type: ignore[arg-type]
    frame, throttle_ms = layer.frame(inflight(), ANSWER)
    assert throttle_ms == 250 and frame is not None
    assert frame[-4:] == (250).to_bytes(4, "big")  # ApiVersions v1's throttle_time_ms, the answer's last field
    assert layer.frame(inflight(silent=True), ANSWER) == (b"", 250)  # an acks=0 produce's bytes count too
    # an ApiVersions a SASL connection sends before it authenticates is not measured (principal None)
    assert layer.frame(inflight(principal=None), ANSWER)[1] == 0
    assert quotas.principals == ["User:alice", "User:alice"]


def test_a_throttled_connection_is_read_again_once_its_throttle_is_over(conn: Conn) -> None:
    """ThrottledChannel: StartThrottlingResponse mutes the connection for the throttle time from now;
    EndThrottlingResponse (the sweep) hands it back once it is over; a closed one is forgotten."""
    layer = QuotaLayer("b", None)
    layer.throttle(conn, 0)
    assert layer.unthrottled(now_ms() + 10_000) == []  # no throttle, nothing to sweep
    start = now_ms()
    layer.throttle(conn, 1_000)
    assert conn.throttle.muted(start + 500)
    assert layer.unthrottled(start + 500) == []
    assert layer.unthrottled(now_ms() + 1_000) == [conn]
    assert layer.unthrottled(now_ms() + 1_000) == []  # taken out
    layer.throttle(conn, 1_000)
    layer.forget(conn)
    assert layer.unthrottled(now_ms() + 10_000) == []


# -- the authentication layer ---------------------------------------------------------------------------------------
def sasl_layer(delay_ms: int, clock: Callable[[], float] = monotonic_ms,
               max_reauth_ms: int = 0) -> tuple[SaslLayer, FakeLoop, FakeChannels]:
    loop, channels = FakeLoop(), FakeChannels()
    listener = ListenerSasl(("PLAIN",), JAAS, {"PLAIN": max_reauth_ms}, delay_ms)
    layer = SaslLayer("b", loop, itertools.count(1), channels, {"SASL_PLAINTEXT": listener},  # type: ignore[arg-type]
                      lambda user, mechanism: None, clock=clock)
    layer.close_workers()
    return layer, loop, channels


def test_a_failed_authentication_is_held_unread_until_its_delay_is_over_then_answered_and_closed(conn: Conn) -> None:
    now = [1_000.0]
    layer, loop, channels = sasl_layer(100, lambda: now[0])
    layer.start(conn)
    assert conn.sasl is not None
    layer.fail(conn, b"answer", "wrong password")
    assert layer.failed(conn) and loop.events[conn.conn_id] == 0  # neither read nor written
    assert channels.calls == [("forget_waiting",)]
    now[0] += 99
    layer.sweep()
    assert layer.failed(conn) and not conn.out
    now[0] += 1
    layer.sweep()
    assert not layer.failed(conn)
    assert channels.calls[1:] == [("close_after_flush", b"answer", "wrong password"), ("flush",)]


def test_with_no_delay_a_failed_authentication_is_answered_and_closed_at_once(conn: Conn) -> None:
    layer, loop, channels = sasl_layer(0)
    layer.start(conn)
    layer.fail(conn, None, "unknown mechanism")
    assert not layer.failed(conn) and conn.conn_id not in loop.events
    assert channels.calls == [("forget_waiting",), ("close_after_flush", b"", "unknown mechanism"), ("flush",)]


def test_a_held_connection_closed_otherwise_is_forgotten(conn: Conn) -> None:
    now = [0.0]
    layer, _, channels = sasl_layer(100, lambda: now[0])
    layer.start(conn)
    layer.fail(conn, None, "x")
    layer.forget(conn)
    now[0] += 1_000
    layer.sweep()
    assert channels.calls == [("forget_waiting",)]


def test_an_expired_session_closes_and_a_handshake_after_it_began_re_authenticates(conn: Conn) -> None:
    """KIP-368: a request after the session's expiry closes the connection; a SaslHandshake re-authenticates (at
    most once a second), with a new authenticator that knows the session's mechanism and principal."""
    layer, _, channels = sasl_layer(100, max_reauth_ms=1_000)
    conn.principal, conn.sasl_mechanism = "User:alice", "PLAIN"
    conn.session_expiry_ms = monotonic_ms() + 60_000
    assert layer.session_goes_on(conn, ApiKeys.METADATA) and conn.sasl is None
    assert layer.session_goes_on(conn, SASL_HANDSHAKE)
    assert conn.sasl is not None and conn.sasl.previous == ("PLAIN", "User:alice")
    conn.sasl = None
    conn.session_expiry_ms = monotonic_ms() - 1
    assert not layer.session_goes_on(conn, SASL_HANDSHAKE)  # one re-authentication began under a second ago
    assert channels.calls == [("close", "SASL session expired")]


def test_a_frame_too_large_before_authentication_closes_at_once(conn: Conn) -> None:
    layer, _, channels = sasl_layer(100)
    layer.too_large(conn, FrameTooLargeError("Invalid receive (size = 600000 larger than 524288)"))
    assert channels.calls == [("close", "SASL frame from 127.0.0.1:5555 too large")]


def test_a_plaintext_listener_gets_no_authenticator(conn: Conn) -> None:
    layer, _, _ = sasl_layer(100)
    conn.listener = "PLAINTEXT"
    layer.start(conn)
    assert conn.sasl is None


# -- the TLS layer and the Acceptor ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def tls_context(pki: Pki) -> ssl.SSLContext:
    return server_context({"ssl.protocol": "TLSv1.3", "ssl.enabled.protocols": ("TLSv1.2", "TLSv1.3"),
                           "ssl.keystore.type": "PKCS12", "ssl.keystore.location": pki.server.p12,
                           "ssl.keystore.password": STORE_PASSWORD, "ssl.truststore.type": "PEM",
                           "ssl.truststore.location": pki.ca_pem, "ssl.client.auth": "none"})


def test_the_acceptor_hands_out_plaintext_and_tls_connections_of_their_listeners(pki: Pki) -> None:
    plain, secure = socket.create_server(("127.0.0.1", 0)), socket.create_server(("127.0.0.1", 0))
    plain.setblocking(False)
    secure.setblocking(False)
    try:
        closed: list[str] = []
        tls = TlsLayer("b", FakeLoop(), {"SSL": tls_context(pki)}, lambda c, why: closed.append(why),  # type: ignore
                       lambda c: None)
        acceptor = Acceptor("b", [(plain, "PLAINTEXT"), (secure, "SSL")], itertools.count(7), tls)
        clients = [socket.create_connection(s.getsockname()[:2]) for s in (plain, plain, secure)]
        first = list(acceptor.accept(plain))
        assert [(c.conn_id, c.listener, type(c).__name__, c.handshaking) for c in first] == [
            (7, "PLAINTEXT", "Conn", False), (8, "PLAINTEXT", "Conn", False)]
        assert first[0].sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        (tls_conn,) = acceptor.accept(secure)
        assert isinstance(tls_conn, TlsConn) and tls_conn.listener == "SSL" and tls_conn.handshaking
        assert list(acceptor.accept(plain)) == []  # nothing waiting: the round ends
        # plaintext bytes to the SSL listener: the handshake fails and the dispatch's close is called
        clients[2].sendall(b"\x00\x00\x00\x10 not a TLS record at all")
        clients[2].shutdown(socket.SHUT_WR)
        for _ in range(50):
            tls.handshake(tls_conn)
            if closed:
                break
        assert closed and closed[0].startswith(f"SSL handshake with {tls_conn.peer} failed")
        for c in (*first, tls_conn, *clients):
            c.close() if isinstance(c, socket.socket) else c.sock.close()
    finally:
        plain.close()
        secure.close()


def test_a_tls_handshake_to_a_plaintext_connection_is_named_as_such(conn: Conn) -> None:
    error = FrameTooLargeError("Invalid receive (size = 369295616 larger than 104857600)")
    conn.listener = "PLAINTEXT"
    conn.rbuf += b"\x16\x03\x01\x02\x00"
    hint = tls_to_plaintext(conn, error)
    assert hint is not None and str(hint).endswith(": a TLS handshake to the PLAINTEXT listener PLAINTEXT?")
    conn.rbuf[:] = b"\x7f\xff\xff\xff"
    assert tls_to_plaintext(conn, error) is None

