"""The network edge: framed JSON over TCP between kactor processes (and from command-line clients).

Why not thespian's multiprocTCPBase: it binds 0.0.0.0 and unpickles whatever arrives (ecosystem-notes §2). Here a
frame is a 4-byte big-endian length followed by UTF-8 JSON written by ``messages.codec``; nothing is ever unpickled,
a frame over ``max_frame_bytes`` or one that does not decode closes just that connection, and the server binds
127.0.0.1 unless told otherwise.

One daemon I/O thread runs a selector over every socket of the process: the listener, inbound connections (peers'
requests in, our replies out), outbound connections (one per destination host:port: our requests out, replies in)
and a wake-up socketpair. The driver thread only encodes a frame and appends a command to a deque, so an actor never
waits on the network; a 5 MB frame is written piecewise as the socket accepts it.

Every request that expects a reply is recorded on its connection until it is answered. When the connection fails
(refused, connect timeout, peer died, NetClose, request timeout, transport closed) every such request is answered
with ``NetSendFailed`` — nothing the caller waits for is silently lost. Correlation ids on the wire are the
transport's own (unique per transport), so two actors using the same request_id towards one broker cannot collide.

A request timeout closes its connection, as Kafka's NetworkClient does: the peer's later answers could no longer be
matched to a caller anyway, and the next send reconnects.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import itertools
import json
import logging
import os
import re
import selectors
import socket
import struct
import threading
import time
from typing import Any

import orjson

from actors import names
from edges.net_faults import PARTITIONED, FaultFile, endpoint
from messages.codec import CodecError, dumps_bytes, encode_json, from_json, note_text, noting_texts
from messages.net import (
    NetRequest,
    NetResponse,
    NetSendFailed,
    NetWireError,
    NetWireRequest,
    NetWireResponse,
)

log = logging.getLogger("kactor.edges.transport")

HEADER = struct.Struct(">I")
DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024
DEFAULT_CONNECT_TIMEOUT_S = 5.0
DEFAULT_REQUEST_TIMEOUT_S = 30.0  # Kafka's request.timeout.ms default
_RECV_BYTES = 256 * 1024
_COALESCE_BYTES = 256 * 1024  # small queued frames are joined into one send() up to this size
_SWEEP_S = 0.05  # how often connect / request deadlines are checked

# (family, type, proto, sockaddr) as getaddrinfo gives them.
_AddrInfo = tuple[int, int, int, Any]

# A frame's head as encode_frame writes it, up to its body: tag, request_id (at most 18 digits: an int64 for sure),
# and a request's "to" (a JSON string literal).
_OWN_HEAD = re.compile(rb'\{"@":"(NetWireRequest|NetWireResponse)","request_id":(0|-?[1-9][0-9]{0,17}),'
                       rb'(?:"to":("(?:[^"\\]|\\.)*"),)?"body":')
# 19 digits in a row may be an integer orjson cannot hold (2**63 has 19): such bodies are parsed by json. Found by
# mapping every digit to "0" and everything else to " " (~2 ms for 1.3 MB; a regular expression took ~19 ms).
_DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_DIGIT_RUN = b"0" * 19

_REQ, _RESP, _ERR = NetWireRequest.__name__, NetWireResponse.__name__, NetWireError.__name__


class TransportError(Exception):
    """A blocking client request failed: connection refused, timeout, connection lost, or an error reply."""


class ListenError(OSError):
    """The server socket could not be bound; ``str()`` names the address ("cannot listen on 127.0.0.1:9092: Address
    already in use") while ``errno`` / ``strerror`` stay those of the failed bind."""

    def __init__(self, errno_: int | None, strerror: str, host: str, port: int) -> None:
        super().__init__(errno_, strerror)
        self.host, self.port = host, port

    def __str__(self) -> str:
        return f"cannot listen on {self.host}:{self.port}: {self.strerror}"


class MalformedFrameError(ValueError):
    """A frame that is not a well-formed NetWire* message; the connection that sent it is closed."""


def encode_frame(frame: Any) -> bytes:
    """Length-prefixed codec JSON for one NetWire* frame (CodecError if the body cannot be encoded), made by orjson
    (messages.codec.dumps_bytes): a controller encodes every LeaderAndIsr and UpdateMetadata on the driver thread it
    shares with its broker."""
    payload = dumps_bytes(frame)
    return HEADER.pack(len(payload)) + payload


def decode_frame(payload: bytes | bytearray) -> tuple[str, dict[str, Any]]:
    """Check a frame's JSON and return (tag, fields) with the body still JSON data.

    The body is decoded separately (``decode_body``) so that a well-formed request carrying a body this process
    cannot decode is answered with an error instead of killing the connection.
    """
    tag, data, _ = decode_frame_and_body_text(payload)
    return tag, data


def decode_frame_and_body_text(payload: bytes | bytearray) -> tuple[str, dict[str, Any], bytes | bytearray | None]:
    """`decode_frame`, plus the body's JSON text as it arrived when the frame is laid out as `encode_frame` writes
    it (None otherwise: `body_text` re-encodes it).

    A frame of our own layout is split at its body — head and tail read by hand, the body parsed by orjson from its
    slice — so the text the trace records is the wire's (the wire encoder writes the codec's text byte for byte,
    tests/edges/test_edges_frame_codec.py) instead of a re-encoding, and the parse is orjson's (~2x json's). On the
    I/O thread, which shares the GIL with the driver, a 1.3 MB LeaderAndIsr frame cost json.loads ~53 ms plus ~48 ms
    to re-encode its body for the trace. The data is json's either way: a body with a run of 19 digits or more (an
    integer orjson would read as a float) or a slice that is not exactly one JSON value (a duplicated key) goes
    through json.loads of the whole frame, as does any other layout.
    """
    split = _split_own_layout(payload)
    if split is not None:
        return split
    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise MalformedFrameError(f"not UTF-8 JSON: {e}") from None
    if not isinstance(data, dict):
        raise MalformedFrameError(f"frame is a JSON {type(data).__name__}, not an object")
    tag = data.get("@")
    if tag not in (_REQ, _RESP, _ERR):
        raise MalformedFrameError(f"unknown frame type {tag!r}")
    rid = data.get("request_id")
    if not isinstance(rid, int) or isinstance(rid, bool):
        raise MalformedFrameError(f"{tag} without an integer request_id")
    if tag == _REQ and (not isinstance(data.get("to"), str) or not isinstance(data.get("reply_expected"), bool)):
        raise MalformedFrameError(f"{tag} without a string 'to' and a boolean 'reply_expected'")
    if tag == _ERR and not isinstance(data.get("error"), str):
        raise MalformedFrameError(f"{tag} without a string error")
    return tag, data, None


def _split_own_layout(payload: bytes | bytearray) -> tuple[str, dict[str, Any], bytes | bytearray] | None:
    """(tag, fields, body text) of a NetWireRequest / NetWireResponse laid out as `encode_frame` writes it, else
    None."""
    m = _OWN_HEAD.match(payload)
    if m is None:
        return None
    tag = _REQ if m.group(1) == b"NetWireRequest" else _RESP
    to_literal = m.group(3)
    if tag == _REQ:
        if to_literal is None:
            return None
        if payload.endswith(b',"reply_expected":true}'):
            end, reply_expected = len(payload) - 23, True
        elif payload.endswith(b',"reply_expected":false}'):
            end, reply_expected = len(payload) - 24, False
        else:
            return None
    else:
        if to_literal is not None or not payload.endswith(b"}"):
            return None
        end, reply_expected = len(payload) - 1, False
    text = payload[m.end():end]
    if text.translate(_DIGITS_AS_ZEROS).find(_LONG_DIGIT_RUN) >= 0:
        return None
    try:
        body = orjson.loads(text)  # exactly one JSON value, or the frame is not what its head says
        to = orjson.loads(to_literal) if to_literal is not None else None
    except orjson.JSONDecodeError:
        return None
    data: dict[str, Any] = {"@": tag, "request_id": int(m.group(2))}
    if tag == _REQ:
        data["to"] = to
        data["body"] = body
        data["reply_expected"] = reply_expected
    else:
        data["body"] = body
    return tag, data, text


def decode_body(data: dict[str, Any]) -> Any:
    """Decode a frame's body with the message codec (CodecError if it names unknown types or bad fields)."""
    if "body" not in data:
        raise CodecError("frame has no body")
    try:
        return from_json(data["body"])
    except CodecError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError) as e:  # malformed tagged data from a peer
        raise CodecError(f"malformed body: {e.__class__.__name__}: {e}") from None


