"""The socket layer: one daemon I/O thread per process runs a selector over every socket of the process (listeners,
inbound and outbound connections, a wake-up socketpair); other threads hand it commands, so no actor waits on the
network. Here are the connections and their bytes; what a connection's frames mean is the inbound or outbound
layer's business (`Loop`'s handler)."""

from __future__ import annotations

import collections
import contextlib
import logging
import selectors
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

from actors import names
from core.quota.enforcement import ChannelMute
from edges.net.framing import BadRequestError
from protocol.errors import ProtocolError

log = logging.getLogger("kactor.edges.transport")

COALESCE_BYTES = 256 * 1024  # small queued frames are joined into one send() up to this size
SWEEP_S = 0.05  # how often connect / request deadlines are checked
RECV_BYTES = 256 * 1024

# (family, type, proto, sockaddr) as getaddrinfo gives them.
AddrInfo = tuple[int, int, int, Any]
K = TypeVar("K")
V = TypeVar("V")


class ListenError(OSError):
    """The server socket could not be bound; ``str()`` names the address ("cannot listen on 127.0.0.1:9092: Address
    already in use") while ``errno`` / ``strerror`` stay those of the failed bind."""

    def __init__(self, errno_: int | None, strerror: str, host: str, port: int) -> None:
        super().__init__(errno_, strerror)
        self.host, self.port = host, port

    def __str__(self) -> str:
        return f"cannot listen on {self.host}:{self.port}: {self.strerror}"


def bind_listeners(wanted: list[tuple[str, int, str]]) -> list[tuple[socket.socket, str]]:
    """A non-blocking server socket per (host, port, listener name) — Kafka's SocketServer: an Acceptor each;
    ListenError (and nothing left bound) when one cannot be bound."""
    bound: list[tuple[socket.socket, str]] = []
    for h, p, name in wanted:
        try:
            sock = socket.create_server((h, p), reuse_port=False)
        except OSError as e:
            for s, _ in bound:
                s.close()
            raise ListenError(e.errno, e.strerror or str(e), h, p) from e
        sock.setblocking(False)
        bound.append((sock, name))
    return bound


class Conn:
    """One socket and its buffers; touched only by the I/O thread. Inbound (a client of this broker) or outbound
    (a request of this process to a peer)."""

    __slots__ = ("conn_id", "sock", "outbound", "dest", "connecting", "connect_deadline", "out", "rbuf", "pending",
                 "closed", "events", "peer", "addrs", "listener", "host", "waiting", "ready", "close_after",
                 "key", "roff", "throttle", "handshaking", "principal", "sasl", "sasl_mechanism", "session_expiry_ms",
                 "reauth_started_ms")

    def __init__(self, conn_id: int, sock: socket.socket, outbound: bool, dest: tuple[str, int] | None,
                 peer: str, listener: str = "", host: str = "") -> None:
        self.conn_id = conn_id
        self.sock = sock
        self.outbound = outbound
        self.dest = dest
        self.key: tuple[str, int, str] | None = None  # outbound: its entry in Outbound's connections
        self.peer = peer
        self.listener = listener
        self.host = host
        self.connecting = False
        self.connect_deadline = 0.0
        self.out: collections.deque[bytes | memoryview] = collections.deque()
        self.rbuf = bytearray()
        self.roff = 0  # where in rbuf the next frame starts (frames are cut without moving the bytes after them)
        self.pending: dict[int, Any] = {}  # outbound: the requests awaiting an answer, by correlation id
        self.closed = False
        self.events = 0
        self.addrs: list[AddrInfo] = []  # addresses not tried yet, while connecting
        # inbound: the requests awaiting an answer in arrival order, and answers that arrived before earlier ones
        self.waiting: collections.deque[int] = collections.deque()
        self.ready: dict[int, bytes | None] = {}
        self.close_after: str | None = None  # closing once the answers already queued are written: why
        self.throttle = ChannelMute()  # inbound: not read until a client quota's throttle is over (KIP-219)
        self.handshaking = False  # a TLS connection whose handshake is under way (edges/net/tls.py's TlsConn)
        self.principal = "User:ANONYMOUS"  # inbound: the peer's KafkaPrincipal (a PLAINTEXT peer's is ANONYMOUS)
        # inbound on a SASL listener: its SaslServerAuthenticator (core/security/sasl.py) until it is authenticated
        self.sasl: Any = None
        # once authenticated on a SASL listener: the mechanism, when the session expires (KIP-368; None: never) and
        # when its last re-authentication began (ms of edges.net.sasl.monotonic_ms)
        self.sasl_mechanism = ""
        self.session_expiry_ms: float | None = None
        self.reauth_started_ms: float | None = None

    def receive(self) -> bytes | None:
        """One recv() appended to the read buffer (the frames cut before dropped first): the bytes, b"" at the
        peer's EOF, None when there was nothing to read after all."""
        try:
            data = self.sock.recv(RECV_BYTES)
        except (BlockingIOError, InterruptedError):
            return None
        if data:
            if self.roff:
                del self.rbuf[:self.roff]
                self.roff = 0
            self.rbuf += data
        return data

    def write(self) -> None:
        """Write as much of ``out`` as the socket takes now."""
        out = self.out
        sock = self.sock
        while out:
            if len(out) > 1 and len(out[0]) < COALESCE_BYTES:
                # Many small frames (a pipelined window): one send() instead of one per frame.
                batch, size = [], 0
                while out and size < COALESCE_BYTES:
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


