"""The record-batch compression codecs Kafka accepts (``CompressionType``): gzip, snappy, lz4, zstd.

Formats are Kafka's own: gzip is RFC 1952 (stdlib zlib); snappy is snappy-java's xerial framing (a header, then
length-prefixed raw snappy blocks) as Kafka's ``SnappyOutputStream`` writes — un-framed raw snappy is also read, as
``SnappyInputStream`` does; lz4 is the LZ4 frame format with independent 64 KiB blocks, no content size and no
content checksum (``KafkaLZ4BlockOutputStream``; its reader cannot read dependent blocks), and under message format
v0 with Kafka 0.8's frame-header checksum; zstd is a standard zstd frame. Libraries: cramjam (snappy, zstd) and lz4
(frame flags Kafka needs), both with wheels on PyPI.
"""

from __future__ import annotations

import gzip
import struct
import zlib

import cramjam
import lz4.frame

from protocol.errors import CorruptRecordError, UnsupportedCompressionError

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_BLOCK = 32 * 1024  # snappy-java's default block size
_I32 = struct.Struct(">i")


def _snappy_compress(data: bytes) -> bytes:
    out = bytearray(_XERIAL_HEADER)
    for i in range(0, len(data), _XERIAL_BLOCK):
        block = bytes(cramjam.snappy.compress_raw(data[i : i + _XERIAL_BLOCK]))
        out += _I32.pack(len(block)) + block
    return bytes(out)


def _snappy_decompress(data: bytes) -> bytes:
    if not data.startswith(_XERIAL_MAGIC):
        return bytes(cramjam.snappy.decompress_raw(data))
    out = bytearray()
    pos = len(_XERIAL_HEADER)
    while pos < len(data):
        if pos + 4 > len(data):
            raise CorruptRecordError("snappy: truncated block length")
        (n,) = _I32.unpack_from(data, pos)
        pos += 4
        if n < 0 or pos + n > len(data):
            raise CorruptRecordError(f"snappy: block of {n} bytes runs past the end")
        out += bytes(cramjam.snappy.decompress_raw(data[pos : pos + n]))
        pos += n
    return bytes(out)


_M32 = 0xFFFFFFFF
_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32 for the few bytes of an LZ4 frame descriptor (the frame-header checksum); inputs under 16 bytes only."""
    if len(data) >= 16:
        raise ValueError("xxh32 here covers frame descriptors (< 16 bytes)")
    h = (seed + _P5 + len(data)) & _M32
    i = 0
    while i + 4 <= len(data):
        h = _rotl((h + int.from_bytes(data[i : i + 4], "little") * _P3) & _M32, 17) * _P4 & _M32
        i += 4
    for b in data[i:]:
        h = _rotl((h + b * _P5) & _M32, 11) * _P1 & _M32
    h ^= h >> 15
    h = h * _P2 & _M32
    h ^= h >> 13
    h = h * _P3 & _M32
    return h ^ (h >> 16)


def _lz4_descriptor_end(frame: bytes) -> int:
    """Where the frame descriptor's checksum byte is: after magic (4), FLG, BD and an 8-byte content size if set."""
    if len(frame) < 7:
        raise CorruptRecordError("lz4: frame shorter than its header")
    return 6 + (8 if frame[4] & 0x08 else 0)


def lz4_compress_kafka08(data: bytes) -> bytes:
    """LZ4 as magic-v0 messages carry it: Kafka 0.8 computed the header checksum over the magic number too
    (KAFKA-3160), and Kafka keeps writing it that way for message format v0."""
    frame = bytearray(compress(LZ4, data))
    end = _lz4_descriptor_end(frame)
    frame[end] = (xxh32(bytes(frame[:end])) >> 8) & 0xFF
    return bytes(frame)


def lz4_decompress_kafka08(data: bytes) -> bytes:
    """Read a magic-v0 LZ4 frame whatever its header checksum (``KafkaLZ4BlockInputStream`` with
    ``ignoreFlagDescriptorChecksum``): the checksum byte is recomputed the standard way before decoding."""
    frame = bytearray(data)
    end = _lz4_descriptor_end(frame)
    frame[end] = (xxh32(bytes(frame[4:end])) >> 8) & 0xFF
    return decompress(LZ4, bytes(frame))


def compress(codec: int, data: bytes) -> bytes:
    if codec == NONE:
        return data
    if codec == GZIP:
        return gzip.compress(data, mtime=0)
    if codec == SNAPPY:
        return _snappy_compress(data)
    if codec == LZ4:
        return lz4.frame.compress(data, block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False,
                                  content_checksum=False, store_size=False)  # fmt: skip
    if codec == ZSTD:
        return bytes(cramjam.zstd.compress(data))
    raise UnsupportedCompressionError(f"unknown compression codec {codec}")


def decompress(codec: int, data: bytes) -> bytes:
    """Raises ``UnsupportedCompressionError`` for codecs 5-7, ``CorruptRecordError`` for bytes the codec refuses."""
    if codec == NONE:
        return data
    try:
        if codec == GZIP:
            return gzip.decompress(data)
        if codec == SNAPPY:
            return _snappy_decompress(data)
        if codec == LZ4:
            return lz4.frame.decompress(data)
        if codec == ZSTD:
            return bytes(cramjam.zstd.decompress(data))
    except CorruptRecordError:
        raise
    except (OSError, EOFError, zlib.error, RuntimeError, ValueError, cramjam.DecompressionError) as e:
        raise CorruptRecordError(f"{NAMES[codec]}: cannot decompress: {e}") from None
    raise UnsupportedCompressionError(f"unknown compression codec {codec}")
