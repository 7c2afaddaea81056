"""The record-batch compression codecs Kafka accepts (``CompressionType``): gzip, snappy, lz4, zstd.

Formats are Kafka's own: gzip is RFC 1952 (stdlib zlib); snappy is snappy-java's xerial framing (a header, then
length-prefixed raw snappy blocks) as Kafka's ``SnappyOutputStream`` writes — un-framed raw snappy is also read, as
``SnappyInputStream`` does; lz4 is the LZ4 frame format with independent 64 KiB blocks and no content checksum
(``KafkaLZ4BlockOutputStream``, which cannot read dependent blocks); zstd is a standard zstd frame. Libraries: cramjam
(snappy, zstd) and lz4 (frame flags Kafka needs), both with wheels on PyPI.
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


def compress(codec: int, data: bytes) -> bytes:
    if codec == NONE:
        return data
    if codec == GZIP:
        return gzip.compress(data, mtime=0)
    if codec == SNAPPY:
        return _snappy_compress(data)
    if codec == LZ4:
        return lz4.frame.compress(data, block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False,
                                  content_checksum=False)  # fmt: skip
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
