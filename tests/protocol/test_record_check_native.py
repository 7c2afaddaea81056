"""protocol/_records_check.c, the compiled per-record check of produced batches (issue #43), accepts exactly the
records the Python walk (`check_records_walk`) accepts: on generated batches (keys, values and headers null, empty,
long, non-ASCII; deltas of every varint width) and on the same batches corrupted (a byte changed, bytes cut, bytes
added, the record count off by one). Where it refuses, check_records raises the walk's own error."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import records
from protocol.errors import CorruptRecordError
from protocol.primitives import write_uvarint
from protocol.records import Header, Record, encode_record

records_valid = records._records_valid


def test_the_extension_is_built() -> None:
    # scripts/setup's install compiles it; were it missing, the produce path would silently take the Python walk
    assert records_valid is not None, "protocol/_records_check.c was not built (pip install -e . needs a C compiler)"


def _walk_accepts(body: bytes, count: int, start: int) -> bool:
    try:
        records.check_records_walk(body, count, start)
    except CorruptRecordError:
        return False
    return True


_bytes = st.one_of(st.none(), st.binary(max_size=3), st.binary(min_size=60, max_size=200))
_header_key = st.one_of(st.text(max_size=4), st.just("ключ"), st.just("k"))
_record = st.builds(
    Record,
    offset_delta=st.one_of(st.integers(0, 200), st.integers(0, 2**31 - 1)),
    timestamp_delta=st.one_of(st.integers(-100, 100), st.integers(-(2**63), 2**63 - 1)),
    key=_bytes,
    value=_bytes,
    headers=st.lists(st.builds(Header, key=_header_key, value=_bytes), max_size=3).map(tuple),
)


@st.composite
def _corrupted(draw: st.DrawFn) -> tuple[bytes, int, int]:
    recs = draw(st.lists(_record, max_size=6))
    start = draw(st.sampled_from([0, 61]))
    body = bytearray(b"\x00" * start + b"".join(encode_record(r) for r in recs))
    count = len(recs)
    for _ in range(draw(st.integers(0, 3))):
        how = draw(st.sampled_from(["set", "cut", "add", "count"]))
        if how == "set" and len(body) > start:
            at = draw(st.integers(start, len(body) - 1))
            body[at] = draw(st.sampled_from([0x00, 0x01, 0x02, 0x7F, 0x80, 0xC3, 0xFF, draw(st.integers(0, 255))]))
        elif how == "cut" and len(body) > start:
            at = draw(st.integers(start, len(body) - 1))
            del body[at : at + draw(st.integers(1, 4))]
        elif how == "add":
            at = draw(st.integers(start, len(body)))
            body[at:at] = draw(st.binary(min_size=1, max_size=3))
        elif how == "count":
            count += draw(st.sampled_from([-1, 1]))
    return bytes(body), count, start


@settings(max_examples=1000, deadline=None)
@given(_corrupted())
def test_the_compiled_check_accepts_what_the_walk_accepts(case: tuple[bytes, int, int]) -> None:
    body, count, start = case
    assert records_valid(body, count, start) == _walk_accepts(body, count, start)


VARIED = [
    Record(0, 0, None, b"v"),
    Record(1, -3, b"", None, (Header("k", b"x"), Header("ключ", None))),
    Record(70, 40, b"key", b"w" * 70),  # two-byte deltas and value size
    Record(2**20, 2**40, None, b"", (Header("", b""),)),
]


def _uvarint(n: int, pad: int = 0) -> bytes:
    """n as an unsigned varint (`write_uvarint`), padded with ``pad`` extra bytes (0x80 continuations then 0x00): a
    longer encoding of the same value, which Kafka reads up to 5 bytes (a varlong 10) and refuses beyond."""
    buf = bytearray()
    write_uvarint(buf, n)
    if pad:
        buf[-1] |= 0x80
        buf += b"\x80" * (pad - 1) + b"\x00"
    return bytes(buf)


def _same_answers(body: bytes, count: int) -> None:
    assert records_valid(body, count, 0) == _walk_accepts(body, count, 0), (body.hex(), count)


def test_every_byte_changed_added_or_cut_gets_the_same_answer() -> None:
    body = b"".join(encode_record(r) for r in VARIED)
    assert records_valid(body, 4, 0) is True
    for at in range(len(body)):
        for value in (0x00, 0x01, 0x02, 0x7E, 0x7F, 0x80, 0x81, 0xC3, 0xFE, 0xFF):
            _same_answers(body[:at] + bytes([value]) + body[at + 1 :], 4)
            _same_answers(body[:at] + bytes([value]) + body[at:], 4)
        _same_answers(body[:at] + body[at + 1 :], 4)
    for count in (-1, 0, 3, 5):
        _same_answers(body, count)


def test_a_record_longer_or_shorter_than_its_fields_is_refused_by_both() -> None:
    fields = encode_record(Record(5, 5, b"k", b"value"))[1:]  # attributes onward (its length is one byte)
    for extra in (-2, -1, 1, 2):
        declared = len(fields) + extra
        body = _uvarint(declared << 1) + fields + b"\x00" * max(extra, 0)
        assert records_valid(body, 1, 0) is False and _walk_accepts(body, 1, 0) is False, extra


def test_long_encodings_of_each_varint_are_read_to_kafkas_limits() -> None:
    # a record's length, offset delta, key and value sizes and header count are varints (5 bytes at most); its
    # timestamp delta a varlong (10): padded to the limit they are accepted, one byte more refused
    def record(ts: bytes = b"\x00", od: bytes = b"\x00", key: bytes = b"\x01", value: bytes = b"\x00",
               headers: bytes = b"\x00", length_pad: int = 0) -> bytes:
        fields = b"\x00" + ts + od + key + value + headers
        return _uvarint(len(fields) << 1, length_pad) + fields

    cases = {
        "length": lambda pad: record(length_pad=pad),
        "offset delta": lambda pad: record(od=_uvarint(0, pad)),
        "key size": lambda pad: record(key=_uvarint(1, pad)),
        "value size": lambda pad: record(value=_uvarint(0, pad)),
        "header count": lambda pad: record(headers=_uvarint(0, pad)),
    }
    for name, build in cases.items():
        assert records_valid(build(4), 1, 0) is True and _walk_accepts(build(4), 1, 0), name
        assert records_valid(build(5), 1, 0) is False and not _walk_accepts(build(5), 1, 0), name
    assert records_valid(record(ts=_uvarint(0, 9)), 1, 0) is True
    assert records_valid(record(ts=_uvarint(0, 10)), 1, 0) is False and not _walk_accepts(record(ts=_uvarint(0, 10)),
                                                                                          1, 0)


def test_header_keys_are_checked_as_utf_8_by_both() -> None:
    good = encode_record(Record(0, 0, None, b"v", (Header("ключ", b"x"),)))
    key_at = good.index("ключ".encode())
    # each as long as the key's 8 bytes: a sequence cut short, a surrogate, an overlong "/", past U+10FFFF
    for bad in (b"abcdefg\xc3", b"ab\xed\xa0\x80def", b"ab\xc0\xafdefg", b"ab\xf4\x90\x80\x80fg"):
        body = good[:key_at] + bad + good[key_at + len(bad) :]
        assert records_valid(body, 1, 0) is False and _walk_accepts(body, 1, 0) is False, bad
    assert records_valid(good, 1, 0) is True


def test_a_refusal_raises_the_walks_error() -> None:
    body = encode_record(Record(0, 0, None, b"value"))
    with pytest.raises(CorruptRecordError, match=r"1 bytes after the batch's 1 records"):
        records.check_records(body + b"\x00", 1)
    with pytest.raises(CorruptRecordError, match=r"record 1 of 2: the record runs past the end of the batch"):
        records.check_records(body, 2)
