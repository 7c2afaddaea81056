"""kactor/chaos/schedule.py: a seed's schedule is a pure function of its inputs and only names what exists."""

from __future__ import annotations

import pytest

from kactor.chaos.schedule import BROKER_FAULTS, OPS, ZK_FAULTS, Step, make_schedule, parse_seeds


def test_same_seed_same_schedule_other_seed_other_schedule() -> None:
    assert make_schedule(7, 25) == make_schedule(7, 25)
    assert make_schedule(7, 25) != make_schedule(8, 25)
    assert make_schedule(7, 10) == make_schedule(7, 25)[:10]  # a shorter run is a prefix: replays stay comparable


def test_seed_1_starts_as_recorded() -> None:
    """Pinned: a change to the generator changes every seed's meaning (and every documented replay command)."""
    assert make_schedule(1, 3) == (
        Step(0, "create", "t0", (1, 3), "kill-controller", (), 1.9),
        Step(1, "reassign", "t0", (0, 1, 0, 2), "sigkill", (2,), 1.9),
        Step(2, "preferred", "t0", (), "sigkill", (1,), 1.1))


def test_operations_only_name_live_topics_and_existing_partitions() -> None:
    for seed in range(60):
        partitions: dict[str, int] = {}
        rf: dict[str, int] = {}
        created: set[str] = set()
        for s in make_schedule(seed, 40, brokers=3):
            assert s.op in OPS
            if s.op == "create":
                assert s.topic not in created, "topic names are never reused"
                created.add(s.topic)
                partitions[s.topic], rf[s.topic] = int(s.args[0]), int(s.args[1])
                assert 1 <= partitions[s.topic] <= 3 and 2 <= rf[s.topic] <= 3
                continue
            assert s.topic in partitions, f"seed {seed} step {s.index}: {s.topic} does not exist"
            if s.op == "delete":
                del partitions[s.topic]
            elif s.op == "reassign":
                replicas = s.args[1:]
                assert 0 <= int(s.args[0]) < partitions[s.topic]
                assert len(replicas) == rf[s.topic] == len(set(replicas)) and set(replicas) <= {0, 1, 2}
            elif s.op == "expand":
                assert s.args == (partitions[s.topic] + 1,)
                partitions[s.topic] += 1


def test_faults_and_targets() -> None:
    steps = [s for seed in range(50) for s in make_schedule(seed, 25, brokers=3, zk_servers=3)]
    kinds = {s.fault for s in steps}
    assert kinds == {None, *BROKER_FAULTS, *ZK_FAULTS}
    for s in steps:
        if s.fault == "partition":
            assert len(s.targets) == 2 and s.targets[0] < s.targets[1] <= 2
        elif s.fault in ("sigkill", "sigterm", "sigstop", "logdir", "zk-kill"):
            assert len(s.targets) == 1 and 0 <= s.targets[0] <= 2
        elif s.fault in ("kill-controller", "zk-kill-leader"):
            assert s.targets == ()
        if s.fault is not None:
            assert 1.0 <= s.hold_s <= 6.0
    # the controller killed mid-deletion and mid-reassignment both happen
    assert {s.op for s in steps if s.fault == "kill-controller"} >= {"delete", "reassign"}
    # without an ensemble, no ZooKeeper faults; with one broker, no partition
    assert not {s.fault for seed in range(20) for s in make_schedule(seed, 25)} & set(ZK_FAULTS)
    assert "partition" not in {s.fault for seed in range(20) for s in make_schedule(seed, 25, brokers=1)}


def test_describe() -> None:
    assert Step(3, "reassign", "t1", (2, 0, 1), "partition", (0, 2), 2.5).describe() == \
        "reassign t1-2 to [0, 1]; partition [0, 2] for 2.5s"
    assert Step(0, "create", "t0", (3, 2)).describe() == "create t0 (3 partitions, replication factor 2)"
    assert Step(1, "config", "t0", ("retention.ms", "1")).describe() == "config t0 retention.ms=1"


@pytest.mark.parametrize(("text", "seeds"), [("1-5", (1, 2, 3, 4, 5)), ("7", (7,)), ("1,3,5-6,3", (1, 3, 5, 6)),
                                             (" 0 - 2 ", (0, 1, 2))])
def test_parse_seeds(text: str, seeds: tuple[int, ...]) -> None:
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize("text", ["", "a", "5-1", "-3", "1-", "1,,2"])
def test_parse_seeds_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="bad seed range"):
        parse_seeds(text)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        make_schedule(1, -1)
    with pytest.raises(ValueError):
        make_schedule(1, 5, brokers=0)
