"""The demo's story: a scripted cluster run that records traces — the workload of `kactor demo`, the replay and
trace benchmarks, and the tests that need a real trace.

Each step acts on a running `LocalCluster` the way an operator would (admin znodes, SIGKILL, SIGTERM) and waits, by
polling ZooKeeper with a deadline, for the state Kafka 2.6 reaches: a partition's leader moved off a dead broker, a
restarted broker back in every ISR, leaders back on their preferred replicas, a new controller with a higher
epoch, a deleted topic's znodes gone. Steps the cluster cannot complete in time are reported, not fatal, so a demo
still ends with its report; tests read `ScenarioResult` to assert.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Generator, Iterable
from typing import Any, TypeVar

import attrs
from kazoo.client import KazooClient

from core.zk_client import KafkaZkClient
from kactor.cluster import ClusterError, LocalCluster
from messages.common import LeaderAndIsr, TopicPartition
from protocol.zk import paths
from zk_bridge.blocking import BlockingZk

Say = Callable[[str], None]
R = TypeVar("R")

ALL_STEPS = ("create", "produce", "kill", "restart", "preferred", "reassign", "failover", "delete")


@attrs.define
class ScenarioResult:
    """What happened, for the caller to print or assert on."""

    steps: list[tuple[str, str, float]] = attrs.field(factory=list)  # (step, outcome, seconds)
    failures: list[str] = attrs.field(factory=list)
    victim: int | None = None
    led_by_victim: list[str] = attrs.field(factory=list)  # "topic-p" the killed broker led when it died
    controllers: list[tuple[int, int]] = attrs.field(factory=list)  # (broker, epoch) seen in order
    states: dict[str, dict[str, LeaderAndIsr]] = attrs.field(factory=dict)  # step → {"topic-p": state znode}
    produced: int = 0


class Scenario:
    """The story; each public method is one step and returns a one-line outcome."""

    def __init__(self, lc: LocalCluster, topic: str = "demo", partitions: int = 6, doomed: str = "demo-doomed",
                 say: Say = print, wait_s: float = 45.0) -> None:
        self.lc = lc
        self.topic = topic
        self.partitions = partitions
        self.doomed = doomed
        self.say = say
        self.wait_s = wait_s
        self.result = ScenarioResult()
        self._zk: KazooClient | None = None
        self._blocking: BlockingZk | None = None
        self._kzk = KafkaZkClient()

    # -- ZooKeeper readers (KafkaZkClient's, run synchronously) -------------------------------------------------------
    @property
    def zk(self) -> KazooClient:
        if self._zk is None:
            self._zk = self.lc.client()
        return self._zk

    def _run(self, proc: Generator[Any, Any, R]) -> R:
        if self._blocking is None:
            self._blocking = BlockingZk(self.zk)
        return self._blocking.run(proc)

    def close(self) -> None:
        if self._blocking is not None:
            self._blocking.close()
            self._blocking = None
        if self._zk is not None:
            self._zk.stop()
            self._zk.close()
            self._zk = None

    def live(self) -> list[int]:
        return self._run(self._kzk.get_sorted_broker_list())

    def controller(self) -> tuple[int, int] | None:
        """(controller's broker id, controller epoch), None while there is no controller."""
        cid = self._run(self._kzk.get_controller_id())
        epoch = self._run(self._kzk.get_controller_epoch())
        if cid < 0 or epoch is None:
            return None
        return cid, epoch[0]

    def exists(self, path: str) -> bool:
        return self._run(self._kzk.path_exists(path))

    def assignment(self, topic: str) -> dict[int, list[int]]:
        assignment = self._run(self._kzk.get_full_replica_assignment_for_topics((topic,)))
        return {tp.partition: list(ra.replicas) for tp, ra in sorted(assignment.items())}

    def state(self, topic: str, p: int) -> LeaderAndIsr | None:
        """The partition's leader, leader epoch and ISR (its state znode), None if it has none."""
        tp = TopicPartition(topic, p)
        info = self._run(self._kzk.get_topic_partition_states((tp,))).get(tp)
        return info.leader_and_isr if info is not None else None

    def states(self, topics: Iterable[str]) -> dict[str, LeaderAndIsr]:
        parts = [TopicPartition(t, p) for t in topics for p in sorted(self.assignment(t))]
        infos = self._run(self._kzk.get_topic_partition_states(parts))
        return {f"{tp.topic}-{tp.partition}": infos[tp].leader_and_isr for tp in parts if tp in infos}

    def topics(self) -> list[str]:
        return [t for t in (self.topic, self.doomed) if self.exists(paths.TopicZNode.path(t))]

    def wait(self, predicate: Callable[[], Any], what: str, timeout: float | None = None) -> Any:
        return self.lc.wait_for(predicate, timeout or self.wait_s, what, interval=0.1)

    def _all_isr_full(self) -> bool:
        for t in self.topics():
            for p, replicas in self.assignment(t).items():
                st = self.state(t, p)
                if st is None or sorted(st.isr) != sorted(replicas) or st.leader == -1:
                    return False
        return True

    # -- steps ---------------------------------------------------------------------------------------------------
    def start(self) -> str:
        self.wait(lambda: len(self.live()) == self.lc.n, f"{self.lc.n} brokers registered")
        ctrl = self.wait(self.controller, "a controller")
        self.result.controllers.append(ctrl)
        return f"{self.lc.n} brokers registered, controller is broker {ctrl[0]} (epoch {ctrl[1]})"

    def create(self) -> str:
        from zk_bridge.admin.admin_zk import AdminZkClient

        admin = AdminZkClient(self.zk)
        rf = min(3, self.lc.n)
        admin.create_topic(self.topic, self.partitions, rf)
        # The first topic online proves the controller's /brokers/topics child watch armed (its failover reads the
        # children with a watch before any partition goes online), so the second reaches the controller as a
        # TopicChange watch event: a topic created inside the failover's window is read at start-up instead, and a
        # busy machine widened that window enough that a demo's trace held no such event.
        self.wait(self._all_isr_full, f"{self.topic}'s partitions online with a full ISR")
        admin.create_topic(self.doomed, 2, min(2, self.lc.n))
        self.wait(self._all_isr_full, "every new partition online with a full ISR")
        return f"topics {self.topic} ({self.partitions} partitions, RF {rf}) and {self.doomed} (2 partitions) online"

    def produce(self, records: int = 200) -> str:
        """Produce ``records`` records with `kactor produce` (acks=all), as an operator would."""
        try:
            proc = subprocess.run([sys.executable, "-m", "kactor", "produce", "--zookeeper", self.lc.connect_string,
                                   "--topic", self.topic, "--count", str(records), "--acks", "all",
                                   "--value-prefix", "demo-record-"], text=True, capture_output=True, timeout=90)
        except subprocess.TimeoutExpired:
            return "skipped: `kactor produce` did not finish in 90 s"
        if proc.returncode != 0:
            return f"skipped: `kactor produce` exited {proc.returncode}: {(proc.stderr or '').strip()[-200:]}"
        self.result.produced = records
        return f"{records} records produced to {self.topic}"

    def kill(self) -> str:
        """SIGKILL a broker that leads partitions and is not the controller; wait for its leaderships to move."""
        ctrl = self.controller()
        before = self.states(self.topics())
        candidates = [b for b in sorted(self.lc.procs) if ctrl is None or b != ctrl[0]] or sorted(self.lc.procs)
        victim = max(candidates, key=lambda b: sum(1 for st in before.values() if st.leader == b))
        self.result.victim = victim
        self.result.led_by_victim = sorted(tp for tp, st in before.items() if st.leader == victim)
        self.result.states["before_kill"] = before
        # its trace writer flushes every second and a crash loses what it had not written: wait for one more write,
        # so the whole story so far (possibly all in the victim's first second) is in its trace for replay
        self.lc.kill_broker(victim, wait_trace_flush=True)
        t0 = time.monotonic()
        self.say(f"  broker {victim} killed (SIGKILL); it led {len(self.result.led_by_victim)} partitions; "
                 f"waiting for its ZooKeeper session to expire")
        self.wait(lambda: victim not in self.live(), f"broker {victim} to leave /brokers/ids")

        def moved() -> bool:
            sts = self.states(self.topics())
            return all(st.leader != victim and victim not in st.isr for st in sts.values())
        self.wait(moved, f"leaders and ISRs to move off broker {victim}")
        after = self.states(self.topics())
        self.result.states["after_kill"] = after
        return (f"broker {victim} expired; {len(self.result.led_by_victim)} leaders moved in "
                f"{time.monotonic() - t0:.1f}s")

    def restart(self) -> str:
        victim = self.result.victim
        assert victim is not None, "restart needs a killed broker"
        self.lc.start_broker(victim)
        self.wait(lambda: victim in self.live(), f"broker {victim} to register again")
        try:
            self.wait(self._all_isr_full, f"broker {victim} back in every ISR")
            return f"broker {victim} registered again and rejoined every ISR"
        except ClusterError:
            return f"broker {victim} registered again (not yet back in every ISR)"

    def preferred(self) -> str:
        from zk_bridge.admin.admin_zk import AdminZkClient

        topics = self.topics()
        parts = {TopicPartition(t, p) for t in topics for p in self.assignment(t)}
        off = [tp for tp in parts if (st := self.state(tp.topic, tp.partition)) is not None
               and st.leader != self.assignment(tp.topic)[tp.partition][0]]
        self.result.states["before_preferred"] = self.states(topics)
        if not off:
            return "every leader already on its preferred replica"
        AdminZkClient(self.zk).create_preferred_replica_election(parts)

        def done() -> bool:
            if self.exists(paths.PreferredReplicaElectionZNode):
                return False
            return all((st := self.state(t, p)) is not None and st.leader == r[0]
                       for t in topics for p, r in self.assignment(t).items())
        self.wait(done, "leaders back on their preferred replicas")
        self.result.states["after_preferred"] = self.states(topics)
        return f"preferred replica election moved {len(off)} leaders back"

    def reassign(self) -> str:
        """Move partition 0 of the doomed topic to another pair of brokers (Kafka's reassignment with a new
        replica: AR grows to RS + adding, then shrinks once the new replica is in sync)."""
        from zk_bridge.admin.admin_zk import AdminZkClient

        if self.lc.n < 3:
            return "skipped: needs 3 brokers"
        current = self.assignment(self.doomed)[0]
        spare = next(b for b in sorted(self.lc.procs) if b not in current)
        target = [current[1], spare]
        AdminZkClient(self.zk).create_partition_reassignment({TopicPartition(self.doomed, 0): target})

        def done() -> bool:
            return not self.exists(paths.ReassignPartitionsZNode) and self.assignment(self.doomed)[0] == target
        self.wait(done, f"{self.doomed}-0 reassigned to {target}")
        return f"{self.doomed}-0 reassigned {current} → {target}"

    def failover(self) -> str:
        """An orderly stop (SIGTERM: controlled shutdown) of the controller's broker; another broker wins the
        /controller election with the next epoch; the old one restarts as a plain broker."""
        ctrl = self.controller()
        assert ctrl is not None
        old, epoch = ctrl
        self.lc.stop_broker(old)

        def new_controller() -> tuple[int, int] | None:
            c = self.controller()
            return c if c is not None and c[0] != old and c[1] > epoch else None
        new = self.wait(new_controller, "a new controller")
        self.result.controllers.append(new)
        moved = f"controller moved from broker {old} (epoch {epoch}) to broker {new[0]} (epoch {new[1]})"
        self.lc.start_broker(old)
        self.wait(lambda: old in self.live(), f"broker {old} to register again")
        try:
            self.wait(self._all_isr_full, f"broker {old} back in every ISR")
        except ClusterError:
            return f"{moved}; broker {old} restarted (not yet back in every ISR)"
        return f"{moved}; broker {old} restarted and back in every ISR"

    def delete(self) -> str:
        from zk_bridge.admin.admin_zk import AdminZkClient

        AdminZkClient(self.zk).delete_topic(self.doomed)

        def gone() -> bool:
            return not self.exists(paths.TopicZNode.path(self.doomed)) and \
                not self.exists(paths.DeleteTopicsTopicZNode.path(self.doomed))
        self.wait(gone, f"topic {self.doomed} deleted")
        return f"topic {self.doomed} deleted (its znodes are gone)"

    def stop_cluster(self) -> str:
        """Stop the brokers one at a time, the controller last: each controlled shutdown then finds a live
        controller at once (stopping all together makes each retry controlled.shutdown.max.retries times)."""
        t0 = time.monotonic()
        ctrl = None
        try:
            c = self.controller()
            ctrl = c[0] if c else None
        except Exception:  # noqa: BLE001 - ZooKeeper gone: plain stop below
            pass
        order = [b for b in sorted(self.lc.procs) if b != ctrl] + ([ctrl] if ctrl in self.lc.procs else [])
        codes = {b: self.lc.stop_broker(b) for b in order}
        self.close()
        self.lc.stop()
        return f"brokers stopped in order {order} (exit codes {codes}) in {time.monotonic() - t0:.1f}s"

    # -- the whole story -----------------------------------------------------------------------------------------
    def run(self, steps: Iterable[str] = ALL_STEPS) -> ScenarioResult:
        wanted = list(steps)
        unknown = [s for s in wanted if s not in ALL_STEPS]
        if unknown:
            raise ValueError(f"unknown scenario steps {unknown}; known: {', '.join(ALL_STEPS)}")
        self._step("start", self.start)
        for name in ALL_STEPS:  # always in story order, whatever order they were asked in
            if name in wanted:
                if name == "restart" and self.result.victim is None:
                    continue
                self._step(name, getattr(self, name))
        self.result.states["final"] = self.states(self.topics())
        return self.result

    def _step(self, name: str, fn: Callable[[], str]) -> None:
        self.say(f"[{name}] ...")
        t0 = time.monotonic()
        try:
            outcome = fn()
        except Exception as e:  # noqa: BLE001 - a demo reports a failed step and goes on
            outcome = f"FAILED: {e}"
            self.result.failures.append(f"{name}: {e}")
        dt = time.monotonic() - t0
        self.result.steps.append((name, outcome, dt))
        self.say(f"[{name}] {outcome} ({dt:.1f}s)")


def record_scenario(trace_dir: str, steps: Iterable[str] = ALL_STEPS, brokers: int = 3,
                    zookeeper: str | None = None, base_dir: str | None = None, say: Say = print,
                    overrides: Iterable[str] = ("zookeeper.session.timeout.ms=6000",),
                    partitions: int = 6) -> ScenarioResult:
    """Start a cluster tracing into ``trace_dir``, run the story, stop the cluster (traces flushed on close)."""
    os.makedirs(trace_dir, exist_ok=True)
    lc = LocalCluster(brokers, zookeeper=zookeeper, base_dir=base_dir, trace_dir=trace_dir, overrides=overrides)
    sc = Scenario(lc, partitions=partitions, say=say)
    try:
        lc.start()
        result = sc.run(steps)
        say(f"[stop] {sc.stop_cluster()}")
        return result
    finally:
        sc.close()
        lc.stop()
        if base_dir is None:
            shutil.rmtree(lc.base_dir, ignore_errors=True)
