"""protocol/records.py's control records: ControlRecordType keys and EndTransactionMarker values, byte for byte as
Kafka 2.6's MemoryRecords.withEndTransactionMarker writes them."""

from __future__ import annotations

import struct

import pytest

from protocol.errors import InvalidRecordError
from protocol.records import (
    CONTROL_ABORT,
    CONTROL_BIT,
    CONTROL_COMMIT,
    CONTROL_UNKNOWN,
    TRANSACTIONAL_BIT,
    EndTransactionMarker,
    Record,
    batch_end_txn_marker,
    build_batch,
    build_end_txn_marker_batch,
    check_batch,
    control_record_type,
    end_txn_marker,
    read_batch_header,
)


@pytest.mark.parametrize("control_type, key", [(CONTROL_COMMIT, b"\x00\x00\x00\x01"),
                                               (CONTROL_ABORT, b"\x00\x00\x00\x00")])
def test_a_marker_batch_is_one_transactional_control_record_with_kafkas_key_and_value(control_type, key):
    raw = build_end_txn_marker_batch(42, 7, EndTransactionMarker(control_type, 13), timestamp=1_700_000_000_000)
    batch = read_batch_header(raw)
    check_batch(batch)  # its CRC and record count hold
    assert batch.attributes == TRANSACTIONAL_BIT | CONTROL_BIT  # no codec, CreateTime
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.records_count) == (42, 7, -1, 1)
    assert (batch.first_timestamp, batch.max_timestamp, batch.last_offset_delta) == (1_700_000_000_000,) * 2 + (0,)
    (record,) = batch.records()
    assert record.key == key  # version 0, type
    assert record.value == b"\x00\x00" + struct.pack(">i", 13)  # version 0, coordinator epoch
    assert (record.offset_delta, record.timestamp_delta, record.headers) == (0, 0, ())
    marker = batch_end_txn_marker(batch)
    assert marker == EndTransactionMarker(control_type, 13) and marker.is_abort == (control_type == CONTROL_ABORT)


def test_control_keys_of_other_types_are_unknown_and_bad_keys_or_values_invalid():
    assert control_record_type(b"\x00\x01\x00\x05") == CONTROL_UNKNOWN  # a newer version is read, type unknown
    assert end_txn_marker(Record(0, 0, b"\x00\x00\x00\x07", b"")) is None
    for key in (None, b"\x00\x00\x00", b"\xff\xff\x00\x01"):
        with pytest.raises(InvalidRecordError):
            control_record_type(key)
    for value in (None, b"\x00\x00\x00\x00\x01", b"\xff\xff\x00\x00\x00\x01"):
        with pytest.raises(InvalidRecordError):
            end_txn_marker(Record(0, 0, b"\x00\x00\x00\x01", value))
    # a control batch the cleaner emptied has no marker
    empty = read_batch_header(build_batch([], producer_id=1, producer_epoch=0, attributes=CONTROL_BIT))
    assert batch_end_txn_marker(empty) is None
