"""ListOffsets (key 2): kafka-python 1.4.7's requests (v0-2) and our v4-5 bodies read with their defaults; the answer
at every version (v0's old_style_offsets, v1's timestamp + offset, v4's leader epoch) read back by kafka-python 1.4.7
where it can; the error response."""

from __future__ import annotations

import pytest
from kafka.protocol.offset import OffsetRequest as KpOffsetRequest
from kafka.protocol.offset import OffsetResponse as KpOffsetResponse

from core.api import list_offsets
from messages.common import Errors, TopicPartition
from messages.replication import (
    ListOffsetsPartition,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
)
from protocol.codec import decode_request, encode_response
from tests.protocol.wire_by_hand import arr, i8, i32, i64, string
from tests.support.api_wire import request_through_wire, response_through_wire

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_kafka_python_requests(version: int) -> None:
    partitions = [(0, -1, 1), (1, -2, 1)] if version == 0 else [(0, -1), (1, -2)]
    request = KpOffsetRequest[version](-1, *([1] if version == 2 else []), [("t", partitions)])
    data = request.encode()
    decoded, end = decode_request(2, version, data)
    assert end == len(data)
    assert list_offsets.request_from_wire(version, decoded) == ListOffsetsRequest(
        -1, 1 if version == 2 else 0, (ListOffsetsPartition(T0, -1), ListOffsetsPartition(T1, -2)))


def test_v5_request_with_current_leader_epoch() -> None:
    body = {"replica_id": -1, "isolation_level": 1, "topics": [
        {"name": "t", "partitions": [{"partition_index": 0, "current_leader_epoch": 4, "timestamp": 1700}]}]}
    _, decoded = request_through_wire(2, 5, body)
    assert list_offsets.request_from_wire(5, decoded) == ListOffsetsRequest(
        -1, 1, (ListOffsetsPartition(T0, 1700, 4),))


RESPONSE = ListOffsetsResponse((ListOffsetsPartitionResponse(T0, Errors.NONE, -1, 42, 3),
                                ListOffsetsPartitionResponse(T1, Errors.NOT_LEADER_OR_FOLLOWER)))


@pytest.mark.parametrize("version", [0, 1, 2])
def test_responses_kafka_python_reads(version: int) -> None:
    body = list_offsets.response_to_wire(version, RESPONSE)
    resp = KpOffsetResponse[version].decode(encode_response(2, version, body))
    [(topic, partitions)] = resp.topics
    assert topic == "t"
    if version == 0:
        assert partitions == [(0, 0, [42]), (1, 6, [])]
    else:
        assert partitions == [(0, 0, -1, 42), (1, 6, -1, -1)]


@pytest.mark.parametrize("version", [4, 5])
def test_responses_with_leader_epoch(version: int) -> None:
    _, decoded = response_through_wire(2, version, list_offsets.response_to_wire(version, RESPONSE))
    assert decoded["throttle_time_ms"] == 0
    assert [(p["partition_index"], p["error_code"], p["offset"], p["leader_epoch"])
            for p in decoded["topics"][0]["partitions"]] == [(0, 0, 42, 3), (1, 6, -1, -1)]


@pytest.mark.parametrize("version", range(6))
def test_error_response(version: int) -> None:
    p = {"partition_index": 0, "timestamp": -1} | ({"max_num_offsets": 1} if version == 0 else {})
    body = {"replica_id": -1, "topics": [{"name": "t", "partitions": [p]}]}
    err = list_offsets.error_response(version, body, Errors.UNKNOWN_TOPIC_OR_PARTITION)
    _, decoded = response_through_wire(2, version, err)
    [part] = decoded["topics"][0]["partitions"]
    assert part["error_code"] == 3
    assert part.get("old_style_offsets", []) == [] and part.get("offset", -1) == -1


def test_a_followers_v5_request_is_kafkas_bytes_and_reads_back() -> None:
    """AbstractFetcherThread.fetchOffsetAndTruncate: the earliest and latest offsets of out-of-range partitions."""
    req = ListOffsetsRequest(2, 0, (ListOffsetsPartition(T0, -2, 5), ListOffsetsPartition(T1, -1, 5)))
    data, decoded = request_through_wire(2, list_offsets.SEND_VERSION, list_offsets.request_to_wire(req))
    assert data == i32(2) + i8(0) + arr([string("t") + arr([i32(0) + i32(5) + i64(-2), i32(1) + i32(5) + i64(-1)])])
    assert list_offsets.request_from_wire(5, decoded) == req


@pytest.mark.parametrize("version", range(6))
def test_responses_read_back_at_every_version(version: int) -> None:
    _, decoded = response_through_wire(2, version, list_offsets.response_to_wire(version, RESPONSE))
    back = list_offsets.response_from_wire(version, decoded)
    expected_epoch = 3 if version >= 4 else -1
    assert [(p.tp, p.error, p.offset) for p in back.partitions] == [
        (T0, Errors.NONE, 42), (T1, Errors.NOT_LEADER_OR_FOLLOWER, -1)]
    assert back.partitions[0].leader_epoch == expected_epoch
