"""``python -m bench.produce_throughput`` at a tiny size: its output's shape (each target's MB/s and records/s,
CPU per MB, the ratios, the load), never its timings."""

from __future__ import annotations

import json
import re

import pytest

from bench.data_path import LABELS, ProduceRun, batch_means
from bench.produce_throughput import main, produce_summary

pytestmark = pytest.mark.slow


def test_produce_bench_prints_tansu_and_the_ceiling(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--targets", "tansu,ceiling", "--records", "3000", "--runs", "1", "--no-doc"]) == 0
    out = capsys.readouterr().out
    run_lines = [line for line in out.splitlines() if re.match(r"  (tansu|ceiling) +[\d,.]+ MB/s +[\d,]+ records/s",
                                                               line)]
    assert len(run_lines) == 2
    assert "(3,000 records in" in next(line for line in run_lines if "tansu" in line)
    assert re.search(r"^tansu   : [\d,.]+ \(min .*n=1\) MB/s; [\d,]+ .* records/s", out, re.M)
    assert re.search(r"^ceiling : [\d,.]+ \(min .*n=1\) MB/s", out, re.M)
    assert "CPU ms per MB (median run): client" in out and "leader" in out and "follower 2" in out
    assert re.search(r"^load [\d. ]+ \(before\) → [\d. ]+ \(after\)$", out, re.M)
    assert "ratio kactor/" not in out  # no kactor in this run: nothing to divide


def _run(records: int, seconds: float, broker_cpu_s: float) -> ProduceRun:
    cpu = {"client": 1.0, "broker 0": broker_cpu_s / 2, "broker 1": broker_cpu_s / 4, "broker 2": broker_cpu_s / 4,
           "zookeeper": 0.5}
    return ProduceRun(records, records * 1024, seconds, cpu, 900.0, 950_000.0, [], "0.5 0.5 0.5", {})


def test_summary_divides_kactor_by_each_baseline_and_recording_by_not() -> None:
    results = {"kactor": [_run(1000, 1.0, 2.0), _run(1000, 2.0, 4.0), _run(1000, 4.0, 1.0)],
               "kactor-traced": [_run(1000, 1.0, 2.5), _run(1000, 2.0, 5.0), _run(1000, 4.0, 1.0)],
               "tansu": [_run(2000, 1.0, 0.0)] * 3}
    lines = produce_summary(results, LABELS, ("tansu",))
    # kactor: 1.024, 0.512, 0.256 MB/s → median 0.512; Tansu 2.048 → 0.25
    assert "ratio kactor/tansu: 0.250 (medians; per run 0.500, 0.250, 0.125)" in lines
    # records per broker CPU-s: kactor 500, 250, 1000; recording 400, 200, 1000 → per run 0.8, 0.8, 1.0
    assert "kactor: 500 (min 250, max 1,000, n=3) records per broker CPU-second" in lines
    assert any(line.startswith("recording traces: ratio of records per broker CPU-second recording/not 0.800 "
                               "(median of the runs' 0.800, 0.800, 1.000) → overhead 20.0%") for line in lines)


def test_batch_means_pool_every_statistics_window() -> None:
    def stats(records: int, size: int, batches: int) -> str:
        return json.dumps({"topics": {"t": {"batchcnt": {"sum": records, "cnt": batches, "avg": 0},
                                            "batchsize": {"sum": size, "cnt": batches, "avg": 0}}}})

    windows = [stats(1800, 1_900_000, 2), stats(900, 950_000, 1), stats(0, 0, 0), json.dumps({"topics": {}})]
    assert batch_means(windows, "t") == (900.0, 950_000.0)  # the empty last window does not make it 0
    assert batch_means([], "t") == (0.0, 0.0)
