"""Kafka's framing: a 4-byte size, then a request header (v0/v1/v2) or response header (v0/v1), then the body.

``FrameDecoder`` cuts a byte stream into frames across partial reads and refuses a size above
``socket.request.max.bytes`` (``NetworkReceive.readFrom``); ``decode_request`` reads the header and the body with
the generated codec (``RequestContext.parseRequest``). Every malformed input raises a ``ProtocolError``.
"""

from __future__ import annotations

import functools
import struct

import attrs

from protocol import primitives as p
from protocol.api_versions import API_VERSIONS, ApiKeys, request_header_version, response_header_version
from protocol.codec import codec, compiled
from protocol.errors import (
    UNSUPPORTED_VERSION,
    FrameTooLargeError,
    MalformedError,
    TruncatedError,
    UnknownApiKeyError,
    UnsupportedVersionError,
)

SOCKET_REQUEST_MAX_BYTES = 104857600  # socket.request.max.bytes default
_SIZE = struct.Struct(">i")
_RESPONSE_HEAD = struct.Struct(">ii")  # size, correlation id
_HEADER = struct.Struct(">hhi")


@attrs.frozen
class RequestHeader:
    request_api_key: int
    request_api_version: int
    correlation_id: int
    client_id: str | None = None


@attrs.frozen
class Request:
    header: RequestHeader
    body: dict


