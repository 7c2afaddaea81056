"""Produce v0-8: requests converted to ProduceRequest (v0-2 message sets to the v2 batch the log appends, a corrupt
one answered for its partition), responses at every version, acks=0 unanswered — against protocol's codec."""

from __future__ import annotations

import pytest

from core.api import produce
from core.api.registry import RequestContext
from messages.common import Errors, TopicPartition
from messages.replication import ProducePartition, ProducePartitionResponse, ProduceRequest, ProduceResponse
from protocol import compression
from protocol.codec import decode_request, decode_response, encode_request, encode_response
from protocol.legacy_records import build_message_set
from protocol.records import Record, build_batch, check_batch, iter_batches, read_records

T0, T1 = TopicPartition("orders", 0), TopicPartition("orders", 1)
U0 = TopicPartition("users", 0)
BATCH = build_batch([Record(0, 0, b"k", b"v1"), Record(1, 5, None, b"v2")], first_timestamp=1_700_000_000_000)


def _wire_request(version: int, records: dict[TopicPartition, bytes], acks: int = -1) -> dict:
    topics: dict[str, list] = {}
    for tp, r in records.items():
        topics.setdefault(tp.topic, []).append({"index": tp.partition, "records": r})
    body = {"acks": acks, "timeout_ms": 1500,
            "topic_data": [{"name": t, "partition_data": ps} for t, ps in topics.items()]}
    if version >= 3:
        body["transactional_id"] = None
    return decode_request(0, version, encode_request(0, version, body))[0]


@pytest.mark.parametrize("version", range(3, 9))
def test_v3_plus_batches_pass_as_received(version):
    req = produce.request_from_wire(version, _wire_request(version, {T0: BATCH, T1: BATCH, U0: b""}),
                                    RequestContext(version))
    assert req == ProduceRequest(-1, 1500, (ProducePartition(T0, BATCH), ProducePartition(T1, BATCH),
                                            ProducePartition(U0, b"")))


@pytest.mark.parametrize("version, magic", [(0, 0), (1, 0), (2, 1)])
@pytest.mark.parametrize("codec", [compression.NONE, compression.GZIP])
def test_v0_2_message_sets_become_the_v2_batch_the_log_appends(version, magic, codec):
    ts = -1 if magic == 0 else 1_700_000_000_123
    legacy = build_message_set([(0, ts, b"a", b"one"), (1, ts + (magic == 1), None, b"two")], magic=magic, codec=codec)
    (p,) = produce.request_from_wire(version, _wire_request(version, {T0: legacy}), RequestContext(version)).partitions
    assert p.tp == T0 and p.error == Errors.NONE
    (batch,) = iter_batches(p.records)
    check_batch(batch)  # CRC-32C and record count as the log will check them
    assert batch.compression == codec and batch.base_offset == 0
    assert [(r.offset_delta, r.key, r.value) for r in read_records(batch)] == [(0, b"a", b"one"), (1, None, b"two")]


def test_a_corrupt_message_set_is_that_partitions_corrupt_message():
    good = build_message_set([(0, -1, None, b"fine")], magic=0)
    bad = bytearray(build_message_set([(0, -1, None, b"flipped")], magic=0))
    bad[-1] ^= 0xFF  # the value's last byte: the CRC-32 no longer matches
    req = produce.request_from_wire(0, _wire_request(0, {T0: bytes(bad), T1: good}), RequestContext(0))
    assert req.partitions[0] == ProducePartition(T0, b"", Errors.CORRUPT_MESSAGE)
    assert req.partitions[1].error == Errors.NONE and req.partitions[1].records
    cut = produce.request_from_wire(1, _wire_request(1, {T0: good[:-3]}), RequestContext(1)).partitions[0]
    assert cut.error == Errors.CORRUPT_MESSAGE


def test_acks_0_expects_no_reply():
    assert not produce.reply_expected(8, {"acks": 0})
    assert produce.reply_expected(8, {"acks": 1}) and produce.reply_expected(0, {"acks": -1})


RESPONSE = ProduceResponse((
    ProducePartitionResponse(T0, Errors.NONE, 42, 1_700_000_000_999, 7),
    ProducePartitionResponse(U0, Errors.NOT_LEADER_OR_FOLLOWER),
    ProducePartitionResponse(T1, Errors.INVALID_RECORD, -1, -1, 0, ((1, "bad timestamp"),), "One or more records"),
), throttle_time_ms=3)


@pytest.mark.parametrize("version", range(9))
def test_responses_at_every_version(version):
    body = decode_response(0, version, encode_response(0, version, produce.response_to_wire(version, RESPONSE)))[0]
    assert [t["name"] for t in body["responses"]] == ["orders", "users"]  # grouped by topic, first-seen order
    assert [(p["index"], p["error_code"], p["base_offset"]) for p in body["responses"][0]["partition_responses"]] \
        == [(0, 0, 42), (1, 87, -1)]
    back = produce.response_from_wire(version, body)
    t0 = next(p for p in back.partitions if p.tp == T0)
    assert t0.log_append_time_ms == (1_700_000_000_999 if version >= 2 else -1)
    assert t0.log_start_offset == (7 if version >= 5 else -1)
    t1 = next(p for p in back.partitions if p.tp == T1)
    assert t1.record_errors == (((1, "bad timestamp"),) if version >= 8 else ())
    assert back.throttle_time_ms == (3 if version >= 1 else 0)


def test_error_response_answers_every_partition():
    wire = _wire_request(8, {T0: BATCH, U0: BATCH})
    body = produce.error_response(8, wire, Errors.UNKNOWN_SERVER_ERROR)
    back = produce.response_from_wire(8, decode_response(0, 8, encode_response(0, 8, body))[0])
    assert [(p.tp, p.error) for p in back.partitions] == [(T0, Errors.UNKNOWN_SERVER_ERROR),
                                                           (U0, Errors.UNKNOWN_SERVER_ERROR)]


def test_request_to_wire_is_what_request_from_wire_reads():
    req = ProduceRequest(1, 30000, (ProducePartition(T0, BATCH), ProducePartition(U0, BATCH)), "tx")
    wire = decode_request(0, 8, encode_request(0, 8, produce.request_to_wire(req)))[0]
    assert produce.request_from_wire(8, wire, RequestContext(8)) == req


def test_bytes_holding_no_whole_batch_are_not_transactional():
    """2.6.3's RequestUtils.hasTransactionalRecords iterates whole batches only (ByteBufferLogInputStream.nextBatch):
    garbage whose size field runs past its bytes, with the transactional bit where a batch's attributes would be, is
    no transactional batch, so it is not refused TRANSACTIONAL_ID_AUTHORIZATION_FAILED (validation answers
    INVALID_RECORD); a whole transactional batch without a transactional id still is."""
    garbage = bytearray(61)
    garbage[8:12] = (10_000).to_bytes(4, "big")
    garbage[22] = 0x10  # the transactional bit of the attributes' low byte
    ctx = RequestContext(8, 1, "x", "127.0.0.1", 1, "PLAINTEXT")

    def body(records: bytes) -> dict:
        return {"transactional_id": None, "acks": 1, "timeout_ms": 1000,
                "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": records}]}]}

    (p,) = produce.request_from_wire(8, body(bytes(garbage)), ctx).partitions
    assert p.error == Errors.NONE and p.records == bytes(garbage)
    whole = bytearray(build_batch([Record(0, 0, None, b"v")], producer_id=7, producer_epoch=0, base_sequence=0))
    whole[22] |= 0x10
    (p,) = produce.request_from_wire(8, body(bytes(whole)), ctx).partitions
    assert p.error == Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
