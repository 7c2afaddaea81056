"""ElectLeaders on a real 3-broker cluster from real clients (confluent-kafka's AdminClient, librdkafka; kafka-python
3's KafkaAdminClient in a subprocess): Kafka 2.6's KafkaApis.handleElectReplicaLeader → KafkaController.electLeaders →
processReplicaLeaderElection(AdminClientTriggered), each answer checked against the partition state znodes and the
Metadata the clients read afterwards.

- PREFERRED (PreferredReplicaPartitionLeaderElectionStrategy): the preferred replica, alive and in the ISR, leads
  again, ISR kept, leader_epoch + 1 — also when the stopped preferred replica was the controller; ELECTION_NOT_NEEDED
  where it already leads; UNKNOWN_TOPIC_OR_PARTITION for a partition the controller does not know;
  PREFERRED_LEADER_NOT_AVAILABLE while the preferred replica is down; NOT_CONTROLLER per partition from another
  broker; a null partition list elects every partition that needs it and leaves the others out of the answer.
- UNCLEAN (KIP-460, OfflinePartitionLeaderElectionStrategy(allowUnclean = true)): a partition whose ISR holds only a
  dead broker gets its live out-of-sync replica as leader with ISR = [leader]; ELIGIBLE_LEADERS_NOT_AVAILABLE where
  no replica is alive; ELECTION_NOT_NEEDED where the leader is alive.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from cluster_helpers import Cluster, raw_request
from kafka_clients_helpers import KAFKA_PYTHON3, bootstrap, kafka_python3

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
pytest.importorskip("confluent_kafka")

# the elections are the test's to make: no AutoTriggered preferred election may move a leader behind its back
OVERRIDES = ("auto.leader.rebalance.enable=false",)


def others(c: Cluster) -> tuple[int, int]:
    """The two brokers that are not the controller: stopping them never moves the controller."""
    controller = c.controller_id()
    a, b = (x for x in c.live_brokers() if x != controller)
    return a, b


def elect(c: Cluster, election_type: str,
          partitions: list[tuple[str, int]] | None) -> dict[tuple[str, int], str | None]:
    """ElectLeaders through librdkafka's AdminClient (sent to the controller, as Kafka's admin clients route it):
    partition → None or the name of its KafkaError. ``partitions`` None: every partition (a null list)."""
    from confluent_kafka import ElectionType, TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap(c)})
    # no request_timeout / operation_timeout: confluent-kafka 2.16.1's binding refuses any keyword argument here
    # (SystemError "more argument specifiers than keyword list entries"); librdkafka's default is 60 s
    named = None if partitions is None else [TopicPartition(t, p) for t, p in partitions]
    try:
        results = admin.elect_leaders(ElectionType[election_type], named).result(timeout=90)
    finally:  # AdminClient has no close(): a failed test's traceback would keep it reconnecting to a stopped cluster
        del admin
    return {(tp.topic, tp.partition): None if e is None else e.name() for tp, e in results.items()}


def client_metadata(c: Cluster, topic: str | None = None) -> Any:
    """The Metadata librdkafka reads (brokers, controller id, the topic's partitions)."""
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap(c)}).list_topics(topic, timeout=30)


def client_leader(c: Cluster, topic: str, partition: int) -> int:
    return client_metadata(c, topic).topics[topic].partitions[partition].leader


