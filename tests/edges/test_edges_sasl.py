"""A SASL listener of the network edge (edges/net/inbound.py with core/security/sasl.py): nothing is served before
the connection authenticates — ApiVersions, SaslHandshake, then SaslAuthenticate (or raw tokens after a v0
handshake) — and after it the connection's requests carry the principal User:<name>. Kafka's answers for a wrong
password, an unknown mechanism, a request out of turn and an oversize token, each closing that connection only."""

from __future__ import annotations

import base64
import logging
import struct
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from edge_support import EdgeEcho, EdgeHandled

from core.security import scram
from core.security.sasl import ListenerSasl, parse_jaas_config
from core.security.sasl_client import SaslClientConfig
from core.security.scram import ScramMechanism
from messages.net import NetResponse, NetSend, NetSendFailed
from tests.support.raw_client import RawClient
from tests.support.tls_certs import STORE_PASSWORD, make_pki

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              'user_admin="admin-secret" user_alice="alice-secret";')
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
SASL = ListenerSasl(("PLAIN", "SCRAM-SHA-256"), {"PLAIN": parse_jaas_config(PLAIN_JAAS)[0],
                                                 "SCRAM-SHA-256": parse_jaas_config(SCRAM_JAAS)[0]})
SHA256 = ScramMechanism.SCRAM_SHA_256
BOB = scram.generate_credential(SHA256, "bob-secret", 4096)


class Node:
    def __init__(self, make_node: Any, sasl: ListenerSasl = SASL) -> None:
        self.lookups: list[tuple[str, str]] = []  # (user, thread name)

        def lookup(user: str, mechanism: ScramMechanism) -> scram.ScramCredential | None:
            self.lookups.append((user, threading.current_thread().name))
            return BOB if user == "bob" and mechanism is SHA256 else None

        self.node = make_node("b", extra_listeners=(("127.0.0.1", 0, "SASL"),), sasl={"SASL": sasl},
                              scram_credentials=lookup)
        self.seen: list[tuple[str, str]] = []
        self.node.net.add_edge_handler("test", lambda ctx, req: self.seen.append((ctx.listener, ctx.principal))
                                       or req)
        self.port = self.node.net.bound[1][1]


@pytest.fixture
def sasl_node(make_node: Any) -> Node:
    return Node(make_node)


class Client(RawClient):
    def __init__(self, port: int) -> None:
        super().__init__(port, "sasl-test")

    def handshake(self, mechanism: str, version: int = 1) -> dict[str, Any]:
        versions = self.call(18, 2, {})
        assert versions["error_code"] == 0 and {k["api_key"] for k in versions["api_keys"]} >= {17, 36}
        return self.call(17, version, {"mechanism": mechanism})

    def authenticate(self, token: bytes, version: int = 2) -> dict[str, Any]:
        return self.call(36, version, {"auth_bytes": token})

    def handled(self, n: int) -> int:
        answer = self.call(40, 1, {"hmac": b"", "expiry_time_period_ms": n})
        return int(answer["expiry_timestamp_ms"])


def test_plain_then_requests_carry_the_user(sasl_node: Node) -> None:
    c = Client(sasl_node.port)
    assert c.handshake("PLAIN") == {"error_code": 0, "mechanisms": ["PLAIN", "SCRAM-SHA-256"]}
    answer = c.authenticate(b"\0alice\0alice-secret")
    assert answer["error_code"] == 0 and answer["auth_bytes"] == b"" and answer["session_lifetime_ms"] == 0
    assert c.handled(7) == 7
    assert sasl_node.seen == [("SASL", "User:alice")]
    # once authenticated, SaslHandshake reaches KafkaApis (ILLEGAL_SASL_STATE there; the edge tests' own API here)
    # and the PLAINTEXT listener beside it is untouched
    plain = Client(sasl_node.node.net.bound[0][1])
    assert plain.handled(8) == 8 and sasl_node.seen[-1] == ("PLAINTEXT", "User:ANONYMOUS")


