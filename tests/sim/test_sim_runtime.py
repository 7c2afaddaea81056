"""`kactor sim`'s runtime (sim/runtime.py, sim/run.py): a seed's run is deterministic to the byte, a seed runs clean
through crashes, restarts and partitions, and a broken invariant is reported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from kactor.sim_boot import SimBoot
from messages.common import TopicPartition
from messages.zk import ZkSessionEvent
from sim.client import SimClient, zk_partition_state
from sim.faults import schedule
from sim.invariants import Checker, hosted_partition
from sim.run import create_topic, run_seed
from sim.runtime import Sim
from sim.workload import rates, writes

REPO = Path(__file__).resolve().parents[2]

STEPS = 20



@pytest.fixture
def plain_partitions(monkeypatch: pytest.MonkeyPatch) -> None:
    """The schedules from before one-way cuts and slow links (sim/faults.py): every partition a two-way cut, as the
    seeds pinned below were chosen with."""
    import sim.faults

    monkeypatch.setattr(sim.faults, "ONE_WAY_SHARE", 0.0)
    monkeypatch.setattr(sim.faults, "SLOW_SHARE", 0.0)


def test_a_seed_runs_clean_through_its_faults(plain_partitions: None) -> None:
    faults = schedule(2, STEPS, 3)
    assert {f.kind for f in faults} == {"crash", "restart", "partition", "heal"}  # seed 2 has every kind
    r = run_seed(2, STEPS, SimBoot())
    assert r.violations == ()
    assert rates(2, 2) == (0.2, 1.0)  # sim-0 quiet, sim-1 busy (sim/workload.py)
    planned = sum(sum(step) for step in writes(2, STEPS, 2))
    assert planned == 23 and r.answers == planned  # each produce the workload planned is answered
    assert r.acks >= planned * 2 // 3  # most are acknowledged: the crash costs the crashed leader's partition some
    # 0.2 s of start-up (the brokers serving with a controller, then the topic's partitions led with every replica in
    # sync), 20 steps of 1 s, then 1.5 s settling until the cluster is as the final checks want it (20 s at most)
    assert r.sim_ms == 21700.0


def test_the_same_seed_twice_gives_byte_identical_traces_and_event_logs(tmp_path: Path) -> None:
    a = run_seed(5, 12, SimBoot(), trace_dir=str(tmp_path / "a"))
    b = run_seed(5, 12, SimBoot(), trace_dir=str(tmp_path / "b"))
    assert a.event_digest == b.event_digest
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert "broker-0.jsonl" in files and files == sorted(p.name for p in (tmp_path / "b").iterdir())
    for name in files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    other = run_seed(6, 12, SimBoot())
    assert other.event_digest != a.event_digest  # the log does depend on the seed


def test_a_sim_trace_replays_exactly(tmp_path: Path) -> None:
    """The traces are the project's format: `kactor trace replay` reproduces every message of each broker."""
    from kactor.trace.replay import replay_many

    run_seed(2, 12, SimBoot(), trace_dir=str(tmp_path))
    paths = sorted(str(p) for p in tmp_path.glob("*.jsonl"))
    assert len(paths) == 4  # broker 1 crashed and restarted: two incarnations
    results = replay_many(paths)
    assert [r.divergence for r in results] == [None] * 4
    assert all(r.compared > 50 for r in results)


def test_a_follower_that_loses_an_acknowledged_record_is_caught() -> None:
    """A deliberately broken run: an ISR follower's log truncated below acknowledged records (a disk that forgot).
    The ISR-replica invariant names the record and the replica."""
    tp = TopicPartition("sim", 0)

    def forget(sim: Sim, step: int) -> None:
        if step == 5:
            state = zk_partition_state(sim, tp)
            assert state is not None
            p = next(p for b in state.isr if b != state.leader
                     and (p := hosted_partition(sim, b, tp)) is not None)
            p.log.truncate_to(0)
            p.log.append_as_follower(_batch_of([f"forged-{i}" for i in range(3)]))
            p.log.update_high_watermark(3)

    r = run_seed(3, 10, SimBoot(), tamper=forget)
    assert r.violations
    assert "sim-0: acknowledged 's3-1' at offset 0, ISR replica" in r.violations[0]
    assert "has 'forged-0'" in r.violations[0]



def _started_with_topic(sim: Sim) -> tuple[dict[TopicPartition, tuple[int, ...]], TopicPartition]:
    """Every broker started, then topic ``t`` created (1 partition, 3 replicas), 2 s of simulated time after each:
    its assignment and its partition."""
    for b in sim.brokers:
        sim.start(b)
    sim.run_for(2000)
    assignment = create_topic(sim, "t", 1, 3)
    sim.run_for(2000)
    return assignment, TopicPartition("t", 0)

