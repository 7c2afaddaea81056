"""The broker's side of the network edge: Kafka's SocketServer Processor and the dispatch of KafkaApis.handle.

A request frame is decoded (header + body), its api key looked up in the core/api registry, the body turned into an
internal attrs request by the spec's ``request_from_wire`` and routed by the spec's ``route`` — to the actor of its
component (actors.core_effects.actor_for) as a traced ``NetRequest`` (answered by ``NetReply`` posted to "net"), or
to an edge handler ("edge:<name>", edges/net/edge_workers.py: on its own thread; ApiVersions inline, it needs no
state). Answers leave through the spec's ``response_to_wire``.

ONE REQUEST IN FLIGHT PER CONNECTION, as the Processor mutes a channel from the moment it reads a request until its
response has been sent: a connection is not read further until its request's answer is written to the socket, so its
requests are handled and answered in order and a client that never reads costs the broker one answer; with
``queued.max.requests`` client requests handed on and unanswered over all connections, no connection's next client
request is read (Kafka's full RequestChannel); inter-broker requests (a follower's Fetch, the controller's
LeaderAndIsr / UpdateMetadata / StopReplica, ControlledShutdown) are neither held back nor counted, so a produce
parked for its followers can always be completed by them. Every reason a connection is not read (a client quota's
throttle too) is one ``Mute`` of one model (``Inbound.mute``), as Kafka's ChannelMuteState.

Produce with acks=0 is never answered, but its route's answer comes back here (and releases the connection): a
clean one is dropped, an error closes the connection (KafkaApis.handleProduceRequest's closeConnection; the spec's
``failed``). An answer may ask an edge for work after it is sent (the spec's ``edge_task``: Metadata's topic
auto-creation), handed to that edge handler's thread.

Nothing is read before start-up ends (``start``: SocketServer.startProcessingRequests); ``stop`` closes every client
connection and the listeners (stopProcessingRequests). A request for an actor or edge handler this process lacks
closes its connection: it is never answered UNKNOWN_SERVER_ERROR, which clients take as fatal. Bad input closes that
connection only, as Kafka 2.6 does: a size above ``socket.request.max.bytes`` (or negative), a truncated or malformed
request, an unknown api key or one this broker does not serve, an unsupported version of any API but ApiVersions.
Everything else — an impossible request, a corrupt record batch — is answered with Kafka's error by its handler.

The connection layers under this dispatch, each its own module, are met only by the connections that have them:
TLS (tls.py's TlsLayer: SslTransportLayer's handshake), SASL (sasl_layer.py: SaslServerAuthenticator, KIP-368's
re-authentication, KIP-306's delayed close), client quotas (quota_layer.py: sendResponseMaybeThrottle, KIP-219).
"""

from __future__ import annotations

import enum
import itertools
import logging
import selectors
import socket
import ssl
import time
from collections.abc import Callable
from typing import Any

from actors.core_effects import actor_for
from core.api.registry import RequestContext, spec_for_key
from core.security.sasl import MAX_RECEIVE_SIZE, ListenerSasl
from core.security.scram import ScramCredential, ScramMechanism
from edges.client_quotas import ClientQuotas
from edges.net.acceptor import Acceptor
from edges.net.answers import InFlight, error_frame
from edges.net.edge_workers import EdgeHandler, EdgeHandlers
from edges.net.framing import (
    HEADER,
    BadRequestError,
    cut_frame,
    decode_inbound,
    error_code_of,
    inter_broker_request,
)
from edges.net.quota_layer import QuotaLayer
from edges.net.quota_layer import now_ms as _now_ms
from edges.net.sasl import FailedAuthentication
from edges.net.sasl_layer import SaslLayer
from edges.net.selector import Conn, Loop
from edges.net.tls import TlsLayer, tls_to_plaintext
from messages.metadata import AutoCreateConfig
from messages.net import NetRequest
from messages.quota import ClientQuotaConfigChanged
from protocol.api_versions import ApiKeys
from protocol.errors import FrameTooLargeError, UnsupportedVersionError
from protocol.framing import RequestHeader, api_versions_unsupported_response

log = logging.getLogger("kactor.edges.transport")

