"""Real Kafka clients against a real kactor cluster (issue #20's "Must show"): confluent-kafka (librdkafka),
kafka-python 3 and kcat, each talking Kafka's binary protocol to broker processes on a real ZooKeeper.

- bootstrap metadata (brokers, controller, leaders, leader epochs, replicas, ISR) equal to the znodes, from both
  client libraries;
- topics created and deleted through the admin API, seen in ZooKeeper;
- acks=all produce, then every record read back from the beginning, in order, with its exact key and value;
- a producer that keeps going through its leader's SIGKILL and through a controlled shutdown, with every
  acknowledged record readable at its acknowledged offset afterwards;
- ``kcat -L`` and a kcat produce/consume round trip.

All but the SIGKILL test run on the session's shared cluster (conftest shared_cluster), each with topics of its own.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from cluster_helpers import Cluster
from kafka_clients_helpers import (
    OVERRIDES,
    ProducerThread,
    bootstrap,
    closing_producer,
    kafka_python3,
    kcat_or_skip,
    read_partition,
    znode_metadata,
)

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

ASSIGNMENT = {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1]}


def _confluent_metadata(servers: str, topic: str) -> dict[str, Any]:
    from kactor.kafka_clients import admin_client

    md = admin_client(servers).list_topics(timeout=10)
    parts = md.topics[topic].partitions if topic in md.topics else {}
    return {"brokers": {b.id: (b.host, b.port) for b in md.brokers.values()}, "controller": md.controller_id,
            "partitions": {p: {"leader": m.leader, "replicas": list(m.replicas), "isr": list(m.isrs)}
                           for p, m in sorted(parts.items())}}


def test_bootstrap_metadata_matches_the_znodes(shared_cluster: Cluster) -> None:
    """librdkafka's and kafka-python 3's Metadata answers say what ZooKeeper says (polled: the brokers' metadata
    caches follow UpdateMetadata)."""
    c = shared_cluster
    c.create_topic("listed", assignment=ASSIGNMENT)
    servers = bootstrap(c)

    def same_in_confluent() -> bool:
        zk = znode_metadata(c, "listed")
        seen = _confluent_metadata(servers, "listed")
        want = {p: {k: v[k] for k in ("leader", "replicas", "isr")} for p, v in zk["partitions"].items()}
        return seen == {"brokers": zk["brokers"], "controller": zk["controller"], "partitions": want}
    c.wait(same_in_confluent, 30, "confluent-kafka's metadata equal to the znodes")
    zk = znode_metadata(c, "listed")
    assert sorted(zk["brokers"]) == [0, 1, 2] and zk["controller"] in (0, 1, 2)
    assert [zk["partitions"][p]["leader"] for p in range(3)] == [0, 1, 2]

    def same_in_kafka_python3() -> bool:
        zk = znode_metadata(c, "listed")
        seen = kafka_python3("metadata", servers, "listed")
        want = {str(p): {**v, "offline": [], "error": 0} for p, v in zk["partitions"].items()}
        return (seen["controller_id"] == zk["controller"]
                and seen["brokers"] == [[b, h, port] for b, (h, port) in sorted(zk["brokers"].items())]
                and seen["topics"] == {"listed": want})
    c.wait(same_in_kafka_python3, 60, "kafka-python 3's metadata (with leader epochs) equal to the znodes")


def test_topics_created_and_deleted_through_the_admin_api(shared_cluster: Cluster) -> None:
    """CreateTopics from librdkafka and from kafka-python 3 writes Kafka's znodes; DeleteTopics removes them."""
    from confluent_kafka.admin import NewTopic

    from kactor.kafka_clients import admin_client

    c = shared_cluster
    servers = bootstrap(c)
    admin = admin_client(servers)
    futures = admin.create_topics([NewTopic("by-librdkafka", num_partitions=3, replication_factor=2)],
                                  operation_timeout=20)
    assert futures["by-librdkafka"].result(30) is None
    assert kafka_python3("create", servers, "by-kafka-python", "2", "3") == {"error": None}

    for topic, partitions, rf in (("by-librdkafka", 3, 2), ("by-kafka-python", 2, 3)):
        assignment = c.wait(lambda t=topic: c.assignment(t), 30, f"/brokers/topics/{topic}")
        assert sorted(assignment) == list(range(partitions))
        assert all(len(set(r)) == rf and set(r) <= {0, 1, 2} for r in assignment.values()), assignment
        for p, replicas in assignment.items():
            st = c.wait_partition(topic, p, lambda s: s["leader"] >= 0, what=f"{topic}-{p} led")
            assert st["leader"] == replicas[0] and sorted(st["isr"]) == sorted(replicas)
    c.wait(lambda: {"by-librdkafka", "by-kafka-python"} <= set(admin.list_topics(timeout=10).topics), 30,
           "both topics in the metadata")

    futures = admin.delete_topics(["by-kafka-python"], operation_timeout=20)
    assert futures["by-kafka-python"].result(30) is None
    assert kafka_python3("delete", servers, "by-librdkafka") == {"error": None}
    for topic in ("by-librdkafka", "by-kafka-python"):
        c.wait(lambda t=topic: not c.zk.exists(f"/brokers/topics/{t}") and not c.zk.exists(f"/admin/delete_topics/{t}"),
               60, f"{topic} deleted from ZooKeeper")
    c.wait(lambda: not {"by-librdkafka", "by-kafka-python"} & set(admin.list_topics(timeout=10).topics), 30,
           "both topics gone from the metadata")