def test_a_wrong_password_fails_that_connection_only(sasl_node: Node, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "kactor.edges.transport")
    good = Client(sasl_node.port)
    good.handshake("PLAIN")
    bad = Client(sasl_node.port)
    bad.handshake("PLAIN")
    assert bad.authenticate(b"\0alice\0guess", version=1) == {
        "error_code": 58, "error_message": "Authentication failed: Invalid username or password", "auth_bytes": b"",
        "session_lifetime_ms": 0}
    assert bad.closed()
    assert good.authenticate(b"\0admin\0admin-secret")["error_code"] == 0 and good.handled(1) == 1
    assert sasl_node.seen == [("SASL", "User:admin")]
    assert any("Failed authentication with 127.0.0.1:" in r.getMessage() and
               "(Authentication failed: Invalid username or password)" in r.getMessage() for r in caplog.records)


def scram_client_final(client_first: bytes, server_first: bytes, password: str) -> bytes:
    first, _ = scram.parse_client_first(client_first)
    fields = dict(item.split("=", 1) for item in server_first.decode().split(","))
    server = scram.ServerFirstMessage(fields["r"], base64.b64decode(fields["s"]), int(fields["i"]))
    final = scram.ClientFinalMessage(b"n,,", server.nonce, b"")
    salted = scram.salted_password(SHA256, password, server.salt, server.iterations)
    proof = scram.client_proof(SHA256, salted, first, server, final)
    return f"{final.without_proof},p={base64.b64encode(proof).decode()}".encode()


def test_scram_reads_the_credential_off_the_io_thread(sasl_node: Node) -> None:
    c = Client(sasl_node.port)
    c.handshake("SCRAM-SHA-256")
    client_first = b"n,,n=bob,r=clientnonce123"
    first = c.authenticate(client_first)
    assert first["error_code"] == 0 and first["auth_bytes"].startswith(b"r=clientnonce123")
    final = c.authenticate(scram_client_final(client_first, first["auth_bytes"], "bob-secret"))
    assert final["error_code"] == 0 and final["auth_bytes"].startswith(b"v=")
    assert c.handled(3) == 3 and sasl_node.seen == [("SASL", "User:bob")]
    assert [user for user, _ in sasl_node.lookups] == ["bob"]
    assert sasl_node.lookups[0][1].endswith("-sasl")  # the SASL thread, never the I/O thread


def test_scram_with_a_wrong_password(sasl_node: Node) -> None:
    c = Client(sasl_node.port)
    c.handshake("SCRAM-SHA-256")
    client_first = b"n,,n=bob,r=abc"
    first = c.authenticate(client_first)
    answer = c.authenticate(scram_client_final(client_first, first["auth_bytes"], "guess"))
    assert answer["error_code"] == 58 and answer["error_message"] == (
        "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256")
    assert c.closed() and sasl_node.seen == []


def test_raw_tokens_after_a_v0_handshake(sasl_node: Node) -> None:
    """KIP-43's v0 flow: the token goes without Kafka's header and is answered by a size-prefixed token (PLAIN's is
    empty); a failed one is closed without an answer."""
    c = Client(sasl_node.port)
    assert c.handshake("PLAIN", version=0)["error_code"] == 0
    token = b"\0alice\0alice-secret"
    c.sock.sendall(struct.pack(">i", len(token)) + token)
    assert c.recv_exact(4) == b"\0\0\0\0"
    assert c.handled(4) == 4 and sasl_node.seen == [("SASL", "User:alice")]
    bad = Client(sasl_node.port)
    bad.handshake("PLAIN", version=0)
    bad.sock.sendall(struct.pack(">i", 11) + b"\0alice\0wron")
    assert bad.closed()


def test_an_unknown_mechanism_is_answered_then_closed(sasl_node: Node) -> None:
    c = Client(sasl_node.port)
    assert c.handshake("GSSAPI") == {"error_code": 33, "mechanisms": ["PLAIN", "SCRAM-SHA-256"]}
    assert c.closed()


def test_a_request_before_authentication_closes_the_connection(sasl_node: Node) -> None:
    c = Client(sasl_node.port)
    c.send(40, 1, {"hmac": b"", "expiry_time_period_ms": 1})
    assert c.closed() and sasl_node.seen == []
    # during the exchange: the request's own error response, ILLEGAL_SASL_STATE, then closed
    c = Client(sasl_node.port)
    c.handshake("PLAIN")
    assert c.call(40, 1, {"hmac": b"", "expiry_time_period_ms": 1})["error_code"] == 34
    assert c.closed() and sasl_node.seen == []


