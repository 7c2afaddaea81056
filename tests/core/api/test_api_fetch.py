"""Fetch (key 1): a follower's v11 request (its fetcher in the client id, a KIP-227 session) is Kafka's bytes and
reads back; kafka-python 1.4.7's consumer requests (v0, v4, v6) read with their defaults; the v11 response carries the
log's batches untouched; a v0-3 consumer gets them down-converted to magic v0/v1 message sets that kafka-python 1.4.7's
own reader accepts (offsets, timestamps, keys, values; gzip wrappers; control batches dropped); zstd below v10 is
refused as Kafka refuses it; the error response."""

from __future__ import annotations

import pytest
from kafka.protocol.fetch import FetchRequest as KpFetchRequest
from kafka.record import MemoryRecords

from core.api import fetch
from core.api.registry import RequestContext
from messages.common import Errors, TopicPartition
from messages.replication import AbortedTransaction, FetchPartition, FetchPartitionData, FetchRequest, FetchResponse
from protocol import compression
from protocol.codec import decode_request
from protocol.legacy_records import deep_messages, iter_messages
from protocol.records import CONTROL_BIT, TIMESTAMP_TYPE_BIT, Record, build_batch, iter_batches
from tests.protocol.wire_by_hand import arr, blob, i8, i16, i32, i64, string
from tests.support.api_wire import request_through_wire, response_through_wire

T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)

FOLLOWER = FetchRequest(
    replica_id=2, partitions=(FetchPartition(T0, 10, 3, 0, 1048576), FetchPartition(T1, 0, 3, 0, 1048576),
                              FetchPartition(U0, 7, 1, 5, 1048576)),
    max_wait_ms=500, min_bytes=1, max_bytes=10485760, isolation_level=0, session_id=0, session_epoch=0,
    fetcher_id=1)


def _ctx(client_id: str) -> RequestContext:
    return RequestContext(api_version=11, client_id=client_id)


def test_a_followers_v11_request_is_kafkas_bytes_and_reads_back_with_its_fetcher() -> None:
    data, decoded = request_through_wire(1, fetch.SEND_VERSION, fetch.request_to_wire(FOLLOWER))

    def part(p: int, epoch: int, offset: int, log_start: int) -> bytes:
        return i32(p) + i32(epoch) + i64(offset) + i64(log_start) + i32(1048576)

    assert data == (i32(2) + i32(500) + i32(1) + i32(10485760) + i8(0) + i32(0) + i32(0)
                    + arr([string("t") + arr([part(0, 3, 10, 0), part(1, 3, 0, 0)]),
                           string("u") + arr([part(0, 1, 7, 5)])])
                    + arr([]) + string(""))
    assert fetch.client_id_of(FOLLOWER) == "broker-2-fetcher-1"
    assert fetch.request_from_wire(11, decoded, _ctx("broker-2-fetcher-1")) == FOLLOWER
    # another replica's client id, or none, names no fetcher of this replica
    assert fetch.request_from_wire(11, decoded, _ctx("broker-3-fetcher-1")).fetcher_id == 0
    assert fetch.request_from_wire(11, decoded).fetcher_id == 0


def test_an_incremental_session_request_with_forgotten_partitions() -> None:
    req = FetchRequest(1, (FetchPartition(U0, 9, 2, 0),), max_wait_ms=500, min_bytes=1, session_id=77,
                       session_epoch=4, forgotten=(T0, T1), fetcher_id=0)
    body = fetch.request_to_wire(req)
    assert body["forgotten_topics_data"] == [{"topic": "t", "partitions": [0, 1]}]
    _, decoded = request_through_wire(1, 11, body)
    assert fetch.request_from_wire(11, decoded, _ctx("broker-1-fetcher-0")) == req


def test_the_fetcher_id_kept_per_client_id_is_the_one_read_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """request_from_wire keeps each (replica id, client id)'s fetcher id: asked again, in any order and after the
    memory was emptied, each answer is the regular expression's."""
    monkeypatch.setattr(fetch, "_FETCHER_IDS_MAX", 3)
    cases = [(2, "broker-2-fetcher-1", 1), (2, "broker-3-fetcher-1", 0), (3, "broker-3-fetcher-1", 1),
             (2, "broker-2-fetcher-7", 7), (2, "", 0), (2, "broker-2-fetcher-x", 0), (-1, "broker--1-fetcher-2", 0),
             (-5, "broker--5-fetcher-2", 0)]
    for _round in range(3):
        for replica_id, client_id, expected in cases:
            assert fetch._fetcher_id(replica_id, _ctx(client_id)) == expected
        cases.reverse()
        assert len(fetch._FETCHER_IDS) <= 3
    assert fetch._fetcher_id(2, None) == 0


def test_a_consumer_fetch_has_no_fetcher_client_id() -> None:
    assert fetch.client_id_of(FetchRequest(-1, (FetchPartition(T0, 0),))) is None