@pytest.mark.parametrize("preferred_is", ["a follower broker", "the controller"])
def test_preferred_election_moves_the_leader_back(start_cluster, preferred_is: str) -> None:
    c = start_cluster(3, overrides=OVERRIDES)
    a, b = others(c)
    if preferred_is == "the controller":  # its stop moves the controller too: the elections are the next one's
        a = c.controller_id()
    c.create_topic("pref", assignment={0: [a, b], 1: [b, a], 2: [a, b]})
    for p, isr in ((0, [a, b]), (1, [b, a]), (2, [a, b])):
        c.wait_partition("pref", p, lambda st, isr=isr: st["isr"] == isr, what=f"pref-{p} fully in sync")
    # pref-0 and pref-2 lose their preferred leader a (controlled shutdown): while a is down its election fails
    c.stop_broker(a)
    c.wait_partition("pref", 0, lambda st: st["leader"] == b, what=f"pref-0 led by {b}")
    c.wait(lambda: client_metadata(c).controller_id == c.controller_id() != a,
           what="librdkafka's Metadata names the controller ZooKeeper names")
    down = c.partition_state("pref", 0)
    assert elect(c, "PREFERRED", [("pref", 0)]) == {("pref", 0): "PREFERRED_LEADER_NOT_AVAILABLE"}
    assert c.partition_state("pref", 0) == down
    # a comes back into the ISRs as a follower
    c.restart(a)
    before = {p: c.wait_partition("pref", p, lambda st: st["isr"] == [b, a], what=f"{a} back in pref-{p}'s ISR")
              for p in (0, 1, 2)}
    assert [before[p]["leader"] for p in (0, 1, 2)] == [b, b, b]

    # a broker that is not the controller answers NOT_CONTROLLER for each partition (processReplicaLeaderElection's
    # isActive check) and the top-level error NONE, as 2.6's handleElectReplicaLeader does
    other = next(x for x in c.live_brokers() if x != c.controller_id())
    answer = raw_request("{}:{}".format(*c.lc.broker_address(other)), 43, 2, {
        "election_type": 0, "topic_partitions": [{"topic": "pref", "partitions": [0]}], "timeout_ms": 30000})
    assert answer == {"throttle_time_ms": 0, "error_code": 0, "replica_election_results": [
        {"topic": "pref", "partition_result": [{"partition_id": 0, "error_code": 41, "error_message": None}]}]}

    got = elect(c, "PREFERRED", [("pref", 0), ("pref", 1), ("pref", 7), ("nosuch", 0)])
    # (UNKNOWN_TOPIC_OR_PART is librdkafka's name for Kafka's UNKNOWN_TOPIC_OR_PARTITION, code 3)
    assert got == {("pref", 0): None, ("pref", 1): "ELECTION_NOT_NEEDED", ("pref", 7): "UNKNOWN_TOPIC_OR_PART",
                   ("nosuch", 0): "UNKNOWN_TOPIC_OR_PART"}
    # PreferredReplicaPartitionLeaderElectionStrategy: leader a, ISR kept, leader_epoch + 1 by this controller
    elected = {"controller_epoch": c.controller_epoch(), "leader": a, "version": 1,
               "leader_epoch": before[0]["leader_epoch"] + 1, "isr": [b, a]}
    assert c.partition_state("pref", 0) == elected
    assert c.partition_state("pref", 1) == before[1]  # ELECTION_NOT_NEEDED writes nothing
    assert c.partition_state("pref", 2) == before[2]  # not named
    assert not c.zk.exists("/admin/preferred_replica_election")
    assert not c.zk.exists("/brokers/topics/nosuch")  # ElectLeaders creates no topic
    c.wait(lambda: client_leader(c, "pref", 0) == a, what=f"librdkafka's Metadata shows pref-0 led by {a}")
    # kafka-python 3's Metadata (v9 from a 2.6 broker) carries the leader epoch the election wrote
    seen = kafka_python3("metadata", bootstrap(c), "pref")["topics"]["pref"]["0"]
    assert (seen["leader"], seen["leader_epoch"], seen["isr"]) == (a, elected["leader_epoch"], [b, a])

    # every partition (topic_partitions null: the metadata cache's partitions): only those elected are answered,
    # ELECTION_NOT_NEEDED ones are left out
    assert elect(c, "PREFERRED", None) == {("pref", 2): None}
    assert c.partition_state("pref", 2) == {**elected, "leader_epoch": before[2]["leader_epoch"] + 1}
    assert c.partition_state("pref", 0) == elected
    assert elect(c, "PREFERRED", None) == {}