def test_an_oversize_token_is_refused(sasl_node: Node, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "kactor.edges.transport")
    c = Client(sasl_node.port)
    c.handshake("PLAIN")
    c.sock.sendall(struct.pack(">i", 524289))
    assert c.closed()
    assert any("Failing SASL authentication due to invalid receive size" in r.getMessage() for r in caplog.records)
    # a token of the limit is read (and refused as a bad PLAIN token, not for its size)
    c = Client(sasl_node.port)
    c.handshake("PLAIN")
    answer = c.authenticate(b"\0alice\0" + b"x" * (524288 - 200))
    assert answer["error_code"] == 58


def test_a_100_mb_token_is_refused_by_its_size_and_the_listener_serves_on(sasl_node: Node,
                                                                         caplog: pytest.LogCaptureFixture) -> None:
    """A hostile client announces a 100 MB token and starts sending it: the broker reads the size only (memory stays
    bounded), logs why and closes that connection; the next client authenticates as usual."""
    caplog.set_level(logging.INFO, "kactor.edges.transport")
    c = Client(sasl_node.port)
    c.handshake("PLAIN")
    c.sock.sendall(struct.pack(">i", 100 * 1024 * 1024) + b"x" * 65536)
    assert c.closed()
    assert any("Failing SASL authentication due to invalid receive size" in r.getMessage() for r in caplog.records)
    ok = Client(sasl_node.port)
    ok.handshake("PLAIN")
    assert ok.authenticate(b"\0alice\0alice-secret")["error_code"] == 0
    assert ok.handled(5) == 5 and sasl_node.seen == [("SASL", "User:alice")]


def test_authenticate_before_handshake_closes_the_connection(sasl_node: Node) -> None:
    """SaslAuthenticate before SaslHandshake is, as in 2.6's SaslServerAuthenticator, an unexpected request during the
    handshake: the connection is closed unanswered and nothing of it is served; the listener serves the next one."""
    c = Client(sasl_node.port)
    c.send(36, 2, {"auth_bytes": b"\0alice\0alice-secret"})
    assert c.closed() and sasl_node.seen == []
    ok = Client(sasl_node.port)
    ok.handshake("PLAIN")
    assert ok.authenticate(b"\0alice\0alice-secret")["error_code"] == 0
    assert ok.handled(6) == 6 and sasl_node.seen == [("SASL", "User:alice")]


# -- KIP-368: connections.max.reauth.ms -----------------------------------------------------------------------------
REAUTH_SASL = ListenerSasl(SASL.mechanisms, SASL.jaas, {"PLAIN": 1500, "SCRAM-SHA-256": 0})


def test_a_session_is_renewed_by_reauthentication_and_closed_once_expired(make_node: Any) -> None:
    """SaslAuthenticate tells the session's lifetime (connections.max.reauth.ms); a SaslHandshake on the
    authenticated connection re-authenticates it (the requests after it served as before, the lifetime renewed);
    the first request after the expiry closes the connection."""
    node = Node(make_node, REAUTH_SASL)
    c = Client(node.port)
    c.handshake("PLAIN")
    first = c.authenticate(b"\0alice\0alice-secret")
    assert first["error_code"] == 0 and first["session_lifetime_ms"] == 1500
    assert c.handled(1) == 1
    assert c.call(17, 1, {"mechanism": "PLAIN"}) == {"error_code": 0, "mechanisms": ["PLAIN", "SCRAM-SHA-256"]}
    renewed_at = time.monotonic()
    again = c.authenticate(b"\0alice\0alice-secret")
    assert again["error_code"] == 0 and again["session_lifetime_ms"] == 1500
    assert c.handled(2) == 2
    time.sleep(max(0.0, renewed_at + 1.8 - time.monotonic()))  # past the renewed session's end
    c.send(40, 1, {"hmac": b"", "expiry_time_period_ms": 3})
    assert c.closed()
    assert node.seen == [("SASL", "User:alice")] * 2


def test_a_reauthentication_as_another_user_fails_and_closes(make_node: Any) -> None:
    node = Node(make_node, REAUTH_SASL)
    c = Client(node.port)
    c.handshake("PLAIN")
    assert c.authenticate(b"\0alice\0alice-secret")["error_code"] == 0
    c.call(17, 1, {"mechanism": "PLAIN"})
    refused = c.authenticate(b"\0admin\0admin-secret")
    assert refused["error_code"] == 58
    assert refused["error_message"] == "Cannot change principals during re-authentication from User.alice: User.admin"
    assert c.closed() and node.seen == []