@pytest.mark.parametrize("version", [0, 4, 6])
def test_kafka_python_consumer_requests_read_with_their_defaults(version: int) -> None:
    """kafka-python 1.4.7's own FetchRequest classes (an encoder independent of ours)."""
    partitions = [(0, 42, 65536)] if version < 5 else [(0, 42, -1, 65536)]
    fields = [-1, 100, 1] + ([52428800] if version >= 3 else []) + ([1] if version >= 4 else [])
    request = KpFetchRequest[version](*fields, [("t", partitions)])  # kept: its encode() is a weak method
    data = request.encode()
    decoded, end = decode_request(1, version, data)
    assert end == len(data)
    req = fetch.request_from_wire(version, decoded, _ctx("kafka-python-1.4.7"))
    assert req == FetchRequest(
        -1, (FetchPartition(T0, 42, -1, -1, 65536),), max_wait_ms=100, min_bytes=1,
        max_bytes=52428800 if version >= 3 else fetch.DEFAULT_RESPONSE_MAX_BYTES,
        isolation_level=1 if version >= 4 else 0, session_id=0, session_epoch=-1, fetcher_id=0)


def _batch(base: int, values: list[bytes], codec: int = compression.NONE, attributes: int = 0,
           first_ts: int = 1_700_000_000_000) -> bytes:
    records = [Record(i, 10 * i, b"k%d" % i if i % 2 else None, v) for i, v in enumerate(values)]
    return build_batch(records, base_offset=base, first_timestamp=first_ts, compression_codec=codec,
                       partition_leader_epoch=3, attributes=attributes)


def test_v11_response_carries_the_batches_untouched_and_reads_back() -> None:
    records = _batch(10, [b"a", b"b"]) + _batch(12, [b"c"], compression.GZIP)
    resp = FetchResponse((FetchPartitionData(T0, Errors.NONE, 13, 13, 0, records, preferred_read_replica=-1),
                          FetchPartitionData(U0, Errors.FENCED_LEADER_EPOCH)), Errors.NONE, 77, 0)
    data, decoded = response_through_wire(1, 11, fetch.response_to_wire(11, resp))

    def part(p: int, error: int, hw: int, lso: int, lso_: int, recs: bytes) -> bytes:
        return i32(p) + i16(error) + i64(hw) + i64(lso) + i64(lso_) + i32(-1) + i32(-1) + blob(recs)

    assert data == (i32(0) + i16(0) + i32(77)
                    + arr([string("t") + arr([part(0, 0, 13, 13, 0, records)]),
                           string("u") + arr([part(0, 74, -1, -1, -1, b"")])]))
    # log_end_offset is kactor-internal: not on the wire
    assert fetch.response_from_wire(11, decoded) == resp


def _legacy(records: bytes) -> list[tuple[int, int, int, bytes | None, bytes | None]]:
    """(offset, timestamp, timestamp type, key, value) of every record as kafka-python 1.4.7's reader sees it."""
    out = []
    mr = MemoryRecords(records)
    while mr.has_next():
        batch = mr.next_batch()
        assert batch.validate_crc()
        out += [(r.offset, r.timestamp, r.timestamp_type, r.key, r.value) for r in batch]
    return out


@pytest.mark.parametrize("version, magic", [(0, 0), (1, 0), (2, 1), (3, 1)])
def test_v0_to_v3_consumers_get_message_sets(version: int, magic: int) -> None:
    ts = 1_700_000_000_000
    records = _batch(10, [b"a", b"b"]) + _batch(12, [b"c", b"d"], compression.GZIP, first_ts=ts + 50)
    resp = FetchResponse((FetchPartitionData(T0, Errors.NONE, 14, 14, 0, records),))
    body = fetch.response_to_wire(version, resp)
    _, decoded = response_through_wire(1, version, body)
    converted = decoded["responses"][0]["partitions"][0]["records"]
    assert {m.magic for m in iter_messages(converted)} == {magic}
    # the gzip batch is one compressed wrapper: 2 plain messages + 1 wrapper on the outside
    assert [m.compression for m in iter_messages(converted)] == [0, 0, compression.GZIP]
    assert [(m.offset, m.key, m.value) for m in deep_messages(converted)] == [
        (10, None, b"a"), (11, b"k1", b"b"), (12, None, b"c"), (13, b"k1", b"d")]
    expected_ts = [ts, ts + 10, ts + 50, ts + 60] if magic == 1 else [None] * 4
    assert [(o, t, k, v) for o, t, _, k, v in _legacy(converted)] == [
        (10, expected_ts[0], None, b"a"), (11, expected_ts[1], b"k1", b"b"),
        (12, expected_ts[2], None, b"c"), (13, expected_ts[3], b"k1", b"d")]
    assert fetch.response_from_wire(version, decoded).partitions[0].high_watermark == 14


def test_log_append_time_and_control_batches_in_down_conversion() -> None:
    log_append = _batch(0, [b"x"], attributes=TIMESTAMP_TYPE_BIT)
    control = _batch(1, [b"\x00\x00\x00\x00"], attributes=CONTROL_BIT)
    converted = fetch.down_convert(log_append + control, 1)
    [(offset, ts, ts_type, _, value)] = _legacy(converted)
    [batch] = iter_batches(log_append)
    assert (offset, ts, ts_type, value) == (0, batch.max_timestamp, 1, b"x")  # 1 = LogAppendTime


