"""Issue #4 on a real cluster: the controller's decisions as Kafka 2.6 writes them to ZooKeeper.

Every check reads the znodes the controller writes (``/brokers/topics/<t>/partitions/<p>/state``, ``/controller``,
``/controller_epoch``, ``/admin/preferred_replica_election``) and asserts their exact contents: leader, leader_epoch,
isr (in assignment order), controller_epoch and the JSON ``version``. Expected values follow
``../shared/reference/kafka-zk-controller.md`` §4–§6 (partition creation, onBrokerFailure, controlled shutdown, the
election strategies, removeReplicasFromIsr).
"""

from __future__ import annotations

import json
import signal
from typing import Any

import pytest
from cluster_helpers import Cluster, produce, run_kactor, topic_dirs

from kactor.trace.reader import decode_body, read_records, trace_files_for_broker

pytestmark = pytest.mark.cluster

# The fixture stops every broker at once; the last one cannot hand its leaderships to anyone and retries its
# controlled shutdown controlled.shutdown.max.retries times. A short backoff keeps that teardown under a second.
FAST_STOP = "controlled.shutdown.retry.backoff.ms=200"


# -- helpers local to these scenarios ----------------------------------------------------------------------------------
def expected_state(leader: int, leader_epoch: int, isr: list[int], controller_epoch: int) -> dict[str, Any]:
    """The state znode's JSON (TopicPartitionStateZNode.encode, Kafka 2.6): exactly these five keys."""
    return {"controller_epoch": controller_epoch, "leader": leader, "version": 1, "leader_epoch": leader_epoch,
            "isr": isr}


