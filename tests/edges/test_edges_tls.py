"""An SSL listener of the network edge (edges/net/tls.py): the handshake on the I/O thread, requests and answers
through TLS (large ones span many TLS records), client certificates as ssl.client.auth asks, the principal recorded
on the connection, and bad peers — plaintext bytes to the SSL port, a TLS handshake to a PLAINTEXT port — closed
with a clear log line while the listener keeps serving."""

from __future__ import annotations

import logging
import socket
import ssl
import struct
import time
from pathlib import Path
from typing import Any

import pytest
from edge_support import EdgeEcho, EdgeHandled

from edges.net.framing import decode_outbound, encode_outbound, outbound_spec
from edges.net.tls_context import server_context
from messages.net import NetResponse, NetSend, NetSendFailed
from tests.support.tls_certs import STORE_PASSWORD, Pki, make_pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def context(pki: Pki, client_auth: str = "none") -> ssl.SSLContext:
    return server_context({"ssl.protocol": "TLSv1.3", "ssl.enabled.protocols": ("TLSv1.2", "TLSv1.3"),
                           "ssl.keystore.type": "PKCS12", "ssl.keystore.location": pki.server.p12,
                           "ssl.keystore.password": STORE_PASSWORD, "ssl.truststore.type": "PEM",
                           "ssl.truststore.location": pki.ca_pem, "ssl.client.auth": client_auth})


def ssl_node(make_node: Any, pki: Pki, client_auth: str = "none") -> tuple[Any, list[tuple[str, str]]]:
    """A node with a PLAINTEXT listener and an SSL one (bound second); the "test" edge handler records each
    request's (listener, principal)."""
    node = make_node("b", extra_listeners=(("127.0.0.1", 0, "SSL"),), tls={"SSL": context(pki, client_auth)})
    seen: list[tuple[str, str]] = []
    node.net.add_edge_handler("test", lambda ctx, req: seen.append((ctx.listener, ctx.principal)) or req)
    return node, seen


def connect(port: int, pki: Pki, identity: Any = None) -> ssl.SSLSocket:
    client = ssl.create_default_context(cafile=pki.ca_pem)
    if identity is not None:
        client.load_cert_chain(identity.cert, identity.key)
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    return client.wrap_socket(raw, server_hostname="127.0.0.1")


def recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed by the broker")
        buf += chunk
    return bytes(buf)


def exchange(sock: socket.socket, *bodies: Any) -> list[Any]:
    """Send every request at once (pipelined), then read their answers in order."""
    specs = [outbound_spec(b) for b in bodies]
    frames = [encode_outbound(s, b, i + 1, "tls-test") for i, (s, b) in enumerate(zip(specs, bodies, strict=True))]
    sock.sendall(b"".join(frames))
    answers = []
    for i, spec in enumerate(specs):
        (size,) = struct.unpack(">i", recv_exact(sock, 4))
        corr, answer = decode_outbound(spec, recv_exact(sock, size))
        assert corr == i + 1
        answers.append(answer)
    return answers


def closed_by_peer(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, ssl.SSLError):
        return True


def test_requests_and_answers_through_tls(make_node: Any, pki: Pki) -> None:
    node, seen = ssl_node(make_node, pki)
    port = node.net.bound[1][1]
    big = "x" * (3 * 1024 * 1024 + 17)  # many TLS records each way, and answers the socket cannot take at once
    with connect(port, pki) as s:
        assert s.version() in ("TLSv1.2", "TLSv1.3")
        assert exchange(s, EdgeEcho("small"), EdgeEcho(big), EdgeHandled(5), EdgeEcho("after")) == [
            EdgeEcho("small"), EdgeEcho(big), EdgeHandled(5), EdgeEcho("after")]
    assert seen == [("SSL", "User:ANONYMOUS")]
    # the PLAINTEXT listener beside it is untouched
    with socket.create_connection(node.net.bound[0], timeout=10) as s:
        assert exchange(s, EdgeHandled(6)) == [EdgeHandled(6)]
    assert seen[-1] == ("PLAINTEXT", "User:ANONYMOUS")


def test_client_auth_required(make_node: Any, pki: Pki, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "kactor.edges.transport")
    node, seen = ssl_node(make_node, pki, "required")
    port = node.net.bound[1][1]
    # without a certificate: the handshake fails (TLS 1.3 reports it on the first read)
    with pytest.raises((ssl.SSLError, ConnectionError)), connect(port, pki) as s:
        exchange(s, EdgeHandled(1))
    # a certificate of another CA: refused too
    with pytest.raises((ssl.SSLError, ConnectionError)), connect(port, pki, pki.stranger) as s:
        exchange(s, EdgeHandled(2))
    # the broker's side logs on its I/O thread, which may see the second failure after the client did
    deadline = time.monotonic() + 10
    while True:
        failures = [r.getMessage() for r in caplog.records if "Failed authentication with 127.0.0.1:" in r.getMessage()]
        if len(failures) >= 2 or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert len(failures) == 2 and all("(SSL handshake failed: " in m for m in failures), failures
    with connect(port, pki, pki.client) as s:
        assert exchange(s, EdgeHandled(3)) == [EdgeHandled(3)]
    assert seen == [("SSL", f"User:{pki.client.dn}")] and pki.client.dn == "CN=alice,O=kactor tests"


def test_client_auth_requested(make_node: Any, pki: Pki) -> None:
    node, seen = ssl_node(make_node, pki, "requested")
    port = node.net.bound[1][1]
    with connect(port, pki) as s:
        assert exchange(s, EdgeHandled(1)) == [EdgeHandled(1)]
    with connect(port, pki, pki.client) as s:
        assert exchange(s, EdgeHandled(2)) == [EdgeHandled(2)]
    assert seen == [("SSL", "User:ANONYMOUS"), ("SSL", "User:CN=alice,O=kactor tests")]