def test_zstd_batches_need_fetch_v10() -> None:
    records = _batch(0, [b"z"], compression.ZSTD)
    resp = FetchResponse((FetchPartitionData(T0, Errors.NONE, 1, 1, 0, records),))
    for version in (3, 9):
        [p] = fetch.response_to_wire(version, resp)["responses"][0]["partitions"]
        assert (p["error_code"], p["records"]) == (Errors.UNSUPPORTED_COMPRESSION_TYPE, b"")
    [p] = fetch.response_to_wire(10, resp)["responses"][0]["partitions"]
    assert (p["error_code"], p["records"]) == (0, records)


@pytest.mark.parametrize("version", [0, 4, 7, 11])
def test_error_response_fails_every_partition(version: int) -> None:
    body = fetch.request_to_wire(FOLLOWER)
    if version < 11:
        _, body = request_through_wire(1, version, {k: v for k, v in body.items() if k in {
            "replica_id", "max_wait_ms", "min_bytes", "topics"} | ({"session_id"} if version >= 7 else set())} | {
            "topics": [{"topic": t["topic"], "partitions": [
                {"partition": p["partition"], "fetch_offset": p["fetch_offset"], "partition_max_bytes": 1}
                for p in t["partitions"]]} for t in body["topics"]]})
    err = fetch.error_response(version, body, Errors.UNKNOWN_SERVER_ERROR)
    _, decoded = response_through_wire(1, version, err)
    back = fetch.response_from_wire(version, decoded)
    assert [(p.tp, p.error, p.high_watermark, p.records) for p in back.partitions] == [
        (tp, Errors.UNKNOWN_SERVER_ERROR, -1, b"") for tp in (T0, T1, U0)]
    assert back.error == (Errors.UNKNOWN_SERVER_ERROR if version >= 7 else Errors.NONE)


def test_a_consumers_v11_request_carries_its_rack_and_listener_and_the_answer_its_preferred_replica() -> None:
    """KIP-392: a consumer's Fetch v11 (built by hand: replica -1, one partition, no forgotten ones, rack_id "r2")
    reads as a request with client metadata, its rack and the listener it came in on (ClientMetadata); an answer
    naming a preferred read replica puts it after the aborted transactions."""
    data = (i32(-1) + i32(500) + i32(1) + i32(52428800) + i8(0) + i32(0) + i32(-1)
            + arr([string("t") + arr([i32(0) + i32(4) + i64(7) + i64(-1) + i32(1048576)])])
            + arr([]) + string("r2"))
    decoded, end = decode_request(1, 11, data)
    assert end == len(data)
    req = fetch.request_from_wire(11, decoded, RequestContext(api_version=11, client_id="rdkafka",
                                                              listener="EXTERNAL"))
    assert req == FetchRequest(-1, (FetchPartition(T0, 7, 4, -1, 1048576),), max_wait_ms=500, min_bytes=1,
                               max_bytes=52428800, session_id=0, session_epoch=-1, rack_id="r2",
                               client_metadata=True, listener="EXTERNAL")
    resp = FetchResponse((FetchPartitionData(T0, Errors.NONE, 9, 9, 0, b"", preferred_read_replica=2),))
    wire, decoded_resp = response_through_wire(1, 11, fetch.response_to_wire(11, resp))
    assert wire == (i32(0) + i16(0) + i32(0)
                    + arr([string("t") + arr([i32(0) + i16(0) + i64(9) + i64(9) + i64(0) + i32(-1) + i32(2)
                                              + blob(b"")])]))
    assert fetch.response_from_wire(11, decoded_resp) == resp


def test_a_read_committed_answer_carries_its_aborted_transactions_and_a_read_uncommitted_one_null() -> None:
    """FetchResponse v4+: ``aborted_transactions`` (producer_id int64, first_offset int64 each) after
    log_start_offset: an array for READ_COMMITTED (empty when nothing was aborted in the range read), null (-1) for
    READ_UNCOMMITTED; both read back."""
    aborted = (AbortedTransaction(7, 0), AbortedTransaction(9, 4))
    resp = FetchResponse((FetchPartitionData(T0, Errors.NONE, 13, 6, 0, b"", aborted_transactions=aborted),
                          FetchPartitionData(T1, Errors.NONE, 13, 6, 0, b"", aborted_transactions=()),
                          FetchPartitionData(U0, Errors.NONE, 13, 13, 0, b"")), Errors.NONE, 0, 0)
    data, decoded = response_through_wire(1, 11, fetch.response_to_wire(11, resp))

    def part(p: int, lso: int, aborted: bytes) -> bytes:
        return i32(p) + i16(0) + i64(13) + i64(lso) + i64(0) + aborted + i32(-1) + blob(b"")

    assert data == (i32(0) + i16(0) + i32(0)
                    + arr([string("t") + arr([part(0, 6, arr([i64(7) + i64(0), i64(9) + i64(4)])),
                                              part(1, 6, arr([]))]),
                           string("u") + arr([part(0, 13, i32(-1))])]))
    assert fetch.response_from_wire(11, decoded) == resp
