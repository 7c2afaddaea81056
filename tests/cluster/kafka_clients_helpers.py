"""What the real-client cluster tests share: the cluster's bootstrap list, what the znodes say a Metadata answer must
contain, kafka-python 3 and kcat as subprocesses, and a librdkafka producer thread that records every delivery
report."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import Cluster

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
KAFKA_PYTHON3 = Path(sys.prefix).parent / ".venv-clients" / "kafka-python3"  # beside the venv (scripts/setup)
# librdkafka's consumers always look their group's coordinator up, and the first FindCoordinator creates
# __consumer_offsets: 3 partitions instead of Kafka's 50 keep a test cluster light
OVERRIDES = ("offsets.topic.num.partitions=3",)


def bootstrap(c: Cluster) -> str:
    """Every live broker's listener, as a user passes --bootstrap-server."""
    live = [b for b in sorted(c.lc.procs) if c.lc.procs[b].poll() is None]
    return ",".join("{}:{}".format(*c.lc.broker_address(b)) for b in live)


def znode_metadata(c: Cluster, topic: str) -> dict[str, Any]:
    """What a Metadata answer must say according to ZooKeeper: brokers (id → host, port of their registration),
    the controller, and per partition leader / leader epoch / replicas / ISR."""
    brokers = {}
    for b in c.live_brokers():
        reg = c.json(f"/brokers/ids/{b}")
        brokers[b] = (reg["host"], reg["port"])
    partitions = {}
    for p, replicas in sorted((c.assignment(topic) or {}).items()):
        st = c.partition_state(topic, p)
        partitions[p] = None if st is None else {"leader": st["leader"], "leader_epoch": st["leader_epoch"],
                                                  "replicas": replicas, "isr": st["isr"]}
    return {"brokers": brokers, "controller": c.controller_id(), "partitions": partitions}


@contextmanager
def closing_producer(producer: Any) -> Iterator[Any]:
    """A confluent-kafka Producer for a with block, destroyed at its end even when the test fails there. pytest keeps
    a failed test's traceback, and with it the frame holding the producer: left alive, a producer with records
    still waiting reconnects to the stopped cluster's bootstrap every second for the rest of the suite (stderr
    full of ``FAIL|rdkafka#producer-N| ... Connection refused``). What it still holds is purged first: close()
    would wait for it."""
    try:
        yield producer
    finally:
        producer.purge()
        producer.close()


def kafka_python3(*args: str, timeout: float = 90) -> Any:
    """tests/cluster/kafka_python3_client.py under kafka-python 3 (its own target dir, never imported here)."""
    if not (KAFKA_PYTHON3 / "kafka").is_dir():
        pytest.fail(f"kafka-python 3 is not installed in {KAFKA_PYTHON3}: run scripts/setup")
    env = dict(os.environ, PYTHONPATH=str(KAFKA_PYTHON3))
    proc = subprocess.run([sys.executable, str(HERE / "kafka_python3_client.py"), *args], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=str(HERE))
    assert proc.returncode == 0, f"kafka-python 3 {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout)


def kafka_python3_secure(*args: str) -> tuple[dict[str, Any], str]:
    """tests/cluster/kafka_python3_secure.py under kafka-python 3 (its arguments say how): its result and what it
    logged."""
    if not (KAFKA_PYTHON3 / "kafka").is_dir():
        pytest.fail(f"kafka-python 3 is not installed in {KAFKA_PYTHON3}: run scripts/setup")
    proc = subprocess.run([sys.executable, str(HERE / "kafka_python3_secure.py"), *args], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(KAFKA_PYTHON3)), cwd=str(HERE))
    assert proc.returncode == 0, f"kafka-python 3 {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout), proc.stderr


