"""Kafka's primitive encodings written out by hand from the protocol guide, for tests that build expected bytes
without our codec (or kio) — a small independent encoder."""

from __future__ import annotations

import struct


def i8(n: int) -> bytes:
    return struct.pack(">b", n)


def i16(n: int) -> bytes:
    return struct.pack(">h", n)


def i32(n: int) -> bytes:
    return struct.pack(">i", n)


def i64(n: int) -> bytes:
    return struct.pack(">q", n)


def string(s: str | None) -> bytes:  # (NULLABLE_)STRING: int16 length, -1 = null
    return i16(-1) if s is None else i16(len(s.encode())) + s.encode()


def blob(b: bytes | None) -> bytes:  # (NULLABLE_)BYTES: int32 length, -1 = null
    return i32(-1) if b is None else i32(len(b)) + b


def arr(items: list[bytes] | None) -> bytes:  # ARRAY: int32 count, -1 = null
    return i32(-1) if items is None else i32(len(items)) + b"".join(items)


def cstr(s: str | None) -> bytes:  # COMPACT_(NULLABLE_)STRING: unsigned varint length + 1 (ours fit in one byte)
    return b"\x00" if s is None else bytes([len(s.encode()) + 1]) + s.encode()


def carr(items: list[bytes]) -> bytes:  # COMPACT_ARRAY
    return bytes([len(items) + 1]) + b"".join(items)


TAGS = b"\x00"  # an empty TAG_BUFFER
