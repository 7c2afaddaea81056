"""Issue #19 item 3 on a real cluster: every broker started on ``listeners=PLAINTEXT://127.0.0.1:0`` registers the
port its listener bound (Kafka's KafkaServer.createBrokerInfo, reference Correction 8), as Kafka's own test harness
starts its brokers. Registered as 0, nobody could reach them: followers could not fetch, the controller's requests
would fail and reassignment, preferred election and deletion would all stall.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from cluster_helpers import (
    DEFAULT_WAIT_S,
    TEST_SESSION_TIMEOUT_MS,
    Cluster,
    now_ms,
    run_kactor,
    segment_records,
    topic_dirs,
)

from edges.transport import request
from kactor.records import values_batch
from messages.common import Errors, TopicPartition
from messages.replication import ProducePartition, ProduceRequest

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

PORT0 = ("listeners=PLAINTEXT://127.0.0.1:0", "auto.leader.rebalance.enable=false")


def _endpoint_port(c: Cluster, broker_id: int) -> int:
    reg = c.json(f"/brokers/ids/{broker_id}")
    (endpoint,) = reg["endpoints"]
    assert endpoint.startswith("PLAINTEXT://127.0.0.1:") and reg["host"] == "127.0.0.1"
    assert reg["port"] == int(endpoint.rsplit(":", 1)[1])
    return int(reg["port"])


def _produce(c: Cluster, topic: str, values: tuple[str, ...]) -> int:
    """acks=all to the leader at the endpoint it registered; returns the base offset. A new partition's state znode
    names its leader and full ISR before that broker has its LeaderAndIsr: the UNKNOWN_TOPIC_OR_PARTITION /
    NOT_LEADER_OR_FOLLOWER it answers meanwhile (nothing written) is retried, as a client does (a CI failure)."""
    deadline = time.monotonic() + 30
    while True:
        leader = c.partition_state(topic, 0)["leader"]  # type: ignore[index]
        batch = ProducePartition(TopicPartition(topic, 0), values_batch(values, now_ms()))
        resp = request("127.0.0.1", _endpoint_port(c, leader), ProduceRequest(-1, 30000, (batch,)), timeout_s=30.0)
        (result,) = resp.partitions
        if result.error not in (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_LEADER_OR_FOLLOWER) \
                or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert result.error == Errors.NONE, resp
    return result.base_offset


def test_port0_cluster_registers_bound_ports_and_runs_reassignment_election_deletion(start_cluster,
                                                                                     tmp_path: Path) -> None:
    c = start_cluster(3, overrides=PORT0)
    ports = {b: _endpoint_port(c, b) for b in (0, 1, 2)}
    assert 0 not in ports.values() and len(set(ports.values())) == 3, ports

    # replication: the followers fetch from the leader at its registered port (ISR of 3 after an acks=all write)
    c.create_topic("t", assignment={0: [0, 1, 2]})
    c.wait_partition("t", 0, lambda s: sorted(s["isr"]) == [0, 1, 2], what="t-0 ISR of 3")
    assert _produce(c, "t", ("a", "b", "c")) == 0

    # reassignment [0,1,2] -> [1,2]: broker 0's replica is removed; its leadership moves
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2]}]}))
    run_kactor("reassign-partitions", "--zookeeper", c.connect_string, "--execute", "--reassignment-json-file",
               str(plan))
    c.wait(lambda: not c.zk.exists("/admin/reassign_partitions"), what="/admin/reassign_partitions removed")
    assert c.json("/brokers/topics/t") == {"version": 2, "partitions": {"0": [1, 2]}, "adding_replicas": {},
                                           "removing_replicas": {}}
    st = c.wait_partition("t", 0, lambda s: s["leader"] == 1 and sorted(s["isr"]) == [1, 2])
    assert st["leader"] == 1
    c.wait(lambda: topic_dirs(c, 0, "t") == [], what="t-0 removed from broker 0's log dir")
    c.wait(lambda: [r[2] for r in segment_records(c, 2, "t", 0)] == ["a", "b", "c"],
           what="broker 2's replica of t-0 holds a, b, c")

    # preferred election: broker 1 stops (controlled shutdown moves t-0 to 2), restarts on a NEW port 0 binding,
    # rejoins the ISR by fetching from 2, and is elected back by kactor preferred-replica-election
    assert c.stop_broker(1) == 0
    c.wait_partition("t", 0, lambda s: s["leader"] == 2, what="t-0 led by 2 after broker 1 stopped")
    c.restart(1)
    new_port = _endpoint_port(c, 1)
    assert new_port != 0
    c.wait_partition("t", 0, lambda s: sorted(s["isr"]) == [1, 2], timeout=DEFAULT_WAIT_S + TEST_SESSION_TIMEOUT_MS,
                     what="broker 1 back in t-0's ISR")
    election = tmp_path / "election.json"
    election.write_text(json.dumps({"partitions": [{"topic": "t", "partition": 0}]}))
    run_kactor("preferred-replica-election", "--zookeeper", c.connect_string, "--path-to-json-file", str(election))
    st = c.wait_partition("t", 0, lambda s: s["leader"] == 1, what="t-0 led by its preferred replica 1 again")
    assert sorted(st["isr"]) == [1, 2]
    c.wait(lambda: not c.zk.exists("/admin/preferred_replica_election"), what="election znode removed")
    assert _produce(c, "t", ("d",)) == 3

    # deletion: every replica (on brokers reached at their bound ports) stops and deletes its log
    run_kactor("topics", "--zookeeper", c.connect_string, "--delete", "--topic", "t")
    c.wait(lambda: not c.zk.exists("/brokers/topics/t") and not c.zk.exists("/admin/delete_topics/t"),
           what="topic t deleted")
    c.wait(lambda: all(topic_dirs(c, b, "t") == [] for b in (0, 1, 2)), what="t-0 log dirs removed everywhere")
