"""DeleteRecords (key 21) on a real cluster of 3 brokers, a partition with 3 replicas and records produced with
acks=all: through confluent-kafka's AdminClient.delete_records and through ``kactor delete-records``
(kafka-delete-records.sh), each answering the low watermark once every replica moved its log start; a consumer
from the beginning then starts at the new log start, ListOffsets EARLIEST answers it, a fetch below it is
OFFSET_OUT_OF_RANGE; and the records stay deleted when the leadership moves (the followers took the log start from
their fetches) and when every broker restarts (the log-start-offset checkpoint)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from cluster_helpers import Cluster, produce, run_kactor
from kafka_clients_helpers import bootstrap

from edges.transport import request
from messages.common import TopicPartition
from messages.replication import FetchPartition, FetchRequest

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

TOPIC = "purged"
N = 10


def _low_and_high(servers: str) -> tuple[int, int]:
    """ListOffsets EARLIEST and LATEST of the partition, as a librdkafka consumer asks them."""
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as Tp

    from kactor.kafka_clients import client_config, watermark_offsets

    consumer = Consumer(client_config(servers, "purge-offsets", {"group.id": "purge-offsets"}))
    try:
        return watermark_offsets(consumer, Tp(TOPIC, 0), time.monotonic() + 30)
    finally:
        consumer.close()


def _read_from_the_beginning(servers: str, timeout: float = 30) -> list[tuple[int, str]]:
    """[(offset, value)] a librdkafka consumer reads from the beginning of the partition up to its last record."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer
    from confluent_kafka import TopicPartition as Tp

    from kactor.kafka_clients import client_config

    consumer = Consumer(client_config(servers, "purge-reader", {
        "group.id": "purge-reader", "enable.auto.commit": False, "auto.offset.reset": "earliest"}))
    try:
        consumer.assign([Tp(TOPIC, 0, OFFSET_BEGINNING)])
        out: list[tuple[int, str]] = []
        deadline = time.monotonic() + timeout
        while (not out or out[-1][0] < N - 1) and time.monotonic() < deadline:
            for msg in consumer.consume(num_messages=N, timeout=0.5):
                if msg.error() is None:
                    out.append((msg.offset(), msg.value().decode()))
        return out
    finally:
        consumer.close()


def _leader(c: Cluster) -> int:
    state = c.partition_state(TOPIC, 0)
    assert state is not None
    return int(state["leader"])


def _fetch_error_at(c: Cluster, offset: int) -> int:
    """The error of a consumer's Fetch at ``offset`` from the partition's leader."""
    answer = request("127.0.0.1", c.lc.ports[_leader(c)],
                     FetchRequest(-1, (FetchPartition(TopicPartition(TOPIC, 0), offset, -1),), max_wait_ms=0),
                     timeout_s=30.0)
    (data,) = answer.partitions
    return int(data.error)


def _expect_deleted_below(c: Cluster, low: int) -> None:
    servers = bootstrap(c)
    c.wait(lambda: _low_and_high(servers) == (low, N), what=f"ListOffsets answering ({low}, {N})")
    assert _read_from_the_beginning(servers) == [(o, f"r{o}") for o in range(low, N)]
    assert _fetch_error_at(c, low - 1) == 1  # OFFSET_OUT_OF_RANGE
    assert _fetch_error_at(c, low) == 0


def test_records_deleted_by_a_client_and_by_kactor_delete_records_stay_deleted(start_cluster: Any, tmp_path: Any
                                                                              ) -> None:
    from confluent_kafka import TopicPartition as Tp

    from kactor.kafka_clients import admin_client

    c = start_cluster(3)
    c.create_topic(TOPIC, assignment={0: [0, 1, 2]})
    c.wait_partition(TOPIC, 0, lambda st: st["leader"] == 0 and sorted(st["isr"]) == [0, 1, 2])
    for i in range(N):  # one batch per record: the log start may fall on any of them
        c.wait(lambda i=i: produce(c, TOPIC, 0, (f"r{i}",)).error == 0, what=f"r{i} produced with acks=all")
    servers = bootstrap(c)

    # a real client's DeleteRecords: answered once all 3 replicas moved their log start
    admin = admin_client(servers, "purge-admin")
    [(tp, future)] = admin.delete_records([Tp(TOPIC, 0, 3)], request_timeout=60, operation_timeout=30).items()
    assert future.result(70).low_watermark == 3
    _expect_deleted_below(c, 3)

    # kafka-delete-records.sh's file and output
    offsets = tmp_path / "offsets.json"
    offsets.write_text(json.dumps({"partitions": [{"topic": TOPIC, "partition": 0, "offset": 5}], "version": 1}))
    out = run_kactor("delete-records", "--bootstrap-server", servers, "--offset-json-file", str(offsets)).stdout
    assert out.splitlines() == ["Executing records delete operation", "Records delete operation completed:",
                                f"partition: {TOPIC}-0\tlow_watermark: 5"]
    _expect_deleted_below(c, 5)
    offsets.write_text(json.dumps({"partitions": [{"topic": TOPIC, "partition": 0, "offset": N + 1}]}))
    out = run_kactor("delete-records", "--bootstrap-server", servers, "--offset-json-file", str(offsets)).stdout
    assert out.splitlines()[-1] == (f"partition: {TOPIC}-0\terror: org.apache.kafka.common.errors."
                                    "OffsetOutOfRangeException: The requested offset is not within the range of "
                                    "offsets maintained by the server.")

    # the leader stops: a follower leads, with the log start it took from its fetches
    c.stop_broker(0)
    c.wait_partition(TOPIC, 0, lambda st: st["leader"] in (1, 2), what="a follower leading")
    _expect_deleted_below(c, 5)

    # every broker restarts: the log start comes back from each one's checkpoint
    for b in (1, 2):
        c.stop_broker(b)
    for b in (0, 1, 2):
        c.restart(b)
    c.wait_partition(TOPIC, 0, lambda st: st["leader"] >= 0 and sorted(st["isr"]) == [0, 1, 2],
                     timeout=60, what="all 3 replicas back in the ISR")
    _expect_deleted_below(c, 5)