def body_text(data: dict[str, Any], wire_text: bytes | bytearray | None = None) -> str:
    """The JSON text of a decoded frame's body, as the codec writes it (what the trace records for the body): the
    text that arrived when `decode_frame_and_body_text` found it, else a re-encoding."""
    if wire_text is not None:
        return wire_text.decode("utf-8")
    return encode_json(data["body"])


class _Pending:
    """A request whose answer must reach ``reply_to`` as NetResponse or NetSendFailed."""

    __slots__ = ("reply_to", "request_id", "cause", "deadline")

    def __init__(self, reply_to: str, request_id: int, cause: int | None, deadline: float) -> None:
        self.reply_to = reply_to
        self.request_id = request_id
        self.cause = cause
        self.deadline = deadline


class _Conn:
    """One socket and its buffers; touched only by the I/O thread."""

    __slots__ = ("conn_id", "sock", "outbound", "dest", "connecting", "connect_deadline", "out", "rbuf", "pending",
                 "closed", "events", "peer", "addrs")

    def __init__(self, conn_id: int, sock: socket.socket, outbound: bool, dest: tuple[str, int] | None,
                 peer: str) -> None:
        self.conn_id = conn_id
        self.sock = sock
        self.outbound = outbound
        self.dest = dest
        self.peer = peer
        self.connecting = False
        self.connect_deadline = 0.0
        self.out: collections.deque[bytes | memoryview] = collections.deque()
        self.rbuf = bytearray()
        self.pending: dict[int, _Pending] = {}
        self.closed = False
        self.events = 0
        self.addrs: list[_AddrInfo] = []  # addresses not tried yet, while connecting


