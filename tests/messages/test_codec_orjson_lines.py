"""messages.codec.orjson_lines writes, byte for byte, the lines the text encoder (fastcodec) writes: on every record of
a real trace, and on the values where orjson on its own would write something else."""

from __future__ import annotations

import enum
import json
from typing import Any

import attrs
import orjson

from kactor.trace.reader import ensure_registered
from messages.codec import fastcodec, orjson_lines
from messages.codec import reference as codec
from messages.common import Errors, TopicPartition
from messages.replication import FetchPartitionData, FetchResponse
from messages.requests import PartitionError, UpdateMetadataPartitionState
from messages.runtime import ScheduleTimer


@attrs.frozen
class _Holder:
    value: Any


class _Colour(enum.IntEnum):
    RED = 1


class _Name(str):
    pass


def _same(seq: int, ts: Any, body: Any, cause: int | None = None) -> str:
    assert orjson_lines.encode_value_bytes(body) == fastcodec.to_text(body).encode(), body  # a transport frame
    line = orjson_lines.encode_record(seq, ts, "a", "b", body, cause)
    assert line == fastcodec.encode_record(seq, ts, "a", "b", body, cause), body
    assert orjson_lines.encode_record_bytes(seq, ts, "a", "b", body, cause) == (line + "\n").encode()
    return line


def test_orjson_lines_match_a_recorded_trace(recorded_trace: str) -> None:
    ensure_registered()
    with open(recorded_trace, encoding="utf-8") as f:
        lines = f.read().splitlines()[1:]
    records = []
    for line in lines:
        d = json.loads(line)
        records.append((d["seq"], d["ts"], d["sender"], d["receiver"], codec.from_json(d["payload"]), d["cause"]))
    for _ in range(2):  # the second pass is served from the by-value caches the first one filled
        assert [orjson_lines.encode_record(*r) for r in records] == lines
        # the transport's frames: every body as the reference codec's dumps writes it
        assert [orjson_lines.encode_value_bytes(r[4]) for r in records] == \
            [codec.dumps(r[4]).encode() for r in records]


def test_values_orjson_would_write_differently() -> None:
    values: list[Any] = [
        _Colour.RED, Errors.NONE, (Errors.NONE, 1), [_Colour.RED],  # enums: {"@e": ..}, not their value
        {TopicPartition("t", 1): (1, 2)}, {}, {"k": Errors.NONE},  # dicts: {"@m": [[k, v], ..]}
        1e-05, 0.0001, 5e-324, -0.0, 0.0, 1e16, 1e22, float("nan"), float("inf"), float("-inf"),  # floats
        "é", "a\x7fb", "\u2028", "\x00\x1f\"\\",  # json escapes every non-ASCII char and DEL; orjson does not
        10**30, -(2**64),  # beyond orjson's 64 bits
        frozenset({TopicPartition("b", 0), TopicPartition("a", 1)}), frozenset(), b"\x00\xff", _Name("n"),
        (), [], ((1, (Errors.NONE,)),), True, False, None, 7, "x",
    ]
    for v in values:
        _same(1, 1.0, v)
        _same(2, 1.0, _Holder(v))
        _same(3, 1.0, _Holder((v, _Holder(v))))


def test_timestamps() -> None:
    for ts in (1795441106917.694, 1795441106917.6944, 1.0, 5, 0.0004, 1.23456789, 1e-7, 2.0**42 + 0.5, 2.0**60,
               -3.5, 1767225600000.5):
        line = _same(1, ts, TopicPartition("t", 0))
        assert line.startswith('{"seq":1,"ts":' + fastcodec.encode_json(round(ts, 3)) + ","), (ts, line)


def test_equal_values_of_other_types_keep_their_own_text() -> None:
    """By-value reuse never serves one value's text for an equal value of another type (Errors.NONE == 0,
    1 == 1.0 == True)."""
    tp = TopicPartition("t", 0)
    assert '"error":{"@e":"Errors","v":"NONE"}' in _same(1, 1.0, PartitionError(tp, Errors.NONE))
    assert '"error":0' in _same(2, 1.0, PartitionError(tp, 0))  # type: ignore[arg-type]
    assert '"error":{"@e":"Errors","v":"NONE"}' in _same(3, 1.0, PartitionError(tp, Errors.NONE))
    assert '"delay_ms":5.0' in _same(4, 1.0, ScheduleTimer("k", 5.0))
    assert '"delay_ms":5' in _same(5, 1.0, ScheduleTimer("k", 5))  # type: ignore[arg-type]
    data = FetchPartitionData(tp, Errors.NONE, 5, 5)
    assert '"error":{"@e":"Errors","v":"NONE"}' in _same(6, 1.0, FetchResponse((data,)))
    assert '"partitions":[{"@":"FetchPartitionData","tp":{"@":"TopicPartition","topic":"t","partition":0},"error":0' \
        in _same(7, 1.0, FetchResponse((attrs.evolve(data, error=0),)))  # a guard deeper down
    state = UpdateMetadataPartitionState(tp, 1, 0, 3, (0, 1), 4, (0, 1))
    twice = [_same(6, 1.0, state), _same(6, 1.0, attrs.evolve(state))]
    assert twice[0] == twice[1]


