"""The connection-delay fault of `kactor chaos` (issue #40): a client's request delayed past later requests of the
same client, as Jepsen delayed Kafka's transactional requests.

Each broker gets a second listener, ``CHAOS`` (PLAINTEXT, loopback), whose advertised address is a `DelayProxy` of
the runner's in front of it (`ProxiedCluster`). Kafka answers Metadata and FindCoordinator with the endpoints of the
listener the request came in on (MetadataCache.getAliveEndpoints), so a client bootstrapped on the proxies reaches
every broker through them, and every other connection (the brokers' own, the other clients') goes to ``PLAINTEXT``
as before. The proxies pass bytes through untouched, until `DelayProxy.hold` holds one connection's client → broker
bytes for longer than the client's request timeout: the client times out, closes the connection and retries on a
new one (librdkafka: socket.max.fails=1), and the held bytes reach the broker when the hold ends, on a connection
the broker still sees open (kept ``LINGER_S`` longer, its answers read and dropped) — a request landing after
later requests of the same client, as a TCP segment delayed in the network lands after its FIN's retries.

Loopback only; memory bounded: at most ``MAX_CONNECTIONS`` connections and ``BUFFER_CAP`` bytes held a direction
(reading stops until the buffer drains). The proxy moves bytes unchanged; it cuts the client → broker stream into
frames only to name each request that reached the broker after its client had left (`StrayRequest`, with an
EndTxn's producer id, epoch and result), so the transaction checker can tell KIP-890 part 2's case (a late EndTxn
ending a later transaction) from a defect.
"""

from __future__ import annotations

import logging
import random
import selectors
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from kactor.cluster import LocalCluster
from protocol.api_versions import API_VERSIONS, ApiKeys
from protocol.errors import ProtocolError
from protocol.framing import FrameDecoder, decode_request

log = logging.getLogger("kactor.chaos.delay_proxy")

LISTENER = "CHAOS"
HOST = "127.0.0.1"
BUFFER_CAP = 1 << 20  # bytes held a direction and connection before reading that side stops
MAX_CONNECTIONS = 64
LINGER_S = 5.0  # a client gone: its broker connection is kept so long after the held bytes were written
CONNECT_TIMEOUT_S = 1.0
POLL_S = 0.05

# the connection-delay fault (this module's DelayProxy): drawn each step from a stream of its own, so the schedule's
# steps are the seed's as before; each holds one of the checked producers' connections past their request timeout
DELAY_PROBABILITY = 0.5
DELAY_HOLD_S = (6.0, 10.0)


def delay_draws(seed: int, steps: int, brokers: int) -> list[tuple[int, float, float] | None]:
    """Per step: the connection delay it starts (broker, hold seconds, the pick among its open connections in
    [0, 1)) or None; the same three draws a step whatever it holds (pure, from ``chaos-delays-<seed>``)."""
    rng = random.Random(f"chaos-delays-{seed}")
    out: list[tuple[int, float, float] | None] = []
    for _ in range(steps):
        on, broker, hold, pick = rng.random(), rng.randrange(brokers), rng.uniform(*DELAY_HOLD_S), rng.random()
        out.append((broker, round(hold, 2), pick) if on < DELAY_PROBABILITY else None)
    return out


@attrs.frozen(slots=True)
class StrayRequest:
    """A request that reached the broker after its client had closed the connection: its ``client_id`` and API,
    when the connection was opened, when its client left and when the request was written to the broker (the
    proxy's clock); for an EndTxn, its transactional id, producer id, epoch and result."""

    client_id: str | None
    api: str
    opened_at: float
    client_gone_at: float
    delivered_at: float
    transactional_id: str | None = None
    producer_id: int = -1
    producer_epoch: int = -1
    committed: bool | None = None


@attrs.define
class _Pair:
    """One client connection and the proxy's connection to the broker for it."""

    number: int
    client: socket.socket | None
    upstream: socket.socket | None
    peer: str
    to_broker: bytearray = attrs.field(factory=bytearray)
    to_client: bytearray = attrs.field(factory=bytearray)
    held_until: float = 0.0
    client_gone_at: float | None = None  # when the client closed (its held bytes still go to the broker)
    flushed_at: float | None = None  # when, the client gone, the last held byte was written
    stray: bool = False  # bytes of it reached the broker after its client had left
    opened_at: float = 0.0
    frames: FrameDecoder = attrs.field(factory=FrameDecoder)  # the client → broker bytes written, cut into requests


