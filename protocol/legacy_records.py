"""Message sets of magic v0 and v1 (``LegacyRecord``/``AbstractLegacyRecordBatch``): what Produce v0-2 carries and
Fetch v0-3 answers with. Read (with their CRC-32 and one level of compression), build, and convert to a v2 batch as a
2.6 broker does on append (``LogValidator.convertAndAssignOffsetsNonCompressed``).

Layout of one entry: offset int64, size int32, then the message: crc uint32 (CRC-32 of the rest), magic int8,
attributes int8, [v1: timestamp int64], key bytes, value bytes. A compressed entry's value is a whole inner message
set (v1: inner offsets relative to the wrapper, whose offset is the last inner one's). zstd needs magic v2 (Kafka's
UNSUPPORTED_COMPRESSION_TYPE); lz4 under magic v0 carries Kafka 0.8's frame-header checksum (over the magic number
too), written and read as Kafka does.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator, Sequence

import attrs

from protocol import compression
from protocol.errors import CorruptRecordError, InvalidRecordError, UnsupportedCompressionError
from protocol.records import NO_PARTITION_LEADER_EPOCH, Record, build_batch

MAGIC_V0, MAGIC_V1 = 0, 1
NO_TIMESTAMP = -1
LOG_OVERHEAD = 12  # offset + size
_ENTRY = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
_TIMESTAMP = struct.Struct(">q")
_LEN = struct.Struct(">i")
_CRC_START = 16  # magic onward
TIMESTAMP_TYPE_BIT = 0x08


@attrs.frozen
class LegacyMessage:
    offset: int
    magic: int
    attributes: int
    timestamp: int  # NO_TIMESTAMP (-1) for v0
    key: bytes | None
    value: bytes | None
    crc: int

    @property
    def compression(self) -> int:
        return self.attributes & 0x07


def _bytes(data: bytes, pos: int, end: int) -> tuple[bytes | None, int]:
    if pos + 4 > end:
        raise CorruptRecordError("message ends inside a key or value length")
    (n,) = _LEN.unpack_from(data, pos)
    pos += 4
    if n < 0:
        return None, pos
    if pos + n > end:
        raise CorruptRecordError(f"key or value of {n} bytes runs past the message's end")
    return data[pos : pos + n], pos + n


def iter_messages(data: bytes) -> Iterator[LegacyMessage]:
    """The entries of a message set as they are (a compressed wrapper stays one entry), CRC checked; a magic other
    than 0/1 raises ``InvalidRecordError``, anything cut short or inconsistent ``CorruptRecordError``."""
    if type(data) is not bytes:
        data = bytes(data)  # keys and values are kept: slices of bytes, not views of a caller's buffer
    pos = 0
    while pos < len(data):
        if len(data) - pos < _ENTRY.size:
            raise CorruptRecordError(f"message set ends inside an entry header ({len(data) - pos} bytes left)")
        offset, size, crc, magic, attributes = _ENTRY.unpack_from(data, pos)
        end = pos + LOG_OVERHEAD + size
        if magic not in (MAGIC_V0, MAGIC_V1):
            raise InvalidRecordError(f"message magic {magic} in a v0/v1 message set")
        if size < _ENTRY.size - LOG_OVERHEAD + 8 or end > len(data):
            raise CorruptRecordError(f"message of {size} bytes does not fit ({len(data) - pos - LOG_OVERHEAD} left)")
        computed = zlib.crc32(memoryview(data)[pos + _CRC_START : end])
        if computed != crc:
            raise CorruptRecordError(f"message CRC {crc:#010x} does not match computed {computed:#010x}")
        p = pos + _ENTRY.size
        timestamp = NO_TIMESTAMP
        if magic == MAGIC_V1:
            (timestamp,) = _TIMESTAMP.unpack_from(data, p)
            p += 8
        key, p = _bytes(data, p, end)
        value, p = _bytes(data, p, end)
        if p != end:
            raise CorruptRecordError(f"message declares {size} bytes but its fields take {p - pos - LOG_OVERHEAD}")
        yield LegacyMessage(offset, magic, attributes, timestamp, key, value, crc)
        pos = end


def _decompress(wrapper: LegacyMessage) -> bytes:
    codec = wrapper.compression
    if codec == compression.ZSTD or codec > compression.ZSTD:
        raise UnsupportedCompressionError(f"compression codec {codec} with message format v{wrapper.magic}")
    if wrapper.value is None:
        raise CorruptRecordError("a compressed message has a null value")
    if codec == compression.LZ4 and wrapper.magic == MAGIC_V0:
        return compression.lz4_decompress_kafka08(wrapper.value)
    return compression.decompress(codec, wrapper.value)


def deep_messages(data: bytes) -> list[LegacyMessage]:
    """Every message of a message set with compressed wrappers opened (one level, as Kafka allows), inner offsets made
    absolute for v1 and inner timestamps replaced by the wrapper's under LogAppendTime."""
    out: list[LegacyMessage] = []
    for m in iter_messages(data):
        if not m.compression:
            out.append(m)
            continue
        inner = list(iter_messages(_decompress(m)))
        if any(x.compression for x in inner):
            raise CorruptRecordError("a compressed message set contains another compressed message")
        base = m.offset - inner[-1].offset if inner and m.magic == MAGIC_V1 else 0
        log_append = m.magic == MAGIC_V1 and m.attributes & TIMESTAMP_TYPE_BIT
        out += [
            attrs.evolve(x, offset=x.offset + base, timestamp=m.timestamp if log_append else x.timestamp) for x in inner
        ]
    return out


