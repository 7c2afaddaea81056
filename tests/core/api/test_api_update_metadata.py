"""UpdateMetadata (key 6): the controller's request (a topic being deleted, a dead broker's offline replica) through
request_to_wire and protocol's v6 encoder is byte for byte the request written by hand from Kafka 2.6's protocol
guide and reads back to the same values; v0-5 read with their defaults; the response both ways."""

from __future__ import annotations

import pytest

from core.api import update_metadata
from core.controller.request_batch import ControllerBrokerRequestBatch
from messages.common import Broker, EndPoint, Errors, TopicPartition
from messages.requests import UpdateMetadataPartitionState, UpdateMetadataRequest, UpdateMetadataResponse
from tests.core.controller.test_controller_request_batch import CONTROLLER_EPOCH, CONTROLLER_ID, _context, _send
from tests.protocol.wire_by_hand import TAGS, arr, carr, cstr, i16, i32, i64, string
from tests.support.api_wire import request_through_wire, response_through_wire
from tests.support.controller import sent


def _controller_request() -> UpdateMetadataRequest:
    """UpdateMetadata to broker 1 for every partition while foo is queued for deletion and broker 3 is dead
    (testUpdateMetadataRequestDuringTopicDeletion + testUpdateMetadataInterBrokerProtocolVersion)."""
    ctx = _context()
    ctx.queue_topic_deletion({"foo"})
    ctx.remove_live_brokers({3})
    batch = ControllerBrokerRequestBatch(CONTROLLER_ID, ctx)
    batch.new_batch()
    batch.add_update_metadata_request_for_brokers([1], [TopicPartition("foo", 0), TopicPartition("bar", 1)])
    [send] = sent(_send(batch), UpdateMetadataRequest)
    return send.request


def test_the_controllers_request_is_kafkas_v6_bytes_and_reads_back() -> None:
    req = _controller_request()
    data, decoded = request_through_wire(6, update_metadata.SEND_VERSION, update_metadata.request_to_wire(req))

    def ints(xs: list[int]) -> bytes:
        return carr([i32(x) for x in xs])

    # foo-0 during deletion: leader -2 (LeaderDuringDelete), epoch 0, zkVersion 0; bar-1 [1,2,3] led by 1, epoch 1,
    # zkVersion 1; broker 3 is dead: offline in both
    foo0 = i32(0) + i32(CONTROLLER_EPOCH) + i32(-2) + i32(0) + ints([1, 2, 3]) + i32(0) + ints([1, 2, 3]) \
        + ints([3]) + TAGS
    bar1 = i32(1) + i32(CONTROLLER_EPOCH) + i32(1) + i32(1) + ints([1, 2, 3]) + i32(1) + ints([1, 2, 3]) \
        + ints([3]) + TAGS

    def live(b: int) -> bytes:
        return i32(b) + carr([i32(9092) + cstr(f"host{b}") + cstr("PLAINTEXT") + i16(0) + TAGS]) + cstr(None) + TAGS

    expected = (i32(CONTROLLER_ID) + i32(CONTROLLER_EPOCH) + i64(1)
                + carr([cstr("foo") + carr([foo0]) + TAGS, cstr("bar") + carr([bar1]) + TAGS])
                + carr([live(1), live(2)]) + TAGS)
    assert data == expected
    back = update_metadata.request_from_wire(6, decoded)
    # the broker epochs of the live brokers are not on the wire (the MetadataCache keeps endpoints and rack only)
    assert back.live_brokers == tuple(Broker(b.id, b.endpoints, b.rack) for b in req.live_brokers)
    assert (back.controller_id, back.controller_epoch, back.broker_epoch, back.partition_states) == \
        (req.controller_id, req.controller_epoch, req.broker_epoch, req.partition_states)


