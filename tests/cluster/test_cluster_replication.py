"""Issue #5 on a real cluster: the replication path (produce → leader log → every follower's log and high watermark),
ISR shrink / propagation / rejoin around a SIGSTOP'd follower, and a failed log dir taking its replicas offline.

Broker state is read from outside the processes only: the partitions' log files and ``replication-offset-checkpoint``
files (Kafka's formats), ZooKeeper's znodes, and each broker's MetadataCache through the kactor-private
DescribeMetadataCache API (api key 10000, core/api/kactor_private.py) over Kafka's protocol.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from typing import Any

import pytest
from cluster_helpers import (
    TEST_SESSION_TIMEOUT_MS,
    Cluster,
    ask,
    now_ms,
    partition_dir_records,
    run_kactor,
    wait_cached,
)

from core.broker.checkpoints import REPLICATION_OFFSET_CHECKPOINT, read_offset_checkpoint
from kactor.records import values_batch
from messages.common import Errors, TopicPartition
from messages.replication import (
    ProducePartition,
    ProducePartitionResponse,
    ProduceRequest,
    ProduceResponse,
)

pytestmark = pytest.mark.cluster

# -- readers -----------------------------------------------------------------------------------------------------------
def produce(c: Cluster, broker_id: int, tp: TopicPartition, values: list[str], acks: int = 1
            ) -> ProducePartitionResponse:
    """One batch of ``values`` to ``tp`` on broker ``broker_id``; the partition's answer."""
    answer = ask(c, broker_id, ProduceRequest(acks, 10000, (ProducePartition(tp, values_batch(values, now_ms())),)),
                 15.0)
    assert isinstance(answer, ProduceResponse)
    (result,) = answer.partitions
    return result


def produce_once_led(c: Cluster, broker_id: int, tp: TopicPartition, values: list[str]) -> Errors:
    """``produce`` at acks=-1 to a replica the state znode names leader, retried while it answers the retriable
    UNKNOWN_TOPIC_OR_PARTITION (it has not handled its LeaderAndIsr yet; nothing was written), as a client retries;
    the first other answer's error."""
    answers: list[Errors] = []

    def answered() -> bool:
        answers.append(produce(c, broker_id, tp, values, acks=-1).error)
        return answers[-1] != Errors.UNKNOWN_TOPIC_OR_PARTITION
    c.wait(answered, 30, f"{tp} led by broker {broker_id}")
    return answers[-1]


def log_values(log_dir: str, tp: TopicPartition) -> list[str] | None:
    """The record values of ``tp``'s segments in ``log_dir``."""
    path = os.path.join(log_dir, f"{tp.topic}-{tp.partition}")
    if not os.path.isdir(path):
        return None
    records = partition_dir_records(path)
    assert [r[0] for r in records] == list(range(len(records))), path  # offsets are dense from 0
    return [r[2] for r in records]


def hw_checkpoint(log_dir: str) -> dict[TopicPartition, int]:
    return read_offset_checkpoint(os.path.join(log_dir, REPLICATION_OFFSET_CHECKPOINT))


def state_and_version(c: Cluster, tp: TopicPartition) -> tuple[dict[str, Any], int]:
    data, stat = c.zk.get(f"/brokers/topics/{tp.topic}/partitions/{tp.partition}/state")
    return json.loads(data), stat.version


def notifications_consumed(c: Cluster, path: str, cversion_before: int) -> bool:
    """One sequential child was created under ``path`` since ``cversion_before`` and the controller deleted it
    again (a create and a delete each bump the parent's cversion)."""
    stat = c.zk.exists(path)
    assert stat.cversion <= cversion_before + 2, f"more than one notification under {path}"
    return stat.cversion == cversion_before + 2 and stat.numChildren == 0


