"""``python -m bench.produce_throughput`` at a tiny size: its output's shape (each target's MB/s and records/s,
CPU per MB, the ratios, the load), never its timings."""

from __future__ import annotations

import re

import pytest

from bench.produce_throughput import main

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
