"""DeleteRecords (key 21): the request and answer at every version through the wire, the error response, and how a
request is split over the shards and its answers merged in the request's order."""

from __future__ import annotations

import pytest

from core.api import delete_records
from core.api.broker_requests import merge_responses, split_request, unit_of
from core.broker.shards import shard_of
from messages.common import Errors, TopicPartition
from messages.replication import (
    DeleteRecordsPartition,
    DeleteRecordsPartitionResult,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
)
from tests.support.api_wire import request_through_wire, response_through_wire

T0, T1, U3 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 3)
REQUEST = DeleteRecordsRequest(1500, (DeleteRecordsPartition(T0, 5), DeleteRecordsPartition(T1, -1),
                                      DeleteRecordsPartition(U3, 0)))
RESPONSE = DeleteRecordsResponse((DeleteRecordsPartitionResult(T0, Errors.NONE, 5),
                                  DeleteRecordsPartitionResult(T1, Errors.OFFSET_OUT_OF_RANGE, -1),
                                  DeleteRecordsPartitionResult(U3, Errors.REQUEST_TIMED_OUT, 2)), 7)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_the_request_and_the_answer_through_the_wire(version: int) -> None:
    _, decoded = request_through_wire(21, version, delete_records.request_to_wire(REQUEST))
    assert delete_records.request_from_wire(version, decoded) == REQUEST
    _, answer = response_through_wire(21, version, delete_records.response_to_wire(version, RESPONSE))
    assert answer["topics"] == [
        {"name": "t", "partitions": [{"partition_index": 0, "low_watermark": 5, "error_code": 0},
                                     {"partition_index": 1, "low_watermark": -1, "error_code": 1}]},
        {"name": "u", "partitions": [{"partition_index": 3, "low_watermark": 2, "error_code": 7}]}]
    assert delete_records.response_from_wire(version, answer) == RESPONSE


def test_the_error_response_names_every_partition_with_an_invalid_low_watermark() -> None:
    body = delete_records.request_to_wire(REQUEST)
    answer = delete_records.error_response(1, body, int(Errors.NOT_CONTROLLER))
    assert [(p["partition_index"], p["low_watermark"], p["error_code"]) for t in answer["topics"]
            for p in t["partitions"]] == [(0, -1, 41), (1, -1, 41), (3, -1, 41)]


def test_split_over_the_shards_and_merged_in_the_request_order() -> None:
    shards = 4
    parts = split_request(REQUEST, shards)
    assert sorted(q.tp for part in parts.values() for q in part.partitions) == sorted([T0, T1, U3])
    assert all(shard_of(q.tp, shards) == i for i, part in parts.items() for q in part.partitions)
    answers = {i: DeleteRecordsResponse(tuple(r for r in RESPONSE.partitions
                                              if r.tp in {q.tp for q in part.partitions}))
               for i, part in parts.items()}
    assert merge_responses(REQUEST, answers).partitions == RESPONSE.partitions
    failed = unit_of(REQUEST).error(REQUEST, Errors.KAFKA_STORAGE_ERROR)
    assert failed.partitions == tuple(DeleteRecordsPartitionResult(q.tp, Errors.KAFKA_STORAGE_ERROR, -1)
                                      for q in REQUEST.partitions)
