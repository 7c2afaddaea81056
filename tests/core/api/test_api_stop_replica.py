"""StopReplica (key 5): the controller's v3 request (mixed delete / no-delete partitions, as IBP 2.6 sends them in one
request) is byte for byte the request written by hand from Kafka 2.6's protocol guide and reads back the same;
v0-2 read with the request's delete flag and leader epoch -1 for every partition; the response both ways."""

from __future__ import annotations

import pytest

from core.api import stop_replica
from core.controller.request_batch import ControllerBrokerRequestBatch
from messages.common import Errors, TopicPartition
from messages.requests import PartitionError, StopReplicaPartitionState, StopReplicaRequest, StopReplicaResponse
from tests.core.controller.test_controller_request_batch import CONTROLLER_EPOCH, CONTROLLER_ID, _context, _send
from tests.protocol.wire_by_hand import TAGS, arr, carr, cstr, i8, i16, i32, i64, string
from tests.support.api_wire import request_through_wire, response_through_wire
from tests.support.controller import sent


def _controller_request() -> StopReplicaRequest:
    """testMixedDeleteAndNotDeleteStopReplicaRequests: foo-p deleted, bar-p not, both to broker 2 in one request;
    foo is queued for deletion, so its partitions go with epoch -2 (EpochDuringDelete)."""
    ctx = _context()
    ctx.queue_topic_deletion({"foo"})
    batch = ControllerBrokerRequestBatch(CONTROLLER_ID, ctx)
    batch.new_batch()
    for p in range(2):
        batch.add_stop_replica_request_for_brokers([2], TopicPartition("foo", p), True)
        batch.add_stop_replica_request_for_brokers([2], TopicPartition("bar", p), False)
    [send] = sent(_send(batch), StopReplicaRequest)
    return send.request


def test_the_controllers_request_is_kafkas_v3_bytes_and_reads_back() -> None:
    req = _controller_request()
    data, decoded = request_through_wire(5, stop_replica.SEND_VERSION, stop_replica.request_to_wire(req))

    def part(p: int, epoch: int, delete: bool) -> bytes:
        return i32(p) + i32(epoch) + i8(int(delete)) + TAGS

    expected = (i32(CONTROLLER_ID) + i32(CONTROLLER_EPOCH) + i64(1)
                + carr([cstr("foo") + carr([part(0, -2, True), part(1, -2, True)]) + TAGS,
                        cstr("bar") + carr([part(0, 1, False), part(1, 1, False)]) + TAGS]) + TAGS)
    assert data == expected
    assert stop_replica.request_from_wire(3, decoded) == req


def _states(delete: bool) -> tuple[StopReplicaPartitionState, ...]:
    return tuple(StopReplicaPartitionState(TopicPartition(t, p), -1, delete) for t, p in (("a", 0), ("a", 1), ("b", 0)))


def test_v0_one_flag_for_a_flat_list() -> None:
    tps = (("a", 0), ("a", 1), ("b", 0))
    body = {"controller_id": 1, "controller_epoch": 2, "delete_partitions": True,
            "ungrouped_partitions": [{"topic_name": t, "partition_index": p} for t, p in tps]}
    data, decoded = request_through_wire(5, 0, body)
    assert data == i32(1) + i32(2) + i8(1) + arr([string(t) + i32(p) for t, p in tps])
    assert stop_replica.request_from_wire(0, decoded) == StopReplicaRequest(1, 2, -1, _states(True))


@pytest.mark.parametrize("version", [1, 2])
def test_v1_v2_partition_indexes_by_topic(version: int) -> None:
    body = {"controller_id": 1, "controller_epoch": 2, "broker_epoch": 8, "delete_partitions": False,
            "topics": [{"name": "a", "partition_indexes": [0, 1]}, {"name": "b", "partition_indexes": [0]}]}
    _, decoded = request_through_wire(5, version, body)
    assert stop_replica.request_from_wire(version, decoded) == StopReplicaRequest(1, 2, 8, _states(False))


@pytest.mark.parametrize("version", range(4))
def test_response_and_error_response_both_ways(version: int) -> None:
    resp = StopReplicaResponse(Errors.NONE, (PartitionError(TopicPartition("a", 0), Errors.KAFKA_STORAGE_ERROR),))
    data, decoded = response_through_wire(5, version, stop_replica.response_to_wire(version, resp))
    if version >= 2:
        assert data == i16(0) + carr([cstr("a") + i32(0) + i16(56) + TAGS]) + TAGS
    else:
        assert data == i16(0) + arr([string("a") + i32(0) + i16(56)])
    assert stop_replica.response_from_wire(version, decoded) == resp


def test_error_response_fails_every_partition() -> None:
    err = stop_replica.error_response(3, stop_replica.request_to_wire(_controller_request()),
                                      Errors.STALE_CONTROLLER_EPOCH)
    assert err["error_code"] == 11
    assert [(e["topic_name"], e["partition_index"], e["error_code"]) for e in err["partition_errors"]] == [
        ("foo", 0, 11), ("foo", 1, 11), ("bar", 0, 11), ("bar", 1, 11)]
