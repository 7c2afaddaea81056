"""Issue #27 part 3 on a real cluster: the log cleaner compacts ``cleanup.policy=compact`` topics and
``__consumer_offsets`` as Kafka 2.6.3 does.

3 broker processes with the cleaner polling every 300 ms. A compacted topic with small segments is overwritten many
times by librdkafka (confluent-kafka); once cleaned, a consumer reading from the beginning gets each key exactly once
with its newest value, and every replica's partition directory is a fraction of what was written. A record without a
key is refused (INVALID_RECORD). A group committing 3,000 times (5 offsets each) leaves ``__consumer_offsets`` at its
live keys; its coordinator is then SIGKILLed and the new coordinator serves the group's offsets.
"""

from __future__ import annotations

import os
import time

import pytest
from cluster_helpers import Cluster
from kafka_clients_helpers import bootstrap, closing_producer

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

TOPIC = "compacted"
KEYS = 50
ROUNDS = 200
OVERRIDES = ("offsets.topic.num.partitions=1", "offsets.topic.segment.bytes=8192", "log.cleaner.backoff.ms=300",
             "group.initial.rebalance.delay.ms=0", "auto.leader.rebalance.enable=false")


def _dir_bytes(c: Cluster, broker: int, partition_dir: str) -> int:
    path = os.path.join(c.log_dir(broker), partition_dir)
    try:
        return sum(os.path.getsize(os.path.join(path, n)) for n in os.listdir(path) if n.endswith(".log"))
    except FileNotFoundError:
        return 0


def _read_all(servers: str, topic: str, timeout: float = 30) -> list[tuple[str, str]]:
    """Every record of partition 0 up to its high watermark, (key, value), by a librdkafka consumer from offset 0."""
    from confluent_kafka import Consumer, TopicPartition

    from kactor.kafka_clients import client_config

    consumer = Consumer(client_config(servers, "compaction-reader", {
        "group.id": "compaction-reader", "enable.auto.commit": False, "auto.offset.reset": "earliest"}))
    try:
        _, hw = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=timeout, cached=False)
        consumer.assign([TopicPartition(topic, 0, 0)])
        out: list[tuple[str, str]] = []
        last = -1
        deadline = time.monotonic() + timeout
        while last < hw - 1 and time.monotonic() < deadline:
            for msg in consumer.consume(num_messages=1000, timeout=0.5):
                if msg.error() is None:
                    out.append((msg.key().decode(), msg.value().decode()))
                    last = msg.offset()
        assert last == hw - 1, f"read up to {last}, below the high watermark {hw}"
        return out
    finally:
        consumer.close()


def test_a_compacted_topic_overwritten_many_times_reads_back_its_newest_value_per_key(start_cluster) -> None:
    import confluent_kafka

    c: Cluster = start_cluster(3, overrides=OVERRIDES)
    c.create_topic(TOPIC, replication_factor=3, configs={"cleanup.policy": "compact", "segment.bytes": "4096"})
    c.wait_partition(TOPIC, 0, lambda st: sorted(st["isr"]) == [0, 1, 2], what=f"{TOPIC}-0 with ISR of all 3")
    servers = bootstrap(c)
    newest: dict[str, str] = {}
    written = 0
    with closing_producer(confluent_kafka.Producer({"bootstrap.servers": servers, "acks": "all",
                                                    "linger.ms": 5, "enable.idempotence": True})) as producer:
        for r in range(ROUNDS):
            for k in range(KEYS):
                key, value = f"k{k}", f"round-{r}-" + "v" * 20
                producer.produce(TOPIC, key=key, value=value, partition=0)
                newest[key] = value
                written += len(key) + len(value)
            producer.poll(0)
        # unique keys after the overwrites: every overwritten key's last write lies below the active segment
        for t in range(300):
            producer.produce(TOPIC, key=f"tail{t}", value="t" * 20, partition=0)
            newest[f"tail{t}"] = "t" * 20
        assert producer.flush(60) == 0
    refused: list[str] = []
    with closing_producer(confluent_kafka.Producer({"bootstrap.servers": servers, "acks": "all",
                                                    "retries": 0})) as producer:
        producer.produce(TOPIC, value="no key", partition=0,
                         on_delivery=lambda err, _msg: refused.append(err.name() if err else "NONE"))
        producer.flush(30)
    assert refused == ["INVALID_RECORD"]  # LogValidator.validateKey

    def compacted() -> bool:
        records = _read_all(servers, TOPIC)
        return len(records) == len(newest) and dict(records) == newest

    c.wait(compacted, 120, "a reader from the beginning to get each key once, with its newest value")
    # every replica cleans its own log: each holds a fraction of the ~{written} bytes written
    for b in range(3):
        c.wait(lambda b=b: _dir_bytes(c, b, f"{TOPIC}-0") < written / 4, 60,
               f"broker {b}'s {TOPIC}-0 to be compacted below a quarter of the bytes written")
        checkpoint = os.path.join(c.log_dir(b), "cleaner-offset-checkpoint")
        with open(checkpoint) as f:
            lines = f.read().splitlines()
        assert lines[0] == "0" and any(line.startswith(f"{TOPIC} 0 ") for line in lines[2:])


def test_a_group_committing_3000_times_leaves_its_live_keys_and_moves_coordinator(start_cluster) -> None:
    import confluent_kafka

    c: Cluster = start_cluster(3, overrides=OVERRIDES)
    c.create_topic("input", partitions=5, replication_factor=3)
    servers = bootstrap(c)
    group = "committer"
    commits, partitions = 3_000, 5
    consumer = confluent_kafka.Consumer({"bootstrap.servers": servers, "group.id": group,
                                         "enable.auto.commit": False})
    try:
        for i in range(1, commits + 1):
            # asynchronous, but at most 100 in flight (a synchronous commit waits for those before it)
            consumer.commit(offsets=[confluent_kafka.TopicPartition("input", p, i) for p in range(partitions)],
                            asynchronous=i % 100 != 0)
        committed = consumer.committed([confluent_kafka.TopicPartition("input", p) for p in range(partitions)],
                                       timeout=30)
        assert [tp.offset for tp in committed] == [commits] * partitions
    finally:
        consumer.close()
    c.wait_partition("__consumer_offsets", 0, lambda st: sorted(st["isr"]) == [0, 1, 2],
                     what="__consumer_offsets-0 with ISR of all 3")
    coordinator = c.partition_state("__consumer_offsets", 0)["leader"]
    # 3,000 commits of 5 offsets are a megabyte of __consumer_offsets: the cleaner brings it to its live keys
    # (the group's 5 offsets) plus the active segment
    for b in range(3):
        c.wait(lambda b=b: _dir_bytes(c, b, "__consumer_offsets-0") < 3 * 8192, 120,
               f"broker {b}'s __consumer_offsets-0 to be compacted to its live keys")
    c.kill(coordinator)
    c.wait_partition("__consumer_offsets", 0, lambda st: st["leader"] not in (-1, coordinator),
                     what="a new coordinator for the group")
    reader = confluent_kafka.Consumer({"bootstrap.servers": bootstrap(c), "group.id": group,
                                       "enable.auto.commit": False})
    try:
        def served() -> bool:
            try:
                got = reader.committed([confluent_kafka.TopicPartition("input", p) for p in range(partitions)],
                                   timeout=5)
            except confluent_kafka.KafkaException:
                return False
            return [tp.offset for tp in got] == [commits] * partitions

        c.wait(served, 60, f"the new coordinator to serve the group's offset {commits}")
    finally:
        reader.close()
