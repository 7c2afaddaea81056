"""The broker's side of the network edge: Kafka's SocketServer Processor and the dispatch of KafkaApis.handle.

A request frame is decoded (header + body), its api key looked up in the core/api registry, the body turned into an
internal attrs request by the spec's ``request_from_wire`` and routed by the spec's ``route`` — to the actor of its
component (actors.core_effects.actor_for) as a traced ``NetRequest``
(answered by ``NetReply`` posted to "net"), or to an edge handler ("edge:<name>", plugged in by the composition root;
it runs on its own thread and returns the internal response). Answers leave through the spec's ``response_to_wire``.
ApiVersions is answered here: it needs no state (the served keys; KIP-511's v0 answer to a newer version).

ONE REQUEST IN FLIGHT PER CONNECTION, as the Processor mutes a channel from the moment it reads a request until its
response has been sent: a connection is not read further until its request's answer is written to the socket, so its
requests are handled and answered in order and a client that never reads costs the broker one answer; with
``queued.max.requests`` client requests handed on and unanswered over all connections, no connection's next client
request is read (Kafka's full RequestChannel); inter-broker requests (a follower's Fetch, the controller's
LeaderAndIsr / UpdateMetadata / StopReplica, ControlledShutdown) are neither held back nor counted, so a produce
parked for its followers can always be completed by them. A client quota's throttle mutes the connection too, for
the throttle time (KIP-219: the answer carries throttle_time_ms and is written at once; edges/client_quotas.py
measures it). Every reason a connection is not read is one ``Mute`` of one model (``Inbound.mute``), as Kafka's
ChannelMuteState.

Produce with acks=0 is never answered, but its route's answer comes back here (and releases the connection): a
clean one is dropped, an error closes the connection (KafkaApis.handleProduceRequest's closeConnection; the spec's
``failed``). An answer may ask an edge for work after it is sent (the spec's
``edge_task``: Metadata's topic auto-creation), handed to that edge handler's thread.

Nothing is read before start-up ends (``start``: SocketServer.startProcessingRequests); ``stop`` closes every client
connection and the listeners (stopProcessingRequests). A request for an actor or edge handler this process lacks
closes its connection: it is never answered UNKNOWN_SERVER_ERROR, which clients take as fatal. Bad input closes that
connection only, as Kafka 2.6 does: a size above ``socket.request.max.bytes`` (or negative), a truncated or malformed
request, an unknown api key or one this broker does not serve, an unsupported version of any API but ApiVersions.
Everything else — an impossible request, a corrupt record batch — is answered with Kafka's error by its handler.

A connection of a SASL_PLAINTEXT or SASL_SSL listener (SASL_SSL: after its TLS handshake) is authenticated before any
other request is served, as Kafka's SaslServerAuthenticator: its frames go to the connection's authenticator
(core/security/sasl.py) — ApiVersions is answered as anywhere, SaslHandshake here, the tokens on the SASL thread
(edges/net/sasl.py) — until it is complete and the connection's principal is ``User:<name>``; a frame above
sasl.server.max.receive.size (512 KB) before then closes it at once; a failed authentication (wrong credentials, an
unknown mechanism, a request out of turn) is held for ``connection.failed.authentication.delay.ms`` (KIP-306: Kafka's
Selector delays the close, and the failure's answer with it, so a password guesser waits that long for each guess):
not read nor written meanwhile, then answered and closed; other connections are served as usual.
"""

from __future__ import annotations

import enum
import itertools
import logging
import queue
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any

from actors.core_effects import actor_for
from core.api import api_versions as api_versions_api
from core.api.admin import fit_response
from core.api.registry import ApiSpec, RequestContext, spec_for_key
from core.quota.enforcement import ANONYMOUS_PRINCIPAL
from core.security.sasl import (
    MAX_RECEIVE_SIZE,
    SASL_HANDSHAKE,
    ListenerSasl,
    SaslServerAuthenticator,
    StepKind,
    may_begin_reauthentication,
    session_expired,
)
from core.security.scram import ScramCredential, ScramMechanism
from edges.client_quotas import ClientQuotas
from edges.net.framing import (
    HEADER,
    BadRequestError,
    cut_frame,
    decode_inbound,
    encode_inbound_response,
    error_code_of,
    inter_broker_request,
)
from edges.net.sasl import FailedAuthentication, SaslWorker, monotonic_ms
from edges.net.selector import Conn, DelayedCloses, Loop
from edges.net.tls import TlsConn, accept_tls
from messages.common import Errors
from messages.metadata import AutoCreateConfig
from messages.net import NetRequest
from messages.quota import ClientQuotaConfigChanged
from protocol.api_versions import ApiKeys
from protocol.errors import FrameTooLargeError, UnsupportedVersionError
from protocol.framing import RequestHeader, api_versions_unsupported_response

log = logging.getLogger("kactor.edges.transport")

# An edge handler: (the request's context, the internal request) -> the internal response.
EdgeHandler = Callable[[RequestContext, Any], Any]

