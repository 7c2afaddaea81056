"""`kactor sim`'s consumer group (sim/groups.py): two members (one static) that find the coordinator, join, sync,
heartbeat, fetch and commit; and its invariants (`GroupChecks`), each shown to fail when its property is broken."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from actors import names
from kactor.sim_boot import SimBoot
from messages.common import TopicPartition
from sim.faults import schedule
from sim.groups import (
    STABLE_BOUND_MS,
    Commit,
    Fenced,
    Fetched,
    Group,
    GroupChecks,
    decode_assignment,
    encode_assignment,
    grouped,
    range_assign,
    subscription,
)
from sim.run import TOPIC, Cluster, run_seed, start_cluster

P0, P1 = TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)



@pytest.fixture
def no_restarts(monkeypatch: pytest.MonkeyPatch) -> None:
    """No seeded member restarts: the group as its members left alone make it."""
    import sim.groups

    monkeypatch.setattr(sim.groups, "RESTART_SHARE", 0.0)


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    c = start_cluster(4, SimBoot())  # a seed with the group (and __consumer_offsets): grouped(4)
    try:
        yield c
    finally:
        c.close()


def _run(c: Cluster, group: Group, steps: range) -> None:
    for step in steps:
        group.step(step)
        c.sim.run_for(1000.0)


def _stable_group(c: Cluster, steps: int = 16) -> Group:
    group = Group(c.sim, TOPIC, sorted(c.assignment))
    _run(c, group, range(steps))
    assert group.stable() is None, group.stable()
    return group


def test_the_consumer_protocol_and_the_range_assignor() -> None:
    from core.coordinator.group.group_metadata import subscription_topics

    assert subscription_topics(subscription(["sim"])) == {"sim"}
    assert decode_assignment(encode_assignment([P1, P0])) == [P0, P1]
    assert decode_assignment(b"") == []
    assert range_assign({"b": {"sim"}, "a": {"sim"}, "c": {"sim"}}, {"sim": 2}) == {"a": [P0], "b": [P1], "c": []}
    assert range_assign({"a": {"sim"}}, {"sim": 2}) == {"a": [P0, P1]}


def test_the_group_becomes_stable_commits_and_reads_its_commits_back(cluster: Cluster, no_restarts: None) -> None:
    group = _stable_group(cluster)
    gens = {g.generation for g in group.generations}
    assert len(gens) == 1 and min(gens) >= 1
    assert sorted(tp for m in group.members for tp in m.assignment) == [P0, P1]
    assert all(a[2] == "NONE" or a[2] == "MEMBER_ID_REQUIRED" for a in group.answers), group.answers
    assert {f.tp for f in group.fetched} == {P0, P1}  # each assignment's start positions
    acked = [c for c in group.commits if c.error == "NONE"]
    assert acked and {c.tp for c in acked} == {P0, P1}
    assert group.members[1].member_id.startswith(f"sim-static-{cluster.sim.seed}")
    assert GroupChecks(group).check() == []


def test_the_members_follow_the_coordinator_to_its_new_broker_and_read_back_every_commit(
        cluster: Cluster, no_restarts: None) -> None:
    """The coordinator crashes: the members find the new one (which loaded the group from __consumer_offsets), read
    their committed offsets back there, and stay one stable generation; no commit acknowledged before is lost."""
    group = _stable_group(cluster)
    checks = GroupChecks(group)
    old = group.members[0].coordinator
    before = max(c.offset for c in group.commits if c.error == "NONE" and c.tp == P0)
    cluster.sim.crash(old)
    _run(cluster, group, range(16, 30))
    assert all(m.coordinator not in (old, -1) for m in group.members)
    moved = [f for f in group.fetched if f.coordinator != old and f.error == "NONE"]
    assert moved and all(f.offset >= before for f in moved if f.tp == P0)
    assert checks.check() == []
    assert group.stable() is None


def test_an_acknowledged_commit_lost_by_the_coordinator_is_caught(cluster: Cluster, no_restarts: None) -> None:
    """Tamper: the coordinator forgets the group's offsets (as a lost append would); the next OffsetFetch answers
    below what was acknowledged."""
    group = _stable_group(cluster)
    checks = GroupChecks(group)
    assert checks.check() == []
    coordinator = cluster.sim.brokers[group.members[0].coordinator].rt.instances[names.GROUP_COORDINATOR]
    coordinator.coordinator.manager.groups[group.group_id].remove_all_offsets()
    for m in group.members:
        m.refetch = True
    _run(cluster, group, range(16, 18))
    found = checks.check()
    assert found and all("OffsetFetch of sim-" in f and "answered offset -1, below" in f for f in found), found


def test_restarted_members_rejoin_the_static_one_keeping_its_partition_unfenced(cluster: Cluster,
                                                                               no_restarts: None) -> None:
    """A dynamic member's restart leaves (LeaveGroup) and joins as a new member: a new generation; the static
    member's restart joins with no member id under its group.instance.id: the coordinator gives it a new id and its
    old assignment without a rebalance (KIP-345), and nothing is fenced; also after a coordinator move."""
    group = _stable_group(cluster)
    checks = GroupChecks(group)
    first = group.members[0].generation
    static_partitions = group.members[1].assignment
    group.restart(0)
    _run(cluster, group, range(16, 30))
    assert group.stable() is None and group.members[0].generation > first
    assert ("LeaveGroup", "ga", "NONE") in group.answers
    generation, old_id = group.members[1].generation, group.members[1].member_id
    group.restart(1)
    _run(cluster, group, range(30, 36))
    assert group.stable() is None and group.members[1].generation == generation
    assert group.members[1].member_id != old_id and group.members[1].assignment == static_partitions
    cluster.sim.crash(group.members[1].coordinator)
    _run(cluster, group, range(36, 48))
    group.restart(1)
    _run(cluster, group, range(48, 56))
    assert group.stable() is None
    assert checks.check() == []


def _bare(seed: int = 1) -> tuple[Group, GroupChecks, object]:
    """A group of two members, not started, on a stand-in for the sim (now, last change, health)."""

    class FakeSim:
        def __init__(self) -> None:
            self.seed, self.now, self.last_fault_ms, self.is_healthy = seed, 0.0, 0.0, True

        def healthy(self) -> bool:
            return self.is_healthy

    sim = FakeSim()
    group = Group(sim, TOPIC, [P0, P1])  # type: ignore[arg-type]
    return group, GroupChecks(group), sim


def _make_stable(group: Group, generation: int = 3) -> None:
    for m, tps in zip(group.members, ((P0,), (P1,)), strict=True):
        m.state, m.generation, m.assignment = "stable", generation, tps


def test_a_group_not_stable_once_the_cluster_is_healthy_long_enough_is_caught() -> None:
    group, checks, sim = _bare()
    sim.now = STABLE_BOUND_MS - 1  # type: ignore[attr-defined]
    assert checks.check() == []  # within the bound
    sim.now = STABLE_BOUND_MS  # type: ignore[attr-defined]
    assert checks.check() and "group not stable" in checks.check()[0]
    sim.is_healthy = False  # type: ignore[attr-defined]
    assert checks.check() == []  # faults: nothing asserted
    sim.is_healthy = True  # type: ignore[attr-defined]
    _make_stable(group)
    assert checks.check() == []
    group.members[1].generation = 4  # two generations
    assert "members" in checks.check()[0]
    _make_stable(group)
    group.members[1].assignment = (P0,)  # a partition twice, one not at all
    assert "assignment" in checks.check()[0]
    assert "group not stable at the end" in checks.check_final()[0]
    _make_stable(group)
    assert checks.check_final() == []


def test_an_unknown_server_error_and_a_fenced_static_member_are_caught() -> None:
    group, checks, _ = _bare()
    group.answers += [("Heartbeat", "ga", "NONE"), ("JoinGroup", "gb", "FENCED_INSTANCE_ID"),
                      ("OffsetCommit", "ga", "UNKNOWN_SERVER_ERROR")]
    group.fenced.append(Fenced("gb", "i-2", False, 1, 900.0))  # an id no SyncGroup confirmed: Kafka may fence it
    assert checks.check() == ["group ga: OffsetCommit answered UNKNOWN_SERVER_ERROR"]
    group.fenced.append(Fenced("gb", "i-3", True, 2, 1000.0))
    assert checks.check()[-1] == ("group gb: fenced (FENCED_INSTANCE_ID) by b2 at 1000 ms under member id i-3, which "
                                  "a SyncGroup had confirmed")


def test_a_fenced_member_is_recorded_and_started_again(cluster: Cluster, no_restarts: None) -> None:
    """FENCED_INSTANCE_ID is fatal to the consumer: the member stops, is recorded (confirmed: its id had been
    synced), and its process is started again at the next step, joining under its instance id."""
    group = _stable_group(cluster)
    gb = group.members[1]
    gb._common_errors("FENCED_INSTANCE_ID")
    assert gb.state == "fenced" and group.fenced[-1].confirmed and group.fenced[-1].member_id == gb.member_id
    assert "a SyncGroup had confirmed" in GroupChecks(group).check()[-1]
    _run(cluster, group, range(16, 24))
    assert group.members[1] is not gb and group.stable() is None


def test_an_offset_fetched_below_an_acknowledged_commit_is_caught() -> None:
    group, checks, _ = _bare()
    group.commits += [Commit("ga", P0, 7, 2, "NONE", 900.0, 1000.0), Commit("ga", P0, 9, 2, "NONE", 1900.0, 2000.0),
                      Commit("gb", P0, 12, 2, "ILLEGAL_GENERATION", 1900.0, 2000.0)]  # refused: not counted
    group.fetched += [Fetched("gb", P0, 7, "NONE", 1, 1500.0, 1501.0),  # 9 not acknowledged yet when sent
                      Fetched("gb", P0, 9, "NONE", 1, 2500.0, 2501.0)]
    assert checks.check() == []
    group.fetched.append(Fetched("gb", P0, 8, "NONE", 2, 3000.0, 3001.0))
    assert checks.check() == ["group gb: OffsetFetch of sim-0 sent at 3000 ms to b2 answered offset 8, below 9 "
                              "committed by ga (generation 2) and acknowledged at 2000 ms"]


@pytest.mark.parametrize("seed", [4, 7])
def test_seeds_with_faults_keep_the_group_clean(seed: int) -> None:
    assert grouped(seed) and schedule(seed, 20, 3)  # the group runs, beside faults
    result = run_seed(seed, 20, SimBoot())
    assert result.violations == ()
