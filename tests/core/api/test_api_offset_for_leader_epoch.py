"""OffsetForLeaderEpoch (key 23): the fetcher's v3 request is Kafka's bytes and reads back; v0-2 read with their
defaults (current leader epoch -1, replica id -2); the response both ways at every version (no leader epoch in v0,
no throttle time before v2); the error response fails every partition."""

from __future__ import annotations

import pytest

from core.api import offset_for_leader_epoch as ofle
from messages.common import Errors
from messages.replication import (
    OffsetForLeaderPartition,
    OffsetForLeaderPartitionResult,
    OffsetForLeaderTopic,
    OffsetForLeaderTopicResult,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
)
from tests.protocol.wire_by_hand import arr, i16, i32, i64, string
from tests.support.api_wire import request_through_wire, response_through_wire

REQUEST = OffsetsForLeaderEpochRequest((OffsetForLeaderTopic("t", (OffsetForLeaderPartition(0, 5, 4),
                                                                  OffsetForLeaderPartition(3, 5, 2))),), 1)


def test_v3_request_bytes_and_back() -> None:
    data, decoded = request_through_wire(23, ofle.SEND_VERSION, ofle.request_to_wire(REQUEST))
    assert data == i32(1) + arr([string("t") + arr([i32(0) + i32(5) + i32(4), i32(3) + i32(5) + i32(2)])])
    assert ofle.request_from_wire(3, decoded) == REQUEST


@pytest.mark.parametrize("version", [0, 1, 2])
def test_older_requests(version: int) -> None:
    p = {"partition": 0, "leader_epoch": 4} | ({"current_leader_epoch": 5} if version >= 2 else {})
    _, decoded = request_through_wire(23, version, {"topics": [{"topic": "t", "partitions": [p]}]})
    assert ofle.request_from_wire(version, decoded) == OffsetsForLeaderEpochRequest(
        (OffsetForLeaderTopic("t", (OffsetForLeaderPartition(0, 5 if version >= 2 else -1, 4),)),), -2)


RESPONSE = OffsetsForLeaderEpochResponse((OffsetForLeaderTopicResult("t", (
    OffsetForLeaderPartitionResult(Errors.NONE, 0, 4, 120),
    OffsetForLeaderPartitionResult(Errors.FENCED_LEADER_EPOCH, 3, -1, -1))),), 0)


@pytest.mark.parametrize("version", range(4))
def test_response_both_ways(version: int) -> None:
    data, decoded = response_through_wire(23, version, ofle.response_to_wire(version, RESPONSE))
    epoch = (lambda e: i32(e)) if version >= 1 else (lambda e: b"")
    parts = [i16(0) + i32(0) + epoch(4) + i64(120), i16(74) + i32(3) + epoch(-1) + i64(-1)]
    assert data == (i32(0) if version >= 2 else b"") + arr([string("t") + arr(parts)])
    back = ofle.response_from_wire(version, decoded)
    if version >= 1:
        assert back == RESPONSE
    else:  # v0 has no leader epoch: read as undefined
        assert [p.leader_epoch for p in back.topics[0].partitions] == [-1, -1]
        assert [p.end_offset for p in back.topics[0].partitions] == [120, -1]


def test_error_response() -> None:
    err = ofle.error_response(3, ofle.request_to_wire(REQUEST), Errors.KAFKA_STORAGE_ERROR)
    assert ofle.response_from_wire(3, err) == OffsetsForLeaderEpochResponse((OffsetForLeaderTopicResult("t", (
        OffsetForLeaderPartitionResult(Errors.KAFKA_STORAGE_ERROR, 0, -1, -1),
        OffsetForLeaderPartitionResult(Errors.KAFKA_STORAGE_ERROR, 3, -1, -1))),))
