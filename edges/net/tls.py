"""TLS connections of the network edge: the non-blocking handshake driven on the I/O thread (Kafka's
SslTransportLayer.handshake) and reads and writes through the TLS layer, for an SSL listener's accepted sockets and
the broker's own connections to an SSL inter-broker listener. Contexts and principals are edges/net/tls_context.py's.

`TlsLayer` is the TLS layer under the inbound dispatch (edges/net/inbound.py): an SSL listener's accepted socket
wrapped, its handshake driven to its end, then the connection handed up to be read as any other. A PLAINTEXT
connection never meets it: its bytes are read and written by `Conn` itself.
"""

from __future__ import annotations

import logging
import selectors
import socket
import ssl
from collections.abc import Callable

from edges.net.selector import COALESCE_BYTES, RECV_BYTES, Conn, Loop
from edges.net.tls_context import principal_of
from protocol.errors import FrameTooLargeError

log = logging.getLogger("kactor.edges.transport")

_TLS_WRITE_BYTES = 256 * 1024  # one SSL_write at most: a retry after a want-write passes the same length again


class TlsConn(Conn):
    """A connection of an SSL listener, or the broker's own to an SSL inter-broker listener (Kafka's
    SslTransportLayer): the handshake first (``handshake``,
    driven by the I/O thread on readiness), then ``receive`` / ``write`` through the TLS layer. A ``recv`` returns
    one TLS record's bytes at most, and bytes OpenSSL has decrypted but not handed over are invisible to ``select``:
    ``receive`` keeps reading while ``pending()`` says some are left, so none is stranded while the socket is quiet.
    A write OpenSSL could not finish must be retried with the same bytes: nothing is joined to the head of ``out``
    meanwhile."""

    __slots__ = ("retry_write",)

    def __init__(self, conn_id: int, sock: socket.socket, peer: str, listener: str = "", host: str = "", *,
                 dest: tuple[str, int] | None = None) -> None:
        super().__init__(conn_id, sock, dest is not None, dest, peer, listener, host)
        # an inbound socket comes wrapped (accept_tls); an outbound one is wrapped once connected (start_client)
        self.handshaking = isinstance(sock, ssl.SSLSocket)
        self.retry_write = False

    def start_client(self, context: ssl.SSLContext) -> None:
        """An outbound connection's TCP connect has completed: wrap it for the client side of the handshake (the
        host connected to is the name its certificate must carry); the caller re-registers the new socket object."""
        assert self.dest is not None
        self.sock = context.wrap_socket(self.sock, server_side=False, server_hostname=self.dest[0],
                                        do_handshake_on_connect=False)
        self.handshaking = True

    def handshake(self) -> int:
        """One step of the handshake: the selector events it waits for, 0 once it is done (the principal set).
        ssl.SSLError (or OSError) when it failed."""
        sock: ssl.SSLSocket = self.sock  # type: ignore[assignment]
        try:
            sock.do_handshake()
        except ssl.SSLWantReadError:
            return selectors.EVENT_READ
        except ssl.SSLWantWriteError:
            return selectors.EVENT_WRITE
        self.handshaking = False
        self.principal = principal_of(sock)
        return 0

    def receive(self) -> bytes | None:
        sock: ssl.SSLSocket = self.sock  # type: ignore[assignment]
        chunks, total = [], 0
        while True:
            try:
                data = sock.recv(RECV_BYTES)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError, InterruptedError):
                break
            except ssl.SSLZeroReturnError:  # the peer's close_notify
                data = b""
            if not data:
                if not chunks:
                    return b""
                break  # the EOF is seen again by the next read
            chunks.append(data)
            total += len(data)
            if total >= RECV_BYTES and not sock.pending():
                break  # the rest is still in the socket, where select sees it
        if not chunks:
            return None
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        if self.roff:
            del self.rbuf[:self.roff]
            self.roff = 0
        self.rbuf += data
        return data

    def write(self) -> None:
        out = self.out
        sock = self.sock
        while out:
            if not self.retry_write and len(out) > 1 and len(out[0]) < COALESCE_BYTES:
                batch, size = [], 0
                while out and size < COALESCE_BYTES:
                    b = out.popleft()
                    batch.append(b)
                    size += len(b)
                out.appendleft(b"".join(batch))
            buf = out[0]
            chunk = buf if len(buf) <= _TLS_WRITE_BYTES else memoryview(buf)[:_TLS_WRITE_BYTES]
            try:
                n = sock.send(chunk)
            except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError, InterruptedError):
                self.retry_write = True
                break
            self.retry_write = False
            if n < len(buf):
                out[0] = memoryview(buf)[n:]
            else:
                out.popleft()


