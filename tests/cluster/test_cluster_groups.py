"""A consumer group of real clients (confluent-kafka / librdkafka) on a real kactor cluster: two consumers split a
topic's partitions, commit, and leave; the group coordinator's broker is SIGKILLed; the __consumer_offsets
partition's new leader loads the group's offsets from its log, and a new consumer of the group resumes exactly at
the committed offsets. Also the records kactor wrote to __consumer_offsets, read back as Kafka's formats."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import Cluster
from kafka_clients_helpers import closing_producer

from core.coordinator.group.group_metadata_manager import partition_for
from core.coordinator.group.message_formats import (
    GroupMetadataKey,
    OffsetKey,
    read_group_message_value,
    read_message_key,
    read_offset_message_value,
)
from kactor.kafka_clients import watermark_offsets

confluent_kafka = pytest.importorskip("confluent_kafka")

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

TOPIC = "orders"
GROUP = "billing"
OFFSETS_PARTITIONS = 4
PER_PARTITION = 10
DEADLINE_S = 60.0


def _bootstrap(c: Cluster) -> str:
    return ",".join(f"127.0.0.1:{c.lc.ports[b]}" for b in c.live_brokers())


@pytest.fixture
def closing() -> Iterator[Callable[[Any], Any]]:
    """closing(consumer) → consumer, closed when the test ends, also when it fails: a failed test's frame (kept by
    pytest) would otherwise keep a group member heartbeating to the stopped cluster for the rest of the suite.
    Requested after start_cluster, it is torn down before the cluster stops; closing twice is harmless."""
    consumers: list[Any] = []

    def track(consumer: Any) -> Any:
        consumers.append(consumer)
        return consumer
    yield track
    for consumer in consumers:
        consumer.close()


def _consumer(c: Cluster, name: str) -> Any:
    return confluent_kafka.Consumer({
        "bootstrap.servers": _bootstrap(c), "group.id": GROUP, "client.id": name, "enable.auto.commit": False,
        "auto.offset.reset": "earliest", "session.timeout.ms": 10000, "heartbeat.interval.ms": 500,
        "topic.metadata.refresh.interval.ms": 1000, "socket.timeout.ms": 5000})


def _poll_until(consumers: list[Any], done: Any, what: str, got: dict[str, list[Any]]) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; got {got}")
        for consumer in consumers:
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                got.setdefault(consumer.memberid() or "?", []).append(
                    (msg.partition(), msg.offset(), msg.value().decode()))


def _produce(c: Cluster) -> None:
    failed: list[Any] = []
    with closing_producer(confluent_kafka.Producer({"bootstrap.servers": _bootstrap(c), "acks": "all",
                                                    "linger.ms": 5})) as producer:
        for p in range(2):
            for i in range(PER_PARTITION):
                producer.produce(TOPIC, f"p{p}-{i}".encode(), partition=p,
                                 on_delivery=lambda err, msg: failed.append(err) if err else None)
        assert producer.flush(DEADLINE_S) == 0 and not failed, failed


def test_group_commits_survive_the_coordinators_sigkill(start_cluster, closing):
    c = start_cluster(3, overrides=(f"offsets.topic.num.partitions={OFFSETS_PARTITIONS}",
                                    "offsets.topic.replication.factor=3", "group.initial.rebalance.delay.ms=0"))
    c.create_topic(TOPIC, partitions=2, replication_factor=3)
    _produce(c)

    # two consumers split the two partitions (the first may hold both for a moment: the split is awaited first)
    a, b = closing(_consumer(c, "a")), closing(_consumer(c, "b"))
    a.subscribe([TOPIC])
    b.subscribe([TOPIC])
    got: dict[str, list[Any]] = {}
    _poll_until([a, b], lambda: len(a.assignment()) == 1 and len(b.assignment()) == 1, "one partition each", got)
    assert {a.assignment()[0].partition, b.assignment()[0].partition} == {0, 1}
    for consumer in (a, b):  # then each reads its partition from the start
        consumer.seek(confluent_kafka.TopicPartition(TOPIC, consumer.assignment()[0].partition, 0))
    got.clear()
    _poll_until([a, b], lambda: all(len(set(got.get(x.memberid(), ()))) == PER_PARTITION for x in (a, b)),
                "every record read by the member that owns its partition", got)
    for consumer in (a, b):
        p = consumer.assignment()[0].partition
        assert sorted(set(got[consumer.memberid()])) == [(p, i, f"p{p}-{i}") for i in range(PER_PARTITION)]
    # each commits part of what it read (a consumer that crashed after processing that much)
    committed = {0: 6, 1: 4}
    for consumer in (a, b):
        p = consumer.assignment()[0].partition
        result = consumer.commit(offsets=[confluent_kafka.TopicPartition(TOPIC, p, committed[p])], asynchronous=False)
        assert [(r.partition, r.offset, r.error) for r in result] == [(p, committed[p], None)]
    a.close()
    b.close()

    # the coordinator: the leader of the group's __consumer_offsets partition
    offsets_partition = partition_for(GROUP, OFFSETS_PARTITIONS)
    coordinator = c.partition_state("__consumer_offsets", offsets_partition)["leader"]
    assert coordinator in c.live_brokers()
    # what it wrote: the two commits and the group's metadata, in Kafka's formats; the last group record is the
    # Empty generation the second LeaveGroup left (written a moment after the consumer's close returned)
    expected = {("offset", 0): 6, ("offset", 1): 4, ("group", GROUP): "Empty"}
    c.wait(lambda: _offsets_records(c, coordinator, offsets_partition) == expected, DEADLINE_S,
           f"__consumer_offsets-{offsets_partition} to hold {expected}")

    c.kill(coordinator)
    c.wait_partition("__consumer_offsets", offsets_partition,
                     lambda st: st["leader"] not in (-1, coordinator), what="a new coordinator")

    # a new member resumes exactly at the committed offsets
    n = closing(_consumer(c, "n"))
    n.subscribe([TOPIC])
    resumed: dict[str, list[Any]] = {}
    remaining = (PER_PARTITION - 6) + (PER_PARTITION - 4)
    _poll_until([n], lambda: sum(map(len, resumed.values())) >= remaining, "the records after the commits", resumed)
    assert sorted(r for rs in resumed.values() for r in rs) == (
        [(0, i, f"p0-{i}") for i in range(6, PER_PARTITION)] + [(1, i, f"p1-{i}") for i in range(4, PER_PARTITION)])
    assert [(t.partition, t.offset) for t in n.committed([confluent_kafka.TopicPartition(TOPIC, 0),
                                                          confluent_kafka.TopicPartition(TOPIC, 1)], timeout=10)] \
        == [(0, 6), (1, 4)]
    n.close()


def _offsets_records(c: Cluster, broker: int, partition: int) -> dict[tuple[str, Any], Any]:
    """The last value of each of the group's keys in __consumer_offsets-<partition>, read from the broker's log to
    its high watermark by a plain consumer (kactor serves the internal topic like any other)."""
    consumer = confluent_kafka.Consumer({"bootstrap.servers": f"127.0.0.1:{c.lc.ports[broker]}",
                                         "group.id": "inspector", "enable.auto.commit": False})
    try:
        _, high = watermark_offsets(consumer, confluent_kafka.TopicPartition("__consumer_offsets", partition),
                                    time.monotonic() + 10)
        consumer.assign([confluent_kafka.TopicPartition("__consumer_offsets", partition, 0)])
        out: dict[tuple[str, Any], Any] = {}
        position = 0
        deadline = time.monotonic() + DEADLINE_S
        while position < high:
            assert time.monotonic() < deadline, f"__consumer_offsets-{partition} read to {position} of {high}: {out}"
            msg = consumer.poll(0.2)
            if msg is None or msg.error() is not None:
                continue
            position = msg.offset() + 1
            key = read_message_key(msg.key())
            if isinstance(key, OffsetKey) and key.group == GROUP:
                assert key.tp.topic == TOPIC
                out[("offset", key.tp.partition)] = read_offset_message_value(msg.value()).offset
            elif isinstance(key, GroupMetadataKey) and key.group == GROUP:
                group = read_group_message_value(msg.value())
                out[("group", GROUP)] = "Empty" if not group.members else "Stable"
    finally:
        consumer.close()
    return out


@pytest.mark.parametrize("client", ["kafka-python 1.4.7", "kafka-python 3"])
def test_kafka_python_consumers_join_commit_and_read_back_their_offset(start_cluster, client):
    """Two more client implementations of the group protocol (kafka-python 1.4.7 speaks JoinGroup v2 / OffsetCommit
    v2 / OffsetFetch v1 era versions, 3.x newer ones): a group member reads 5 records, commits 3, and a second
    member of the group reads 3 back."""
    from kafka_clients_helpers import KAFKA_PYTHON3, bootstrap

    c = start_cluster(3, overrides=(f"offsets.topic.num.partitions={OFFSETS_PARTITIONS}",
                                    "group.initial.rebalance.delay.ms=0"))
    c.create_topic("t", partitions=1, replication_factor=3)
    path = "" if client == "kafka-python 1.4.7" else str(KAFKA_PYTHON3)
    if path and not (KAFKA_PYTHON3 / "kafka").is_dir():
        pytest.fail(f"kafka-python 3 is not installed in {KAFKA_PYTHON3}: run scripts/setup")
    proc = subprocess.run([sys.executable, str(Path(__file__).parent / "kafka_python_group_client.py"), bootstrap(c),
                           "t", "g-" + client.replace(" ", "-")], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["version"] == "1.4.7" if path == "" else out["version"].startswith("3.")
    assert out["got"] == [[0, i, f"v{i}"] for i in range(5)]
    assert out["committed"] == 3


_MEMBER = """
import sys, confluent_kafka
c = confluent_kafka.Consumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2], "client.id": "doomed",
                              "session.timeout.ms": int(sys.argv[3]), "heartbeat.interval.ms": 500,
                              "auto.offset.reset": "earliest", "enable.auto.commit": False})
