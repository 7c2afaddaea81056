"""A replica moved between its broker's log dirs keeps every record (AlterReplicaLogDirs, issue #26), on a real broker
with two ``log.dirs``: while an idempotent librdkafka producer keeps writing, kafka-python 3's admin client
(``alter_replica_log_dirs``) moves the partition's replica to the other dir and ``kactor reassign-partitions
--execute`` with the plan's ``log_dirs`` moves it back (each time a ``-future`` log copied and swapped in);
``--verify`` reports the move done, the partition's directory is in the new dir and gone from the old one,
``kactor log-dirs --describe`` lists it there, and a consumer reads every acknowledged record exactly once, in offset
order — also after the broker restarts on its dirs. One broker, one cluster for the whole file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from cluster_helpers import Cluster, run_kactor
from kafka_clients_helpers import KAFKA_PYTHON3, bootstrap

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

TOPIC = "moving"

KP3_MOVE = """
import json, sys
from kafka import KafkaAdminClient
admin = KafkaAdminClient(bootstrap_servers=sys.argv[1], client_id="kp3-log-dirs")
answers = admin.alter_replica_log_dirs({(sys.argv[2], 0, 0): path for path in sys.argv[3:]})
admin.close()
print(json.dumps({tpr.topic + "-" + str(tpr.partition) + "-" + str(tpr.broker_id): e.__name__
                  for tpr, e in answers.items()}))
