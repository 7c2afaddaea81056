"""Records summaries in trace lines (trace version 3, messages/codec/summary.py): which lines summarise their bytes
(every line a replay compares rather than feeds), the summary's fields, the same text from the reference, the text
encoder and orjson's lines, and its decoding back to a value that encodes to the same text."""

from __future__ import annotations

import json
from typing import Any

import pytest

from actors import names
from messages.codec import fastcodec, fastdecode, orjson_lines
from messages.codec import reference as codec
from messages.codec.summary import (
    SUMMARY_MIN,
    RecordsSummary,
    describe,
    is_input,
    offset_range,
    summarise,
    summary_json,
)
from messages.common import Errors, TopicPartition
from messages.group import JoinGroupProtocol
from messages.net import NetReply, NetRequest
from messages.partition import ShardReply, ShardRequest
from messages.replication import FetchPartitionData, FetchResponse, ProducePartition, ProduceRequest
from protocol.records import Record, build_batch

TS = 1767225600000.5
TP = TopicPartition("t", 0)
# two batches as a leader's log holds them: offsets 10-12 and 13-14
BATCHES = (build_batch([Record(i, 0, None, b"v" * 100) for i in range(3)], base_offset=10)
           + build_batch([Record(i, 0, b"k", b"w" * 100) for i in range(2)], base_offset=13))


def _lines(seq: int, sender: str, body: Any, summarise_: bool | None = None) -> str:
    """The line of every encoder, checked equal to the reference's; returned as text without the newline."""
    if summarise_ is None:
        ref = json.dumps(codec.record_json(seq, TS, sender, "r", body, None), separators=(",", ":"))
        assert fastcodec.encode_record(seq, TS, sender, "r", body, None) == ref
    else:
        ref = fastcodec.encode_record(seq, TS, sender, "r", body, None, summarise_)
    assert orjson_lines.encode_record_bytes(seq, TS, sender, "r", body, None, summarise_) == (ref + "\n").encode()
    return ref


def test_crc32c_is_the_standard_one() -> None:
    assert summary_json(b"123456789" * 8)["@rec"]["crc32c"] != summary_json(b"123456788" * 8)["@rec"]["crc32c"]
    # CRC-32C's check value (RFC 3720 B.4's polynomial): what Kafka checks record batches with
    assert summarise(b"123456789").crc32c == 0xE3069283


def test_summary_fields_of_record_batches_and_of_other_bytes() -> None:
    s = summarise(BATCHES)
    assert s == RecordsSummary(len(BATCHES), s.crc32c, 10, 14)
    assert offset_range(BATCHES) == (10, 14)
    assert offset_range(BATCHES[:-1]) is None  # a cut tail: not whole batches
    assert offset_range(b"") is None
    assert summarise(b"x" * 100) == RecordsSummary(100, summarise(b"x" * 100).crc32c, -1, -1)  # not records
    assert describe(summary_json(BATCHES)) == f"records {len(BATCHES):,} B crc32c {s.crc32c:#010x} offsets 10-14"
    assert describe(summary_json(b"x" * 100)) == f"records 100 B crc32c {summarise(b'x' * 100).crc32c:#010x}"


@pytest.mark.parametrize("sender", [names.EDGE_ZK, names.EDGE_NET, names.EDGE_TIMER, names.EDGE_PROCESS,
                                    names.EDGE_LOG_DIRS, "cli", "cli-admin"])
def test_inputs_are_the_lines_a_replay_feeds(sender: str) -> None:
    assert is_input(sender)
    from kactor.trace.reader import is_external

    assert is_external(sender)


@pytest.mark.parametrize("sender", [names.REPLICA_MANAGER, names.shard(3), names.channel(1), "controller", "net"])
def test_actors_lines_are_compared_so_summarised(sender: str) -> None:
    assert not is_input(sender)


