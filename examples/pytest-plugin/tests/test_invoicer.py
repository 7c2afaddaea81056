"""invoicer against a real 3-broker Kafka (kactor's pytest plugin): every order invoiced exactly once, also when the
leader of an output partition is SIGKILLed while the service runs."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import Counter

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from invoicer import Invoicer, invoice

PARTITIONS = 3


def produce_orders(config: dict, topic: str, count: int, first: int = 0, per_second: float = 0) -> dict[str, bytes]:
    """``count`` orders, keyed by their id (from o-<first>), through an idempotent producer, ``per_second`` a
    second if given; id → order."""
    producer = Producer({**config, "enable.idempotence": True})
    orders = {}
    for i in range(first, first + count):
        oid = f"o-{i}"
        orders[oid] = json.dumps({"id": oid, "qty": i % 7 + 1, "price": 2.5}).encode()
        producer.produce(topic, key=oid.encode(), value=orders[oid])
        producer.poll(0)
        if per_second:
            time.sleep(1 / per_second)
    assert producer.flush(30) == 0
    return orders


def read_committed(config: dict, topic: str, expected: int, timeout: float = 60.0) -> list[tuple[bytes, bytes]]:
    """Every committed record of ``topic`` (key, value), reading until ``expected`` arrived and then half a second
    more (a duplicate would come after them), or until ``timeout``."""
    consumer = Consumer({**config, "group.id": f"check-{uuid.uuid4()}", "isolation.level": "read_committed",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    out: list[tuple[bytes, bytes]] = []
    deadline = time.monotonic() + timeout
    quiet_until = None
    try:
        while time.monotonic() < deadline and (quiet_until is None or time.monotonic() < quiet_until):
            for m in consumer.consume(500, timeout=0.2):
                if m.error() is None:
                    out.append((m.key(), m.value()))
            if quiet_until is None and len(out) >= expected:
                quiet_until = time.monotonic() + 0.5
    finally:
        consumer.close()
    return out


def start(service: Invoicer) -> tuple[threading.Event, threading.Thread, list[BaseException]]:
    stop, errors = threading.Event(), []

    def run() -> None:
        try:
            service.run(stop)
        except BaseException as e:  # the test reports it
            errors.append(e)

    thread = threading.Thread(target=run, name="invoicer", daemon=True)
    thread.start()
    return stop, thread, errors


def test_every_order_is_invoiced(kafka_topic, kafka_client_config) -> None:
    orders_topic, invoices_topic = kafka_topic(partitions=PARTITIONS), kafka_topic(partitions=PARTITIONS)
    orders = produce_orders(kafka_client_config, orders_topic, 60)
    service = Invoicer(kafka_client_config, orders_topic, invoices_topic, f"invoicer-{uuid.uuid4()}",
                       f"invoicer-tx-{uuid.uuid4()}")
    stop, thread, errors = start(service)
    try:
        invoices = read_committed(kafka_client_config, invoices_topic, len(orders))
    finally:
        stop.set()
        thread.join(60)
    assert not errors, errors
    assert sorted(invoices) == sorted((k.encode(), invoice(v)) for k, v in orders.items())


def test_leader_killed_mid_run_every_order_invoiced_exactly_once(kafka_cluster, kafka_topic,
                                                                 kafka_client_config) -> None:
    """SIGKILL the leader of an output partition while orders still arrive, after the first transactions committed:
    the transaction in flight waits for the partition's new leader or is aborted and its batch read again from the
    committed offsets; the invoices a read_committed consumer sees are each order's, each exactly once."""
    orders_topic, invoices_topic = kafka_topic(partitions=PARTITIONS), kafka_topic(partitions=PARTITIONS)
    group, txn_id = f"invoicer-{uuid.uuid4()}", f"invoicer-tx-{uuid.uuid4()}"
    orders = produce_orders(kafka_client_config, orders_topic, 200)
    more: dict[str, bytes] = {}
    feeder = threading.Thread(target=lambda: more.update(produce_orders(kafka_client_config, orders_topic, 400,
                                                                        first=200, per_second=100)))
    first_commits = threading.Event()
    service = Invoicer(kafka_client_config, orders_topic, invoices_topic, group, txn_id, batch=20,
                       on_commit=lambda n: n >= 60 and first_commits.set())
    stop, thread, errors = start(service)
    feeder.start()
    try:
        assert first_commits.wait(60), f"no transaction committed in 60 s: {errors}"
        # the victim leads an output partition and coordinates neither the group nor the transactions: librdkafka
        # can wait for ever on a group coordinator that left the cluster's metadata (confluentinc/librdkafka#5511)
        coordinators = {kafka_cluster.group_coordinator(group), kafka_cluster.transaction_coordinator(txn_id)}
        leaders = {kafka_cluster.leader(invoices_topic, p): p for p in range(PARTITIONS)}
        victim = next(b for b in sorted(leaders) if b not in coordinators)
        assert feeder.is_alive(), "the orders were all there before the kill: feed them slower"
        kafka_cluster.kill_broker(victim)
        new_leader = kafka_cluster.wait_for_leader(invoices_topic, leaders[victim], not_on=[victim])
        feeder.join(120)
        orders.update(more)
        assert len(orders) == 600
        invoices = read_committed(kafka_client_config, invoices_topic, len(orders), timeout=120)
    finally:
        stop.set()
        thread.join(60)
    assert not errors, errors
    assert new_leader != victim
    counts = Counter(invoices)
    duplicates = {k: n for k, n in counts.items() if n > 1}
    assert not duplicates, f"invoiced more than once: {list(duplicates.items())[:5]}"
    assert sorted(invoices) == sorted((k.encode(), invoice(v)) for k, v in orders.items())

    # the plugin would restart the broker after the test; a test may do it itself and wait for full ISRs
    kafka_cluster.restart_broker(victim)
    kafka_cluster.wait_for_isr(invoices_topic)


@pytest.mark.parametrize("partitions", [1, 4])
def test_each_test_gets_topics_of_its_own(kafka_topic, kafka_cluster, partitions) -> None:
    topic = kafka_topic(partitions=partitions)
    assert topic.startswith("test_each_test_gets_topics_of_its_own")
    assert sorted(kafka_cluster.replicas(topic)) == list(range(partitions))
