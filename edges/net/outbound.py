"""The process's own requests to its peers (Kafka's NetworkClient): actors post ``NetSend`` with an internal
request; its ApiSpec is found by the request's type, the body encoded at the spec's ``send_version`` with our own
correlation id, and the answer decoded with ``response_from_wire`` into ``NetResponse``. Connection failures,
request timeouts (the connection is closed, as NetworkClient does) and NetClose answer every waiting request with
``NetSendFailed``. One connection per (host, port, sending actor); a host name is looked up off the I/O thread.
With an SSL inter-broker listener every connection is TLS (`edges.net.tls.TlsConn`): the handshake follows the TCP
connect on readiness, within the connect timeout, and a failed one fails the requests waiting on it. With a SASL
inter-broker listener the connection then authenticates (edges/net/sasl.py's ClientExchange: SaslHandshake and
SaslAuthenticate, within the connect timeout too) before any request queued on it is written; a refusal fails them.
``send`` and ``close_destination`` are thread-safe; the rest runs on the I/O thread."""

from __future__ import annotations

import errno
import heapq
import itertools
import logging
import os
import selectors
import socket
import ssl
import threading
import time
from typing import Any

from core.api.registry import ApiSpec
from core.security.sasl_client import SaslClient, SaslClientConfig
from core.security.scram import SaslException
from edges.net.framing import HEADER, INT32, BadRequestError, cut_frame, decode_outbound, encode_outbound, outbound_spec
from edges.net.sasl import ClientExchange
from edges.net.selector import AddrInfo, Conn, Loop
from edges.net.tls import TlsConn
from edges.net_faults import PARTITIONED, FaultFile, endpoint
from messages.net import NetResponse, NetSendFailed
from protocol.api_versions import ApiKeys

log = logging.getLogger("kactor.edges.transport")


class Pending:
    """An outbound request waiting for its answer; ``reply_to`` None = fire-and-forget (the answer is dropped)."""

    __slots__ = ("reply_to", "request_id", "cause", "deadline", "spec")

    def __init__(self, reply_to: str | None, request_id: int, cause: int | None, deadline: float,
                 spec: ApiSpec) -> None:
        self.reply_to = reply_to
        self.request_id = request_id
        self.cause = cause
        self.deadline = deadline
        self.spec = spec


# APIs a broker sends on a connection of their own, beside its sending actor's other requests: Kafka 3.6's
# AddPartitionsToTxnManager has its own NetworkClient, so a leader's verify-only AddPartitionsToTxn never waits behind
# the same shard's follower fetch parked at that broker for replica.fetch.wait.max.ms (a peer answers a connection's
# requests one at a time: each transaction's first batch to a remote partition waited ~500 ms, 0.18x unverified)
_OWN_LANES = {int(ApiKeys.ADD_PARTITIONS_TO_TXN): "/add-partitions-to-txn"}


def _lane(dest: tuple[str, int], pending: Pending) -> tuple[str, int, str]:
    """The outbound connection a request goes on: one per destination and sending actor (and per `_OWN_LANES` API)."""
    return dest[0], dest[1], (pending.reply_to or "") + _OWN_LANES.get(pending.spec.api_key, "")