class DelayedCloses(Generic[K, V]):
    """Kafka's Selector.delayedClosingChannels (KIP-306): the connections whose authentication failed, each held
    until ``delay_ms`` after its failure (DelayedAuthenticationFailureClose), then closed — its held failure answer
    written first — by whoever asks ``pop_due`` (Selector.completeDelayedChannelClose, after every poll). Nothing
    blocks meanwhile: the connection is only not read nor written. Every entry has the same delay and the clock only
    goes forward, so the entries fall due in insertion order and ``pop_due`` stops at the first not due (as Kafka's
    LinkedHashMap walk). ``clock`` gives ms (injectable: tests pass a fake one)."""

    __slots__ = ("delay_ms", "_clock", "_entries")

    def __init__(self, delay_ms: int, clock: Callable[[], float]) -> None:
        self.delay_ms = delay_ms
        self._clock = clock
        self._entries: dict[K, tuple[float, V]] = {}

    def add(self, key: K, value: V) -> None:
        """maybeDelayCloseOnAuthenticationFailure: ``key`` is closed (``value`` handed back) ``delay_ms`` from now."""
        self._entries.pop(key, None)
        self._entries[key] = (self._clock() + self.delay_ms, value)

    def discard(self, key: K) -> None:
        """The connection was closed otherwise (Selector.close drops it from delayedClosingChannels)."""
        self._entries.pop(key, None)

    def pop_due(self) -> list[V]:
        """The held entries whose delay is over, oldest first, taken out (DelayedAuthenticationFailureClose.tryClose:
        due when its end time is not after now)."""
        if not self._entries:
            return []
        now = self._clock()
        due: list[V] = []
        entries = self._entries
        for key, (end_ms, value) in list(entries.items()):
            if end_ms > now:
                break
            del entries[key]
            due.append(value)
        return due

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)


class LoopHandler(Protocol):
    """What the I/O thread calls: the transport, which hands each to its inbound or outbound layer."""

    def on_accept(self, listener: socket.socket) -> None: ...

    def on_event(self, conn: Conn, mask: int) -> None: ...

    def on_commands(self, cmds: collections.deque[tuple[Any, ...]]) -> None: ...

    def on_sweep(self, now: float) -> None: ...

    def on_shutdown(self) -> None: ...


