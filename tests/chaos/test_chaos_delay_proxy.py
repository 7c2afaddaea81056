"""kactor/chaos/delay_proxy.py: bytes pass through both ways; a held connection's client → broker bytes wait for
the hold's end (later bytes of another connection pass meanwhile), and reach the broker even when the client has
closed the connection (a request landing after its client gave up); the brokers' command lines with the CHAOS
listener advertised at the proxies."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from kactor.chaos.delay_proxy import LISTENER, ProxiedCluster, proxies_bootstrap
from kactor.chaos.delay_proxy import DelayProxy as Proxy


class Upstream:
    """A loopback server that records what each connection sent, and echoes it back."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.received: list[tuple[float, bytes]] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(65536):
                with self._lock:
                    self.received.append((time.monotonic(), data))
                conn.sendall(data)

    def got(self) -> bytes:
        with self._lock:
            return b"".join(d for _, d in self.received)

    def when(self, data: bytes, timeout_s: float = 5.0) -> float | None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                for at, d in self.received:
                    if data in d:
                        return at
            time.sleep(0.01)
        return None


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    u = Upstream()
    yield u
    u.sock.close()


@pytest.fixture
def proxy(upstream: Upstream) -> Iterator[Proxy]:
    p = Proxy(("127.0.0.1", upstream.port), "proxy-0").start()
    yield p
    p.close()


def _connect(proxy: Proxy) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
    deadline = time.monotonic() + 5
    while proxy.open_connections() < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    return s


def test_bytes_pass_both_ways(proxy: Proxy, upstream: Upstream):
    s = _connect(proxy)
    s.sendall(b"request-1")
    assert s.recv(100) == b"request-1"
    assert upstream.got() == b"request-1"
    assert proxy.held == [] and proxy.strays == 0
    s.close()


def test_a_held_connection_lands_after_another_connections_later_bytes(proxy: Proxy, upstream: Upstream):
    a = _connect(proxy)
    b = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
    while proxy.open_connections() < 2:
        time.sleep(0.01)
    assert proxy.hold(0.8, lambda n: 0) == f"proxy-0: connection 1 from 127.0.0.1:{a.getsockname()[1]} held 0.8 s"
    sent = time.monotonic()
    a.sendall(b"early")
    time.sleep(0.1)
    b.sendall(b"late")
    late, early = upstream.when(b"late"), upstream.when(b"early")
    assert late is not None and early is not None
    assert late < early and early - sent >= 0.7
    assert a.recv(100) == b"early"  # the answer comes back once the request went through
    a.close()
    b.close()


def test_held_bytes_reach_the_broker_after_the_client_left(proxy: Proxy, upstream: Upstream):
    a = _connect(proxy)
    proxy.hold(0.5, lambda n: 0)
    a.sendall(b"stray-end-txn")
    a.close()  # the client timed out and gave up on it
    time.sleep(0.2)
    assert upstream.got() == b""
    at = upstream.when(b"stray-end-txn", timeout_s=3.0)
    assert at is not None
    assert proxy.strays == 1


def test_no_connection_no_hold(proxy: Proxy):
    assert proxy.hold(1.0, lambda n: 0) is None


def test_brokers_advertise_the_proxies_on_a_listener_of_their_own(tmp_path):
    cluster = ProxiedCluster(3, zookeeper="127.0.0.1:2181", base_dir=str(tmp_path),
                             inner={0: 40100, 1: 40101, 2: 40102}, outer={0: 40200, 1: 40201, 2: 40202})
    host, port = cluster.broker_address(1)
    args = cluster.broker_args(1)
    overrides = [args[i + 1] for i, a in enumerate(args) if a == "--override"]
    assert f"listeners=PLAINTEXT://{host}:{port},{LISTENER}://127.0.0.1:40101" in overrides
    assert f"advertised.listeners=PLAINTEXT://{host}:{port},{LISTENER}://127.0.0.1:40201" in overrides
    assert f"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,{LISTENER}:PLAINTEXT" in overrides
    assert "inter.broker.listener.name=PLAINTEXT" in overrides
    # the later override wins: the CHAOS listener's come after LocalCluster's own listeners=
    assert overrides.index(f"listeners=PLAINTEXT://{host}:{port}") < \
        overrides.index(f"listeners=PLAINTEXT://{host}:{port},{LISTENER}://127.0.0.1:40101")
    # an operator's slip starts from the plain command line (its own single listener replaces it)
    assert not any(LISTENER in a for a in cluster.plain_broker_args(1))


def test_the_producers_bootstrap_on_every_proxy(upstream: Upstream):
    proxies = {b: Proxy(("127.0.0.1", upstream.port), f"proxy-{b}") for b in (1, 0)}
    try:
        assert proxies_bootstrap(proxies) == f"127.0.0.1:{proxies[0].port},127.0.0.1:{proxies[1].port}"
    finally:
        for p in proxies.values():
            p.close()


def test_a_stray_end_txn_is_named_with_its_producer_and_result(proxy: Proxy, upstream: Upstream):
    """A held EndTxn delivered after its client left is named (client id, producer id, epoch, commit), so the
    checker can tell a late EndTxn ending a later transaction (KIP-890 part 2) from a defect; a request written
    while its client is there is not, and bytes that are not Kafka frames name nothing."""
    from protocol.framing import RequestHeader, encode_request

    def end_txn(correlation_id: int) -> bytes:
        return encode_request(RequestHeader(26, 1, correlation_id, "kactor-chaos-check-p1"), {
            "transactional_id": "kactor-chaos-check-2-1", "producer_id": 1000, "producer_epoch": 0,
            "committed": True})

    a = _connect(proxy)
    a.sendall(end_txn(1))
    assert upstream.when(end_txn(1)) is not None
    opened = proxy.clock()
    proxy.hold(0.5, lambda n: 0)
    a.sendall(end_txn(2))
    a.close()
    gone = proxy.clock()
    assert upstream.when(end_txn(2), timeout_s=3.0) is not None
    deadline = time.monotonic() + 3
    while not proxy.stray_requests and time.monotonic() < deadline:
        time.sleep(0.01)
    (stray,) = proxy.stray_requests
    assert (stray.client_id, stray.api, stray.transactional_id, stray.producer_id, stray.producer_epoch,
            stray.committed) == ("kactor-chaos-check-p1", "EndTxn", "kactor-chaos-check-2-1", 1000, 0, True)
    assert stray.opened_at <= opened and opened <= stray.client_gone_at <= gone + 0.1 < stray.delivered_at
    assert stray.delivered_at - stray.client_gone_at >= 0.3
    b = _connect(proxy)
    proxy.hold(0.2, lambda n: n - 1)
    b.sendall(b"\xff\xff\xff\xffnot a frame")
    b.close()
    assert upstream.when(b"not a frame", timeout_s=3.0) is not None
    assert len(proxy.stray_requests) == 1 and proxy.strays == 2
