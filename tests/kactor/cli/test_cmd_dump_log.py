"""``kactor dump-log`` prints a segment kactor's LogSegment wrote — its batches, records, .index, .timeindex and
.txnindex — and a producer-state snapshot as 2.6.3's DumpLogSegments prints them, line for line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.broker.log_segment import LogSegment
from core.broker.producer_state import BatchMetadata, ProducerStateEntry, encode_snapshot
from core.broker.transaction_index import AbortedTxn
from kactor.cli import main
from protocol.records import (
    CONTROL_ABORT,
    TRANSACTIONAL_BIT,
    EndTransactionMarker,
    Header,
    Record,
    build_batch,
    build_end_txn_marker_batch,
    read_batch_header,
)

T0 = 1_600_000_000_000


def _segment(tmp_path: Path) -> tuple[str, list[bytes]]:
    """A segment of three appends — three plain records with a key and a header, a transactional batch of
    producer 7, its ABORT marker — an index entry for each append after the first (index.interval.bytes 0: the
    bytes since the last entry must exceed it, as Kafka's LogSegment.append) and the aborted transaction in the
    .txnindex."""
    seg = LogSegment(str(tmp_path), 0, index_interval_bytes=0, created_ms=T0)
    seg.create()
    seg.make_active()
    plain = build_batch([Record(0, 0, b"k0", b"v0", (Header("h", b"x"),)), Record(1, 5, None, b"v1"),
                         Record(2, 9, b"k2", None)], base_offset=0, first_timestamp=T0, partition_leader_epoch=0)
    txn = build_batch([Record(0, 0, None, b"t0"), Record(1, 1, None, b"t1")], base_offset=3, first_timestamp=T0 + 20,
                      partition_leader_epoch=1, producer_id=7, producer_epoch=2, base_sequence=10,
                      attributes=TRANSACTIONAL_BIT)
    marker = build_end_txn_marker_batch(7, 2, EndTransactionMarker(CONTROL_ABORT, 4), T0 + 30, base_offset=5,
                                        partition_leader_epoch=1)
    seg.append(plain, 2, T0 + 9, 2)
    seg.append(txn, 4, T0 + 21, 4)
    seg.append(marker, 5, T0 + 30, 5)
    seg.update_txn_index(AbortedTxn(7, 3, 5, 6))
    seg.flush()
    return str(tmp_path / f"{0:020d}"), [plain, txn, marker]


def _crc(batch: bytes) -> int:
    return read_batch_header(batch).crc


def _dump(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], list[str]]:
    code = main(["dump-log", *argv])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


def test_a_segment_its_batches_and_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prefix, (plain, txn, marker) = _segment(tmp_path)
    p1, p2 = len(plain), len(plain) + len(txn)
    batches = [
        f"baseOffset: 0 lastOffset: 2 count: 3 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
        f"partitionLeaderEpoch: 0 isTransactional: false isControl: false position: 0 CreateTime: {T0 + 9} "
        f"size: {len(plain)} magic: 2 compresscodec: NONE crc: {_crc(plain)} isvalid: true",
        f"baseOffset: 3 lastOffset: 4 count: 2 baseSequence: 10 lastSequence: 11 producerId: 7 producerEpoch: 2 "
        f"partitionLeaderEpoch: 1 isTransactional: true isControl: false position: {p1} CreateTime: {T0 + 21} "
        f"size: {len(txn)} magic: 2 compresscodec: NONE crc: {_crc(txn)} isvalid: true",
        f"baseOffset: 5 lastOffset: 5 count: 1 baseSequence: -1 lastSequence: -1 producerId: 7 producerEpoch: 2 "
        f"partitionLeaderEpoch: 1 isTransactional: true isControl: true position: {p2} CreateTime: {T0 + 30} "
        f"size: {len(marker)} magic: 2 compresscodec: NONE crc: {_crc(marker)} isvalid: true",
    ]
    log = prefix + ".log"
    assert _dump(capsys, "--files", log) == (0, [f"Dumping {log}", "Starting offset: 0", *batches], [])
    code, lines, err = _dump(capsys, "--files", log, "--print-data-log")
    assert (code, err) == (0, [])
    assert lines == [
        f"Dumping {log}", "Starting offset: 0", batches[0],
        f"| offset: 0 CreateTime: {T0} keysize: 2 valuesize: 2 sequence: -1 headerKeys: [h] key: k0 payload: v0",
        f"| offset: 1 CreateTime: {T0 + 5} keysize: -1 valuesize: 2 sequence: -1 headerKeys: [] payload: v1",
        f"| offset: 2 CreateTime: {T0 + 9} keysize: 2 valuesize: -1 sequence: -1 headerKeys: [] key: k2",
        batches[1],
        f"| offset: 3 CreateTime: {T0 + 20} keysize: -1 valuesize: 2 sequence: 10 headerKeys: [] payload: t0",
        f"| offset: 4 CreateTime: {T0 + 21} keysize: -1 valuesize: 2 sequence: 11 headerKeys: [] payload: t1",
        batches[2],
        f"| offset: 5 CreateTime: {T0 + 30} keysize: 4 valuesize: 6 sequence: -1 headerKeys: [] "
        "endTxnMarker: ABORT coordinatorEpoch: 4",
    ]
    # --deep-iteration: the record lines without key and payload
    _, deep, _ = _dump(capsys, "--files", log, "--deep-iteration")
    assert deep[3] == f"| offset: 0 CreateTime: {T0} keysize: 2 valuesize: 2 sequence: -1 headerKeys: [h]"


def test_indexes_and_the_txnindex(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prefix, (plain, txn, _marker) = _segment(tmp_path)
    p1, p2 = len(plain), len(plain) + len(txn)
    index, time_index, txn_index = prefix + ".index", prefix + ".timeindex", prefix + ".txnindex"
    assert _dump(capsys, "--files", f"{index},{time_index},{txn_index}") == (0, [
        f"Dumping {index}", f"offset: 4 position: {p1}", f"offset: 5 position: {p2}",
        f"Dumping {time_index}", f"timestamp: {T0 + 21} offset: 4", f"timestamp: {T0 + 30} offset: 5",
        f"Dumping {txn_index}", "version: 0 producerId: 7 firstOffset: 3 lastOffset: 5 lastStableOffset: 6",
    ], [])
    assert _dump(capsys, "--files", f"{index},{time_index}", "--verify-index-only") == (
        0, [f"Dumping {index}", f"Dumping {time_index}"], [])
    assert _dump(capsys, "--files", f"{index},{time_index}", "--index-sanity-check") == (0, [
        f"Dumping {index}", f"{index} passed sanity check.", f"Dumping {time_index}",
        f"{time_index} passed sanity check."], [])


def test_an_index_entry_that_points_at_the_wrong_batch_is_reported(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    prefix, _ = _segment(tmp_path)
    index = prefix + ".index"
    data = bytearray(Path(index).read_bytes())
    data[0:4] = (3).to_bytes(4, "big")  # the first entry says offset 3; the batch at its position ends at 4
    Path(index).write_bytes(bytes(data))
    code, lines, err = _dump(capsys, "--files", index, "--verify-index-only")
    assert (code, lines) == (0, [f"Dumping {index}"])
    assert err == [f"Mismatches in :{os.path.abspath(index)}", "  Index offset: 3, log offset: 4"]


def test_time_index_entries_the_log_does_not_bear_out_are_reported(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    prefix, _ = _segment(tmp_path)
    time_index = prefix + ".timeindex"
    data = bytearray(Path(time_index).read_bytes())
    data[12:20] = (T0 + 21).to_bytes(8, "big")  # the second entry: offset 5 (max T0+30) at the first's timestamp
    Path(time_index).write_bytes(bytes(data))
    code, _, err = _dump(capsys, "--files", time_index, "--verify-index-only")
    name = os.path.abspath(time_index)
    assert (code, err) == (0, [f"Found timestamp mismatch in :{name}", f"  Index timestamp: {T0 + 21}, log timestamp: "
                                                                       f"{T0 + 30}",
                               f"Found out of order timestamp in :{name}",
                               f"  Index timestamp: {T0 + 21}, Previously indexed timestamp: {T0 + 21}"])


def test_a_truncated_index_fails_the_sanity_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prefix, _ = _segment(tmp_path)
    index = prefix + ".index"
    with open(index, "ab") as f:
        f.write(b"\0\0\0")
    code, _lines, err = _dump(capsys, "--files", index, "--index-sanity-check")
    assert code == 1
    assert err == [f"kactor dump-log: Index file {os.path.abspath(index)} is corrupt, found 19 bytes which is "
                   "neither positive nor a multiple of 8."]


def test_a_producer_snapshot_and_an_unknown_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snapshot = tmp_path / f"{6:020d}.snapshot"
    snapshot.write_bytes(encode_snapshot([
        ProducerStateEntry(7, 2, [BatchMetadata(10, 11, 3, 4, T0 + 21)], 4, T0 + 21, None),
        ProducerStateEntry(8, 0, [BatchMetadata(0, 0, 6, 6, T0 + 40)], -1, T0 + 40, 6),
        ProducerStateEntry(9, 1, [], 3, T0 + 50, None),
    ]))
    other = tmp_path / "leader-epoch-checkpoint"
    other.write_text("0\n")
    assert _dump(capsys, "--files", f"{snapshot},{other}") == (0, [
        f"Dumping {snapshot}",
        f"producerId: 7 producerEpoch: 2 coordinatorEpoch: 4 currentTxnFirstOffset: None firstSequence: 10 "
        f"lastSequence: 11 lastOffset: 4 offsetDelta: 1 timestamp: {T0 + 21}",
        f"producerId: 8 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: Some(6) firstSequence: 0 "
        f"lastSequence: 0 lastOffset: 6 offsetDelta: 0 timestamp: {T0 + 40}",
        "producerId: 9 producerEpoch: 1 coordinatorEpoch: 3 currentTxnFirstOffset: None ",
        f"Dumping {other}",
    ], [f"Ignoring unknown file {other}"])


def test_trailing_bytes_and_a_java_decoder_class(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prefix, _ = _segment(tmp_path)
    log = prefix + ".log"
    with open(log, "ab") as f:
        f.write(b"\1" * 20)
    _, lines, _ = _dump(capsys, "--files", log)
    assert lines[-1] == f"Found 20 invalid bytes at the end of {os.path.basename(log)}"
    code, _, err = _dump(capsys, "--files", log, "--value-decoder-class", "com.example.MyDecoder")
    assert code == 1
    assert err == ["kactor dump-log: --value-decoder-class com.example.MyDecoder is not taken (kactor loads no Java "
                   "classes); use kafka.serializer.StringDecoder or leave it out"]


def _records_segment(tmp_path: Path, entries: list[tuple[bytes, bytes | None]]) -> str:
    seg = LogSegment(str(tmp_path), 0, index_interval_bytes=4096, created_ms=T0)
    seg.create()
    seg.make_active()
    batch = build_batch([Record(i, 0, k, v) for i, (k, v) in enumerate(entries)], first_timestamp=T0)
    seg.append(batch, len(entries) - 1, T0, 0)
    seg.flush()
    return str(tmp_path / f"{0:020d}.log")


def test_offsets_decoder_prints_consumer_offsets_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """GroupMetadataManager.formatRecordKeyAndValue: an offset commit, its tombstone, a consumer group's metadata
    with its members' assignments (ConsumerProtocol, user data in hex)."""
    import struct

    from core.coordinator.group.message_formats import (
        GroupRecord,
        MemberRecord,
        OffsetAndMetadata,
        group_metadata_key,
        group_metadata_value,
        offset_commit_key,
        offset_commit_value,
    )
    from messages.common import TopicPartition

    def assignment(partitions: dict[str, list[int]], user_data: bytes | None) -> bytes:
        out = struct.pack(">hi", 1, len(partitions))
        for topic, ps in partitions.items():
            out += struct.pack(">h", len(topic)) + topic.encode() + struct.pack(">i", len(ps))
            out += b"".join(struct.pack(">i", p) for p in ps)
        return out + (struct.pack(">i", -1) if user_data is None else struct.pack(">i", len(user_data)) + user_data)

    members = (MemberRecord("m1", None, "c1", "/127.0.0.1", 300000, 10000, b"", assignment({"t": [0, 1]}, None)),
               MemberRecord("m2", None, "c2", "/127.0.0.1", 300000, 10000, b"", assignment({"t": [2]}, b"\x0a\x0b")))
    log = _records_segment(tmp_path, [
        (offset_commit_key("g", TopicPartition("t", 0)), offset_commit_value(OffsetAndMetadata(3, 0, "", T0))),
        (offset_commit_key("g", TopicPartition("t", 1)), offset_commit_value(OffsetAndMetadata(5, 0, "m", T0))),
        (offset_commit_key("g", TopicPartition("t", 0)), None),
        (group_metadata_key("g"), group_metadata_value(GroupRecord("consumer", 2, "range", "m1", T0, members))),
        (group_metadata_key("g"), None),
    ])
    code, lines, err = _dump(capsys, "--files", log, "--offsets-decoder")
    assert (code, err) == (0, [])
    assert [line.split("headerKeys: [] ", 1)[1] for line in lines[3:]] == [
        "key: offset_commit::group=g,partition=t-0 payload: offset=3",
        "key: offset_commit::group=g,partition=t-1 payload: offset=5,metadata=m",
        "key: offset_commit::group=g,partition=t-0 payload: <DELETE>",
        'key: group_metadata::group=g payload: {"protocolType":"consumer","protocol":"range","generationId":2,'
        '"assignment":"{m1=[t-0, t-1],m2=[t-2]:A0B}"}',
        "key: group_metadata::group=g payload: <DELETE>",
    ]


def test_transaction_log_decoder_prints_transaction_state_records(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """TransactionLog.formatRecordKeyAndValue: a transactional id's state, and its tombstone."""
    from core.coordinator.transaction.transaction_log import TxnLogValue, key_to_bytes, value_to_bytes
    from messages.common import TopicPartition

    value = TxnLogValue(4000, 1, 60000, 1, frozenset({TopicPartition("t", 1), TopicPartition("t", 0)}), T0 + 5, T0)
    log = _records_segment(tmp_path, [(key_to_bytes("tx"), value_to_bytes(value)), (key_to_bytes("tx"), None)])
    code, lines, err = _dump(capsys, "--files", log, "--transaction-log-decoder")
    assert (code, err) == (0, [])
    assert [line.split("headerKeys: [] ", 1)[1] for line in lines[3:]] == [
        "key: transaction_metadata::transactionalId=tx payload: producerId:4000,producerEpoch:1,state=Ongoing,"
        f"partitions=[t-0,t-1],txnLastUpdateTimestamp={T0 + 5},txnTimeoutMs=60000",
        "key: transaction_metadata::transactionalId=tx payload: <DELETE>",
    ]
