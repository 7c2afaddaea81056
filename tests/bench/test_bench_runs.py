"""The controller benches' runs on a scripted cluster (no process started): each run but the last puts the cluster
back (the victim restarted, the leaders on their preferred replicas) so the next starts from the same layout, and
nothing is put back after the last; BenchCluster.stop SIGKILLs the brokers of a folder it removes and stops a kept
one's in order."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from bench import broker_crash, common, controller_shutdown, failover


class FakeProc:
    def __init__(self) -> None:
        self.code: int | None = None

    def poll(self) -> int | None:
        return self.code


class FakeLocalCluster:
    def __init__(self, calls: list[str], brokers: int) -> None:
        self.calls = calls
        self.procs = {b: FakeProc() for b in range(brokers)}

    def kill_broker(self, b: int) -> None:
        self.calls.append(f"kill {b}")
        self.procs[b].code = -9

    def stop_broker(self, b: int, timeout: float = 60.0) -> int:
        self.calls.append(f"stop {b}")
        self.procs[b].code = 0
        return 0

    def stop(self) -> None:
        self.calls.append("orderly stop of " + ",".join(str(b) for b, p in self.procs.items() if p.poll() is None))


class FakeBench:
    """What the workloads use of BenchCluster; broker 2 is the controller. Its calls are kept in order."""

    def __init__(self, brokers: int, layout: dict, *args: Any, **kwargs: Any) -> None:
        self.calls: list[str] = []
        self.layout = layout
        self.zk = None
        self.populate_s = self.startup_s = self.idle_cores = 0.0
        self.lc = FakeLocalCluster(self.calls, brokers)
        MADE.append(self)

    def __enter__(self) -> FakeBench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.calls.append("exit")

    def controller(self) -> int:
        return 2

    def live(self) -> list[int]:
        return [b for b, p in self.lc.procs.items() if p.poll() is None]

    def settle(self) -> float:
        self.calls.append("settle")
        return 0.0

    def restart(self, b: int) -> None:
        self.calls.append(f"restart {b}")
        self.lc.procs[b].code = None


MADE: list[FakeBench] = []


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> list[FakeBench]:
    MADE.clear()
    monkeypatch.setattr(common, "BenchCluster", FakeBench)
    monkeypatch.setattr(common, "read_states", lambda zk, layout: {})
    monkeypatch.setattr(common, "ceiling_conditional_writes", lambda zk, payloads: 0.01)
    monkeypatch.setattr(common, "ceiling_failover_reads", lambda zk, layout: 0.01)
    monkeypatch.setattr(common.time, "sleep", lambda s: None)
    monkeypatch.setattr(controller_shutdown, "restore_preferred", lambda bc: bc.calls.append("restore") or 0)
    monkeypatch.setattr(broker_crash, "restore_preferred", lambda bc: bc.calls.append("restore") or 0)
    monkeypatch.setattr(controller_shutdown, "measure_run", lambda *a: {
        "broker_view": 0.5, "attempts": 1.0, "writes": 4.0, "payload": 0.0, "zk_phases": [], "zk_batches": []})
    monkeypatch.setattr(controller_shutdown, "ceiling_same_work", lambda zk, batches: (0.01, []))
    monkeypatch.setattr(broker_crash, "measure_run", lambda *a: {
        "leaders_written": 0.5, "leader_writes": 4.0, "all_writes": 4.0, "expiry_after_kill": 6.0})
    monkeypatch.setattr(failover, "measure_run", lambda bc, t, victim: {
        "queued": 0.5, "cascade_end": 0.6, "new_controller": float((victim + 1) % 3)})
    return MADE


def puts_back(calls: list[str]) -> list[str]:
    return [c for c in calls if c.startswith(("restart", "restore"))]


@pytest.mark.parametrize("runs", [1, 3])
def test_controlled_shutdown_puts_the_layout_back_between_runs_only(bench: list[FakeBench], runs: int) -> None:
    result = controller_shutdown.run(scale=0.0002, runs=runs)
    assert result.figure.values == [0.5] * runs and result.ceiling.values == [0.01] * runs
    (bc,) = bench
    stops = [c for c in bc.calls if c.startswith("stop")]
    assert len(stops) == runs
    assert puts_back(bc.calls) == [x for s in stops[:-1] for x in (f"restart {s.split()[1]}", "restore")]
    assert bc.calls[-2:] == [stops[-1], "exit"]  # the last victim stays down: the cluster's exit follows


@pytest.mark.parametrize("runs", [1, 3])
def test_broker_crash_puts_the_layout_back_between_runs_only(bench: list[FakeBench], runs: int) -> None:
    result = broker_crash.run(scale=0.002, runs=runs)
    assert result.figure.values == [0.5] * runs
    (bc,) = bench
    kills = [c for c in bc.calls if c.startswith("kill")]
    assert kills == [f"kill {b}" for b in (0, 1, 0)[:runs]]  # the non-controllers in turn
    assert puts_back(bc.calls) == [x for k in kills[:-1] for x in (f"restart {k.split()[1]}", "restore")]
    last_kill = len(bc.calls) - 1 - bc.calls[::-1].index(kills[-1])
    assert bc.calls[-1] == "exit" and not puts_back(bc.calls[last_kill:])


@pytest.mark.parametrize("runs", [1, 3])
def test_failover_restarts_the_old_controller_between_runs_only(bench: list[FakeBench], runs: int) -> None:
    result = failover.run(scale=0.001, runs=runs)
    assert result.figure.values == [0.5] * runs and result.ceiling.values == [0.01] * runs
    (bc,) = bench
    assert puts_back(bc.calls) == ["restart 2"] * (runs - 1)
    assert bc.calls[-2:] == ["kill 2", "exit"]


class StoppedCluster:
    """BenchCluster.stop's view of a started cluster: brokers 0 and 2 running, broker 1 killed by the workload."""

    def __init__(self, keep: bool, tmp_path: Any) -> None:
        self.calls: list[str] = []
        self.bc = common.BenchCluster.__new__(common.BenchCluster)
        self.bc.zk, self.bc.keep, self.bc.base = None, keep, str(tmp_path / "bench")
        (tmp_path / "bench").mkdir()
        self.bc.lc = FakeLocalCluster(self.calls, 3)
        self.bc.lc.procs[1].code = -9
        self.bc.server = self

    def stop(self) -> None:
        self.calls.append("zookeeper stopped")


