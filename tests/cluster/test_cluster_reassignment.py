"""Issue #6 on a real cluster: partition reassignment (KIP-455 form, reference §8.2) read from the znodes and the
brokers' log dirs — a simple move off the controller, a move to a stopped broker, and a move resumed by a new
controller.

Leader epochs follow the reference's progression for ControllerIntegrationTest's moves: [controller] → [other]
with both up is 0 → A1 (1) → ISR expands (no bump) → B3 reassign election (2) → B4 ISR shrink (3); with the target
down progress stops after A1 (1) and on its startup the resumed A1 (2), B3 (3), B4 (4) follow.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cluster_helpers import produce, run_kactor, segment_records, topic_dirs

from messages.common import Errors

pytestmark = pytest.mark.cluster

BROKERS = (0, 1, 2)


def _execute(c, tmp_path: Path, topic: str, partition: int, replicas: list[int]) -> None:  # type: ignore[no-untyped-def]
    plan = tmp_path / f"plan-{topic}-{partition}-{'-'.join(map(str, replicas))}.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": partition,
                                                              "replicas": replicas}]}))
    out = run_kactor("reassign-partitions", "--zookeeper", c.connect_string, "--execute",
                     "--reassignment-json-file", str(plan))
    assert "Successfully started" in out.stdout, out.stdout


def _write_reassignment(c, topic: str, partition: int, replicas: list[int]) -> None:  # type: ignore[no-untyped-def]
    """/admin/reassign_partitions written directly, as ControllerIntegrationTest does (zkClient
    .createPartitionReassignment): the admin tool refuses a broker that is not registered."""
    c.zk.create("/admin/reassign_partitions", json.dumps(
        {"version": 1, "partitions": [{"topic": topic, "partition": partition, "replicas": replicas}]}).encode(),
        makepath=True)


def _topic_znode(replicas: list[int], adding: list[int] | None = None, removing: list[int] | None = None) -> dict:
    """Kafka 2.6's topic znode (version 2) for a one-partition topic."""
    return {"version": 2, "partitions": {"0": replicas}, "adding_replicas": {"0": adding} if adding else {},
            "removing_replicas": {"0": removing} if removing else {}}


def _done(c, topic: str, target: list[int], epoch: int) -> dict:  # type: ignore[no-untyped-def]
    """Wait until the reassignment finished: admin znode gone, assignment = target, leader epoch reached."""
    c.wait(lambda: not c.zk.exists("/admin/reassign_partitions"), what="/admin/reassign_partitions removed")
    c.wait(lambda: c.json(f"/brokers/topics/{topic}") == _topic_znode(target),
           what=f"/brokers/topics/{topic} = {target} with no adding/removing replicas")
    return c.wait_partition(topic, 0, lambda s: s["leader_epoch"] >= epoch, what=f"{topic}-0 leader_epoch {epoch}")


def test_reassign_from_controller_to_other(start_cluster, tmp_path: Path) -> None:
    c = start_cluster(3)
    ctrl = c.controller_id()
    assert ctrl is not None
    other = next(b for b in BROKERS if b != ctrl)
    c.create_topic("t", assignment={0: [ctrl]})
    assert produce(c, "t", 0, ("a", "b")).error == Errors.NONE
    _execute(c, tmp_path, "t", 0, [other])
    st = _done(c, "t", [other], 3)
    assert st == {"controller_epoch": 1, "leader": other, "version": 1, "leader_epoch": 3, "isr": [other]}
    # the removed replica's log is deleted (B5), the new one holds the records it fetched
    c.wait(lambda: topic_dirs(c, ctrl, "t") == [], what=f"t-0 deleted on broker {ctrl}")
    assert topic_dirs(c, other, "t") == ["t-0"]
    assert [r[2] for r in segment_records(c, other, "t", 0)] == ["a", "b"]
    verify = run_kactor("reassign-partitions", "--zookeeper", c.connect_string, "--verify",
                        "--reassignment-json-file", str(next(tmp_path.glob("plan-*.json"))))
    assert "Reassignment of partition t-0 is complete." in verify.stdout, verify.stdout


def test_reassign_to_stopped_broker_waits_then_completes(start_cluster, tmp_path: Path) -> None:
    c = start_cluster(3)
    ctrl = c.controller_id()
    assert ctrl is not None
    target = next(b for b in BROKERS if b != ctrl)
    c.create_topic("t", assignment={0: [ctrl]})
    assert c.stop_broker(target) == 0
    c.wait(lambda: target not in c.live_brokers(), what=f"broker {target} deregistered")
    _write_reassignment(c, "t", 0, [target])
    # U + A1: the topic znode carries the adding / removing replicas; the epoch is bumped once and progress stops
    c.wait(lambda: c.json("/brokers/topics/t") == _topic_znode([target, ctrl], [target], [ctrl]),
           what="RS [target, ctrl], AR [target], RR [ctrl] in /brokers/topics/t")
    st = c.wait_partition("t", 0, lambda s: s["leader_epoch"] == 1, what="t-0 leader_epoch 1 (A1)")
    assert st == {"controller_epoch": 1, "leader": ctrl, "version": 1, "leader_epoch": 1, "isr": [ctrl]}
    assert c.zk.exists("/admin/reassign_partitions")

    c.restart(target)
    st = _done(c, "t", [target], 4)
    assert st == {"controller_epoch": 1, "leader": target, "version": 1, "leader_epoch": 4, "isr": [target]}
    c.wait(lambda: topic_dirs(c, ctrl, "t") == [], what=f"t-0 deleted on broker {ctrl}")
    assert topic_dirs(c, target, "t") == ["t-0"]


def test_reassignment_resumed_after_controller_failover(start_cluster, tmp_path: Path) -> None:
    c = start_cluster(3)
    old = c.controller_id()
    assert old is not None
    source, target = (b for b in BROKERS if b != old)
    c.create_topic("t", assignment={0: [source]})
    assert produce(c, "t", 0, ("x",)).error == Errors.NONE
    assert c.stop_broker(target) == 0
    c.wait(lambda: target not in c.live_brokers(), what=f"broker {target} deregistered")
    _write_reassignment(c, "t", 0, [target])
    c.wait(lambda: c.json("/brokers/topics/t") == _topic_znode([target, source], [target], [source]),
           what="reassignment started (RS [target, source], AR [target], RR [source])")
    c.wait_partition("t", 0, lambda s: s["leader_epoch"] == 1, what="t-0 leader_epoch 1 (A1)")

    c.kill(old)  # the controller's broker crashes mid-reassignment
    c.wait(lambda: c.controller_id() == source and c.controller_epoch() == 2,
           what=f"broker {source} elected controller (epoch 2)")
    # the new controller resumes from the topic znode and /admin/reassign_partitions: A1 again (epoch 2)
    st = c.wait_partition("t", 0, lambda s: s["controller_epoch"] == 2, what="t-0 touched by the new controller")
    assert st == {"controller_epoch": 2, "leader": source, "version": 1, "leader_epoch": 2, "isr": [source]}
    assert c.json("/brokers/topics/t") == _topic_znode([target, source], [target], [source])

    c.restart(target)
    # startup: resumed A1 (3); ISR expands; B3 reassign election (4); B4 ISR shrink (5)
    st = _done(c, "t", [target], 5)
    assert st == {"controller_epoch": 2, "leader": target, "version": 1, "leader_epoch": 5,
                  "isr": [target]}
    c.wait(lambda: topic_dirs(c, source, "t") == [], what=f"t-0 deleted on broker {source}")
    assert [r[2] for r in segment_records(c, target, "t", 0)] == ["x"]
