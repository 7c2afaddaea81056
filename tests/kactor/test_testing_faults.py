"""kactor.testing's fault bookkeeping without processes: a partition is kactor chaos's fault file (edges/net_faults.py)
naming both brokers' endpoints, which every broker is told of in its environment; a pause is SIGSTOP then SIGCONT;
heal() undoes all of it and starts dead brokers again, once. Real brokers under these faults: the example project's
tests (tests/test_example_pytest_plugin.py)."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator

import pytest

from edges.net_faults import FAULTS_ENV, parse_rules
from kactor.testing.cluster import KafkaTestCluster, KafkaTestClusterError


class FakeProc:
    def __init__(self) -> None:
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self.returncode


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[KafkaTestCluster, list[tuple[int, int]], list[int]]]:
    c = KafkaTestCluster(3)
    signals: list[tuple[int, int]] = []
    started: list[int] = []
    c.lc.ports.update({0: 40000, 1: 40001, 2: 40002})
    c.lc.procs.update({b: FakeProc() for b in c.brokers})  # type: ignore[misc]

    def start_broker(broker_id: int) -> FakeProc:
        started.append(broker_id)
        c.lc.procs[broker_id] = FakeProc()  # type: ignore[assignment]
        return c.lc.procs[broker_id]  # type: ignore[return-value]

    monkeypatch.setattr(c.lc, "signal_broker", lambda b, sig: signals.append((b, sig)))
    monkeypatch.setattr(c.lc, "start_broker", start_broker)
    monkeypatch.setattr(c, "wait_ready", lambda timeout=0: None)
    try:
        yield c, signals, started
    finally:
        c.lc.procs.clear()
        c.stop()


def rules(c: KafkaTestCluster, broker: int) -> frozenset[str]:
    with open(c.fault_file, encoding="utf-8") as f:
        return parse_rules(f.read(), f"127.0.0.1:{40000 + broker}")


def test_a_partition_is_the_fault_file_every_broker_polls(cluster) -> None:  # noqa: ANN001
    c, _, _ = cluster
    assert c.lc.broker_env[FAULTS_ENV] == c.fault_file
    assert "127.0.0.1:40001" not in rules(c, 0)
    with c.partition(0, 1):
        with open(c.fault_file, encoding="utf-8") as f:
            assert json.load(f) == {"partitions": [["127.0.0.1:40000", "127.0.0.1:40001"]]}
        assert rules(c, 0) == {"127.0.0.1:40001"} and rules(c, 1) == {"127.0.0.1:40000"} and not rules(c, 2)
        second = c.partition(1, 2)
        assert rules(c, 1) == {"127.0.0.1:40000", "127.0.0.1:40002"}
    assert rules(c, 1) == {"127.0.0.1:40002"}  # the first healed, the second still cut
    second.heal()
    assert not rules(c, 1)


def test_a_pause_is_sigstop_until_the_block_ends(cluster) -> None:  # noqa: ANN001
    c, signals, _ = cluster
    with c.pause_broker(2):
        assert signals == [(2, signal.SIGSTOP)]
    assert signals == [(2, signal.SIGSTOP), (2, signal.SIGCONT)]


def test_heal_undoes_every_fault_and_starts_dead_brokers_once(cluster) -> None:  # noqa: ANN001
    c, signals, started = cluster
    c.partition(0, 2)
    c.pause_broker(1)
    c.lc.procs[0].returncode = -9  # killed
    assert c.heal() is True
    assert started == [0]
    assert (1, signal.SIGCONT) in signals
    assert not rules(c, 0)
    assert c.heal() is False
    assert started == [0]


def test_a_broker_the_cluster_does_not_have_is_named_with_those_it_has(cluster) -> None:  # noqa: ANN001
    c, _, _ = cluster
    with pytest.raises(KafkaTestClusterError, match=r"no broker 3: the cluster's brokers are \[0, 1, 2\]"):
        c.partition(0, 3)
    c.lc.procs[2].returncode = 0
    with pytest.raises(KafkaTestClusterError, match="broker 2 is not running: it cannot be paused"):
        c.pause_broker(2)


def test_wait_for_leader_waits_past_none_and_the_excluded_broker(cluster, monkeypatch) -> None:  # noqa: ANN001
    c, _, _ = cluster
    answers = iter([-1, 0, 0, 2])
    monkeypatch.setattr(c, "leader", lambda topic, partition=0: next(answers))
    assert c.wait_for_leader("t", 0, not_on=[0], timeout=5) == 2


def test_wait_for_isr_waits_for_the_full_replica_set_or_the_one_asked(cluster, monkeypatch) -> None:  # noqa: ANN001
    c, _, _ = cluster
    monkeypatch.setattr(c, "replicas", lambda topic: {0: [0, 1], 1: [1, 2]})
    isrs = {0: iter([[0], [0], [1, 0]]), 1: iter([[2, 1], [2, 1], [2, 1]])}
    monkeypatch.setattr(c, "isr", lambda topic, partition=0: next(isrs[partition]))
    assert c.wait_for_isr("t", timeout=5) == {0: [1, 0], 1: [2, 1]}
    monkeypatch.setattr(c, "isr", lambda topic, partition=0: [1])
    assert c.wait_for_isr("t", 0, isr=[1], timeout=5) == {0: [1]}
    with pytest.raises(KafkaTestClusterError, match=r"the ISR of t-1 to be the full replica set"):
        c.wait_for_isr("t", 1, timeout=0.1)


def delays(c: KafkaTestCluster, broker: int) -> dict[str, float]:
    from edges.net_faults import parse_delays

    with open(c.fault_file, encoding="utf-8") as f:
        return parse_delays(f.read(), f"127.0.0.1:{40000 + broker}")


def test_a_slow_link_is_a_delay_rule_in_the_fault_file_beside_the_cuts(cluster) -> None:  # noqa: ANN001
    c, _, _ = cluster
    cut = c.partition(1, 2)
    with c.slow_link(0, 1, 250) as slow:
        assert delays(c, 0) == {"127.0.0.1:40001": 0.25} and delays(c, 1) == {"127.0.0.1:40000": 0.25}
        assert delays(c, 2) == {} and rules(c, 2) == {"127.0.0.1:40001"}  # the cut is kept beside the delay
        assert "slowed by 250 ms" in repr(slow)
    assert delays(c, 0) == {} and rules(c, 1) == {"127.0.0.1:40002"}
    cut.heal()
    c.slow_link(0, 2, 100)
    assert c.heal() is True  # a slow link alone is something to heal
    assert delays(c, 0) == {} and c.heal() is False
    with pytest.raises(KafkaTestClusterError, match="at least 0 ms"):
        c.slow_link(0, 1, -5)


def test_wait_returns_broker_0_and_waits_only_past_none_and_false() -> None:
    """Broker ids start at 0: a leader or controller of 0 is an answer, not a reason to keep polling."""
    from kactor.testing.cluster import KafkaTestCluster, KafkaTestClusterError

    c = KafkaTestCluster(2)
    answers = iter([None, False, 0])
    assert c.wait(lambda: next(answers), timeout=5, interval=0.01) == 0
    with pytest.raises(KafkaTestClusterError, match="timed out after 0s waiting for nothing"):
        c.wait(lambda: None, timeout=0.2, what="nothing", interval=0.01)