def test_stop_kills_the_brokers_of_a_folder_it_removes(tmp_path: Any) -> None:
    s = StoppedCluster(keep=False, tmp_path=tmp_path)
    s.bc.stop()
    # no controlled shutdown left to retry: LocalCluster.stop finds no broker running
    assert s.calls == ["kill 0", "kill 2", "orderly stop of ", "zookeeper stopped"]
    assert not (tmp_path / "bench").exists()


def test_stop_stops_a_kept_folders_brokers_in_order(tmp_path: Any) -> None:
    s = StoppedCluster(keep=True, tmp_path=tmp_path)
    s.bc.stop()
    assert s.calls == ["orderly stop of 0,2", "zookeeper stopped"]  # their traces and logs complete
    assert (tmp_path / "bench").exists()


class Starting:
    """A cluster whose start waits for the others' at a barrier: started one after another, none would pass it."""

    def __init__(self, barrier: threading.Barrier, fail: bool = False) -> None:
        self.barrier, self.fail, self.started = barrier, fail, False

    def start(self) -> None:
        self.barrier.wait()
        if self.fail:
            raise RuntimeError("its brokers never registered")
        self.started = True


def test_start_together_starts_the_clusters_at_once() -> None:
    barrier = threading.Barrier(2, timeout=10)
    a, b = Starting(barrier), Starting(barrier)
    common.start_together(a, b)
    assert a.started and b.started


def test_start_together_raises_a_failed_start_once_every_start_has_ended() -> None:
    barrier = threading.Barrier(2, timeout=10)
    a, b = Starting(barrier, fail=True), Starting(barrier)
    with pytest.raises(RuntimeError, match="never registered"):
        common.start_together(a, b)
    assert b.started
