"""OffsetCommit (v0-8) and OffsetFetch (v0-7) converters, both ways through protocol's codec."""

from __future__ import annotations

import attrs
import pytest

import core.api  # noqa: F401 - registers every spec
from core.api.registry import RequestContext, Route, spec_for_key
from messages.common import Errors, TopicPartition
from messages.group import (
    OffsetCommitPartition,
    OffsetCommitPartitionResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchPartitionData,
    OffsetFetchRequest,
    OffsetFetchResponse,
)
from protocol.codec import decode_request, decode_response, encode_request, encode_response

CTX = RequestContext(api_version=0)
T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)


def inbound(key: int, version: int, body: dict):
    decoded, _ = decode_request(key, version, encode_request(key, version, body))
    spec = spec_for_key(key)
    assert spec is not None and spec.route == Route.GROUP_COORDINATOR
    return spec.request_from_wire(version, decoded, CTX)


def outbound(key: int, version: int, response) -> dict:
    body = spec_for_key(key).response_to_wire(version, response)
    return decode_response(key, version, encode_response(key, version, body))[0]


@pytest.mark.parametrize("version", range(9))
def test_offset_commit(version):
    part = {"partition_index": 0, "committed_offset": 42, "committed_leader_epoch": 5, "commit_timestamp": 1000,
            "committed_metadata": None}
    if version < 6:
        del part["committed_leader_epoch"]
    if version != 1:
        del part["commit_timestamp"]
    body = {"group_id": "g", "generation_id": 3, "member_id": "m1", "group_instance_id": "i1",
            "retention_time_ms": 60000, "topics": [{"name": "t", "partitions": [part, dict(part, partition_index=1)]}]}
    if version < 1:
        del body["generation_id"], body["member_id"]
    if not 2 <= version <= 4:
        del body["retention_time_ms"]
    if version < 7:
        del body["group_instance_id"]
    req = inbound(8, version, body)
    p = OffsetCommitPartition(T0, 42, 5 if version >= 6 else -1, None, 1000 if version == 1 else -1)
    assert req == OffsetCommitRequest("g", (p, attrs.evolve(p, tp=T1)), 3 if version >= 1 else -1,
                                      "m1" if version >= 1 else "", "i1" if version >= 7 else None,
        60000 if 2 <= version <= 4 else -1)
    resp = outbound(8, version, OffsetCommitResponse((OffsetCommitPartitionResponse(T0, Errors.NONE),
                                                      OffsetCommitPartitionResponse(T1, Errors.ILLEGAL_GENERATION),
                                                      OffsetCommitPartitionResponse(U0, Errors.NONE))))
    assert [(t["name"], [(x["partition_index"], x["error_code"]) for x in t["partitions"]]) for t in resp["topics"]] \
        == [("t", [(0, 0), (1, 22)]), ("u", [(0, 0)])]
    err = spec_for_key(8).error_response(version, body, 14)
    assert [x["error_code"] for t in err["topics"] for x in t["partitions"]] == [14, 14]


@pytest.mark.parametrize("version", range(8))
def test_offset_fetch(version):
    body = {"group_id": "g", "topics": [{"name": "t", "partition_indexes": [0, 1]}], "require_stable": True}
    if version < 7:
        del body["require_stable"]
    assert inbound(9, version, body) == OffsetFetchRequest("g", (T0, T1), version >= 7)
    if version >= 2:
        assert inbound(9, version, dict(body, topics=None)).partitions is None
    resp = outbound(9, version, OffsetFetchResponse(Errors.NONE, (
        OffsetFetchPartitionData(T0, 42, 5, "meta"), OffsetFetchPartitionData(T1))))
    rows = [(x["partition_index"], x["committed_offset"], x.get("committed_leader_epoch"), x["metadata"],
             x["error_code"]) for t in resp["topics"] for x in t["partitions"]]
    assert rows == [(0, 42, 5 if version >= 5 else None, "meta", 0), (1, -1, -1 if version >= 5 else None, "", 0)]
    failed = OffsetFetchResponse(Errors.COORDINATOR_LOAD_IN_PROGRESS, (
        OffsetFetchPartitionData(T0, error=Errors.COORDINATOR_LOAD_IN_PROGRESS),
        OffsetFetchPartitionData(T1, error=Errors.COORDINATOR_LOAD_IN_PROGRESS)))
    for answer in (outbound(9, version, failed), spec_for_key(9).error_response(version, body, 14)):
        if version >= 2:  # a top-level error stands alone
            assert (answer["error_code"], answer["topics"]) == (14, [])
        else:  # each partition asked carries it
            assert [(x["partition_index"], x["committed_offset"], x["error_code"])
                    for t in answer["topics"] for x in t["partitions"]] == [(0, -1, 14), (1, -1, 14)]