def kcat_round_trip(config: dict[str, str], topic: str, values: list[str]) -> list[str]:
    """kcat produces ``values`` to partition 0 of ``topic`` (acks=all), then reads the partition from the beginning
    to its end: every value it read, in order. ``config`` is librdkafka's (bootstrap.servers, security.protocol,
    sasl.*, ssl.*), passed as kcat's -X options."""
    kcat = kcat_or_skip()
    options = [a for k, v in config.items() for a in ("-X", f"{k}={v}")]
    produced = subprocess.run([kcat, "-P", "-t", topic, "-p", "0", "-X", "acks=all", *options],
                              input="\n".join(values) + "\n", capture_output=True, text=True, timeout=60)
    assert produced.returncode == 0, produced.stderr[-2000:]
    consumed = subprocess.run([kcat, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q", *options],
                              capture_output=True, text=True, timeout=60)
    assert consumed.returncode == 0, consumed.stderr[-2000:]
    return consumed.stdout.splitlines()


def kcat_or_skip() -> str:
    """kcat's path. Missing where Debian has a kcat package is a failure (scripts/setup installs it); a skip only
    where this Debian release has none."""
    path = shutil.which("kcat")
    if path:
        return path
    policy = subprocess.run(["apt-cache", "policy", "kcat"], capture_output=True, text=True, check=False).stdout
    candidate = next((line.split(":", 1)[1].strip() for line in policy.splitlines()
                      if line.strip().startswith("Candidate:")), "(none)")
    if candidate != "(none)":
        pytest.fail(f"kcat is not installed but Debian has it (candidate {candidate}): run scripts/setup")
    pytest.skip("this Debian release has no kcat package (apt-cache policy kcat: no candidate)")


class ProducerThread:
    """A librdkafka producer (acks=all) sending ``seq-<n>`` values to one partition as fast as ``pause_s`` allows
    until stopped; every delivery report is kept: ``acked`` [(offset, value)], ``failed`` [(value, error)]."""

    def __init__(self, servers: str, topic: str, partition: int = 0, pause_s: float = 0.005,
                 extra: dict[str, Any] | None = None) -> None:
        from confluent_kafka import Producer

        from kactor.kafka_clients import client_config

        self.topic = topic
        self.partition = partition
        self.pause_s = pause_s
        self.producer = Producer(client_config(servers, "test-producer", {"acks": "all", **(extra or {})}))
        self.acked: list[tuple[int, str]] = []
        self.failed: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="test-producer", daemon=True)

    def start(self) -> ProducerThread:
        self._thread.start()
        return self

    def _report(self, error: Any, msg: Any) -> None:
        with self._lock:
            if error is None:
                self.acked.append((msg.offset(), msg.value().decode()))
            else:
                self.failed.append((msg.value().decode(), error.name()))

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            try:
                self.producer.produce(self.topic, value=f"seq-{n}".encode(), partition=self.partition,
                                      on_delivery=self._report)
                n += 1
            except BufferError:
                pass
            self.producer.poll(self.pause_s)

    def acked_count(self) -> int:
        with self._lock:
            return len(self.acked)

    def wait_acks(self, c: Cluster, more_than: int, what: str, timeout: float = 60) -> int:
        c.wait(lambda: self.acked_count() > more_than, timeout, f"{what}: more than {more_than} acks "
                                                               f"(failed so far: {self.failed[-3:]})")
        return self.acked_count()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        with closing_producer(self.producer):
            left = self.producer.flush(120)
        assert left == 0, f"{left} records still without a delivery report"


def read_partition(servers: str, topic: str, partition: int, timeout: float = 30) -> list[tuple[int, str]]:
    """Every record of the partition below its high watermark, [(offset, value)], read by a librdkafka consumer
    assigned from offset 0."""
    from confluent_kafka import Consumer, TopicPartition

    from kactor.kafka_clients import client_config, watermark_offsets

    consumer = Consumer(client_config(servers, "test-reader", {
        "group.id": "test-reader", "enable.auto.commit": False, "auto.offset.reset": "earliest"}))
    try:
        deadline = time.monotonic() + timeout
        _, hw = watermark_offsets(consumer, TopicPartition(topic, partition), deadline)
        consumer.assign([TopicPartition(topic, partition, 0)])
        out: list[tuple[int, str]] = []
        while (not out or out[-1][0] < hw - 1) and time.monotonic() < deadline:
            for msg in consumer.consume(num_messages=max(1, hw - len(out)), timeout=0.5):
                if msg.error() is None:
                    out.append((msg.offset(), msg.value().decode()))
        assert len(out) == hw and [o for o, _ in out] == list(range(hw)), \
            f"read {len(out)} records of {topic}-{partition} below its high watermark {hw}"
        return out
    finally:
        consumer.close()


def read_from_start(c: Cluster, topic: str, isolation: str, expected: int, settle_s: float, timeout_s: float,
                    client_id: str) -> tuple[list[str], tuple[int, int]]:
    """The values a librdkafka consumer at ``isolation`` reads from offset 0 of ``topic``-0 (until ``expected``
    arrived, then ``settle_s`` more seconds to see that nothing else does), and the partition's watermarks as that
    consumer sees them (read_committed: the LSO)."""
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as CkTopicPartition

    from kactor.kafka_clients import client_config, watermark_offsets

    consumer = Consumer(client_config(bootstrap(c), client_id, {
        "group.id": f"{client_id}-{isolation}", "enable.auto.commit": False, "isolation.level": isolation}))
    values: list[str] = []
    try:
        consumer.assign([CkTopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + timeout_s
        settle_until: float | None = None
        while time.monotonic() < (settle_until or deadline):
            message: Any = consumer.poll(0.2)
            if message is not None and message.error() is None:
                values.append(message.value().decode())
            if settle_until is None and len(values) >= expected:
                settle_until = time.monotonic() + settle_s
        marks = watermark_offsets(consumer, CkTopicPartition(topic, 0), time.monotonic() + 30)
    finally:
        consumer.close()
    return values, marks