class DelayProxy:
    """A loopback TCP proxy to ``upstream`` (host, port) on a port of its own (``port``); `start`, `hold`,
    `close`. ``clock``: time.monotonic unless a test gives another."""

    def __init__(self, upstream: tuple[str, int], name: str = "proxy",
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.upstream = upstream
        self.name = name
        self.clock = clock
        self._server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind((HOST, 0))
        self._server.listen(64)
        self._server.setblocking(False)
        self.port: int = self._server.getsockname()[1]
        self._pairs: list[_Pair] = []
        self._numbers = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"chaos-{name}", daemon=True)
        self.held: list[str] = []  # what `hold` held, for the events log
        self.strays = 0  # connections whose bytes reached the broker after their client had left
        self.stray_requests: list[StrayRequest] = []  # the requests of those bytes, in the order written

    def start(self) -> DelayProxy:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
        with self._lock:
            for p in self._pairs:
                _close(p.client)
                _close(p.upstream)
            self._pairs.clear()
        self._server.close()

    def open_connections(self) -> int:
        with self._lock:
            return sum(1 for p in self._pairs if p.client is not None)

    def hold(self, seconds: float, pick: Callable[[int], int]) -> str | None:
        """Hold the client → broker bytes of one open client connection for ``seconds`` from now: the
        ``pick(n)``-th of the n open ones (in the order they were accepted). What was held, or None (no connection
        open)."""
        with self._lock:
            live = [p for p in self._pairs if p.client is not None and p.upstream is not None]
            if not live:
                return None
            p = live[pick(len(live)) % len(live)]
            p.held_until = self.clock() + seconds
            what = f"{self.name}: connection {p.number} from {p.peer} held {seconds:.1f} s"
            self.held.append(what)
            return what

    # -- the loop ---------------------------------------------------------------------------------------------------
    def _run(self) -> None:
        sel = selectors.DefaultSelector()
        try:
            while not self._stop.is_set():
                self._once(sel)
        except Exception:  # noqa: BLE001 - the proxy ends; its clients see their connections fail and retry
            log.exception("%s stopped", self.name)
        finally:
            sel.close()

    def _once(self, sel: selectors.BaseSelector) -> None:
        now = self.clock()
        for key in list(sel.get_map().values()):
            sel.unregister(key.fileobj)
        sel.register(self._server, selectors.EVENT_READ, None)
        with self._lock:
            pairs = list(self._pairs)
        for p in pairs:
            self._expire(p, now)
            for sock, events in self._interest(p, now).items():
                sel.register(sock, events, p)
        for key, events in sel.select(POLL_S):
            if key.fileobj is self._server:
                self._accept()
                continue
            p: _Pair = key.data
            if key.fileobj is not p.client and key.fileobj is not p.upstream:
                continue  # closed by an earlier event of this round
            try:
                self._move(p, key.fileobj, events)  # type: ignore[arg-type]
            except OSError:
                self._drop_side(p, key.fileobj)  # type: ignore[arg-type]
        with self._lock:
            self._pairs = [p for p in self._pairs if p.client is not None or p.upstream is not None]

    def _interest(self, p: _Pair, now: float) -> dict[socket.socket, int]:
        out: dict[socket.socket, int] = {}
        if p.client is not None:
            ev = (selectors.EVENT_READ if len(p.to_broker) < BUFFER_CAP else 0) | \
                 (selectors.EVENT_WRITE if p.to_client else 0)
            if ev:
                out[p.client] = ev
        if p.upstream is not None:
            ev = (selectors.EVENT_READ if len(p.to_client) < BUFFER_CAP or p.client is None else 0) | \
                 (selectors.EVENT_WRITE if p.to_broker and now >= p.held_until else 0)
            if ev:
                out[p.upstream] = ev
        return out

    def _expire(self, p: _Pair, now: float) -> None:
        """A pair whose client left: its broker side closed LINGER_S after its held bytes went out."""
        if p.client is None and p.upstream is not None and not p.to_broker:
            if p.flushed_at is None:
                p.flushed_at = now
            elif now - p.flushed_at >= LINGER_S:
                _close(p.upstream)
                p.upstream = None

    def _accept(self) -> None:
        try:
            client, addr = self._server.accept()
        except OSError:
            return
        with self._lock:
            full = len(self._pairs) >= MAX_CONNECTIONS
        if full:
            client.close()
            return
        try:
            upstream = socket.create_connection(self.upstream, timeout=CONNECT_TIMEOUT_S)
        except OSError:
            client.close()  # the broker is down: the client sees its connection fail, as without a proxy
            return
        for s in (client, upstream):
            s.setblocking(False)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self._lock:
            self._numbers += 1
            self._pairs.append(_Pair(self._numbers, client, upstream, f"{addr[0]}:{addr[1]}",
                                     opened_at=self.clock()))

    def _move(self, p: _Pair, sock: socket.socket, events: int) -> None:
        if events & selectors.EVENT_READ:
            data = sock.recv(65536)
            if not data:
                self._drop_side(p, sock)
                return
            if sock is p.client:
                p.to_broker += data
            elif p.client is not None:
                p.to_client += data
            # else: an answer to a client that left: dropped
        if events & selectors.EVENT_WRITE:
            if sock is p.client and p.to_client:
                del p.to_client[:sock.send(p.to_client)]
            elif sock is p.upstream and p.to_broker:
                n = sock.send(p.to_broker)
                written = bytes(p.to_broker[:n])
                del p.to_broker[:n]
                if p.client is None and not p.stray:
                    p.stray = True
                    self.strays += 1
                self._requests_written(p, written)

    def _requests_written(self, p: _Pair, data: bytes) -> None:
        """The requests ``data`` completes; those completed after the client left are stray."""
        try:
            frames = p.frames.feed(data)
        except ProtocolError:  # not Kafka's framing (a test's bytes, a hostile client): nothing to name
            p.frames = FrameDecoder()
            return
        if p.client is not None or p.client_gone_at is None:
            return
        now = self.clock()
        for frame in frames:
            try:
                request = decode_request(frame)
            except ProtocolError:
                continue
            header, body = request.header, request.body
            api = API_VERSIONS[header.request_api_key].name
            stray = StrayRequest(header.client_id, api, p.opened_at, p.client_gone_at, now)
            if header.request_api_key == ApiKeys.END_TXN:
                stray = attrs.evolve(stray, transactional_id=body.get("transactional_id"),
                                     producer_id=body.get("producer_id", -1),
                                     producer_epoch=body.get("producer_epoch", -1), committed=body.get("committed"))
            self.stray_requests.append(stray)

    def _drop_side(self, p: _Pair, sock: socket.socket) -> None:
        """The client left: its held bytes still go to the broker. The broker closed: the client's side closes."""
        if sock is p.client:
            _close(p.client)
            p.client = None
            p.client_gone_at = self.clock()
            p.to_client.clear()
        else:
            _close(p.upstream)
            p.upstream = None
            p.to_broker.clear()
            if p.client is not None and not p.to_client:
                _close(p.client)
                p.client = None