# -- tests -------------------------------------------------------------------------------------------------------------
def test_produced_records_reach_every_follower_log_and_high_watermark_and_produce_cli_errors(start_cluster) -> None:
    c = start_cluster(3, overrides=("replica.high.watermark.checkpoint.interval.ms=1000",))
    c.create_topic("rep", partitions=3, replication_factor=3)
    leaders = {p: c.wait_partition("rep", p, lambda st: len(st["isr"]) == 3)["leader"] for p in range(3)}
    out = run_kactor("produce", "--zookeeper", c.connect_string, "--topic", "rep", "--count", "30",
                     "--acks", "all").stdout.splitlines()
    assert out == [f"rep-{p}: 10 records at base offset 0 (leader {leaders[p]})" for p in range(3)]
    out = run_kactor("produce", "--zookeeper", c.connect_string, "--topic", "rep", "--partition", "1", "--count",
                     "5", "--value-prefix", "more-").stdout.splitlines()
    assert out == [f"rep-1: 5 records at base offset 10 (leader {leaders[1]})"]
    expected = {p: [f"record-{i}" for i in range(30) if i % 3 == p] for p in range(3)}
    expected[1] += [f"more-{i}" for i in range(5)]
    for b in range(3):
        for p in range(3):
            tp = TopicPartition("rep", p)
            c.wait(lambda b=b, tp=tp, p=p: log_values(c.log_dir(b), tp) == expected[p], 30,
                   f"broker {b}'s log of {tp} to hold {len(expected[p])} records")
        # followers take the leader's HW from their fetches and checkpoint it like the leader
        c.wait(lambda b=b: hw_checkpoint(c.log_dir(b)) == {TopicPartition("rep", p): len(expected[p])
                                                           for p in range(3)},
               30, f"broker {b}'s replication-offset-checkpoint at the high watermarks")
    with open(os.path.join(c.log_dir(0), REPLICATION_OFFSET_CHECKPOINT)) as f:
        assert f.read() == "0\n3\nrep 0 10\nrep 1 15\nrep 2 10\n"  # Kafka's format: version, count, entries

    # the CLI's one-line errors: unknown topic / partition, unreachable leader, no leader
    for args, message in ((("--topic", "nope"), "Topic nope does not exist"),
                          (("--topic", "rep", "--partition", "3"), "Partition 3 of topic rep does not exist")):
        proc = run_kactor("produce", "--zookeeper", c.connect_string, *args, "--count", "1", check=False)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 1 and len(lines) == 1 and lines[0].startswith(f"kactor produce: {message}")
    solo = next(b for b in range(3) if b != c.controller_id())
    c.create_topic("solo", assignment={0: [solo]})
    c.wait_partition("solo", 0, lambda st: st["leader"] == solo)
    c.kill(solo)  # its registration lives until the session expires: the endpoint refuses connections meanwhile
    proc = run_kactor("produce", "--zookeeper", c.connect_string, "--topic", "solo", "--count", "1",
                      "--retries", "0", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    if solo in c.live_brokers():  # (a very slow start of the CLI may miss the window)
        assert f"cannot reach leader {solo} of solo-0" in proc.stderr
    c.wait_partition("solo", 0, lambda st: st["leader"] == -1, TEST_SESSION_TIMEOUT_MS / 1000 + 20)
    proc = run_kactor("produce", "--zookeeper", c.connect_string, "--topic", "solo", "--count", "1", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == f"kactor produce: solo-0 has no leader (leader -1, ISR [{solo}])"


def test_sigstopped_follower_leaves_isr_metadata_follows_and_sigcont_rejoins(start_cluster) -> None:
    """replica.lag.time.max.ms=1000: the leader's isr-expiration check (every 500 ms) drops the stopped follower
    1–1.5 s after its last fetch — well before its ZooKeeper session (4 s, pings every ~1.3 s) can expire, so the
    shrink is the leader's conditional write (zkVersion +1, leader epoch and controller epoch kept), not the
    controller's (which would bump the leader epoch). The follower then stays stopped past the blackout (5 s) so
    the leader's /isr_change_notification is published and the controller's UpdateMetadata reaches every live
    broker; meanwhile its session expires, so on SIGCONT it re-registers (RegisterBrokerAndReelect), resumes
    fetching and the leader expands the ISR again (zkVersion +2), which again reaches every broker."""
    c = start_cluster(3, overrides=("replica.lag.time.max.ms=1000",))
    controller = c.controller_id()
    follower, leader = [b for b in range(3) if b != controller]
    other = controller
    tp = TopicPartition("lag", 0)
    c.create_topic("lag", assignment={0: [leader, follower, other]})
    st0 = c.wait_partition("lag", 0, lambda st: st["leader"] == leader and len(st["isr"]) == 3)
    for b in range(3):
        wait_cached(c, b, tp, lambda s: len(s.isr) == 3, f"to know {tp}")
    assert produce(c, leader, tp, [f"a{i}" for i in range(5)], acks=-1).error == Errors.NONE
    st0, v0 = state_and_version(c, tp)
    assert st0 == {"version": 1, "leader": leader, "leader_epoch": 0, "controller_epoch": c.controller_epoch(),
                   "isr": [leader, follower, other]}
    cv0 = c.zk.exists("/isr_change_notification").cversion

    c.lc.signal_broker(follower, signal.SIGSTOP)
    try:
        assert produce(c, leader, tp, [f"b{i}" for i in range(5)]).error == Errors.NONE
        c.wait_partition("lag", 0, lambda st: follower not in st["isr"], 10, f"{follower} to leave the ISR")
        st1, v1 = state_and_version(c, tp)
        assert st1 == {**st0, "isr": [leader, other]} and v1 == v0 + 1
        # the follower's session expires while it is stopped; the controller finds it already out of the ISR
        c.wait(lambda: follower not in c.live_brokers(), TEST_SESSION_TIMEOUT_MS / 1000 + 10,
               f"broker {follower}'s session to expire")
        c.wait(lambda: notifications_consumed(c, "/isr_change_notification", cv0), 30,
               "the leader's isr_change notification, consumed by the controller")
        for b in (leader, other):
            s = wait_cached(c, b, tp, lambda s: s.isr == (leader, other) and s.zk_version == v1,
                            f"to show ISR [{leader}, {other}]")
            assert (s.leader, s.leader_epoch, s.controller_epoch) == (leader, 0, st0["controller_epoch"])
        assert state_and_version(c, tp) == (st1, v1)  # the broker failure did not rewrite the state
    finally:
        c.lc.signal_broker(follower, signal.SIGCONT)

    c.wait(lambda: follower in c.live_brokers(), 30, f"broker {follower} to re-register")
    c.wait_partition("lag", 0, lambda st: follower in st["isr"], 30, f"{follower} to rejoin the ISR")
    st2, v2 = state_and_version(c, tp)
    assert st2 == {**st0, "isr": [leader, other, follower]} and v2 == v0 + 2
    for b in range(3):
        wait_cached(c, b, tp, lambda s: s.isr == (leader, other, follower) and s.zk_version == v2,
                    f"to show {follower} back in the ISR")
    c.wait(lambda: log_values(c.log_dir(follower), tp) == [f"a{i}" for i in range(5)] + [f"b{i}" for i in range(5)],
           30, "the follower to catch up")


def test_failed_log_dir_takes_replicas_offline_and_leadership_moves(start_cluster) -> None:
    """Each broker has two log dirs; one dir of a leading broker is replaced by a file. Its replicas there go
    Offline: exactly one /log_dir_event_notification for the controller, which moves their leadership (leader
    epoch +1, the broker out of the ISR and listed as an offline replica in every broker's metadata), and the
    broker answers KAFKA_STORAGE_ERROR for them. Its replicas in the other dir stay online and leading."""
    c = start_cluster(3, overrides=("replica.high.watermark.checkpoint.interval.ms=1000",), start=False)
    base_args = c.lc.broker_args

    def two_dirs(broker_id: int) -> list[str]:
        root = c.log_dir(broker_id)
        return [*base_args(broker_id), "--override", f"log.dirs={root}/d0,{root}/d1"]

    c.lc.broker_args = two_dirs  # type: ignore[method-assign]
    c.start()
    controller = c.controller_id()
    victim = next(b for b in range(3) if b != controller)
    others = [b for b in range(3) if b != victim]
    assignment = {p: [victim, others[p % 2], others[(p + 1) % 2]] for p in range(6)}
    c.create_topic("ld", assignment=assignment)
    for p in range(6):
        c.wait_partition("ld", p, lambda st: st["leader"] == victim and len(st["isr"]) == 3)
    for p in range(6):
        # the state znode names the victim before its LeaderAndIsr is handled: a client retries the retriable
        # UNKNOWN_TOPIC_OR_PARTITION (seen in CI), which wrote nothing
        assert produce_once_led(c, victim, TopicPartition("ld", p), [f"v{p}"]) == Errors.NONE

    def dir_of(p: int) -> str:
        return next(d for d in ("d0", "d1") if os.path.isdir(os.path.join(c.log_dir(victim), d, f"ld-{p}")))

    broken = dir_of(0)
    lost = [p for p in range(6) if dir_of(p) == broken]
    kept = [p for p in range(6) if p not in lost]
    before = {p: state_and_version(c, TopicPartition("ld", p)) for p in range(6)}
    cv0 = c.zk.exists("/log_dir_event_notification").cversion

    path = os.path.join(c.log_dir(victim), broken)
    shutil.rmtree(path)
    with open(path, "w") as f:
        f.write("not a directory\n")
    # at once, before the probe takes the dir offline (its answer is then a recorded LogAppendFailed input) or after:
    # never acknowledged (before, an append to the broken dir was acknowledged from memory and lost on restart)
    assert produce(c, victim, TopicPartition("ld", lost[0]), ["w"], acks=-1).error == Errors.KAFKA_STORAGE_ERROR
    # the broker's log-dir probe notices within a second (or at once, poked by a failed checkpoint write)
    c.wait(lambda: notifications_consumed(c, "/log_dir_event_notification", cv0), 30,
           "a log_dir_event notification, consumed by the controller")
    for p in lost:
        tp = TopicPartition("ld", p)
        c.wait_partition("ld", p, lambda st: st["leader"] != victim, 30, f"leadership of {tp} to move")
        st, v = state_and_version(c, tp)
        st_before, _ = before[p]
        assert st["leader"] in others and st["leader_epoch"] == st_before["leader_epoch"] + 1
        assert st["controller_epoch"] == st_before["controller_epoch"] and victim not in st["isr"]
        assert produce(c, victim, tp, ["y"]).error == Errors.KAFKA_STORAGE_ERROR
        for b in range(3):
            wait_cached(c, b, tp, lambda s: s.leader != victim and victim in s.offline_replicas,
                        f"to list {victim} offline for {tp}")
    for p in kept:
        tp = TopicPartition("ld", p)
        assert state_and_version(c, tp) == before[p]
        assert produce(c, victim, tp, ["z"]).error == Errors.NONE
    out = run_kactor("produce", "--zookeeper", c.connect_string, "--topic", "ld", "--count", "6").stdout.splitlines()
    leaders = {p: state_and_version(c, TopicPartition("ld", p))[0]["leader"] for p in range(6)}
    assert out == [f"ld-{p}: 1 records at base offset {1 if p in lost else 2} (leader {leaders[p]})" for p in range(6)]