"""


def kafka_python3_move(servers: str, topic: str, to: str) -> dict[str, str]:
    """kafka-python 3's KafkaAdminClient.alter_replica_log_dirs of the topic's partition 0 on broker 0: each
    replica's answer, by its error class."""
    env = dict(os.environ, PYTHONPATH=str(KAFKA_PYTHON3))
    proc = subprocess.run([sys.executable, "-c", KP3_MOVE, servers, topic, to], capture_output=True, text=True,
                          timeout=90, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


class Writer:
    """An idempotent producer (acks=all) writing ``r<i>`` until stopped; ``acked`` holds what the broker confirmed."""

    def __init__(self, servers: str) -> None:
        from confluent_kafka import Producer

        from kactor.kafka_clients import client_config

        self.producer = Producer(client_config(servers, "log-dir-writer", {
            "enable.idempotence": True, "acks": "all", "linger.ms": 5}))
        self.acked: list[tuple[int, str]] = []
        self.failed: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _delivered(self, err, msg) -> None:  # type: ignore[no-untyped-def]
        if err is None:
            self.acked.append((msg.offset(), msg.value().decode()))
        else:
            self.failed.append(str(err))

    def _run(self) -> None:
        i = 0
        while not self._stop.is_set():
            self.producer.produce(TOPIC, value=f"r{i}-" + "x" * 200, partition=0, on_delivery=self._delivered)
            i += 1
            self.producer.poll(0)
            if i % 50 == 0:
                time.sleep(0.01)

    def start(self) -> Writer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        assert self.producer.flush(60) == 0


def read_all(servers: str, expected: int, timeout: float = 60) -> list[tuple[int, str]]:
    """[(offset, value)] a librdkafka consumer reads from the beginning of the partition, up to ``expected``."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer
    from confluent_kafka import TopicPartition as Tp

    from kactor.kafka_clients import client_config

    consumer = Consumer(client_config(servers, "log-dir-reader", {
        "group.id": "log-dir-reader", "enable.auto.commit": False, "auto.offset.reset": "earliest"}))
    try:
        consumer.assign([Tp(TOPIC, 0, OFFSET_BEGINNING)])
        out: list[tuple[int, str]] = []
        deadline = time.monotonic() + timeout
        while len(out) < expected and time.monotonic() < deadline:
            for msg in consumer.consume(num_messages=1000, timeout=0.5):
                if msg.error() is None:
                    out.append((msg.offset(), msg.value().decode()))
        # anything beyond what was acknowledged would show here too
        for msg in consumer.consume(num_messages=1000, timeout=1.0):
            if msg.error() is None:
                out.append((msg.offset(), msg.value().decode()))
        return out
    finally:
        consumer.close()


def where(dirs: tuple[str, str]) -> dict[str, list[str]]:
    """Each dir's entries of the partition (its own, ``-future`` and ``-delete`` dirs)."""
    return {d: sorted(n for n in os.listdir(d) if n.startswith(f"{TOPIC}-0")) for d in dirs}


def described(servers: str) -> dict[str, list[dict]]:
    """``kactor log-dirs --describe``: each dir of broker 0 and its partitions of the topic."""
    out = run_kactor("log-dirs", "--bootstrap-server", servers, "--describe", "--topic-list", TOPIC).stdout
    (broker,) = json.loads(out.splitlines()[-1])["brokers"]
    return {d["logDir"]: d["partitions"] for d in broker["logDirs"]}


def test_a_replica_moved_between_log_dirs_keeps_every_record(start_cluster, tmp_path: Path) -> None:
    dirs = (str(tmp_path / "disk-a"), str(tmp_path / "disk-b"))
    c: Cluster = start_cluster(brokers=1, overrides=[f"log.dirs={','.join(dirs)}"])
    c.create_topic(TOPIC, assignment={0: [0]}, configs={"segment.bytes": "30000"})
    servers = bootstrap(c)
    # the broker creates the partition's directory when its LeaderAndIsr arrives, after the topic znode is written
    placed = c.wait(lambda: [d for d in dirs if where(dirs)[d] == [f"{TOPIC}-0"]], 30, f"{TOPIC}-0's directory")
    (target,) = placed  # where kactor moves it back to
    (source,) = [d for d in dirs if d != target]

    writer = Writer(servers).start()
    try:
        c.wait(lambda: len(writer.acked) >= 1500, 60, "1500 records acknowledged before the first move")
        # kafka-python 3's admin client: a dir not in log.dirs is refused, the other dir taken
        assert kafka_python3_move(servers, TOPIC, str(tmp_path / "not-a-log-dir")) == {
            f"{TOPIC}-0-0": "LogDirNotFoundError"}
        assert kafka_python3_move(servers, TOPIC, source) == {f"{TOPIC}-0-0": "NoError"}
        c.wait(lambda: where(dirs) == {source: [f"{TOPIC}-0"], target: []}, 60, "the first move swapped in")
        moved_at = len(writer.acked)
        c.wait(lambda: len(writer.acked) >= moved_at + 500, 60, "500 more records acknowledged after it")
        plan = tmp_path / "plan.json"
        plan.write_text(json.dumps({"version": 1, "partitions": [
            {"topic": TOPIC, "partition": 0, "replicas": [0], "log_dirs": [target]}]}))
        execute = run_kactor("reassign-partitions", "--bootstrap-server", servers, "--execute",
                             "--reassignment-json-file", str(plan), "--replica-alter-log-dirs-throttle",
                             "50000000").stdout
        assert f"Successfully started log directory move for: {TOPIC}-0-0" in execute, execute
        assert "The replica-alter-dir throttle limit was set to 50000000 B/s" in execute, execute
        assert c.json("/config/brokers/0")["config"] == {"replica.alter.log.dirs.io.max.bytes.per.second": "50000000"}

        def verified() -> bool:
            out = run_kactor("reassign-partitions", "--bootstrap-server", servers, "--verify",
                             "--reassignment-json-file", str(plan)).stdout
            assert (f"Reassignment of replica {TOPIC}-0-0 completed successfully." in out
                    or f"Reassignment of replica {TOPIC}-0-0 is still in progress." in out), out
            return "completed successfully" in out
        c.wait(verified, 60, "the log-dir move verified complete")
        assert c.json("/config/brokers/0")["config"] == {}  # --verify cleared the throttle once the move was done
        moved_at = len(writer.acked)
        c.wait(lambda: len(writer.acked) >= moved_at + 500, 60, "500 more records acknowledged after the move")
    finally:
        writer.stop()
    assert writer.failed == []

    # the partition lives in the target dir only: no -future, no -delete left
    assert where(dirs) == {source: [], target: [f"{TOPIC}-0"]}
    listed = described(servers)
    assert listed[source] == []
    (entry,) = listed[target]
    assert entry["partition"] == f"{TOPIC}-0" and entry["isFuture"] is False and entry["size"] > 30000

    acked = sorted(writer.acked)
    assert [o for o, _ in acked] == list(range(len(acked)))  # one offset per acknowledged record, none skipped
    assert read_all(servers, len(acked)) == acked

    # the broker restarts on its dirs: the moved log is found in its new dir, every record still there once
    c.stop_broker(0)
    c.restart(0)
    c.wait_partition(TOPIC, 0, lambda st: st["leader"] == 0, what="broker 0 leads again")
    servers = bootstrap(c)
    assert where(dirs) == {source: [], target: [f"{TOPIC}-0"]}
    assert read_all(servers, len(acked)) == acked
