"""Bytes in the trace format (version 3 as version 2): ``{"@b64": base64}``, written identically by the reference, the
text encoder (fastcodec) and orjson's lines (of inputs: other lines summarise long bytes, tests/messages/
test_codec_summary.py) and frames, decoded back exactly; version 1's ``{"@b": latin-1}`` still decodes; malformed
bytes values are the codec's CodecError."""

from __future__ import annotations

import base64
import json
import random

import pytest

import messages.codec
from messages.codec import TRACE_VERSION, fastcodec, fastdecode, orjson_lines
from messages.codec import reference as codec
from messages.common import Errors, TopicPartition
from messages.replication import FetchPartitionData

_RNG = random.Random(20)
_BATCH = bytes(_RNG.randrange(256) for _ in range(4096))  # random bytes: every byte value, most ≥ 0x80
_CASES = [b"", b"\x00", b"\x00\xff", b"a\x7fb\"\\", bytes(range(256)), _BATCH, b"x" * 1000 + b"\x80"]


def test_bytes_are_base64_in_every_encoder() -> None:
    assert TRACE_VERSION == 4  # (4: a trace writer's input lines hold references; tests/trace/test_trace_versions.py)
    for b in _CASES:
        want = '{"@b64":"' + base64.b64encode(b).decode("ascii") + '"}'
        assert codec.dumps(b) == want
        assert fastcodec.to_json(b) == codec.to_json(b) == {"@b64": base64.b64encode(b).decode("ascii")}
        assert fastcodec.to_text(b) == want
        assert orjson_lines.encode_value_bytes(b) == want.encode("ascii")  # a transport frame
        assert messages.codec.dumps(b) == want


def test_lines_holding_bytes_equal_the_reference_and_decode_back() -> None:
    for i, b in enumerate(_CASES):
        body = FetchPartitionData(TopicPartition("t", i), Errors.NONE, high_watermark=5, records=b)
        ref = json.dumps({"seq": i, "ts": 1767225600000.5, "sender": "edge:net", "receiver": "b",
                          "type": "FetchPartitionData", "payload": codec.to_json(body), "cause": None},
                         separators=(",", ":"))
        assert fastcodec.encode_record(i, 1767225600000.5, "edge:net", "b", body, None) == ref
        line = orjson_lines.encode_record_bytes(i, 1767225600000.5, "edge:net", "b", body, None)
        assert line == (ref + "\n").encode("ascii")
        assert len(line) < 1.34 * len(b) + 400  # base64: 4/3 of the bytes plus the line's other fields
        payload = json.loads(line)["payload"]
        assert fastdecode.from_json(payload) == codec.from_json(payload) == body
        assert messages.codec.loads(messages.codec.dumps_bytes(body)) == body


def test_version_1_bytes_still_decode() -> None:
    for b in _CASES:
        old = {"@b": b.decode("latin-1")}  # what trace version 1 wrote
        assert codec.from_json(old) == fastdecode.from_json(old) == b
        assert messages.codec.loads(json.dumps(old)) == b


@pytest.mark.parametrize("bad", [{"@b64": "abc"}, {"@b64": "a*=="}, {"@b64": 5}, {"@b": "\u0100"}, {"@b": None}])
def test_malformed_bytes_are_codec_errors(bad: dict[str, object]) -> None:
    with pytest.raises(codec.CodecError, match="bad bytes value"):
        codec.from_json(bad)
    with pytest.raises(codec.CodecError, match="bad bytes value"):
        fastdecode.from_json(bad)