def test_the_produce_path_records_its_bytes_once() -> None:
    """The leader's ProduceRequest arrives (an input: its batches in full); the ShardRequest that hands them to a
    partition's shard, and the ShardReply and NetReply that carry a fetch's answer out, summarise them."""
    produce = ProduceRequest(-1, 30000, (ProducePartition(TP, BATCHES),))
    arriving = _lines(1, names.EDGE_NET, NetRequest(7, 1, produce, True, 8, "rdkafka", "127.0.0.1"))
    assert '"records":{"@b64":"' in arriving and "@rec" not in arriving
    inward = _lines(2, names.REPLICA_MANAGER, ShardRequest(1, produce))
    fetched = FetchResponse((FetchPartitionData(TP, Errors.NONE, 15, 15, 0, BATCHES, 15),))
    s = summarise(BATCHES)
    want = f'"records":{{"@rec":{{"size":{len(BATCHES)},"crc32c":{s.crc32c},"first_offset":10,"last_offset":14}}}}'
    for line in (inward, _lines(3, names.shard(0), ShardReply(2, 0, fetched)),
                 _lines(4, names.REPLICA_MANAGER, NetReply(7, 2, fetched))):
        assert want in line and "@b64" not in line
    follower = _lines(5, names.EDGE_NET, NetReply(7, 2, fetched))  # as a follower receives it: an input
    assert '"records":{"@b64":"' in follower


def test_short_bytes_stay_whole_in_every_line() -> None:
    small = JoinGroupProtocol("range", b"\x00\x01" * (SUMMARY_MIN // 2))
    assert len(small.metadata) == SUMMARY_MIN
    for sender in (names.EDGE_NET, "group-coordinator"):
        assert '"metadata":{"@b64":' in _lines(1, sender, small)
    assert '"metadata":{"@rec":' in _lines(1, "group-coordinator", JoinGroupProtocol("range", b"\x00" * 65))


def test_a_summary_decodes_to_a_value_that_writes_the_same_line() -> None:
    line = _lines(2, names.REPLICA_MANAGER, ShardRequest(1, ProduceRequest(1, 100, (ProducePartition(TP, BATCHES),))))
    payload = json.loads(line)["payload"]
    value = fastdecode.from_json(payload)
    assert value == codec.from_json(payload)
    assert value.body.partitions[0].records == summarise(BATCHES)
    assert _lines(2, names.REPLICA_MANAGER, value) == line
    assert codec.dumps(value.body.partitions[0].records) == json.dumps(summary_json(BATCHES), separators=(",", ":"))


def test_version_2_lines_hold_every_bytes_value_in_full() -> None:
    """What a replay of a version 2 trace compares with: no summary, whatever the sender."""
    body = ShardRequest(1, ProduceRequest(1, 100, (ProducePartition(TP, BATCHES),)))
    line = _lines(1, names.REPLICA_MANAGER, body, summarise_=False)
    assert '"records":{"@b64":"' in line and "@rec" not in line


def test_a_batch_of_lines_keeps_each_kind_of_line_apart() -> None:
    """One object in an input's line and in a summarising line of one batch (the text encoder's memo): each line
    as written alone."""
    produce = ProduceRequest(-1, 30000, (ProducePartition(TP, BATCHES),))
    records = [(1, TS, names.EDGE_NET, "replica-manager", NetRequest(1, 1, produce, True), None),
               (2, TS, "replica-manager", "partition-0", ShardRequest(1, produce), 1),
               (3, TS, names.EDGE_NET, "replica-manager", NetRequest(1, 2, produce, True), None)]
    alone = b"".join(orjson_lines.encode_record_bytes(*r) for r in records)
    assert orjson_lines.encode_records(records) == alone
    assert fastcodec.encode_records(records).encode() == alone
    assert alone.count(b"@rec") == 1 and alone.count(b"@b64") == 2


@pytest.mark.parametrize("bad", [{"@rec": {"size": 1}}, {"@rec": [1, 2, 3, 4]}, {"@rec": {"size": "1", "crc32c": 1,
                                 "first_offset": -1, "last_offset": -1}}, {"@rec": {"crc32c": 1, "size": 1,
                                 "first_offset": -1, "last_offset": -1}}])
def test_malformed_summaries_are_codec_errors(bad: dict[str, Any]) -> None:
    with pytest.raises(codec.CodecError, match="bad records summary"):
        codec.from_json(bad)
    with pytest.raises(codec.CodecError, match="bad records summary"):
        fastdecode.from_json({"@": "FetchPartitionData", "tp": codec.to_json(TP), "error": codec.to_json(Errors.NONE),
                              "high_watermark": 1, "last_stable_offset": 1, "log_start_offset": 0, "records": bad,
                              "log_end_offset": 1, "preferred_read_replica": -1})