class Transport:
    """TCP server + client connections for one process. The ``net`` slot of ``runtime.edges``.

    ``send``, ``reply``, ``close_destination`` and ``close`` are thread-safe and never block on the network.
    """

    def __init__(self, runtime: Any, host: str = "127.0.0.1", port: int = 0, *,
                 max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
                 connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
                 request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S, fault_file: str | None = None,
                 extra_listeners: tuple[tuple[str, int], ...] = ()) -> None:
        self._runtime = runtime
        self._name = getattr(runtime, "process_name", "kactor")
        self.max_frame_bytes = max_frame_bytes
        self.connect_timeout_s = connect_timeout_s
        self.request_timeout_s = request_timeout_s
        # One server socket per broker listener (Kafka's SocketServer: an Acceptor each); all serve the same actors.
        self._listeners: list[socket.socket] = []
        for h, p in ((host, port), *extra_listeners):
            try:
                sock = socket.create_server((h, p), reuse_port=False)
            except OSError as e:
                for s in self._listeners:
                    s.close()
                raise ListenError(e.errno, e.strerror or str(e), h, p) from e
            sock.setblocking(False)
            self._listeners.append(sock)
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
        self._conn_ids = itertools.count(1)
        self._inbound: dict[int, _Conn] = {}
        self._outbound: dict[tuple[str, int], _Conn] = {}
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
    def partitioned_from(self) -> frozenset[str]:
        """The ``host:port`` endpoints a fault file currently cuts this process off from (kactor chaos)."""
        return self._blocked

    def send(self, host: str, port: int, to: str, body: Any, request_id: int, reply_to: str | None,
             cause: int | None = None, timeout_ms: float | None = None) -> None:
        """Queue ``body`` for actor ``to`` at host:port. With ``reply_to``, exactly one NetResponse or NetSendFailed
        (carrying ``request_id``, caused by ``cause``) is later injected into ``reply_to``.

        The body is encoded here, in the caller's thread, so the frame is a snapshot of the value at send time and
        an unencodable body fails at once.
        """
        dest = (host, int(port))
        pending = None
        if reply_to is not None:
            timeout_s = self.request_timeout_s if timeout_ms is None else timeout_ms / 1000.0
            pending = _Pending(reply_to, request_id, cause, time.monotonic() + timeout_s)
        corr = next(self._corr)
        try:
            frame = encode_frame(NetWireRequest(corr, to, body, reply_to is not None))
        except CodecError as e:
            self._fail_or_log(pending, f"cannot encode request for {to}@{host}:{port}: {e}")
            return
        if len(frame) - HEADER.size > self.max_frame_bytes:
            self._fail_or_log(pending, f"request for {to}@{host}:{port} is {len(frame)} bytes, over the "
                                       f"{self.max_frame_bytes}-byte frame limit")
            return
        if not self._submit(("send", dest, corr, frame, pending)):
            self._fail_or_log(pending, "transport closed")

    def reply(self, connection_id: int, request_id: int, body: Any) -> None:
        """Answer the NetRequest (connection_id, request_id). Dropped if that connection has gone (the requester
        has then already been told NetSendFailed)."""
        try:
            frame = encode_frame(NetWireResponse(request_id, body))
        except CodecError as e:
            log.error("cannot encode reply %d on connection %d: %s", request_id, connection_id, e)
            frame = encode_frame(NetWireError(request_id, f"cannot encode reply: {e}"))
        if len(frame) - HEADER.size > self.max_frame_bytes:
            log.error("reply %d on connection %d is %d bytes, over the frame limit", request_id, connection_id,
                      len(frame))
            frame = encode_frame(NetWireError(request_id, f"reply is {len(frame)} bytes, over the frame limit"))
        self._submit(("reply", connection_id, frame))

    def close_destination(self, host: str, port: int) -> None:
        """Close the outbound connection to host:port; its pending requests fail. The next send reconnects."""
        self._submit(("close", (host, int(port))))

    def close(self, timeout_s: float = 5.0) -> None:
        """Close every socket, fail every pending request, and join the I/O thread. Idempotent."""
        self._closing = True
        self._wake()
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
        if pending is None:
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
                conn = self._outbound.get(dest)
                if conn is None:
                    waiting = self._resolving.get(dest)
                    if waiting is not None:  # a name lookup for dest is under way: wait for it
                        waiting.append(cmd)
                        continue
                    addrs = self._literal_address(dest)
                    if addrs is None:
                        self._start_resolve(dest, cmd)
                        continue
                    conn = self._connect(dest, addrs)
                    if conn is None:
                        self._fail_or_log(pending, self._last_connect_error)
                        continue
                if pending is not None:
                    conn.pending[corr] = pending
                conn.out.append(frame)
                touched[id(conn)] = conn
            elif kind == "reply":
                _, conn_id, frame = cmd
                conn = self._inbound.get(conn_id)
                if conn is None:
                    log.debug("%s: reply for closed connection %d dropped", self._name, conn_id)
                    continue
                conn.out.append(frame)
                touched[id(conn)] = conn
            elif kind == "close":
                dest = cmd[1]
                reason = f"connection to {dest[0]}:{dest[1]} closed on request (NetClose)"
                conn = self._outbound.get(dest)
                if conn is not None:
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
                conn = self._connect(dest, result)
                if conn is None:
                    for waiting_cmd in waiting:
                        self._fail_or_log(waiting_cmd[4], self._last_connect_error)
                    continue
                for _, _, corr, frame, pending in waiting:
                    if pending is not None:
                        conn.pending[corr] = pending
                    conn.out.append(frame)
                touched[id(conn)] = conn
        # Write at once rather than waiting a select round for writability: the socket is almost always writable.
        for conn in touched.values():
            if not conn.closed and not conn.connecting:
                self._guarded(conn, self._flush)

    def _guarded(self, conn: _Conn, fn: Any) -> None:
        try:
            fn(conn)
        except OSError as e:
            self._close_conn(conn, f"connection to {conn.peer} failed: {e.strerror or e}")
        except MalformedFrameError as e:
            log.error("%s: malformed frame from %s, closing the connection: %s", self._name, conn.peer, e)
            self._close_conn(conn, f"malformed frame from {conn.peer}: {e}")
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
        if mask & selectors.EVENT_READ and not conn.closed:
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

    def _connect(self, dest: tuple[str, int], addrs: list[_AddrInfo]) -> _Conn | None:
        """A new outbound connection to ``dest`` (its further addresses kept for a retry if this one fails)."""
        opened = self._open_socket(dest, addrs)
        if opened is None:
            return None
        conn = _Conn(next(self._conn_ids), opened[0], True, dest, f"{dest[0]}:{dest[1]}")
        conn.addrs = addrs
        self._start_connecting(conn, opened[1])
        self._outbound[dest] = conn
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
            conn = _Conn(next(self._conn_ids), sock, False, None, f"{addr[0]}:{addr[1]}")
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
            if self._outbound.get(conn.dest) is conn:  # type: ignore[arg-type]
                del self._outbound[conn.dest]  # type: ignore[arg-type]
        else:
            self._inbound.pop(conn.conn_id, None)
        pending, conn.pending = conn.pending, {}
        if pending:
            log.info("%s: %s; failing %d pending request(s)", self._name, reason, len(pending))
        for p in pending.values():
            self._inject(p.reply_to, NetSendFailed(p.request_id, reason), p.cause)
        conn.out.clear()
        conn.rbuf = bytearray()

    def _sweep(self, now: float) -> None:
        if self._faults is not None:
            blocked = self._faults.poll(now)
            if blocked is not None:
                self._blocked = blocked
                for dest, conn in list(self._outbound.items()):
                    if endpoint(*dest) in blocked:
                        self._close_conn(conn, f"connection to {conn.peer} cut: {PARTITIONED}")
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
                    self._inject(p.reply_to, NetSendFailed(p.request_id, f"request to {conn.peer} timed out"),
                                 p.cause)
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
        self._set_events(conn, selectors.EVENT_READ | selectors.EVENT_WRITE if out else selectors.EVENT_READ)

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
        limit = self.max_frame_bytes
        while len(buf) - off >= HEADER.size:
            (n,) = HEADER.unpack_from(buf, off)
            if n > limit:
                raise MalformedFrameError(f"frame of {n} bytes exceeds the {limit}-byte limit")
            end = off + HEADER.size + n
            if len(buf) < end:
                break
            payload = buf[off + HEADER.size:end]  # one copy; the frame outlives later buffer edits
            off = end
            self._on_frame(conn, payload)
            if conn.closed:
                return
        if off:
            del buf[:off]

    def _on_frame(self, conn: _Conn, payload: bytes | bytearray) -> None:
        tag, data, wire_text = decode_frame_and_body_text(payload)
        rid: int = data["request_id"]
        if conn.outbound:
            if tag == _REQ:
                raise MalformedFrameError("a request arrived on an outbound connection")
            p = conn.pending.pop(rid, None)
            if p is None:
                log.debug("%s: answer %d from %s has no waiting request (timed out?)", self._name, rid, conn.peer)
                return
            if tag == _ERR:
                self._inject(p.reply_to, NetSendFailed(p.request_id, f"{conn.peer}: {data['error']}"), p.cause)
                return
            try:
                body = decode_body(data)
            except CodecError as e:
                self._inject(p.reply_to, NetSendFailed(p.request_id, f"undecodable answer from {conn.peer}: {e}"),
                             p.cause)
                return
            if noting_texts():  # a trace writes the wire's text, not a re-encoding
                note_text(body, body_text(data, wire_text))
            self._inject(p.reply_to, NetResponse(p.request_id, body), p.cause)
            return
        if tag != _REQ:
            raise MalformedFrameError(f"{tag} arrived on an inbound connection")
        to: str = data["to"]
        reply_expected: bool = data["reply_expected"]
        error = None
        try:
            body = decode_body(data)
        except CodecError as e:
            error = f"undecodable request body: {e}"
        if error is None and not self._has_actor(to):
            error = f"no actor named {to!r} in process {self._name}"
        if error is not None:
            log.warning("%s: request from %s rejected: %s", self._name, conn.peer, error)
            if reply_expected:
                conn.out.append(encode_frame(NetWireError(rid, error)))
                self._flush(conn)
            return
        # An external input: the request's cause lives in the other process's trace.
        if noting_texts():
            note_text(body, body_text(data, wire_text))
        self._inject(to, NetRequest(conn.conn_id, rid, body, reply_expected), None)

    def _has_actor(self, name: str) -> bool:
        has = getattr(self._runtime, "has_actor", None)
        return True if has is None else bool(has(name))


