"""Record batches v2: our builder against kafka-python 1.4.7's ``DefaultRecordBatchBuilder`` byte for byte, reading
each other's batches in every codec both have, CRC and size checks, in-place offset assignment, random bytes."""

from __future__ import annotations

import struct

import pytest
from crc32c import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from protocol import compression
from protocol.errors import CorruptRecordError, InvalidRecordError, ProtocolError, UnsupportedCompressionError
from protocol.records import Header, Record, assign_offsets, build_batch, check_batch, iter_batches, read_batch_header

T0 = 1_700_000_000_000
RECORDS = [
    Record(0, 0, b"k0", b"v0"),
    Record(1, 5, None, b"v1" * 100, (Header("h", b"x"), Header("empty", None))),
    Record(2, 9, b"k2", None),
]


def _kafka_python_batch(codec: int, records: list[Record] = RECORDS) -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)  # fmt: skip
    for r in records:
        builder.append(r.offset_delta, T0 + r.timestamp_delta, r.key, r.value, [(h.key, h.value) for h in r.headers])
    return bytes(builder.build())


def test_crc32c_is_castagnoli() -> None:
    assert crc32c(b"123456789") == 0xE3069283  # the check value of CRC-32C (RFC 3720)


def test_uncompressed_batch_is_byte_identical_to_kafka_python() -> None:
    # kafka-python writes partitionLeaderEpoch 0 (the broker overwrites it); the Java producer writes -1
    ours = build_batch(RECORDS, first_timestamp=T0, partition_leader_epoch=0)
    assert ours == _kafka_python_batch(0)


@pytest.mark.parametrize("codec", [compression.GZIP, compression.LZ4])
def test_we_read_kafka_python_compressed_batches(codec: int) -> None:
    theirs = _kafka_python_batch(codec)
    (batch,) = iter_batches(theirs)
    assert batch.compression == codec
    check_batch(batch)
    assert batch.records() == RECORDS
    assert (batch.first_timestamp, batch.max_timestamp, batch.last_offset_delta) == (T0, T0 + 9, 2)


@pytest.mark.parametrize("codec", [compression.GZIP, compression.LZ4])
def test_kafka_python_reads_our_compressed_batches(codec: int) -> None:
    ours = build_batch(RECORDS, base_offset=40, first_timestamp=T0, compression_codec=codec)
    theirs = DefaultRecordBatch(ours)
    theirs.validate_crc()
    assert theirs.validate_crc() and theirs.compression_type == codec
    got = [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in theirs]
    assert got == [
        (40 + r.offset_delta, T0 + r.timestamp_delta, r.key, r.value, [(h.key, h.value) for h in r.headers])
        for r in RECORDS
    ]


@pytest.mark.parametrize("codec", [compression.SNAPPY, compression.ZSTD])
def test_snappy_and_zstd_round_trip(codec: int) -> None:
    records = RECORDS + [Record(3, 10, b"big", bytes(range(256)) * 400)]  # > one 32 KiB xerial block
    ours = build_batch(records, first_timestamp=T0, compression_codec=codec)
    (batch,) = iter_batches(ours)
    check_batch(batch)
    assert batch.records() == records
    body = ours[61:]
    if codec == compression.SNAPPY:  # snappy-java's framing, as Kafka's producer writes it
        assert body[:16] == b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01"
    else:
        assert body[:4] == b"\x28\xb5\x2f\xfd"  # zstd frame magic


def test_raw_snappy_without_xerial_framing_is_read_too() -> None:
    import cramjam

    payload = b"some records" * 50
    assert compression.decompress(compression.SNAPPY, bytes(cramjam.snappy.compress_raw(payload))) == payload


def test_crc_mismatch_is_corrupt_message_but_base_offset_and_epoch_are_not_covered() -> None:
    raw = bytearray(build_batch(RECORDS, first_timestamp=T0))
    next_offset = assign_offsets(raw, 0, 1000, partition_leader_epoch=7)
    assert next_offset == 1003
    batch = read_batch_header(bytes(raw))
    assert (batch.base_offset, batch.partition_leader_epoch, batch.last_offset) == (1000, 7, 1002)
    check_batch(batch)  # still valid: the CRC starts at the attributes
    raw[-1] ^= 0x01
    with pytest.raises(CorruptRecordError, match="CRC") as e:
        check_batch(read_batch_header(bytes(raw)))
    assert e.value.error_code == 2  # CORRUPT_MESSAGE


def test_assign_offsets_in_place_across_several_batches() -> None:
    a = build_batch(RECORDS, first_timestamp=T0)
    b = build_batch(RECORDS[:1], first_timestamp=T0, compression_codec=compression.GZIP)
    buf = bytearray(a + b)
    offset = assign_offsets(buf, 0, 10)
    offset = assign_offsets(buf, len(a), offset)
    batches = list(iter_batches(bytes(buf)))
    assert [(x.base_offset, x.next_offset) for x in batches] == [(10, 13), (13, 14)]
    assert [x.raw for x in batches] == [bytes(buf[: len(a)]), bytes(buf[len(a) :])]
    for x in batches:
        check_batch(x)


def test_bad_batches_get_kafkas_errors() -> None:
    good = build_batch(RECORDS, first_timestamp=T0)
    with pytest.raises(CorruptRecordError, match="only"):
        list(iter_batches(good[:-1]))
    with pytest.raises(CorruptRecordError, match="header needs"):
        list(iter_batches(good[:30]))
    magic1 = good[:16] + b"\x01" + good[17:]
    with pytest.raises(InvalidRecordError) as e:
        list(iter_batches(magic1))
    assert e.value.error_code == 87  # INVALID_RECORD
    # codec 5 with a correct CRC
    raw = bytearray(good)
    raw[22] |= 0x05
    struct.pack_into(">I", raw, 17, crc32c(bytes(raw[21:])))
    with pytest.raises(UnsupportedCompressionError) as e2:
        check_batch(read_batch_header(bytes(raw)))
    assert e2.value.error_code == 76
    # a records count that does not match the records, CRC recomputed
    raw = bytearray(good)
    struct.pack_into(">i", raw, 57, 4)
    struct.pack_into(">I", raw, 17, crc32c(bytes(raw[21:])))
    with pytest.raises(CorruptRecordError, match="record 3 of 4"):
        check_batch(read_batch_header(bytes(raw)))
    # gzip that is not gzip
    raw = bytearray(build_batch(RECORDS, first_timestamp=T0, compression_codec=compression.GZIP))
    raw[-6] ^= 0xFF  # inside gzip's CRC-32 trailer
    struct.pack_into(">I", raw, 17, crc32c(bytes(raw[21:])))
    with pytest.raises(CorruptRecordError):
        check_batch(read_batch_header(bytes(raw)))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 4))
def test_random_batch_bytes_raise_protocol_errors_only(tail: bytes, codec: int) -> None:
    head = bytearray(build_batch([], compression_codec=codec)[:61])
    struct.pack_into(">i", head, 8, 49 + len(tail))
    data = bytes(head) + tail
    try:
        for batch in iter_batches(data):
            check_batch(batch)
    except ProtocolError:
        pass
    # the same with the CRC made right, so the record parser itself sees the garbage
    raw = bytearray(data)
    struct.pack_into(">I", raw, 17, crc32c(bytes(raw[21:])))
    struct.pack_into(">i", raw, 57, len(tail) % 7)
    try:
        for batch in iter_batches(bytes(raw)):
            check_batch(batch)
    except ProtocolError:
        pass
