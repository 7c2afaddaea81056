"""``python -m bench.e2e_latency`` at a tiny size: every record sent is consumed, in order (the bench fails
otherwise), and the output has p50/p99 for each run and the medians."""

from __future__ import annotations

import re

import pytest

from bench.e2e_latency import LatencyRun, main

pytestmark = pytest.mark.slow


def test_percentile_picks_by_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert LatencyRun.percentile(values, 0.5) == 51.0
    assert LatencyRun.percentile(values, 0.99) == 100.0
    assert LatencyRun.percentile([3.0], 0.99) == 3.0


def test_e2e_bench_reports_every_round_trip(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--targets", "tansu", "--records", "5", "--warm-up", "1", "--runs", "1", "--no-doc"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"  tansu +end-to-end p50 [\d.]+ ms, p99 [\d.]+ ms, max [\d.]+ ms; acks=all answer p50 [\d.]+ ms,"
                     r" p99 [\d.]+ ms \(5 records;", out)
    assert re.search(r"^tansu   : end-to-end p50 [\d.]+ ms, p99 [\d.]+ ms; .*medians of 1 runs", out, re.M)
