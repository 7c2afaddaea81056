"""protocol.records.check_records' inline paths (a null key's one byte, two-byte timestamp and offset deltas, a
two-byte length) answer every one-byte corruption of a record's framing as read_records does (issue #43: the
leader's per-record check of produced batches, LogValidator's, made cheaper without changing what it accepts)."""

from __future__ import annotations

from protocol.errors import CorruptRecordError
from protocol.records import HEADER_SIZE, Record, build_batch, check_records, iter_batches, read_records


def _outcome(fn, *args) -> str:  # noqa: ANN001, ANN002
    try:
        fn(*args)
    except CorruptRecordError:
        return "refused"
    return "accepted"


def test_every_byte_of_the_framing_corrupted_gets_read_records_answer() -> None:
    # 70 records: offset deltas from 64 and timestamp deltas from 32 take two bytes; null and 2-byte keys; values of
    # 0, 1 and 100 bytes (one- and two-byte sizes)
    records = [Record(i, i * 3 if i % 2 else -i, None if i % 3 else b"k" * (i % 5), b"v" * (0, 1, 100)[i % 3])
               for i in range(70)]
    (batch,) = iter_batches(build_batch(records))
    body = batch.raw[HEADER_SIZE:]
    assert _outcome(check_records, body, 70) == "accepted"
    read = batch.records()
    assert [(r.offset_delta, r.timestamp_delta, r.key, r.value) for r in read] == \
        [(r.offset_delta, r.timestamp_delta, r.key, r.value) for r in records]
    # the framing of the last records (from record 60 on: two-byte deltas) and of the first, every byte value that
    # changes a varint's width or sign
    positions = list(range(0, 40)) + list(range(len(body) - 400, len(body)))
    compared = 0
    for at in positions:
        for value in (0x00, 0x01, 0x02, 0x7E, 0x7F, 0x80, 0x81, 0xFE, 0xFF):
            if body[at] == value:
                continue
            mutated = bytearray(batch.raw)
            mutated[HEADER_SIZE + at] = value
            (as_read,) = iter_batches(bytes(mutated))
            assert _outcome(check_records, bytes(mutated[HEADER_SIZE:]), 70) == _outcome(read_records, as_read), \
                (at, value)
            compared += 1
    assert compared > 3000
