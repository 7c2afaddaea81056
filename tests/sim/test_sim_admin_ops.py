"""`kactor sim`'s admin operations (sim/admin_ops.py: an extra topic created, reassigned, deleted, as the
ZooKeeper-mode tools do) and their invariants: every deletion and reassignment completes, and a follower able to
rejoin its ISR does within a bound; each invariant shown to fire when its property is broken."""

from __future__ import annotations

import pytest

from core.broker.partition import Partition
from core.controller.reassignment import PartitionReassignment
from core.controller.topic_deletion import TopicDeletionManager
from kactor.sim_boot import SimBoot
from messages.common import TopicPartition
from protocol.zk import paths
from sim.admin_ops import (
    DELETION_BOUND_MS,
    EXTRA_TOPIC,
    ISR_REJOIN_BOUND_MS,
    REASSIGNMENT_BOUND_MS,
    AdminOp,
    AdminOps,
    IsrRejoin,
    admin_schedule,
    hosts,
)
from sim.client import zk_partition_state
from sim.faults import schedule
from sim.run import Cluster, play, run_seed, start_cluster
from sim.runtime import START_MS

XTP = TopicPartition(EXTRA_TOPIC, 0)




def _play(c: Cluster, admin: AdminOps, steps: int, first: int = 0) -> list[str]:
    found: list[str] = []
    for step in range(first, first + steps):
        admin.apply(step)
        c.sim.run_for(1000.0)
        found = admin.check()
    return found


def test_the_schedule_is_a_pure_function_of_the_seed_and_moves_one_replica() -> None:
    for seed in range(1, 60):
        ops = admin_schedule(seed, 50, 3)
        assert ops == admin_schedule(seed, 50, 3)
        if not ops:  # half the seeds have none (ADMIN_SHARE)
            continue
        create, reassign = ops[0], ops[1]
        assert (create.kind, reassign.kind) == ("create", "reassign") and create.step < reassign.step
        assert len(set(create.replicas)) == len(set(reassign.replicas)) == 2
        assert len(set(create.replicas) & set(reassign.replicas)) == 1  # one kept, one added, one removed
        assert all(op.kind == "delete" and op.step >= reassign.step for op in ops[2:])
    assert 15 < sum(len(admin_schedule(s, 50, 3)) == 3 for s in range(1, 101)) < 35  # a quarter have ops, most delete
    assert admin_schedule(1, 50, 2) == [] and admin_schedule(1, 5, 3) == []


def test_create_reassign_delete_complete_and_nothing_is_left(cluster: Cluster) -> None:
    sim = cluster.sim
    admin = AdminOps(sim, [AdminOp(0, "create", EXTRA_TOPIC, (0, 1)), AdminOp(4, "reassign", EXTRA_TOPIC, (2, 1)),
                           AdminOp(6, "delete", EXTRA_TOPIC)])
    assert _play(cluster, admin, 6) == []
    assert len(admin.client.acks) == 3  # written before the reassignment, both replicas in sync
    assert admin.reassignment_done(XTP, (2, 1)) is None and XTP in admin.reassigned
    assert paths.ReassignPartitionsZNode not in sim.zk.nodes
    assert hosts(sim, 0, XTP) is None and hosts(sim, 2, XTP) == "a partition"  # b0's replica removed, b2's added
    assert _play(cluster, admin, 20, first=6) == []
    assert admin.deletion_done(EXTRA_TOPIC) and EXTRA_TOPIC in admin.metadata_checked
    assert all(hosts(sim, b, XTP) is None for b in sim.brokers)
    assert admin.settled() and admin.check_final() == []


