"""LeaderAndIsr (key 4): what the controller's request batch builds today, through request_to_wire and protocol's
v4 encoder, is byte for byte the request written by hand from Kafka 2.6's protocol guide, and reads back to the same
internal request; every version 0-4 read; the response both ways at every version."""

from __future__ import annotations

import attrs
import pytest

from core.api import leader_and_isr
from core.controller.request_batch import ControllerBrokerRequestBatch
from messages.common import Broker, EndPoint, Errors, ReplicaAssignment, TopicPartition
from messages.requests import LeaderAndIsrPartitionState, LeaderAndIsrRequest, LeaderAndIsrResponse, PartitionError
from tests.core.controller.test_controller_request_batch import CONTROLLER_EPOCH, CONTROLLER_ID, _context, _send
from tests.protocol.wire_by_hand import TAGS, arr, carr, cstr, i8, i16, i32, i64, string
from tests.support.api_wire import request_through_wire, response_through_wire
from tests.support.controller import sent


def _controller_request() -> LeaderAndIsrRequest:
    """The LeaderAndIsr the controller sends broker 2 for foo-0 (being reassigned [1,2,3] -> [2,3,4], is_new),
    foo-1 and bar-1 (testLeaderAndIsrRequestSent / testLeaderAndIsrInterBrokerProtocolVersion's batches)."""
    ctx = _context()
    foo0 = TopicPartition("foo", 0)
    ctx.update_partition_full_replica_assignment(foo0, ReplicaAssignment((1, 2, 3)).reassign_to((2, 3, 4)))
    batch = ControllerBrokerRequestBatch(CONTROLLER_ID, ctx)
    batch.new_batch()
    for tp, is_new in ((foo0, True), (TopicPartition("foo", 1), False), (TopicPartition("bar", 1), False)):
        batch.add_leader_and_isr_request_for_brokers([2], tp, ctx.partition_leadership_info(tp),
                                                     ctx.partition_full_replica_assignment(tp), is_new)
    [send] = sent(_send(batch), LeaderAndIsrRequest)
    return send.request


def test_the_controllers_request_is_kafkas_v4_bytes_and_reads_back() -> None:
    req = _controller_request()
    assert [str(s.topic_partition) for s in req.partition_states] == ["foo-0", "foo-1", "bar-1"]
    body = leader_and_isr.request_to_wire(req)
    data, decoded = request_through_wire(4, leader_and_isr.SEND_VERSION, body)

    def partition(p: int, leader: int, isr: list[int], replicas: list[int], adding: list[int], removing: list[int],
                  is_new: bool) -> bytes:
        return (i32(p) + i32(CONTROLLER_EPOCH) + i32(leader) + i32(1) + carr([i32(r) for r in isr]) + i32(1)
                + carr([i32(r) for r in replicas]) + carr([i32(r) for r in adding])
                + carr([i32(r) for r in removing]) + i8(int(is_new)) + TAGS)

    # _context(): foo-0 [1,2,3], foo-1 [2,3,1], bar-0 [3,1,2], bar-1 [1,2,3]; leader = first replica, epoch 1,
    # zkVersion 1; foo-0 reassigned to [2,3,4]: replicas [2,3,4,1], adding [4], removing [1]
    expected = (i32(CONTROLLER_ID) + i32(CONTROLLER_EPOCH) + i64(1)
                + carr([cstr("foo") + carr([partition(0, 1, [1, 2, 3], [2, 3, 4, 1], [4], [1], True),
                                            partition(1, 2, [2, 3, 1], [2, 3, 1], [], [], False)]) + TAGS,
                        cstr("bar") + carr([partition(1, 1, [1, 2, 3], [1, 2, 3], [], [], False)]) + TAGS])
                + carr([i32(b) + cstr(f"host{b}") + i32(9092) + TAGS for b in (1, 2)]) + TAGS)
    assert data == expected
    # the receiving broker's view: each live leader with its one endpoint and no epoch (not on the wire)
    assert leader_and_isr.request_from_wire(4, decoded) == attrs.evolve(req, live_leaders=tuple(
        Broker(b.id, b.endpoints) for b in req.live_leaders))


def test_interleaved_topics_are_grouped_in_order_of_first_appearance() -> None:
    def state(topic: str, p: int) -> LeaderAndIsrPartitionState:
        return LeaderAndIsrPartitionState(TopicPartition(topic, p), 1, 0, 2, (0,), 3, (0,))

    req = LeaderAndIsrRequest(0, 1, 5, (state("b", 0), state("a", 0), state("b", 1)), ())
    body = leader_and_isr.request_to_wire(req)
    assert [(t["topic_name"], [p["partition_index"] for p in t["partition_states"]]) for t in body["topic_states"]] \
        == [("b", [0, 1]), ("a", [0])]
    assert [str(s.topic_partition) for s in leader_and_isr.request_from_wire(4, body).partition_states] \
        == ["b-0", "b-1", "a-0"]