def test_acks_all_produce_then_every_record_read_from_the_beginning_in_order(shared_cluster: Cluster) -> None:
    """600 keyed records from librdkafka (acks=all) and 60 from kafka-python 3: each partition's acknowledged
    offsets are 0..n-1 in the order sent, and both consumers read exactly those records back."""
    from confluent_kafka import Producer

    from kactor.kafka_clients import client_config

    c = shared_cluster
    c.create_topic("events", assignment=ASSIGNMENT, configs={"min.insync.replicas": "2"})
    c.wait(lambda: all(len(c.partition_state("events", p)["isr"]) == 3 for p in range(3)), 30, "full ISRs")
    servers = bootstrap(c)
    acked: list[tuple[int, int, str, str]] = []
    failed: list[Any] = []

    def report(error: Any, msg: Any) -> None:
        if error is not None:
            failed.append(error)
        else:
            acked.append((msg.partition(), msg.offset(), msg.key().decode(), msg.value().decode()))
    with closing_producer(Producer(client_config(servers, "test-producer", {"acks": "all", "linger.ms": 5}))) \
            as producer:
        for i in range(600):
            producer.produce("events", key=f"key-{i}".encode(), value=f"value-{i}".encode(), on_delivery=report)
            producer.poll(0)
        assert producer.flush(60) == 0 and failed == []
    assert len(acked) == 600
    by_partition: dict[int, list[tuple[int, str, str]]] = {}
    for p, o, k, v in sorted(acked):
        by_partition.setdefault(p, []).append((o, k, v))
    assert sorted(by_partition) == [0, 1, 2]  # murmur2 spreads 600 keys over all three
    for p, records in by_partition.items():
        assert [o for o, _, _ in records] == list(range(len(records))), f"partition {p}: offsets not 0..n-1"
        sent_order = [int(k.split("-")[1]) for _, k, _ in records]
        assert sent_order == sorted(sent_order), f"partition {p}: not in the order sent"
        assert all(v == "value-" + k.split("-")[1] for _, k, v in records)

    kp3 = kafka_python3("produce", servers, "events", "60")
    assert len(kp3) == 60
    for p, o, k, v in kp3:
        by_partition.setdefault(p, []).append((o, k, v))
    for records in by_partition.values():
        assert [o for o, _, _ in records] == list(range(len(records)))

    read = [tuple(r) for r in kafka_python3("consume", servers, "events", "660")]
    assert sorted(read) == sorted((p, o, k, v) for p, recs in by_partition.items() for o, k, v in recs)
    for p in range(3):  # kafka-python 3 reads each partition in offset order
        assert [r[1] for r in read if r[0] == p] == list(range(len(by_partition[p])))
    for p, records in by_partition.items():
        assert read_partition(servers, "events", p) == [(o, v) for o, _, v in records]


