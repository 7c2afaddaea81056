"""The replay's check (kactor.trace.replay._Check): `observe`'s fast path decides every message as the whole
comparison (`compare`) does — the same lines accepted, the same divergence, the same error — whatever comes where:
inputs at their place or not, produced lines equal or not, a produced message where an input was recorded and the
other way round, the end of the trace, an unencodable body, a line naming a scratch dir, every trace version."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from kactor.trace.replay import ReplayResult, _Check
from messages.codec import encode_record_bytes
from messages.common import TopicPartition
from messages.net import NetRequest
from messages.partition import ShardRequest
from messages.replication import ProducePartition, ProduceRequest
from messages.runtime import CancelTimer, ScheduleTimer, TimerFired
from protocol.records import Record, build_batch

TP = TopicPartition("orders", 1)
BATCH = build_batch([Record(i, 0, None, b"value-%d" % i * 40) for i in range(4)], base_offset=40)
PRODUCE = ProduceRequest(-1, 30000, (ProducePartition(TP, BATCH),))
SCRATCH, RECORDED = b"/dev/shm/kactor-replay-x/log-dir-0", b"/var/kafka/logs"


@attrs.frozen
class _Unencodable:
    """A body the trace encoder refuses (a field of a type the format cannot hold)."""

    value: Any


# the recorded trace: (seq, ts, sender, receiver, body, cause) per line
RECORDED_LINES = [
    (1, 1000.5, "edge:net", "replica-manager", NetRequest(3, 1, PRODUCE, True), None),
    (2, 1000.5, "replica-manager", "partition-1", ShardRequest(1, PRODUCE), 1),
    (3, 1000.5, "partition-1", "timer", ScheduleTimer("replica-tasks", 250.0), 2),
    (4, 1250.5, "edge:timer", "partition-1", TimerFired("replica-tasks"), None),
    (5, 1250.5, "partition-1", "timer", CancelTimer(RECORDED.decode()), 4),
    (6, 1300.0, "cli", "controller", TimerFired("cli-input"), None),
    (7, 1300.0, "controller", "timer", CancelTimer("k"), 6),
]

# what a replay may deliver instead of line i (each replaces the recorded message at that index)
VARIANTS: dict[str, tuple[int, tuple[Any, ...]]] = {
    "input with another seq": (0, (9, 1000.5, "edge:net", "replica-manager", NetRequest(3, 1, PRODUCE, True), None)),
    "input from another edge, same seq": (3, (4, 1250.5, "edge:zk", "partition-1", TimerFired("x"), None)),
    "produced, other payload": (1, (2, 1000.5, "replica-manager", "partition-1", ShardRequest(2, PRODUCE), 1)),
    "produced, other ts": (2, (3, 1000.25, "partition-1", "timer", ScheduleTimer("replica-tasks", 250.0), 2)),
    "produced, other cause": (2, (3, 1000.5, "partition-1", "timer", ScheduleTimer("replica-tasks", 250.0), None)),
    "produced where an input was recorded": (3, (4, 1250.5, "partition-1", "timer", TimerFired("replica-tasks"),
                                                 None)),
    "an input where a produced line was recorded": (2, (3, 1000.5, "edge:timer", "timer",
                                                        ScheduleTimer("replica-tasks", 250.0), 2)),
    "a cli input where a produced line was recorded": (6, (7, 1300.0, "cli", "timer", CancelTimer("k"), 6)),
    "unencodable": (2, (3, 1000.5, "partition-1", "timer", _Unencodable(object()), 2)),
    "the scratch dir in place of the recorded one": (4, (5, 1250.5, "partition-1", "timer",
                                                         CancelTimer(SCRATCH.decode()), 4)),
    "the scratch dir, other payload": (4, (5, 1250.5, "partition-1", "timer", CancelTimer(SCRATCH.decode() + "x"),
                                           4)),
}


def _texts(version: int) -> tuple[list[bytes], list[bytes]]:
    texts = [encode_record_bytes(*r, summarise=None if version >= 3 else False) for r in RECORDED_LINES]
    flags = [b"edge:" if r[2].startswith("edge:") else b"cli" if r[2].startswith("cli") else b""
             for r in RECORDED_LINES]
    return texts, flags


def _outcome(check: _Check, result: ReplayResult) -> tuple[Any, ...]:
    d = result.divergence
    return (check.j, check.stopped, type(check.error).__name__ if check.error is not None else None,
            None if d is None else (d.seq, d.field, d.expected, d.actual))


def _run(version: int, messages: list[tuple[Any, ...]], whole: bool, end: int | None = None) -> tuple[Any, ...]:
    texts, flags = _texts(version)
    result = ReplayResult("t.jsonl")
    check = _Check("t.jsonl", texts[:end], flags[:end], None, result, version)
    check.paths[SCRATCH] = RECORDED
    for m in messages:
        if whole:  # the whole comparison alone, as observe was before its fast path
            if not check.stopped:
                check.compare(check.j, *m)
        else:
            check.observe(*m)
    return _outcome(check, result)


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_the_recorded_messages_pass_both_ways(version: int, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = _run(version, RECORDED_LINES, whole=True)
    assert whole == (len(RECORDED_LINES), False, None, None)

    def not_here(*_: Any) -> None:
        raise AssertionError("the fast path left an equal line to the whole comparison")

    monkeypatch.setattr(_Check, "compare", not_here)
    assert _run(version, RECORDED_LINES, whole=False) == whole


@pytest.mark.parametrize("version", [2, 4])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_each_difference_is_decided_as_the_whole_comparison_decides_it(version: int, variant: str) -> None:
    at, message = VARIANTS[variant]
    messages = [*RECORDED_LINES[:at], message, *RECORDED_LINES[at + 1:]]
    fast = _run(version, messages, whole=False)
    assert fast == _run(version, messages, whole=True)
    if variant in ("the scratch dir in place of the recorded one", "input from another edge, same seq"):
        # mapped back, then equal; an input (tampered or not) only has to come at its recorded place
        assert fast == (len(RECORDED_LINES), False, None, None)
    else:
        assert fast[0] == at and fast[1], fast  # stopped right there
        assert (fast[2] is not None) == (variant == "unencodable"), fast


@pytest.mark.parametrize("end", [0, 3, 4])
def test_past_the_end_of_the_trace_nothing_more_is_compared(end: int) -> None:
    extra = [*RECORDED_LINES, (8, 1300.0, "controller", "timer", CancelTimer("more"), 6)]
    fast = _run(4, extra, whole=False, end=end)
    assert fast == _run(4, extra, whole=True, end=end)
    assert fast == (end, True, None, None)


def test_lines_are_parsed_as_the_stdlib_parses_them() -> None:
    """The replay reads lines (bytes, newline kept) with orjson; each value comes back as json.loads gives it,
    including what orjson alone reads differently (an integer past 64 bits becomes a float there) or refuses (NaN,
    lone surrogates), and a run of 19 digits that is no such integer."""
    import json

    from kactor.trace.replay import _loads

    lines = ['{"a":123456789012345678901234567890,"b":-12345678901234567890}', '{"x":NaN,"y":-Infinity}',
             '{"s":"\\ud83d","t":"\\u00e9"}', '{"q":-9223372036854775808,"r":1.5e-07,"z":-0.0}',
             '{"u":18446744073709551615,"v":18446744073709551616,"w":1234567890123456789}',
             '{"id":"12345678901234567890","n":1,"f":250.0,"e":1e-05}', '{"n":123456789012345678,"m":[1,2.5,null]}',
             *(encode_record_bytes(*r).decode() for r in RECORDED_LINES)]
    for text in lines:
        want = repr(json.loads(text))  # repr: nan != nan, and 1 == 1.0 would hide an int read as a float
        for form in (text, text.encode(), (text + "\n").encode()):
            assert repr(_loads(form)) == want, form


def test_the_lines_inputs_are_told_as_line_by_line() -> None:
    """`_input_flags` over the lines' heads at once gives each line's sender start as matching each line does, and
    falls back to that where a prefix is longer than a head; a corrupt line is the same clear error."""
    from kactor.trace.reader import TraceError
    from kactor.trace.replay import _GROUP_1, _HEAD_BYTES, _PREFIX_INPUT, _input_flags

    lines = [encode_record_bytes(*r) for r in RECORDED_LINES]
    odd = [b'{"seq":8,"ts":1.5,"sender":"edge:a\\"b","receiver":"x","type":"T","payload":null,"cause":null}\n',
           b'{"seq":9,"ts":1.5,"sender":"cli\\\\","receiver":"x","type":"T","payload":null,"cause":null}\n',
           b'{"seq":10,"ts":1.5,"sender":"' + b"e" * _HEAD_BYTES + b'","receiver":"x","type":"T","payload":null}\n',
           b'{"seq":11,"ts":2,"sender":"c"}\n']
    for texts in (lines, lines + odd, odd[::-1], [odd[2]], []):
        assert _input_flags("t.jsonl", texts) == list(map(_GROUP_1, map(_PREFIX_INPUT.match, texts)))
    assert [bool(f) for f in _input_flags("t.jsonl", lines)] == [r[2].startswith(("edge:", "cli"))
                                                                 for r in RECORDED_LINES]
    for bad in (b'{"seq":12,"sender":"x","ts":1}\n', b'{oops\n'):
        with pytest.raises(TraceError, match=r"t\.jsonl:4: corrupt trace line"):
            _input_flags("t.jsonl", [*lines[:2], bad, *lines[2:]])
