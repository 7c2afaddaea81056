"""LocalCluster.start's order (issue #41): the brokers start while the embedded ZooKeeper's JVMs do, not after they
serve; a broker that gave up on ZooKeeper before it served is started again once it does; a ZooKeeper that never
serves takes the brokers started for it down with it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kactor import cluster as cluster_module
from kactor.cluster import LocalCluster
from zk_bridge.server import ZooKeeperUnavailable


class FakeProc:
    def __init__(self, broker_id: int, events: list[str], exits: int | None) -> None:
        self.broker_id, self.events, self.returncode = broker_id, events, exits
        self.pid = 1000 + broker_id

    def poll(self) -> int | None:
        return self.returncode

    def kill(self) -> None:
        self.events.append(f"kill broker {self.broker_id}")
        self.returncode = -9

    def wait(self, timeout: float | None = None) -> int | None:
        return self.returncode


class FakeEnsemble:
    serves = True

    def __init__(self, events: list[str]) -> None:
        self.events = events
        self.connect_string = "127.0.0.1:2181"

    def launch(self) -> None:
        self.events.append("zookeeper launched")

    def wait_started(self, timeout: float = 60.0) -> None:
        if not self.serves:
            self.events.append("zookeeper failed")
            raise ZooKeeperUnavailable("zookeeper exited during startup: boom")
        self.events.append("zookeeper serves")

    def stop(self) -> None:
        self.events.append("zookeeper stopped")


@pytest.fixture
def events() -> list[str]:
    return []


def _cluster(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, events: list[str], serves: bool = True,
             early_exit: frozenset[int] = frozenset()) -> LocalCluster:
    spawned: dict[int, int] = {}

    def ensemble(*args: Any, **kwargs: Any) -> FakeEnsemble:
        fake = FakeEnsemble(events)
        fake.serves = serves
        return fake

    def spawn(args: list[str], **kwargs: Any) -> FakeProc:
        broker_id = int(next(a for a in args if a.startswith("broker.id=")).split("=")[1])
        spawned[broker_id] = spawned.get(broker_id, 0) + 1
        first = spawned[broker_id] == 1
        events.append(f"spawn broker {broker_id}" + ("" if first else " again"))
        # a broker of ``early_exit`` gave up on ZooKeeper during its first run: exited 1 by the time it serves
        return FakeProc(broker_id, events, 1 if first and broker_id in early_exit else None)

    monkeypatch.setattr(cluster_module, "ZooKeeperEnsemble", ensemble)
    monkeypatch.setattr(cluster_module, "spawn", spawn)
    return LocalCluster(2, base_dir=str(tmp_path), zk_tick_ms=500)


def test_the_brokers_start_while_zookeeper_does(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                events: list[str]) -> None:
    lc = _cluster(monkeypatch, tmp_path, events)
    assert lc.start() is lc
    assert events == ["zookeeper launched", "spawn broker 0", "spawn broker 1", "zookeeper serves"]
    assert sorted(lc.procs) == [0, 1]


def test_a_broker_that_gave_up_before_zookeeper_served_starts_again(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path, events: list[str]) -> None:
    lc = _cluster(monkeypatch, tmp_path, events, early_exit=frozenset({1}))
    lc.start()
    assert events == ["zookeeper launched", "spawn broker 0", "spawn broker 1", "zookeeper serves",
                      "spawn broker 1 again"]
    assert all(p.poll() is None for p in lc.procs.values())


def test_a_zookeeper_that_never_serves_takes_the_brokers_down(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                              events: list[str]) -> None:
    lc = _cluster(monkeypatch, tmp_path, events, serves=False)
    with pytest.raises(ZooKeeperUnavailable, match="boom"):
        lc.start()
    assert events == ["zookeeper launched", "spawn broker 0", "spawn broker 1", "zookeeper failed",
                      "kill broker 0", "kill broker 1", "zookeeper stopped"]
    assert lc.zk is None


def test_a_given_zookeeper_is_not_started_or_waited_for(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                        events: list[str]) -> None:
    lc = _cluster(monkeypatch, tmp_path, events)
    lc.given_zookeeper = "127.0.0.1:2181/given"
    lc.start()
    assert events == ["spawn broker 0", "spawn broker 1"]