def test_listeners_racks_and_security_protocols_survive() -> None:
    brokers = (Broker(4, (EndPoint("a", 1, "INTERNAL", "SASL_SSL"), EndPoint("b", 2, "PLAINTEXT", "PLAINTEXT")),
                      "rack-a"),)
    req = UpdateMetadataRequest(0, 3, 9, (), brokers)
    body = update_metadata.request_to_wire(req)
    assert body["live_brokers"][0]["endpoints"][0]["security_protocol"] == 3
    _, decoded = request_through_wire(6, 6, body)
    assert update_metadata.request_from_wire(6, decoded) == req


_STATE = {"topic_name": "t", "partition_index": 2, "controller_epoch": 3, "leader": 1, "leader_epoch": 5,
          "isr": [1], "zk_version": 7, "replicas": [1, 0]}


def test_v0_one_plaintext_endpoint_per_broker() -> None:
    body = {"controller_id": 1, "controller_epoch": 3, "ungrouped_partition_states": [_STATE],
            "live_brokers": [{"id": 1, "v0_host": "h", "v0_port": 9092}]}
    data, decoded = request_through_wire(6, 0, body)
    assert data == (i32(1) + i32(3) + arr([string("t") + i32(2) + i32(3) + i32(1) + i32(5) + arr([i32(1)]) + i32(7)
                                           + arr([i32(1), i32(0)])]) + arr([i32(1) + string("h") + i32(9092)]))
    assert update_metadata.request_from_wire(0, decoded) == UpdateMetadataRequest(
        1, 3, -1, (UpdateMetadataPartitionState(TopicPartition("t", 2), 3, 1, 5, (1,), 7, (1, 0)),),
        (Broker(1, (EndPoint("h", 9092, "PLAINTEXT", "PLAINTEXT"),)),))


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_v1_to_v4_endpoints_rack_listener_offline(version: int) -> None:
    endpoint = {"port": 9093, "host": "h", "security_protocol": 1}
    broker = {"id": 1, "endpoints": [endpoint | ({"listener": "REPL"} if version >= 3 else {})]}
    if version >= 2:
        broker["rack"] = "r1"
    state = _STATE | ({"offline_replicas": [0]} if version >= 4 else {})
    _, decoded = request_through_wire(6, version, {"controller_id": 1, "controller_epoch": 3,
                                                   "ungrouped_partition_states": [state], "live_brokers": [broker]})
    req = update_metadata.request_from_wire(version, decoded)
    # without a listener name (v1-2) an endpoint is named after its security protocol
    assert req.live_brokers == (Broker(1, (EndPoint("h", 9093, "REPL" if version >= 3 else "SSL", "SSL"),),
                                       "r1" if version >= 2 else None),)
    assert req.partition_states[0].offline_replicas == ((0,) if version >= 4 else ())


def test_v5_grouped_with_broker_epoch() -> None:
    state = {k: v for k, v in _STATE.items() if k != "topic_name"} | {"offline_replicas": []}
    _, decoded = request_through_wire(6, 5, {"controller_id": 1, "controller_epoch": 3, "broker_epoch": 12,
                                             "topic_states": [{"topic_name": "t", "partition_states": [state]}],
                                             "live_brokers": []})
    req = update_metadata.request_from_wire(5, decoded)
    assert req.broker_epoch == 12 and req.partition_states[0].topic_partition == TopicPartition("t", 2)


def test_an_unknown_security_protocol_id_is_refused() -> None:
    body = {"controller_id": 1, "controller_epoch": 3, "ungrouped_partition_states": [],
            "live_brokers": [{"id": 1, "endpoints": [{"port": 1, "host": "h", "security_protocol": 9}]}]}
    with pytest.raises(ValueError, match="security protocol id 9"):
        update_metadata.request_from_wire(1, body)
    assert update_metadata.error_response(1, body, Errors.INVALID_REQUEST) == {"error_code": 42}


@pytest.mark.parametrize("version", range(7))
def test_response_both_ways(version: int) -> None:
    resp = UpdateMetadataResponse(Errors.STALE_BROKER_EPOCH)
    data, decoded = response_through_wire(6, version, update_metadata.response_to_wire(version, resp))
    assert data == i16(77) + (TAGS if version >= 6 else b"")
    assert update_metadata.response_from_wire(version, decoded) == resp
