"""Kafka's SocketServer.Acceptor for the inbound dispatch (edges/net/inbound.py): the connections waiting on a
listener socket accepted, each a `Conn` of its listener — wrapped for its TLS handshake on an SSL listener
(edges/net/tls.py's TlsLayer)."""

from __future__ import annotations

import itertools
import logging
import socket
from collections.abc import Iterator

from edges.net.selector import Conn
from edges.net.tls import TlsLayer

log = logging.getLogger("kactor.edges.transport")


class Acceptor:
    """The listener sockets of one process (listener name of each) and the connection ids they hand out."""

    __slots__ = ("name", "_listener_names", "_conn_ids", "_tls")

    def __init__(self, name: str, listeners: list[tuple[socket.socket, str]], conn_ids: itertools.count[int],
                 tls: TlsLayer) -> None:
        self.name = name
        self._listener_names = dict(listeners)
        self._conn_ids = conn_ids
        self._tls = tls

    def accept(self, listener: socket.socket) -> Iterator[Conn]:
        """Every connection waiting on ``listener``, non-blocking with TCP_NODELAY; an SSL listener's wrapped, its
        handshake not begun (one that cannot be wrapped is closed and skipped). An accept that fails (e.g. EMFILE)
        ends the round: the connections already open are served on."""
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
            context = self._tls.contexts.get(name)
            if context is None:
                yield Conn(next(self._conn_ids), sock, False, None, f"{addr[0]}:{addr[1]}", name, str(addr[0]))
                continue
            conn = self._tls.accept(context, sock, next(self._conn_ids), addr, name)
            if conn is not None:
                yield conn
