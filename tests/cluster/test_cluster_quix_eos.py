"""An exactly-once application, unchanged, on a 3-broker kactor cluster (issue #27): Quix Streams 3.28.1
(tests/cluster/quix_eos_app.py) with ``processing_guarantee="exactly-once"`` counts records per key in RocksDB state
backed by its compacted changelog topic, and writes each count to an output topic inside the transaction that commits
its input offsets. While it runs, the leader of its input partition and then the leader of its transactional id's
``__transaction_state`` partition are SIGKILLed (and restarted). A read_committed reader of the output must then see,
for every key, the counts 1, 2, …, n exactly once each and in input order — no count lost, none written twice.

If the application exits (a fatal error it does not recover from by itself), the test starts it again, as the
process supervisor of a stream processor would; exactly-once must hold across that too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import Cluster
from kafka_clients_helpers import bootstrap, closing_producer

from core.coordinator.group.group_metadata_manager import partition_for

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
QUIXSTREAMS = Path(sys.prefix).parent / ".venv-clients" / "quixstreams"  # beside the venv (scripts/setup)
TXN_PARTITIONS = 4
GROUP = "quix-counts"
TXN_ID = f"{GROUP}-txn"  # Quix's producer_extra_config transactional.id, so the test knows its coordinator
KEYS = [f"k{i}" for i in range(20)]
RECORDS = 3000
INPUT, OUTPUT = "words", "counts"


class App:
    """The Quix application as a supervised subprocess: started again whenever it exits until stopped."""

    def __init__(self, c: Cluster, state_dir: Path, log_path: Path) -> None:
        self.c, self.state_dir, self.log_path = c, state_dir, log_path
        self.starts = 0
        self.exits: list[int] = []
        self.proc: subprocess.Popen[bytes] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._supervise, name="quix-supervisor", daemon=True)

    def start(self) -> App:
        self._thread.start()
        return self

    def _spawn(self) -> subprocess.Popen[bytes]:
        self.starts += 1
        env = dict(os.environ, PYTHONPATH=str(QUIXSTREAMS))
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child owns it for its life
        try:
            return subprocess.Popen([sys.executable, str(HERE / "quix_eos_app.py"), bootstrap(self.c), GROUP,
                                     INPUT, OUTPUT, str(self.state_dir)], stdout=log, stderr=log, env=env,
                                    cwd=str(self.state_dir))
        finally:
            log.close()

    def _supervise(self) -> None:
        while not self._stop.is_set():
            if self.proc is None or self.proc.poll() is not None:
                if self.proc is not None:
                    self.exits.append(self.proc.returncode)
                self.proc = self._spawn()
            self._stop.wait(0.5)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def log_tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]


def produce_input(c: Cluster, stop: threading.Event, failed: list[Any]) -> None:
    """RECORDS records ``{"seq": n}`` round-robin over KEYS, idempotent and acks=all, paced over ~15 s so the kills
    land while the application is mid-stream."""
    from confluent_kafka import Producer

    with closing_producer(Producer({"bootstrap.servers": bootstrap(c), "enable.idempotence": True,
                                    "linger.ms": 5})) as producer:
        for n in range(RECORDS):
            if stop.is_set():
                return
            producer.produce(INPUT, key=KEYS[n % len(KEYS)].encode(), value=json.dumps({"seq": n}).encode(),
                             on_delivery=lambda err, _msg: err is not None and failed.append(err))
            producer.poll(0)
            if n % 20 == 19:
                time.sleep(0.1)
        left = producer.flush(120)
        assert left == 0, f"{left} input records without a delivery report"


def read_output(c: Cluster, timeout: float) -> dict[str, list[dict[str, int]]]:
    """Every committed output record, per key in offset order, read at read_committed from the beginning."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap(c), "group.id": "quix-verifier", "enable.auto.commit": False,
                         "isolation.level": "read_committed", "auto.offset.reset": "earliest"})
    try:
        parts = consumer.list_topics(OUTPUT, timeout=30).topics[OUTPUT].partitions
        consumer.assign([TopicPartition(OUTPUT, p, 0) for p in parts])
        out: dict[str, list[dict[str, int]]] = {}
        deadline = time.monotonic() + timeout
        # read_committed ends at the last stable offset, not the high watermark (an open transaction, markers):
        # read until nothing new has arrived for 2 s
        idle_since = time.monotonic()
        while time.monotonic() < deadline and time.monotonic() - idle_since < 2:
            for msg in consumer.consume(num_messages=500, timeout=0.5):
                if msg.error() is None:
                    out.setdefault(msg.key().decode(), []).append(json.loads(msg.value()))
                    idle_since = time.monotonic()
        return out
    finally:
        consumer.close()