# The answer of a request the client expects none for, in its turn (Kafka's NoOpResponse): nothing is written.
_NO_RESPONSE = b""


class Mute(enum.Enum):
    """Why an inbound connection is not read now (Kafka's ChannelMuteState and the Processor's reasons to read no
    channel); the first that applies, in this order, is the one reported."""

    HANDSHAKE = "its TLS handshake is under way"  # SslTransportLayer.ready() false
    NOT_STARTED = "start-up has not ended"  # SocketServer before startProcessingRequests
    # KafkaChannel.delayCloseOnAuthenticationFailure (KIP-306)
    AUTHENTICATION_FAILED = "its authentication failed: held for connection.failed.authentication.delay.ms, then closed"
    CLOSING = "closing once its answers are written"
    RESPONSE_PENDING = "a request of it is being handled or its answer written"  # MUTED_AND_RESPONSE_PENDING
    THROTTLED = "a client quota's throttle"  # MUTED_AND_THROTTLED (KIP-219)
    QUEUE_FULL = "its next request is a client's and queued.max.requests are being handled"  # a full RequestChannel


def _now_ms() -> float:
    return time.monotonic() * 1000.0


class InFlight:
    """An inbound request being handled: what its answer needs to become a response frame."""

    __slots__ = ("conn_id", "spec", "version", "correlation_id", "body", "silent", "client_id", "size", "net_ns",
                 "principal")

    def __init__(self, conn_id: int, spec: ApiSpec, version: int, correlation_id: int, body: dict[str, Any],
                 silent: bool = False, client_id: str = "", size: int = 0,
                 principal: str | None = ANONYMOUS_PRINCIPAL) -> None:
        self.conn_id = conn_id
        self.spec = spec
        self.version = version
        self.correlation_id = correlation_id
        self.body = body  # the decoded request body: error_response needs it
        self.silent = silent  # the client expects no answer (acks=0): only an error is acted on, by closing
        self.client_id = client_id
        self.size = size  # the request's size in bytes (the produce quota's measure)
        self.net_ns = 0  # the time this edge spent decoding and converting it (the request quota's measure)
        # the connection's KafkaPrincipal when the request was read (request.session: the user its quotas are
        # resolved by); None: not measured, an ApiVersions a SASL connection sends before it authenticates (2.6.3's
        # SaslServerAuthenticator answers it itself, never through KafkaApis' quotas)
        self.principal = principal


class EdgeWorker:
    """One edge handler's thread: requests in order, each answer handed back through ``Inbound.reply``."""

    def __init__(self, inbound: Inbound, name: str, handler: EdgeHandler) -> None:
        self._inbound = inbound
        self._handler = handler
        self._queue: queue.SimpleQueue[tuple[int, int | None, RequestContext, Any] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=f"{inbound.name}-{name}", daemon=True)
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
                    self._inbound.reply_error(conn_id, rid, int(Errors.UNKNOWN_SERVER_ERROR))
                continue
            if rid is not None:
                self._inbound.reply(conn_id, rid, response)


