"""The network edge: Kafka's binary protocol over TCP — the broker's listeners and its own outbound requests.

Inbound connections are Kafka connections (Kafka's SocketServer + the dispatch of KafkaApis.handle): size-prefixed
frames cut by `protocol.framing`, each request decoded (header + body), its api key looked up in the core/api
registry, the body turned into an internal attrs request by the spec's ``request_from_wire`` and routed — to an actor
as a traced ``NetRequest`` (answered by ``NetReply`` posted to "net"), or to an edge handler ("edge:<name>",
plugged in by the composition root; it runs on its own thread and returns the internal response). Answers leave
through the spec's ``response_to_wire`` and are written IN REQUEST ORDER per connection, as Kafka's muted channels
guarantee, even when routes answer out of order. Produce with acks=0 is never answered, but its route's answer
comes back here: a clean one is dropped in its turn, an error closes the connection (KafkaApis.handleProduceRequest's
closeConnection; the spec's ``failed``). An answer may ask an edge for work after it is sent (the spec's
``edge_task``: Metadata's topic auto-creation), handed to that edge handler's thread. ApiVersions is answered here:
it needs no state (the served keys; KIP-511's v0 answer to a newer version).

Bad input closes that connection only, as Kafka 2.6 does: a size above ``socket.request.max.bytes`` (or negative),
a truncated or malformed request, an unknown api key or one this broker does not serve, an unsupported version of
any API but ApiVersions. Everything else — an impossible request, a corrupt record batch — is answered with Kafka's
error by its handler.

Outbound: actors post ``NetSend`` with an internal request; its ApiSpec is found by the request's type, the body
encoded at the spec's ``send_version`` with our own correlation id, and the answer decoded with
``response_from_wire`` into ``NetResponse``. Connection failures, request timeouts (the connection is closed, as
Kafka's NetworkClient does) and NetClose answer every waiting request with ``NetSendFailed``.

Nothing is unpickled; the server binds 127.0.0.1 unless told otherwise. One daemon I/O thread runs a selector over
every socket of the process (listeners, inbound and outbound connections, a wake-up socketpair); actors only hand it
commands, so no actor waits on the network; small queued frames are coalesced into one send().
"""

from __future__ import annotations

import collections
import contextlib
import errno
import itertools
import logging
import os
import queue
import selectors
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Any

from actors import names
from core.api import api_versions as api_versions_api
from core.api import registry
from core.api.registry import ApiSpec, RequestContext, spec_for_key, spec_for_type
from core.quota.enforcement import ChannelMute
from edges.client_quotas import ClientQuotas
from edges.net_faults import PARTITIONED, FaultFile, endpoint
from messages.common import Errors
from messages.metadata import AutoCreateConfig
from messages.net import NetRequest, NetResponse, NetSendFailed
from messages.quota import ClientQuotaConfigChanged
from protocol.api_versions import API_VERSIONS, API_VERSIONS_KEY
from protocol.errors import FrameTooLargeError, ProtocolError, UnsupportedVersionError
from protocol.framing import (
    SOCKET_REQUEST_MAX_BYTES,
    RequestHeader,
    api_versions_unsupported_response,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)

log = logging.getLogger("kactor.edges.transport")

HEADER = struct.Struct(">i")
DEFAULT_MAX_RESPONSE_BYTES = 1 << 30  # what we accept from a peer (Kafka's clients have no limit of their own)
DEFAULT_CONNECT_TIMEOUT_S = 5.0
DEFAULT_REQUEST_TIMEOUT_S = 30.0  # Kafka's request.timeout.ms default
_RECV_BYTES = 256 * 1024
_COALESCE_BYTES = 256 * 1024  # small queued frames are joined into one send() up to this size
_SWEEP_S = 0.05  # how often connect / request deadlines are checked
_INT32 = 1 << 31

# (family, type, proto, sockaddr) as getaddrinfo gives them.
_AddrInfo = tuple[int, int, int, Any]

# An edge handler: (the request's context, the internal request) -> the internal response.
EdgeHandler = Callable[[RequestContext, Any], Any]

# core/api's routes -> the actors that serve them (core names no actor)
ROUTES: dict[str, str] = {
    registry.ROUTE_REPLICA_MANAGER: names.REPLICA_MANAGER,
    registry.ROUTE_CONTROLLER: names.CONTROLLER,
    registry.ROUTE_GROUP_COORDINATOR: names.GROUP_COORDINATOR,
}


class TransportError(Exception):
    """A blocking client request failed: connection refused, timeout, connection lost, or a bad answer."""


class ListenError(OSError):
    """The server socket could not be bound; ``str()`` names the address ("cannot listen on 127.0.0.1:9092: Address
    already in use") while ``errno`` / ``strerror`` stay those of the failed bind."""

    def __init__(self, errno_: int | None, strerror: str, host: str, port: int) -> None:
        super().__init__(errno_, strerror)
        self.host, self.port = host, port

    def __str__(self) -> str:
        return f"cannot listen on {self.host}:{self.port}: {self.strerror}"


class BadRequestError(Exception):
    """Input after which Kafka closes the connection (the reason is logged)."""


def outbound_spec(body: Any) -> ApiSpec:
    """The ApiSpec kactor sends ``body`` with (ValueError when no Kafka API carries that type)."""
    spec = spec_for_type(type(body))
    if spec is None or spec.send_version is None or spec.request_to_wire is None:
        raise ValueError(f"no Kafka API sends a {type(body).__name__}")
    return spec


def encode_outbound(spec: ApiSpec, body: Any, correlation_id: int, client_id: str) -> bytes:
    """The whole request frame for ``body`` at the spec's send version."""
    assert spec.request_to_wire is not None and spec.send_version is not None
    cid = spec.client_id_of(body) if spec.client_id_of is not None else None
    header = RequestHeader(spec.api_key, spec.send_version, correlation_id, cid or client_id)
    wire = spec.request_to_wire(body)
    if spec.body_codec is not None:
        return spec.body_codec.encode_request(header, wire)  # type: ignore[no-any-return]
    return encode_request(header, wire)


def decode_outbound(spec: ApiSpec, payload: bytes | bytearray) -> tuple[int, Any]:
    """A response frame (without its size) to a request sent with ``spec`` → (correlation id, internal response)."""
    assert spec.send_version is not None and spec.response_from_wire is not None
    if spec.body_codec is not None:
        corr, body = spec.body_codec.decode_response(spec.api_key, spec.send_version, payload)
    else:
        corr, body = decode_response(spec.api_key, spec.send_version, payload)
    return corr, spec.response_from_wire(spec.send_version, body)


