"""The controller's channel messages at the versions Kafka 2.6's controller sends (LeaderAndIsr v4, UpdateMetadata v6,
StopReplica v3, ControlledShutdown v3 — none of them in kafka-python 3's schemas), against bytes written by hand from
Kafka 2.6's protocol guide, e.g. ``LeaderAndIsr Request (Version: 4) => controller_id controller_epoch broker_epoch
[topic_states] [live_leaders] TAG_BUFFER``: a third encoder, independent of kio's and ours."""

from __future__ import annotations

from protocol.codec import decode_request, decode_response, encode_request, encode_response
from protocol.framing import RequestHeader
from protocol.framing import decode_request as decode_request_frame
from protocol.framing import encode_request as request_frame
from tests.protocol.wire_by_hand import TAGS, carr, cstr, i8, i16, i32, i64


def test_leader_and_isr_v4_request_and_response() -> None:
    value = {
        "controller_id": 1, "controller_epoch": 7, "broker_epoch": 4294967296,
        "topic_states": [{"topic_name": "orders", "partition_states": [
            {"partition_index": 0, "controller_epoch": 7, "leader": 2, "leader_epoch": 5, "isr": [2, 3],
             "zk_version": 9, "replicas": [2, 3, 1], "adding_replicas": [1], "removing_replicas": [], "is_new": True},
        ]}],
        "live_leaders": [{"broker_id": 2, "host_name": "127.0.0.1", "port": 9093}],
    }  # fmt: skip
    partition = (i32(0) + i32(7) + i32(2) + i32(5) + carr([i32(2), i32(3)]) + i32(9) + carr([i32(2), i32(3), i32(1)])
                 + carr([i32(1)]) + carr([]) + i8(1) + TAGS)  # fmt: skip
    expected = (i32(1) + i32(7) + i64(4294967296) + carr([cstr("orders") + carr([partition]) + TAGS])
                + carr([i32(2) + cstr("127.0.0.1") + i32(9093) + TAGS]) + TAGS)  # fmt: skip
    assert encode_request(4, 4, value) == expected
    assert decode_request(4, 4, expected) == (value, len(expected))

    response = {"error_code": 0, "partition_errors": [{"topic_name": "orders", "partition_index": 0, "error_code": 6}]}
    expected = i16(0) + carr([cstr("orders") + i32(0) + i16(6) + TAGS]) + TAGS
    assert encode_response(4, 4, response) == expected
    assert decode_response(4, 4, expected) == (response, len(expected))


def test_update_metadata_v6_request_and_response() -> None:
    value = {
        "controller_id": 1, "controller_epoch": 7, "broker_epoch": 25,
        "topic_states": [{"topic_name": "orders", "partition_states": [
            {"partition_index": 1, "controller_epoch": 7, "leader": -1, "leader_epoch": 3, "isr": [],
             "zk_version": 4, "replicas": [1, 2], "offline_replicas": [1, 2]},
        ]}],
        "live_brokers": [{"id": 3, "endpoints": [
            {"port": 9094, "host": "127.0.0.1", "listener": "PLAINTEXT", "security_protocol": 0}], "rack": None}],
    }  # fmt: skip
    partition = (i32(1) + i32(7) + i32(-1) + i32(3) + carr([]) + i32(4) + carr([i32(1), i32(2)])
                 + carr([i32(1), i32(2)]) + TAGS)  # fmt: skip
    endpoint = i32(9094) + cstr("127.0.0.1") + cstr("PLAINTEXT") + i16(0) + TAGS
    expected = (i32(1) + i32(7) + i64(25) + carr([cstr("orders") + carr([partition]) + TAGS])
                + carr([i32(3) + carr([endpoint]) + cstr(None) + TAGS]) + TAGS)  # fmt: skip
    assert encode_request(6, 6, value) == expected
    assert decode_request(6, 6, expected) == (value, len(expected))
    assert encode_response(6, 6, {"error_code": 0}) == i16(0) + TAGS


def test_stop_replica_v3_request_and_response() -> None:
    value = {
        "controller_id": 1, "controller_epoch": 7, "broker_epoch": 25,
        "topic_states": [{"topic_name": "orders", "partition_states": [
            {"partition_index": 2, "leader_epoch": -2, "delete_partition": True}]}],
    }  # fmt: skip
    expected = (i32(1) + i32(7) + i64(25)
                + carr([cstr("orders") + carr([i32(2) + i32(-2) + i8(1) + TAGS]) + TAGS]) + TAGS)  # fmt: skip
    assert encode_request(5, 3, value) == expected
    assert decode_request(5, 3, expected) == (value, len(expected))
    response = {"error_code": 0, "partition_errors": [{"topic_name": "orders", "partition_index": 2, "error_code": 0}]}
    assert encode_response(5, 3, response) == i16(0) + carr([cstr("orders") + i32(2) + i16(0) + TAGS]) + TAGS


def test_controlled_shutdown_v3_frame_and_response() -> None:
    frame = request_frame(RequestHeader(7, 3, 11, "broker-2"), {"broker_id": 2, "broker_epoch": 40})
    # header v2 (api key, version, correlation id, int16-length client id, tags), then the flexible body
    payload = i16(7) + i16(3) + i32(11) + i16(8) + b"broker-2" + TAGS + i32(2) + i64(40) + TAGS
    assert frame == i32(len(payload)) + payload
    assert decode_request_frame(payload).body == {"broker_id": 2, "broker_epoch": 40}
    response = {"error_code": 0, "remaining_partitions": [{"topic_name": "orders", "partition_index": 1}]}
    expected = i16(0) + carr([cstr("orders") + i32(1) + TAGS]) + TAGS
    assert encode_response(7, 3, response) == expected
    assert decode_response(7, 3, expected) == (response, len(expected))
