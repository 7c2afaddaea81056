"""protocol.records.check_records (what check_batch runs on every produced batch) accepts and refuses exactly the
bytes read_records does: valid batches of every record shape, and random or mutated bodies."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.errors import CorruptRecordError
from protocol.records import HEADER_SIZE, Header, Record, build_batch, check_records, iter_batches, read_records

_headers = st.lists(st.builds(Header, st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=5))), max_size=3)
_record_fields = st.tuples(st.integers(-(2**40), 2**40), st.one_of(st.none(), st.binary(max_size=300)),
                           st.one_of(st.none(), st.binary(max_size=300)), _headers)


def _outcome(fn, *args) -> str:  # noqa: ANN001, ANN002
    try:
        fn(*args)
    except CorruptRecordError:
        return "refused"
    return "accepted"


def _body_and_count(records: list[Record]) -> tuple[bytes, int]:
    (batch,) = iter_batches(build_batch(records))
    return batch.raw[HEADER_SIZE:], batch.records_count


@settings(max_examples=200, deadline=None)
@given(st.lists(_record_fields, max_size=40))
def test_valid_batches_are_accepted(fields: list) -> None:  # noqa: ANN001
    records = [Record(i * 37, ts, k, v, tuple(h)) for i, (ts, k, v, h) in enumerate(fields)]
    body, count = _body_and_count(records)
    check_records(body, count)


@settings(max_examples=500, deadline=None)
@given(st.lists(_record_fields, min_size=1, max_size=5), st.data())
def test_mutated_bodies_get_the_same_answer_as_read_records(fields: list, data: st.DataObject) -> None:  # noqa: ANN001
    records = [Record(i, ts, k, v, tuple(h)) for i, (ts, k, v, h) in enumerate(fields)]
    (batch,) = iter_batches(build_batch(records))
    raw = bytearray(batch.raw)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(HEADER_SIZE, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(HEADER_SIZE, len(raw)))
    count = data.draw(st.integers(0, len(records) + 2))
    mutated = bytes(raw[:cut])
    (as_read,) = iter_batches(mutated[:8] + (len(mutated) - 12).to_bytes(4, "big", signed=True) + mutated[12:57]
                              + count.to_bytes(4, "big", signed=True) + mutated[61:])
    assert _outcome(check_records, as_read.raw[HEADER_SIZE:], count) == _outcome(read_records, as_read)


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=200), st.integers(0, 6))
def test_random_bodies_get_the_same_answer_as_read_records(body: bytes, count: int) -> None:
    head = bytearray(build_batch([])[:HEADER_SIZE])
    head[8:12] = (HEADER_SIZE - 12 + len(body)).to_bytes(4, "big", signed=True)
    head[57:61] = count.to_bytes(4, "big", signed=True)
    (batch,) = iter_batches(bytes(head) + body)
    assert _outcome(check_records, body, count) == _outcome(read_records, batch)


def test_errors_name_the_record() -> None:
    body, _ = _body_and_count([Record(0, 0, b"k", b"v"), Record(1, 0, None, b"w")])
    with pytest.raises(CorruptRecordError, match="record 2 of 3"):
        check_records(body, 3)
    with pytest.raises(CorruptRecordError, match="bytes after the batch's 1 records"):
        check_records(body, 1)
    with pytest.raises(CorruptRecordError, match="record 0 of 1: the record runs past the end"):
        check_records(b"\x00", 1)  # a zero-length record: not even its attributes byte
    with pytest.raises(CorruptRecordError, match="header key is null"):
        # length 8: attributes, timestamp and offset deltas 0, null key and value, 1 header whose key is null
        check_records(bytes([16, 0, 0, 0, 1, 1, 2, 1, 1]), 1)


def test_produce_records_error_is_validate_records_over_next_batch():
    """2.6.3's ProduceRequest.validateRecords reads batches as ByteBufferLogInputStream.nextBatch does: the size field
    first (below a record's overhead: CORRUPT_MESSAGE), then whether the bytes hold that many (none: no batch, so
    INVALID_RECORD), and only then the magic: so garbage whose size runs past its end is INVALID_RECORD whatever byte
    stands where the magic would be (kactor's batch reader, which reads the magic first, answered CORRUPT_MESSAGE for
    a 2 there: `kactor sim --seeds 2285` caught it)."""
    from protocol.records import produce_records_error

    whole = build_batch([Record(0, 0, None, b"v")])
    assert produce_records_error(whole) is None
    assert produce_records_error(b"") is None
    for magic in (0, 2, 7, 0xFF):
        garbage = bytearray(61)
        garbage[8:12] = (10_000).to_bytes(4, "big")
        garbage[16] = magic
        assert produce_records_error(bytes(garbage))[0] == 87
    short = bytearray(whole)
    short[8:12] = (13).to_bytes(4, "big")
    assert produce_records_error(bytes(short))[0] == 2
    assert produce_records_error(whole[:-1])[0] == 87