def test_a_deletion_that_never_completes_is_reported(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    def never(self: TopicDeletionManager, topic: str):  # type: ignore[no-untyped-def]
        return
        yield

    monkeypatch.setattr(TopicDeletionManager, "_complete_delete_topic", never)
    admin = AdminOps(cluster.sim, [AdminOp(0, "create", EXTRA_TOPIC, (0, 1)), AdminOp(2, "delete", EXTRA_TOPIC)])
    assert _play(cluster, admin, int(DELETION_BOUND_MS / 1000)) == []
    found = _play(cluster, admin, 4, first=int(DELETION_BOUND_MS / 1000))
    assert len(found) == 1 and "sim-x1: deletion asked at" in found[0] and "with the cluster healthy" in found[0]
    assert not admin.settled()
    assert admin.check_final() == [found[0].split(" not complete")[0] + " not complete at the end"]


def test_a_deletion_waits_while_a_replica_is_down_and_completes_after(cluster: Cluster) -> None:
    sim = cluster.sim
    admin = AdminOps(sim, [AdminOp(0, "create", EXTRA_TOPIC, (0, 1)), AdminOp(2, "delete", EXTRA_TOPIC)])
    _play(cluster, admin, 2)
    sim.crash(1)
    assert _play(cluster, admin, 25, first=2) == []  # ineligible (TopicDeletionManager) while b1 is down
    assert not admin.deletion_done(EXTRA_TOPIC)
    sim.start(1)
    assert _play(cluster, admin, 5, first=27) == []
    assert admin.deletion_done(EXTRA_TOPIC) and hosts(sim, 1, XTP) is None


def test_a_reassignment_that_never_completes_is_reported(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    def never(self: PartitionReassignment, tp: TopicPartition, assignment: object):  # type: ignore[no-untyped-def]
        return False
        yield

    monkeypatch.setattr(PartitionReassignment, "is_reassignment_complete", never)
    admin = AdminOps(cluster.sim, [AdminOp(0, "create", EXTRA_TOPIC, (0, 1)),
                                   AdminOp(1, "reassign", EXTRA_TOPIC, (1, 2))])
    assert _play(cluster, admin, 1 + int(REASSIGNMENT_BOUND_MS / 1000)) == []
    found = _play(cluster, admin, 4, first=1 + int(REASSIGNMENT_BOUND_MS / 1000))
    assert len(found) == 1 and "sim-x1-0: reassignment [0, 1] -> [1, 2]" in found[0], found
    assert "/admin/reassign_partitions entry is still there" in found[0]
    assert [v.split(": ")[0] for v in admin.check_final()] == ["sim-x1-0"]


def _crash_and_restart_follower(c: Cluster) -> tuple[IsrRejoin, list[str]]:
    """b2 (a follower of sim-0, led by b0) crashes; once its session has expired (the controller takes it out of the
    ISR) it starts again; the rejoin check runs every second."""
    sim, tp = c.sim, TopicPartition("sim", 0)
    rejoin = IsrRejoin(sim)
    assert zk_partition_state(sim, tp).leader == 0  # type: ignore[union-attr]
    sim.crash(2)
    sim.run_for(8000.0)
    assert 2 not in zk_partition_state(sim, tp).isr  # type: ignore[union-attr]
    sim.start(2)
    found: list[str] = []
    for _ in range(int(ISR_REJOIN_BOUND_MS / 1000) + 5):
        sim.run_for(1000.0)
        found = rejoin.check(sorted(c.assignment))
    return rejoin, found


def test_a_restarted_follower_rejoins_the_isr_within_the_bound(cluster: Cluster) -> None:
    rejoin, found = _crash_and_restart_follower(cluster)
    assert found == []
    assert 2 in zk_partition_state(cluster.sim, TopicPartition("sim", 0)).isr  # type: ignore[union-attr]
    assert rejoin.waited < 3000  # back within a check or two of its registration: LeaderAndIsr, a fetch


def test_a_follower_the_leader_never_takes_back_is_reported(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Partition, "maybe_expand_isr", lambda self, follower_id: None)
    _, found = _crash_and_restart_follower(cluster)
    assert found and all("follower b2 out of the ISR" in v and "serving and connected" in v for v in found)
    assert {v.split(":")[0] for v in found} == {"sim-0", "sim-1"}


def test_a_follower_behind_a_slow_or_one_way_link_is_not_counted_as_connected(cluster: Cluster) -> None:
    """A slow link (its requests beyond their timeout) or a one-way cut stalls the follower's fetches as a cut does:
    its wait starts only once the link is healed and what it held has arrived (the first campaign on the merged
    network faults, seeds 434, 591, 594, 724, 818 and 955, reported followers out of the ISR for 16 s behind one)."""
    sim = cluster.sim
    assert sim.link_ok(0, 2)
    sim.slow_link(0, 2, 35000.0)
    assert not sim.link_ok(0, 2) and not sim.link_ok(2, 0) and sim.link_ok(0, 1)
    sim.run_for(2000.0)  # the followers' fetches go out on it
    sim.heal(0, 2)
    assert not sim.link_ok(0, 2)  # what the slow link carried is still on its way
    sim.run_for(36000.0)
    assert sim.link_ok(0, 2)
    sim.one_way_cut(2, 0)
    assert not sim.link_ok(0, 2) and not sim.link_ok(2, 0)
    rejoin = IsrRejoin(sim)
    for _ in range(int(ISR_REJOIN_BOUND_MS / 1000) + 5):
        sim.run_for(1000.0)
        assert rejoin.check(sorted(cluster.assignment)) == []


def test_seed_591_with_a_slow_link_is_clean() -> None:
    assert "slow-link b0|b1" in [str(f) for f in schedule(591, 50, 3)]
    assert run_seed(591, 50, SimBoot()).violations == ()


def test_pinned_seeds_are_clean_and_deterministic() -> None:
    # seed 5: the extra topic created at step 2 on b1, b2, reassigned at 7 (b1 -> b0), deleted at 8
    assert [str(op) for op in admin_schedule(5, 20, 3)] == [
        "create sim-x1 [1, 2]", "reassign sim-x1 [0, 2]", "delete sim-x1"]
    a = run_seed(5, 20, SimBoot())
    b = run_seed(5, 20, SimBoot())
    assert a.violations == () and a.event_digest == b.event_digest and a.delivered == b.delivered


def test_a_replica_removed_while_its_broker_was_down_keeps_its_log_as_in_kafka_2_6() -> None:
    # seed 68: sim-x1 on b2, b0; b0 stopped at step 10, the partition reassigned to b2, b1 at 13 (complete without
    # b0: no StopReplica goes to a dead broker), b0 back at 18 with its log, the topic deleted at 20 from its replicas
    # b2 and b1; b0's stray log stays (ZooKeeper-mode 2.6 never deletes one), which the deletion check leaves alone
    assert [f"{op}@{op.step}" for op in admin_schedule(68, 50, 3)] == [
        "create sim-x1 [2, 0]@7", "reassign sim-x1 [2, 1]@13", "delete sim-x1@20"]
    held: list[str | None] = []

    def look(sim, step: int) -> None:  # type: ignore[no-untyped-def]
        if step == 40:
            held.append(hosts(sim, 0, XTP))

    result = run_seed(68, 50, SimBoot(), tamper=look)
    assert result.violations == ()
    assert held == ["a log"]


def test_a_replica_whose_log_survives_the_deletion_is_reported(cluster: Cluster,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from core.broker.log_manager import LogManager

    monkeypatch.setattr(LogManager, "delete_logs", lambda self, tps: (set(), {}))  # answers success, deletes nothing
    admin = AdminOps(cluster.sim, [AdminOp(0, "create", EXTRA_TOPIC, (0, 1)), AdminOp(2, "delete", EXTRA_TOPIC)])
    found = _play(cluster, admin, 4)
    assert admin.deletion_done(EXTRA_TOPIC)
    assert found == [f"topic sim-x1 deleted at {admin.deleted[EXTRA_TOPIC] - START_MS:.0f} ms but b{b} "
                     f"still holds a log of sim-x1-0" for b in (0, 1)]


def test_a_broker_that_still_names_a_deleted_topic_is_reported(cluster: Cluster) -> None:
    from actors import names

    sim = cluster.sim
    admin = AdminOps(sim, [AdminOp(0, "create", EXTRA_TOPIC, (0, 1)), AdminOp(2, "delete", EXTRA_TOPIC)])
    assert _play(cluster, admin, 4) == [] and admin.deletion_done(EXTRA_TOPIC)
    cache = sim.brokers[2].rt.instances[names.REPLICA_MANAGER].metadata_cache  # type: ignore[union-attr]
    cache.snapshot.partition_states[EXTRA_TOPIC] = {}  # an UpdateMetadata it missed: the topic still named
    found = _play(cluster, admin, int(DELETION_BOUND_MS / 1000) + 2, first=4)
    assert len(found) == 1 and found[0].startswith("topic sim-x1 deleted at") and "still in b2's metadata" in found[0]


def test_a_removed_replica_that_keeps_its_log_is_reported(cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    from core.broker.log_manager import LogManager

    monkeypatch.setattr(LogManager, "delete_logs", lambda self, tps: (set(), {}))  # answers success, deletes nothing
    admin = AdminOps(cluster.sim, [AdminOp(0, "create", EXTRA_TOPIC, (0, 1)),
                                   AdminOp(3, "reassign", EXTRA_TOPIC, (2, 1))])
    assert _play(cluster, admin, 4) == [] and XTP in admin.reassigned  # complete, the cluster healthy throughout
    found = _play(cluster, admin, int(REASSIGNMENT_BOUND_MS / 1000) + 2, first=4)
    assert found == [f"sim-x1-0: replica b0 removed by the reassignment completed at "
                     f"{admin.reassigned[XTP] - START_MS:.0f} ms still holds a log of it with the cluster healthy"]


def test_seed_1792_loses_only_what_a_sole_isr_member_s_power_loss_takes_as_kafka_does() -> None:
    """sim-x1-0 is reassigned [1, 2] -> [2, 0] at 11 s and completes; b2's log dir fails at 12 s (ISR [0]); b0 loses
    power at 20.2 s as the partition's only ISR member, its page cache with the three acknowledged records gone, and
    is elected again, cleanly, when it is back: Kafka 2.6 loses them too (it acknowledges without fsync). That loss is
    excused by `Sim.lost_to_power`, and by nothing else."""
    cluster = start_cluster(1792, SimBoot())
    try:
        result = play(cluster, 1792, 50)
        sim = cluster.sim
        assert result.violations == ()
        x1 = TopicPartition("sim-x1", 0)
        assert [(at - START_MS, b, what, x1 in alone) for at, b, what, alone in sim.sole_isr_losses
                if what == "lost power"] == [(20200.0, 0, "lost power", True), (37200.0, 0, "lost power", False)]
        assert sim.lost_to_power(x1, START_MS + 8200.0) == "b0 lost power at 20200 ms as its sole ISR member"
        assert sim.lost_to_power(x1, START_MS + 20300.0) is None
        assert sim.lost_to_power(TopicPartition("sim", 0), START_MS) is None
    finally:
        cluster.close()
