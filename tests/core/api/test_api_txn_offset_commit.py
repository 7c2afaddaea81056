"""TxnOffsetCommit (28, v0-3) converters, both ways through protocol's codec: routed to the group coordinator, each
version's fields read as KafkaApis.handleTxnOffsetCommitRequest reads them, the answer grouped by topic, and the
whole-request error answer item by item."""

from __future__ import annotations

import pytest

import core.api  # noqa: F401 - registers every spec
from core.api.admin import fit
from core.api.registry import RequestContext, Route, spec_for_key
from messages.common import Errors, TopicPartition
from messages.group import (
    OffsetCommitPartition,
    OffsetCommitPartitionResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
from protocol.codec import decode_request, decode_response, encode_request, encode_response
from protocol.schema import message_spec

KEY = 28
T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)
BODY = {"transactional_id": "tx", "group_id": "g", "producer_id": 5, "producer_epoch": 2, "generation_id": 7,
        "member_id": "m1", "group_instance_id": "i1", "topics": [
            {"name": "t", "partitions": [
                {"partition_index": 0, "committed_offset": 10, "committed_leader_epoch": 4, "committed_metadata": None},
                {"partition_index": 1, "committed_offset": 20, "committed_leader_epoch": 4,
                 "committed_metadata": "m"}]},
            {"name": "u", "partitions": [
                {"partition_index": 0, "committed_offset": 30, "committed_leader_epoch": 4,
                 "committed_metadata": ""}]}]}


def _decoded(version: int) -> dict:
    wire = fit(message_spec(KEY, version, "request"), BODY)
    return decode_request(KEY, version, encode_request(KEY, version, wire))[0]


def _sent(version: int, body: dict) -> dict:
    return decode_response(KEY, version, encode_response(KEY, version, body))[0]


def test_txn_offset_commit_goes_to_the_group_coordinator():
    assert spec_for_key(KEY).route == Route.GROUP_COORDINATOR


@pytest.mark.parametrize("version", range(4))
def test_request_at_each_version(version: int) -> None:
    req = spec_for_key(KEY).request_from_wire(version, _decoded(version), RequestContext(version))
    epoch = 4 if version >= 2 else -1
    assert req == TxnOffsetCommitRequest(
        "tx", "g", 5, 2, (OffsetCommitPartition(T0, 10, epoch, None), OffsetCommitPartition(T1, 20, epoch, "m"),
                          OffsetCommitPartition(U0, 30, epoch, "")),
        *((7, "m1", "i1") if version >= 3 else (-1, "", None)))


@pytest.mark.parametrize("version", range(4))
def test_answer_grouped_by_topic_each_partition_once(version: int) -> None:
    response = TxnOffsetCommitResponse((OffsetCommitPartitionResponse(T0, Errors.NONE),
                                        OffsetCommitPartitionResponse(U0, Errors.UNKNOWN_MEMBER_ID),
                                        OffsetCommitPartitionResponse(T1, Errors.INVALID_PRODUCER_EPOCH),
                                        OffsetCommitPartitionResponse(T0, Errors.NONE)))
    body = _sent(version, spec_for_key(KEY).response_to_wire(version, response))
    assert body == {"throttle_time_ms": 0, "topics": [
        {"name": "t", "partitions": [{"partition_index": 0, "error_code": 0}, {"partition_index": 1,
                                                                                "error_code": 47}]},
        {"name": "u", "partitions": [{"partition_index": 0, "error_code": 25}]}]}


@pytest.mark.parametrize("version", range(4))
def test_error_answer_fails_every_partition(version: int) -> None:
    body = _sent(version, spec_for_key(KEY).error_response(version, _decoded(version),
                                                           int(Errors.COORDINATOR_LOAD_IN_PROGRESS)))
    assert [(t["name"], p["partition_index"], p["error_code"]) for t in body["topics"] for p in t["partitions"]] == [
        ("t", 0, 14), ("t", 1, 14), ("u", 0, 14)]