def accept_tls(context: ssl.SSLContext, sock: socket.socket, conn_id: int, peer: str, listener: str,
               host: str) -> TlsConn:
    """An accepted socket of an SSL listener, wrapped for a server-side handshake that does not block."""
    wrapped = context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
    return TlsConn(conn_id, wrapped, peer, listener, host)


def tls_to_plaintext(conn: Conn, error: FrameTooLargeError) -> FrameTooLargeError | None:
    """A frame size ``conn`` refused, when it is a TLS record of a handshake (0x16, version 3.x) read as a size on a
    PLAINTEXT connection: the error naming that likely cause (None: another bad size)."""
    if conn.rbuf[conn.roff:conn.roff + 2] == b"\x16\x03" and not isinstance(conn, TlsConn):
        return FrameTooLargeError(f"{error}: a TLS handshake to the PLAINTEXT listener {conn.listener}?")
    return None


class TlsLayer:
    """The SSL listeners of one process (SslChannelBuilder: listener name → server context) and the handshakes of
    their connections (SslTransportLayer.handshake), on the I/O thread. ``close(conn, reason)`` and
    ``ready(conn)`` are the dispatch's: a failed handshake closes the connection, a finished one is read."""

    __slots__ = ("name", "loop", "contexts", "_close", "_ready")

    def __init__(self, name: str, loop: Loop, contexts: dict[str, ssl.SSLContext] | None,
                 close: Callable[[Conn, str], None], ready: Callable[[Conn], None]) -> None:
        self.name = name
        self.loop = loop
        # listener name → server context of an SSL listener; the others are PLAINTEXT
        self.contexts = contexts or {}
        self._close = close
        self._ready = ready

    def accept(self, context: ssl.SSLContext, sock: socket.socket, conn_id: int, addr: tuple[str, int],
               listener: str) -> TlsConn | None:
        """An accepted socket of an SSL listener, wrapped for its handshake; None (the socket closed) when it
        cannot be."""
        try:
            return accept_tls(context, sock, conn_id, f"{addr[0]}:{addr[1]}", listener, str(addr[0]))
        except (OSError, ValueError) as e:
            log.info("%s: Failed authentication with %s:%s (SSL handshake failed: %s)", self.name, addr[0], addr[1],
                     e)
            sock.close()
            return None

    def handshake(self, conn: TlsConn) -> None:
        """SslTransportLayer.handshake, one step on readiness: the I/O thread never waits on it. A failed one
        closes the connection with Kafka's log line (Selector: "Failed authentication with ... (SSL handshake
        failed)"); a finished one is read as any connection."""
        try:
            events = conn.handshake()
        except (ssl.SSLError, OSError) as e:
            log.info("%s: Failed authentication with %s (SSL handshake failed: %s)", self.name, conn.peer,
                     getattr(e, "reason", None) or e)
            self._close(conn, f"SSL handshake with {conn.peer} failed: {e}")
            return
        if events:
            self.loop.set_events(conn, events)
            return
        log.debug("%s: SSL handshake with %s on %s done: principal %s", self.name, conn.peer, conn.listener,
                  conn.principal)
        self._ready(conn)
