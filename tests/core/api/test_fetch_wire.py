"""Fetch's written-through v11 request body (`fetch.request_body_bytes`) is byte for byte what `request_to_wire` and
the generated encoder make, for every shape a follower or consumer sends (no partition, one, several topics
interleaved, forgotten partitions, a rack id, extreme values), and refuses what the encoder refuses."""

from __future__ import annotations

import itertools
import random
import struct

import pytest

from core.api import fetch
from messages.common import TopicPartition
from messages.replication import FetchPartition, FetchRequest
from protocol.codec import encode_request
from protocol.errors import NullFieldError


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