class Inbound:
    """The inbound connections of a process's listeners and the requests read from them. ``reply``,
    ``reply_error``, ``start`` and ``stop`` are thread-safe; the rest runs on the I/O thread."""

    def __init__(self, loop: Loop, runtime: Any, name: str, listeners: list[tuple[socket.socket, str]],
                 conn_ids: itertools.count[int], *, max_request_bytes: int, queued_max_requests: int,
                 cluster_id: str, auto_create: AutoCreateConfig, processing: bool,
                 client_quotas: ClientQuotas | None = None,
                 tls: dict[str, ssl.SSLContext] | None = None, sasl: dict[str, ListenerSasl] | None = None,
                 scram_credentials: Callable[[str, ScramMechanism], ScramCredential | None] | None = None) -> None:
        self.loop = loop
        self.name = name
        self._runtime = runtime
        self._listeners = listeners
        self._listener_names = dict(listeners)
        # listener name → server context of an SSL listener (SslChannelBuilder); the others are PLAINTEXT
        self._tls = tls or {}
        # listener name → the mechanisms and JAAS entries of a SASL listener (SaslChannelBuilder); SCRAM's credential
        # lookup (ZooKeeper's /config/users, read on the SASL thread)
        self._sasl = sasl or {}
        self._scram_credentials = scram_credentials or (lambda user, mechanism: None)
        self._sasl_worker = SaslWorker(name, self._sasl_reply) if self._sasl else None
        # SASL listener name → the connections of it whose authentication failed, held until their close is due
        # (Selector.delayedClosingChannels): the connection, the failure's answer (None: none) and why
        self._delayed_closes: dict[str, DelayedCloses[int, tuple[Conn, bytes | bytearray | None, str]]] = {
            listener: DelayedCloses(sasl.failed_authentication_delay_ms, _now_ms)
            for listener, sasl in self._sasl.items()}
        self._conn_ids = conn_ids
        self.max_request_bytes = max_request_bytes
        self.queued_max_requests = queued_max_requests
        self.cluster_id = cluster_id
        self.auto_create = auto_create
        self.conns: dict[int, Conn] = {}
        self._rids = itertools.count(1)
        # requests being handled, by our request id (written by the I/O thread before the request is handed on;
        # popped by whoever answers: dict operations are atomic)
        self.inflight: dict[int, InFlight] = {}
        # the client requests handed on and not answered yet, over every connection, by request id (Kafka's
        # RequestChannel queue, queued.max.requests long: when it is full no client request is read; inter-broker
        # requests take no place in it); touched by the I/O thread only
        self._queued: set[int] = set()
        self._queue_was_full = False
        self.edge_workers: dict[str, EdgeWorker] = {}
        self._inline_handlers: dict[str, EdgeHandler] = {"api_versions": self._api_versions}
        # SocketServer.startup(startProcessingRequests): a broker binds at once (its registration names the bound
        # ports) but reads no request before start-up ends; until then accepted connections are held unread
        self._processing = processing
        # Kafka's client quotas, measured and enforced on the answers (None: no quotas, as before any is set)
        self.client_quotas = client_quotas
        # the connections a throttle mutes, for the sweep that reads them again once it is over (ThrottledChannel's
        # EndThrottlingResponse); whether a connection is muted is Inbound.mute's answer alone
        self._throttled: dict[int, Conn] = {}

    # -- from any thread --------------------------------------------------------------------------------------------
    def add_edge_handler(self, name: str, handler: EdgeHandler) -> None:
        if name in self.edge_workers or name in self._inline_handlers:
            raise ValueError(f"edge handler {name!r} is already set")
        self.edge_workers[name] = EdgeWorker(self, name, handler)

    def reply(self, connection_id: int, request_id: int, body: Any) -> None:
        """Answer request ``request_id`` with the internal response ``body``; dropped if its connection has gone. A
        response that cannot be encoded closes the connection (Kafka's client would wait for it for ever)."""
        inflight = self.inflight.pop(request_id, None)
        if inflight is None:
            log.debug("%s: reply %d for a closed connection dropped", self.name, request_id)
            return
        frame, throttle_ms = self._quota_frame(inflight, body)
        self.loop.submit(("reply", inflight.conn_id, request_id, frame, throttle_ms))
        task = inflight.spec.edge_task(body) if inflight.spec.edge_task is not None else None
        if task is not None:
            self._run_edge_task(inflight, *task)

    def reply_error(self, connection_id: int, request_id: int, error: int) -> None:
        """Answer the request with its API's whole-request error response (``error_response``)."""
        inflight = self.inflight.pop(request_id, None)
        if inflight is None:
            return
        self.loop.submit(("reply", inflight.conn_id, request_id,
                          None if inflight.silent else self._error_frame(inflight, error), 0))

    def update_client_quota(self, change: ClientQuotaConfigChanged) -> None:
        """A quota entity's new configuration (the "net" actor's ClientQuotaConfigChanged)."""
        if self.client_quotas is not None:
            self.client_quotas.update(change)

    def close_workers(self) -> None:
        for worker in self.edge_workers.values():
            worker.close()
        if self._sasl_worker is not None:
            self._sasl_worker.close()

    def _sasl_reply(self, conn_id: int, rid: int, frame: bytes | bytearray | FailedAuthentication | None) -> None:
        """The SASL thread's answer to a token (None: close the connection; FailedAuthentication: its delayed close)."""
        self.loop.submit(("reply", conn_id, rid, frame, 0))

    # -- commands and events on the I/O thread ---------------------------------------------------------------------
    def on_reply(self, conn_id: int, rid: int, frame: bytes | bytearray | FailedAuthentication | None,
                 throttle_ms: int) -> Conn | None:
        """The "reply" command: the connection to write to now, if it is still open."""
        conn = self.conns.get(conn_id)
        if conn is None:
            log.debug("%s: reply for closed connection %d dropped", self.name, conn_id)
            return None
        if isinstance(frame, FailedAuthentication):  # a token refused: held, not written now
            self._fail_authentication(conn, frame.frame, f"SASL authentication of {conn.peer} failed: "
                                                         f"{frame.reason}")
            return None
        self.answer(conn, rid, frame)
        self._throttle(conn, throttle_ms)
        if conn.sasl is not None and not conn.closed:
            self._after_token(conn)
        return None if conn.closed else conn

    def _after_token(self, conn: Conn) -> None:
        """A token's answer is queued: the connection authenticated (its principal set, its requests served from
        now on) or, after a failure, closed once the answer is written (Kafka's FAILED state)."""
        auth = conn.sasl
        if auth.complete:
            conn.principal = auth.principal
            conn.sasl_mechanism = auth.mechanism
            conn.session_expiry_ms = auth.session_expiry_ms
            conn.sasl = None
        elif auth.failed:
            self._close_after_flush(conn, f"SASL authentication of {conn.peer} failed")

    def start(self) -> None:
        """SocketServer.startProcessingRequests: read the connections accepted meanwhile too."""
        if self._processing:
            return
        self._processing = True
        for conn in list(self.conns.values()):
            self.loop.guarded(conn, self.serve, self.close)

    def stop(self) -> None:
        """SocketServer.stopProcessingRequests: no more connections, every client's closed."""
        self._processing = False
        for sock, _ in self._listeners:
            self.loop.unregister_listener(sock)
        for conn in list(self.conns.values()):
            self.close(conn, "the broker is shutting down")
        log.info("%s: stopped processing requests", self.name)

    def after_commands(self) -> None:
        """Once queued.max.requests is no longer reached, the connections it held are read again."""
        if self._queue_was_full and len(self._queued) < self.queued_max_requests:
            self._queue_was_full = False
            for conn in list(self.conns.values()):
                self.loop.guarded(conn, self.serve, self.close)

    def sweep(self, now: float) -> None:
        """Selector.completeDelayedChannelClose: the failed authentications whose delay is over are answered and
        closed; EndThrottlingResponse: the connections whose throttle is over are read again."""
        for delayed in self._delayed_closes.values():
            if delayed:
                for conn, frame, reason in delayed.pop_due():
                    self._close_failed_authentication(conn, frame, reason)
        if not self._throttled:
            return
        now_ms = now * 1000.0
        for conn in list(self._throttled.values()):
            if not conn.throttle.muted(now_ms):
                del self._throttled[conn.conn_id]
                self.loop.guarded(conn, self.serve, self.close)

    def accept(self, listener: socket.socket) -> None:
        while True:
            try:
                sock, addr = listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:  # e.g. EMFILE: keep serving the connections we have
                log.error("%s: accept failed: %s", self.name, e)
                return
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            name = self._listener_names.get(listener, "")
            context = self._tls.get(name)
            if context is None:
                conn = Conn(next(self._conn_ids), sock, False, None, f"{addr[0]}:{addr[1]}", name, str(addr[0]))
                self._start_sasl(conn)
            else:
                try:
                    conn = accept_tls(context, sock, next(self._conn_ids), f"{addr[0]}:{addr[1]}", name,
                                      str(addr[0]))
                except (OSError, ValueError) as e:
                    log.info("%s: Failed authentication with %s:%s (SSL handshake failed: %s)", self.name, addr[0],
                             addr[1], e)
                    sock.close()
                    continue
                self._start_sasl(conn)
                self.conns[conn.conn_id] = conn
                self.loop.guarded(conn, self._handshake, self.close)
                continue
            self.conns[conn.conn_id] = conn
            self.update_interest(conn)

    def _start_sasl(self, conn: Conn) -> None:
        """A connection of a SASL listener gets its authenticator (SaslChannelBuilder.buildChannel)."""
        sasl = self._sasl.get(conn.listener)
        if sasl is not None:
            conn.sasl = SaslServerAuthenticator(sasl, self._scram_credentials)

    def _handshake(self, conn: TlsConn) -> None:
        """SslTransportLayer.handshake, one step on readiness: the I/O thread never waits on it. A failed one
        closes the connection with Kafka's log line (Selector: "Failed authentication with ... (SSL handshake
        failed)"); a finished one is read as any connection."""
        try:
            events = conn.handshake()
        except (ssl.SSLError, OSError) as e:
            log.info("%s: Failed authentication with %s (SSL handshake failed: %s)", self.name, conn.peer,
                     getattr(e, "reason", None) or e)
            self.close(conn, f"SSL handshake with {conn.peer} failed: {e}")
            return
        if events:
            self.loop.set_events(conn, events)
            return
        log.debug("%s: SSL handshake with %s on %s done: principal %s", self.name, conn.peer, conn.listener,
                  conn.principal)
        self.serve(conn)

    def on_event(self, conn: Conn, mask: int) -> None:
        if conn.handshaking:
            self.loop.guarded(conn, self._handshake, self.close)  # type: ignore[arg-type]
            return
        if mask & selectors.EVENT_WRITE and not conn.closed:
            self.loop.guarded(conn, self.flush, self.close)
        if mask & selectors.EVENT_READ and not conn.closed and conn.close_after is None:
            self.loop.guarded(conn, self._read, self.close)

    def close(self, conn: Conn, reason: str) -> None:
        if self.loop.close_socket(conn):
            self.conns.pop(conn.conn_id, None)
            self._throttled.pop(conn.conn_id, None)
            if conn.sasl is not None and conn.listener in self._delayed_closes:
                self._delayed_closes[conn.listener].discard(conn.conn_id)
            self._forget_waiting(conn)  # answers still owed: dropped when they come

    # -- reading one request at a time -----------------------------------------------------------------------------
    def flush(self, conn: Conn) -> None:
        """Write what is queued; once every answer is written the connection is read again."""
        conn.write()
        if conn.close_after is not None:
            self.update_interest(conn)
        else:
            self.serve(conn)

    def mute(self, conn: Conn) -> Mute | None:
        """Why the connection is not read now, None when it may be. Kafka's Processor mutes a channel from the
        moment a request is read until its response has been sent (so a connection has one request in flight,
        handled and answered in order, and a client that never reads costs one answer, not a queue of them), and
        for a client quota's throttle (KIP-219); it reads no channel while the request queue holds
        queued.max.requests, nor before start-up ends."""
        if conn.handshaking:
            return Mute.HANDSHAKE
        if not self._processing:
            return Mute.NOT_STARTED
        if conn.sasl is not None and self._authentication_failed(conn):
            return Mute.AUTHENTICATION_FAILED
        if conn.close_after is not None:
            return Mute.CLOSING
        if conn.waiting or conn.out:
            return Mute.RESPONSE_PENDING
        if conn.throttle.until_ms and conn.throttle.muted(_now_ms()):
            return Mute.THROTTLED
        if len(self._queued) >= self.queued_max_requests and self._client_request_next(conn):
            return Mute.QUEUE_FULL
        return None

    @staticmethod
    def _client_request_next(conn: Conn) -> bool:
        """Whether the next request of ``conn`` has wholly arrived and is a client's. Once the queue is full a
        connection is still read until its next request is whole, and that request is handed on if it is
        inter-broker traffic: so a follower's fetch is never held behind the client requests parked in purgatories
        (Kafka counts only requests waiting for a handler thread, which a parked one no longer is)."""
        buf, off = conn.rbuf, conn.roff
        if len(buf) - off < HEADER.size:
            return False
        (n,) = HEADER.unpack_from(buf, off)
        start = off + HEADER.size
        if n < 0 or len(buf) - start < n:
            return False  # not whole yet (or a bad size, which cutting the frame refuses)
        return not inter_broker_request(buf, start, start + n)

    def _may_read(self, conn: Conn) -> bool:
        return self.mute(conn) is None

    def update_interest(self, conn: Conn) -> None:
        """Writable while it has bytes queued; readable while it may be read (a TLS handshake sets its own)."""
        if conn.closed or conn.handshaking:
            return
        if conn.sasl is not None and self._authentication_failed(conn):
            self.loop.set_events(conn, 0)  # neither read nor written until its delayed close
            return
        if conn.close_after is not None:
            if not conn.out:
                self.close(conn, conn.close_after)
            else:
                self.loop.set_events(conn, selectors.EVENT_WRITE)
            return
        events = selectors.EVENT_WRITE if conn.out else 0
        if self._may_read(conn):
            events |= selectors.EVENT_READ
        self.loop.set_events(conn, events)

    def _read(self, conn: Conn) -> None:
        if not self._may_read(conn):
            return  # muted since the select: what arrived stays in the socket
        data = conn.receive()
        if data is None:
            return
        if not data:
            self.close(conn, f"connection to {conn.peer} closed by the peer")
            return
        self.serve(conn)

    def serve(self, conn: Conn) -> None:
        """Hand on the requests read from the connection one at a time: the next only once the answer to the one
        before has been written (answers written at once if the socket takes them)."""
        while not conn.closed:
            if conn.out:
                conn.write()
            if not self._may_read(conn):
                break
            try:
                cut = cut_frame(conn.rbuf, conn.roff,
                                self.max_request_bytes if conn.sasl is None else MAX_RECEIVE_SIZE)
            except FrameTooLargeError as e:
                if conn.sasl is not None:
                    # SaslServerAuthenticator: "Failing SASL authentication due to invalid receive size"
                    log.info("%s: Failed authentication with %s (Failing SASL authentication due to invalid receive "
                             "size: %s)", self.name, conn.peer, e)
                    self.close(conn, f"SASL frame from {conn.peer} too large")
                    return
                # a TLS record of a handshake (0x16, version 3.x) read as a size: name the likely cause
                if conn.rbuf[conn.roff:conn.roff + 2] == b"\x16\x03" and not isinstance(conn, TlsConn):
                    raise FrameTooLargeError(f"{e}: a TLS handshake to the PLAINTEXT listener {conn.listener}?") from e
                raise
            if cut is None:
                break
            payload, conn.roff = cut
            self.on_request(conn, payload)
        self.update_interest(conn)

    # -- one request: KafkaApis.handle's dispatch -------------------------------------------------------------------
    def on_request(self, conn: Conn, payload: bytes) -> None:
        """KafkaApis.handle for one request frame: decode, convert, route (or close the connection, as 2.6)."""
        started_ns = time.perf_counter_ns()
        if conn.sasl is not None and not conn.sasl.kafka_headers:
            self._sasl_raw(conn, payload)
            return
        try:
            request = decode_inbound(payload)
        except UnsupportedVersionError as e:
            header = e.header
            if isinstance(header, RequestHeader) and header.request_api_key == ApiKeys.API_VERSIONS:
                rid = next(self._rids)
                self._expect_answer(conn, rid, queued=True)
                self.answer(conn, rid, api_versions_unsupported_response(header.correlation_id))
                return
            raise  # Kafka 2.6: "Unsupported version" InvalidRequestException -> the connection is closed
        header, body = request.header, request.body
        key, version = header.request_api_key, header.request_api_version
        spec = spec_for_key(key)
        if spec is None:
            raise BadRequestError(f"api key {key} is not served by this broker")
        if conn.sasl is None and conn.sasl_mechanism and not self._session_goes_on(conn, key):
            return
        if conn.sasl is not None and not self._sasl_frame(conn, spec, header, body):
            return
        ctx = RequestContext(version, header.correlation_id, header.client_id or "", conn.host, conn.conn_id,
                             conn.listener, self.cluster_id, self.auto_create, conn.principal)
        # reply_expected from here on: the route answers (also an acks=0 produce, whose answer only this edge reads)
        silent = not spec.expects_reply(version, body)
        reply_expected = spec.route_answers(version, body)
        rid = next(self._rids)
        inflight = InFlight(conn.conn_id, spec, version, header.correlation_id, body, silent, header.client_id or "",
                            len(payload), conn.principal if conn.sasl is None else None)
        if reply_expected:
            self.inflight[rid] = inflight
            self._expect_answer(conn, rid, queued=not inter_broker_request(payload, 0, len(payload)))
        try:
            internal = spec.request_from_wire(version, body, ctx)
        except Exception as e:  # noqa: BLE001 - a request the converter refuses: Kafka's error answer for it
            log.info("%s: %s v%d from %s refused: %s", self.name, spec.name, version, conn.peer, e)
            if reply_expected:
                self.inflight.pop(rid, None)
                self.answer(conn, rid, None if silent else self._error_frame(inflight, error_code_of(e)))
            return
        inflight.net_ns = time.perf_counter_ns() - started_ns
        handler = spec.edge_handler
        if handler is not None:
            inline = self._inline_handlers.get(handler)
            if inline is not None:
                if reply_expected:
                    self.inflight.pop(rid, None)
                    response = inline(ctx, internal)
                    inflight.net_ns = time.perf_counter_ns() - started_ns
                    frame, throttle_ms = self._quota_frame(inflight, response)
                    self.answer(conn, rid, frame)
                    self._throttle(conn, throttle_ms)
                return
            worker = self.edge_workers.get(handler)
            if worker is None:
                self._unserved(conn, rid, reply_expected, f"no edge handler {handler!r} for {spec.name}")
                return
            worker.submit(conn.conn_id, rid, ctx, internal)
            return
        route = actor_for(spec.route)
        if not self._has_actor(route):
            self._unserved(conn, rid, reply_expected, f"no actor {route!r} for {spec.name}")
            return
        # An external input: the request's cause lives in the client's process.
        self.loop.inject(route, NetRequest(conn.conn_id, rid, internal, reply_expected, version,
                                           header.client_id or "", conn.host), None)

    # -- SASL: SaslServerAuthenticator before authentication ---------------------------------------------------------
    def _session_goes_on(self, conn: Conn, api_key: int) -> bool:
        """SocketServer.Processor.processCompletedReceives on an authenticated SASL connection (KIP-368): a
        SaslHandshake begins a re-authentication when the session has an expiry and none began in the last second
        (KafkaChannel.maybeBeginServerReauthentication); otherwise a request after the session's expiry closes the
        connection ("Disconnecting expired channel"). False when the request is not to be served."""
        now = monotonic_ms()
        if api_key == SASL_HANDSHAKE and may_begin_reauthentication(conn.session_expiry_ms, conn.reauth_started_ms,
                                                                     now):
            conn.reauth_started_ms = now
            conn.sasl = SaslServerAuthenticator(self._sasl[conn.listener], self._scram_credentials,
                                                previous=(conn.sasl_mechanism, conn.principal))
            log.info("%s: beginning re-authentication of %s (%s)", self.name, conn.peer, conn.principal)
            return True
        if session_expired(conn.session_expiry_ms, now):
            log.info("%s: Disconnecting expired channel %s (%s): its SASL session ended %.0f ms ago", self.name,
                     conn.peer, conn.principal, now - (conn.session_expiry_ms or now))
            self.close(conn, "SASL session expired")
            return False
        return True

    def _sasl_frame(self, conn: Conn, spec: ApiSpec, header: RequestHeader, body: dict[str, Any]) -> bool:
        """A request of a connection not yet authenticated: whether it is dispatched as on any listener (ApiVersions);
        otherwise it is answered here, handed to the SASL thread, or closes the connection."""
        version, correlation_id = header.request_api_version, header.correlation_id
        step = conn.sasl.frame(header.request_api_key, version, body)
        if step.kind is StepKind.DISPATCH:
            return True
        if step.kind is StepKind.CLOSE:
            log.info("%s: Failed authentication with %s (%s)", self.name, conn.peer, step.reason)
            self._fail_authentication(conn, None, step.reason)
            return False
        rid = next(self._rids)
        self._expect_answer(conn, rid, queued=False)
        if step.kind is StepKind.EVALUATE:
            assert self._sasl_worker is not None
            self._sasl_worker.submit(conn.conn_id, rid, conn.sasl, step.token, version, correlation_id, conn.peer)
            return False
        wire = (spec.error_response(version, body, step.error) if step.body is None
                else fit_response(spec.api_key, version, step.body))
        frame = encode_inbound_response(spec, version, correlation_id, wire)
        if step.kind is StepKind.ANSWER_AND_CLOSE:  # buildResponseOnAuthenticateFailure: sent after the delay
            log.info("%s: Failed authentication with %s (%s)", self.name, conn.peer, step.reason)
            self._fail_authentication(conn, frame, step.reason)
            return False
        self.answer(conn, rid, frame)
        return False

    def _sasl_raw(self, conn: Conn, token: bytes) -> None:
        """A frame after a v0 SaslHandshake: the mechanism's token without Kafka's request header."""
        step = conn.sasl.raw(token)
        if step.kind is not StepKind.EVALUATE:
            log.info("%s: Failed authentication with %s (%s)", self.name, conn.peer, step.reason)
            self._fail_authentication(conn, None, step.reason)
            return
        rid = next(self._rids)
        self._expect_answer(conn, rid, queued=False)
        assert self._sasl_worker is not None
        self._sasl_worker.submit(conn.conn_id, rid, conn.sasl, step.token, None, 0, conn.peer)

    def _authentication_failed(self, conn: Conn) -> bool:
        """Whether ``conn`` (of a SASL listener) is held for its failed authentication's delayed close."""
        delayed = self._delayed_closes.get(conn.listener)
        return delayed is not None and conn.conn_id in delayed

    def _fail_authentication(self, conn: Conn, frame: bytes | bytearray | None, reason: str) -> None:
        """KafkaChannel.prepare's AuthenticationException on a SASL connection (DelayedResponseAuthenticationException):
        the failure's answer (``frame``; None: none) and the close are delayed by
        connection.failed.authentication.delay.ms (Selector.maybeDelayCloseOnAuthenticationFailure, KIP-306); the
        connection is neither read nor written meanwhile (delayCloseOnAuthenticationFailure), the I/O thread goes on
        with the others. A delay of 0 answers and closes at once."""
        self._forget_waiting(conn)  # the rid of the failed request: this answer replaces it
        delayed = self._delayed_closes.get(conn.listener)
        if delayed is None or delayed.delay_ms <= 0:
            self._close_failed_authentication(conn, frame, reason)
            return
        delayed.add(conn.conn_id, (conn, frame, reason))
        self.loop.set_events(conn, 0)

    def _close_failed_authentication(self, conn: Conn, frame: bytes | bytearray | None, reason: str) -> None:
        """Selector.handleCloseOnAuthenticationFailure: the failure's answer written, then the connection closed."""
        if conn.closed:
            return
        if frame:
            conn.out.append(frame)
        self._close_after_flush(conn, reason)
        if not conn.closed:
            self.loop.guarded(conn, self.flush, self.close)

    def _unserved(self, conn: Conn, rid: int, reply_expected: bool, why: str) -> None:
        """A request nobody in this process can serve (a broker not started or stopping, a wiring bug): the
        connection is closed, as Kafka's stopped SocketServer closes it, never answered UNKNOWN_SERVER_ERROR —
        clients take that as fatal (an idempotent producer fails its batch), a closed connection as retriable."""
        log.error("%s: %s; closing the connection from %s", self.name, why, conn.peer)
        if reply_expected:
            self.inflight.pop(rid, None)
            self.answer(conn, rid, None)
        else:
            self._close_after_flush(conn, f"closing the connection from {conn.peer}: {why}")

    # -- answers, in request order ------------------------------------------------------------------------------------
    def answer(self, conn: Conn, rid: int, frame: bytes | None) -> None:
        """An answer for request ``rid``: queued behind the answers still owed to earlier requests of the
        connection (Kafka answers a connection's requests in order). None closes the connection."""
        conn.ready[rid] = frame
        waiting, ready = conn.waiting, conn.ready
        while waiting and waiting[0] in ready:
            answered = waiting.popleft()
            f = ready.pop(answered)
            self._queued.discard(answered)
            if f is None:
                self._close_after_flush(conn, f"closing the connection from {conn.peer} instead of answering")
                return
            if f:
                conn.out.append(f)

    def _expect_answer(self, conn: Conn, rid: int, queued: bool) -> None:
        """A request of ``conn`` handed on: the connection is muted until its answer has been written. ``queued``:
        it takes a place in queued.max.requests until then (a client's request; inter-broker ones take none)."""
        conn.waiting.append(rid)
        if queued:
            self._queued.add(rid)
            if len(self._queued) >= self.queued_max_requests:
                self._queue_was_full = True

    def _close_after_flush(self, conn: Conn, reason: str) -> None:
        """Close once the answers queued before are written (Kafka wrote them before it read the request that
        closes): nothing more is read or answered on the connection meanwhile."""
        self._forget_waiting(conn)
        if not conn.out:
            self.close(conn, reason)
            return
        conn.close_after = reason
        self.loop.set_events(conn, selectors.EVENT_WRITE)

    def _forget_waiting(self, conn: Conn) -> None:
        """The answers a connection is still owed will not be written: dropped when they come."""
        for rid in conn.waiting:
            self.inflight.pop(rid, None)
            self._queued.discard(rid)
        conn.waiting.clear()
        conn.ready.clear()

    # -- client quotas: measured on each answer, enforced by muting the connection (KIP-219) -----------------------
    def _quota_frame(self, inflight: InFlight, response: Any) -> tuple[bytes | None, int]:
        """The answer's frame (as _silent_frame / _response_frame) with the client quotas applied: its
        throttle_time_ms set, and the time to mute the connection for (core/quota/enforcement.py)."""
        quotas, principal = self.client_quotas, inflight.principal
        if inflight.silent:
            frame = self._silent_frame(inflight, response)
            if quotas is None or principal is None or frame is None:
                return frame, 0
            return frame, quotas.silent(inflight.spec.api_key, inflight.client_id, inflight.size, inflight.body,
                                        inflight.net_ns, principal)
        if quotas is None or principal is None:
            return self._response_frame(inflight, response), 0
        try:
            wire = inflight.spec.response_to_wire(inflight.version, response)
            return quotas.answer(inflight.spec.api_key, inflight.client_id, wire, inflight.size, inflight.body,
                                 inflight.net_ns, lambda body: encode_inbound_response(
                                     inflight.spec, inflight.version, inflight.correlation_id, body), principal)
        except Exception:  # noqa: BLE001 - our own bug: the connection is closed rather than left waiting
            log.exception("%s: cannot encode a %s v%d response", self.name, inflight.spec.name, inflight.version)
            return None, 0

    def _throttle(self, conn: Conn, throttle_ms: int) -> None:
        """Mute ``conn`` for a throttle from now, its answer being queued already (ThrottledChannel's
        StartThrottlingResponse); overlapping throttles extend the mute. The connection's interest is updated by
        whoever writes that answer (``serve``)."""
        if throttle_ms <= 0 or conn.closed:
            return
        conn.throttle = conn.throttle.throttled(_now_ms(), throttle_ms)
        self._throttled[conn.conn_id] = conn

    def _silent_frame(self, inflight: InFlight, response: Any) -> bytes | None:
        """KafkaApis.handleProduceRequest for acks=0: an answer with an error closes the connection (None), so the
        client notices and refreshes its metadata; a clean one is dropped."""
        try:
            failed = inflight.spec.failed is not None and inflight.spec.failed(response)
        except Exception:  # noqa: BLE001 - an answer we cannot read: closing is what an error would do
            log.exception("%s: cannot read a %s answer", self.name, inflight.spec.name)
            failed = True
        if not failed:
            return _NO_RESPONSE
        log.info("%s: closing connection %d due to an error during %s request with correlation id %d from client id "
                 "%s with ack=0: %r", self.name, inflight.conn_id, inflight.spec.name, inflight.correlation_id,
                 inflight.client_id, response)
        return None

    def _response_frame(self, inflight: InFlight, response: Any) -> bytes | None:
        try:
            wire = inflight.spec.response_to_wire(inflight.version, response)
            return encode_inbound_response(inflight.spec, inflight.version, inflight.correlation_id, wire)
        except Exception:  # noqa: BLE001 - our own bug: the connection is closed rather than left waiting
            log.exception("%s: cannot encode a %s v%d response", self.name, inflight.spec.name, inflight.version)
            return None

    def _error_frame(self, inflight: InFlight, error: int) -> bytes | None:
        """AbstractRequest.getErrorResponse: the whole request answered with ``error``; None (close) when even
        that cannot be built."""
        try:
            wire = inflight.spec.error_response(inflight.version, inflight.body, error)
            return encode_inbound_response(inflight.spec, inflight.version, inflight.correlation_id, wire)
        except Exception:  # noqa: BLE001
            log.exception("%s: cannot build the %s v%d error response", self.name, inflight.spec.name,
                          inflight.version)
            return None

    def _run_edge_task(self, inflight: InFlight, handler: str, request: Any) -> None:
        worker = self.edge_workers.get(handler)
        if worker is None:
            log.error("%s: no edge handler %r for the work a %s answer asks for", self.name, handler,
                      inflight.spec.name)
            return
        worker.submit(inflight.conn_id, None, RequestContext(inflight.version, inflight.correlation_id,
                                                             inflight.client_id), request)

    @staticmethod
    def _api_versions(ctx: RequestContext, request: Any) -> Any:
        return api_versions_api.handle_api_versions_request(request, ctx.api_version)

    def _has_actor(self, name: str) -> bool:
        has = getattr(self._runtime, "has_actor", None)
        return True if has is None else bool(has(name))
