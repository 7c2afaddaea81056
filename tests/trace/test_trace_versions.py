"""Every trace version this kactor knows is read: the reader (replay, `trace show`) and the Spark summary's loader take
headers of versions 1 to 4 and refuse others; each version's bytes decode (1: latin-1 text, 2: base64, 3: base64
in inputs and summaries elsewhere, 4: an input's in the trace's bytes file), and `trace show` prints them readably."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from edges.trace_writer import TraceWriter
from kactor.trace.reader import TraceError, decode_body, read_header, read_records
from messages.codec import TRACE_VERSION, TRACE_VERSIONS, orjson_lines, rawbytes
from messages.codec.summary import summarise
from messages.common import TopicPartition
from messages.net import NetRequest
from messages.partition import ShardRequest
from messages.replication import ProducePartition, ProduceRequest
from protocol.records import Record, build_batch
from spark.load import TraceInputError, discover

TP = TopicPartition("orders", 1)
BATCH = build_batch([Record(i, 0, None, b"value-%d" % i * 40) for i in range(4)], base_offset=40)  # > 1 KB: in
# version 4, an input's bytes go to the bytes file (messages.codec.rawbytes.FILE_MIN)
PRODUCE = ProduceRequest(-1, 30000, (ProducePartition(TP, BATCH),))
LINES = [(1, 1000.5, "edge:net", "replica-manager", NetRequest(3, 1, PRODUCE, True), None),
         (2, 1000.5, "replica-manager", "partition-1", ShardRequest(1, PRODUCE), 1)]


def _lines(version: int) -> list[str]:
    """The two lines as a writer of ``version`` wrote them (version 4: as its writer wrote them with `_trace`)."""
    if version == 4:
        with tempfile.TemporaryDirectory() as d:
            return _written_lines(_trace_4(Path(d)))
    out = []
    for r in LINES:
        line = orjson_lines.encode_record(*r, summarise=None if version == 3 else False)
        if version == 1:  # bytes as latin-1 text, through JSON's escaper
            b64 = json.dumps({"@b64": __import__("base64").b64encode(BATCH).decode()}, separators=(",", ":"))
            line = line.replace(b64, json.dumps({"@b": BATCH.decode("latin-1")}, separators=(",", ":")))
        out.append(line)
    return out


def _trace_4(tmp_path: Path) -> Path:
    """The two lines written by this kactor's TraceWriter (version 4: the input's batch in broker-0.bin)."""
    path = tmp_path / "v4" / "broker-0.jsonl"
    writer = TraceWriter(str(path), {"process": "broker-0", "started_ms": 1000.0, "broker_id": 0, "config": {}})
    for r in LINES:
        writer.append(*r)
    writer.close()
    return path


def _written_lines(path: Path) -> list[str]:
    return path.read_text().splitlines()[1:]


def _trace(tmp_path: Path, version: int) -> Path:
    if version == 4:
        return _trace_4(tmp_path)
    path = tmp_path / f"v{version}" / "broker-0.jsonl"
    path.parent.mkdir()
    header = {"trace_version": version, "process": "broker-0", "started_ms": 1000.0, "broker_id": 0, "config": {}}
    path.write_text("\n".join([json.dumps(header, separators=(",", ":")), *_lines(version)]) + "\n")
    return path


def test_this_kactor_writes_version_4_and_reads_every_version() -> None:
    assert TRACE_VERSION == 4 and TRACE_VERSIONS == (1, 2, 3, 4)


def test_version_4_writes_an_inputs_bytes_in_the_bytes_file_and_every_other_line_as_version_3(tmp_path: Path) -> None:
    assert len(BATCH) > rawbytes.FILE_MIN
    path = _trace_4(tmp_path)
    assert read_header(str(path))["trace_version"] == 4
    assert (tmp_path / "v4" / "broker-0.bin").read_bytes() == BATCH  # as it came, not base64
    lines = _written_lines(path)
    assert f'"records":{{"@bin":{{"offset":0,"size":{len(BATCH)}}}}}' in lines[0]
    assert lines[1] == _lines(3)[1]  # the line a replay compares: the summary, as version 3
    # the input line is the plain one, with the reference where the base64 was
    plain = orjson_lines.encode_record(*LINES[0])
    b64 = json.dumps(orjson_lines.bytes_json(BATCH), separators=(",", ":"))
    assert lines[0] == plain.replace(b64, json.dumps(rawbytes.raw_json(0, len(BATCH)), separators=(",", ":")))


def test_version_4_references_are_checked(tmp_path: Path) -> None:
    path = _trace_4(tmp_path)
    record = next(read_records(str(path)))
    (tmp_path / "v4" / "broker-0.bin").write_bytes(BATCH[:-1])  # cut short
    with pytest.raises(TraceError, match="broker-0.jsonl:2: bytes reference past the end of the trace's bytes file"):
        decode_body(str(path), record)
    (tmp_path / "v4" / "broker-0.bin").unlink()
    with pytest.raises(TraceError, match=r"read without it"):
        decode_body(str(path), record)


def test_version_4_an_input_line_the_text_encoder_writes_keeps_its_bytes_in_it(tmp_path: Path) -> None:
    """A line with a non-ASCII character is written by the text encoder, which has no bytes file: base64, as
    version 3 (what orjson had put in the file stays there, named by no line)."""
    tp = TopicPartition("ordres-é", 1)
    body = NetRequest(3, 1, ProduceRequest(-1, 30000, (ProducePartition(tp, BATCH),)), True)
    path = tmp_path / "broker-0.jsonl"
    writer = TraceWriter(str(path), {"process": "broker-0"})
    writer.append(1, 1000.5, "edge:net", "replica-manager", body, None)
    writer.close()
    (line,) = _written_lines(path)
    assert "@b64" in line and "@bin" not in line
    assert decode_body(str(path), next(read_records(str(path)))) == body


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_each_version_is_read_and_its_bytes_decode(tmp_path: Path, version: int) -> None:
    path = _trace(tmp_path, version)
    assert read_header(str(path))["trace_version"] == version
    assert discover([str(path.parent)]).headers[0]["trace_version"] == version  # the Spark summary's loader
    records = list(read_records(str(path)))
    bodies: list[Any] = [decode_body(str(path), r) for r in records]
    assert [r.external for r in records] == [True, False]
    assert bodies[0] == NetRequest(3, 1, PRODUCE, True)  # an input holds its bytes in every version
    inner = bodies[1].body.partitions[0].records
    assert inner == (summarise(BATCH) if version >= 3 else BATCH)
    if version >= 3:
        assert (inner.first_offset, inner.last_offset, inner.size) == (40, 43, len(BATCH))


def test_unknown_versions_are_refused_by_both_readers(tmp_path: Path) -> None:
    for version in (0, 5, "3", True):
        path = tmp_path / f"bad-{version}" / "broker-0.jsonl"
        path.parent.mkdir()
        path.write_text(json.dumps({"trace_version": version, "process": "broker-0"}) + "\n")
        with pytest.raises(TraceError, match="unsupported trace_version"):
            read_header(str(path))
        with pytest.raises(TraceInputError, match="unsupported trace_version"):
            discover([str(path.parent)])


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_trace_show_prints_bytes_and_summaries_readably(tmp_path: Path, version: int) -> None:
    path = _trace(tmp_path, version)
    proc = subprocess.run([sys.executable, "-m", "kactor", "trace", "show", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    rows = proc.stdout.splitlines()
    assert len(rows) == 2
    n = len(BATCH)
    assert f"<records {n:,} B> connection_id=3" in rows[0]  # the input: bytes, their size
    if version >= 3:
        assert f"<records {n:,} B offsets 40-43> token=1 body=ProduceRequest" in rows[1]
    else:
        assert f"<records {n:,} B> token=1 body=ProduceRequest" in rows[1]


@pytest.mark.parametrize("version", [2, 3, 4])
def test_replay_compares_a_summarised_line_exactly(version: int) -> None:
    """A replay compares each produced message with its recorded line as that version's writer wrote it: the same
    records pass, records that differ in one byte (the same size and offsets: only the CRC-32C tells) diverge."""
    from kactor.trace.replay import ReplayResult, _Check

    texts = [(line + "\n").encode() for line in _lines(version)]
    changed = bytearray(BATCH)
    changed[-1] ^= 1
    other = ShardRequest(1, ProduceRequest(-1, 30000, (ProducePartition(TP, bytes(changed)),)))
    for body, diverges in ((LINES[1][4], False), (other, True)):
        result = ReplayResult("t.jsonl")
        check = _Check("t.jsonl", texts, [b"edge:", b""], None, result, version)
        check.observe(*LINES[0])
        check.observe(*LINES[1][:4], body, LINES[1][5])
        assert check.error is None
        if diverges:
            assert result.divergence is not None and (result.divergence.seq, result.divergence.field) == (2, "payload")
        else:
            assert result.divergence is None and check.j == 2


def test_show_sums_the_records_a_row_carries_below_its_fields() -> None:
    from kactor.trace.show import summarize
    from messages.codec import reference
    from messages.common import Errors
    from messages.net import NetReply
    from messages.replication import FetchPartitionData, FetchResponse

    second = build_batch([Record(0, 0, None, b"x" * 100)], base_offset=7)
    reply = NetReply(5, 9, FetchResponse((FetchPartitionData(TP, Errors.NONE, 44, records=BATCH),
                                          FetchPartitionData(TopicPartition("orders", 2), Errors.NONE, 8),
                                          FetchPartitionData(TopicPartition("orders", 3), Errors.NONE, 8,
                                                             records=second))))
    payload = reference.to_json(reply, summarise=True)
    total = len(BATCH) + len(second)
    assert summarize(payload, width=200).startswith(f"<records {total:,} B in 2 offsets 7-43> connection_id=5 ")
    assert summarize(reference.to_json(reply), width=200).startswith(f"<records {total:,} B in 2> connection_id=5 ")
