"""connection.failed.authentication.delay.ms on a SASL listener (KIP-306, Kafka 2.6.3's default 100 ms): a connection
whose authentication fails — a wrong password, an unknown mechanism, a request out of turn — is held that long, and
its failure answer with it, before the answer is written and the connection closed (Selector's
DelayedAuthenticationFailureClose); the other connections are served meanwhile. So a password guesser waits the
delay for every guess. An oversize token is not an authentication failure in 2.6.3 (InvalidReceiveException): it is
closed at once. A delay of 0 answers and closes at once."""

from __future__ import annotations

import struct
import time
from typing import Any

import pytest

from core.security.sasl import FAILED_AUTHENTICATION_DELAY_MS, ListenerSasl, parse_jaas_config
from edges.net.selector import DelayedCloses
from tests.support.raw_client import RawClient

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              'user_alice="alice-secret";')
JAAS = {"PLAIN": parse_jaas_config(PLAIN_JAAS)[0]}


# -- the held closes, on a fake clock -------------------------------------------------------------------------------
def test_a_held_close_falls_due_once_its_delay_is_over() -> None:
    """DelayedAuthenticationFailureClose.tryClose: due when its end time (failure + delay) is not after now; the
    entries in the order they failed; one closed otherwise meanwhile is dropped (Selector.close)."""
    now = [1_000.0]
    held: DelayedCloses[int, str] = DelayedCloses(100, lambda: now[0])
    held.add(1, "first")
    now[0] += 40
    held.add(2, "second")
    held.add(3, "third")
    assert 1 in held and len(held) == 3
    now[0] += 59
    assert held.pop_due() == []  # 99 ms after the first failure
    now[0] += 1
    assert held.pop_due() == ["first"] and 1 not in held
    held.discard(2)
    now[0] += 40
    assert held.pop_due() == ["third"]
    assert len(held) == 0 and held.pop_due() == []


def test_the_default_is_kafkas() -> None:
    assert FAILED_AUTHENTICATION_DELAY_MS == 100
    assert ListenerSasl(("PLAIN",), JAAS).failed_authentication_delay_ms == 100


# -- a Transport's SASL listener -------------------------------------------------------------------------------------
class Client(RawClient):
    def __init__(self, port: int) -> None:
        super().__init__(port, "delay-test")

    def handshake(self, mechanism: str = "PLAIN", version: int = 1) -> dict[str, Any]:
        return self.call(17, version, {"mechanism": mechanism})


def sasl_port(make_node: Any, delay_ms: int | None) -> int:
    sasl = ListenerSasl(("PLAIN",), JAAS) if delay_ms is None else ListenerSasl(
        ("PLAIN",), JAAS, failed_authentication_delay_ms=delay_ms)
    node = make_node("b", extra_listeners=(("127.0.0.1", 0, "SASL"),), sasl={"SASL": sasl})
    node.net.add_edge_handler("test", lambda ctx, req: req)
    return int(node.net.bound[1][1])


def test_a_wrong_password_is_answered_and_closed_after_the_delay(make_node: Any) -> None:
    """The SaslAuthenticate answer (SASL_AUTHENTICATION_FAILED, Kafka's message) arrives a second after the wrong
    password, then the connection closes; meanwhile another client logs in and is served at once."""
    port = sasl_port(make_node, 1000)
    bad = Client(port)
    bad.handshake()
    failed_at = time.monotonic()
    bad.send(36, 2, {"auth_bytes": b"\0alice\0guess"})
    good = Client(port)
    good.handshake()
    assert good.call(36, 2, {"auth_bytes": b"\0alice\0alice-secret"})["error_code"] == 0
    assert good.call(40, 1, {"hmac": b"", "expiry_time_period_ms": 5})["expiry_timestamp_ms"] == 5
    assert time.monotonic() - failed_at < 0.9  # not held behind the failed one
    answer = bad.read(36, 2)
    held = time.monotonic() - failed_at
    assert answer["error_code"] == 58
    assert answer["error_message"] == "Authentication failed: Invalid username or password"
    assert held >= 1.0, held
    assert bad.closed()


def test_without_a_delay_the_failure_is_answered_at_once(make_node: Any) -> None:
    port = sasl_port(make_node, 0)
    bad = Client(port)
    bad.handshake()
    failed_at = time.monotonic()
    assert bad.call(36, 2, {"auth_bytes": b"\0alice\0guess"})["error_code"] == 58
    assert bad.closed()
    assert time.monotonic() - failed_at < 0.5


@pytest.mark.parametrize("how", ["unknown mechanism", "request before the handshake", "request out of turn",
                                 "v0 raw token"])
def test_every_authentication_failure_is_held(make_node: Any, how: str) -> None:
    """2.6.3 delays the close of every AuthenticationException of the SASL exchange: UnsupportedSaslMechanism
    (answered, after the delay), IllegalSaslState (a request before or during the exchange: answered with the
    request's error when during it, closed without an answer when before), a refused v0 token (no answer)."""
    port = sasl_port(make_node, 600)
    c = Client(port)
    failed_at = time.monotonic()
    if how == "unknown mechanism":
        assert c.handshake("GSSAPI") == {"error_code": 33, "mechanisms": ["PLAIN"]}
    elif how == "request before the handshake":
        c.send(40, 1, {"hmac": b"", "expiry_time_period_ms": 1})
    elif how == "request out of turn":
        c.handshake()
        failed_at = time.monotonic()
        assert c.call(40, 1, {"hmac": b"", "expiry_time_period_ms": 1})["error_code"] == 34
    else:
        c.handshake(version=0)
        failed_at = time.monotonic()
        c.sock.sendall(struct.pack(">i", 11) + b"\0alice\0wron")
    assert c.closed()
    assert time.monotonic() - failed_at >= 0.6


def test_an_oversize_token_is_closed_at_once(make_node: Any) -> None:
    """Not an authentication failure in 2.6.3 (NetworkReceive's InvalidReceiveException): no delay."""
    port = sasl_port(make_node, 1000)
    c = Client(port)
    c.handshake()
    sent = time.monotonic()
    c.sock.sendall(struct.pack(">i", 524289))
    assert c.closed()
    assert time.monotonic() - sent < 0.8


def test_n_wrong_passwords_take_n_delays(make_node: Any) -> None:
    """One client guessing passwords one connection at a time waits the default 100 ms for each guess: 10 guesses
    take at least a second (the newcomer probe saw 1,734 guesses a second before)."""
    port = sasl_port(make_node, None)
    started = time.monotonic()
    for i in range(10):
        c = Client(port)
        c.handshake()
        assert c.call(36, 2, {"auth_bytes": f"\0alice\0guess-{i}".encode()})["error_code"] == 58
        assert c.closed()
        c.sock.close()
    assert time.monotonic() - started >= 10 * 0.1