def test_an_isr_outside_the_replicas_is_caught() -> None:
    sim = Sim(1, SimBoot())
    try:
        assignment, tp = _started_with_topic(sim)
        checker = Checker(sim, SimClient(sim), [tp], assignment)
        assert checker.check() == []
        state = zk_partition_state(sim, tp)
        assert state is not None and state.leader in state.isr and sorted(state.isr) == [0, 1, 2]
        checker.assignment = {tp: (0, 1)}  # as if the controller had put broker 2 in the ISR of a 2-replica partition
        assert checker.check() == [f"t-0: ISR {list(state.isr)} not within replicas [0, 1]"]
    finally:
        sim.close()


def _batch_of(values: list[str]) -> bytes:
    from protocol.records import Record, build_batch

    return build_batch([Record(i, 0, None, v.encode()) for i, v in enumerate(values)], first_timestamp=0,
                       base_offset=0, partition_leader_epoch=0)


def test_a_produce_slow_while_the_cluster_is_healthy_is_caught() -> None:
    """The liveness bound: once the cluster has been healthy for HEALTHY_SETTLE_MS, an acks=all produce is answered
    within HEALTHY_BOUND_MS; one answered later (here recorded as such) is reported, one sent just after a fault
    is not."""
    from sim.invariants import HEALTHY_BOUND_MS, HEALTHY_SETTLE_MS

    sim = Sim(1, SimBoot())
    try:
        client = SimClient(sim)
        checker = Checker(sim, client, [], {})
        slow = HEALTHY_BOUND_MS + 500
        client.latencies.append((slow, 1000.0, 1000.0 + HEALTHY_SETTLE_MS - 1, "early", "NONE"))
        assert checker.check() == []
        client.latencies.append((slow, 1000.0, 1000.0 + HEALTHY_SETTLE_MS, "late", "NONE"))
        assert checker.check() == [f"produce 'late' answered NONE after {slow:.0f} ms with the cluster healthy"]
    finally:
        sim.close()


