"""KIP-392 on a real cluster (issue #26 item 2): three brokers in racks r0, r1, r2 with the rack-aware replica
selector; a librdkafka consumer with client.rack=r2 reads a topic led from r0, and reads it from the r2 follower.

The proof is librdkafka's own statistics: for the partition, ``leader`` stays broker 0 while ``broker`` (the broker
it is fetched from) is 2, and broker 2 answered the consumer's Fetch requests (``brokers.<b>.req.Fetch``).
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from cluster_helpers import Cluster, produce
from kafka_clients_helpers import OVERRIDES, bootstrap

pytestmark = [pytest.mark.cluster]

TOPIC = "racked"
RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
N = 60


def _racked_cluster(start_cluster: Any) -> Cluster:
    c: Cluster = start_cluster(overrides=[*OVERRIDES, f"replica.selector.class={RACK_AWARE}"], start=False)
    own_args = c.lc.broker_args
    c.lc.broker_args = lambda b: [*own_args(b), "--override", f"broker.rack=r{b}"]  # type: ignore[method-assign]
    return c.start()


def test_a_consumer_with_client_rack_fetches_from_its_racks_follower(start_cluster) -> None:
    from confluent_kafka import Consumer, TopicPartition

    from kactor.kafka_clients import client_config

    c = _racked_cluster(start_cluster)
    assert [c.json(f"/brokers/ids/{b}").get("rack") for b in (0, 1, 2)] == ["r0", "r1", "r2"]
    c.create_topic(TOPIC, assignment={0: [0, 1, 2]})
    c.wait_partition(TOPIC, 0, lambda st: st["leader"] == 0 and sorted(st["isr"]) == [0, 1, 2],
                     what="racked-0 led by broker 0 (r0) with every replica in sync")
    values = tuple(f"v{i}" for i in range(N))
    for i in range(0, N, 20):
        assert produce(c, TOPIC, 0, values[i:i + 20]).error == 0

    stats: list[dict[str, Any]] = []
    consumer = Consumer(client_config(bootstrap(c), "rack-r2-reader", {
        "group.id": "rack-r2-reader", "enable.auto.commit": False, "auto.offset.reset": "earliest",
        "client.rack": "r2", "statistics.interval.ms": 200, "stats_cb": lambda s: stats.append(json.loads(s))}))
    try:
        consumer.assign([TopicPartition(TOPIC, 0, 0)])
        read: list[tuple[int, str]] = []
        deadline = time.monotonic() + 60
        while len(read) < N and time.monotonic() < deadline:
            for msg in consumer.consume(num_messages=N, timeout=0.5):
                if msg.error() is None:
                    read.append((msg.offset(), msg.value().decode()))
        assert read == list(enumerate(values)), f"read {len(read)} of {N} records"

        def from_follower() -> dict[str, Any] | None:
            consumer.poll(0.2)  # serves stats_cb
            if not stats:
                return None
            last = stats[-1]
            part = last["topics"].get(TOPIC, {}).get("partitions", {}).get("0")
            fetches = {b["nodeid"]: b.get("req", {}).get("Fetch", 0) for b in last["brokers"].values()
                       if b.get("nodeid", -1) >= 0}
            return {"leader": part["leader"], "broker": part["broker"], "fetches": fetches} if part else None

        seen = c.wait(lambda: (s := from_follower()) is not None and s["broker"] == 2 and s, timeout=30,
                      what="librdkafka fetching racked-0 from broker 2")
        assert seen["leader"] == 0
        assert seen["fetches"].get(2, 0) > 0, seen
    finally:
        consumer.close()
