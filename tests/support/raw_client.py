"""A Kafka client over one blocking socket for tests that need the raw exchange (a SASL handshake by hand, a
connection's close, an answer's timing): frames out and in, one request at a time, nothing retried or hidden."""

from __future__ import annotations

import socket
import struct
from typing import Any

from protocol.framing import RequestHeader, decode_response, encode_request


class RawClient:
    """Requests with correlation ids counted from 1; ``client_id`` in every header."""

    def __init__(self, port: int, client_id: str = "raw-test", sock: socket.socket | None = None,
                 timeout: float = 10.0) -> None:
        self.sock = sock if sock is not None else socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.client_id = client_id
        self.corr = 0

    def send(self, key: int, version: int, body: dict[str, Any]) -> int:
        """Send a request; its correlation id."""
        self.corr += 1
        self.sock.sendall(encode_request(RequestHeader(key, version, self.corr, self.client_id), body))
        return self.corr

    def frame(self) -> bytes:
        """The next answer's bytes, size prefix removed."""
        (size,) = struct.unpack(">i", self.recv_exact(4))
        return self.recv_exact(size)

    def read(self, key: int, version: int) -> dict[str, Any]:
        """The answer to the last request sent."""
        corr, answer = decode_response(key, version, self.frame())
        assert corr == self.corr
        return answer

    def call(self, key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        self.send(key, version, body)
        return self.read(key, version)

    def recv_exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("closed by the broker")
            buf += chunk
        return bytes(buf)

    def closed(self) -> bool:
        """Whether the broker closed the connection (the next read finds its end)."""
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def plain_login(self, user: str, password: str) -> None:
        """SaslHandshake v1 then SaslAuthenticate v2 with PLAIN (also a re-authentication, on a session)."""
        assert self.call(17, 1, {"mechanism": "PLAIN"})["error_code"] == 0
        answer = self.call(36, 2, {"auth_bytes": f"\0{user}\0{password}".encode()})
        assert answer["error_code"] == 0, answer

    def close(self) -> None:
        self.sock.close()
