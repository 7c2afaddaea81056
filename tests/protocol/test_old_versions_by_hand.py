"""Versions that neither kafka-python 3 nor 1.4.7 defines, against bytes written by hand from Kafka 2.6's protocol
guide: OffsetForLeaderEpoch v0-1, WriteTxnMarkers v0, AlterReplicaLogDirs v0, DescribeLogDirs v0, the
delegation-token APIs v0 and v2 (flexible), and the controller's APIs below their 2.6 maxima."""

from __future__ import annotations

import pytest

from protocol.codec import decode_request, decode_response, encode_request, encode_response
from tests.protocol.wire_by_hand import TAGS, arr, blob, carr, cstr, i8, i16, i32, i64, string


def _both(direction: str, key: int, version: int, value: dict, expected: bytes) -> None:
    encode, decode = (encode_request, decode_request) if direction == "request" else (encode_response, decode_response)
    assert encode(key, version, value) == expected
    assert decode(key, version, expected) == (value, len(expected))


@pytest.mark.parametrize("version", [0, 1])
def test_offset_for_leader_epoch_v0_v1(version: int) -> None:
    request = {"topics": [{"topic": "orders", "partitions": [{"partition": 3, "leader_epoch": 5}]}]}
    _both("request", 23, version, request, arr([string("orders") + arr([i32(3) + i32(5)])]))
    partition = {"error_code": 0, "partition": 3, "end_offset": 1200}
    body = i16(0) + i32(3)
    if version == 1:  # v1 adds the leader epoch of the returned end offset
        partition["leader_epoch"] = 4
        body += i32(4)
    response = {"topics": [{"topic": "orders", "partitions": [partition]}]}
    _both("response", 23, version, response, arr([string("orders") + arr([body + i64(1200)])]))


def test_write_txn_markers_v0() -> None:
    request = {"markers": [{"producer_id": 9000, "producer_epoch": 2, "transaction_result": True,
                            "topics": [{"name": "orders", "partition_indexes": [0, 1]}], "coordinator_epoch": 6}]}
    expected = arr([i64(9000) + i16(2) + i8(1) + arr([string("orders") + arr([i32(0), i32(1)])]) + i32(6)])
    _both("request", 27, 0, request, expected)
    response = {"markers": [{"producer_id": 9000, "topics": [
        {"name": "orders", "partitions": [{"partition_index": 1, "error_code": 0}]}]}]}  # fmt: skip
    _both("response", 27, 0, response, arr([i64(9000) + arr([string("orders") + arr([i32(1) + i16(0)])])]))


def test_log_dir_apis_v0() -> None:
    alter = {"dirs": [{"path": "/data/a", "topics": [{"name": "orders", "partitions": [2]}]}]}
    _both("request", 34, 0, alter, arr([string("/data/a") + arr([string("orders") + arr([i32(2)])])]))
    describe = {"topics": None}  # null = every log dir
    _both("request", 35, 0, describe, i32(-1))
    response = {"throttle_time_ms": 0, "results": [{"error_code": 0, "log_dir": "/data/a", "topics": [
        {"name": "orders", "partitions": [
            {"partition_index": 2, "partition_size": 4096, "offset_lag": 0, "is_future_key": False}]}]}]}  # fmt: skip
    expected = i32(0) + arr([i16(0) + string("/data/a")
                             + arr([string("orders") + arr([i32(2) + i64(4096) + i64(0) + i8(0)])])])  # fmt: skip
    _both("response", 35, 0, response, expected)


def test_delegation_token_apis_v0_and_flexible_v2() -> None:
    request = {"renewers": [{"principal_type": "User", "principal_name": "alice"}], "max_lifetime_ms": -1}
    _both("request", 38, 0, request, arr([string("User") + string("alice")]) + i64(-1))
    _both("request", 38, 2, request, carr([cstr("User") + cstr("alice") + TAGS]) + i64(-1) + TAGS)
    response = {"error_code": 0, "principal_type": "User", "principal_name": "alice", "issue_timestamp_ms": 1000,
                "expiry_timestamp_ms": 2000, "max_timestamp_ms": 3000, "token_id": "t1", "hmac": b"\x01\x02",
                "throttle_time_ms": 0}  # fmt: skip
    fixed = i64(1000) + i64(2000) + i64(3000)
    _both("response", 38, 0, response,
          i16(0) + string("User") + string("alice") + fixed + string("t1") + blob(b"\x01\x02") + i32(0))  # fmt: skip
    _both("response", 38, 2, response,
          i16(0) + cstr("User") + cstr("alice") + fixed + cstr("t1") + b"\x03\x01\x02" + i32(0) + TAGS)  # fmt: skip
    _both("request", 39, 0, {"hmac": b"\x01", "renew_period_ms": 60000}, blob(b"\x01") + i64(60000))
    _both("request", 40, 0, {"hmac": b"", "expiry_time_period_ms": -1}, blob(b"") + i64(-1))
    _both("response", 40, 0, {"error_code": 0, "expiry_timestamp_ms": 5, "throttle_time_ms": 1},
          i16(0) + i64(5) + i32(1))  # fmt: skip
    _both("request", 41, 0, {"owners": None}, i32(-1))


def test_controller_apis_below_their_2_6_maxima() -> None:
    # LeaderAndIsr v1: partitions ungrouped, each with its topic name, and is_new (v1+)
    state = {"topic_name": "orders", "partition_index": 0, "controller_epoch": 3, "leader": 1, "leader_epoch": 2,
             "isr": [1], "zk_version": 5, "replicas": [1, 2], "is_new": False}  # fmt: skip
    request = {"controller_id": 1, "controller_epoch": 3, "ungrouped_partition_states": [state],
               "live_leaders": [{"broker_id": 1, "host_name": "h", "port": 9092}]}  # fmt: skip
    expected = (i32(1) + i32(3) + arr([string("orders") + i32(0) + i32(3) + i32(1) + i32(2) + arr([i32(1)]) + i32(5)
                                       + arr([i32(1), i32(2)]) + i8(0)])
                + arr([i32(1) + string("h") + i32(9092)]))  # fmt: skip
    _both("request", 4, 1, request, expected)
    # StopReplica v1: broker epoch and partitions grouped by topic, one delete flag for all
    stop = {"controller_id": 1, "controller_epoch": 3, "broker_epoch": 20, "delete_partitions": True,
            "topics": [{"name": "orders", "partition_indexes": [0, 1]}]}  # fmt: skip
    _both("request", 5, 1, stop, i32(1) + i32(3) + i64(20) + i8(1) + arr([string("orders") + arr([i32(0), i32(1)])]))
    # ControlledShutdown v0 (header v0) and v1: just the broker id
    _both("request", 7, 0, {"broker_id": 2}, i32(2))
    _both("response", 7, 1, {"error_code": 0, "remaining_partitions": [{"topic_name": "orders", "partition_index": 1}]},
          i16(0) + arr([string("orders") + i32(1)]))  # fmt: skip