# -- blocking client for command-line tools -------------------------------------------------------------------------
class BlockingClient:
    """One connection to a kactor process, for tools that are not actor systems. Not thread-safe."""

    def __init__(self, host: str, port: int, connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
                 max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self.host, self.port = host, int(port)
        self.max_frame_bytes = max_frame_bytes
        self._ids = itertools.count(1)
        try:
            self._sock: socket.socket | None = socket.create_connection((host, self.port), timeout=connect_timeout_s)
        except ConnectionRefusedError:
            raise TransportError(f"connection refused by {host}:{port} (is a kactor process listening there?)") \
                from None
        except TimeoutError:
            raise TransportError(f"connecting to {host}:{port} timed out after {connect_timeout_s:g}s") from None
        except OSError as e:
            raise TransportError(f"cannot connect to {host}:{port}: {e.strerror or e}") from None
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def request(self, to: str, body: Any, timeout_s: float = 10.0) -> Any:
        """Send ``body`` to actor ``to`` and return the decoded answer; TransportError on any failure."""
        if self._sock is None:
            raise TransportError("client is closed")
        rid = next(self._ids)
        try:
            frame = encode_frame(NetWireRequest(rid, to, body, True))
        except CodecError as e:
            raise TransportError(f"cannot encode request: {e}") from None
        deadline = time.monotonic() + timeout_s
        where = f"{self.host}:{self.port}"
        try:
            self._sock.settimeout(timeout_s)
            self._sock.sendall(frame)
            while True:
                header = self._recv_exact(HEADER.size, deadline)
                (n,) = HEADER.unpack(header)
                if n > self.max_frame_bytes:
                    raise TransportError(f"{where} sent a {n}-byte frame, over the {self.max_frame_bytes} limit")
                tag, data = decode_frame(self._recv_exact(n, deadline))
                if data["request_id"] != rid:
                    continue  # an answer to an earlier request we gave up on
                if tag == _ERR:
                    raise TransportError(f"{where} answered with an error: {data['error']}")
                if tag != _RESP:
                    raise TransportError(f"{where} sent an unexpected {tag}")
                return decode_body(data)
        except TimeoutError:
            self.close()
            raise TransportError(f"no answer from {where} ({to}) within {timeout_s:g}s") from None
        except TransportError:
            self.close()
            raise
        except (MalformedFrameError, CodecError) as e:
            self.close()
            raise TransportError(f"bad answer from {where}: {e}") from None
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


def request(host: str, port: int, to: str, body: Any, timeout_s: float = 10.0) -> Any:
    """One blocking request/answer with actor ``to`` in the process at host:port (for command-line tools).

    Raises TransportError with a one-line reason on connection refused, timeout, lost connection or error answer.
    """
    with BlockingClient(host, port, connect_timeout_s=timeout_s) as client:
        return client.request(to, body, timeout_s)