def test_v0_and_v1_flat_partition_states() -> None:
    """v0: no is_new, no broker epoch; v1 adds is_new; both name each partition's topic."""
    flat = {"topic_name": "t", "partition_index": 3, "controller_epoch": 2, "leader": 1, "leader_epoch": 4,
            "isr": [1, 0], "zk_version": 6, "replicas": [0, 1]}
    v0 = {"controller_id": 0, "controller_epoch": 2, "ungrouped_partition_states": [flat],
          "live_leaders": [{"broker_id": 1, "host_name": "h", "port": 9}]}
    data, decoded = request_through_wire(4, 0, v0)
    assert data == (i32(0) + i32(2) + arr([string("t") + i32(3) + i32(2) + i32(1) + i32(4) + arr([i32(1), i32(0)])
                                           + i32(6) + arr([i32(0), i32(1)])]) + arr([i32(1) + string("h") + i32(9)]))
    expected = LeaderAndIsrRequest(0, 2, -1, (LeaderAndIsrPartitionState(
        TopicPartition("t", 3), 2, 1, 4, (1, 0), 6, (0, 1)),), (Broker(1, (EndPoint("h", 9),)),))
    assert leader_and_isr.request_from_wire(0, decoded) == expected
    _, decoded = request_through_wire(4, 1, {**v0, "ungrouped_partition_states": [{**flat, "is_new": True}]})
    assert leader_and_isr.request_from_wire(1, decoded).partition_states[0].is_new


@pytest.mark.parametrize("version", [2, 3])
def test_v2_and_v3_grouped(version: int) -> None:
    """v2 groups by topic and adds broker_epoch; v3 adds adding/removing replicas."""
    p = {"partition_index": 0, "controller_epoch": 2, "leader": 1, "leader_epoch": 4, "isr": [1], "zk_version": 6,
         "replicas": [1, 2], "is_new": False}
    if version == 3:
        p |= {"adding_replicas": [2], "removing_replicas": []}
    _, decoded = request_through_wire(4, version, {"controller_id": 0, "controller_epoch": 2, "broker_epoch": 77,
                                                   "topic_states": [{"topic_name": "t", "partition_states": [p]}],
                                                   "live_leaders": []})
    req = leader_and_isr.request_from_wire(version, decoded)
    assert req.broker_epoch == 77
    assert req.partition_states == (LeaderAndIsrPartitionState(TopicPartition("t", 0), 2, 1, 4, (1,), 6, (1, 2),
                                                               (2,) if version == 3 else ()),)


@pytest.mark.parametrize("version", range(5))
def test_response_both_ways(version: int) -> None:
    resp = LeaderAndIsrResponse(Errors.NONE, (PartitionError(TopicPartition("foo", 0), Errors.NONE),
                                              PartitionError(TopicPartition("bar", 1), Errors.STALE_CONTROLLER_EPOCH)))
    data, decoded = response_through_wire(4, version, leader_and_isr.response_to_wire(version, resp))
    if version >= 4:
        assert data == i16(0) + carr([cstr("foo") + i32(0) + i16(0) + TAGS, cstr("bar") + i32(1) + i16(11) + TAGS]) \
            + TAGS
    else:
        assert data == i16(0) + arr([string("foo") + i32(0) + i16(0), string("bar") + i32(1) + i16(11)])
    assert leader_and_isr.response_from_wire(version, decoded) == resp


def test_an_unknown_error_code_from_a_peer_reads_as_unknown_server_error() -> None:
    body = {"error_code": 9999, "partition_errors": []}
    assert leader_and_isr.response_from_wire(4, body).error == Errors.UNKNOWN_SERVER_ERROR


def test_error_response_fails_every_partition() -> None:
    body = leader_and_isr.request_to_wire(_controller_request())
    err = leader_and_isr.error_response(4, body, Errors.STALE_BROKER_EPOCH)
    assert err["error_code"] == 77
    assert [(e["topic_name"], e["partition_index"], e["error_code"]) for e in err["partition_errors"]] == [
        ("foo", 0, 77), ("foo", 1, 77), ("bar", 1, 77)]
    response_through_wire(4, 4, err)


def test_spec_registration() -> None:
    spec = leader_and_isr.SPEC
    assert (spec.api_key, spec.request_type, spec.send_version) == (4, LeaderAndIsrRequest, 4)
