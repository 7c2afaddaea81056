"""The synthetic trace generator: every line is exactly what the trace writer would write for a real message."""

from __future__ import annotations

import glob
import json
import os

import pytest

import messages.common
import messages.observability
import messages.requests
import messages.runtime
import messages.zk  # noqa: F401 - registers every message type with the codec
from kactor.cli import main
from messages.codec import TRACE_VERSION, encode_record, from_json
from spark.generate import generate


def read(folder: str) -> dict[str, list[str]]:
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.jsonl"))):
        with open(path) as f:
            out[os.path.basename(path)] = f.read().splitlines()
    return out


def test_every_line_decodes_and_reencodes_byte_identically(tmp_path) -> None:
    stats = generate(str(tmp_path), messages=6000, brokers=4, partitions=30, seed=7)
    files = read(str(tmp_path))
    assert sorted(files) == [f"broker-{b}.jsonl" for b in range(4)] and stats.messages == 6000
    types, partitions, total = set(), set(), 0
    for name, lines in files.items():
        head = json.loads(lines[0])
        assert head["trace_version"] == TRACE_VERSION and head["process"] == name[:-6]
        seqs = []
        for line in lines[1:]:
            rec = json.loads(line)
            body = from_json(rec["payload"])
            assert type(body).__name__ == rec["type"]
            assert encode_record(rec["seq"], rec["ts"], rec["sender"], rec["receiver"], body, rec["cause"]) == line
            assert rec["cause"] is None or rec["cause"] < rec["seq"]
            if rec["cause"] is None:
                assert rec["sender"].startswith(("edge:", "cli")) or rec["type"] == "ChannelRequestCompleted"
            seqs.append(rec["seq"])
            types.add(rec["type"])
            if rec["type"] == "LeaderAndIsrRequest":
                partitions |= {(s.topic_partition.topic, s.topic_partition.partition) for s in body.partition_states}
        assert seqs == list(range(1, len(seqs) + 1))
        total += len(seqs)
    assert total == 6000
    assert len(partitions) == 30
    assert {"ControllerEventProcessed", "StateChangeBatch", "ChannelRequestCompleted", "ControllerGauges",
            "LeaderAndIsrRequest", "UpdateMetadataRequest", "StopReplicaRequest", "TopicDeletionProgress",
            "ReassignmentProgress", "ZkRequest", "ZkResponse", "ZkWatchEvent"} <= types


def test_deterministic_for_a_seed(tmp_path) -> None:
    a, b, c = (str(tmp_path / x) for x in "abc")
    generate(a, 3000, 3, 20, seed=1)
    generate(b, 3000, 3, 20, seed=1)
    generate(c, 3000, 3, 20, seed=2)
    assert read(a) == read(b)
    assert read(a) != read(c)


def test_elections_of_every_kind(tmp_path) -> None:
    generate(str(tmp_path), 40_000, 3, 24, seed=3)
    kinds = set()
    for lines in read(str(tmp_path)).values():
        for line in lines[1:]:
            if '"type":"StateChangeBatch"' in line:
                for e in json.loads(line)["payload"]["elections"]:
                    kinds.add((e["strategy"], e["unclean"]))
    assert {("OfflinePartition", False), ("OfflinePartition", True), ("PreferredReplicaPartition", False),
            ("ControlledShutdownPartition", False)} <= kinds


def test_cli_generate(tmp_path, capsys) -> None:
    out = str(tmp_path / "gen")
    assert main(["trace", "generate", "--messages", "500", "--brokers", "2", "--partitions", "8", "--out", out]) == 0
    assert "wrote 500 messages for 2 broker(s)" in capsys.readouterr().out
    assert sum(len(v) - 1 for v in read(out).values()) == 500


@pytest.mark.parametrize("argv, error", [
    (["--messages", "0"], "--messages must be at least 1"),
    (["--brokers", "-1"], "--brokers must be at least 1"),
])
def test_cli_generate_bad_counts(tmp_path, capsys, argv, error) -> None:
    assert main(["trace", "generate", *argv, "--out", str(tmp_path)]) == 2
    assert error in capsys.readouterr().err


def test_cli_generate_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["trace", "generate", "--messages", "10"])
    assert e.value.code == 2
    assert "--out" in capsys.readouterr().err
