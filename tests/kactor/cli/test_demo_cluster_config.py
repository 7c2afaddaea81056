"""``kactor demo``'s cluster: its brokers' overrides (a scripted LocalCluster that refuses to start; no process)."""

from __future__ import annotations

from pathlib import Path

import pytest

import kactor.cluster
from kactor.cli import main


class RefusingCluster:
    """What `kactor demo` asks of its LocalCluster up to a failed start; the overrides it was given are kept."""

    made: list[RefusingCluster] = []

    def __init__(self, brokers: int, base_dir: str, trace_dir: str, overrides: list[str]) -> None:
        self.overrides = overrides
        self.stopped = False
        RefusingCluster.made.append(self)

    def start(self) -> None:
        raise kactor.cluster.ClusterError("no ZooKeeper here")

    def stop(self) -> None:
        self.stopped = True


def test_the_demo_brokers_give_up_a_controlled_shutdown_retry_in_200_ms(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The last broker to stop leads what no other broker can take: its controlled shutdown fails and retries after
    controlled.shutdown.retry.backoff.ms (Kafka's 5 s, twice: the demo's stop took 12 s)."""
    RefusingCluster.made.clear()
    monkeypatch.setattr(kactor.cluster, "LocalCluster", RefusingCluster)
    assert main(["demo", "--out", str(tmp_path / "demo"), "--no-report"]) != 0
    assert "could not start the cluster: no ZooKeeper here" in capsys.readouterr().err
    (cluster,) = RefusingCluster.made
    assert cluster.stopped
    assert cluster.overrides == ["zookeeper.session.timeout.ms=6000", "controlled.shutdown.retry.backoff.ms=200"]
