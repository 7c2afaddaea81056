"""A blocking Kafka client for command-line tools and tests (not actor systems): one connection, internal requests
in, internal responses out, through the same ApiSpecs as the transport's outbound path."""

from __future__ import annotations

import itertools
import socket
import time
from typing import Any

from edges.net.framing import DEFAULT_MAX_RESPONSE_BYTES, HEADER, INT32, decode_outbound, encode_outbound, outbound_spec
from protocol.api_versions import API_VERSIONS
from protocol.framing import RequestHeader, decode_response, encode_request

DEFAULT_CONNECT_TIMEOUT_S = 5.0
_RECV_BYTES = 256 * 1024


class TransportError(Exception):
    """A blocking client request failed: connection refused, timeout, connection lost, or a bad answer."""


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
        corr = next(self._ids) % INT32
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
        corr = next(self._ids) % INT32
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

