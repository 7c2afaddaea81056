"""BenchCluster.settle's criteria on a scripted CPU counter: quiet under a cap; steady where the idle cluster's own
work is above it (windows under the bound and within 10 % of their mean), never while the CPU still falls."""

from __future__ import annotations

import pytest

from bench import common


@pytest.fixture
def cpu(monkeypatch):
    """Each window's CPU in cores, as the test scripts it (cpu_seconds is read twice a window; sleeps are free)."""
    script: list[float] = []
    state = {"total": 0.0, "reads": 0}

    def cpu_seconds(_pids):
        state["reads"] += 1
        if state["reads"] % 2 == 0:  # the end of a window: add that window's use
            state["total"] += script.pop(0) * 2.0
        return state["total"]

    monkeypatch.setattr(common, "cpu_seconds", cpu_seconds)
    monkeypatch.setattr(common.time, "sleep", lambda s: None)
    return script


def test_steady_waits_for_the_cpu_to_stop_falling(cpu):
    cpu += [1.9, 1.7, 1.45, 1.25, 1.2, 1.22, 1.21, 9.9]
    common.wait_steady(lambda: [1], timeout=60, max_busy=1.6)
    # 1.45, 1.25, 1.2 still differ by more than 10 % of their mean; 1.25, 1.2, 1.22 do not
    assert cpu == [1.21, 9.9]


def test_steady_never_counts_a_window_over_the_bound(cpu):
    cpu += [1.7, 1.7, 1.7, 1.2, 1.25, 1.2, 9.9]
    common.wait_steady(lambda: [1], timeout=60, max_busy=1.6)
    assert cpu == [9.9]


def test_steady_gives_up_at_its_timeout(cpu, monkeypatch):
    clock = iter(range(0, 1000, 10))
    monkeypatch.setattr(common.time, "monotonic", lambda: next(clock))
    cpu += [1.9] * 50
    with pytest.raises(TimeoutError, match="not steady under 1.60 cores"):
        common.wait_steady(lambda: [1], timeout=60, max_busy=1.6)


def test_settle_chooses_quiet_or_steady_by_the_expected_idle_cpu():
    small = common.BenchCluster.__new__(common.BenchCluster)
    small.n, small.layout = 3, {"t": {0: [0, 1, 2]}}
    big = common.BenchCluster.__new__(common.BenchCluster)
    big.n, big.layout = 5, {f"t{i}": {0: [i % 5, (i + 1) % 5]} for i in range(25000)}
    assert small.expected_idle() < common.QUIET_CAP and small.idle_busy() == small.expected_idle()
    assert big.expected_idle() > common.QUIET_CAP and big.idle_busy() == common.QUIET_CAP


def test_settle_keeps_the_quiet_windows_cpu_and_measures_no_window_after_them(cpu, monkeypatch):
    small = common.BenchCluster.__new__(common.BenchCluster)
    small.n, small.layout = 3, {"t": {0: [0, 1, 2]}}
    monkeypatch.setattr(small, "pids", lambda: [1])
    # quiet windows are 1 s (the fixture's script is per 2 s): 0.3 is 0.6 cores there, above 3 brokers' ~0.39
    cpu += [0.3, 0.05, 0.1, 0.15, 9.9]
    small.settle(timeout=60)
    assert small.idle_cores == pytest.approx((0.1 + 0.2 + 0.3) / 3)  # the three quiet windows' mean
    assert cpu == [9.9]  # the idle CPU was not measured over one more window after them


def test_settle_keeps_the_steady_windows_cpu(cpu, monkeypatch):
    big = common.BenchCluster.__new__(common.BenchCluster)
    big.n, big.layout = 5, {f"t{i}": {0: [i % 5, (i + 1) % 5]} for i in range(25000)}
    monkeypatch.setattr(big, "pids", lambda: [1])
    monkeypatch.setattr(common.os, "cpu_count", lambda: 2)
    cpu += [1.5, 1.2, 1.25, 1.2, 9.9]
    big.settle(timeout=60)
    assert big.idle_cores == pytest.approx((1.2 + 1.25 + 1.2) / 3)
    assert cpu == [9.9]
