"""The transport's frame decoding: orjson first (json for what it refuses), and the trace's body text sliced out of
the frame when the frame has the layout `encode_frame` writes (re-encoded otherwise)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from edges.transport import (
    MalformedFrameError,
    body_text,
    decode_frame,
    decode_frame_and_body_text,
    encode_frame,
)
from messages.codec import encode_json, to_json
from messages.common import TopicPartition
from messages.net import NetWireError, NetWireRequest, NetWireResponse
from messages.requests import LeaderAndIsrPartitionState, LeaderAndIsrRequest

BODIES: list[Any] = [
    TopicPartition('tö\u2028p"x/\\', 1),
    LeaderAndIsrRequest(1, 2, 3, tuple(LeaderAndIsrPartitionState(TopicPartition(f"t{i}", 0), 1, 2, 3, (2, 1), 4,
                                                                  (1, 2)) for i in range(50)), ()),
    1.5e300, 2 ** 70, -0.0, 1e16, float("nan"), "", [], {"a": [1, {"b": None}]},
]


def _frames(body: Any) -> list[Any]:
    return [NetWireRequest(7, "replica-manager", body, True), NetWireRequest(8, "ä \"q\"", body, False),
            NetWireResponse(9, body)]


@pytest.mark.parametrize("body", BODIES, ids=lambda b: type(b).__name__)
def test_decoded_frames_are_what_json_decodes(body: Any) -> None:
    for frame in _frames(body):
        payload = encode_frame(frame)[4:]
        tag, data = decode_frame(payload)
        expected = json.loads(payload.decode("utf-8"))
        assert tag == type(frame).__name__
        assert encode_json(data) == encode_json(expected)  # NaN != NaN: compare their codec text


@pytest.mark.parametrize("body", BODIES, ids=lambda b: type(b).__name__)
def test_the_body_text_from_the_wire_is_the_codec_text(body: Any) -> None:
    for frame in _frames(body):
        payload = encode_frame(frame)[4:]
        tag, data, wire_text = decode_frame_and_body_text(payload)
        assert body_text(data, wire_text) == encode_json(to_json(body)) == body_text(data)
        # our own layout is split at the body, except where orjson differs from json (an int beyond 64 bits, NaN)
        assert (wire_text is None) == (body == 2 ** 70 or body != body)


def test_the_body_text_is_the_one_that_arrived() -> None:
    # a peer that spaces its body differently: the text recorded is the one that arrived (same JSON value)
    payload = b'{"@":"NetWireResponse","request_id":3,"body":[1, 2]}'
    _, data, wire_text = decode_frame_and_body_text(payload)
    assert (body_text(data, wire_text), data) == ("[1, 2]", {"@": "NetWireResponse", "request_id": 3,
                                                             "body": [1, 2]})
    payload = b'{"@":"NetWireRequest","request_id":4,"to":"n\\"et","body":{"x": 1},"reply_expected":false}'
    _, data, wire_text = decode_frame_and_body_text(payload)
    assert body_text(data, wire_text) == '{"x": 1}'
    assert data == json.loads(payload)


@pytest.mark.parametrize("payload", [
    b'{"@": "NetWireResponse", "request_id": 3, "body": [1, 2]}',  # another key layout
    b'{"@":"NetWireResponse","body":[1, 2],"request_id":3}',  # another key order
    b'{"@":"NetWireRequest","request_id":4,"to":"net","body":[1, 2],"reply_expected":true,"x":1}',  # extra key
    b'{"@":"NetWireResponse","request_id":3,"body":[1, 2],"x":{}}',  # extra key after a response's body
    b'{"@":"NetWireResponse","request_id":3,"body":[1, 2],"body":[3]}',  # duplicated key: the last one counts
    b'{"@":"NetWireRequest","request_id":4,"to":"a","body":1,"to":"b","body":2,"reply_expected":true}',
    b'{"@":"NetWireResponse","request_id":12345678901234567890,"body":[1, 2]}',  # beyond int64
    b'{"@":"NetWireResponse","request_id":3,"body":[NaN, 1e999]}',  # what orjson refuses and json reads
])
def test_any_other_frame_is_json_decoded_and_its_body_re_encoded(payload: bytes) -> None:
    tag, data, wire_text = decode_frame_and_body_text(payload)
    assert wire_text is None
    assert encode_json(data) == encode_json(json.loads(payload))
    assert body_text(data, wire_text) == encode_json(data["body"])


@pytest.mark.parametrize("payload", [b"\xff\xfe{}", b"not json", b"[1]", b'{"@":"Other","request_id":1}',
                                     b'{"@":"NetWireResponse","request_id":"1","body":1}'])
def test_malformed_frames_are_refused(payload: bytes) -> None:
    with pytest.raises(MalformedFrameError):
        decode_frame(payload)


def test_an_error_frame_decodes() -> None:
    tag, data = decode_frame(encode_frame(NetWireError(5, "no actor"))[4:])
    assert (tag, data["error"]) == ("NetWireError", "no actor")
