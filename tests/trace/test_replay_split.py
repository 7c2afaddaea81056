"""Issue #43 item 3: `kactor trace replay --jobs N` cuts a broker's trace by actor (kactor/trace/split.py). A
recorded trace replays identical in units and whole; an input tampered with, or a line between two units damaged,
is reported by the units at the seq the whole replay reports it; what a unit cannot replay alone replays whole."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from kactor.hashseed import SEED
from kactor.trace.reader import is_external

HERE = os.path.dirname(os.path.abspath(__file__))


def _records(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f.read().splitlines()[1:]]


def _split_job(paths: list[str], split: str = "actors", jobs: int = 1, tamper_seq: int | None = None) -> dict:
    """tests/trace/split_job.py in a child with the brokers' hash seed: the whole and the split replay's results."""
    proc = subprocess.run([sys.executable, os.path.join(HERE, "split_job.py"), split, str(jobs),
                           "-" if tamper_seq is None else str(tamper_seq), *paths],
                          capture_output=True, text=True, timeout=240, env=dict(os.environ, PYTHONHASHSEED=SEED))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_recorded_trace_replays_identical_split_and_whole(recorded_trace: str, jobs: int) -> None:
    recs = _records(recorded_trace)
    out = _split_job([recorded_trace], jobs=jobs)
    assert out["split"] == out["whole"]
    row = out["split"][0]
    assert row["identical"] and row["compared"] == len(recs)
    assert row["delivered"] == sum(1 for r in recs if is_external(r["sender"]))
    # it was cut: the rest, the replica manager and the shards each replayed on their own
    labels = out["units"]
    assert "broker-0:rest" in labels and "broker-0:replica-manager" in labels, labels
    assert sum(1 for label in labels if "partition-" in label) == 2 * jobs, labels


def _first_input(recs: list[dict], kind: str) -> dict:
    if kind == "ZkWatchEvent":
        return next(r for r in recs if r["type"] == "ZkWatchEvent" and is_external(r["sender"])
                    and r["payload"]["path"] == "/brokers/topics")
    if kind == "ZkResponse":  # a shard's ISR write answered: the shard's own unit must see what follows
        return next(r for r in recs if r["type"] == "ZkResponse" and r["receiver"].startswith("partition-")
                    and recs[r["seq"]]["cause"] == r["seq"])
    return next(r for r in recs if r["type"] == "NetRequest" and r["payload"]["body"]["@"] == kind)


@pytest.mark.parametrize("kind", ["LeaderAndIsrRequest", "ZkWatchEvent", "ZkResponse"])
def test_a_tampered_input_diverges_split_where_it_does_whole(recorded_trace: str, kind: str) -> None:
    # LeaderAndIsr reaches the replica manager's unit, the watch the rest's, the ZooKeeper answer a shard's
    recs = _records(recorded_trace)
    seq = _first_input(recs, kind)["seq"]
    out = _split_job([recorded_trace], tamper_seq=seq)
    assert out["tampered"] == [seq]
    whole, split = out["whole"][0], out["split"][0]
    assert whole["divergence"] is not None and whole["divergence"]["seq"] == seq + 1, whole
    assert split["divergence"] is not None and split["divergence"]["seq"] == whole["divergence"]["seq"], split
    assert split["compared"] == whole["compared"] == seq
    # the inputs up to the one whose consequence diverged; the whole replay may have fed one more before it saw
    # that a message was missing (its next input came where the message was recorded)
    assert whole["delivered"] - 1 <= split["delivered"] <= whole["delivered"]


@pytest.mark.parametrize("kind", ["ShardRequest", "ShardReply"])
def test_a_damaged_line_between_units_is_found_at_its_seq(recorded_trace: str, tmp_path, kind: str) -> None:  # noqa: ANN001
    """A line one unit sends and another is fed: the sender's unit compares it (the receiver's is fed the damaged
    line, and what it does with it comes later)."""
    with open(recorded_trace, encoding="utf-8") as f:
        header, *lines = f.read().splitlines()
    recs = [json.loads(line) for line in lines]
    target = next(r for r in recs if r["type"] == kind and r["payload"]["body"]["@"] != "UpdateMetadataResponse"
                  and recs.index(r) > len(recs) // 3)
    i = target["seq"] - 1
    lines[i] = lines[i].replace(f'"token":{target["payload"]["token"]},', f'"token":{target["payload"]["token"] + 7},')
    assert lines[i] != json.dumps(target, separators=(",", ":"))
    damaged = str(tmp_path / "broker-0.jsonl")
    with open(damaged, "w", encoding="utf-8") as f:
        f.write("\n".join([header, *lines]) + "\n")
    out = _split_job([damaged])
    whole, split = out["whole"][0], out["split"][0]
    assert whole["divergence"] == {"seq": target["seq"], "field": "payload"}, whole
    assert split == whole


def test_several_brokers_split_in_worker_processes(recorded_trace: str, tmp_path) -> None:  # noqa: ANN001
    # three "brokers" (the same recording under three names), every chain cut, two processes; and a broker whose
    # trace stopped after its header
    paths = [str(tmp_path / name) for name in ("broker-2.jsonl", "broker-0.jsonl", "broker-1.jsonl")]
    for p in paths:
        shutil.copy(recorded_trace, p)
    with open(recorded_trace, encoding="utf-8") as f, open(tmp_path / "broker-3.jsonl", "w", encoding="utf-8") as g:
        g.write(f.readline())
    paths.append(str(tmp_path / "broker-3.jsonl"))
    out = _split_job(paths, jobs=2)
    assert [row["path"] for row in out["split"]] == paths
    assert out["split"] == out["whole"]
    assert all(row["identical"] for row in out["split"])
    assert {label.split(":")[0] for label in out["units"]} == {"broker-0", "broker-1", "broker-2", "broker-3"}
    assert "broker-3:whole" in out["units"]


def test_the_command_splits_with_jobs(recorded_trace: str) -> None:
    recs = _records(recorded_trace)
    proc = subprocess.run([sys.executable, "-m", "kactor", "trace", "replay", os.path.dirname(recorded_trace),
                           "--check", "--jobs", "2", "--split", "actors"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"identical: {len(recs)} messages" in proc.stdout


def test_a_disk_change_keeps_the_chain_whole(recorded_trace: str, tmp_path) -> None:  # noqa: ANN001
    """A header's ``disk`` cuts the dir-wide checkpoint files at offsets the whole broker wrote: not split."""
    from kactor.trace.split import plan_chain

    with open(recorded_trace, encoding="utf-8") as f:
        header, *lines = f.read().splitlines()
    h = json.loads(header)
    h["disk"] = {"log_dir": "/nowhere", "new": True}
    path = str(tmp_path / "broker-0.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join([json.dumps(h), *lines]) + "\n")
    units = plan_chain([path])
    assert len(units) == 1 and not units[0].keys
    assert [u.label for u in plan_chain([recorded_trace])][-1] != "broker-0:whole"


def test_summarised_bytes_fed_to_a_coordinator_keep_the_chain_whole(tmp_path) -> None:  # noqa: ANN001
    from kactor.trace.split import UnsplittableError, scan

    header = json.dumps({"trace_version": 4, "process": "broker-0", "started_ms": 0})
    rec = '{"@rec":{"size":100,"crc32c":1,"first_offset":0,"last_offset":0}}'
    lines = [
        '{"seq":1,"ts":1.0,"sender":"edge:net","receiver":"replica-manager","type":"NetRequest","payload":{},'
        '"cause":null}',
        f'{{"seq":2,"ts":1.0,"sender":"replica-manager","receiver":"group-coordinator","type":"LocalReply",'
        f'"payload":{{"@":"LocalReply","token":1,"body":{rec}}},"cause":1}}',
    ]
    path = str(tmp_path / "broker-0.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join([header, *lines]) + "\n")
    with pytest.raises(UnsplittableError, match="group-coordinator would be fed summarised bytes"):
        scan(path)


def test_chains_are_cut_only_where_it_shortens_the_wall_time() -> None:
    from kactor.trace.split import chains_to_split

    assert chains_to_split([10.0], 2) == {0}  # one broker: cut, or one process idles
    assert chains_to_split([10.0, 10.0], 2) == set()  # already even
    # 61 % on one process whole, 54 % with the smallest cut (at 1.4x its CPU): not worth it; 88 % is
    assert chains_to_split([2.2, 3.9, 3.8], 2) == set()
    assert chains_to_split([0.5, 0.5, 7.0], 2) == {2}
    assert chains_to_split([3.0, 3.0, 3.0, 3.0, 3.0], 4) == {0}  # 6 on one process whole; 4.05 with one cut
    assert chains_to_split([5.0] * 100, 2) == set()
    assert chains_to_split([10.0], 1) == set()
