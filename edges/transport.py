"""The network edge: Kafka's binary protocol over TCP — the broker's listeners and its own outbound requests.

`Transport` is the facade the rest of kactor uses (the ``net`` slot of ``runtime.edges``); the work is done by thin
layers in `edges.net`, each a module with one job:

- `edges.net.selector`: the one I/O thread of a process — a selector over its listeners, inbound and outbound
  connections and a wake-up socketpair; other threads hand it commands, so no actor waits on the network;
- `edges.net.framing`: frames cut from a connection's bytes (``socket.request.max.bytes``), requests and answers
  turned into frames by their ApiSpecs;
- `edges.net.inbound`: Kafka's SocketServer Processor + KafkaApis.handle's dispatch: one request in flight per
  connection, routed to an actor (a traced ``NetRequest``) or an edge handler, answered in order; nothing read
  before start-up ends (``start_processing_requests``), every client closed after the controlled shutdown
  (``stop_processing_requests``); client quotas applied to the answers and a throttled connection muted (KIP-219,
  with `edges.client_quotas`);
- `edges.net.outbound`: Kafka's NetworkClient: ``NetSend`` → ``NetResponse`` / ``NetSendFailed``;
- `edges.net.blocking_client`: one blocking connection for tools and tests (``request``, ``BlockingClient``).

Nothing is unpickled; the server binds 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import collections
import itertools
import logging
import socket
import ssl
from collections.abc import Callable
from typing import Any

from core.security.sasl import ListenerSasl
from core.security.sasl_client import SaslClientConfig
from core.security.scram import ScramCredential, ScramMechanism
from edges.client_quotas import ClientQuotas
from edges.net.blocking_client import DEFAULT_CONNECT_TIMEOUT_S, BlockingClient, TransportError, request
from edges.net.framing import (
    DEFAULT_MAX_RESPONSE_BYTES,
    HEADER,
    BadRequestError,
    decode_inbound,
    decode_outbound,
    encode_inbound_response,
    encode_outbound,
    error_code_of,
    outbound_spec,
)
from edges.net.inbound import EdgeHandler, Inbound
from edges.net.outbound import Outbound
from edges.net.selector import Conn, ListenError, Loop, bind_listeners
from edges.net_faults import FaultFile, endpoint
from messages.credentials import UserCredentialsChanged
from messages.metadata import AutoCreateConfig
from messages.quota import ClientQuotaConfigChanged
from protocol.framing import SOCKET_REQUEST_MAX_BYTES

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT_S", "DEFAULT_MAX_RESPONSE_BYTES", "DEFAULT_REQUEST_TIMEOUT_S", "HEADER",
    "QUEUED_MAX_REQUESTS", "BadRequestError", "BlockingClient", "EdgeHandler", "ListenError", "Transport",
    "TransportError", "decode_inbound", "decode_outbound", "encode_inbound_response", "encode_outbound",
    "error_code_of", "outbound_spec", "request",
]

log = logging.getLogger("kactor.edges.transport")

DEFAULT_REQUEST_TIMEOUT_S = 30.0  # Kafka's request.timeout.ms default
QUEUED_MAX_REQUESTS = 500  # queued.max.requests default


class Transport:
    """Kafka listeners + client connections for one process. The ``net`` slot of ``runtime.edges``.

    ``send``, ``reply``, ``close_destination``, ``start_processing_requests``, ``stop_processing_requests`` and
    ``close`` are thread-safe and never block on the network. ``listeners``: (host, port, listener name) of every
    socket to bind, the first being what ``host``/``port`` report; ``cluster_id`` is handed to request converters
    (Metadata answers with it). ``process_requests`` False holds accepted connections unread until
    ``start_processing_requests`` (a broker's start-up). ``client_quotas``: the quota managers the answers are
    measured by (None: no client quotas). ``tls``: listener name → the server context of each SSL listener
    (`edges.net.tls`); the other listeners are PLAINTEXT. ``client_tls``: the client context every outbound
    connection takes (an SSL inter-broker listener), None for PLAINTEXT. ``sasl``: listener name → the
    mechanisms of each SASL listener (a SASL_SSL one is in ``tls`` too); ``scram_credentials`` looks a SCRAM user's
    credential up (it may block: it is called on the SASL thread); ``client_sasl``: the mechanism and user every
    outbound connection authenticates with (a SASL inter-broker listener), None for none.
    """

    def __init__(self, runtime: Any, host: str = "127.0.0.1", port: int = 0, *,
                 max_request_bytes: int = SOCKET_REQUEST_MAX_BYTES,
                 queued_max_requests: int = QUEUED_MAX_REQUESTS,
                 max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
                 connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
                 request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S, fault_file: str | None = None,
                 listener_name: str = "PLAINTEXT",
                 extra_listeners: tuple[tuple[str, int] | tuple[str, int, str], ...] = (),
                 cluster_id: str = "", auto_create: AutoCreateConfig | None = None,
                 process_requests: bool = True, client_quotas: ClientQuotas | None = None,
                 tls: dict[str, ssl.SSLContext] | None = None, client_tls: ssl.SSLContext | None = None,
                 sasl: dict[str, ListenerSasl] | None = None, client_sasl: SaslClientConfig | None = None,
                 scram_credentials: Callable[[str, ScramMechanism], ScramCredential | None] | None = None) -> None:
        self._name = getattr(runtime, "process_name", "kactor")
        self._scram_credentials = scram_credentials
        # One server socket per broker listener (Kafka's SocketServer: an Acceptor each); all serve the same actors.
        wanted = [(host, port, listener_name)] + [(e[0], e[1], e[2] if len(e) > 2 else listener_name)  # type: ignore
                                                  for e in extra_listeners]
        listeners = bind_listeners(wanted)
        self._listeners = [sock for sock, _ in listeners]
        self._listener = self._listeners[0]  # the first listener's: what host and port report
        self.bound: tuple[tuple[str, int], ...] = tuple(s.getsockname()[:2] for s in self._listeners)
        self._host, self._port = self.bound[0]
        own = endpoint(self._host, self._port)
        faults = FaultFile(fault_file, own) if fault_file else FaultFile.from_env(own)
        self._loop = Loop(self._name, runtime, self._listeners, self)
        conn_ids = itertools.count(1)
        self.inbound = Inbound(self._loop, runtime, self._name, listeners, conn_ids,
                               max_request_bytes=max_request_bytes, queued_max_requests=queued_max_requests,
                               cluster_id=cluster_id, auto_create=auto_create or AutoCreateConfig(),
                               processing=process_requests, client_quotas=client_quotas, tls=tls, sasl=sasl,
                               scram_credentials=scram_credentials)
        self.outbound = Outbound(self._loop, self._name, conn_ids, faults, max_response_bytes=max_response_bytes,
                                 connect_timeout_s=connect_timeout_s, request_timeout_s=request_timeout_s,
                                 tls=client_tls, sasl=client_sasl)
        self._loop.start()
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
    def cluster_id(self) -> str:
        return self.inbound.cluster_id

    @property
    def auto_create(self) -> AutoCreateConfig:
        """The broker's auto.create.topics.enable etc., stamped into Metadata requests (as the cluster id)."""
        return self.inbound.auto_create

    @property
    def partitioned_from(self) -> frozenset[str]:
        """The ``host:port`` endpoints a fault file currently cuts this process off from (kactor chaos)."""
        return self.outbound.blocked

    @property
    def _faults(self) -> FaultFile | None:
        return self.outbound.faults

    @property
    def client_quotas(self) -> ClientQuotas | None:
        return self.inbound.client_quotas

    def update_client_quota(self, change: ClientQuotaConfigChanged) -> None:
        """A quota entity's new configuration (the "net" actor's ClientQuotaConfigChanged). Thread-safe."""
        self.inbound.update_client_quota(change)

    def update_credentials(self, change: UserCredentialsChanged) -> None:
        """A user's SCRAM credentials (the "net" actor's UserCredentialsChanged) for the credential lookup, when it is
        a CredentialCache (core/security/credential_cache.py). Thread-safe."""
        update = getattr(self._scram_credentials, "update_credentials", None)
        if update is not None:
            update(change.user, dict(change.credentials))

    def add_edge_handler(self, name: str, handler: EdgeHandler) -> None:
        """Serve the APIs routed "edge:<name>" with ``handler(ctx, request) -> response`` on a thread of its own
        (the composition root plugs e.g. AdminManager in here before the first client connects)."""
        self.inbound.add_edge_handler(name, handler)

    def start_processing_requests(self) -> None:
        """SocketServer.startProcessingRequests: start reading the requests of inbound connections (those accepted
        meanwhile included). Called by the composition root once the broker's start-up has ended."""
        self._loop.submit(("start",))

    def stop_processing_requests(self) -> None:
        """SocketServer.stopProcessingRequests (KafkaServer.shutdown, after the controlled shutdown): accept no
        more connections and close every inbound one; answers still owed are dropped. Outbound requests go on."""
        self._loop.submit(("stop",))

    def send(self, host: str, port: int, to: str, body: Any, request_id: int, reply_to: str | None,
             cause: int | None = None, timeout_ms: float | None = None) -> None:
        """Send the internal request ``body`` to the broker at host:port as its Kafka request. With ``reply_to``,
        exactly one NetResponse (the decoded answer) or NetSendFailed (carrying ``request_id``, caused by
        ``cause``) is later injected into ``reply_to``. ``to`` (the actor that will handle it there) is implied by
        the api key on the other side; it is kept for the trace.

        The body is encoded here, in the caller's thread, so the frame is a snapshot of the value at send time and
        an unencodable body fails at once.
        """
        self.outbound.send(host, port, body, request_id, reply_to, cause, timeout_ms)

    def reply(self, connection_id: int, request_id: int, body: Any) -> None:
        """Answer the NetRequest (connection_id, request_id) with the internal response ``body``. Dropped if that
        connection has gone. A response that cannot be encoded closes the connection (Kafka's client would wait
        for it for ever otherwise)."""
        self.inbound.reply(connection_id, request_id, body)

    def reply_error(self, connection_id: int, request_id: int, error: int) -> None:
        """Answer the request with its API's whole-request error response (``error_response``)."""
        self.inbound.reply_error(connection_id, request_id, error)

    def close_destination(self, host: str, port: int) -> None:
        """Close the outbound connection to host:port; its pending requests fail. The next send reconnects."""
        self._loop.submit(("close", (host, int(port))))

    def close(self, timeout_s: float = 5.0) -> None:
        """Close every socket, fail every pending request, and join the I/O thread. Idempotent."""
        self.inbound.close_workers()
        self._loop.close(timeout_s)

    def connection_count(self) -> tuple[int, int]:
        """(inbound, outbound) open connections — for tests and metrics; approximate while traffic flows."""
        return len(self.inbound.conns), len(self.outbound.conns)

    # -- the I/O thread's calls (edges.net.selector.LoopHandler) -----------------------------------------------------
    def on_accept(self, listener: socket.socket) -> None:
        self.inbound.accept(listener)

    def on_event(self, conn: Conn, mask: int) -> None:
        if not conn.closed:
            (self.outbound if conn.outbound else self.inbound).on_event(conn, mask)

    def on_commands(self, cmds: collections.deque[tuple[Any, ...]]) -> None:
        touched: dict[int, Conn] = {}
        while cmds:
            cmd = cmds.popleft()
            kind = cmd[0]
            if kind == "send":
                conn = self.outbound.on_send(cmd)
                if conn is not None:
                    touched[id(conn)] = conn
            elif kind == "reply":
                conn = self.inbound.on_reply(cmd[1], cmd[2], cmd[3], cmd[4])
                if conn is not None:
                    touched[id(conn)] = conn
            elif kind == "close":
                self.outbound.on_close(cmd[1])
            elif kind == "resolved":
                for conn in self.outbound.on_resolved(cmd):
                    touched[id(conn)] = conn
            elif kind == "start":
                self.inbound.start()
            elif kind == "stop":
                self.inbound.stop()
        # Write at once rather than waiting a select round for writability: the socket is almost always writable.
        for conn in touched.values():
            if not conn.closed and not conn.connecting:
                if conn.outbound:
                    self._loop.guarded(conn, self.outbound.flush, self.outbound.close)
                else:
                    self._loop.guarded(conn, self.inbound.flush, self.inbound.close)
        self.inbound.after_commands()

    def on_sweep(self, now: float) -> None:
        self.outbound.sweep(now)
        self.inbound.sweep(now)

    def on_shutdown(self) -> None:
        self.outbound.shutdown()
        for conn in list(self.inbound.conns.values()):
            self.inbound.close(conn, "transport closed")
        # Commands that arrived after the loop ended still owe their callers an answer.
        cmds = self._loop.shut_down()
        while cmds:
            cmd = cmds.popleft()
            if cmd[0] == "send":
                self.outbound.fail_or_log(cmd[4], "transport closed")
        self.inbound.close_workers()
        self._loop.close_sockets(self._listeners)
        log.info("%s: transport on %s:%d closed", self._name, self._host, self._port)