def _close(sock: socket.socket | None) -> None:
    if sock is not None:
        try:
            sock.close()
        except OSError:
            pass


class ProxiedCluster(LocalCluster):
    """A LocalCluster whose brokers also listen on ``CHAOS`` (``inner``: broker id → port) and advertise it at the
    proxy in front (``outer``: broker id → the proxy's port). Inter-broker traffic stays on the first listener."""

    def __init__(self, *args: Any, inner: Mapping[int, int], outer: Mapping[int, int], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.inner = dict(inner)
        self.outer = dict(outer)

    def plain_broker_args(self, broker_id: int) -> list[str]:
        """The broker's command line without the CHAOS listener (an operator's slip starts its own listener only)."""
        return super().broker_args(broker_id)

    def broker_args(self, broker_id: int) -> list[str]:
        host, port = self.broker_address(broker_id)
        first = f"{self.listener_name}://{host}:{port}"
        return [*super().broker_args(broker_id),
                "--override", f"listeners={first},{LISTENER}://{HOST}:{self.inner[broker_id]}",
                "--override", f"advertised.listeners={first},{LISTENER}://{HOST}:{self.outer[broker_id]}",
                "--override", f"listener.security.protocol.map={self.listener_name}:PLAINTEXT,{LISTENER}:PLAINTEXT",
                "--override", f"inter.broker.listener.name={self.listener_name}"]


def proxied_cluster(brokers: int, free_port: Callable[[], int], **kwargs: Any) -> tuple[ProxiedCluster,
                                                                                     dict[int, DelayProxy]]:
    """A ProxiedCluster of ``brokers`` brokers and its started proxies (the caller closes them)."""
    inner = {b: free_port() for b in range(brokers)}
    proxies = {b: DelayProxy((HOST, inner[b]), f"proxy-{b}").start() for b in range(brokers)}
    try:
        cluster = ProxiedCluster(brokers, inner=inner, outer={b: p.port for b, p in proxies.items()}, **kwargs)
    except Exception:
        for p in proxies.values():
            p.close()
        raise
    return cluster, proxies


def proxies_bootstrap(proxies: Mapping[int, DelayProxy]) -> str:
    return ",".join(f"{HOST}:{p.port}" for _, p in sorted(proxies.items()))


__all__ = ["BUFFER_CAP", "LINGER_S", "LISTENER", "DelayProxy", "ProxiedCluster", "StrayRequest", "proxied_cluster",
           "proxies_bootstrap"]
