"""Topic auto-creation on real brokers (Kafka 2.6's auto.create.topics.enable, default true): a librdkafka producer
writes to a topic nobody created, the broker's Metadata answer creates it (num.partitions, default.replication.factor)
with exactly AdminZkClient's znodes, and a consumer reads the records back; with auto.create.topics.enable=false the
producer is told UNKNOWN_TOPIC_OR_PARTITION and nothing is written to ZooKeeper.
"""

from __future__ import annotations

import pytest
from cluster_helpers import Cluster
from kafka_clients_helpers import OVERRIDES, bootstrap, closing_producer, read_partition
from kazoo.exceptions import NoNodeError

from edges.transport import BlockingClient
from messages.common import Errors

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def _produce(servers: str, topic: str, values: list[str], timeout_s: float = 30.0) -> list[tuple[int, int, str]]:
    """Produce ``values`` with acks=all; every delivery report as (error code or 0, offset, value)."""
    from confluent_kafka import Producer

    from kactor.kafka_clients import client_config

    reports: list[tuple[int, int, str]] = []

    def delivered(err, msg) -> None:  # noqa: ANN001 - librdkafka's callback
        reports.append((err.code() if err is not None else 0, msg.offset() if err is None else -1,
                        msg.value().decode()))

    with closing_producer(Producer(client_config(servers, "auto-create-producer", {
            "acks": "all", "message.timeout.ms": int(timeout_s * 1000) - 5000,
            "topic.metadata.propagation.max.ms": 3000}))) as producer:
        for v in values:
            producer.produce(topic, v.encode(), partition=0, on_delivery=delivered)
        assert producer.flush(timeout_s) == 0, "records still without a delivery report"
    return reports


def _metadata_raw(c: Cluster, broker: int, topics: list[str], allow: bool = True) -> dict:
    with BlockingClient(*c.lc.broker_address(broker)) as client:
        return client.request_raw(3, 9, {"topics": [{"name": t} for t in topics], "allow_auto_topic_creation": allow,
                                         "include_cluster_authorized_operations": False,
                                         "include_topic_authorized_operations": False})


def _metadata(c: Cluster, broker: int, topic: str, allow: bool = True) -> dict:
    (t,) = _metadata_raw(c, broker, [topic], allow)["topics"]
    return t


def _wait_cache_knows_brokers(c: Cluster, n: int) -> None:
    """Every broker's metadata cache lists the n live brokers (the controller's UpdateMetadata has arrived)."""
    for b in range(n):
        c.wait(lambda b=b: len(_metadata_raw(c, b, [])["brokers"]) == n, what=f"broker {b}'s cache with {n} brokers")


def test_a_producer_to_a_missing_topic_creates_it_and_a_consumer_reads_the_records(start_cluster) -> None:
    pytest.importorskip("confluent_kafka")
    c = start_cluster(1, overrides=OVERRIDES)
    _wait_cache_knows_brokers(c, 1)
    servers = bootstrap(c)
    values = [f"auto-{i}" for i in range(5)]
    reports = _produce(servers, "fresh", values)
    assert sorted(reports, key=lambda r: r[1]) == [(0, i, v) for i, v in enumerate(values)]
    # exactly what AdminZkClient.createTopic writes for num.partitions=1, default.replication.factor=1
    assert c.json("/brokers/topics/fresh") == {"version": 2, "partitions": {"0": [0]}, "adding_replicas": {},
                                               "removing_replicas": {}}
    assert c.json("/config/topics/fresh") == {"version": 1, "config": {}}
    assert read_partition(servers, "fresh", 0) == list(enumerate(values))


def test_the_brokers_num_partitions_and_default_replication_factor_shape_the_topic(start_cluster) -> None:
    c = start_cluster(2, overrides=(*OVERRIDES, "num.partitions=3", "default.replication.factor=2"))
    _wait_cache_knows_brokers(c, 2)
    # the first answer promises the topic: LEADER_NOT_AVAILABLE, no partitions yet
    first = _metadata(c, 1, "wide")
    assert (first["error_code"], first["partitions"]) == (Errors.LEADER_NOT_AVAILABLE, [])
    assignment = c.wait(lambda: c.assignment("wide"), what="the topic znode")
    assert {p: len(r) for p, r in assignment.items()} == {0: 2, 1: 2, 2: 2}
    assert all(sorted(r) == [0, 1] for r in assignment.values())
    t = c.wait(lambda: (t := _metadata(c, 0, "wide"))["error_code"] == 0 and all(
        p["leader_id"] >= 0 for p in t["partitions"]) and len(t["partitions"]) == 3 and t, what="leaders")
    assert {p["partition_index"]: p["replica_nodes"] for p in t["partitions"]} == assignment
    # a client that does not allow creation is told the topic is unknown, and nothing is written
    assert _metadata(c, 0, "not-allowed", allow=False)["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert _metadata(c, 0, "bad/name")["error_code"] == Errors.INVALID_TOPIC_EXCEPTION
    with pytest.raises(NoNodeError):
        c.zk.get("/brokers/topics/not-allowed")


def test_with_auto_creation_off_the_producer_gets_unknown_topic_or_partition(start_cluster) -> None:
    pytest.importorskip("confluent_kafka")
    from confluent_kafka import KafkaError

    c = start_cluster(1, overrides=(*OVERRIDES, "auto.create.topics.enable=false"))
    _wait_cache_knows_brokers(c, 1)
    reports = _produce(bootstrap(c), "absent", ["a", "b"], timeout_s=20.0)
    assert [r[0] for r in reports] == [KafkaError.UNKNOWN_TOPIC_OR_PART] * 2, reports
    assert _metadata(c, 0, "absent")["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
    with pytest.raises(NoNodeError):
        c.zk.get("/brokers/topics/absent")