def test_without_connections_max_reauth_ms_sessions_never_expire(sasl_node: Node) -> None:
    c = Client(sasl_node.port)
    c.handshake("PLAIN")
    assert c.authenticate(b"\0alice\0alice-secret")["session_lifetime_ms"] == 0


# -- the client side: a process's own requests to a SASL inter-broker listener ------------------------------------
def send_through(make_node: Any, node: Node, config: SaslClientConfig, name: str) -> Any:
    client = make_node(name, client_sasl=config)
    client.rt.inject("net", NetSend("127.0.0.1", node.port, "echo", EdgeHandled(7), 1, "client"), sender="test")
    client.rt.inject("net", NetSend("127.0.0.1", node.port, "echo", EdgeEcho("big" * 100_000), 2, "client"),
                     sender="test")
    return client


@pytest.mark.parametrize(("config", "principal"), [
    (SaslClientConfig("PLAIN", "admin", "admin-secret"), "User:admin"),
    (SaslClientConfig("SCRAM-SHA-256", "bob", "bob-secret"), "User:bob"),
])
def test_outbound_requests_authenticate_first(make_node: Any, sasl_node: Node, config: SaslClientConfig,
                                              principal: str) -> None:
    """The requests queued while the connection authenticates are written after it, in order, on one connection."""
    client = send_through(make_node, sasl_node, config, "c")
    got = client.rec.wait(NetResponse, "client", count=2, timeout_s=10)
    assert [(r.body.request_id, r.body.body) for r in got] == [(1, EdgeHandled(7)), (2, EdgeEcho("big" * 100_000))]
    assert sasl_node.seen == [("SASL", principal)]
    assert client.net.connection_count() == (0, 1)


def test_an_outbound_connection_refused_authentication_fails_its_requests(make_node: Any, sasl_node: Node) -> None:
    client = send_through(make_node, sasl_node, SaslClientConfig("PLAIN", "admin", "guess"), "c")
    failed = client.rec.wait(NetSendFailed, "client", count=2, timeout_s=10)
    assert sorted(f.body.request_id for f in failed) == [1, 2]
    assert all("SASL authentication with 127.0.0.1:" in f.body.error and
               "SaslAuthenticate failed with error 58: Authentication failed: Invalid username or password"
               in f.body.error for f in failed), failed
    assert sasl_node.seen == []
    other = send_through(make_node, sasl_node, SaslClientConfig("SCRAM-SHA-512", "bob", "bob-secret"), "d")
    (failed, _) = other.rec.wait(NetSendFailed, "client", count=2, timeout_s=10)
    assert "SaslHandshake failed with error 33: the peer's mechanisms are ['PLAIN', 'SCRAM-SHA-256']" in \
        failed.body.error


def test_outbound_sasl_after_tls(make_node: Any, tmp_path: Path) -> None:
    """A SASL_SSL inter-broker listener: the TLS handshake, then the SASL exchange, then the requests."""
    from edges.net.tls_context import client_context, server_context

    pki = make_pki(tmp_path / "pki")
    server_tls = server_context({"ssl.protocol": "TLSv1.3", "ssl.enabled.protocols": ("TLSv1.2", "TLSv1.3"),
                                 "ssl.keystore.type": "PKCS12", "ssl.keystore.location": pki.server.p12,
                                 "ssl.keystore.password": STORE_PASSWORD})
    server = make_node("b", extra_listeners=(("127.0.0.1", 0, "SASL"),), sasl={"SASL": SASL},
                       tls={"SASL": server_tls})
    seen: list[str] = []
    server.net.add_edge_handler("test", lambda ctx, req: seen.append(ctx.principal) or req)
    client_tls = client_context({"ssl.protocol": "TLSv1.3", "ssl.enabled.protocols": ("TLSv1.2", "TLSv1.3"),
                                 "ssl.truststore.type": "PEM", "ssl.truststore.location": pki.ca_pem,
                                 "ssl.endpoint.identification.algorithm": "https"})
    client = make_node("c", client_tls=client_tls, client_sasl=SaslClientConfig("PLAIN", "alice", "alice-secret"))
    client.rt.inject("net", NetSend("127.0.0.1", server.net.bound[1][1], "echo", EdgeHandled(9), 1, "client"),
                     sender="test")
    (got,) = client.rec.wait(NetResponse, "client", timeout_s=10)
    assert got.body == NetResponse(1, EdgeHandled(9)) and seen == ["User:alice"]
