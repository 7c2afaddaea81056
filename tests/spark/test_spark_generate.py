"""`kactor trace generate` (sim/generate.py): a trace of N record lines built by running the simulator's seeds, cut
to N, tiled beyond --sim-lines; every line one the simulated brokers' actors wrote, every file read by the trace
reader and by the Spark summary, every broker's files replayed exactly."""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kactor.cli import main
from kactor.sim_boot import SimBoot
from kactor.trace.reader import decode_body, read_header, read_records
from sim.generate import generate, run_generated_seed

STEPS = 10  # short seeds (about 2,300 lines each with 3 brokers and 8 partitions): the tests stay small


def record_lines(folder: Path) -> dict[str, list[bytes]]:
    """Each trace file's record lines (its header left out), by file name."""
    return {p.name: p.read_bytes().splitlines(keepends=True)[1:] for p in sorted(folder.glob("*.jsonl"))}


def all_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def read_every_line(folder: Path) -> collections.Counter[str]:
    """Every file through the trace reader, every payload decoded (a ``@bin`` one from its bytes file); the lines'
    types counted."""
    types: collections.Counter[str] = collections.Counter()
    for p in sorted(folder.glob("*.jsonl")):
        assert read_header(str(p))["process"] == re.sub(r"(\.\d+)?\.jsonl$", "", p.name)  # an incarnation's too
        for rec in read_records(str(p)):
            assert type(decode_body(str(p), rec)).__name__ == rec.type
            types[rec.type] += 1
    return types


def ts_of(line: bytes) -> float:
    return json.loads(line)["ts"]


def test_the_lines_are_a_simulated_seeds_cut_to_n(tmp_path: Path) -> None:
    """N lines fewer than a seed's: seed S's trace as `kactor sim` writes it, every file cut to the lines before one
    instant (and some of that instant's)."""
    out, whole = tmp_path / "out", tmp_path / "whole"
    stats = generate(str(out), 1500, 3, 8, seed=4, boot=SimBoot(), steps=STEPS)
    run_generated_seed(4, STEPS, SimBoot(), 3, 8, str(whole))
    got, full = record_lines(out), record_lines(whole)
    assert (stats.messages, stats.seeds, stats.tiles, stats.simulated) == (1500, (4,), 0, sum(map(len, full.values())))
    assert sum(map(len, got.values())) == 1500 and stats.files == tuple(str(out / n) for n in got)
    assert set(got) <= set(full)
    for name, lines in got.items():
        assert lines == full[name][: len(lines)], name  # the simulator's own lines, a prefix of each file
        assert read_header(str(out / name)) == read_header(str(whole / name))
        assert read_header(str(out / name))["sim_seed"] == 4
    kept = max(ts_of(lines[-1]) for lines in got.values())
    dropped = [ts_of(full[n][len(got.get(n, []))]) for n in full if len(got.get(n, [])) < len(full[n])]
    assert dropped and min(dropped) >= kept  # one instant: nothing dropped comes before a line kept
    types = read_every_line(out)
    assert sum(types.values()) == 1500
    assert {"ZkWatchEvent", "ZkRequest", "SendRequest", "NetRequest", "ShardRequest", "ChannelRequestCompleted",
            "ControllerEventProcessed", "StateChangeBatch", "ControllerGauges"} <= set(types)


def test_deterministic_for_a_seed(tmp_path: Path) -> None:
    a, b, c = (tmp_path / x for x in "abc")
    for folder, seed in ((a, 1), (b, 1), (c, 2)):
        generate(str(folder), 3000, 3, 8, seed=seed, boot=SimBoot(), steps=STEPS)
    assert all_bytes(a) == all_bytes(b)
    assert record_lines(a) != record_lines(c)