class Outbound:
    """The process's outbound connections and the requests waiting on them."""

    def __init__(self, loop: Loop, name: str, conn_ids: itertools.count[int], faults: FaultFile | None, *,
                 max_response_bytes: int, connect_timeout_s: float, request_timeout_s: float,
                 tls: ssl.SSLContext | None = None, sasl: SaslClientConfig | None = None) -> None:
        self.loop = loop
        # a SASL inter-broker listener: every connection authenticates with this mechanism and user first
        self.sasl = sasl
        # the client context of an SSL inter-broker listener: every connection of this process is TLS then (they
        # all go to peers' inter-broker listeners); None: PLAINTEXT
        self.tls = tls
        self.name = name
        self._conn_ids = conn_ids
        self.max_response_bytes = max_response_bytes
        self.connect_timeout_s = connect_timeout_s
        self.request_timeout_s = request_timeout_s
        # `kactor chaos` cuts links here (edges/net_faults.py); None in every ordinary process
        self.faults = faults
        self.blocked: frozenset[str] = frozenset()
        # sends to a slowed peer (a fault file's delay: kactor.testing's slow_link), held on the I/O thread until
        # due — (due, order, cmd), released by sweep; a sleep would stall every other connection of the process
        self.held: list[tuple[float, int, tuple[Any, ...]]] = []
        self._held_order = itertools.count()
        self._corr = itertools.count(1)
        # one connection per (host, port, sending actor), as each of Kafka's fetcher threads and controller channels
        # has its own NetworkClient: a peer answers a connection's requests in order, so a follower shard's fetch
        # parked for replica.fetch.wait.max.ms must not hold back another shard's answer behind it
        self.conns: dict[tuple[str, int, str], Conn] = {}
        # Host-name lookups under way: the sends waiting for each, and when it started (to time it out).
        self._resolving: dict[tuple[str, int], list[tuple[Any, ...]]] = {}
        self._resolve_started: dict[tuple[str, int], float] = {}
        self._last_connect_error = ""

    # -- from any thread --------------------------------------------------------------------------------------------
    def send(self, host: str, port: int, body: Any, request_id: int, reply_to: str | None, cause: int | None,
             timeout_ms: float | None) -> None:
        """Encode ``body`` (in the caller's thread: the frame is a snapshot of the value at send time, and an
        unencodable body fails at once) and hand it to the I/O thread."""
        dest = (host, int(port))
        timeout_s = self.request_timeout_s if timeout_ms is None else timeout_ms / 1000.0
        corr = next(self._corr) % INT32
        try:
            spec = outbound_spec(body)
            frame = encode_outbound(spec, body, corr, self.name)
        except Exception as e:  # noqa: BLE001 - a converter's or the codec's error: the caller is told
            pending = Pending(reply_to, request_id, cause, 0.0, None) if reply_to is not None else None  # type: ignore
            self.fail_or_log(pending, f"cannot encode {type(body).__name__} for {host}:{port}: "
                                      f"{e.__class__.__name__}: {e}")
            return
        # a one-way request never times out: nobody waits for it, so its connection has no reason to be dropped
        deadline = time.monotonic() + timeout_s if reply_to is not None else float("inf")
        pending = Pending(reply_to, request_id, cause, deadline, spec)
        if not self.loop.submit(("send", dest, corr, frame, pending)):
            self.fail_or_log(pending, "transport closed")

    def fail_or_log(self, pending: Pending | None, error: str) -> None:
        if pending is None or pending.reply_to is None:
            log.warning("%s: dropped a one-way message: %s", self.name, error)
        else:
            self.loop.inject(pending.reply_to, NetSendFailed(pending.request_id, error), pending.cause)

    # -- commands on the I/O thread --------------------------------------------------------------------------------
    def on_send(self, cmd: tuple[Any, ...], *, now: float | None = None) -> Conn | None:
        """The "send" command: the connection to write to now, if there is one yet. A send to a slowed peer is held
        until its delay has passed (``now`` given: a held send released, not held again)."""
        _, dest, corr, frame, pending = cmd
        if now is None and self.faults is not None and self.faults.delays:
            delay = self.faults.delays.get(endpoint(*dest), 0.0)
            if delay > 0:
                heapq.heappush(self.held, (time.monotonic() + delay, next(self._held_order), cmd))
                return None
        if self.blocked and endpoint(*dest) in self.blocked:
            self.fail_or_log(pending, f"cannot connect to {dest[0]}:{dest[1]}: {PARTITIONED}")
            return None
        conn = self.conns.get(_lane(dest, pending))
        if conn is None:
            waiting = self._resolving.get(dest)
            if waiting is not None:  # a name lookup for dest is under way: wait for it
                waiting.append(cmd)
                return None
            addrs = self._literal_address(dest)
            if addrs is None:
                self._start_resolve(dest, cmd)
                return None
            conn = self._connect(dest, addrs, _lane(dest, pending))
            if conn is None:
                self.fail_or_log(pending, self._last_connect_error)
                return None
        self._queue_send(conn, corr, frame, pending)
        return conn

    def on_close(self, dest: tuple[str, int]) -> None:
        """The "close" command (NetClose): the destination's connections closed, their requests failed."""
        reason = f"connection to {dest[0]}:{dest[1]} closed on request (NetClose)"
        for conn in [c for c in self.conns.values() if c.dest == dest]:
            self.close(conn, reason)
        self._resolve_started.pop(dest, None)
        for waiting_cmd in self._resolving.pop(dest, ()):
            self.fail_or_log(waiting_cmd[4], reason)

    def on_resolved(self, cmd: tuple[Any, ...]) -> list[Conn]:
        """The "resolved" command: a name lookup's result; the connections to write to now."""
        _, dest, result, started = cmd
        waiting = self._resolving.get(dest)
        if waiting is None or self._resolve_started.get(dest) != started:
            return []  # given up on (connect timeout, NetClose) before the lookup finished
        del self._resolving[dest]
        del self._resolve_started[dest]
        if isinstance(result, str):
            for waiting_cmd in waiting:
                self.fail_or_log(waiting_cmd[4], result)
            return []
        touched = []
        for _, _, corr, frame, pending in waiting:
            key = _lane(dest, pending)
            conn = self.conns.get(key) or self._connect(dest, list(result), key)
            if conn is None:
                self.fail_or_log(pending, self._last_connect_error)
                continue
            self._queue_send(conn, corr, frame, pending)
            touched.append(conn)
        return touched

    @staticmethod
    def _queue_send(conn: Conn, corr: int, frame: bytes, pending: Pending) -> None:
        # every request kactor sends is answered by its peer, also a one-way one (its answer is read and dropped)
        conn.pending[corr] = pending
        if conn.sasl is not None:
            conn.sasl.held.append(frame)  # written once the connection is authenticated
        else:
            conn.out.append(frame)

    # -- events on the I/O thread ----------------------------------------------------------------------------------
    def on_event(self, conn: Conn, mask: int) -> None:
        if conn.handshaking:
            self.loop.guarded(conn, self._handshake, self.close)  # type: ignore[arg-type]
            return
        if mask & selectors.EVENT_WRITE:
            if conn.connecting:
                self.loop.guarded(conn, self._finish_connect, self.close)
            elif not conn.closed:
                self.loop.guarded(conn, self.flush, self.close)
        if mask & selectors.EVENT_READ and not conn.closed:
            self.loop.guarded(conn, self._read, self.close)

    def flush(self, conn: Conn) -> None:
        conn.write()
        self.loop.set_events(conn, selectors.EVENT_READ | selectors.EVENT_WRITE if conn.out else selectors.EVENT_READ)

    def _read(self, conn: Conn) -> None:
        data = conn.receive()
        if data is None:
            return
        if not data:
            self.close(conn, f"connection to {conn.peer} closed by the peer")
            return
        while (cut := cut_frame(conn.rbuf, conn.roff, self.max_response_bytes)) is not None:
            payload, conn.roff = cut
            if conn.sasl is not None:
                self._sasl_response(conn, payload)
            else:
                self._on_response(conn, payload)
            if conn.closed:
                return
        if conn.out:
            self.flush(conn)

    def _on_response(self, conn: Conn, payload: bytes) -> None:
        if len(payload) < 4:
            raise BadRequestError(f"a {len(payload)}-byte response frame")
        (corr,) = HEADER.unpack_from(payload, 0)
        p = conn.pending.pop(corr, None)
        if p is None:
            log.debug("%s: answer %d from %s has no waiting request (timed out?)", self.name, corr, conn.peer)
            return
        if p.reply_to is None:
            return
        try:
            _, body = decode_outbound(p.spec, payload)
        except Exception as e:  # noqa: BLE001 - a peer's bad answer fails that request and its connection
            self.loop.inject(p.reply_to, NetSendFailed(p.request_id, f"undecodable {p.spec.name} answer from "
                                                                     f"{conn.peer}: {e.__class__.__name__}: {e}"),
                             p.cause)
            raise BadRequestError(f"undecodable {p.spec.name} answer: {e}") from None
        self.loop.inject(p.reply_to, NetResponse(p.request_id, body), p.cause)

    # -- SASL: SaslClientAuthenticator ------------------------------------------------------------------------------
    def _ready(self, conn: Conn) -> None:
        """TCP (and TLS) is up: authenticate first with a SASL inter-broker listener, else write the requests."""
        if self.sasl is None:
            self.flush(conn)
            return
        exchange = ClientExchange(SaslClient(self.sasl))
        exchange.held.extend(bytes(f) for f in conn.out)  # nothing of them is written yet
        conn.out.clear()
        conn.sasl = exchange
        conn.connect_deadline = time.monotonic() + self.connect_timeout_s  # the exchange's own deadline
        conn.out.append(exchange.handshake(next(self._corr) % INT32, self.name))
        self.flush(conn)

    def _sasl_response(self, conn: Conn, payload: bytes) -> None:
        exchange = conn.sasl
        try:
            frame = exchange.on_response(payload, next(self._corr) % INT32, self.name)
        except (SaslException, ValueError) as e:
            log.warning("%s: SASL authentication with %s failed: %s", self.name, conn.peer, e)
            self.close(conn, f"SASL authentication with {conn.peer} failed: {e}")
            return
        if frame is not None:
            conn.out.append(frame)
            return
        log.debug("%s: authenticated to %s with %s", self.name, conn.peer, exchange.client.config.mechanism)
        conn.sasl = None
        conn.out.extend(exchange.held)

    # -- connecting ---------------------------------------------------------------------------------------------------
    @staticmethod
    def _literal_address(dest: tuple[str, int]) -> list[AddrInfo] | None:
        """The socket address of an IP-literal host (no lookup needed), else None."""
        host, port = dest
        for family in (socket.AF_INET, socket.AF_INET6):
            try:
                socket.inet_pton(family, host)
            except (OSError, ValueError):
                continue
            return [(family, socket.SOCK_STREAM, 0, (host, port) if family == socket.AF_INET else (host, port, 0, 0))]
        return None

    def _start_resolve(self, dest: tuple[str, int], cmd: tuple[Any, ...]) -> None:
        """Look a host name up in a helper thread: getaddrinfo can block for seconds on a slow resolver, and the I/O
        thread serves every other connection meanwhile. Sends to ``dest`` wait in ``_resolving``."""
        started = time.monotonic()
        self._resolving[dest] = [cmd]
        self._resolve_started[dest] = started

        def resolve() -> None:
            host, port = dest
            result: list[AddrInfo] | str
            try:
                infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
                result = [(family, stype, proto, addr) for family, stype, proto, _, addr in infos]
            except (OSError, UnicodeError) as e:
                result = f"cannot resolve {host}:{port}: {e}"
            # False if the transport shut down meanwhile: the shutdown has already failed the waiting sends.
            self.loop.submit(("resolved", dest, result, started))

        threading.Thread(target=resolve, name=f"{self.name}-resolve-{dest[0]}", daemon=True).start()

    def _open_socket(self, dest: tuple[str, int], addrs: list[AddrInfo]) -> tuple[socket.socket, bool] | None:
        """Start a non-blocking connect to the first of ``addrs`` that accepts one (tried addresses are removed).

        Returns (socket, still connecting), or None with the reason in ``_last_connect_error``.
        """
        while addrs:
            family, stype, proto, addr = addrs.pop(0)
            sock = socket.socket(family, stype, proto)
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            err = sock.connect_ex(addr)
            if err in (0, errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EAGAIN):
                return sock, err != 0
            sock.close()
            self._last_connect_error = f"cannot connect to {dest[0]}:{dest[1]}: {os.strerror(err)}"
        return None

    def _connect(self, dest: tuple[str, int], addrs: list[AddrInfo], key: tuple[str, int, str]) -> Conn | None:
        """A new outbound connection to ``dest`` (its further addresses kept for a retry if this one fails)."""
        opened = self._open_socket(dest, addrs)
        if opened is None:
            return None
        if self.tls is None:
            conn = Conn(next(self._conn_ids), opened[0], True, dest, f"{dest[0]}:{dest[1]}")
        else:
            conn = TlsConn(next(self._conn_ids), opened[0], f"{dest[0]}:{dest[1]}", dest=dest)
        conn.addrs = addrs
        self._start_connecting(conn, opened[1])
        conn.key = key
        self.conns[key] = conn
        return conn

    def _start_connecting(self, conn: Conn, connecting: bool) -> None:
        conn.connecting = connecting
        conn.connect_deadline = time.monotonic() + self.connect_timeout_s
        if not connecting and isinstance(conn, TlsConn):
            self._start_handshake(conn)
            return
        self.loop.set_events(conn, selectors.EVENT_WRITE if connecting else selectors.EVENT_READ)
        if not connecting and self.sasl is not None:
            self._ready(conn)

    def _start_handshake(self, conn: TlsConn) -> None:
        """TCP is connected: the TLS handshake, driven on readiness as the inbound side's (its socket object is new,
        so it is registered anew)."""
        assert self.tls is not None
        conn.addrs = []  # no other address to fall back on once TCP is up
        conn.connect_deadline = time.monotonic() + self.connect_timeout_s  # the handshake's own deadline
        self.loop.unregister(conn)
        conn.start_client(self.tls)
        self._handshake(conn)

    def _handshake(self, conn: TlsConn) -> None:
        try:
            events = conn.handshake()
        except (ssl.SSLError, OSError) as e:
            log.warning("%s: SSL handshake with %s failed: %s", self.name, conn.peer,
                        getattr(e, "reason", None) or e)
            self.close(conn, f"SSL handshake with {conn.peer} failed: {e}")
            return
        if events:
            self.loop.set_events(conn, events)
            return
        self._ready(conn)

    def _connect_failed(self, conn: Conn, error: str) -> None:
        """Try the destination's next address (e.g. 127.0.0.1 after ::1 for "localhost"), else fail the conn."""
        if conn.addrs:
            assert conn.dest is not None
            opened = self._open_socket(conn.dest, conn.addrs)
            if opened is not None:
                self.loop.unregister(conn)
                conn.sock.close()
                conn.sock = opened[0]
                self._start_connecting(conn, opened[1])
                return
        self.close(conn, error)

    def _finish_connect(self, conn: Conn) -> None:
        err = conn.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            self._connect_failed(conn, f"cannot connect to {conn.peer}: {os.strerror(err)}")
            return
        conn.connecting = False
        conn.addrs = []
        if isinstance(conn, TlsConn):
            self._start_handshake(conn)
            return
        self._ready(conn)

    def close(self, conn: Conn, reason: str) -> None:
        """Close the connection and fail every request waiting on it."""
        if not self.loop.close_socket(conn):
            return
        if conn.key is not None and self.conns.get(conn.key) is conn:
            del self.conns[conn.key]
        pending, conn.pending = conn.pending, {}
        if pending:
            log.info("%s: %s; failing %d pending request(s)", self.name, reason, len(pending))
        for p in pending.values():
            if p.reply_to is not None:
                self.loop.inject(p.reply_to, NetSendFailed(p.request_id, reason), p.cause)

    # -- deadlines ----------------------------------------------------------------------------------------------------
    def sweep(self, now: float) -> None:
        """Connects and lookups that took too long, requests past their timeout, links a fault file cuts, held
        sends to slowed peers now due."""
        if self.faults is not None:
            blocked = self.faults.poll(now)
            if blocked is not None:
                for conn in list(self.conns.values()):
                    if conn.dest is not None and endpoint(*conn.dest) in blocked:
                        self.close(conn, f"connection to {conn.peer} cut: {PARTITIONED}")
                self.blocked = blocked  # after the cut: whoever sees the new set sees its connections gone
        self.release_held(now)
        for dest, started in list(self._resolve_started.items()):
            if now - started >= self.connect_timeout_s:
                del self._resolve_started[dest]
                for waiting_cmd in self._resolving.pop(dest, ()):
                    self.fail_or_log(waiting_cmd[4], f"looking up {dest[0]} timed out after "
                                                     f"{self.connect_timeout_s:g}s")
        for conn in list(self.conns.values()):
            if (conn.connecting or conn.handshaking or conn.sasl is not None) and now >= conn.connect_deadline:
                what = ("SSL handshake with" if conn.handshaking else "connect to" if conn.connecting
                        else "SASL authentication with")
                self._connect_failed(conn, f"{what} {conn.peer} timed out after {self.connect_timeout_s:g}s")
                continue
            expired = [c for c, p in conn.pending.items() if p.deadline <= now]
            if expired:
                for c in expired:
                    p = conn.pending.pop(c)
                    self.fail_or_log(p, f"request to {conn.peer} timed out")
                self.close(conn, f"connection to {conn.peer} closed after a request timed out")

    def release_held(self, now: float) -> None:
        """The held sends due by ``now`` sent, in the order they were held, and their connections written."""
        touched: dict[int, Conn] = {}
        while self.held and self.held[0][0] <= now:
            _, _, cmd = heapq.heappop(self.held)
            conn = self.on_send(cmd, now=now)
            if conn is not None:
                touched[id(conn)] = conn
        for conn in touched.values():
            if not conn.closed and not conn.connecting:
                self.loop.guarded(conn, self.flush, self.close)

    def shutdown(self) -> None:
        """Every connection closed and every waiting send failed ("transport closed")."""
        while self.held:
            self.fail_or_log(heapq.heappop(self.held)[2][4], "transport closed")
        for conn in list(self.conns.values()):
            self.close(conn, "transport closed")
        for waiting in self._resolving.values():
            for waiting_cmd in waiting:
                self.fail_or_log(waiting_cmd[4], "transport closed")
        self._resolving.clear()