def test_batches_equal_their_records_one_by_one() -> None:
    shared = (TopicPartition("t", 0), TopicPartition("t", 1))
    records = [(i, 1767225600000.5 + (i // 2), "a", "b", shared if i % 2 else _Holder({i: Errors.NONE}), i - 1 or None)
               for i in range(1, 9)]
    assert orjson_lines.encode_records(records) == b"".join(orjson_lines.encode_record_bytes(*r) for r in records)
    assert orjson_lines.encode_records(records).decode() == fastcodec.encode_records(records)


def test_remembered_text_is_written_until_forgotten() -> None:
    """In an input's line; a line that is not an input writes the value afresh (a remembered text holds its bytes in
    full, where that line summarises them)."""
    value = _Holder("v")
    orjson_lines.remember_text(value, '{"@": "_Holder", "value": "v"}')
    try:
        line = orjson_lines.encode_record(1, 1.0, "edge:net", "b", (value,), None)
        assert '"payload":[{"@": "_Holder", "value": "v"}' in line
        assert '"payload":[{"@":"_Holder","value":"v"}]' in orjson_lines.encode_record(1, 1.0, "a", "b", (value,), None)
    finally:
        orjson_lines.forget_texts([id(value)])
    assert '"payload":[{"@":"_Holder","value":"v"}]' in orjson_lines.encode_record(1, 1.0, "a", "b", (value,), None)


def test_big_values_written_again_by_identity(monkeypatch: Any) -> None:
    """A request recorded as SendRequest, then as NetSend, then framed: its text is made once and reused while the
    very same object comes back; an equal but distinct object, or a changed copy, is written afresh — and all
    texts stay the text encoder's."""
    from messages.requests import UpdateMetadataRequest

    states = tuple(UpdateMetadataPartitionState(TopicPartition("big", p), 1, p % 3, 4, (0, 1), 7, (0, 1, 2))
                   for p in range(200))
    req = UpdateMetadataRequest(1, 2, 3, states, ())
    first = _same(1, 1.0, req)
    assert orjson_lines._big.get(id(req), (None,))[0] is req
    assert _same(2, 1.0, _Holder(req)) == first.replace('"seq":1,', '"seq":2,').replace(
        '"type":"UpdateMetadataRequest","payload":', '"type":"_Holder","payload":{"@":"_Holder","value":') \
        .replace(',"cause":null', '},"cause":null')
    twin = UpdateMetadataRequest(1, 2, 3, tuple(states), ())
    assert _same(1, 1.0, twin) == first
    changed = UpdateMetadataRequest(1, 2, 3, states[:-1], ())
    assert _same(1, 1.0, changed) != first
    monkeypatch.setattr(orjson_lines, "_BIG_RECENT_MAX", 16)
    for _ in range(16 + 1):  # others push it out; it is written afresh, the same
        _same(3, 1.0, UpdateMetadataRequest(9, 2, 3, states, ()))
    assert id(req) not in orjson_lines._big
    assert _same(1, 1.0, req) == first


def test_fields_of_declared_small_classes_and_enums_written_inline_keep_the_text() -> None:
    """A field declared as TopicPartition or as an Enum is written by the class's own encoder when it holds exactly
    that (orjson_lines._field_expr); anything else in it takes the general way, with the text encoder's result."""
    # (not TopicPartition("t", True): equal to ("t", 1), the text encoder's by-value cache serves either's text)
    for tp in (TopicPartition("t", 1), TopicPartition(_Name("t"), 1), TopicPartition("t", 2**70), ("t", 1), None):
        for error in (Errors.NONE, Errors.NOT_LEADER_OR_FOLLOWER, 0, _Colour.RED, "NONE"):
            _same(1, 1.0, FetchPartitionData(tp, error, 5, records=b"\x00" * 100))  # type: ignore[arg-type]
            _same(1, 1.0, FetchResponse((FetchPartitionData(tp, error),), error))  # type: ignore[arg-type]


def test_classes_written_inline_keep_the_text_of_the_general_way() -> None:
    """A wrapper's body (a field declared Any), a line's payload and the items of a field declared tuple[X, ...] are
    written by their class's encoder called inline when they hold a class `_default` keeps no text of
    (orjson_lines._inlined: a fetch's partitions); anything else in those fields takes the general way. Both kinds of
    line (an input keeps its bytes in full, any other line summarises long ones), against the text encoder."""
    from messages.net import NetReply, NetRequest
    from messages.partition import ShardReply, ShardRequest
    from messages.replication import FetchPartition, FetchRequest, ProducePartition, ProduceRequest

    assert orjson_lines._inlined(FetchPartitionData) and orjson_lines._inlined(FetchPartition)
    assert not orjson_lines._inlined(UpdateMetadataPartitionState)  # kept by value: it recurs
    tp = TopicPartition("t", 3)
    batch = bytes(range(100))
    data = FetchPartitionData(tp, Errors.NONE, 5, 5, 0, batch, 6)
    fetch = FetchRequest(1, (FetchPartition(tp, 5, 0), FetchPartition(tp, 6)), 500, 1, session_id=7)
    odd_items: list[Any] = [data, _Holder(data), None, (data,)]
    bodies: list[Any] = [
        FetchResponse((data, FetchPartitionData(tp, Errors.NOT_LEADER_OR_FOLLOWER))), FetchResponse(()),
        FetchResponse([data, data]),  # type: ignore[arg-type]  # a list where a tuple belongs
        FetchResponse(tuple(odd_items)), FetchResponse((attrs.evolve(data, records=b"short"),)),
        fetch, attrs.evolve(fetch, partitions=(FetchPartition(TopicPartition("t", 2**70), 1),)),
        ProduceRequest(-1, 30000, (ProducePartition(tp, batch), ProducePartition(tp, b"x"))),
        7, "s", None, (data, fetch), {tp: fetch}, _Holder(data),
    ]
    for sender in ("replica-manager", "edge:net"):
        for body in bodies:
            for value in (body, ShardRequest(1, body), ShardReply(1, 2, body), NetRequest(4, 5, body, True),
                          NetReply(4, 5, ShardReply(1, 2, body))):
                line = orjson_lines.encode_record(9, 1.5, sender, "b", value, None)
                assert line == fastcodec.encode_record(9, 1.5, sender, "b", value, None), value
                assert orjson_lines.encode_value_bytes(value) == fastcodec.to_text(value).encode(), value


def test_a_summary_written_again_by_identity_is_the_text_encoders() -> None:
    """The same bytes object in the next line (a fetch's answer: ShardReply, then NetReply) reuses its summary; an
    equal object, or other bytes, are summarised afresh; every line is the text encoder's."""
    from messages.net import NetReply
    from messages.partition import ShardReply
    from protocol.records import Record, build_batch

    batch = build_batch([Record(0, 0, None, b"x" * 100)], base_offset=7)
    equal = bytes(bytearray(batch))
    other = build_batch([Record(0, 0, None, b"y" * 100)], base_offset=8)
    lines = []
    for i, records in enumerate((batch, batch, equal, other, batch)):
        answer = FetchResponse((FetchPartitionData(TopicPartition("t", 0), Errors.NONE, 9, records=records),))
        body = ShardReply(i, 0, answer) if i % 2 == 0 else NetReply(1, i, answer)
        line = orjson_lines.encode_record(i, 1000.0, "partition-0", "net", body, None)
        assert line == fastcodec.encode_record(i, 1000.0, "partition-0", "net", body, None)
        lines.append(line)
        if i == 0:
            assert orjson_lines._recent[id(batch)][0] is batch  # kept for the next line
    assert '"first_offset":8' in lines[3] and '"first_offset":7' in lines[4]


@attrs.frozen
class _Answer:
    """Qualifies to be kept by value (plain fields, frozen), but no value recurs: a produce's answer."""

    topic: str
    base_offset: int
    error: Errors


def test_a_class_whose_values_do_not_recur_is_written_plainly_with_the_same_text(monkeypatch: Any) -> None:
    monkeypatch.setattr(orjson_lines, "_SAMPLE", 8)

    def line(i: int) -> str:  # one encoding a value: each is a miss (_same would hit it twice more)
        body = _Holder(_Answer("t", i, Errors.NONE))
        text = orjson_lines.encode_record(i, 1.0, "a", "b", body, None)
        assert text == fastcodec.encode_record(i, 1.0, "a", "b", body, None)
        return text

    first = [line(i) for i in range(3)]
    assert _Answer in orjson_lines._VALUES and _Answer not in orjson_lines._DEMOTED  # kept at first
    rest = [line(i) for i in range(3, 20)]
    assert _Answer in orjson_lines._DEMOTED and _Answer not in orjson_lines._VALUES  # 8 misses, no hit
    assert orjson_lines._INLINE[_Answer] is orjson_lines._ENCODERS[_Answer]  # a wrapper's body: written in its line
    assert [line(i) for i in range(20)] == first + rest
    direct = _same(1, 1.0, _Answer("t", 5, Errors.UNKNOWN_SERVER_ERROR))  # as a line's payload too
    assert '"error":{"@e":"Errors","v":"UNKNOWN_SERVER_ERROR"}' in direct


@attrs.define
class _Mutable:
    n: int


def test_a_long_tuple_of_frozen_values_held_by_several_values_is_written_once() -> None:
    """UpdateMetadata's requests of one batch share their partition states: the tuple's text is made for the first
    request and reused, by identity, for the others (each a distinct object, written in full before); the lines stay
    the text encoder's. A tuple whose items could change (a mutable class), a short one, a list, or an equal tuple
    that is another object are written afresh."""
    from messages.requests import UpdateMetadataRequest

    states = tuple(UpdateMetadataPartitionState(TopicPartition("shared", p), 1, p % 3, 4, (0, 1), 7, (0, 1, 2))
                   for p in range(orjson_lines._LONG_TUPLE))
    lines = [_same(b, 1.0, UpdateMetadataRequest(1, 2, b, states, ())) for b in range(5)]
    assert orjson_lines._big[id(states)][0] is states
    text = orjson.dumps(orjson_lines._big[id(states)][1]).decode()  # a Fragment is written as it is
    assert text.startswith('[{"@":"UpdateMetadataPartitionState"') and all(text in line for line in lines)
    assert _same(9, 1.0, _Holder(states)).count('"@":"UpdateMetadataPartitionState"') == len(states)

    mutable = tuple(_Mutable(i) for i in range(orjson_lines._LONG_TUPLE))
    before = _same(1, 1.0, _Holder(mutable))
    mutable[0].n = 99
    after = _same(1, 1.0, _Holder(mutable))
    assert after != before and '"n":99' in after
    assert id(mutable) not in orjson_lines._big
    short = states[:orjson_lines._LONG_TUPLE - 1]
    _same(1, 1.0, _Holder(short))
    assert id(short) not in orjson_lines._big
    as_list = list(states)
    _same(1, 1.0, _Holder(as_list))
    assert id(as_list) not in orjson_lines._big
    copy = tuple(list(states))
    assert _same(1, 1.0, _Holder(copy)) == _same(1, 1.0, _Holder(states))


def test_big_values_kept_by_identity_are_bounded_by_their_bytes(monkeypatch: Any) -> None:
    """The big values' FIFO keeps at most _BIG_RECENT_BYTES of text (the newest always), dropping the oldest, and
    counts exactly what it keeps."""
    from messages.requests import UpdateMetadataRequest

    monkeypatch.setattr(orjson_lines, "_BIG_RECENT_BYTES", 40_000)
    reqs = [UpdateMetadataRequest(1, 2, b, tuple(UpdateMetadataPartitionState(TopicPartition(f"b{b}", p), 1, 0, 4,
                                                                                (0, 1), 7, (0, 1))
                                                 for p in range(100)), ()) for b in range(12)]
    for r in reqs:
        _same(1, 1.0, r)
        kept = orjson_lines._big
        assert orjson_lines._big_bytes == sum(n for _, _, n in kept.values())
        assert orjson_lines._big_bytes <= 40_000 or len(kept) == 1
        assert kept[id(r)][0] is r  # the newest is kept
    assert id(reqs[0]) not in orjson_lines._big and id(reqs[0].partition_states) not in orjson_lines._big


@attrs.frozen
class _Ints:
    values: tuple[int, ...]


def test_a_field_declared_a_tuple_of_ints_keeps_the_text_of_the_general_way() -> None:
    """A field declared ``tuple[int, ...]`` (an ISR) is handed to orjson as it is when it holds plain items only;
    anything else in it (an enum, a float, a str subclass) or a list there goes the general way: the text is the
    text encoder's either way."""
    for values in [(1, 2), (), (True, None, "x"), tuple(range(100)), (_Colour.RED, 1), (1.5, 2), (_Name("n"),),
                   [1, 2], (Errors.NONE,)]:
        line = _same(1, 1.0, _Ints(values))  # type: ignore[arg-type]
        assert line == fastcodec.encode_record(1, 1.0, "a", "b", _Ints(values), None)  # type: ignore[arg-type]
    assert '{"@e":"_Colour","v":"RED"}' in _same(1, 1.0, _Ints((_Colour.RED, 1)))
