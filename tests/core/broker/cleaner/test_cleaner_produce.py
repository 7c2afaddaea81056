"""A compacted topic refuses a record without a key as Kafka 2.6.3's LogValidator.validateKey: INVALID_RECORD, "One or
more records have been rejected", a record error per keyless record and the log start offset; nothing is appended.
A keyed batch, and a keyless one on a topic without compact, are appended."""

from __future__ import annotations

from core.broker.log_config import LogConfig
from messages.common import Errors, TopicPartition
from messages.replication import ProducePartition, ProduceRequest
from protocol.records import Record, build_batch
from tests.support.broker import broker_zk, drive, lai_request, lai_state, make_rm

TP = TopicPartition("compacted", 0)
T0 = 1_700_000_000_000.0


def _produce(rm, batch: bytes):
    request = ProduceRequest(1, 30000, (ProducePartition(TP, batch),))
    return drive(rm.handle_produce(request, T0, "client"), None).partitions[0]


def _leader(tmp_path, policy: str):
    rm = make_rm(tmp_path)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 0, (0,), [0], is_new=True)]), T0), broker_zk())
    partition = rm.online_partition(TP)
    partition.log.config = LogConfig(cleanup_policy=policy)
    return rm, partition


def test_a_compacted_topic_refuses_records_without_a_key_with_kafkas_record_errors(tmp_path):
    rm, partition = _leader(tmp_path, "compact")
    mixed = build_batch([Record(0, 0, b"k", b"v"), Record(1, 0, None, b"v"), Record(2, 0, None, None)],
                        first_timestamp=int(T0))
    resp = _produce(rm, mixed)
    assert resp.error == Errors.INVALID_RECORD
    assert resp.error_message == "One or more records have been rejected"
    message = "Compacted topic cannot accept message without key in topic partition compacted-0."
    assert resp.record_errors == ((1, message), (2, message))
    assert resp.log_start_offset == 0 and partition.log.log_end_offset == 0
    keyed = build_batch([Record(0, 0, b"k", b"v"), Record(1, 0, b"k", None)], first_timestamp=int(T0))
    assert _produce(rm, keyed).error == Errors.NONE and partition.log.log_end_offset == 2


def test_compact_delete_refuses_them_too_and_delete_accepts_them(tmp_path):
    keyless = build_batch([Record(0, 0, None, b"v")], first_timestamp=int(T0))
    rm, _ = _leader(tmp_path / "a", "compact,delete")
    assert _produce(rm, keyless).error == Errors.INVALID_RECORD
    rm, partition = _leader(tmp_path / "b", "delete")
    assert _produce(rm, keyless).error == Errors.NONE and partition.log.log_end_offset == 1


def test_a_corrupt_keyless_batch_gets_the_corruption_error_first(tmp_path):
    rm, _ = _leader(tmp_path, "compact")
    corrupt = bytearray(build_batch([Record(0, 0, None, b"v")], first_timestamp=int(T0)))
    corrupt[-1] ^= 0xFF
    assert _produce(rm, bytes(corrupt)).error == Errors.CORRUPT_MESSAGE