def test_kactor_sim_prints_a_line_per_seed_the_rerun_command_and_a_summary(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import sim.run
    from kactor.cli import main

    real = sim.run.run_seed

    def broken_seed_4(seed: int, steps: int, boot: SimBoot, **kw: object) -> object:
        def lose(s: Sim, step: int) -> None:
            if step == steps - 1:
                hosted = hosted_partition(s, 1, TopicPartition("sim", 0))  # a follower
                hosted.log.truncate_to(0)
                hosted.log.append_as_follower(_batch_of(["forged"]))
                hosted.log.update_high_watermark(1)
        return real(seed, steps, boot, tamper=lose if seed == 4 else None, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(sim.run, "run_seed", broken_seed_4)
    monkeypatch.setenv("PYTHONHASHSEED", "0")  # the command re-executes itself with it otherwise
    assert main(["sim", "--seeds", "3-4", "--steps", "3", "--jobs", "1", "--trace-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("seed 4: FAILED  ")  # a clean seed has no line of its own: the progress bar counts it
    assert "sim-0: acknowledged 's4-1' at offset 0, ISR replica b1 has 'forged'" in out[1]
    assert f"  traces: {tmp_path}/seed-4 (kactor trace replay --check {tmp_path}/seed-4)" in out
    assert "  rerun: kactor sim --seeds 4 --steps 3 --brokers 3" in out
    assert out[-2].startswith("2 seeds, 1 clean, 1 failing (4) in ") and out[-2].endswith(" seeds/s")
    assert out[-1].startswith("  3 steps a seed, 1 jobs; per seed ")
    assert out[-1].endswith("6 acks of 6 answers, 411 inputs")  # sim-1 a quiet partition in both seeds; the clients
    assert (tmp_path / "seed-4" / "broker-0.jsonl").exists()


# `kactor sim --jobs 2` forks its workers: run from a process of its own, as a user runs it, never from the test
# process, whose threads (left by earlier tests on this xdist worker) may hold a lock at the fork and hang the child
_SIM_CLI = """
import sys
import sim.runtime
if sys.argv[1]:
    sim.runtime.scratch_base = lambda: sys.argv[1]  # where the runs' log dirs go (tmpfs otherwise)
from kactor.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _kactor_sim(scratch: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _SIM_CLI, scratch, "sim", *args], capture_output=True, text=True,
                          timeout=280, cwd=REPO, env={**os.environ, "PYTHONHASHSEED": "0"})


def test_kactor_sim_runs_seeds_in_worker_processes_in_seed_order(tmp_path: Path) -> None:
    """--jobs 2: the seeds run in two forked workers; a mutation is applied in each, the first failing seed in seed
    order is reported with the command that reruns it (its --mutation too), and --stop-at-first ends the run."""
    r = _kactor_sim("", "--seeds", "1-4", "--steps", "6", "--jobs", "2", "--trace-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout.splitlines()
    assert out[0].startswith("4 seeds, 4 clean, 0 failing in ")
    assert out[1].startswith("  6 steps a seed, 2 jobs; per seed ")

    base = tmp_path / "shm"
    base.mkdir()
    r = _kactor_sim(str(base), "--seeds", "1-6", "--steps", "20", "--jobs", "2", "--trace-dir", str(tmp_path),
                    "--mutation", "make-leader-completes-nothing", "--stop-at-first")
    assert r.returncode == 1, r.stderr[-3000:]
    # the seeds' log dirs are made in the run's own folder, removed at its end with what the workers still running a
    # seed when the first failure ended the run (the pool terminated) left there
    assert list(base.iterdir()) == []
    out = r.stdout.splitlines()
    assert out[0].startswith("seed 1: FAILED  ")
    assert "  rerun: kactor sim --seeds 1 --steps 20 --brokers 3 --mutation make-leader-completes-nothing" in out
    assert any(line.startswith("1 seeds of 6, 0 clean, 1 failing (1) in ") for line in out)


def test_an_actor_that_raises_is_a_violation() -> None:
    from actors import names
    from messages.net import NetRequest
    from messages.replication import ProduceRequest

    def bad_request(sim: Sim, step: int) -> None:
        if step == 1:
            b = sim.brokers[0]
            # a request no converter would build: the handler raises
            bad = NetRequest(1, 1, ProduceRequest(-1, 30000, None), True)  # type: ignore[arg-type]
            sim.deliver(b, b.incarnation, names.REPLICA_MANAGER, bad, "edge:net")

    r = run_seed(2, 3, SimBoot(), tamper=bad_request)
    assert len(r.violations) == 1
    assert r.violations[0].startswith("an actor raised at 2200.000 ms: actor replica-manager failed on NetRequest: "
                                    "'NoneType' object is not iterable")


def test_an_orderly_stop_ends_the_incarnation_and_closes_its_session() -> None:
    """SIGTERM's input (BrokerShutdownRequested): a controlled shutdown through the controller, then the process
    handle is told the shutdown is complete; the broker is down and its registration gone at once."""
    from actors import names
    from messages.broker_lifecycle import BrokerShutdownRequested

    sim = Sim(1, SimBoot())
    try:
        for b in sim.brokers:
            sim.start(b)
        sim.run_for(2000)
        assert sorted(sim.zk.nodes["/brokers/ids"].children) == ["0", "1", "2"]
        b2 = sim.brokers[2]
        sim.deliver(b2, b2.incarnation, names.KAFKA_SERVER, BrokerShutdownRequested(), names.EDGE_PROCESS)
        sim.run_for(5000)
        assert not b2.up
        assert sorted(sim.zk.nodes["/brokers/ids"].children) == ["0", "1"]
        assert any(e.endswith("b2 stopped") for e in sim.events)
    finally:
        sim.close()


def test_a_replica_left_out_of_the_isr_at_the_end_is_caught() -> None:
    sim = Sim(1, SimBoot())
    try:
        assignment, tp = _started_with_topic(sim)
        checker = Checker(sim, SimClient(sim), [tp], assignment)
        assert checker.check_final() == []
        checker.assignment = {tp: (0, 1, 2, 3)}  # as if a fourth replica had never caught up
        assert checker.check_final() == ["t-0: ISR [0, 1, 2] at the end, not every replica [0, 1, 2, 3]"]
    finally:
        sim.close()


def test_the_settling_ends_once_the_cluster_is_as_the_final_checks_want_it() -> None:
    """`Checker.settled`: every broker serving, each partition's ISR all its replicas and its leader leading it at
    ZooKeeper's epoch, no produce waiting; a crashed broker, a produce in flight or a shrunk ISR keep it going."""
    from messages.zk import SetData
    from protocol.zk import paths, znodes

    sim = Sim(1, SimBoot())
    try:
        assignment, tp = _started_with_topic(sim)
        client = SimClient(sim)
        checker = Checker(sim, client, [tp], assignment)
        assert checker.settled()
        assert client.produce(tp) and not checker.settled()  # waiting for its answer
        sim.run_for(100)
        assert client.acks and checker.settled()
        path = paths.TopicPartitionStateZNode.path(tp)
        node = sim.zk.nodes[path]
        full = znodes.decode_partition_state(node.data, node.version)
        lai = full.leader_and_isr
        follower = next(b for b in lai.isr if b != lai.leader)
        shrunk = attrs.evolve(full, leader_and_isr=attrs.evolve(lai, isr=tuple(b for b in lai.isr if b != follower)))
        sim.zk_admin(SetData(path, znodes.encode_partition_state(shrunk), -1))
        assert not checker.settled()  # an ISR short of a replica
        sim.zk_admin(SetData(path, znodes.encode_partition_state(full), -1))
        assert checker.settled()
        sim.crash(follower)
        assert not checker.settled()
    finally:
        sim.close()


def test_each_mutation_patches_and_its_undo_restores_the_code() -> None:
    import core.api.add_partitions_to_txn
    from core.broker.log import Log
    from core.broker.log_segment import LogSegment
    from core.broker.partition import Partition
    from core.broker.replica_fetcher import ReplicaFetcherManager
    from core.broker.replica_manager import ReplicaManager
    from core.coordinator.transaction.transaction_state_manager import TransactionStateManager
    from core.zk_client import KafkaZkClient
    from sim import runtime
    from sim.mutations import MUTATIONS, apply

    owners = (Log, LogSegment, Partition, ReplicaManager, ReplicaFetcherManager, KafkaZkClient, runtime,
              core.api.add_partitions_to_txn, TransactionStateManager)
    before = [dict(vars(o)) for o in owners]
    for name in MUTATIONS:
        undo = apply(name)
        assert [dict(vars(o)) for o in owners] != before, name
        undo()
        assert [dict(vars(o)) for o in owners] == before, name


def test_a_stop_is_a_controlled_shutdown_and_a_broker_that_still_leads_after_one_is_caught() -> None:
    """Seed 5 stops broker 1 at step 1 (faults.py: a quarter of the outages are SIGTERMs): the controller moves its
    leaderships away, the broker closes its session and exits, and it starts again 8 steps later. The invariant:
    a controlled shutdown that succeeded leaves the broker leading nothing in ZooKeeper."""
    from messages.broker_lifecycle import BrokerShutdownComplete

    assert [str(f) for f in schedule(5, 12, 3)][:3] == ["stop b1", "partition b0|b1", "restart b1"]
    seen: list[Sim] = []

    def keep(sim: Sim, step: int) -> None:
        seen[:] = [sim]

    r = run_seed(5, 12, SimBoot(), tamper=keep)
    assert r.violations == ()
    events = seen[0].events
    assert any(e.endswith("b1 shutdown complete: controlled shutdown succeeded") for e in events), \
        [e for e in events if "b1" in e and "shutdown" in e]
    assert any(e.endswith("b1 start (incarnation 2)") for e in events)

    sim = Sim(1, SimBoot())
    try:
        assignment, tp = _started_with_topic(sim)
        checker = Checker(sim, SimClient(sim), [tp], assignment)
        leader = zk_partition_state(sim, tp).leader
        sim.on_stopped(leader, BrokerShutdownComplete(False, "gave up"))  # not acknowledged: nothing to check
        assert checker.check() == []
        sim.on_stopped(leader, BrokerShutdownComplete(True, "controlled shutdown succeeded"))
        assert checker.check() == [f"t-0: b{leader}'s controlled shutdown succeeded at 4000 ms but it still leads "
                                   f"(ISR {list(zk_partition_state(sim, tp).isr)})"]
    finally:
        sim.close()


def test_a_restart_starts_a_broker_once_and_waits_for_its_old_session() -> None:
    """A restart due twice (an outage scheduled while a deferred restart waited) starts the broker once, and a
    broker still stopping at its restart is killed, then started once its session has expired."""
    from sim.run import _restart

    sim = Sim(1, SimBoot())
    try:
        for b in sim.brokers:
            sim.start(b)
        sim.run_for(2000)
        sim.crash(1)
        sim.run_for(7000)  # past the session timeout
        assert _restart(sim, [1, 1]) == [] and sim.brokers[1].up and sim.brokers[1].incarnation == 2
        assert _restart(sim, [1]) == []  # up already: nothing to do, nothing left due
        sim.run_for(2000)
        sim.brokers[2].stopping = True  # as if its controlled shutdown were still running
        assert _restart(sim, [2]) == [2] and not sim.brokers[2].up  # killed; its session lives on
        sim.run_for(7000)
        assert _restart(sim, [2]) == [] and sim.brokers[2].incarnation == 2
    finally:
        sim.close()


def test_a_broker_still_in_its_controlled_shutdown_at_the_end_restarts_with_the_others(plain_partitions: None) -> None:
    """Seed 23 stops broker 0 at the last step, cut off from broker 1: its controlled shutdown retries and ends
    during the settling; it must be started again before the final checks (every replica back in the ISR)."""
    assert [str(f) for f in schedule(23, 50, 3)][-2:] == ["partition b0|b1", "stop b0"]
    assert run_seed(23, 50, SimBoot()).violations == ()


def _controller_of(sim: Sim, broker_id: int) -> object:
    from actors import names

    rt = sim.brokers[broker_id].rt
    return getattr(rt.instances.get(names.CONTROLLER), "controller", None)


def test_a_paused_controller_loses_its_session_and_comes_back_as_a_broker_with_a_new_one() -> None:
    """SIGSTOP longer than the session timeout: the paused process handles nothing, the server expires its session
    (registration and /controller gone, another broker elected); on SIGCONT it hears SUSPENDED and EXPIRED, gets a
    new session (REESTABLISHED), registers again and is no longer the controller."""
    from sim.runtime import SESSION_TIMEOUT_MS

    sim = Sim(1, SimBoot())
    try:
        for b in sim.brokers:
            sim.start(b)
        sim.run_for(2000)
        create_topic(sim, "t", 1, 3)
        sim.run_for(2000)
        leader = json.loads(sim.zk.nodes["/controller"].data)["brokerid"]
        assert _controller_of(sim, leader).is_active
        paused = sim.brokers[leader]
        old_session, seq = paused.session, paused.rt.seq
        sim.pause(leader)
        sim.run_for(SESSION_TIMEOUT_MS + 2000)
        assert paused.rt.seq == seq and paused.held  # nothing handled, its inputs waiting
        assert str(leader) not in sim.zk.nodes["/brokers/ids"].children
        other = json.loads(sim.zk.nodes["/controller"].data)["brokerid"]
        assert other != leader and _controller_of(sim, other).is_active
        assert _controller_of(sim, leader).is_active  # it does not know yet: a zombie, fenced by the epoch
        assert not any(isinstance(body, ZkSessionEvent) for _, body, _, _ in paused.held)  # kazoo saw nothing
        sim.resume(leader)
        assert paused.session != old_session and not paused.held
        assert [e.state for e in sim.zk.sessions[paused.session].events] == []  # REESTABLISHED: handed on
        told: list[str] = []
        original = paused.rt.deliver

        def spy(to: str, body: object, sender: str, cause: object = None, at_ms: object = None) -> None:
            if isinstance(body, ZkSessionEvent):
                told.append(body.state)
            original(to, body, sender, cause, at_ms=at_ms)

        paused.rt.deliver = spy  # type: ignore[method-assign]
        sim.run_for(3000)
        # the connection closed under it (SUSPENDED), the expiry learnt on reconnecting, then its new session
        assert told == ["SUSPENDED", "EXPIRED", "REESTABLISHED"]
        assert str(leader) in sim.zk.nodes["/brokers/ids"].children
        assert not _controller_of(sim, leader).is_active
        tp = TopicPartition("t", 0)
        assert sorted(zk_partition_state(sim, tp).isr) == [0, 1, 2]  # back in the ISR
    finally:
        sim.close()


def test_a_paused_controller_gets_on_resume_the_watch_events_sent_before_its_session_expired() -> None:
    """kazoo reads what the server sent before it closed the connection: a watch event that fired while the process
    was stopped but its session alive reaches the zombie controller when it resumes, before SUSPENDED and EXPIRED
    (the model dropped it at the expiry, as for a disconnected client, until 2026-11-26 14:00)."""
    from messages.zk import ZkWatchEvent

    sim = Sim(1, SimBoot())
    try:
        for b in sim.brokers:
            sim.start(b)
        sim.run_for(2000)
        leader = json.loads(sim.zk.nodes["/controller"].data)["brokerid"]
        paused = sim.brokers[leader]
        sim.pause(leader)
        sim.run_for(500)
        create_topic(sim, "u", 1, 3)  # /brokers/topics changes: the controller's child watch fires
        sim.run_for(7000)
        assert json.loads(sim.zk.nodes["/controller"].data)["brokerid"] != leader  # its session expired meanwhile
        told: list[object] = []
        original = paused.rt.deliver

        def spy(to: str, body: object, sender: str, cause: object = None, at_ms: object = None) -> None:
            if isinstance(body, ZkWatchEvent | ZkSessionEvent):
                told.append(body.path if isinstance(body, ZkWatchEvent) else body.state)
            original(to, body, sender, cause, at_ms=at_ms)

        paused.rt.deliver = spy  # type: ignore[method-assign]
        sim.resume(leader)
        sim.run_for(100)
        assert told == ["/brokers/topics", "SUSPENDED", "EXPIRED", "REESTABLISHED"]
        assert sim.zombie_writes == []  # what it did as a zombie was refused (CONTROLLER_MOVED)
    finally:
        sim.close()


def test_a_pause_can_land_right_after_a_zookeeper_request_whose_answer_then_waits() -> None:
    """pause-mid: the SIGSTOP lands right after the broker's next ZooKeeper request goes out; the server answers it
    (the connection is up), and the answer waits with the rest until the process resumes."""
    from messages.zk import ZkResponse

    sim = Sim(1, SimBoot())
    try:
        for b in sim.brokers:
            sim.start(b)
        sim.run_for(2000)
        leader = json.loads(sim.zk.nodes["/controller"].data)["brokerid"]
        paused = sim.brokers[leader]
        sim.pause_at_next_zk_request(leader, 1000)
        sim.run_for(100)
        assert not paused.paused  # nothing asked of ZooKeeper yet
        create_topic(sim, "u", 1, 3)  # the controller reads the new topic's assignment
        sim.run_for(50)
        assert paused.paused and not paused.pause_armed
        assert [type(body) for _, body, _, _ in paused.held][:1] == [ZkResponse]
        sim.run_for(900)
        assert "/brokers/topics/u/partitions" not in sim.zk.nodes  # its next steps wait for the resume
        sim.resume(leader)  # within its session: it carries on as if nothing happened
        sim.run_for(500)
        assert "/brokers/topics/u/partitions/0/state" in sim.zk.nodes
        assert json.loads(sim.zk.nodes["/controller"].data)["brokerid"] == leader
    finally:
        sim.close()


def test_a_write_of_a_deposed_controller_that_takes_effect_is_a_violation() -> None:
    """The invariant behind the zk-write-unfenced mutation: a write asked for by the active controller of epoch E
    that succeeds while /controller_epoch is later is reported; one refused (CONTROLLER_MOVED) is not."""
    from messages.zk import CONTROLLER_MOVED, OK, SetData, ZkBatch, ZkOpResult

    sim = Sim(1, SimBoot())
    try:
        for b in sim.brokers:
            sim.start(b)
        sim.run_for(2000)
        epoch = int(sim.zk.nodes["/controller_epoch"].data)
        batch = ZkBatch((SetData("/brokers/topics/t/partitions/0/state", "{}"),))
        sim.check_controller_write(sim.brokers[0], epoch, batch, (ZkOpResult(OK),))
        assert sim.zombie_writes == []  # its epoch is current
        sim.check_controller_write(sim.brokers[0], epoch - 1, batch, (ZkOpResult(CONTROLLER_MOVED),))
        assert sim.zombie_writes == []  # fenced
        sim.check_controller_write(sim.brokers[0], epoch - 1, batch, (ZkOpResult(OK),))
        assert sim.zombie_writes == [
            f"b0's controller of epoch {epoch - 1} wrote SetData /brokers/topics/t/partitions/0/state at 2000.000 ms, "
            f"/controller_epoch being {epoch}: a zombie controller's write took effect"]
        client = SimClient(sim)
        tps = [TopicPartition("t", 0)]
        assert sim.zombie_writes[0] in Checker(sim, client, tps, {tps[0]: (0, 1, 2)}).check()
    finally:
        sim.close()


def test_the_unfenced_zombie_controller_of_seed_43_is_caught_and_the_fenced_one_is_not() -> None:
    """`kactor sim --mutation zk-write-unfenced --seeds 1-1000 --stop-at-first` stops at seed 43: controller b0 is
    paused at 41.2 s (a pause-mid that found no ZooKeeper request in its step), an ISR change notification's watch
    event reaches its socket, its session expires at 47.2 s and b1 is elected with epoch 4; on resume
    (48.2 s) its client has a new session while the zombie handles the watch event: it reads the notifications and
    deletes isr_change_0000000006 (the one b0's own broker had just written; 0000000004 before the admin operations
    of sim/admin_ops.py, whose extra topic's ISR changes are notified too). With the /controller_epoch check the
    delete is refused (CONTROLLER_MOVED); without it, it takes effect."""
    from sim import mutations

    assert run_seed(43, 50, SimBoot()).violations == ()
    undo = mutations.apply("zk-write-unfenced")
    try:
        violations = run_seed(43, 50, SimBoot()).violations
    finally:
        undo()
    assert violations == ("b0's controller of epoch 3 wrote Delete /isr_change_notification/isr_change_0000000006 "
                          "at 48204.000 ms, /controller_epoch being 4: a zombie controller's write took effect",)


def test_pauses_are_drawn_from_a_stream_of_their_own() -> None:
    """A quarter of the crashes became pauses (resumed where the restart was); every fault keeps its step, broker
    and the rest of its kind."""
    for seed in range(1, 40):
        faults = schedule(seed, 50, 3)
        was = {"pause": "crash", "pause-mid": "crash", "resume": "restart", "crash-restart": "crash",
               "power-loss": "crash", "logdir-fail": "crash", "one-way": "partition", "slow-link": "partition"}
        plain = [(f.step, min(f.a, f.b), max(f.a, f.b), was.get(f.kind, f.kind)) for f in faults]
        assert plain == [(f.step, min(f.a, f.b), max(f.a, f.b), was.get(f.kind, f.kind))
                         for f in _schedule_without_pauses(seed, 50, 3)]
    assert [str(f) for f in schedule(3, 12, 3) if f.kind != "reset"][:4] == [
        "slow-link b0|b2", "pause-mid b1", "heal b0|b2", "resume b1"]


def _schedule_without_pauses(seed: int, steps: int, brokers: int) -> list:
    import sim.faults

    share = sim.faults.PAUSE_SHARE
    sim.faults.PAUSE_SHARE = 0.0
    try:
        return schedule(seed, steps, brokers)
    finally:
        sim.faults.PAUSE_SHARE = share


@pytest.mark.parametrize("seed", [1633, 1928])
def test_a_broker_in_its_controlled_shutdown_is_not_a_healthy_cluster(seed: int) -> None:
    """Seeds 1633 and 1928 of the 2026-11-26 campaign: broker 2 is stopped; its first ControlledShutdown cannot move
    its leaderships, a preferred-replica election then does, and as a shutting-down broker it starts no fetcher for
    the partitions it now follows (Kafka's makeFollowers) while it stays in their ISR until its next attempt 5 s later
    (controlled.shutdown.retry.backoff.ms): acks=all produces wait for it, as they would on Kafka. The liveness bound
    (answered within 1 s when the cluster is healthy) no longer counts such a cluster as healthy."""
    assert "stop b2" in [str(f) for f in schedule(seed, 50, 3)]
    assert run_seed(seed, 50, SimBoot()).violations == ()


def test_quick_restarts_are_drawn_from_a_stream_of_their_own() -> None:
    """A quarter of the plain crashes restart at once (a supervisor's restart, 0.1-3 s later, within the old
    session's timeout); every fault keeps its step, broker and the rest of its kind."""
    import sim.faults

    quick = 0
    for seed in range(1, 40):
        faults = schedule(seed, 50, 3)
        quick += sum(f.kind == "crash-restart" for f in faults)
        plain = [(f.step, f.a, f.b, "crash" if f.kind == "crash-restart" else f.kind) for f in faults]
        share = sim.faults.QUICK_RESTART_SHARE
        sim.faults.QUICK_RESTART_SHARE = 0.0
        try:
            before = [(f.step, f.a, f.b, f.kind) for f in schedule(seed, 50, 3)]
        finally:
            sim.faults.QUICK_RESTART_SHARE = share
        assert plain == before
        assert all(100 <= f.after_ms <= 3000 for f in faults if f.kind == "crash-restart")
    assert quick > 0


def test_a_starting_broker_reads_no_request_before_its_start_up_ends() -> None:
    """The live transport holds a starting broker's accepted connections unread until the kafka-server actor says
    start-up has ended (6b9b8e9); the sim's network does the same on the same signal. A broker crashed and started
    again at once waits for its old session to expire before it can register: a produce sent to it meanwhile is
    read only once it serves."""
    from sim.runtime import SESSION_TIMEOUT_MS

    sim = Sim(1, SimBoot())
    try:
        assignment, tp = _started_with_topic(sim)
        leader = zk_partition_state(sim, tp).leader
        sim.crash(leader)
        sim.run_for(500)
        sim.start(leader)  # its old session still holds /brokers/ids/<id>: it waits to register
        since = len(sim.events)
        sim.run_for(500)
        starting = sim.brokers[leader]
        assert starting.up and not starting.serving and not starting.processing
        client = SimClient(sim)
        assert client.produce(tp)  # ZooKeeper still names it leader: the controller has not seen it go
        sim.run_for(1000)
        # accepted, not read (with the followers' fetches, whose fetchers still point at it)
        assert client.answers == [] and starting.unread
        assert not any(f"b{leader} edge:net>" in e for e in sim.events[since:])
        sim.run_for(SESSION_TIMEOUT_MS)
        assert starting.serving and starting.processing and starting.unread == []
        assert len(client.answers) == 1 and client.answers[0][2] != "UNKNOWN_SERVER_ERROR"
        assert Checker(sim, client, [tp], assignment).check() == []
    finally:
        sim.close()


def test_a_controller_request_applied_by_a_later_incarnation_is_a_violation() -> None:
    """KIP-380's broker epoch: a LeaderAndIsr, UpdateMetadata or StopReplica sent for broker epoch E is applied only
    by the incarnation registered with E; a later one (registered later, or not yet: its start-up not ended) must
    refuse it STALE_BROKER_EPOCH or not read it."""
    from messages.common import Errors
    from messages.requests import UpdateMetadataResponse

    sim = Sim(1, SimBoot())
    try:
        for b in sim.brokers:
            sim.start(b)
        sim.run_for(2000)
        b1 = sim.brokers[1]
        mine = b1.registered_epoch
        assert mine is not None and mine == sim.zk.nodes["/brokers/ids/1"].czxid
        sim.check_broker_epoch(b1, mine, UpdateMetadataResponse(Errors.NONE))
        sim.check_broker_epoch(b1, -1, UpdateMetadataResponse(Errors.NONE))  # -1: no epoch named, never stale
        sim.check_broker_epoch(b1, mine - 1, UpdateMetadataResponse(Errors.STALE_BROKER_EPOCH))  # refused
        assert sim.stale_applied == []
        sim.check_broker_epoch(b1, mine - 1, UpdateMetadataResponse(Errors.NONE))
        b1.registered_epoch = None  # as if its start-up had not ended
        sim.check_broker_epoch(b1, mine, UpdateMetadataResponse(Errors.NONE))
        assert [v.split(") applied")[0] for v in sim.stale_applied] == [
            f"b1 (incarnation 1, broker epoch {mine}", "b1 (incarnation 1, start-up not ended"]
        client = SimClient(sim)
        assert sim.stale_applied[0] in Checker(sim, client, [], {}).check()
    finally:
        sim.close()


def test_serving_before_start_up_ends_is_caught_at_seed_1() -> None:
    """`kactor sim --mutation serve-before-startup --seeds 1-1000 --stop-at-first` stops at seed 1 (seed 45 before
    the network faults, the group, the transactions and the admin operations changed the runs; 11 before the clients
    and the disk's faults): b2 crashes at step 0 and is started again at once (a quick restart); while it waits for
    its old session to expire the controller, which still counts it alive, sends it LeaderAndIsr for its old broker
    epoch. Read before start-up ends (the transport before 6b9b8e9), the new incarnation applies it; held until then,
    it is refused STALE_BROKER_EPOCH."""
    from sim import mutations

    assert str(schedule(1, 50, 3)[0]) == "crash-restart b2"
    assert run_seed(1, 50, SimBoot()).violations == ()
    undo = mutations.apply("serve-before-startup")
    try:
        violations = run_seed(1, 50, SimBoot()).violations
    finally:
        undo()
    assert violations[0] == ("b2 (incarnation 2, start-up not ended) applied the LeaderAndIsr request sent for broker "
                             "epoch 55 at 6207.339 ms: a request meant for an earlier incarnation")


@pytest.mark.parametrize(("mutation", "seed", "caught"), [
    # a replica led epoch 2 of __transaction_state-0 without writing, then follows: its epoch cache keeps it (seed 48
    # on __consumer_offsets-0 before the coordinators waited for the high watermark, 144 before the consumer group
    # ran on a third of the seeds; sim-0 at seed 6 before the group)
    ("truncate-to-end-keeps-epochs", 7, "__transaction_state-0: follower b1 fetches from b0 with leader epoch 2 "
                                        "starting at its log end 1 in its epoch cache (an epoch it led without "
                                        "writing, not trimmed)"),
    # a quiet partition: no next produce's append completes the parked produce a second later
    ("make-leader-completes-nothing", 1, "sim-1: produce 's1-23' at offset 12 below leader b1's high watermark 14 "
                                         "since 22200 ms, still unanswered"),
    # retention deletes a follower's truncated segment: acknowledged records gone (here of the admin operations'
    # RF-2 topic, whose leader is then the follower that lost them; seed 668 on sim-0 before)
    ("segment-truncate-timestamp", 454, "sim-x1-0: acknowledged 's454-2' at offset 0, its leader has None at the "
                                        "end"),
    # a new follower truncating to its high watermark drops acknowledged records the new leader then lacks: the
    # idempotent producer's next batch finds the sequence it follows gone
    ("truncate-to-high-watermark", 41, "Produce 'i41-36' answered OUT_OF_ORDER_SEQUENCE_NUMBER"),
])
def test_each_mutation_is_caught_at_the_first_seed_of_its_campaign(mutation: str, seed: int, caught: str) -> None:
    """The first seed of `kactor sim --mutation NAME --seeds 1-1000 --steps 50 --jobs 2 --stop-at-first` on the
    merged network faults, consumer group, transactions and admin operations (b0e9ce3, 2026-11-27 04:33-04:35;
    truncate-to-end-keeps-epochs at 82d95de; docs/simulation.md's Power table): clean without the mutation, caught
    with it."""
    from sim import mutations

    assert run_seed(seed, 50, SimBoot()).violations == ()
    undo = mutations.apply(mutation)
    try:
        violations = run_seed(seed, 50, SimBoot()).violations
    finally:
        undo()
    assert violations[0] == caught


def test_a_fetching_follower_with_an_epoch_at_its_log_end_is_caught() -> None:
    """Log.truncateTo trims the epoch cache from the log end even when it truncates nothing (KAFKA-10706): a follower
    that is fetching holds no epoch starting at or past its log end. One left there (as a leader assigns it, here
    forged) is reported; a leader's is not."""
    sim = Sim(1, SimBoot())
    try:
        assignment, tp = _started_with_topic(sim)
        client = SimClient(sim)
        client.produce(tp)
        sim.run_for(1000)
        checker = Checker(sim, client, [tp], assignment)
        assert checker.check() == []
        state = zk_partition_state(sim, tp)
        leader = hosted_partition(sim, state.leader, tp)
        leader.log.assign_epoch_start_offset(state.leader_epoch + 1, leader.log.log_end_offset)
        assert checker.check() == []  # a leader's new epoch starts at its log end
        follower_id = next(b for b in state.isr if b != state.leader)
        log = hosted_partition(sim, follower_id, tp).log
        log.assign_epoch_start_offset(state.leader_epoch + 1, log.log_end_offset)
        assert checker.check() == [
            f"t-0: follower b{follower_id} fetches from b{state.leader} with leader epoch {state.leader_epoch + 1} "
            f"starting at its log end 1 in its epoch cache (an epoch it led without writing, not trimmed)"]
    finally:
        sim.close()


def test_a_failing_seed_with_a_disk_fault_gives_its_replay_command_and_no_warning(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A trace carries what a broker's disk lost (the next incarnation's header "disk"), so a failing seed whose
    schedule has a power loss prints the replay command as any other seed does, with no warning that it diverges."""
    import argparse

    from kactor.cli.cmd_sim import Outcome, _print_failure
    from sim.run import SeedResult

    args = argparse.Namespace(steps=4, brokers=3, mutation=None)
    result = SeedResult(42, 4, ("a violation",), 1, 1, 10, 4000.0, 0.1, "digest")
    _print_failure(Outcome(result, "/traces/seed-42"), args)
    out = capsys.readouterr().out.splitlines()
    # b2's power loss at step 3 (and the hostile client's start, which has no part here)
    assert [str(f) for f in schedule(42, 4, 3)] == ["one-way b1|b0", "power-loss b2", "hostile"]
    assert out[2:] == ["  traces: /traces/seed-42 (kactor trace replay --check /traces/seed-42)",
                       "  rerun: kactor sim --seeds 42 --steps 4 --brokers 3"]
    assert not any("replay:" in line for line in out)