class _AnyEpoch(int):
    """Equal to any leader_epoch, for a wait whose epoch is checked afterwards."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, int)

    __hash__ = int.__hash__


ANY_EPOCH = _AnyEpoch(-1)


def wait_state(c: Cluster, topic: str, partition: int, want: dict[str, Any], what: str = "") -> dict[str, Any]:
    """Poll the state znode until it equals ``want`` exactly (the timeout message shows the last value)."""
    last: list[Any] = [None]

    def check(st: dict[str, Any]) -> bool:
        last[0] = st
        return st == want
    try:
        return c.wait_partition(topic, partition, check, what=what or f"{topic}-{partition} == {want}")
    except AssertionError as e:
        raise AssertionError(f"{topic}-{partition}: last state {last[0]}, wanted {want}\n{e}") from None


def others(c: Cluster, *excluded: int) -> list[int]:
    return [b for b in range(c.lc.n) if b not in excluded]


def wait_dead(c: Cluster, broker_id: int) -> None:
    c.wait(lambda: broker_id not in c.live_brokers(), what=f"broker {broker_id}'s registration to expire")


def update_metadata_partitions(c: Cluster, broker_id: int) -> set[tuple[str, int]]:
    """The partitions that UpdateMetadata requests delivered to ``broker_id`` named (from its trace files)."""
    assert c.trace_dir is not None
    seen: set[tuple[str, int]] = set()
    for path in trace_files_for_broker(c.trace_dir, broker_id):
        for rec in read_records(path):
            if rec.type != "NetRequest" or rec.payload.get("body", {}).get("@") != "UpdateMetadataRequest":
                continue
            body = decode_body(path, rec).body
            seen.update((ps.topic_partition.topic, ps.topic_partition.partition) for ps in body.partition_states)
    return seen


# -- scenarios ---------------------------------------------------------------------------------------------------------
def test_topic_creation_expansion_and_broker_failure(start_cluster) -> None:
    """onNewPartitionCreation, processPartitionModifications, onBrokerFailure (§4.4–4.6)."""
    c = start_cluster(3, overrides=(FAST_STOP,))
    epoch = c.controller_epoch()
    assert epoch == 1
    controller = c.controller_id()
    assert controller is not None
    victim, survivor = others(c, controller)
    spread = {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1]}
    c.create_topic("spread", assignment=spread)
    c.create_topic("solo", assignment={0: [victim]})
    # creation: leader = first live assigned replica, isr = live replicas in assignment order, leader_epoch 0
    for p, replicas in spread.items():
        assert c.partition_state("spread", p) == expected_state(replicas[0], 0, replicas, epoch)
    assert c.partition_state("solo", 0) == expected_state(victim, 0, [victim], epoch)
    assert c.zk.exists("/brokers/topics/spread/partitions/0/state").version == 0

    # partition expansion (kafka-topics --alter --partitions): new state znodes, every broker learns them
    run_kactor("topics", "--zookeeper", c.connect_string, "--alter", "--topic", "spread", "--partitions", "5")
    assignment = c.wait(lambda: (a := c.assignment("spread")) is not None and len(a) == 5 and a, what="5 partitions")
    for p in (3, 4):
        replicas = assignment[p]
        assert sorted(replicas) == [0, 1, 2]
        wait_state(c, "spread", p, expected_state(replicas[0], 0, replicas, epoch))
    for b in (0, 1, 2):  # LeaderAndIsr reached every replica (log dirs), UpdateMetadata reached every broker
        c.wait(lambda b=b: {"spread-3", "spread-4"} <= set(topic_dirs(c, b, "spread")), what=f"logs on broker {b}")
        c.wait(lambda b=b: {("spread", 3), ("spread", 4)} <= update_metadata_partitions(c, b),
               what=f"UpdateMetadata for spread-3/4 on broker {b}")
    assert produce(c, "spread", 4, ("a", "b")).error.name == "NONE"  # acks=-1: every ISR member follows

    # SIGKILL of a broker: its leaderships move (leader_epoch + 1), it leaves every ISR (order kept)
    c.kill(victim)
    wait_dead(c, victim)
    for p, replicas in sorted(assignment.items()):
        isr = [r for r in replicas if r != victim]
        wait_state(c, "spread", p, expected_state(isr[0], 1, isr, epoch))
    # the whole ISR gone: no leader, the last ISR member stays (removeReplicasFromIsr keeps a 1-member ISR)
    wait_state(c, "solo", 0, expected_state(-1, 1, [victim], epoch))
    assert c.controller_id() == controller and c.controller_epoch() == epoch

    # a topic created while a replica is down: leader and isr from the live replicas only
    c.create_topic("late", assignment={0: [victim, survivor, controller]})
    assert c.partition_state("late", 0) == expected_state(survivor, 0, [survivor, controller], epoch)

    # the broker comes back: the offline RF1 partition is elected again from its ISR
    c.restart(victim)
    wait_state(c, "solo", 0, expected_state(victim, 2, [victim], epoch))


def test_controller_failover_and_new_controller_state(start_cluster) -> None:
    """Controller failover: elect(), /controller_epoch + 1, onControllerFailover reloads the context (§2.1, §4.1)."""
    c = start_cluster(3, overrides=(FAST_STOP,))
    old = c.controller_id()
    assert old is not None
    epoch = c.controller_epoch()
    a, b = others(c, old)
    placement = {0: [old, a, b], 1: [a, b, old], 2: [b, old, a]}
    c.create_topic("f", assignment=placement)
    c.create_topic("f2", assignment={0: [a, b]})  # the old controller holds no replica of it
    for p, replicas in placement.items():
        assert c.partition_state("f", p) == expected_state(replicas[0], 0, replicas, epoch)

    c.kill(old)
    c.wait(lambda: c.controller_id() not in (None, old), what="a new controller")
    new = c.controller_id()
    assert new in (a, b)
    assert c.controller_epoch() == epoch + 1
    assert json.loads(c.zk.get("/controller")[0])["brokerid"] == new
    wait_dead(c, old)
    # every partition keeps (or, for those the old controller led, gets) an elected leader; the dead broker
    # leaves the ISRs. The new controller's ReplicaStateMachine.startup runs first: OfflineReplica removes the dead
    # broker from each ISR (leader -1 where it led, leader_epoch + 1); PartitionStateMachine.startup then elects a
    # leader for those (leader_epoch + 1 again). Partitions the new controller rewrote carry its epoch.
    for p, replicas in placement.items():
        isr = [r for r in replicas if r != old]
        wait_state(c, "f", p, expected_state(isr[0], 2 if replicas[0] == old else 1, isr, epoch + 1))
    assert c.partition_state("f2", 0) == expected_state(a, 0, [a, b], epoch)  # untouched by the failover

    # the new controller's context is loaded: it handles a new topic and an expansion of an existing one
    c.create_topic("after", assignment={0: [a, b], 1: [b, a], 2: [old, a]})
    assert c.partition_state("after", 0) == expected_state(a, 0, [a, b], epoch + 1)
    assert c.partition_state("after", 1) == expected_state(b, 0, [b, a], epoch + 1)
    assert c.partition_state("after", 2) == expected_state(a, 0, [a], epoch + 1)
    run_kactor("topics", "--zookeeper", c.connect_string, "--alter", "--topic", "f2", "--partitions", "2")
    added = c.wait(lambda: (asg := c.assignment("f2")) is not None and len(asg) == 2 and asg[1], what="f2-1")
    assert sorted(added) == sorted([a, b])
    wait_state(c, "f2", 1, expected_state(added[0], 0, added, epoch + 1))

    # the old controller's broker comes back as a plain broker: no new election, no leader change; it rejoins the
    # ISR through the leader's ISR expansion (a leader's write: same leader_epoch and controller_epoch)
    c.restart(old)
    wait_state(c, "after", 2, expected_state(a, 0, [a, old], epoch + 1))
    assert c.controller_id() == new and c.controller_epoch() == epoch + 1


def test_sighup_is_an_orderly_stop(start_cluster) -> None:
    """SIGHUP (the terminal of kactor cluster closed) stops a broker as SIGTERM does: controlled shutdown first, so
    its leadership has moved and it left the ISR while it was still up, then exit 0 (issue #19 item 7)."""
    c = start_cluster(2, overrides=(FAST_STOP,))
    controller = c.controller_id()
    assert controller is not None
    stopping = others(c, controller)[0]
    c.create_topic("hup", assignment={0: [stopping, controller]})
    c.wait_partition("hup", 0, lambda st: st["isr"] == [stopping, controller], what="hup-0 full ISR")
    epoch = c.controller_epoch()
    assert c.stop_broker(stopping, sig=signal.SIGHUP) == 0
    st = c.partition_state("hup", 0)  # read right after the exit: the ControlledShutdown election's state
    assert st is not None and (st["leader"], st["isr"], st["leader_epoch"], st["controller_epoch"]) == \
        (controller, [controller], 1, epoch), st


def test_controlled_shutdown_then_preferred_replica_election(start_cluster) -> None:
    """doControlledShutdown (§4.7) on SIGTERM, then /admin/preferred_replica_election (§3.4) moves leaders back."""
    c = start_cluster(3, overrides=(FAST_STOP, "auto.leader.rebalance.enable=false"))
    epoch = c.controller_epoch()
    controller = c.controller_id()
    assert controller is not None
    stopping = others(c, controller)[0]
    placement = {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1], 3: [stopping, controller, 3 - stopping - controller]}
    c.create_topic("cs", assignment=placement)
    c.create_topic("single", assignment={0: [stopping]})  # RF 1: controlled shutdown leaves it alone
    led = [p for p, r in placement.items() if r[0] == stopping]
    assert len(led) == 2

    assert c.stop_broker(stopping) == 0
    # read right after the exit: leaders moved away while the broker was still up (ControlledShutdown election: the
    # first other ISR member, ISR minus the stopping broker, leader_epoch + 1); the replicas it only followed got
    # StopReplica and OfflineReplica (ISR minus it, leader_epoch + 1).
    for p, replicas in placement.items():
        st, isr = c.partition_state("cs", p), [r for r in replicas if r != stopping]
        assert st is not None and st["leader"] == isr[0] and st["controller_epoch"] == epoch, (p, st)
    wait_dead(c, stopping)  # the session was closed on exit: the registration goes at once
    for p, replicas in placement.items():
        isr = [r for r in replicas if r != stopping]
        st = wait_state(c, "cs", p, {**expected_state(isr[0], 1, isr, epoch), "leader_epoch": ANY_EPOCH})
        version = c.zk.exists(f"/brokers/topics/cs/partitions/{p}/state").version
        if p in led and version == 3:
            # Kafka 2.6's race (closed by KIP-841 in 3.3): the stopping broker follows the new leader until its
            # replica manager stops, the leader may add it back to the ISR (write 2, same leader_epoch), and
            # onBrokerFailure's removeReplicasFromIsr takes it out again (write 3, leader_epoch + 1)
            assert st["leader_epoch"] == 2, (p, st)
        else:
            assert version == 1 and st["leader_epoch"] == 1, (p, st, version)
    wait_state(c, "single", 0, expected_state(-1, 1, [stopping], epoch))
    final_epoch = {p: c.partition_state("cs", p)["leader_epoch"] for p in placement}

    # restart: the broker rejoins every ISR (leader-driven ISR expansion) but leads nothing it led before
    c.restart(stopping)
    for p, replicas in placement.items():
        isr = [r for r in replicas if r != stopping]
        c.wait_partition("cs", p, lambda st, r=replicas: sorted(st["isr"]) == sorted(r), what=f"cs-{p} full ISR")
        st = c.partition_state("cs", p)
        assert st is not None and st["leader"] == isr[0] and st["leader_epoch"] == final_epoch[p]
    wait_state(c, "single", 0, expected_state(stopping, 2, [stopping], epoch))

    # the admin tool's znode, as kafka-preferred-replica-election.sh writes it, naming one partition
    first, rest = led[0], led[1:]
    election = {"version": 1, "partitions": [{"topic": "cs", "partition": first}]}
    c.zk.create("/admin/preferred_replica_election", json.dumps(election).encode())
    st = wait_state(c, "cs", first, expected_state(stopping, final_epoch[first] + 1,
                                                   c.partition_state("cs", first)["isr"], epoch))
    assert sorted(st["isr"]) == sorted(placement[first])  # the preferred election keeps the ISR
    c.wait(lambda: not c.zk.exists("/admin/preferred_replica_election"), what="the election znode deleted")
    for p in rest:  # not named: untouched
        st = c.partition_state("cs", p)
        assert st is not None and st["leader"] != stopping and st["leader_epoch"] == final_epoch[p]

    # the CLI without a file names every partition: the rest move back; those already on their preferred replica
    # are not re-elected (ELECTION_NOT_NEEDED: no write, same leader_epoch)
    before = {p: c.partition_state("cs", p) for p in placement}
    run_kactor("preferred-replica-election", "--zookeeper", c.connect_string)
    for p in rest:
        wait_state(c, "cs", p, {**before[p], "leader": stopping, "leader_epoch": final_epoch[p] + 1})
    c.wait(lambda: not c.zk.exists("/admin/preferred_replica_election"), what="the election znode deleted")
    for p in set(placement) - set(rest):
        assert c.partition_state("cs", p) == before[p]


