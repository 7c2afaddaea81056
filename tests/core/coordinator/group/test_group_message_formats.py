"""The records of __consumer_offsets, byte for byte against bytes written out by hand from GroupMetadataManager's
schemas (Kafka 2.6: OFFSET_COMMIT_KEY_SCHEMA v1, OFFSET_COMMIT_VALUE_SCHEMA_V1/V3, GROUP_METADATA_KEY_SCHEMA v2,
GROUP_METADATA_VALUE_SCHEMA_V3 with MEMBER_METADATA_V3), and read back, older versions included."""

from __future__ import annotations

import pytest

from core.coordinator.group.message_formats import (
    FormatError,
    GroupMetadataKey,
    GroupRecord,
    MemberRecord,
    OffsetAndMetadata,
    OffsetKey,
    group_metadata_key,
    group_metadata_value,
    offset_commit_key,
    offset_commit_value,
    read_group_message_value,
    read_message_key,
    read_offset_message_value,
    records_batch,
)
from messages.common import TopicPartition
from protocol.records import check_batch, iter_batches, read_records

TP = TopicPartition("t", 3)


def test_offset_commit_key_is_version_1_group_topic_partition():
    expected = bytes.fromhex("0001" "0002") + b"g1" + bytes.fromhex("0001") + b"t" + bytes.fromhex("00000003")
    assert offset_commit_key("g1", TP) == expected
    assert read_message_key(expected) == OffsetKey("g1", TP)


def test_offset_commit_value_v3_offset_epoch_metadata_timestamp():
    expected = (bytes.fromhex("0003") + (5).to_bytes(8, "big") + (2).to_bytes(4, "big") + bytes.fromhex("0002")
                + b"md" + (1000).to_bytes(8, "big"))
    om = OffsetAndMetadata(5, 2, "md", 1000)
    assert offset_commit_value(om) == expected
    assert read_offset_message_value(expected) == om


def test_offset_commit_value_without_leader_epoch_writes_minus_one():
    assert offset_commit_value(OffsetAndMetadata(7, -1, "", 9))[10:14] == bytes.fromhex("ffffffff")


def test_offset_commit_value_v1_when_an_expire_timestamp_is_set():
    expected = (bytes.fromhex("0001") + (5).to_bytes(8, "big") + bytes.fromhex("0001") + b"m"
                + (1000).to_bytes(8, "big") + (61000).to_bytes(8, "big"))
    om = OffsetAndMetadata(5, -1, "m", 1000, 61000)
    assert offset_commit_value(om) == expected
    assert read_offset_message_value(expected) == om


def test_older_offset_values_are_read():
    v0 = bytes.fromhex("0000") + (4).to_bytes(8, "big") + bytes.fromhex("0000") + (77).to_bytes(8, "big")
    v2 = bytes.fromhex("0002") + (4).to_bytes(8, "big") + bytes.fromhex("0001") + b"x" + (77).to_bytes(8, "big")
    assert read_offset_message_value(v0) == OffsetAndMetadata(4, -1, "", 77)
    assert read_offset_message_value(v2) == OffsetAndMetadata(4, -1, "x", 77)
    key_v0 = bytes.fromhex("0000" "0001") + b"g" + bytes.fromhex("0001") + b"t" + bytes.fromhex("00000003")
    assert read_message_key(key_v0) == OffsetKey("g", TP)


def test_group_metadata_key_is_version_2_group():
    expected = bytes.fromhex("0002" "0002") + b"g1"
    assert group_metadata_key("g1") == expected
    assert read_message_key(expected) == GroupMetadataKey("g1")


def test_group_metadata_value_v3():
    record = GroupRecord("consumer", 1, "range", "m-1", 1234,
                         (MemberRecord("m-1", None, "c", "/127.0.0.1", 300000, 10000, b"\x01\x02", b"\x09"),
                          MemberRecord("m-2", "i-2", "c2", "/h", 5, 6, b"", b"")))
    expected = (bytes.fromhex("0003")
                + bytes.fromhex("0008") + b"consumer" + (1).to_bytes(4, "big")
                + bytes.fromhex("0005") + b"range" + bytes.fromhex("0003") + b"m-1" + (1234).to_bytes(8, "big")
                + (2).to_bytes(4, "big")
                + bytes.fromhex("0003") + b"m-1" + bytes.fromhex("ffff") + bytes.fromhex("0001") + b"c"
                + bytes.fromhex("000a") + b"/127.0.0.1" + (300000).to_bytes(4, "big") + (10000).to_bytes(4, "big")
                + bytes.fromhex("00000002" "0102") + bytes.fromhex("00000001" "09")
                + bytes.fromhex("0003") + b"m-2" + bytes.fromhex("0003") + b"i-2" + bytes.fromhex("0002") + b"c2"
                + bytes.fromhex("0002") + b"/h" + (5).to_bytes(4, "big") + (6).to_bytes(4, "big")
                + bytes.fromhex("00000000") + bytes.fromhex("00000000"))
    assert group_metadata_value(record) == expected
    assert read_group_message_value(expected) == record


def test_an_empty_group_value_has_null_protocol_and_leader():
    record = GroupRecord("consumer", 2, None, None, 5, ())
    expected = (bytes.fromhex("0003" "0008") + b"consumer" + (2).to_bytes(4, "big") + bytes.fromhex("ffff" "ffff")
                + (5).to_bytes(8, "big") + (0).to_bytes(4, "big"))
    assert group_metadata_value(record) == expected
    assert read_group_message_value(expected) == record


def test_group_value_v1_is_read_with_rebalance_timeout_and_no_state_timestamp():
    v1 = (bytes.fromhex("0001" "0008") + b"consumer" + (3).to_bytes(4, "big") + bytes.fromhex("0001") + b"r"
          + bytes.fromhex("0001") + b"m" + (1).to_bytes(4, "big")
          + bytes.fromhex("0001") + b"m" + bytes.fromhex("0001") + b"c" + bytes.fromhex("0001") + b"h"
          + (7).to_bytes(4, "big") + (8).to_bytes(4, "big") + bytes.fromhex("00000000" "00000000"))
    assert read_group_message_value(v1) == GroupRecord("consumer", 3, "r", "m", -1,
                                                       (MemberRecord("m", None, "c", "h", 7, 8, b"", b""),))


@pytest.mark.parametrize("data", [bytes.fromhex("0009"), bytes.fromhex("0003" "0008") + b"cons",
                                  bytes.fromhex("0003")])
def test_bad_values_raise_format_error(data):
    with pytest.raises(FormatError):
        read_group_message_value(data)
    with pytest.raises(FormatError):
        read_offset_message_value(data)


def test_unknown_key_version_raises_format_error():
    with pytest.raises(FormatError):
        read_message_key(bytes.fromhex("0003" "0001") + b"g")


def test_records_batch_is_one_valid_v2_batch_of_the_records_with_their_timestamp():
    data = records_batch([(b"k1", b"v1"), (b"k2", None)], 1_600_000_000_000)
    (batch,) = iter_batches(data)
    check_batch(batch)
    assert (batch.first_timestamp, batch.max_timestamp, batch.producer_id, batch.records_count) == (
        1_600_000_000_000, 1_600_000_000_000, -1, 2)
    assert [(r.offset_delta, r.key, r.value) for r in read_records(batch)] == [(0, b"k1", b"v1"), (1, b"k2", None)]