KP3_ELECT = textwrap.dedent("""
    import json, sys
    from kafka.admin import KafkaAdminClient
    from kafka.errors import for_code
    admin = KafkaAdminClient(bootstrap_servers=sys.argv[1], request_timeout_ms=60000)
    answer = admin.elect_leaders(int(sys.argv[2]), json.loads(sys.argv[3]), timeout_ms=30000, raise_errors=False)
    print(json.dumps({"version": answer.API_VERSION, "error": getattr(answer, "error_code", 0),
                      "partitions": sorted([r.topic, p.partition_id, for_code(p.error_code).__name__]
                                           for r in answer.replica_election_results for p in r.partition_result)}))
""")


def kp3_elect(c: Cluster, election_type: int, partitions: dict[str, list[int]]) -> dict[str, Any]:
    """ElectLeaders through kafka-python 3's KafkaAdminClient (its own subprocess: .venv holds kafka-python 1.x)."""
    if not (KAFKA_PYTHON3 / "kafka").is_dir():
        pytest.fail(f"kafka-python 3 is not installed in {KAFKA_PYTHON3}: run scripts/setup")
    env = dict(os.environ, PYTHONPATH=str(KAFKA_PYTHON3))
    proc = subprocess.run([sys.executable, "-c", KP3_ELECT, bootstrap(c), str(election_type), json.dumps(partitions)],
                          capture_output=True, text=True, timeout=120, env=env, cwd="/")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_unclean_election_elects_the_live_out_of_sync_replica(start_cluster) -> None:
    c = start_cluster(3, overrides=OVERRIDES)
    controller = c.controller_id()
    a, b = others(c)
    # dirty-0 on a (leader) and b; dirty-1 led by the controller, which stays up; lost-0 lives on a alone
    c.create_topic("dirty", assignment={0: [a, b], 1: [controller, b]})
    c.create_topic("lost", assignment={0: [a]})
    c.wait_partition("dirty", 0, lambda st: st["isr"] == [a, b], what="dirty-0 fully in sync")
    # b leaves dirty-0's ISR (controlled shutdown), then a, the last in-sync replica, dies: dirty-0 is offline with
    # ISR [a] (removeReplicasFromIsr keeps the last member), and b comes back out of sync; unclean elections are off
    c.stop_broker(b)
    c.wait_partition("dirty", 0, lambda st: st["isr"] == [a], what="dirty-0's ISR shrunk to [a]")
    c.kill(a)
    before = c.wait_partition("dirty", 0, lambda st: st["leader"] == -1, what="dirty-0 offline")
    assert before["isr"] == [a]
    lost = c.wait_partition("lost", 0, lambda st: st["leader"] == -1, what="lost-0 offline")
    c.restart(b)
    # the controller has taken b's startup (its UpdateMetadata reached the brokers, its LeaderAndIsr made b dirty-1's
    # follower) and, unclean elections being off, left dirty-0 offline
    c.wait(lambda: b in client_metadata(c).brokers, what=f"Metadata lists broker {b}")
    dirty1 = c.wait_partition("dirty", 1, lambda st: st["isr"] == [controller, b], what=f"{b} back in dirty-1's ISR")
    assert c.partition_state("dirty", 0) == before

    got = kp3_elect(c, 1, {"dirty": [0, 1], "lost": [0]})
    assert got == {"version": 2, "error": 0, "partitions": [["dirty", 0, "NoError"],
                                                           ["dirty", 1, "ElectionNotNeededError"],
                                                           ["lost", 0, "EligibleLeadersNotAvailableError"]]}
    # OfflinePartitionLeaderElectionStrategy(allowUnclean = true): the first live replica, ISR = [it], epoch + 1
    assert c.partition_state("dirty", 0) == {"controller_epoch": c.controller_epoch(), "leader": b, "version": 1,
                                             "leader_epoch": before["leader_epoch"] + 1, "isr": [b]}
    assert c.partition_state("dirty", 1) == dirty1
    assert c.partition_state("lost", 0) == lost
    c.wait(lambda: client_leader(c, "dirty", 0) == b, what=f"librdkafka's Metadata shows dirty-0 led by {b}")
    # librdkafka's answer to the same election now: the leader is alive
    assert elect(c, "UNCLEAN", [("dirty", 0)]) == {("dirty", 0): "ELECTION_NOT_NEEDED"}