def encode_inbound_response(spec: ApiSpec, version: int, correlation_id: int, body: dict[str, Any]) -> bytes:
    """The whole response frame answering a request served by ``spec``."""
    if spec.body_codec is not None:
        return spec.body_codec.encode_response(spec.api_key, version, correlation_id, body)  # type: ignore
    return encode_response(spec.api_key, version, correlation_id, body)


def decode_inbound(payload: bytes) -> Any:
    """A request frame (without its size) → protocol.framing.Request; a kactor-private key by its spec's codec.
    Raises protocol's ProtocolErrors on bad input."""
    if len(payload) >= 2:
        spec = spec_for_key(int.from_bytes(payload[:2], "big", signed=True))
        if spec is not None and spec.body_codec is not None:
            return spec.body_codec.decode_request(payload)
    return decode_request(payload)


def error_code_of(e: BaseException) -> int:
    """The Kafka error a converter's exception answers with: its ``error`` / ``error_code`` when it has one (core
    ApiError, protocol errors), else INVALID_REQUEST (a request this broker cannot make sense of)."""
    code = getattr(e, "error", None)
    if code is None:
        code = getattr(e, "error_code", None)
    try:
        return int(code) if code is not None else int(Errors.INVALID_REQUEST)
    except (TypeError, ValueError):
        return int(Errors.INVALID_REQUEST)


class _Pending:
    """An outbound request waiting for its answer; ``reply_to`` None = fire-and-forget (the answer is dropped)."""

    __slots__ = ("reply_to", "request_id", "cause", "deadline", "spec")

    def __init__(self, reply_to: str | None, request_id: int, cause: int | None, deadline: float,
                 spec: ApiSpec) -> None:
        self.reply_to = reply_to
        self.request_id = request_id
        self.cause = cause
        self.deadline = deadline
        self.spec = spec


class _InFlight:
    """An inbound request being handled: what its answer needs to become a response frame."""

    __slots__ = ("conn_id", "spec", "version", "correlation_id", "body", "silent", "client_id", "size", "net_ns")

    def __init__(self, conn_id: int, spec: ApiSpec, version: int, correlation_id: int, body: dict[str, Any],
                 silent: bool = False, client_id: str = "", size: int = 0) -> None:
        self.conn_id = conn_id
        self.spec = spec
        self.version = version
        self.correlation_id = correlation_id
        self.body = body  # the decoded request body: error_response needs it
        self.silent = silent  # the client expects no answer (acks=0): only an error is acted on, by closing
        self.client_id = client_id
        self.size = size  # the request's size in bytes (the produce quota's measure)
        self.net_ns = 0  # the time this edge spent decoding and converting it (the request quota's measure)


# The answer of a request the client expects none for, in its turn (Kafka's NoOpResponse): nothing is written.
_NO_RESPONSE = b""


def _lane(dest: tuple[str, int], pending: _Pending) -> tuple[str, int, str]:
    """The outbound connection a request goes on: one per destination and sending actor."""
    return dest[0], dest[1], pending.reply_to or ""


class _Conn:
    """One socket and its buffers; touched only by the I/O thread."""

    __slots__ = ("conn_id", "sock", "outbound", "dest", "connecting", "connect_deadline", "out", "rbuf", "pending",
                 "closed", "events", "peer", "addrs", "listener", "host", "waiting", "ready", "close_after",
                 "key", "mute")

    def __init__(self, conn_id: int, sock: socket.socket, outbound: bool, dest: tuple[str, int] | None,
                 peer: str, listener: str = "", host: str = "") -> None:
        self.conn_id = conn_id
        self.sock = sock
        self.outbound = outbound
        self.dest = dest
        self.key: tuple[str, int, str] | None = None  # outbound: its entry in Transport._outbound
        self.peer = peer
        self.listener = listener
        self.host = host
        self.connecting = False
        self.connect_deadline = 0.0
        self.out: collections.deque[bytes | memoryview] = collections.deque()
        self.rbuf = bytearray()
        self.pending: dict[int, _Pending] = {}
        self.closed = False
        self.events = 0
        self.addrs: list[_AddrInfo] = []  # addresses not tried yet, while connecting
        # inbound: the requests awaiting an answer in arrival order, and answers that arrived before earlier ones
        self.waiting: collections.deque[int] = collections.deque()
        self.ready: dict[int, bytes | None] = {}
        self.close_after: str | None = None  # closing once the answers already queued are written: why
        self.mute = ChannelMute()  # inbound: nothing is read while a client quota's throttle lasts (KIP-219)


class _EdgeWorker:
    """One edge handler's thread: requests in order, each answer handed back through ``Transport.reply``."""

    def __init__(self, transport: Transport, name: str, handler: EdgeHandler) -> None:
        self._transport = transport
        self._handler = handler
        self._queue: queue.SimpleQueue[tuple[int, int | None, RequestContext, Any] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=f"{transport.process_name}-{name}", daemon=True)
        self._thread.start()

    def submit(self, conn_id: int, rid: int | None, ctx: RequestContext, request: Any) -> None:
        """Handle ``request``; its answer goes back as the reply to ``rid``, or nowhere when ``rid`` is None."""
        self._queue.put((conn_id, rid, ctx, request))

    def close(self) -> None:
        self._queue.put(None)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            conn_id, rid, ctx, request = item
            try:
                response = self._handler(ctx, request)
            except Exception:  # noqa: BLE001 - one failed request must not stop the handler
                log.exception("edge handler failed on %s", type(request).__name__)
                if rid is not None:
                    self._transport.reply_error(conn_id, rid, int(Errors.UNKNOWN_SERVER_ERROR))
                continue
            if rid is not None:
                self._transport.reply(conn_id, rid, response)


