"""``kactor leader-election`` (kafka-leader-election.sh) on a real 3-broker cluster: what it prints, its exit code,
and the partition state znodes the elections leave (a partition whose right leader leads already is a noop, "Valid
replica already elected", not a failure) — preferred by ``--topic/--partition``, ``--all-topic-partitions``
and ``--path-to-json-file``, then unclean for a partition whose only in-sync replica died."""

from __future__ import annotations

import json

import pytest
from cluster_helpers import Cluster, run_kactor
from kafka_clients_helpers import bootstrap

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
pytest.importorskip("confluent_kafka")

# the elections are the tool's to make: no AutoTriggered preferred election may move a leader behind its back
OVERRIDES = ("auto.leader.rebalance.enable=false",)


def elect(c: Cluster, *args: str) -> tuple[int, list[str], str]:
    proc = run_kactor("leader-election", "--bootstrap-server", bootstrap(c), *args, check=False)
    return proc.returncode, proc.stdout.splitlines(), proc.stderr


def test_preferred_then_unclean_elections_through_the_tool(start_cluster, tmp_path) -> None:
    c: Cluster = start_cluster(3, overrides=OVERRIDES)
    controller = c.controller_id()
    a, b = (x for x in c.live_brokers() if x != controller)
    c.create_topic("pref", assignment={0: [a, controller, b], 1: [a, b, controller]})
    c.create_topic("dirty", assignment={0: [a, b]})
    for p in (0, 1):
        c.wait_partition("pref", p, lambda st: len(st["isr"]) == 3, what=f"pref-{p} fully in sync")
    c.wait_partition("dirty", 0, lambda st: st["isr"] == [a, b], what="dirty-0 fully in sync")
    # a stops: its partitions move away; back, it follows them and nobody moves leadership back to it
    c.stop_broker(a)
    c.restart(a)
    moved = {p: c.wait_partition("pref", p, lambda st: len(st["isr"]) == 3 and st["leader"] != a,
                                 what=f"{a} back in pref-{p}'s ISR, not leading") for p in (0, 1)}

    assert elect(c, "--election-type", "preferred", "--topic", "pref", "--partition", "0") == (
        0, ["Successfully completed leader election (PREFERRED) for partitions pref-0"], "")
    st0 = c.partition_state("pref", 0)
    assert (st0["leader"], st0["leader_epoch"], sorted(st0["isr"])) == (
        a, moved[0]["leader_epoch"] + 1, sorted(moved[0]["isr"]))
    assert c.partition_state("pref", 1)["leader"] != a

    # the request names no partition: only those that needed an election are in the answer
    assert elect(c, "--election-type", "PREFERRED", "--all-topic-partitions") == (
        0, ["Successfully completed leader election (PREFERRED) for partitions dirty-0, pref-1"], "")
    assert (c.partition_state("pref", 1)["leader"], c.partition_state("dirty", 0)["leader"]) == (a, a)
    assert elect(c, "--election-type", "preferred", "--all-topic-partitions") == (0, [], "")

    f = tmp_path / "elect.json"
    f.write_text(json.dumps({"partitions": [{"topic": "pref", "partition": 0}, {"topic": "pref", "partition": 9}]}))
    assert elect(c, "--election-type", "preferred", "--path-to-json-file", str(f)) == (1, [
        "Valid replica already elected for partitions pref-0",
        "Error completing leader election (PREFERRED) for partition: pref-9: "
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: The partition does not exist."],
        "kactor leader-election: 1 replica(s) could not be elected\n")

    # dirty-0: b leaves its ISR, then a, the last in-sync replica, dies; b comes back out of sync and, unclean
    # elections being off, the partition stays offline until the tool asks for an unclean election
    c.stop_broker(b)
    c.wait_partition("dirty", 0, lambda st: st["isr"] == [a], what="dirty-0's ISR shrunk to [a]")
    c.kill(a)
    before = c.wait_partition("dirty", 0, lambda st: st["leader"] == -1, what="dirty-0 offline")
    c.restart(b)
    c.wait_partition("pref", 1, lambda st: b in st["isr"], what=f"{b} back in pref-1's ISR")
    assert c.partition_state("dirty", 0) == before
    code, out, err = elect(c, "--election-type", "preferred", "--topic", "dirty", "--partition", "0")
    assert (code, err) == (1, "kactor leader-election: 1 replica(s) could not be elected\n")
    assert out[0].startswith("Error completing leader election (PREFERRED) for partition: dirty-0: "
                             "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: ")
    assert elect(c, "--election-type", "unclean", "--topic", "dirty", "--partition", "0") == (
        0, ["Successfully completed leader election (UNCLEAN) for partitions dirty-0"], "")
    after = c.partition_state("dirty", 0)
    assert (after["leader"], after["isr"], after["leader_epoch"]) == (b, [b], before["leader_epoch"] + 1)
    assert elect(c, "--election-type", "unclean", "--topic", "dirty", "--partition", "0") == (
        0, ["Valid replica already elected for partitions dirty-0"], "")