class FrameDecoder:
    """Accumulate bytes from a socket and return whole frames (without their size prefix).

    Mirrors ``NetworkReceive``: a negative size, or one above ``max_bytes``, raises ``FrameTooLargeError`` (Kafka
    closes the connection); a frame is returned only once all its bytes arrived.
    """

    def __init__(self, max_bytes: int = SOCKET_REQUEST_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        self._buf += data
        frames: list[bytes] = []
        pos = 0
        buf = self._buf
        while len(buf) - pos >= 4:
            (size,) = _SIZE.unpack_from(buf, pos)
            if size < 0 or size > self.max_bytes:
                self._buf = bytearray()
                raise FrameTooLargeError(
                    f"Invalid receive (size = {size}{f' larger than {self.max_bytes}' if size > 0 else ''})"
                )
            if len(buf) - pos - 4 < size:
                break
            frames.append(bytes(buf[pos + 4 : pos + 4 + size]))
            pos += 4 + size
        if pos:
            del buf[:pos]
        return frames

    @property
    def pending(self) -> int:
        """Bytes received that do not yet make a whole frame."""
        return len(self._buf)


def _as_bytes(payload: bytes | bytearray | memoryview) -> bytes:
    # the readers slice and .decode(): they need bytes (one copy of a bytearray or memoryview)
    return payload if type(payload) is bytes else bytes(payload)


def frame(payload: bytes) -> bytes:
    return _SIZE.pack(len(payload)) + payload


# (api key, version) → its request / response header version, asked for every request and answer both ways: kept,
# and bounded (a peer may send any version number)
_request_header_version = functools.lru_cache(maxsize=4096)(request_header_version)
_response_header_version = functools.lru_cache(maxsize=4096)(response_header_version)


def encode_request_header(header: RequestHeader) -> bytes:
    """``RequestHeader.write``: client_id stays a legacy nullable string even in header v2 (as Kafka's)."""
    version = _request_header_version(header.request_api_key, header.request_api_version)
    buf = bytearray(_HEADER.pack(header.request_api_key, header.request_api_version, header.correlation_id))
    if version >= 1:
        p.write_string(buf, header.client_id)
    if version >= 2:
        buf.append(0)
    return bytes(buf)


def decode_request_header(payload: bytes) -> tuple[RequestHeader, int]:
    """``RequestHeader.parse``: unknown api keys raise ``UnknownApiKeyError``; the header of a known key is read at
    the header version its (possibly unsupported) version implies, as Kafka does."""
    payload = _as_bytes(payload)
    if len(payload) < _HEADER.size:
        raise TruncatedError(f"request header needs {_HEADER.size} bytes, the frame has {len(payload)}")
    api_key, api_version, correlation_id = _HEADER.unpack_from(payload, 0)
    if api_key not in API_VERSIONS:
        raise UnknownApiKeyError(f"unknown api key {api_key} (correlation id {correlation_id})")
    if api_version < 0:
        raise MalformedError(f"negative api version {api_version}")
    version = _request_header_version(api_key, api_version)
    pos = _HEADER.size
    client_id = None
    if version >= 1:
        client_id, pos = p.read_string(payload, pos)
    if version >= 2:
        pos = p.skip_tagged_fields(payload, pos)
    return RequestHeader(api_key, api_version, correlation_id, client_id), pos


def decode_request(payload: bytes) -> Request:
    """A whole request frame (without its size) → header and body.

    A version outside 2.6's range raises ``UnsupportedVersionError`` carrying the header, so that an ApiVersions
    request can still be answered (``api_versions_unsupported_response``)."""
    payload = _as_bytes(payload)
    header, pos = decode_request_header(payload)
    r = API_VERSIONS[header.request_api_key]
    if not r.min_version <= header.request_api_version <= r.max_version:
        raise UnsupportedVersionError(
            f"{r.name} v{header.request_api_version} is not supported "
            f"(Kafka 2.6 serves {r.min_version}-{r.max_version})",
            header,
        )
    body, _ = codec(header.request_api_key, header.request_api_version, "request")[1](payload, pos)
    return Request(header, body)


def encode_request(header: RequestHeader, body: dict) -> bytes:
    """A whole request frame, size prefix included."""
    return encode_request_frame(header, encode_request_body(header.request_api_key, header.request_api_version, body))


def encode_request_body(api_key: int, api_version: int, body: dict) -> bytes:
    """A request's body alone (an API that reuses bodies, UpdateMetadata, frames it with `encode_request_frame`)."""
    return codec(api_key, api_version, "request")[0](body)  # type: ignore[no-any-return]


def encode_request_frame(header: RequestHeader, body: bytes) -> bytes:
    """A whole request frame, size prefix included, for a body already encoded (`encode_request_body`)."""
    return _frame_of(encode_request_header(header), body)


def _frame_of(head: bytes, body: bytes) -> bytes:
    """``frame(head + body)`` with one copy of the body instead of two: a Produce request or a Fetch answer carries
    up to a megabyte of records per partition, copied on every hop."""
    return b"".join((_SIZE.pack(len(head) + len(body)), head, body))


def encode_response(api_key: int, api_version: int, correlation_id: int, body: dict) -> bytearray:
    """A whole response frame: size, response header (v1 = with tagged fields for flexible versions, but always v0
    for ApiVersions), body. Built in one buffer, its size written last: a Fetch answer's records (up to a megabyte a
    partition, to every follower) are copied once instead of three times (into the body, out of it as bytes, into
    the frame), which was a quarter of a leader's CPU under produce load (docs/performance.md)."""
    buf = bytearray(8)
    _RESPONSE_HEAD.pack_into(buf, 0, 0, correlation_id)
    if _response_header_version(api_key, api_version) >= 1:
        buf.append(0)
    compiled(api_key, api_version, "response").encode_into(buf, body)
    _SIZE.pack_into(buf, 0, len(buf) - 4)
    return buf


def decode_response(api_key: int, api_version: int, payload: bytes) -> tuple[int, dict]:
    """A response frame (without its size) of a request we sent → ``(correlation_id, body)``."""
    payload = _as_bytes(payload)
    if len(payload) < 4:
        raise TruncatedError("response header needs 4 bytes")
    (correlation_id,) = _SIZE.unpack_from(payload, 0)
    pos = 4
    if _response_header_version(api_key, api_version) >= 1:
        pos = p.skip_tagged_fields(payload, pos)
    body, _ = codec(api_key, api_version, "response")[1](payload, pos)
    return correlation_id, body


def api_versions_unsupported_response(correlation_id: int) -> bytes:
    """KIP-511: an ApiVersions request of a version the broker does not know gets a v0 response with
    UNSUPPORTED_VERSION and the broker's ApiVersions range, so the client can retry at a version it shares
    (``ApiVersionsRequest.getErrorResponse``)."""
    r = API_VERSIONS[ApiKeys.API_VERSIONS]
    body = {
        "error_code": UNSUPPORTED_VERSION,
        "api_keys": [{"api_key": ApiKeys.API_VERSIONS, "min_version": r.min_version, "max_version": r.max_version}],
    }
    return encode_response(ApiKeys.API_VERSIONS, 0, correlation_id, body)


def api_versions_body(throttle_time_ms: int = 0) -> dict:
    """The ApiVersions response body a Kafka 2.6 broker sends: every key of the table with its range."""
    return {
        "error_code": 0,
        "api_keys": [
            {"api_key": key, "min_version": r.min_version, "max_version": r.max_version}
            for key, r in sorted(API_VERSIONS.items())
        ],
        "throttle_time_ms": throttle_time_ms,
    }