def test_auto_leader_rebalance(start_cluster) -> None:
    """checkAndTriggerAutoLeaderRebalance (§8.5) with a 2 s interval and a 0 % threshold."""
    c = start_cluster(3, overrides=(FAST_STOP, "auto.leader.rebalance.enable=true",
                                    "leader.imbalance.check.interval.seconds=2",
                                    "leader.imbalance.per.broker.percentage=0"))
    controller = c.controller_id()
    assert controller is not None
    epoch = c.controller_epoch()
    moving = others(c, controller)[0]
    placement = {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1]}
    c.create_topic("r", assignment=placement)
    (mine,) = [p for p, r in placement.items() if r[0] == moving]
    assert c.stop_broker(moving) == 0
    wait_dead(c, moving)
    isr = [r for r in placement[mine] if r != moving]
    moved = wait_state(c, "r", mine, {**expected_state(isr[0], 1, isr, epoch), "leader_epoch": ANY_EPOCH})
    c.restart(moving)
    # no admin action: the rebalance task gives the partition back to its preferred replica once it is in the ISR
    st = c.wait_partition("r", mine, lambda s: s["leader"] == moving, what=f"r-{mine} led by {moving} again")
    assert st["leader_epoch"] == moved["leader_epoch"] + 1 and sorted(st["isr"]) == [0, 1, 2]
    assert st["controller_epoch"] == epoch
    assert not c.zk.exists("/admin/preferred_replica_election")  # AutoTriggered: no znode involved


