"""Client quotas on a real 2-broker cluster: AlterClientQuotas sent to one broker writes /config/clients/<client-id>,
the change notification reaches the other (the partition's leader), and a confluent-kafka producer with that client
id, sending as fast as it can, is held to about the quota, with the throttle reported in its answers
(librdkafka's throttle callback reads Produce's throttle_time_ms). DescribeClientQuotas returns what was set.

The brokers run with quota.window.num=3 (samples of quota.window.size.seconds=1): a rate is measured over at least
num - 1 windows, so a new client's first (num - 1) × quota bytes pass at once; with 2.6's default of 11 samples that
credit is 10 s of quota, longer than this run, and the test would measure the credit rather than the rate.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from cluster_helpers import Cluster, raw_request
from kafka_clients_helpers import closing_producer

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
pytest.importorskip("confluent_kafka")

MB = 1024 * 1024
CLIENT_ID = "quota-producer"
RUN_S = 9.0
VALUE = b"v" * 10_000


def endpoint(c: Cluster, broker_id: int) -> str:
    return c.json(f"/brokers/ids/{broker_id}")["endpoints"][0].split("://", 1)[1]


def test_producer_and_consumer_quotas_of_1_mb_s_hold_clients_to_about_1_mb_s(start_cluster) -> None:
    from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

    from kactor.kafka_clients import client_config

    c: Cluster = start_cluster(2, overrides=("quota.window.num=3",))
    c.create_topic("quota", assignment={0: [0]})
    c.wait(lambda: c.partition_state("quota", 0)["leader"] == 0, 30, "broker 0 leads quota-0")

    alter = raw_request(endpoint(c, 1), 49, 0, {"entries": [{
        "entity": [{"entity_type": "client-id", "entity_name": CLIENT_ID}],
        "ops": [{"key": "producer_byte_rate", "value": float(MB), "remove": False}]}], "validate_only": False})
    assert alter == {"throttle_time_ms": 0, "entries": [{
        "error_code": 0, "error_message": None,
        "entity": [{"entity_type": "client-id", "entity_name": CLIENT_ID}]}]}
    assert json.loads(c.zk.get(f"/config/clients/{CLIENT_ID}")[0]) == {
        "version": 1, "config": {"producer_byte_rate": "1048576"}}
    described = raw_request(endpoint(c, 0), 48, 0, {"components": [
        {"entity_type": "client-id", "match_type": 0, "match": CLIENT_ID}], "strict": False})
    assert described == {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "entries": [
        {"entity": [{"entity_type": "client-id", "entity_name": CLIENT_ID}],
         "values": [{"key": "producer_byte_rate", "value": float(MB)}]}]}

    acked: list[tuple[float, int]] = []
    throttles: list[tuple[float, float]] = []
    failed: list[Any] = []

    def report(error: Any, msg: Any) -> None:
        if error is not None:
            if error.code() not in (KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT):  # left at the end
                failed.append(error)
        else:
            acked.append((time.monotonic(), len(msg.value())))

    config = client_config(bootstrap := endpoint(c, 0), CLIENT_ID, {
        "acks": 1, "linger.ms": 5, "batch.size": 100_000, "max.in.flight.requests.per.connection": 5,
        "queue.buffering.max.kbytes": 4096, "message.timeout.ms": 60_000,
        "throttle_cb": lambda event: throttles.append((time.monotonic(), event.throttle_time))})
    assert bootstrap
    started = time.monotonic()
    with closing_producer(Producer(config)) as producer:
        while time.monotonic() - started < RUN_S:
            try:
                producer.produce("quota", VALUE, on_delivery=report)
            except BufferError:  # the local queue is full: the broker holds the producer back
                producer.poll(0.05)
            producer.poll(0)
        producer.poll(0.5)
    ended = time.monotonic()
    assert failed == []
    assert throttles and max(t for _, t in throttles) > 0, "no throttle_time_ms reported"
    # the steady part: from a second after the first throttle (the quota applied, the credit used) to the end
    steady_from = throttles[0][0] + 1.0
    assert ended - steady_from >= 4.0, f"first throttle only {throttles[0][0] - started:.1f} s into the run"
    steady = sum(n for t, n in acked if t >= steady_from) / (ended - steady_from) / MB
    total = sum(n for _, n in acked) / MB
    print(f"steady {steady:.2f} MB/s from {steady_from - started:.1f} s, {total:.1f} MB in {ended - started:.1f} s, "
          f"throttles {[t for _, t in throttles]}")
    assert 0.5 <= steady <= 1.6, f"{steady:.2f} MB/s over the steady part ({total:.1f} MB in all)"

    # a consumer quota on another client id: its fetches from the records just written are held to it (a throttled
    # Fetch is answered empty), while the producer's quota does not touch it
    assert raw_request(endpoint(c, 0), 49, 0, {"entries": [{
        "entity": [{"entity_type": "client-id", "entity_name": "quota-consumer"}],
        "ops": [{"key": "consumer_byte_rate", "value": float(MB), "remove": False}]}],
        "validate_only": False})["entries"][0]["error_code"] == 0
    c.wait(lambda: raw_request(endpoint(c, 0), 48, 0, {"components": [
        {"entity_type": "client-id", "match_type": 2, "match": None}], "strict": False})["entries"] is not None
        and len(raw_request(endpoint(c, 0), 48, 0, {"components": [], "strict": False})["entries"]) == 2, 10,
        "both quotas described")
    assert total > 4, "too few records to fetch for the consumer's run"
    read: list[tuple[float, int]] = []
    consumer_throttles: list[tuple[float, float]] = []
    consumer = Consumer(client_config(bootstrap, "quota-consumer", {
        "group.id": "quota-test", "enable.auto.commit": False, "auto.offset.reset": "earliest",
        # a throttled Fetch returns nothing: answers small against the quota window keep the steady rate near it
        "max.partition.fetch.bytes": 131072,
        "throttle_cb": lambda event: consumer_throttles.append((time.monotonic(), event.throttle_time))}))
    try:
        consumer.assign([TopicPartition("quota", 0, 0)])
        started = time.monotonic()
        while time.monotonic() - started < 7.0:
            msg = consumer.poll(0.1)
            if msg is not None and msg.error() is None:
                read.append((time.monotonic(), len(msg.value())))
        ended = time.monotonic()
    finally:
        consumer.close()
    assert consumer_throttles and max(t for _, t in consumer_throttles) > 0, "no throttle_time_ms on fetches"
    steady_from = consumer_throttles[0][0] + 1.0
    assert ended - steady_from >= 3.0, f"first throttle only {consumer_throttles[0][0] - started:.1f} s in"
    fetched = sum(n for t, n in read if t >= steady_from) / (ended - steady_from) / MB
    print(f"consumer steady {fetched:.2f} MB/s, {sum(n for _, n in read) / MB:.1f} MB read")
    assert 0.5 <= fetched <= 1.6, f"{fetched:.2f} MB/s fetched over the steady part"