def test_more_lines_than_a_seed_take_the_next_seeds_and_every_broker_replays(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeds S, S+1, ...: the second seed's brokers are broker-1<b>, their headers renamed, their record lines the
    simulator's; `kactor trace replay --check` finds every message of every chain, the cut seed's too."""
    out, second = tmp_path / "out", tmp_path / "second"
    stats = generate(str(out), 4000, 3, 8, seed=0, boot=SimBoot(), steps=STEPS)
    assert stats.seeds == (0, 1) and stats.tiles == 0 and stats.messages == 4000
    run_generated_seed(1, STEPS, SimBoot(), 3, 8, str(second))
    full = record_lines(second)
    got = record_lines(out)
    assert sum(map(len, got.values())) == 4000
    renamed = {n: lines for n, lines in got.items() if re.match(r"broker-1\d(\.\d+)?\.jsonl$", n)}
    assert renamed and all(re.match(r"broker-\d\d?(\.\d+)?\.jsonl$", n) for n in got)  # units 0 and 1 only
    for name, lines in renamed.items():
        sim_name = "broker-" + name[len("broker-1"):]
        assert lines == full[sim_name][: len(lines)]
        header, sim_header = read_header(str(out / name)), read_header(str(second / sim_name))
        assert header == dict(sim_header, process=name.split(".")[0], sim_process=sim_name.split(".")[0])
        assert header["broker_id"] == int(name[len("broker-1")])
    read_every_line(out)
    monkeypatch.setenv("PYTHONHASHSEED", "0")  # the command re-executes itself with it otherwise
    assert main(["trace", "replay", "--check", str(out)]) == 0
    replayed = capsys.readouterr().out.splitlines()
    assert len(replayed) == len(got) and all(": identical: " in line for line in replayed), replayed


def test_beyond_sim_lines_the_seeds_are_tiled(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """--sim-lines: one seed simulated, then copies of its files (unit k's broker b is broker-<10k+b>), each line as
    the simulator wrote it, the header naming what it copies; the last copy cut; copies replay as the seed does."""
    out = tmp_path / "out"
    stats = generate(str(out), 7000, 3, 8, seed=0, boot=SimBoot(), steps=STEPS, sim_lines=1000)
    got = record_lines(out)
    seed_files = {n: lines for n, lines in got.items() if re.match(r"broker-\d(\.\d+)?\.jsonl$", n)}
    per_seed = sum(map(len, seed_files.values()))
    assert stats.seeds == (0,) and stats.simulated == per_seed and stats.tiles == -(-(7000 - per_seed) // per_seed)
    assert sum(map(len, got.values())) == stats.messages == 7000
    for name, lines in got.items():
        m = re.match(r"broker-(\d*)(\d)(\.\d+)?\.jsonl$", name)
        assert m is not None
        source = f"broker-{m.group(2)}{m.group(3) or ''}.jsonl"
        assert lines == seed_files[source][: len(lines)], name
        if m.group(1):
            header = read_header(str(out / name))
            assert header == dict(read_header(str(out / source)), process=name.split(".")[0],
                                  sim_process=source.split(".")[0], tile_of=source[: -len(".jsonl")])
    last = [n for n in got if n.startswith(f"broker-{stats.tiles}")]
    assert sum(len(got[n]) for n in last) < per_seed  # the last tile is the one cut
    read_every_line(out)
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    assert main(["trace", "replay", "--check", str(out)]) == 0
    assert all(": identical: " in line for line in capsys.readouterr().out.splitlines())


def test_the_spark_summary_reads_a_generated_trace(spark: Any, tmp_path: Path) -> None:
    """The Spark loader reads every line in the writer's key order: its counts by process and type are the trace
    reader's."""
    from spark.summarize import summarize

    out = tmp_path / "out"
    generate(str(out), 4000, 3, 8, seed=2, boot=SimBoot(), steps=STEPS, sim_lines=2500)
    got = summarize(spark, [str(out)], None)
    lines = record_lines(out)
    assert got["meta"]["messages"] == 4000 and got["meta"]["warnings"] == []
    assert {r["process"]: r["messages"] for r in got["tables"]["messages_by_process"]} == {
        n[: -len(".jsonl")]: len(v) for n, v in lines.items()}
    assert {r["type"]: r["count"] for r in got["tables"]["messages_by_type"]} == dict(read_every_line(out))


def test_cli_generate(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "gen"
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    assert main(["trace", "generate", "--messages", "500", "--brokers", "3", "--partitions", "4", "--steps", "5",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"wrote 500 messages in {len(list(out.glob('*.jsonl')))} files to {out} in ")
    assert "seed 0 simulated (3 brokers, a topic of 4 partitions" in printed and ", 0 tiles" in printed
    assert sum(map(len, record_lines(out).values())) == 500
    assert main(["trace", "generate", "--messages", "10", "--out", str(out)]) == 1  # holds a trace now
    assert "holds a trace already" in capsys.readouterr().err


def test_cli_generate_runs_with_the_fixed_hash_seed(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Without PYTHONHASHSEED=0 the command runs in a child that has it (this process goes on), so its trace replays
    in `kactor trace replay --check`, which runs with it too, in another process."""
    out = tmp_path / "gen"
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    assert main(["trace", "generate", "--messages", "800", "--partitions", "4", "--steps", "5", "--seed", "3",
                 "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith("wrote 800 messages in ")
    replay = subprocess.run([sys.executable, "-m", "kactor", "trace", "replay", "--check", str(out)],
                            capture_output=True, text=True, check=False)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert replay.stdout.count(": identical: ") == len(list(out.glob("*.jsonl")))


@pytest.mark.parametrize("argv, error", [
    (["--messages", "0"], "--messages must be at least 1"),
    (["--sim-lines", "0"], "--sim-lines must be at least 1"),
    (["--brokers", "2"], "--brokers must be between 3 and 9"),
    (["--brokers", "10"], "--brokers must be between 3 and 9"),
])
def test_cli_generate_bad_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                 error: str) -> None:
    assert main(["trace", "generate", *argv, "--out", str(tmp_path)]) == 2
    assert error in capsys.readouterr().err
    assert os.listdir(tmp_path) == []


def test_cli_generate_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["trace", "generate", "--messages", "10"])
    assert e.value.code == 2
    assert "--out" in capsys.readouterr().err
