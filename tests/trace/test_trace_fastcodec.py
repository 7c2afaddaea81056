"""kactor.trace.fastcodec encodes and decodes exactly as messages.codec does, on every record of a real trace."""

from __future__ import annotations

import json

from kactor.trace import fastcodec
from kactor.trace.reader import ensure_registered
from kactor.trace.writer import encode_record
from messages import codec


def test_fastcodec_matches_the_codec_on_a_recorded_trace(recorded_trace: str) -> None:
    ensure_registered()
    with open(recorded_trace, encoding="utf-8") as f:
        lines = f.read().splitlines()[1:]
    assert len(lines) > 100
    for line in lines:
        d = json.loads(line)
        body = codec.from_json(d["payload"])
        assert fastcodec.from_json(d["payload"]) == body
        assert fastcodec.to_json(body) == codec.to_json(body) == d["payload"]
        # the writer's line is byte for byte the recorded one
        assert encode_record(d["seq"], d["ts"], d["sender"], d["receiver"], body, d["cause"]) == line


def test_fastcodec_edge_values() -> None:
    import enum

    from messages.common import TopicPartition

    class Colour(enum.IntEnum):
        RED = 1

    values = [None, True, 1, 1.5, "x", (1, "a"), [TopicPartition("t", 0)], {TopicPartition("t", 1): (1, 2)},
              frozenset({TopicPartition("b", 0), TopicPartition("a", 1)}), b"\x00\xff", Colour.RED]
    for v in values:
        assert fastcodec.to_json(v) == codec.to_json(v), v
