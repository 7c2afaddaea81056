"""bench.trace_overhead runs (at a tiny scale, so it does not rot): it times both modes and proves the re-recorded
trace identical to the recorded one."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kactor.hashseed import SEED

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_trace_overhead_bench_reports_its_figure(recorded_trace: str) -> None:
    # a child with the brokers' hash seed (the bench would re-exec this very pytest process to get it)
    p = subprocess.run([sys.executable, "-m", "bench.trace_overhead", "--trace", os.path.dirname(recorded_trace),
                        "--runs", "1"], cwd=REPO, env=dict(os.environ, PYTHONHASHSEED=SEED),
                       capture_output=True, text=True, timeout=240, check=False)
    assert p.returncode in (0, 1), p.stderr  # 1: over budget on a busy machine; the figure is printed either way
    assert "ratio recording/baseline" in p.stdout and "overhead" in p.stdout, p.stdout
    last = p.stdout.strip().splitlines()[-1]
    assert last.startswith("re-recorded traces vs the recorded ones:") and last.endswith("(identical otherwise)"), last


@pytest.mark.cluster
def test_trace_overhead_live_bench_runs_both_modes_on_a_real_cluster() -> None:
    # a warm-up of one request a partition: enough to find every leader serving, as the measured chunks need
    p = subprocess.run([sys.executable, "-m", "bench.trace_overhead", "--live", "--runs", "1", "--records", "40",
                        "--chunks", "2", "--partitions", "4", "--clients", "2", "--warm-up", "4"], cwd=REPO,
                       capture_output=True, text=True, timeout=300, check=False)
    # 1: over budget on a busy machine; an exception exits 1 too, and must not pass for it
    assert p.returncode in (0, 1) and "Traceback" not in p.stderr, p.stdout + p.stderr[-3000:]
    out = p.stdout
    assert "run 1: baseline" in out and "; recording" in out, out
    # the recording run's traces hold the workload: every acks=all record is a produce request, the leader's
    # shard work and the followers' fetches, so several messages per record
    per_record = float(out.split(" messages received by the brokers per record")[0].rsplit(" ", 1)[1])
    assert per_record >= 5, out
    assert "ratio recording/baseline" in out and "overhead" in out and "per-run ratios" in out, out


def test_trace_overhead_live_refuses_a_negative_warm_up() -> None:
    p = subprocess.run([sys.executable, "-m", "bench.trace_overhead", "--live", "--warm-up", "-1"], cwd=REPO,
                       env=dict(os.environ, PYTHONHASHSEED=SEED), capture_output=True, text=True, timeout=60,
                       check=False)
    assert p.returncode == 2 and "--warm-up ≥ 0" in p.stderr, p.stderr
