"""The runner's record of the brokers it took down (kactor/chaos/runner.py): an outage lasts from the fault until
a poll finds the broker registered by the process running now — after its SIGCONT, for a frozen one."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from kactor.chaos.history import Outage
from kactor.chaos.runner import ChaosConfig, ChaosRun


class _Zk:
    """The registrations' creation times (ms), as ZooKeeper's stat gives them; None: not registered."""

    def __init__(self) -> None:
        self.ctime: dict[str, float | None] = {}

    def exists(self, path: str) -> SimpleNamespace | None:
        ctime = self.ctime.get(path)
        return None if ctime is None else SimpleNamespace(ctime=ctime)


def _run(tmp_path: Path) -> tuple[ChaosRun, _Zk]:
    run = ChaosRun(ChaosConfig(1, 1, brokers=2), str(tmp_path))
    zk = _Zk()
    run.zk = zk  # type: ignore[assignment]
    run._started_ms = {0: 1000.0, 1: 1000.0}
    zk.ctime = {"/brokers/ids/0": 1500.0, "/brokers/ids/1": 1500.0}
    return run, zk


def test_a_crashed_broker_is_down_until_its_new_process_registers(tmp_path: Path) -> None:
    run, zk = _run(tmp_path)
    assert run._all_registered() is True and run.outages == []
    run._down_from(1, "sigkill")
    run._started_ms[1] = 5000.0  # restarted; its old registration (1500) lingers until the session expires
    assert run._all_registered() is False and run.outages == []
    zk.ctime["/brokers/ids/1"] = None
    assert run._all_registered() is False and run.outages == []
    zk.ctime["/brokers/ids/1"] = 5200.0
    assert run._all_registered() is True
    [outage] = run.outages
    assert (outage.broker, outage.cause) == (1, "sigkill") and outage.end is not None and outage.end >= outage.start
    assert run._all_outages() == [outage]


def test_a_frozen_broker_is_down_until_it_registers_after_its_sigcont(tmp_path: Path) -> None:
    run, zk = _run(tmp_path)
    run._down_from(0, "sigstop")
    run._stopped_broker = 0
    assert run._all_registered() is True and run.outages == []  # its registration stands until the session expires
    run._stopped_broker = None
    run._continued_ms[0] = 9000.0
    assert run._all_registered() is True and run.outages == []  # the old registration, from before the SIGCONT
    zk.ctime["/brokers/ids/0"] = 9100.0
    run._all_registered()
    assert [(o.broker, o.cause) for o in run.outages] == [(0, "sigstop")]


def test_an_outage_never_seen_ending_lasts_to_the_end_of_the_run(tmp_path: Path) -> None:
    run, _ = _run(tmp_path)
    run._down_from(1, "logdir")
    run._down_from(1, "exited")  # the first cause stands
    [outage] = run._all_outages()
    assert outage == Outage(1, outage.start, None, "logdir")
