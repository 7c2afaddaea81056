"""Fetch's written-through v11 request body (`fetch.request_body_bytes`) is byte for byte what `request_to_wire` and
the generated encoder make, for every shape a follower or consumer sends (no partition, one, several topics
interleaved, forgotten partitions, a rack id, extreme values), and refuses what the encoder refuses; the v11 answer
read straight from its frame (`fetch.response_from_bytes`) is what the generated decoder and `response_from_wire`
read, and a frame it does not take whole is left to them."""

from __future__ import annotations

import itertools
import random
import struct

import pytest

from core.api import fetch
from edges.net.framing import decode_outbound
from messages.common import Errors, TopicPartition
from messages.replication import AbortedTransaction, FetchPartition, FetchPartitionData, FetchRequest, FetchResponse
from protocol.codec import encode_request
from protocol.errors import NullFieldError, ProtocolError
from protocol.framing import decode_response, encode_response
from protocol.records import Record, build_batch


def _plain(request: FetchRequest) -> bytes:
    return encode_request(1, fetch.SEND_VERSION, fetch.request_to_wire(request))


def _requests() -> list[FetchRequest]:
    rng = random.Random(43)
    topics = ["t", "u", "ü-topic", "a" * 200]
    out = [FetchRequest(2, ()), FetchRequest(-1, (), rack_id="rack-1"),
           FetchRequest(1, (), 500, 1, 10485760, 0, 7, 12, (TopicPartition("t", 3),), 2),
           FetchRequest(2147483647, (FetchPartition(TopicPartition("t", 2147483647), 2**63 - 1, 2**31 - 1,
                                                    -(2**63), -(2**31)),), -(2**31), 2**31 - 1, -(2**31), -128,
                        -(2**31), 2**31 - 1)]
    for n, m in itertools.product(range(5), range(4)):
        for _ in range(5):
            parts = tuple(FetchPartition(TopicPartition(rng.choice(topics), rng.randrange(50)), rng.randrange(2**40),
                                         rng.randrange(-1, 100), rng.randrange(-1, 2**40), rng.randrange(2**31))
                          for _ in range(n))
            forgotten = tuple(TopicPartition(rng.choice(topics), rng.randrange(50)) for _ in range(m))
            out.append(FetchRequest(rng.randrange(-1, 5), parts, rng.randrange(1000), rng.randrange(10),
                                    rng.randrange(2**31), rng.randrange(2), rng.randrange(2**31),
                                    rng.randrange(-1, 2**31), forgotten, rng.randrange(4),
                                    rng.choice(["", "r1", "zone-ü"])))
    return out


@pytest.mark.parametrize("request_", _requests())
def test_the_written_body_is_the_generated_encoders(request_: FetchRequest) -> None:
    assert fetch.request_body_bytes(request_) == _plain(request_)


def test_the_spec_sends_it() -> None:
    assert fetch.SPEC.request_body_bytes is fetch.request_body_bytes


def test_what_the_encoder_refuses_it_refuses() -> None:
    with pytest.raises(NullFieldError):
        _plain(FetchRequest(1, (), rack_id=None))  # type: ignore[arg-type]
    with pytest.raises(NullFieldError):
        fetch.request_body_bytes(FetchRequest(1, (), rack_id=None))  # type: ignore[arg-type]
    too_big = FetchRequest(1, (FetchPartition(TopicPartition("t", 0), 2**63),))
    with pytest.raises(struct.error):
        _plain(too_big)
    with pytest.raises(struct.error):
        fetch.request_body_bytes(too_big)


# -- the answer read straight from its frame --------------------------------------------------------------------------
def _answers() -> list[FetchResponse]:
    rng = random.Random(11)
    topics = ["t", "u", "ü-topic"]
    batch = build_batch([Record(0, 0, b"k", b"v" * 30)])
    out = [FetchResponse(()), FetchResponse((), Errors.FETCH_SESSION_ID_NOT_FOUND, 0, 100),
           FetchResponse((FetchPartitionData(TopicPartition("t", 0), Errors.NONE, 5, 5, 0, b"", 9),), Errors.NONE, 77)]
    for n in range(1, 6):
        for _ in range(6):
            out.append(FetchResponse(tuple(FetchPartitionData(
                TopicPartition(rng.choice(topics), rng.randrange(20)), rng.choice(list(Errors)),
                rng.randrange(-1, 2**40), rng.randrange(-1, 2**40), rng.randrange(-1, 2**40),
                rng.choice([b"", batch, batch + batch]), -1, rng.randrange(-1, 3),
                rng.choice([None, (), (AbortedTransaction(7, 3),), (AbortedTransaction(-1, 2**62), AbortedTransaction(
                    5, 0))])) for _ in range(n)), rng.choice([Errors.NONE, Errors.INVALID_FETCH_SESSION_EPOCH]),
                rng.randrange(2**31), rng.randrange(1000)))
    return out


def _frame(response: FetchResponse, corr: int) -> bytes:
    wire = fetch.response_to_wire(fetch.SEND_VERSION, response)
    return bytes(encode_response(1, fetch.SEND_VERSION, corr, wire))[4:]


def _plain_answer(payload: bytes) -> object:
    try:
        corr, body = decode_response(1, fetch.SEND_VERSION, payload)
        return corr, fetch.response_from_wire(fetch.SEND_VERSION, body)
    except ProtocolError as e:
        return type(e)


@pytest.mark.parametrize("response", _answers())
def test_the_answer_read_from_its_frame_is_the_plain_decoders(response: FetchResponse) -> None:
    frame = _frame(response, 12)
    expected = _plain_answer(frame)
    assert isinstance(expected, tuple) and expected[0] == 12
    assert sorted(d.tp for d in expected[1].partitions) == sorted(d.tp for d in response.partitions)
    assert fetch.response_from_bytes(frame) == expected
    assert fetch.response_from_bytes(bytearray(frame)) == expected
    assert decode_outbound(fetch.SPEC, bytearray(frame)) == expected


@pytest.mark.parametrize("response", _answers()[:12])
def test_a_frame_it_reads_any_way_is_read_as_the_plain_decoder_reads_it(response: FetchResponse) -> None:
    """Cut short anywhere, or any int16/int32 in it made negative: either it leaves the frame to the plain path
    (None), or it reads what the plain path reads."""
    frame = _frame(response, 3)
    variants = [frame[:i] for i in range(len(frame))]
    for i in range(len(frame) - 1):
        for bad in (b"\xff\xff", b"\xff\xfe", b"\x80\x00"):
            variants.append(frame[:i] + bad + frame[i + 2:])
    for i in range(len(frame) - 3):
        for bad in (b"\xff\xff\xff\xff", b"\xff\xff\xff\xfe", b"\x7f\xff\xff\xff"):
            variants.append(frame[:i] + bad + frame[i + 4:])
    for v in variants:
        fast = fetch.response_from_bytes(v)
        if fast is not None:
            assert fast == _plain_answer(v), v


def test_the_spec_reads_answers_with_it() -> None:
    assert fetch.SPEC.response_from_bytes is fetch.response_from_bytes
