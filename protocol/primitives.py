"""Kafka's primitive encodings (``ByteBufferAccessor``, ``ByteUtils``) used by the generated codecs.

Readers take ``(buf, pos)`` and return ``(value, new_pos)``; they raise ``TruncatedError``/``MalformedError`` —
never ``IndexError`` or ``struct.error`` — on short or impossible input. Writers append to a ``bytearray``.
"""

from __future__ import annotations

import struct
import uuid

from protocol.errors import MalformedError, TruncatedError

I8 = struct.Struct(">b")
I16 = struct.Struct(">h")
I32 = struct.Struct(">i")
I64 = struct.Struct(">q")
FORMATS = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint16": "H", "uint32": "I", "float64": "d",
           "bool": "?"}  # fmt: skip


def write_uvarint(buf: bytearray, n: int) -> None:
    """``ByteUtils.writeUnsignedVarint``."""
    while n > 0x7F:
        buf.append((n & 0x7F) | 0x80)
        n >>= 7
    buf.append(n)


def read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    """``ByteUtils.readUnsignedVarint``: at most 5 bytes."""
    try:
        b = buf[pos]
        if b < 0x80:
            return b, pos + 1
        value = b & 0x7F
        shift = 7
        while True:
            pos += 1
            b = buf[pos]
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value, pos + 1
            shift += 7
            if shift > 28:
                raise MalformedError("varint is longer than 5 bytes")
    except IndexError:
        raise TruncatedError("buffer ends inside a varint") from None


def write_varint(buf: bytearray, n: int) -> None:
    """``ByteUtils.writeVarint`` (zig-zag, 32-bit)."""
    write_uvarint(buf, ((n << 1) ^ (n >> 31)) & 0xFFFFFFFF)


def write_varlong(buf: bytearray, n: int) -> None:
    """``ByteUtils.writeVarlong`` (zig-zag, 64-bit)."""
    write_uvarint(buf, ((n << 1) ^ (n >> 63)) & 0xFFFFFFFFFFFFFFFF)


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """``ByteUtils.readVarint``."""
    raw, pos = read_uvarint(buf, pos)
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(buf: bytes, pos: int) -> tuple[int, int]:
    """``ByteUtils.readVarlong``: at most 10 bytes."""
    value = shift = 0
    try:
        while True:
            b = buf[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return (value >> 1) ^ -(value & 1), pos
            shift += 7
            if shift > 63:
                raise MalformedError("varlong is longer than 10 bytes")
    except IndexError:
        raise TruncatedError("buffer ends inside a varlong") from None


def _take(buf: bytes, pos: int, n: int, what: str) -> tuple[bytes, int]:
    end = pos + n
    if end > len(buf):
        raise TruncatedError(f"{what} of {n} bytes runs past the end ({len(buf) - pos} left)")
    return buf[pos:end], end


def _text(raw: bytes) -> str:
    try:
        return raw.decode()
    except UnicodeDecodeError as e:
        raise MalformedError(f"string is not UTF-8: {e}") from None


def _read_sized(buf: bytes, pos: int, length: struct.Struct, what: str) -> tuple[bytes | None, int]:
    """A legacy length-prefixed field (int16 for strings, int32 for bytes); -1 = null."""
    if pos + length.size > len(buf):
        raise TruncatedError(f"buffer ends inside a {what} length")
    (n,) = length.unpack_from(buf, pos)
    pos += length.size
    if n < 0:
        if n == -1:
            return None, pos
        raise MalformedError(f"{what} length {n}")
    return _take(buf, pos, n, what)


def _read_compact(buf: bytes, pos: int, what: str) -> tuple[bytes | None, int]:
    """A compact field: unsigned varint length + 1; 0 = null."""
    n, pos = read_uvarint(buf, pos)
    if n == 0:
        return None, pos
    return _take(buf, pos, n - 1, what)


def read_string(buf: bytes, pos: int) -> tuple[str | None, int]:
    """A legacy string: int16 length, -1 = null (null is refused by the caller's nullability check)."""
    raw, pos = _read_sized(buf, pos, I16, "string")
    return (None if raw is None else _text(raw)), pos


def read_compact_string(buf: bytes, pos: int) -> tuple[str | None, int]:
    raw, pos = _read_compact(buf, pos, "string")
    return (None if raw is None else _text(raw)), pos


def read_bytes(buf: bytes, pos: int) -> tuple[bytes | None, int]:
    return _read_sized(buf, pos, I32, "bytes")


def read_compact_bytes(buf: bytes, pos: int) -> tuple[bytes | None, int]:
    return _read_compact(buf, pos, "bytes")


def read_uuid(buf: bytes, pos: int) -> tuple[uuid.UUID, int]:
    raw, pos = _take(buf, pos, 16, "uuid")
    return uuid.UUID(bytes=raw), pos


def null_error(field: str) -> MalformedError:
    return MalformedError(f"non-nullable field {field} was serialized as null")


def write_string(buf: bytearray, s: str | None) -> None:
    """A legacy string: int16 length, -1 = null."""
    write_bytes(buf, None if s is None else s.encode(), I16)


def write_compact_string(buf: bytearray, s: str | None) -> None:
    write_compact_bytes(buf, None if s is None else s.encode())


def write_bytes(buf: bytearray, b: bytes | None, length: struct.Struct = I32) -> None:
    """Legacy bytes: int32 length (int16 for strings), -1 = null."""
    if b is None:
        buf += length.pack(-1)
    else:
        buf += length.pack(len(b))
        buf += b


def write_compact_bytes(buf: bytearray, b: bytes | None) -> None:
    """Compact bytes or string: unsigned varint length + 1, 0 = null."""
    if b is None:
        buf.append(0)
    else:
        write_uvarint(buf, len(b) + 1)
        buf += b


def write_count(buf: bytearray, n: int, compact: bool) -> None:
    if compact:
        write_uvarint(buf, n + 1)
    else:
        buf += I32.pack(n)


def skip_tagged_fields(buf: bytes, pos: int) -> int:
    """Read a tagged-field section and skip every field in it (the caller knows none of them)."""
    n, pos = read_uvarint(buf, pos)
    for _ in range(n):
        _, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        _, pos = _take(buf, pos, size, "tagged field")
    return pos