def expected_counts() -> dict[str, list[dict[str, int]]]:
    out: dict[str, list[dict[str, int]]] = {}
    for n in range(RECORDS):
        key = KEYS[n % len(KEYS)]
        out.setdefault(key, []).append({"seq": n, "count": len(out.get(key, [])) + 1})
    return out


def leader_of(c: Cluster, topic: str, partition: int) -> int:
    return c.wait_partition(topic, partition, lambda s: s["leader"] >= 0, what=f"{topic}-{partition} led")["leader"]


def kill_and_restart(c: Cluster, broker: int, down_s: float) -> None:
    c.kill(broker)
    time.sleep(down_s)
    c.restart(broker)


def test_quix_streams_exactly_once_counts_are_exact_across_leader_kills(start_cluster, tmp_path: Path) -> None:
    if not (QUIXSTREAMS / "quixstreams").is_dir():
        pytest.fail(f"Quix Streams is not installed in {QUIXSTREAMS}: run scripts/setup")
    c: Cluster = start_cluster(3, overrides=(
        "offsets.topic.num.partitions=3", f"transaction.state.log.num.partitions={TXN_PARTITIONS}",
        "transaction.abort.timed.out.transaction.cleanup.interval.ms=2000"), killed_under_load=True)
    c.create_topic(INPUT, partitions=2, replication_factor=3)
    c.create_topic(OUTPUT, partitions=2, replication_factor=3)
    state_dir = tmp_path / "quix-state"
    state_dir.mkdir()
    app = App(c, state_dir, tmp_path / "quix-app.log").start()
    stop, failed = threading.Event(), []
    producer = threading.Thread(target=produce_input, args=(c, stop, failed), name="input-producer", daemon=True)
    try:
        producer.start()
        try:
            c.wait(lambda: sum(map(len, read_output(c, 5).values())) >= 200, 180,
                   "the application's first 200 committed counts")
        except AssertionError as e:
            raise AssertionError(f"{e}\napp starts {app.starts}, exits {app.exits}\n{app.log_tail()}") from None
        kill_and_restart(c, leader_of(c, INPUT, 0), 3)
        txn_partition = partition_for(TXN_ID, TXN_PARTITIONS)
        kill_and_restart(c, leader_of(c, "__transaction_state", txn_partition), 3)
        producer.join(180)
        assert not producer.is_alive(), "the input producer did not finish"
        assert failed == []
        want = expected_counts()
        got: dict[str, list[dict[str, int]]] = {}

        def complete() -> bool:
            nonlocal got
            got = read_output(c, 10)
            return all(len(got.get(k, [])) >= len(v) for k, v in want.items())

        try:
            c.wait(complete, 240, "every input record counted")
        except AssertionError as e:
            raise AssertionError(f"{e}; counted per key {[len(got.get(k, [])) for k in KEYS]} of "
                                 f"{[len(want[k]) for k in KEYS]}; app starts {app.starts}, exits {app.exits}\n"
                                 f"{app.log_tail()}") from None
    finally:
        stop.set()
        app.stop()
    for key in KEYS:
        diff = next((i for i, (a, b) in enumerate(zip(got[key], want[key], strict=False)) if a != b), None)
        assert got[key] == want[key], f"{key}: {len(got[key])} counts for {len(want[key])} records; first " \
                                      f"difference at {diff}: {got[key][diff - 2:diff + 3] if diff else None}"