__all__ = ["EdgeHandler", "InFlight", "Inbound", "Mute"]


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
        self._rids = itertools.count(1)
        # the connection layers under this dispatch: TLS, SASL authentication, client quotas
        self.tls = TlsLayer(name, loop, tls, self.close, self.serve)
        self.auth = SaslLayer(name, loop, self._rids, self, sasl, scram_credentials)
        self.quotas = QuotaLayer(name, client_quotas)
        # the quota layer's two calls on every answer, bound once: a request's path makes no more look-ups than it
        # made before the layers were split out of this class (the callgrind count of issue #42)
        self._quota_frame, self._throttle = self.quotas.frame, self.quotas.throttle
        self.acceptor = Acceptor(name, listeners, conn_ids, self.tls)
        self.max_request_bytes = max_request_bytes
        self.queued_max_requests = queued_max_requests
        self.cluster_id = cluster_id
        self.auto_create = auto_create
        self.conns: dict[int, Conn] = {}
        # requests being handled, by our request id (written by the I/O thread before the request is handed on;
        # popped by whoever answers: dict operations are atomic)
        self.inflight: dict[int, InFlight] = {}
        # the client requests handed on and not answered yet, over every connection, by request id (Kafka's
        # RequestChannel queue, queued.max.requests long: when it is full no client request is read; inter-broker
        # requests take no place in it); touched by the I/O thread only
        self._queued: set[int] = set()
        self._queue_was_full = False
        self.edges = EdgeHandlers(self)
        self._inline_handlers = self.edges.inline
        # SocketServer.startup(startProcessingRequests): a broker binds at once (its registration names the bound
        # ports) but reads no request before start-up ends; until then accepted connections are held unread
        self._processing = processing

    @property
    def client_quotas(self) -> ClientQuotas | None:
        """The client quota managers the answers are measured by (the quota layer's; None: no quotas)."""
        return self.quotas.client_quotas

    # -- from any thread --------------------------------------------------------------------------------------------
    def add_edge_handler(self, name: str, handler: EdgeHandler) -> None:
        self.edges.add(name, handler)

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
            self.edges.run_task(inflight.conn_id, RequestContext(inflight.version, inflight.correlation_id,
                                                                 inflight.client_id), inflight.spec.name, *task)

    def reply_error(self, connection_id: int, request_id: int, error: int) -> None:
        """Answer the request with its API's whole-request error response (``error_response``)."""
        inflight = self.inflight.pop(request_id, None)
        if inflight is None:
            return
        self.loop.submit(("reply", inflight.conn_id, request_id,
                          None if inflight.silent else error_frame(self.name, inflight, error), 0))

    def update_client_quota(self, change: ClientQuotaConfigChanged) -> None:
        """A quota entity's new configuration (the "net" actor's ClientQuotaConfigChanged)."""
        self.quotas.update(change)

    def close_workers(self) -> None:
        self.edges.close()
        self.auth.close_workers()

    # -- commands and events on the I/O thread ---------------------------------------------------------------------
    def on_reply(self, conn_id: int, rid: int, frame: bytes | bytearray | FailedAuthentication | None,
                 throttle_ms: int) -> Conn | None:
        """The "reply" command: the connection to write to now, if it is still open."""
        conn = self.conns.get(conn_id)
        if conn is None:
            log.debug("%s: reply for closed connection %d dropped", self.name, conn_id)
            return None
        if isinstance(frame, FailedAuthentication):  # a token refused: held, not written now
            self.auth.fail(conn, frame.frame, f"SASL authentication of {conn.peer} failed: {frame.reason}")
            return None
        self.answer(conn, rid, frame)
        self._throttle(conn, throttle_ms)
        if conn.sasl is not None and not conn.closed:
            self.auth.after_token(conn)
        return None if conn.closed else conn

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
        self.auth.sweep()
        for conn in self.quotas.unthrottled(now * 1000.0):
            self.loop.guarded(conn, self.serve, self.close)

    def accept(self, listener: socket.socket) -> None:
        """SocketServer.Acceptor then Processor.configureNewConnections: a SASL listener's connection gets its
        authenticator, an SSL listener's begins its handshake, a PLAINTEXT one is read."""
        for conn in self.acceptor.accept(listener):
            self.auth.start(conn)
            self.conns[conn.conn_id] = conn
            if conn.handshaking:
                self.loop.guarded(conn, self.tls.handshake, self.close)  # type: ignore[arg-type]
            else:
                self.update_interest(conn)

    def on_event(self, conn: Conn, mask: int) -> None:
        if conn.handshaking:
            self.loop.guarded(conn, self.tls.handshake, self.close)  # type: ignore[arg-type]
            return
        if mask & selectors.EVENT_WRITE and not conn.closed:
            self.loop.guarded(conn, self.flush, self.close)
        if mask & selectors.EVENT_READ and not conn.closed and conn.close_after is None:
            self.loop.guarded(conn, self._read, self.close)

    def close(self, conn: Conn, reason: str) -> None:
        if self.loop.close_socket(conn):
            self.conns.pop(conn.conn_id, None)
            self.quotas.forget(conn)
            if conn.sasl is not None:
                self.auth.forget(conn)
            self.forget_waiting(conn)  # answers still owed: dropped when they come

    # -- reading one request at a time -----------------------------------------------------------------------------
    def flush(self, conn: Conn) -> None:
        """Write what is queued; once every answer is written the connection is read again."""
        conn.write()
        if conn.close_after is not None:
            self.update_interest(conn)
        else:
            self.serve(conn)

    def mute(self, conn: Conn) -> Mute | None:
        """Why the connection is not read now (the module's one request in flight), None when it may be."""
        if conn.handshaking:
            return Mute.HANDSHAKE
        if not self._processing:
            return Mute.NOT_STARTED
        if conn.sasl is not None and self.auth.failed(conn):
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
        if conn.sasl is not None and self.auth.failed(conn):
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
                    self.auth.too_large(conn, e)
                    return
                hint = tls_to_plaintext(conn, e)
                if hint is not None:
                    raise hint from e
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
            self.auth.raw(conn, payload)
            return
        try:
            request = decode_inbound(payload)
        except UnsupportedVersionError as e:
            header = e.header
            if isinstance(header, RequestHeader) and header.request_api_key == ApiKeys.API_VERSIONS:
                rid = next(self._rids)
                self.expect_answer(conn, rid, queued=True)
                self.answer(conn, rid, api_versions_unsupported_response(header.correlation_id))
                return
            raise  # Kafka 2.6: "Unsupported version" InvalidRequestException -> the connection is closed
        header, body = request.header, request.body
        key, version = header.request_api_key, header.request_api_version
        spec = spec_for_key(key)
        if spec is None:
            raise BadRequestError(f"api key {key} is not served by this broker")
        if conn.sasl is None and conn.sasl_mechanism and not self.auth.session_goes_on(conn, key):
            return
        if conn.sasl is not None and not self.auth.frame(conn, spec, header, body):
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
            self.expect_answer(conn, rid, queued=not inter_broker_request(payload, 0, len(payload)))
        try:
            internal = spec.request_from_wire(version, body, ctx)
        except Exception as e:  # noqa: BLE001 - a request the converter refuses: Kafka's error answer for it
            log.info("%s: %s v%d from %s refused: %s", self.name, spec.name, version, conn.peer, e)
            if reply_expected:
                self.inflight.pop(rid, None)
                self.answer(conn, rid, None if silent else error_frame(self.name, inflight, error_code_of(e)))
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
            worker = self.edges.workers.get(handler)
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

    def _unserved(self, conn: Conn, rid: int, reply_expected: bool, why: str) -> None:
        """A request nobody in this process can serve (a broker not started or stopping, a wiring bug): the
        connection is closed, as Kafka's stopped SocketServer closes it, never answered UNKNOWN_SERVER_ERROR —
        clients take that as fatal (an idempotent producer fails its batch), a closed connection as retriable."""
        log.error("%s: %s; closing the connection from %s", self.name, why, conn.peer)
        if reply_expected:
            self.inflight.pop(rid, None)
            self.answer(conn, rid, None)
        else:
            self.close_after_flush(conn, f"closing the connection from {conn.peer}: {why}")

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
                self.close_after_flush(conn, f"closing the connection from {conn.peer} instead of answering")
                return
            if f:
                conn.out.append(f)

    def expect_answer(self, conn: Conn, rid: int, queued: bool) -> None:
        """A request of ``conn`` handed on: the connection is muted until its answer has been written. ``queued``:
        it takes a place in queued.max.requests until then (a client's request; inter-broker ones take none)."""
        conn.waiting.append(rid)
        if queued:
            self._queued.add(rid)
            if len(self._queued) >= self.queued_max_requests:
                self._queue_was_full = True

    def close_after_flush(self, conn: Conn, reason: str) -> None:
        """Close once the answers queued before are written (Kafka wrote them before it read the request that
        closes): nothing more is read or answered on the connection meanwhile."""
        self.forget_waiting(conn)
        if not conn.out:
            self.close(conn, reason)
            return
        conn.close_after = reason
        self.loop.set_events(conn, selectors.EVENT_WRITE)

    def forget_waiting(self, conn: Conn) -> None:
        """The answers a connection is still owed will not be written: dropped when they come."""
        for rid in conn.waiting:
            self.inflight.pop(rid, None)
            self._queued.discard(rid)
        conn.waiting.clear()
        conn.ready.clear()

    def _has_actor(self, name: str) -> bool:
        has = getattr(self._runtime, "has_actor", None)
        return True if has is None else bool(has(name))
