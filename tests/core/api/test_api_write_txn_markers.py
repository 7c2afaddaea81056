"""WriteTxnMarkers (key 27, v0): the coordinator's request is Kafka's bytes and reads back; the answer groups each
producer's partitions by topic; a request split over the replica manager's shards gives each its partitions and the
merged answer keeps the request's order; the error response fails every (producer, partition)."""

from __future__ import annotations

from core.api import write_txn_markers as wtm
from core.api.registry import spec_for_key, spec_for_type
from messages.common import Errors, TopicPartition
from messages.txn_markers import (
    TxnMarkerEntry,
    TxnMarkerPartitionResult,
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)
from tests.protocol.wire_by_hand import arr, i8, i16, i32, i64, string
from tests.support.api_wire import request_through_wire, response_through_wire

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)
REQUEST = WriteTxnMarkersRequest((TxnMarkerEntry(5, 2, True, 9, (A0, B0, A1)), TxnMarkerEntry(6, 0, False, 9, (A0,))))


def test_the_request_is_kafkas_bytes_and_reads_back() -> None:
    assert spec_for_key(27) is wtm.SPEC and wtm.SPEC.request_type is WriteTxnMarkersRequest
    # the one spec both ways: the transaction coordinator's marker channel sends what the leader serves, at v0
    assert spec_for_type(WriteTxnMarkersRequest) is wtm.SPEC and wtm.SPEC.send_version == 0
    data, decoded = request_through_wire(27, 0, wtm.request_to_wire(REQUEST))
    marker5 = i64(5) + i16(2) + i8(1) + arr([string("a") + arr([i32(0), i32(1)]), string("b") + arr([i32(0)])]) \
        + i32(9)
    marker6 = i64(6) + i16(0) + i8(0) + arr([string("a") + arr([i32(0)])]) + i32(9)
    assert data == arr([marker5, marker6])
    back = wtm.request_from_wire(0, decoded)
    # partitions grouped by topic on the wire
    assert back == WriteTxnMarkersRequest((TxnMarkerEntry(5, 2, True, 9, (A0, A1, B0)),
                                           TxnMarkerEntry(6, 0, False, 9, (A0,))))


def test_the_response_groups_by_producer_and_topic_and_reads_back() -> None:
    response = WriteTxnMarkersResponse((TxnMarkerPartitionResult(5, A0, Errors.NONE),
                                        TxnMarkerPartitionResult(5, A1, Errors.NOT_LEADER_OR_FOLLOWER),
                                        TxnMarkerPartitionResult(6, A0, Errors.TRANSACTION_COORDINATOR_FENCED)))
    data, decoded = response_through_wire(27, 0, wtm.response_to_wire(0, response))
    assert data == arr([i64(5) + arr([string("a") + arr([i32(0) + i16(0), i32(1) + i16(6)])]),
                        i64(6) + arr([string("a") + arr([i32(0) + i16(52)])])])
    assert wtm.response_from_wire(0, decoded) == response


def test_split_over_shards_and_merge_in_request_order() -> None:
    parts = wtm.split(REQUEST, 4)
    assert sorted(tp for part in parts.values() for m in part.markers for tp in m.partitions) == sorted(
        [A0, B0, A1, A0])
    answers = {i: WriteTxnMarkersResponse(tuple(TxnMarkerPartitionResult(m.producer_id, tp, Errors.NONE)
                                                for m in part.markers for tp in m.partitions))
               for i, part in parts.items()}
    merged = wtm.merge(REQUEST, answers)
    assert [(r.producer_id, r.tp) for r in merged.results] == [(5, A0), (5, B0), (5, A1), (6, A0)]


def test_the_error_response_fails_every_producers_partition() -> None:
    body = wtm.request_to_wire(REQUEST)
    answer = wtm.error_response(0, body, int(Errors.NOT_CONTROLLER))
    assert [p["error_code"] for m in answer["markers"] for t in m["topics"] for p in t["partitions"]] == [41] * 4