c.subscribe([sys.argv[4]])
told = False
while True:
    c.poll(0.2)
    if c.assignment() and not told:
        print(",".join(str(tp.partition) for tp in c.assignment()), flush=True)
        told = True
"""


def test_a_member_that_stops_heartbeating_is_expelled_after_its_session_timeout(start_cluster, closing):
    """Kafka 2.6's classic group protocol on a real cluster: a member in another process is SIGKILLed (no
    LeaveGroup); the coordinator keeps it until session.timeout.ms runs out without a heartbeat, then rebalances, and
    the surviving member is assigned both partitions; DescribeGroups then lists it alone."""
    session_ms = 6000
    c = start_cluster(3, overrides=(f"offsets.topic.num.partitions={OFFSETS_PARTITIONS}",
                                    "group.initial.rebalance.delay.ms=0"))
    c.create_topic(TOPIC, partitions=2, replication_factor=3)
    group = "expiring"
    doomed = subprocess.Popen([sys.executable, "-c", _MEMBER, _bootstrap(c), group, str(session_ms), TOPIC],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        survivor = closing(confluent_kafka.Consumer({
            "bootstrap.servers": _bootstrap(c), "group.id": group, "client.id": "survivor",
            "session.timeout.ms": 30000, "heartbeat.interval.ms": 500, "enable.auto.commit": False}))
        survivor.subscribe([TOPIC])
        _poll_until([survivor], lambda: len(survivor.assignment()) == 1, "the survivor to hold one partition", {})
        deadline = time.monotonic() + DEADLINE_S
        while not doomed.stdout.readline().strip():  # it prints its partitions once it has some
            assert time.monotonic() < deadline and doomed.poll() is None, "the doomed member got no partition"
        mine = survivor.assignment()[0].partition
        doomed.kill()
        killed_at = time.monotonic()
        _poll_until([survivor], lambda: len(survivor.assignment()) == 2, "the survivor to hold both partitions", {})
        waited = time.monotonic() - killed_at
    finally:
        doomed.kill()
        doomed.wait()
    assert sorted(tp.partition for tp in survivor.assignment()) == [0, 1] and mine in (0, 1)
    # expelled by the session timeout, not by a LeaveGroup: the rebalance came no earlier than the timeout allows
    # (the last heartbeat was at most heartbeat.interval.ms before the kill)
    assert waited >= (session_ms - 500) / 1000 - 0.5, f"rebalanced {waited:.1f} s after the kill"
    from kactor.kafka_clients import admin_client

    with admin_client(_bootstrap(c)) as admin:  # kept until the answer came: a dropped AdminClient never answers
        (future,) = admin.describe_consumer_groups([group]).values()
        described = future.result(timeout=10)
    assert [m.client_id for m in described.members] == ["survivor"]
    assert described.state.name == "STABLE"