def build_message(offset: int, key: bytes | None, value: bytes | None, *, magic: int, timestamp: int = NO_TIMESTAMP,
                  attributes: int = 0) -> bytes:  # fmt: skip
    """One entry, ``LegacyRecord.write``."""
    body = bytearray(struct.pack(">bb", magic, attributes))
    if magic == MAGIC_V1:
        body += _TIMESTAMP.pack(timestamp)
    for b in (key, value):
        body += _LEN.pack(-1 if b is None else len(b))
        body += b or b""
    crc = zlib.crc32(body)
    return struct.pack(">qiI", offset, 4 + len(body), crc) + bytes(body)


def build_message_set(
    messages: Sequence[tuple[int, int, bytes | None, bytes | None]], *, magic: int, codec: int = compression.NONE
) -> bytes:
    """``(offset, timestamp, key, value)`` tuples as a v0/v1 message set, compressed into one wrapper when ``codec``
    is set (v1 inner offsets relative, wrapper at the last offset and the largest timestamp), as a 2.6 broker
    down-converts for Fetch v0-3."""
    if codec == compression.NONE:
        return b"".join(build_message(o, k, v, magic=magic, timestamp=t) for o, t, k, v in messages)
    if codec >= compression.ZSTD:
        raise UnsupportedCompressionError(f"compression codec {codec} with message format v{magic}")
    first = messages[0][0] if messages else 0
    inner = b"".join(
        build_message(o - first if magic == MAGIC_V1 else o, k, v, magic=magic, timestamp=t) for o, t, k, v in messages
    )
    last = messages[-1][0] if messages else 0
    ts = max((t for _, t, _, _ in messages), default=NO_TIMESTAMP)
    if codec == compression.LZ4 and magic == MAGIC_V0:
        value = compression.lz4_compress_kafka08(inner)
    else:
        value = compression.compress(codec, inner)
    return build_message(last, None, value, magic=magic, timestamp=ts, attributes=codec)


def to_batch(messages: Sequence[LegacyMessage], base_offset: int, codec: int = compression.NONE) -> bytes:
    """The v2 batch a 2.6 broker appends for a v0/v1 message set (``convertAndAssignOffsetsNonCompressed``): offsets
    assigned from ``base_offset``, create-time timestamps kept (v0's as -1), no producer id."""
    if not messages:
        raise InvalidRecordError("an empty message set")
    first_ts = messages[0].timestamp
    records = [Record(i, m.timestamp - first_ts, m.key, m.value) for i, m in enumerate(messages)]
    return build_batch(records, base_offset=base_offset, first_timestamp=first_ts, compression_codec=codec,
                       partition_leader_epoch=NO_PARTITION_LEADER_EPOCH)  # fmt: skip