class Loop:
    """The selector, its thread, and the commands other threads hand it (``submit``)."""

    def __init__(self, name: str, runtime: Any, listeners: list[socket.socket], handler: LoopHandler) -> None:
        self.name = name
        self._runtime = runtime
        self._handler = handler
        self.sel = selectors.DefaultSelector()
        for sock in listeners:
            self.sel.register(sock, selectors.EVENT_READ, "listener")
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self.sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._wake_pending = False
        # Commands from other threads; deque append/popleft are atomic, so no lock is needed.
        self._cmds: collections.deque[tuple[Any, ...]] = collections.deque()
        self.closing = False
        self._shut_down = False
        self._submit_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=f"{name}-net", daemon=True)

    def start(self) -> None:
        self._thread.start()

    # -- from any thread --------------------------------------------------------------------------------------------
    def submit(self, cmd: tuple[Any, ...]) -> bool:
        """Hand a command to the I/O thread; False once the loop has shut down (the command is not taken)."""
        # The lock closes the gap between "not shut down yet" and the append, so no command can land in the deque
        # after the shutdown drained it (a send would then never be answered).
        with self._submit_lock:
            if self._shut_down:
                return False
            self._cmds.append(cmd)
        self.wake()
        return True

    def wake(self) -> None:
        # At most one wake-up byte in flight: the I/O thread clears the flag (after reading the bytes) before it
        # drains the command deque, so a command appended later either is drained or finds the flag clear and
        # writes a new byte.
        if not self._wake_pending:
            self._wake_pending = True
            # OSError: buffer full (a wake-up is already pending) or the socket closed during shutdown.
            with contextlib.suppress(OSError):
                self._wake_w.send(b"\0")

    def close(self, timeout_s: float) -> None:
        """Stop the I/O thread (the handler's on_shutdown runs on it) and join it."""
        self.closing = True
        self.wake()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout_s)
            if self._thread.is_alive():
                log.error("%s: network thread did not stop within %.1fs", self.name, timeout_s)

    def inject(self, to: str, body: Any, cause: int | None) -> None:
        """An input for actor ``to`` from the network (sender "edge:net")."""
        try:
            self._runtime.inject(to, body, sender=names.EDGE_NET, cause=cause)
        except Exception:  # noqa: BLE001 - the I/O thread must outlive a broken runtime
            log.exception("injecting %s into %s failed", type(body).__name__, to)

    # -- the I/O thread ------------------------------------------------------------------------------------------
    def _run(self) -> None:
        next_sweep = time.monotonic() + SWEEP_S
        try:
            while not self.closing:
                try:
                    events = self.sel.select(max(0.0, next_sweep - time.monotonic()))
                except OSError as e:  # e.g. EINTR on old Pythons, or a socket closed under us
                    log.error("%s: select failed: %s", self.name, e)
                    events = []
                for key, mask in events:
                    tag = key.data
                    if tag == "wake":
                        self._drain_wake()
                    elif tag == "listener":
                        self._handler.on_accept(key.fileobj)  # type: ignore[arg-type]
                    else:
                        self._handler.on_event(tag, mask)
                self._handler.on_commands(self._cmds)
                now = time.monotonic()
                if now >= next_sweep:
                    self._handler.on_sweep(now)
                    next_sweep = now + SWEEP_S
        except Exception:  # noqa: BLE001 - log, then fail everything below rather than leave callers waiting
            log.exception("%s: network thread crashed", self.name)
        finally:
            self.closing = True
            self._handler.on_shutdown()

    def _drain_wake(self) -> None:
        # Drain first, then clear the flag: a byte written after the clear must stay in the socket for the next
        # select (clearing first would let this loop swallow it and leave the flag set with no byte pending).
        try:
            while self._wake_r.recv(4096):
                pass
        except BlockingIOError:
            pass
        self._wake_pending = False

    def shut_down(self) -> collections.deque[tuple[Any, ...]]:
        """Take no more commands; the ones that arrived after the loop ended (they still owe their callers an
        answer). Called by the handler's on_shutdown."""
        with self._submit_lock:
            self._shut_down = True
        return self._cmds

    def close_sockets(self, listeners: list[socket.socket]) -> None:
        for s in (*listeners, self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                s.close()
        with contextlib.suppress(OSError):
            self.sel.close()

    # -- a connection's place in the selector ----------------------------------------------------------------------
    def set_events(self, conn: Conn, events: int) -> None:
        if events == conn.events:
            return
        if events == 0:  # muted with nothing to write: out of the selector
            self.unregister(conn)
            return
        if conn.events == 0:
            self.sel.register(conn.sock, events, conn)
        else:
            self.sel.modify(conn.sock, events, conn)
        conn.events = events

    def unregister(self, conn: Conn) -> None:
        if conn.events:
            with contextlib.suppress(KeyError, ValueError, OSError):
                self.sel.unregister(conn.sock)
            conn.events = 0

    def unregister_listener(self, sock: socket.socket) -> None:
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.sel.unregister(sock)
        with contextlib.suppress(OSError):
            sock.close()

    def close_socket(self, conn: Conn) -> bool:
        """Close ``conn``'s socket; False if it was closed already. Its owner then drops what it held."""
        if conn.closed:
            return False
        conn.closed = True
        self.unregister(conn)
        with contextlib.suppress(OSError):
            conn.sock.close()
        conn.out.clear()
        conn.rbuf = bytearray()
        conn.roff = 0
        return True

    def guarded(self, conn: Conn, fn: Callable[[Conn], None], close: Callable[[Conn, str], None]) -> None:
        """``fn(conn)``, any failure closing that connection only (with ``close``): one bad connection must not
        take the process down."""
        try:
            fn(conn)
        except OSError as e:
            close(conn, f"connection to {conn.peer} failed: {e.strerror or e}")
        except (BadRequestError, ProtocolError) as e:
            log.warning("%s: closing the connection from %s: %s", self.name, conn.peer, e)
            close(conn, f"bad input from {conn.peer}: {e}")
        except Exception as e:  # noqa: BLE001
            log.exception("%s: error on connection to %s", self.name, conn.peer)
            close(conn, f"connection to {conn.peer} failed: {e}")