class Transport:
    """Kafka listeners + client connections for one process. The ``net`` slot of ``runtime.edges``.

    ``send``, ``reply``, ``close_destination`` and ``close`` are thread-safe and never block on the network.
    ``listeners``: (host, port, listener name) of every socket to bind, the first being what ``host``/``port``
    report; ``cluster_id`` is handed to request converters (Metadata answers with it).
    """

    def __init__(self, runtime: Any, host: str = "127.0.0.1", port: int = 0, *,
                 max_request_bytes: int = SOCKET_REQUEST_MAX_BYTES,
                 max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
                 connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
                 request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S, fault_file: str | None = None,
                 listener_name: str = "PLAINTEXT",
                 extra_listeners: tuple[tuple[str, int] | tuple[str, int, str], ...] = (),
                 cluster_id: str = "", auto_create: AutoCreateConfig | None = None,
                 client_quotas: ClientQuotas | None = None) -> None:
        self._runtime = runtime
        # Kafka's client quotas, measured and enforced on the answers (None: no quotas, as before any is set)
        self.client_quotas = client_quotas
        self._name = getattr(runtime, "process_name", "kactor")
        self.max_request_bytes = max_request_bytes
        self.max_response_bytes = max_response_bytes
        self.connect_timeout_s = connect_timeout_s
        self.request_timeout_s = request_timeout_s
        self.cluster_id = cluster_id
        # the broker's auto.create.topics.enable etc., stamped into Metadata requests (as the cluster id)
        self.auto_create = auto_create or AutoCreateConfig()
        # One server socket per broker listener (Kafka's SocketServer: an Acceptor each); all serve the same actors.
        self._listeners: list[socket.socket] = []
        self._listener_names: dict[socket.socket, str] = {}
        wanted = [(host, port, listener_name)] + [(e[0], e[1], e[2] if len(e) > 2 else listener_name)  # type: ignore
                                                  for e in extra_listeners]
        for h, p, name in wanted:
            try:
                sock = socket.create_server((h, p), reuse_port=False)
            except OSError as e:
                for s in self._listeners:
                    s.close()
                raise ListenError(e.errno, e.strerror or str(e), h, p) from e
            sock.setblocking(False)
            self._listeners.append(sock)
            self._listener_names[sock] = name
        self._listener = self._listeners[0]  # the first listener's: what host and port report
        self.bound: tuple[tuple[str, int], ...] = tuple(s.getsockname()[:2] for s in self._listeners)
        self._host, self._port = self.bound[0]
        # `kactor chaos` cuts links here (edges/net_faults.py); None in every ordinary process
        own = endpoint(self._host, self._port)
        self._faults = FaultFile(fault_file, own) if fault_file else FaultFile.from_env(own)
        self._blocked: frozenset[str] = frozenset()
        self._sel = selectors.DefaultSelector()
        for sock in self._listeners:
            self._sel.register(sock, selectors.EVENT_READ, "listener")
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._wake_pending = False
        # Commands from other threads; deque append/popleft are atomic, so no lock is needed.
        self._cmds: collections.deque[tuple[Any, ...]] = collections.deque()
        self._corr = itertools.count(1)
        self._rids = itertools.count(1)
        self._conn_ids = itertools.count(1)
        self._inbound: dict[int, _Conn] = {}
        self._muted: dict[int, _Conn] = {}  # inbound connections muted for a quota throttle
        # one connection per (host, port, sending actor), as each of Kafka's fetcher threads and controller channels
        # has its own NetworkClient: a peer answers a connection's requests in order, so a follower shard's fetch
        # parked for replica.fetch.wait.max.ms must not hold back another shard's answer behind it
        self._outbound: dict[tuple[str, int, str], _Conn] = {}
        # inbound requests being handled, by our request id (written by the I/O thread before the request is handed
        # on; popped by whoever answers: dict operations are atomic)
        self._inflight: dict[int, _InFlight] = {}
        self._edge_workers: dict[str, _EdgeWorker] = {}
        self._inline_handlers: dict[str, EdgeHandler] = {"api_versions": self._api_versions}
        # Host-name lookups under way: the sends waiting for each, and when it started (to time it out).
        self._resolving: dict[tuple[str, int], list[tuple[Any, ...]]] = {}
        self._resolve_started: dict[tuple[str, int], float] = {}
        self._closing = False
        self._shut_down = False
        self._submit_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=f"{self._name}-net", daemon=True)
        self._thread.start()
        log.info("%s listening on %s", self._name, ", ".join(f"{h}:{p}" for h, p in self.bound))

    # -- API ------------------------------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        """The port actually bound (useful with port=0)."""
        return self._port

    @property
    def host(self) -> str:
        return self._host

    @property
    def process_name(self) -> str:
        return self._name

    @property
    def partitioned_from(self) -> frozenset[str]:
        """The ``host:port`` endpoints a fault file currently cuts this process off from (kactor chaos)."""
        return self._blocked

    def add_edge_handler(self, name: str, handler: EdgeHandler) -> None:
        """Serve the APIs routed "edge:<name>" with ``handler(ctx, request) -> response`` on a thread of its own
        (the composition root plugs e.g. AdminManager in here before the first client connects)."""
        if name in self._edge_workers or name in self._inline_handlers:
            raise ValueError(f"edge handler {name!r} is already set")
        self._edge_workers[name] = _EdgeWorker(self, name, handler)

    def send(self, host: str, port: int, to: str, body: Any, request_id: int, reply_to: str | None,
             cause: int | None = None, timeout_ms: float | None = None) -> None:
        """Send the internal request ``body`` to the broker at host:port as its Kafka request. With ``reply_to``,
        exactly one NetResponse (the decoded answer) or NetSendFailed (carrying ``request_id``, caused by
        ``cause``) is later injected into ``reply_to``. ``to`` (the actor that will handle it there) is implied by
        the api key on the other side; it is kept for the trace.

        The body is encoded here, in the caller's thread, so the frame is a snapshot of the value at send time and
        an unencodable body fails at once.
        """
        dest = (host, int(port))
        timeout_s = self.request_timeout_s if timeout_ms is None else timeout_ms / 1000.0
        corr = next(self._corr) % _INT32
        try:
            spec = outbound_spec(body)
            frame = encode_outbound(spec, body, corr, self._name)
        except Exception as e:  # noqa: BLE001 - a converter's or the codec's error: the caller is told
            pending = _Pending(reply_to, request_id, cause, 0.0, None) if reply_to is not None else None  # type: ignore
            self._fail_or_log(pending, f"cannot encode {type(body).__name__} for {host}:{port}: "
                                       f"{e.__class__.__name__}: {e}")
            return
        # a one-way request never times out: nobody waits for it, so its connection has no reason to be dropped
        deadline = time.monotonic() + timeout_s if reply_to is not None else float("inf")
        pending = _Pending(reply_to, request_id, cause, deadline, spec)
        if not self._submit(("send", dest, corr, frame, pending)):
            self._fail_or_log(pending, "transport closed")

    def reply(self, connection_id: int, request_id: int, body: Any) -> None:
        """Answer the NetRequest (connection_id, request_id) with the internal response ``body``. Dropped if that
        connection has gone. A response that cannot be encoded closes the connection (Kafka's client would wait
        for it for ever otherwise)."""
        inflight = self._inflight.pop(request_id, None)
        if inflight is None:
            log.debug("%s: reply %d for a closed connection dropped", self._name, request_id)
            return
        frame, throttle_ms = self._quota_frame(inflight, body)
        self._submit(("reply", inflight.conn_id, request_id, frame, throttle_ms))
        task = inflight.spec.edge_task(body) if inflight.spec.edge_task is not None else None
        if task is not None:
            self._run_edge_task(inflight, *task)

    def reply_error(self, connection_id: int, request_id: int, error: int) -> None:
        """Answer the request with its API's whole-request error response (``error_response``)."""
        inflight = self._inflight.pop(request_id, None)
        if inflight is None:
            return
        self._submit(("reply", inflight.conn_id, request_id,
                      None if inflight.silent else self._error_frame(inflight, error), 0))

    def _silent_frame(self, inflight: _InFlight, response: Any) -> bytes | None:
        """KafkaApis.handleProduceRequest for acks=0: an answer with an error closes the connection (None), so the
        client notices and refreshes its metadata; a clean one is dropped."""
        try:
            failed = inflight.spec.failed is not None and inflight.spec.failed(response)
        except Exception:  # noqa: BLE001 - an answer we cannot read: closing is what an error would do
            log.exception("%s: cannot read a %s answer", self._name, inflight.spec.name)
            failed = True
        if not failed:
            return _NO_RESPONSE
        log.info("%s: closing connection %d due to an error during %s request with correlation id %d from client id "
                 "%s with ack=0: %r", self._name, inflight.conn_id, inflight.spec.name, inflight.correlation_id,
                 inflight.client_id, response)
        return None

    def _run_edge_task(self, inflight: _InFlight, handler: str, request: Any) -> None:
        worker = self._edge_workers.get(handler)
        if worker is None:
            log.error("%s: no edge handler %r for the work a %s answer asks for", self._name, handler,
                      inflight.spec.name)
            return
        worker.submit(inflight.conn_id, None, RequestContext(inflight.version, inflight.correlation_id,
                                                             inflight.client_id), request)

    def close_destination(self, host: str, port: int) -> None:
        """Close the outbound connection to host:port; its pending requests fail. The next send reconnects."""
        self._submit(("close", (host, int(port))))

    def close(self, timeout_s: float = 5.0) -> None:
        """Close every socket, fail every pending request, and join the I/O thread. Idempotent."""
        self._closing = True
        self._wake()
        for worker in self._edge_workers.values():
            worker.close()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout_s)
            if self._thread.is_alive():
                log.error("%s: network thread did not stop within %.1fs", self._name, timeout_s)

    def connection_count(self) -> tuple[int, int]:
        """(inbound, outbound) open connections — for tests and metrics; approximate while traffic flows."""
        return len(self._inbound), len(self._outbound)

    # -- submitting work to the I/O thread ----------------------------------------------------------------------------
    def _submit(self, cmd: tuple[Any, ...]) -> bool:
        """Hand a command to the I/O thread; False once the transport has shut down (the command is not taken)."""
        # The lock closes the gap between "not shut down yet" and the append, so no command can land in the deque
        # after _shutdown drained it (a send would then never be answered).
        with self._submit_lock:
            if self._shut_down:
                return False
            self._cmds.append(cmd)
        self._wake()
        return True

    def _wake(self) -> None:
        # At most one wake-up byte in flight: the I/O thread clears the flag (after reading the bytes) before it
        # drains the command deque, so a command appended later either is drained or finds the flag clear and
        # writes a new byte.
        if not self._wake_pending:
            self._wake_pending = True
            # OSError: buffer full (a wake-up is already pending) or the socket closed during shutdown.
            with contextlib.suppress(OSError):
                self._wake_w.send(b"\0")

    def _inject(self, to: str, body: Any, cause: int | None) -> None:
        try:
            self._runtime.inject(to, body, sender=names.EDGE_NET, cause=cause)
        except Exception:  # noqa: BLE001 - the I/O thread must outlive a broken runtime
            log.exception("injecting %s into %s failed", type(body).__name__, to)

    def _fail_or_log(self, pending: _Pending | None, error: str) -> None:
        if pending is None or pending.reply_to is None:
            log.warning("%s: dropped a one-way message: %s", self._name, error)
        else:
            self._inject(pending.reply_to, NetSendFailed(pending.request_id, error), pending.cause)

    # -- the I/O thread -----------------------------------------------------------------------------------------------
    def _run(self) -> None:
        next_sweep = time.monotonic() + _SWEEP_S
        try:
            while not self._closing:
                try:
                    events = self._sel.select(max(0.0, next_sweep - time.monotonic()))
                except OSError as e:  # e.g. EINTR on old Pythons, or a socket closed under us
                    log.error("%s: select failed: %s", self._name, e)
                    events = []
                for key, mask in events:
                    tag = key.data
                    if tag == "wake":
                        self._drain_wake()
                    elif tag == "listener":
                        self._accept(key.fileobj)  # type: ignore[arg-type]
                    else:
                        self._on_event(tag, mask)
                self._run_commands()
                now = time.monotonic()
                if now >= next_sweep:
                    self._sweep(now)
                    next_sweep = now + _SWEEP_S
        except Exception:  # noqa: BLE001 - log, then fail everything below rather than leave callers waiting
            log.exception("%s: network thread crashed", self._name)
        finally:
            self._closing = True
            self._shutdown()

    def _drain_wake(self) -> None:
        # Drain first, then clear the flag: a byte written after the clear must stay in the socket for the next
        # select (clearing first would let this loop swallow it and leave the flag set with no byte pending).
        try:
            while self._wake_r.recv(4096):
                pass
        except BlockingIOError:
            pass
        self._wake_pending = False

    def _run_commands(self) -> None:
        touched: dict[int, _Conn] = {}
        cmds = self._cmds
        while cmds:
            cmd = cmds.popleft()
            kind = cmd[0]
            if kind == "send":
                _, dest, corr, frame, pending = cmd
                if self._blocked and endpoint(*dest) in self._blocked:
                    self._fail_or_log(pending, f"cannot connect to {dest[0]}:{dest[1]}: {PARTITIONED}")
                    continue
                conn = self._outbound.get(_lane(dest, pending))
                if conn is None:
                    waiting = self._resolving.get(dest)
                    if waiting is not None:  # a name lookup for dest is under way: wait for it
                        waiting.append(cmd)
                        continue
                    addrs = self._literal_address(dest)
                    if addrs is None:
                        self._start_resolve(dest, cmd)
                        continue
                    conn = self._connect(dest, addrs, _lane(dest, pending))
                    if conn is None:
                        self._fail_or_log(pending, self._last_connect_error)
                        continue
                self._queue_send(conn, corr, frame, pending)
                touched[id(conn)] = conn
            elif kind == "reply":
                _, conn_id, rid, frame, throttle_ms = cmd
                conn = self._inbound.get(conn_id)
                if conn is None:
                    log.debug("%s: reply for closed connection %d dropped", self._name, conn_id)
                    continue
                self._answer(conn, rid, frame)
                self._throttle(conn, throttle_ms)
                if not conn.closed:
                    touched[id(conn)] = conn
            elif kind == "close":
                dest = cmd[1]
                reason = f"connection to {dest[0]}:{dest[1]} closed on request (NetClose)"
                for conn in [c for c in self._outbound.values() if c.dest == dest]:
                    self._close_conn(conn, reason)
                self._resolve_started.pop(dest, None)
                for waiting_cmd in self._resolving.pop(dest, ()):
                    self._fail_or_log(waiting_cmd[4], reason)
            elif kind == "resolved":
                _, dest, result, started = cmd
                waiting = self._resolving.get(dest)
                if waiting is None or self._resolve_started.get(dest) != started:
                    continue  # given up on (connect timeout, NetClose) before the lookup finished
                del self._resolving[dest]
                del self._resolve_started[dest]
                if isinstance(result, str):
                    for waiting_cmd in waiting:
                        self._fail_or_log(waiting_cmd[4], result)
                    continue
                for _, _, corr, frame, pending in waiting:
                    key = _lane(dest, pending)
                    conn = self._outbound.get(key) or self._connect(dest, list(result), key)
                    if conn is None:
                        self._fail_or_log(pending, self._last_connect_error)
                        continue
                    self._queue_send(conn, corr, frame, pending)
                    touched[id(conn)] = conn
        # Write at once rather than waiting a select round for writability: the socket is almost always writable.
        for conn in touched.values():
            if not conn.closed and not conn.connecting:
                self._guarded(conn, self._flush)

    @staticmethod
    def _queue_send(conn: _Conn, corr: int, frame: bytes, pending: _Pending) -> None:
        # every request kactor sends is answered by its peer, also a one-way one (its answer is read and dropped)
        conn.pending[corr] = pending
        conn.out.append(frame)

    def _answer(self, conn: _Conn, rid: int, frame: bytes | None) -> None:
        """An answer for inbound request ``rid``: queued behind the answers still owed to earlier requests of the
        connection (Kafka answers a connection's requests in order). None closes the connection."""
        conn.ready[rid] = frame
        waiting, ready = conn.waiting, conn.ready
        while waiting and waiting[0] in ready:
            f = ready.pop(waiting.popleft())
            if f is None:
                self._close_after_flush(conn, f"closing the connection from {conn.peer} instead of answering")
                return
            if f:
                conn.out.append(f)

    def _close_after_flush(self, conn: _Conn, reason: str) -> None:
        """Close once the answers queued before are written (Kafka wrote them before it read the request that
        closes): nothing more is read or answered on the connection meanwhile."""
        for rid in conn.waiting:
            self._inflight.pop(rid, None)
        conn.waiting.clear()
        conn.ready.clear()
        if not conn.out:
            self._close_conn(conn, reason)
            return
        conn.close_after = reason
        self._set_events(conn, selectors.EVENT_WRITE)

    def _guarded(self, conn: _Conn, fn: Any) -> None:
        try:
            fn(conn)
        except OSError as e:
            self._close_conn(conn, f"connection to {conn.peer} failed: {e.strerror or e}")
        except (BadRequestError, ProtocolError) as e:
            log.warning("%s: closing the connection from %s: %s", self._name, conn.peer, e)
            self._close_conn(conn, f"bad input from {conn.peer}: {e}")
        except Exception as e:  # noqa: BLE001 - one bad connection must not take the process down
            log.exception("%s: error on connection to %s", self._name, conn.peer)
            self._close_conn(conn, f"connection to {conn.peer} failed: {e}")

    def _on_event(self, conn: _Conn, mask: int) -> None:
        if conn.closed:
            return
        if mask & selectors.EVENT_WRITE:
            if conn.connecting:
                self._guarded(conn, self._finish_connect)
            elif not conn.closed:
                self._guarded(conn, self._flush)
        if mask & selectors.EVENT_READ and not conn.closed and conn.close_after is None and conn.conn_id not in \
                self._muted:
            self._guarded(conn, self._read)

    # -- connections ----------------------------------------------------------------------------------------------
    _last_connect_error = ""

    @staticmethod
    def _literal_address(dest: tuple[str, int]) -> list[_AddrInfo] | None:
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
        """Look a host name up in a helper thread: getaddrinfo can block for seconds on a slow resolver, and this
        thread serves every other connection meanwhile. Sends to ``dest`` wait in ``_resolving``."""
        started = time.monotonic()
        self._resolving[dest] = [cmd]
        self._resolve_started[dest] = started

        def resolve() -> None:
            host, port = dest
            result: list[_AddrInfo] | str
            try:
                infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
                result = [(family, stype, proto, addr) for family, stype, proto, _, addr in infos]
            except (OSError, UnicodeError) as e:
                result = f"cannot resolve {host}:{port}: {e}"
            # False if the transport shut down meanwhile: _shutdown has already failed the waiting sends.
            self._submit(("resolved", dest, result, started))

        threading.Thread(target=resolve, name=f"{self._name}-resolve-{dest[0]}", daemon=True).start()

    def _open_socket(self, dest: tuple[str, int], addrs: list[_AddrInfo]) -> tuple[socket.socket, bool] | None:
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

    def _connect(self, dest: tuple[str, int], addrs: list[_AddrInfo], key: tuple[str, int, str]) -> _Conn | None:
        """A new outbound connection to ``dest`` (its further addresses kept for a retry if this one fails)."""
        opened = self._open_socket(dest, addrs)
        if opened is None:
            return None
        conn = _Conn(next(self._conn_ids), opened[0], True, dest, f"{dest[0]}:{dest[1]}")
        conn.addrs = addrs
        self._start_connecting(conn, opened[1])
        conn.key = key
        self._outbound[key] = conn
        return conn

    def _start_connecting(self, conn: _Conn, connecting: bool) -> None:
        conn.connecting = connecting
        conn.connect_deadline = time.monotonic() + self.connect_timeout_s
        self._set_events(conn, selectors.EVENT_WRITE if connecting else selectors.EVENT_READ)

    def _connect_failed(self, conn: _Conn, error: str) -> None:
        """Try the destination's next address (e.g. 127.0.0.1 after ::1 for "localhost"), else fail the conn."""
        if conn.addrs:
            assert conn.dest is not None
            opened = self._open_socket(conn.dest, conn.addrs)
            if opened is not None:
                self._unregister(conn)
                conn.sock.close()
                conn.sock = opened[0]
                self._start_connecting(conn, opened[1])
                return
        self._close_conn(conn, error)

    def _finish_connect(self, conn: _Conn) -> None:
        err = conn.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            self._connect_failed(conn, f"cannot connect to {conn.peer}: {os.strerror(err)}")
            return
        conn.connecting = False
        conn.addrs = []
        self._flush(conn)

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                sock, addr = listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:  # e.g. EMFILE: keep serving the connections we have
                log.error("%s: accept failed: %s", self._name, e)
                return
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = _Conn(next(self._conn_ids), sock, False, None, f"{addr[0]}:{addr[1]}",
                         self._listener_names.get(listener, ""), str(addr[0]))
            self._inbound[conn.conn_id] = conn
            self._set_events(conn, selectors.EVENT_READ)

    def _unregister(self, conn: _Conn) -> None:
        if conn.events:
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._sel.unregister(conn.sock)
            conn.events = 0

    def _set_events(self, conn: _Conn, events: int) -> None:
        if events == conn.events:
            return
        if events == 0:  # nothing to wait for (a muted connection with nothing to write)
            self._unregister(conn)
            return
        if conn.events == 0:
            self._sel.register(conn.sock, events, conn)
        else:
            self._sel.modify(conn.sock, events, conn)
        conn.events = events

    def _close_conn(self, conn: _Conn, reason: str) -> None:
        if conn.closed:
            return
        conn.closed = True
        self._unregister(conn)
        with contextlib.suppress(OSError):
            conn.sock.close()
        if conn.outbound:
            if conn.key is not None and self._outbound.get(conn.key) is conn:
                del self._outbound[conn.key]
        else:
            self._inbound.pop(conn.conn_id, None)
            self._muted.pop(conn.conn_id, None)
            for rid in conn.waiting:  # answers still owed: dropped when they come
                self._inflight.pop(rid, None)
            conn.waiting.clear()
            conn.ready.clear()
        pending, conn.pending = conn.pending, {}
        if pending:
            log.info("%s: %s; failing %d pending request(s)", self._name, reason, len(pending))
        for p in pending.values():
            if p.reply_to is not None:
                self._inject(p.reply_to, NetSendFailed(p.request_id, reason), p.cause)
        conn.out.clear()
        conn.rbuf = bytearray()

    def _sweep(self, now: float) -> None:
        if self._muted:
            self._unmute_expired()
        if self._faults is not None:
            blocked = self._faults.poll(now)
            if blocked is not None:
                for conn in list(self._outbound.values()):
                    if conn.dest is not None and endpoint(*conn.dest) in blocked:
                        self._close_conn(conn, f"connection to {conn.peer} cut: {PARTITIONED}")
                self._blocked = blocked  # after the cut: whoever sees the new set sees its connections gone
        for dest, started in list(self._resolve_started.items()):
            if now - started >= self.connect_timeout_s:
                del self._resolve_started[dest]
                for waiting_cmd in self._resolving.pop(dest, ()):
                    self._fail_or_log(waiting_cmd[4], f"looking up {dest[0]} timed out after "
                                                      f"{self.connect_timeout_s:g}s")
        for conn in list(self._outbound.values()):
            if conn.connecting and now >= conn.connect_deadline:
                self._connect_failed(conn, f"connect to {conn.peer} timed out after {self.connect_timeout_s:g}s")
                continue
            expired = [c for c, p in conn.pending.items() if p.deadline <= now]
            if expired:
                for c in expired:
                    p = conn.pending.pop(c)
                    self._fail_or_log(p, f"request to {conn.peer} timed out")
                self._close_conn(conn, f"connection to {conn.peer} closed after a request timed out")

    def _shutdown(self) -> None:
        for conn in list(self._outbound.values()) + list(self._inbound.values()):
            self._close_conn(conn, "transport closed")
        for waiting in self._resolving.values():
            for waiting_cmd in waiting:
                self._fail_or_log(waiting_cmd[4], "transport closed")
        self._resolving.clear()
        # Commands that arrived after the loop ended still owe their callers an answer.
        with self._submit_lock:
            self._shut_down = True
        while self._cmds:
            cmd = self._cmds.popleft()
            if cmd[0] == "send":
                self._fail_or_log(cmd[4], "transport closed")
        for worker in self._edge_workers.values():
            worker.close()
        for s in (*self._listeners, self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                s.close()
        with contextlib.suppress(OSError):
            self._sel.close()
        log.info("%s: transport on %s:%d closed", self._name, self._host, self._port)

    # -- reading and writing --------------------------------------------------------------------------------------
    def _flush(self, conn: _Conn) -> None:
        out = conn.out
        sock = conn.sock
        while out:
            if len(out) > 1 and len(out[0]) < _COALESCE_BYTES:
                # Many small frames (a pipelined window): one send() instead of one per frame.
                batch, size = [], 0
                while out and size < _COALESCE_BYTES:
                    b = out.popleft()
                    batch.append(b)
                    size += len(b)
                out.appendleft(b"".join(batch))
            buf = out[0]
            try:
                n = sock.send(buf)
            except (BlockingIOError, InterruptedError):
                break
            if n < len(buf):
                out[0] = memoryview(buf)[n:]
                break
            out.popleft()
        if conn.close_after is not None:
            if not out:
                self._close_conn(conn, conn.close_after)
            return
        read = 0 if conn.conn_id in self._muted else selectors.EVENT_READ
        self._set_events(conn, read | selectors.EVENT_WRITE if out else read)

    def _read(self, conn: _Conn) -> None:
        try:
            data = conn.sock.recv(_RECV_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        if not data:
            self._close_conn(conn, f"connection to {conn.peer} closed by the peer")
            return
        buf = conn.rbuf
        buf += data
        off = 0
        # NetworkReceive.readFrom: a size above socket.request.max.bytes (or negative) is InvalidReceiveException
        limit = self.max_response_bytes if conn.outbound else self.max_request_bytes
        while len(buf) - off >= HEADER.size:
            (n,) = HEADER.unpack_from(buf, off)
            if n < 0 or n > limit:
                raise FrameTooLargeError(f"Invalid receive (size = {n}{f' larger than {limit}' if n > 0 else ''})")
            end = off + HEADER.size + n
            if len(buf) < end:
                break
            # one copy (a bytearray slice then bytes() was two, and the slow kind: 1.6 ms per 1 MB frame against
            # 0.03 ms, bench engineer's measurement); the view is released before the buffer is edited below
            with memoryview(buf) as view:
                payload = bytes(view[off + HEADER.size:end])
            off = end
            if conn.outbound:
                self._on_response(conn, payload)
            else:
                self._on_request(conn, payload)
            if conn.closed or conn.close_after is not None:
                break
        if off:
            del buf[:off]
        if not conn.closed and conn.out:
            self._flush(conn)

    def _on_response(self, conn: _Conn, payload: bytes) -> None:
        if len(payload) < 4:
            raise BadRequestError(f"a {len(payload)}-byte response frame")
        (corr,) = HEADER.unpack_from(payload, 0)
        p = conn.pending.pop(corr, None)
        if p is None:
            log.debug("%s: answer %d from %s has no waiting request (timed out?)", self._name, corr, conn.peer)
            return
        if p.reply_to is None:
            return
        try:
            _, body = decode_outbound(p.spec, payload)
        except Exception as e:  # noqa: BLE001 - a peer's bad answer fails that request and its connection
            self._inject(p.reply_to, NetSendFailed(p.request_id, f"undecodable {p.spec.name} answer from "
                                                                 f"{conn.peer}: {e.__class__.__name__}: {e}"), p.cause)
            raise BadRequestError(f"undecodable {p.spec.name} answer: {e}") from None
        self._inject(p.reply_to, NetResponse(p.request_id, body), p.cause)

    def _on_request(self, conn: _Conn, payload: bytes) -> None:
        """KafkaApis.handle for one request frame: decode, convert, route (or close the connection, as 2.6)."""
        started_ns = time.perf_counter_ns()
        try:
            request = decode_inbound(payload)
        except UnsupportedVersionError as e:
            header = e.header
            if isinstance(header, RequestHeader) and header.request_api_key == API_VERSIONS_KEY:
                rid = next(self._rids)
                conn.waiting.append(rid)
                self._answer(conn, rid, api_versions_unsupported_response(header.correlation_id))
                return
            raise  # Kafka 2.6: "Unsupported version" InvalidRequestException -> the connection is closed
        header, body = request.header, request.body
        key, version = header.request_api_key, header.request_api_version
        spec = spec_for_key(key)
        if spec is None:
            raise BadRequestError(f"api key {key} is not served by this broker")
        ctx = RequestContext(version, header.correlation_id, header.client_id or "", conn.host, conn.conn_id,
                             conn.listener, self.cluster_id, self.auto_create)
        # reply_expected from here on: the route answers (also an acks=0 produce, whose answer only this edge reads)
        silent = not spec.expects_reply(version, body)
        reply_expected = spec.route_answers(version, body)
        rid = next(self._rids)
        inflight = _InFlight(conn.conn_id, spec, version, header.correlation_id, body, silent,
                             header.client_id or "", len(payload))
        if reply_expected:
            self._inflight[rid] = inflight
            conn.waiting.append(rid)
        try:
            internal = spec.request_from_wire(version, body, ctx)
        except Exception as e:  # noqa: BLE001 - a request the converter refuses: Kafka's error answer for it
            log.info("%s: %s v%d from %s refused: %s", self._name, spec.name, version, conn.peer, e)
            if reply_expected:
                self._inflight.pop(rid, None)
                self._answer(conn, rid, None if silent else self._error_frame(inflight, error_code_of(e)))
            return
        inflight.net_ns = time.perf_counter_ns() - started_ns
        handler = spec.edge_handler
        if handler is not None:
            inline = self._inline_handlers.get(handler)
            if inline is not None:
                if reply_expected:
                    self._inflight.pop(rid, None)
                    response = inline(ctx, internal)
                    inflight.net_ns = time.perf_counter_ns() - started_ns
                    frame, throttle_ms = self._quota_frame(inflight, response)
                    self._answer(conn, rid, frame)
                    self._throttle(conn, throttle_ms)
                return
            worker = self._edge_workers.get(handler)
            if worker is None:
                log.error("%s: no edge handler %r for %s", self._name, handler, spec.name)
                if reply_expected:
                    self._inflight.pop(rid, None)
                    self._answer(conn, rid, None if silent else self._error_frame(
                        inflight, int(Errors.UNKNOWN_SERVER_ERROR)))
                return
            worker.submit(conn.conn_id, rid, ctx, internal)
            return
        route = ROUTES.get(spec.route, spec.route)
        if not self._has_actor(route):
            log.error("%s: no actor %r for %s", self._name, route, spec.name)
            if reply_expected:
                self._inflight.pop(rid, None)
                self._answer(conn, rid, None if silent else self._error_frame(
                    inflight, int(Errors.UNKNOWN_SERVER_ERROR)))
            return
        # An external input: the request's cause lives in the client's process.
        self._inject(route, NetRequest(conn.conn_id, rid, internal, reply_expected, version,
                                            header.client_id or "", conn.host), None)

    # -- client quotas: measured on each answer, enforced by muting the connection (KIP-219) ---------------------------
    def update_client_quota(self, change: ClientQuotaConfigChanged) -> None:
        """A quota entity's new configuration (the "net" actor's ClientQuotaConfigChanged)."""
        if self.client_quotas is not None:
            self.client_quotas.update(change)

    def _quota_frame(self, inflight: _InFlight, response: Any) -> tuple[bytes | None, int]:
        """The answer's frame (as _silent_frame / _response_frame) with the client quotas applied: its
        throttle_time_ms set and the time to mute the connection for (core/quota/enforcement.py)."""
        quotas = self.client_quotas
        if inflight.silent:
            frame = self._silent_frame(inflight, response)
            if quotas is None or frame is None:
                return frame, 0
            return frame, quotas.silent(inflight.spec.api_key, inflight.client_id, inflight.size, inflight.body,
                                        inflight.net_ns)
        if quotas is None:
            return self._response_frame(inflight, response), 0
        try:
            wire = inflight.spec.response_to_wire(inflight.version, response)
            return quotas.answer(inflight.spec.api_key, inflight.client_id, wire, inflight.size, inflight.body,
                                 inflight.net_ns, lambda body: encode_inbound_response(
                                     inflight.spec, inflight.version, inflight.correlation_id, body))
        except Exception:  # noqa: BLE001 - our own bug: the connection is closed rather than left waiting
            log.exception("%s: cannot encode a %s v%d response", self._name, inflight.spec.name, inflight.version)
            return None, 0

    def _throttle(self, conn: _Conn, throttle_ms: int) -> None:
        """Mute ``conn`` for a throttle once its answer is queued (ThrottledChannel's StartThrottlingResponse)."""
        if throttle_ms <= 0 or conn.closed:
            return
        conn.mute = conn.mute.throttled(time.monotonic() * 1000.0, throttle_ms)
        self._muted[conn.conn_id] = conn
        self._set_events(conn, selectors.EVENT_WRITE if conn.out else 0)

    def _unmute_expired(self) -> None:
        """EndThrottlingResponse: connections whose throttle is over are read again."""
        now_ms = time.monotonic() * 1000.0
        for conn_id, conn in list(self._muted.items()):
            if not conn.mute.muted(now_ms):
                del self._muted[conn_id]
                if not conn.closed and conn.close_after is None:
                    self._set_events(conn, selectors.EVENT_READ | (selectors.EVENT_WRITE if conn.out else 0))

    def _response_frame(self, inflight: _InFlight, response: Any) -> bytes | None:
        try:
            wire = inflight.spec.response_to_wire(inflight.version, response)
            return encode_inbound_response(inflight.spec, inflight.version, inflight.correlation_id, wire)
        except Exception:  # noqa: BLE001 - our own bug: the connection is closed rather than left waiting
            log.exception("%s: cannot encode a %s v%d response", self._name, inflight.spec.name, inflight.version)
            return None

    def _error_frame(self, inflight: _InFlight, error: int) -> bytes | None:
        """AbstractRequest.getErrorResponse: the whole request answered with ``error``; None (close) when even
        that cannot be built."""
        try:
            wire = inflight.spec.error_response(inflight.version, inflight.body, error)
            return encode_inbound_response(inflight.spec, inflight.version, inflight.correlation_id, wire)
        except Exception:  # noqa: BLE001
            log.exception("%s: cannot build the %s v%d error response", self._name, inflight.spec.name,
                          inflight.version)
            return None

    @staticmethod
    def _api_versions(ctx: RequestContext, request: Any) -> Any:
        return api_versions_api.handle_api_versions_request(request, ctx.api_version)

    def _has_actor(self, name: str) -> bool:
        has = getattr(self._runtime, "has_actor", None)
        return True if has is None else bool(has(name))


# -- blocking client for command-line tools and tests -----------------------------------------------------------------
class BlockingClient:
    """One Kafka connection to a broker, for tools that are not actor systems: internal requests in, internal
    responses out, through the same ApiSpecs as the transport's outbound path. Not thread-safe."""

    def __init__(self, host: str, port: int, connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
                 max_frame_bytes: int = DEFAULT_MAX_RESPONSE_BYTES, client_id: str = "kactor-client") -> None:
        self.host, self.port = host, int(port)
        self.max_frame_bytes = max_frame_bytes
        self.client_id = client_id
        self._ids = itertools.count(1)
        try:
            self._sock: socket.socket | None = socket.create_connection((host, self.port), timeout=connect_timeout_s)
        except ConnectionRefusedError:
            raise TransportError(f"connection refused by {host}:{port} (is a kactor broker listening there?)") \
                from None
        except TimeoutError:
            raise TransportError(f"connecting to {host}:{port} timed out after {connect_timeout_s:g}s") from None
        except OSError as e:
            raise TransportError(f"cannot connect to {host}:{port}: {e.strerror or e}") from None
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def request(self, body: Any, timeout_s: float = 10.0) -> Any:
        """Send the internal request ``body`` as its Kafka request and return the decoded internal response;
        TransportError on any failure (the connection is then closed)."""
        try:
            spec = outbound_spec(body)
        except ValueError as e:
            raise TransportError(str(e)) from None
        corr = next(self._ids) % _INT32
        try:
            frame = encode_outbound(spec, body, corr, self.client_id)
        except Exception as e:  # noqa: BLE001 - a converter's or the codec's refusal
            raise TransportError(f"cannot encode {type(body).__name__}: {e.__class__.__name__}: {e}") from None
        where = f"{self.host}:{self.port}"
        payload = self._exchange(frame, corr, timeout_s, f"{spec.name}")
        try:
            return decode_outbound(spec, payload)[1]
        except Exception as e:  # noqa: BLE001
            self.close()
            raise TransportError(f"bad {spec.name} answer from {where}: {e.__class__.__name__}: {e}") from None

    def request_raw(self, api_key: int, version: int, body: dict[str, Any], timeout_s: float = 10.0) -> dict[str, Any]:
        """One request given as its wire body at an explicit version; the decoded response body (tests, tools)."""
        corr = next(self._ids) % _INT32
        frame = encode_request(RequestHeader(api_key, version, corr, self.client_id), body)
        payload = self._exchange(frame, corr, timeout_s, API_VERSIONS[api_key].name)
        return decode_response(api_key, version, payload)[1]

    def _exchange(self, frame: bytes, corr: int, timeout_s: float, what: str) -> bytes:
        if self._sock is None:
            raise TransportError("client is closed")
        deadline = time.monotonic() + timeout_s
        where = f"{self.host}:{self.port}"
        try:
            self._sock.settimeout(timeout_s)
            self._sock.sendall(frame)
            while True:
                (n,) = HEADER.unpack(self._recv_exact(HEADER.size, deadline))
                if n < 4 or n > self.max_frame_bytes:
                    raise TransportError(f"{where} sent a {n}-byte frame")
                payload = self._recv_exact(n, deadline)
                if HEADER.unpack_from(payload, 0)[0] == corr:
                    return payload
                # an answer to an earlier request we gave up on
        except TimeoutError:
            self.close()
            raise TransportError(f"no answer from {where} ({what}) within {timeout_s:g}s") from None
        except TransportError:
            self.close()
            raise
        except OSError as e:
            self.close()
            raise TransportError(f"connection to {where} failed: {e.strerror or e}") from None

    def _recv_exact(self, n: int, deadline: float) -> bytes:
        assert self._sock is not None
        chunks = bytearray()
        while len(chunks) < n:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            self._sock.settimeout(remaining)
            data = self._sock.recv(min(n - len(chunks), _RECV_BYTES))
            if not data:
                raise TransportError(f"connection to {self.host}:{self.port} closed before the answer arrived")
            chunks += data
        return bytes(chunks)

    def close(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None

    def __enter__(self) -> BlockingClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def request(host: str, port: int, body: Any, timeout_s: float = 10.0) -> Any:
    """One blocking Kafka request/answer with the broker at host:port (for command-line tools and tests): the
    internal request ``body`` in, its internal response out.
    Raises TransportError with a one-line reason on connection refused, timeout, lost connection or bad answer.
    """
    with BlockingClient(host, port, connect_timeout_s=timeout_s) as client:
        return client.request(body, timeout_s=timeout_s)

