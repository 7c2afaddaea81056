"""check_batch reads an uncompressed batch's records in place (issue #43: no copy of a produced batch's body):
`check_records(raw, count, HEADER_SIZE)` accepts, refuses and words its refusal exactly as the plain check of the
sliced body, for valid and mutated batches."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.errors import CorruptRecordError
from protocol.records import HEADER_SIZE, Record, build_batch, check_batch, check_records, iter_batches

_records = st.lists(st.tuples(st.one_of(st.none(), st.binary(max_size=200)), st.binary(max_size=300)),
                    min_size=1, max_size=6)


def _answer(body: bytes, count: int, start: int = 0) -> str:
    try:
        check_records(body, count, start)
    except CorruptRecordError as e:
        return f"refused: {e}"
    return "accepted"


@settings(max_examples=400, deadline=None)
@given(_records, st.data())
def test_in_place_check_answers_as_the_sliced_body(fields: list, data: st.DataObject) -> None:  # noqa: ANN001
    (batch,) = iter_batches(build_batch([Record(i, i, k, v) for i, (k, v) in enumerate(fields)]))
    raw = bytearray(batch.raw)
    for _ in range(data.draw(st.integers(0, 3))):
        at = data.draw(st.integers(HEADER_SIZE, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    raw = raw[:data.draw(st.integers(HEADER_SIZE, len(raw)))]
    count = data.draw(st.integers(0, len(fields) + 2))
    assert _answer(bytes(raw), count, HEADER_SIZE) == _answer(bytes(raw[HEADER_SIZE:]), count)


def test_check_batch_accepts_a_valid_uncompressed_batch_and_names_a_bad_count() -> None:
    (batch,) = iter_batches(build_batch([Record(i, i, None, bytes(1000)) for i in range(100)]))
    check_batch(batch)
    assert _answer(batch.raw, 99, HEADER_SIZE) == _answer(batch.raw[HEADER_SIZE:], 99)
    assert _answer(batch.raw, 99, HEADER_SIZE).startswith("refused: ")