def test_plaintext_bytes_to_the_ssl_port_close_that_connection(make_node: Any, pki: Pki,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "kactor.edges.transport")
    node, _ = ssl_node(make_node, pki)
    port = node.net.bound[1][1]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(encode_outbound(outbound_spec(EdgeHandled(1)), EdgeHandled(1), 1, "plain"))
        assert closed_by_peer(s)
    lines = [r.getMessage() for r in caplog.records if "Failed authentication with" in r.getMessage()]
    assert len(lines) == 1 and "SSL handshake failed" in lines[0], lines
    with connect(port, pki) as s:  # the listener keeps serving
        assert exchange(s, EdgeEcho("still here")) == [EdgeEcho("still here")]


def test_a_tls_handshake_to_a_plaintext_port_closes_that_connection(make_node: Any, pki: Pki,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "kactor.edges.transport")
    node, _ = ssl_node(make_node, pki)
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)), connect(node.net.bound[0][1], pki) as s:
        exchange(s, EdgeHandled(1))
    lines = [r.getMessage() for r in caplog.records if "a TLS handshake to the PLAINTEXT listener PLAINTEXT?" in
             r.getMessage()]
    assert len(lines) == 1 and "Invalid receive (size = " in lines[0], [r.getMessage() for r in caplog.records]
    with socket.create_connection(node.net.bound[0], timeout=10) as s:
        assert exchange(s, EdgeHandled(2)) == [EdgeHandled(2)]


def test_a_handshake_that_stalls_does_not_hold_the_others(make_node: Any, pki: Pki) -> None:
    """The handshake is driven on readiness: a peer that connects and says nothing (or half a ClientHello) costs
    the I/O thread nothing while others are served."""
    node, _ = ssl_node(make_node, pki)
    port = node.net.bound[1][1]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as silent, \
            socket.create_connection(("127.0.0.1", port), timeout=10) as half:
        half.sendall(b"\x16\x03\x01")
        with connect(port, pki) as s:
            assert exchange(s, EdgeEcho("served")) == [EdgeEcho("served")]
        assert silent.fileno() >= 0


def test_server_context_refuses_a_missing_keystore(tmp_path: Path, pki: Pki) -> None:
    from edges.net.tls_context import TlsConfigError

    with pytest.raises(TlsConfigError, match=r"ssl.keystore.location is not set"):
        server_context({"ssl.enabled.protocols": ("TLSv1.2",)})


def client_tls(pki: Pki, identity: Any = None, check_hostname: bool = True) -> ssl.SSLContext:
    from edges.net.tls_context import client_context

    values: dict[str, Any] = {"ssl.protocol": "TLSv1.3", "ssl.enabled.protocols": ("TLSv1.2", "TLSv1.3"),
                              "ssl.truststore.type": "PEM", "ssl.truststore.location": pki.ca_pem,
                              "ssl.endpoint.identification.algorithm": "https" if check_hostname else ""}
    if identity is not None:
        values |= {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": identity.p12,
                   "ssl.keystore.password": STORE_PASSWORD}
    return client_context(values)


def test_outbound_requests_over_tls_with_the_brokers_certificate(make_node: Any, pki: Pki) -> None:
    """An SSL inter-broker listener: a process's own requests (NetSend) connect with TLS and show its key store's
    certificate to a peer that requires one."""
    server, seen = ssl_node(make_node, pki, "required")
    ssl_port = server.net.bound[1][1]
    client = make_node("c", client_tls=client_tls(pki, pki.server))
    big = EdgeEcho("y" * 300_000)
    client.rt.inject("net", NetSend("127.0.0.1", ssl_port, "echo", EdgeHandled(7), 1, "client"), sender="test")
    client.rt.inject("net", NetSend("127.0.0.1", ssl_port, "echo", big, 2, "client"), sender="test")
    got = client.rec.wait(NetResponse, "client", count=2, timeout_s=10)
    assert sorted((r.body.request_id, r.body.body) for r in got) == [(1, EdgeHandled(7)), (2, big)]
    assert seen == [("SSL", f"User:{pki.server.dn}")]
    assert client.net.connection_count() == (0, 1)  # both on one TLS connection


def test_outbound_tls_checks_the_peers_name(make_node: Any, pki: Pki, caplog: pytest.LogCaptureFixture) -> None:
    """ssl.endpoint.identification.algorithm=https (2.6's default): a peer at an address its certificate does not
    name (127.0.0.2; the certificate names 127.0.0.1 and localhost) fails the handshake and the request with it;
    with the check off (an empty value) the same peer is served."""
    caplog.set_level(logging.INFO, "kactor.edges.transport")
    server = make_node("b", host="127.0.0.2", tls={"PLAINTEXT": context(pki)})
    port = server.net.port
    checking = make_node("c", client_tls=client_tls(pki))
    checking.rt.inject("net", NetSend("127.0.0.2", port, "echo", EdgeEcho("x"), 1, "client"), sender="test")
    (failed,) = checking.rec.wait(NetSendFailed, "client", timeout_s=10)
    assert failed.body.request_id == 1 and "SSL handshake with 127.0.0.2:" in failed.body.error
    assert "IP address mismatch" in failed.body.error, failed.body.error
    trusting = make_node("d", client_tls=client_tls(pki, check_hostname=False))
    trusting.rt.inject("net", NetSend("127.0.0.2", port, "echo", EdgeEcho("x"), 2, "client"), sender="test")
    assert trusting.rec.wait(NetResponse, "client", timeout_s=10)[0].body == NetResponse(2, EdgeEcho("x"))
