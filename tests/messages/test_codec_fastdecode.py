"""messages.codec.fastdecode decodes exactly as the reference codec does: the same values on every record of a real
trace, the same values or the same CodecError on what the fast path does not take."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kactor.trace.reader import ensure_registered
from messages import common
from messages.codec import fastdecode
from messages.codec import reference as codec


def _same(a: Any, b: Any) -> bool:
    """Equal, and of the same classes all the way down (1 == 1.0 == True would hide a difference)."""
    return a == b and repr(a) == repr(b) and type(a) is type(b)


def test_fastdecode_matches_the_codec_on_a_recorded_trace(recorded_trace: str) -> None:
    ensure_registered()
    with open(recorded_trace, encoding="utf-8") as f:
        lines = f.read().splitlines()[1:]
    assert len(lines) > 100
    for line in lines:
        payload = json.loads(line)["payload"]
        assert _same(fastdecode.from_json(payload), codec.from_json(payload)), line
    fastdecode.prepare()  # every registered type gets its decoder without error
    assert len(fastdecode._DECODERS) >= len(codec.lookup_type.__globals__["_TYPES"])


def test_fastdecode_edge_values_and_errors() -> None:
    ensure_registered()
    from messages.common import TopicPartition

    tp = codec.to_json(TopicPartition("t", 1))
    cases = [None, 1, 1.5, "x", True, [1, [2, tp]], tp, {"@m": [[tp, [1, 2]]]}, {"@s": [tp]}, {"@b": "\x00\xff"},
             {"@e": "Errors", "v": "NONE"}, {"@e": "Errors", "v": "NONE"}, {"@": "TopicPartition", "partition": 1,
                                                                           "topic": "t"}]
    for data in cases:
        assert _same(fastdecode.from_json(data), codec.from_json(data)), data
    errors = [{"@": "NoSuchMessage"}, {"@": "TopicPartition", "topic": "t"},  # missing field
              {"@": "TopicPartition", "topic": "t", "partition": 1, "extra": 2},
              {"@": "TopicPartition", "topic": "t", "partition": 1, "x": 2, "y": 3},  # more keys than fields
              {"@e": "Errors", "v": "NO_SUCH_ERROR"}, {"@e": "NoSuchEnum", "v": "X"}, {"untagged": 1},
              {"@": "TopicPartition", "topic": "t", "partitio": 1}]  # a misspelt key, right count
    for data in errors:
        with pytest.raises(codec.CodecError) as want:
            codec.from_json(data)
        with pytest.raises(codec.CodecError) as got:
            fastdecode.from_json(data)
        assert str(got.value) == str(want.value), data
    # the transport decodes what peers send: unknown tags are not remembered
    known = len(fastdecode._DECODERS)
    for i in range(100):
        with pytest.raises(codec.CodecError):
            fastdecode.from_json({"@": f"MadeUp{i}"})
    assert len(fastdecode._DECODERS) == known and "MadeUp0" not in fastdecode._DECODERS


def test_a_topic_partition_decodes_to_one_value_per_partition_and_anything_else_as_the_codec_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from messages.common import TopicPartition

    ensure_registered()
    tp = {"@": "TopicPartition", "topic": "orders", "partition": 3}
    first = fastdecode.from_json(tp)
    assert first == codec.from_json(tp) == TopicPartition("orders", 3)
    assert fastdecode.from_json(dict(tp)) is first  # the same value, built once
    assert fastdecode.from_json({**tp, "partition": 4}) == TopicPartition("orders", 4)
    for odd in ({**tp, "partition": True}, {**tp, "partition": 3.0}, {**tp, "topic": b"orders"}):
        assert fastdecode.from_json(odd) == codec.from_json(odd)  # what the class takes, as the codec builds it
        assert fastdecode.from_json(odd) is not first
    for bad in ({"@": "TopicPartition", "topic": "orders"}, {**tp, "extra": 1}):
        with pytest.raises(codec.CodecError) as fast:
            fastdecode.from_json(bad)
        with pytest.raises(codec.CodecError) as plain:
            codec.from_json(bad)
        assert str(fast.value) == str(plain.value)
    # bounded: a peer's made-up partitions empty the table (the wire decoders', messages/common.py) when it is full,
    # and decoding goes on
    monkeypatch.setattr(common, "_INTERNED_MAX", 3)
    monkeypatch.setattr(common, "_INTERNED", {})
    for p in range(10):
        assert fastdecode.from_json({**tp, "partition": p}) == TopicPartition("orders", p)
        assert len(common._INTERNED) <= 3
