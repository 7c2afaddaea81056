"""Message sets v0/v1 (Produce v0-2, Fetch v0-3): our builder against kafka-python 1.4.7's
``LegacyRecordBatchBuilder`` byte for byte, each reading the other's compressed sets, CRC and size errors, and the
conversion to a v2 batch a 2.6 broker appends."""

from __future__ import annotations

import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.legacy_records import LegacyRecordBatch, LegacyRecordBatchBuilder

from protocol import compression
from protocol.errors import CorruptRecordError, InvalidRecordError, ProtocolError, UnsupportedCompressionError
from protocol.legacy_records import build_message_set, deep_messages, iter_messages, to_batch
from protocol.records import check_batch, iter_batches

T0 = 1_600_000_000_000
MESSAGES = [(0, T0, b"k0", b"v0"), (1, T0 + 7, None, b"v1" * 50), (2, T0 + 3, b"k2", None)]


def _theirs(magic: int, codec: int) -> bytes:
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    for offset, ts, key, value in MESSAGES:
        builder.append(offset, ts if magic else None, key, value)
    return bytes(builder.build())


@pytest.mark.parametrize("magic", [0, 1])
def test_uncompressed_message_sets_are_byte_identical_to_kafka_python(magic: int) -> None:
    ours = build_message_set([(o, t if magic else -1, k, v) for o, t, k, v in MESSAGES], magic=magic)
    assert ours == _theirs(magic, 0)
    got = [(m.offset, m.timestamp, m.key, m.value) for m in deep_messages(ours)]
    assert got == [(o, t if magic else -1, k, v) for o, t, k, v in MESSAGES]


@pytest.mark.parametrize(("magic", "codec"), [(0, compression.GZIP), (1, compression.GZIP), (1, compression.LZ4)])
def test_we_read_kafka_python_compressed_sets_and_it_reads_ours(magic: int, codec: int) -> None:
    (wrapper,) = iter_messages(_theirs(magic, codec))
    assert wrapper.compression == codec
    inner = deep_messages(_theirs(magic, codec))
    assert [(m.key, m.value, m.timestamp) for m in inner] == [(k, v, t if magic else -1) for _, t, k, v in MESSAGES]
    assert [m.offset - inner[0].offset for m in inner] == [0, 1, 2]

    ours = build_message_set([(100 + o, t, k, v) for o, t, k, v in MESSAGES], magic=magic, codec=codec)
    (entry,) = iter_messages(ours)
    assert entry.offset == 102 and (magic == 0 or entry.timestamp == T0 + 7)
    batch = LegacyRecordBatch(ours, magic)
    assert batch.validate_crc()
    theirs = [(r.offset, r.key, r.value) for r in batch]
    assert theirs == [(100 + o, k, v) for o, _, k, v in MESSAGES]
    assert [(m.offset, m.key, m.value) for m in deep_messages(ours)] == theirs


def test_conversion_to_a_v2_batch_assigns_offsets_and_keeps_timestamps() -> None:
    messages = deep_messages(build_message_set(MESSAGES, magic=1))
    (batch,) = iter_batches(to_batch(messages, base_offset=40))
    check_batch(batch)
    assert (batch.base_offset, batch.last_offset, batch.first_timestamp, batch.max_timestamp) == (40, 42, T0, T0 + 7)
    assert [(r.offset_delta, r.timestamp_delta, r.key, r.value) for r in batch.records()] == [
        (0, 0, b"k0", b"v0"), (1, 7, None, b"v1" * 50), (2, 3, b"k2", None)]  # fmt: skip
    v0 = deep_messages(build_message_set([(o, -1, k, v) for o, _, k, v in MESSAGES], magic=0))
    (batch0,) = iter_batches(to_batch(v0, base_offset=0))
    assert (batch0.first_timestamp, batch0.max_timestamp) == (-1, -1)


def test_bad_message_sets_get_kafkas_errors() -> None:
    good = build_message_set(MESSAGES, magic=1)
    corrupt = bytearray(good)
    corrupt[30] ^= 1
    with pytest.raises(CorruptRecordError, match="CRC") as e:
        list(iter_messages(bytes(corrupt)))
    assert e.value.error_code == 2
    with pytest.raises(CorruptRecordError):
        list(iter_messages(good[:-1]))
    with pytest.raises(InvalidRecordError):
        list(iter_messages(good[:16] + b"\x02" + good[17:]))
    with pytest.raises(UnsupportedCompressionError):
        build_message_set(MESSAGES, magic=1, codec=compression.ZSTD)
    zstd_wrapper = build_message_set([(0, -1, None, b"x")], magic=1)  # then flip its codec bits to zstd, CRC fixed
    raw = bytearray(zstd_wrapper)
    raw[17] = compression.ZSTD
    struct.pack_into(">I", raw, 12, zlib.crc32(bytes(raw[16:])))
    with pytest.raises(UnsupportedCompressionError) as e2:
        deep_messages(bytes(raw))
    assert e2.value.error_code == 76


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.booleans())
def test_random_message_sets_raise_protocol_errors_only(data: bytes, fix_crc: bool) -> None:
    raw = bytearray(data)
    if fix_crc and len(raw) >= 18:
        raw[16] = raw[16] % 2  # a valid magic
        struct.pack_into(">i", raw, 8, len(raw) - 12)
        struct.pack_into(">I", raw, 12, zlib.crc32(bytes(raw[16:])))
    try:
        deep_messages(bytes(raw))
    except ProtocolError:
        pass


def test_xxh32_matches_the_lz4_library() -> None:
    import lz4.frame

    from protocol.compression import xxh32

    assert xxh32(b"") == 0x02CC5D05  # XXH32 of nothing, seed 0
    for store_size, end in ((False, 6), (True, 14)):  # with a content size the descriptor is 8 bytes longer
        frame = lz4.frame.compress(b"x" * 100, block_linked=False, store_size=store_size)
        assert (xxh32(frame[4:end]) >> 8) & 0xFF == frame[end]  # the header checksum the library wrote


def test_lz4_under_magic_v0_uses_kafka_08s_header_checksum_both_ways() -> None:
    import lz4.frame

    ours = build_message_set([(o, -1, k, v) for o, _, k, v in MESSAGES], magic=0, codec=compression.LZ4)
    (wrapper,) = iter_messages(ours)
    with pytest.raises(RuntimeError):  # a standard reader refuses Kafka 0.8's checksum
        lz4.frame.decompress(wrapper.value)
    assert [(m.offset, m.key, m.value) for m in deep_messages(ours)] == [(o, k, v) for o, _, k, v in MESSAGES]
