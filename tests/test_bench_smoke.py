"""Smoke test of every benchmark workload (bench/) at a tiny scale, so they do not rot.

Marked slow, but part of the default test command (about a minute in all: the clusters settle on short windows, a
workload puts its cluster back only between runs, and a cluster whose folder goes is killed, not rolled). Asserts
only that each workload completes and reports a figure and a ceiling — never a timing.
"""

from __future__ import annotations

import pytest

from bench import common
from bench.workloads import MODULES, run_workload

pytestmark = pytest.mark.slow

TINY = {"failover": 0.005, "failover-rf3": 0.02, "controlled-shutdown": 0.002, "broker-crash": 0.01,
        "zk-bridge": 0.01, "event-storm": 0.01, "topic-churn": 0.005, "cluster-start": 1.0}


@pytest.mark.cluster
@pytest.mark.parametrize("name", sorted(MODULES))
def test_bench_workload_reports_a_figure(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # settled on two windows of a quarter second, not three of one (or two): 7 s of each workload's 20, and no
    # figure here is quoted
    monkeypatch.setattr(common, "SETTLE_WINDOWS", 2)
    monkeypatch.setattr(common, "QUIET_WINDOW_S", 0.25)
    monkeypatch.setattr(common, "STEADY_WINDOW_S", 0.5)
    result = run_workload(name, TINY[name], runs=1, write_doc=False)
    assert len(result.figure.values) == 1 and result.figure.values[0] > 0
    assert len(result.ceiling.values) == 1 and result.ceiling.values[0] > 0
    assert result.anchor


def test_checkpoint_write_bench_reports_both_ways(capsys: pytest.CaptureFixture[str], tmp_path) -> None:  # noqa: ANN001
    from bench.checkpoint_write import main

    assert main(["--files", "5", "--rounds", "1", "--fsyncers", "1", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "rename (write temp + os.replace):" in out and "in place (pwrite + ftruncate):" in out
    assert "ratio rename / in place:" in out
    assert list(tmp_path.iterdir()) == []  # its scratch folder is removed


def test_transport_receive_bench_reports_edge_against_codec(capsys: pytest.CaptureFixture[str]) -> None:
    from bench.transport_receive import main
    from core.api.registry import spec_for_key

    # a frame's repetitions are scaled to its size: 500 partitions (50 topics) take half the CPU of 20 (2 topics)
    assert main(["--partitions", "500", "--rounds", "2"]) == 0
    out = capsys.readouterr().out
    assert "Metadata v9, 50 topics: edge" in out
    frames = 1
    if spec_for_key(4) is not None:
        assert "LeaderAndIsr v4, 500 partitions: edge" in out and "LeaderAndIsr v4, 1 partition: edge" in out
        frames = 3
    assert out.count("ratio edge/codec") == frames


def test_inbox_handoff_bench_reports_both_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    from bench.inbox_handoff import main

    assert main(["--runs", "1", "--rounds", "200"]) == 0
    out = capsys.readouterr().out
    assert "  inbox " in out and "  queue.Queue " in out and "ratio inbox ÷ queue.Queue:" in out