def test_unclean_leader_election_by_topic_config(start_cluster) -> None:
    """OfflinePartitionLeaderElectionStrategy with unclean.leader.election.enable from /config/topics/<t> (§6)."""
    c = start_cluster(3, overrides=(FAST_STOP,))
    epoch = c.controller_epoch()
    controller = c.controller_id()
    assert controller is not None
    first, second = others(c, controller)
    c.create_topic("dirty", assignment={0: [first, second]}, configs={"unclean.leader.election.enable": "true"})
    c.create_topic("clean", assignment={0: [first, second]})
    # `second` dies: it leaves the ISR, so it is out of sync from now on
    c.kill(second)
    wait_dead(c, second)
    for t in ("dirty", "clean"):
        wait_state(c, t, 0, expected_state(first, 1, [first], epoch))
    # `first`, the whole ISR, dies: no leader, the ISR keeps its last member
    c.kill(first)
    wait_dead(c, first)
    for t in ("dirty", "clean"):
        wait_state(c, t, 0, expected_state(-1, 2, [first], epoch))
    # the out-of-sync replica comes back: only the topic that allows it elects it (unclean), with isr = [leader]
    c.restart(second)
    wait_state(c, "dirty", 0, expected_state(second, 3, [second], epoch))
    assert c.partition_state("clean", 0) == expected_state(-1, 2, [first], epoch)
    # enabling it on the other topic (kafka-configs / kafka-topics --alter --config) triggers the election there too
    run_kactor("topics", "--zookeeper", c.connect_string, "--alter", "--topic", "clean",
               "--config", "unclean.leader.election.enable=true")
    wait_state(c, "clean", 0, expected_state(second, 3, [second], epoch))