def test_a_producer_keeps_going_through_a_leader_sigkill_and_a_controlled_shutdown(start_cluster) -> None:
    """One acks=all producer (librdkafka's retries, its metadata refresh) through two leader changes: the leader
    SIGKILLed (a new leader after the session timeout) and, after it is back in the ISR, the next leader's
    controlled shutdown. Afterwards every acknowledged record is at its acknowledged offset."""
    c: Cluster = start_cluster(3, overrides=OVERRIDES, killed_under_load=True)
    c.create_topic("through", assignment={0: [0, 1, 2]}, configs={"min.insync.replicas": "2"})
    c.wait_partition("through", 0, lambda s: len(s["isr"]) == 3, what="full ISR")
    servers = bootstrap(c)
    producer = ProducerThread(servers, "through").start()
    try:
        seen = producer.wait_acks(c, 50, "before any fault")
        first = c.partition_state("through", 0)
        c.kill(first["leader"])
        second = c.wait_partition("through", 0, lambda s: s["leader"] not in (-1, first["leader"]), 60,
                                  f"a new leader after broker {first['leader']}'s SIGKILL")
        seen = producer.wait_acks(c, seen + 50, f"acks from the new leader {second['leader']}")
        c.restart(first["leader"])
        c.wait_partition("through", 0, lambda s: len(s["isr"]) == 3, 60, f"broker {first['leader']} back in the ISR")
        leader = c.partition_state("through", 0)["leader"]
        assert c.stop_broker(leader) == 0  # SIGTERM: a controlled shutdown moves the leadership first
        third = c.wait_partition("through", 0, lambda s: s["leader"] not in (-1, leader), 30,
                                 f"a new leader after broker {leader}'s controlled shutdown")
        producer.wait_acks(c, seen + 50, f"acks from leader {third['leader']} after the controlled shutdown")
    finally:
        producer.stop()
    assert len({o for o, _ in producer.acked}) == len(producer.acked), "an offset acknowledged twice"
    log = dict(read_partition(bootstrap(c), "through", 0))
    missing = [(o, v) for o, v in producer.acked if log.get(o) != v]
    assert missing == [], f"{len(missing)} of {len(producer.acked)} acknowledged records not at their offsets: " \
                          f"{missing[:5]}"
    assert len(producer.acked) >= 150


def test_kcat_metadata_and_a_produce_consume_round_trip(shared_cluster: Cluster) -> None:
    """``kcat -L -J`` lists the brokers, controller and partitions as ZooKeeper has them; lines piped into
    ``kcat -P`` come back from ``kcat -C`` with their partitions, offsets, keys and values."""
    kcat = kcat_or_skip()
    c = shared_cluster
    c.create_topic("kcat", assignment=ASSIGNMENT)
    servers = bootstrap(c)

    def listing() -> dict[str, Any] | None:
        out = subprocess.run([kcat, "-b", servers, "-L", "-J", "-m", "10"], capture_output=True, text=True,
                             timeout=60)
        return json.loads(out.stdout) if out.returncode == 0 else None

    def same() -> bool:
        md, zk = listing(), znode_metadata(c, "kcat")
        if md is None:
            return False
        topics = {t["topic"]: t for t in md["topics"]}
        if "kcat" not in topics:
            return False
        parts = {p["partition"]: {"leader": p["leader"], "replicas": [r["id"] for r in p["replicas"]],
                                  "isr": [r["id"] for r in p["isrs"]]} for p in topics["kcat"]["partitions"]}
        want = {p: {k: v[k] for k in ("leader", "replicas", "isr")} for p, v in zk["partitions"].items()}
        return (md["controllerid"] == zk["controller"] and parts == want
                and {b["id"]: b["name"] for b in md["brokers"]} == {b: f"{h}:{p}" for b, (h, p) in
                                                                    zk["brokers"].items()})
    c.wait(same, 30, "kcat -L -J equal to the znodes")
    plain = subprocess.run([kcat, "-b", servers, "-L", "-t", "kcat"], capture_output=True, text=True, timeout=60)
    assert plain.returncode == 0, plain.stderr
    assert "3 brokers:" in plain.stdout and "(controller)" in plain.stdout
    assert ' topic "kcat" with 3 partitions:' in plain.stdout

    lines = "".join(f"k{i}:v{i}\n" for i in range(20))
    for p in range(3):
        put = subprocess.run([kcat, "-b", servers, "-P", "-t", "kcat", "-p", str(p), "-K", ":",
                              "-X", "acks=all"], input=lines, capture_output=True, text=True, timeout=60)
        assert put.returncode == 0, put.stderr
    got = subprocess.run([kcat, "-b", servers, "-C", "-t", "kcat", "-o", "beginning", "-e", "-q",
                          "-f", "%p %o %k %s\n"], capture_output=True, text=True, timeout=60)
    assert got.returncode == 0, got.stderr
    assert sorted(got.stdout.splitlines()) == sorted(f"{p} {i} k{i} v{i}" for p in range(3) for i in range(20))
