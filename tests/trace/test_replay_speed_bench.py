"""bench.replay_speed runs (at a tiny scale, so it does not rot): each mode measured in a fresh process, every file
identical, the replay's rate set beside the same delivery loop's with handlers that do nothing, and the replay cut by
actor on every core."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from kactor.hashseed import SEED

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_replay_speed_bench_reports_its_figure(recorded_trace: str) -> None:
    p = subprocess.run([sys.executable, "-m", "bench.replay_speed", "--trace", os.path.dirname(recorded_trace),
                        "--runs", "2"], cwd=REPO, env=dict(os.environ, PYTHONHASHSEED=SEED),
                       capture_output=True, text=True, timeout=240, check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "one process, 2 runs (each in a fresh process): median" in p.stdout, p.stdout
    assert "identical: yes, every file" in p.stdout, p.stdout
    row = next(ln for ln in p.stdout.splitlines() if ln.startswith("broker-0.jsonl"))
    assert int(row.split()[1]) > 0  # messages compared
    # issue #43 item 3: the ceiling of the design, measured in the same run, and the replay's share of it
    rate = re.search(r"^replay --check: \d+ messages of \d+ broker processes in \S+ = ([\d,]+) msg/s", p.stdout, re.M)
    empty = re.search(r"handlers that do nothing .* median of 2, each in a fresh process\): ([\d,]+) msg/s; "
                      r"replay --check runs at ([\d.]+)x of it", p.stdout)
    assert rate and empty, p.stdout
    replayed, ceiling = (int(m.group(1).replace(",", "")) for m in (rate, empty))
    assert ceiling > replayed > 0
    assert float(empty.group(2)) == pytest.approx(replayed / ceiling, abs=0.001)
    # item 3: the replay cut by actor on every core, with the largest unit's share of its work
    if (os.cpu_count() or 1) > 1:
        split = re.search(r"^replay --check --jobs \d+ --split actors \((\d+) units; cut by actor: broker-0\): "
                          r"the same \d+ messages in \S+ = [\d,]+ msg/s.* the largest \(broker-0:\S+\) \S+ = "
                          r"(\d+) % of the work; dealt to \d+ idle cores", p.stdout, re.M)
        assert split and int(split.group(1)) > 2 and 0 < int(split.group(2)) < 100, p.stdout
        assert re.search(r"^replay --check --jobs \d+ --split auto \(", p.stdout, re.M), p.stdout


def test_the_empty_loop_delivers_and_records_every_message() -> None:
    from bench.replay_speed import _empty_rate

    assert _empty_rate(1000) > 0  # its own assertion: the runtime recorded all 1,000


def test_best_split_keeps_chains_whole() -> None:
    from bench.replay_speed import _best_split

    assert _best_split([0.2, 0.16, 0.13], 2) == pytest.approx(0.29)  # {0.2} and {0.16, 0.13}
    assert _best_split([0.5, 0.1, 0.1], 2) == 0.5  # a chain is never split
    assert _best_split([0.3], 2) == 0.3


def test_once_replays_every_chain_in_this_process(recorded_trace: str) -> None:
    p = subprocess.run([sys.executable, "-m", "bench.replay_speed", "--trace", os.path.dirname(recorded_trace),
                        "--once", "replay"], cwd=REPO, env=dict(os.environ, PYTHONHASHSEED=SEED),
                       capture_output=True, text=True, timeout=240, check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "identical: yes, every file" in p.stdout and "replayed once:" in p.stdout, p.stdout
