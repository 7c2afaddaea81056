"""``kactor cluster --data-dir D`` is one cluster across runs, and one at a time (issue #39), as real clients see it:
run again on D — at once, on the same ports — it serves the first run's topics and records exactly (its ZooKeeper's
data was kept in D beside the logs, and every log dir's meta.properties names the same /cluster/id); a second
cluster started on D while the first runs is refused with why, and the first keeps serving and loses nothing it
acknowledged."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from kafka_clients_helpers import closing_producer, read_partition
from kazoo.client import KazooClient
from test_cluster_cli_dead_broker import free_range, start, stop

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

KACTOR = [sys.executable, "-m", "kactor"]


def _up(out) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    connect = out.wait_for(r"^zookeeper\.connect=(\S+)$", 90).group(1)
    servers = out.wait_for(r"^bootstrap\.servers=(\S+)$", 5).group(1)
    out.wait_for(r"^Ctrl-C to stop$", 10)
    return connect, servers


def _produce(servers: str, topic: str, values: list[tuple[int, str]]) -> list[tuple[int, int, str]]:
    """Each (partition, value) with acks=all; the (partition, offset, value) acknowledged, all of them."""
    from confluent_kafka import Producer

    from kactor.kafka_clients import client_config

    acked: list[tuple[int, int, str]] = []
    failed: list[str] = []

    def report(err, msg) -> None:  # type: ignore[no-untyped-def]
        if err is not None:
            failed.append(str(err))
        else:
            acked.append((msg.partition(), msg.offset(), msg.value().decode()))

    with closing_producer(Producer(client_config(servers, "data-dir-test", {"acks": "all"}))) as producer:
        for partition, value in values:
            producer.produce(topic, value.encode(), partition=partition, on_delivery=report)
        assert producer.flush(60) == 0
    assert not failed and len(acked) == len(values), failed
    return acked


def _cluster_id(connect: str) -> str:
    zk = KazooClient(hosts=connect, timeout=5.0)
    zk.start(timeout=15)
    try:
        return json.loads(zk.get("/cluster/id")[0])["id"]
    finally:
        zk.stop()
        zk.close()


def _create(connect: str, topic: str, assignment: str) -> None:
    subprocess.run([*KACTOR, "topics", "--zookeeper", connect, "--create", "--topic", topic, "--replica-assignment",
                    assignment], check=True, capture_output=True, timeout=60)


def test_a_second_run_on_the_data_dir_is_the_same_cluster(tmp_path: Path) -> None:
    base, data = free_range(2), tmp_path / "data"
    args = ("--brokers", "2", "--port-base", str(base), "--data-dir", str(data))
    proc, out = start(tmp_path, *args)
    try:
        connect, servers = _up(out)
        _create(connect, "orders", "0:1,1:0")
        acked = _produce(servers, "orders", [(i % 2, f"order-{i}") for i in range(40)])
        first = {p: read_partition(servers, "orders", p) for p in (0, 1)}
        assert sorted((p, o, v) for p, records in first.items() for o, v in records) == sorted(acked)
        cluster_id = _cluster_id(connect)
    finally:
        stop(proc, data)
    assert proc.returncode == 0
    for b in (0, 1):
        assert f"cluster.id={cluster_id}" in (data / f"broker-{b}" / "meta.properties").read_text()
    assert (data / "zookeeper" / "server-1" / "version-2").is_dir()

    # at once, on the same ports (the first run's TIME-WAIT sockets are still there)
    proc, out = start(tmp_path, *args)
    try:
        connect, servers = _up(out)
        assert _cluster_id(connect) == cluster_id
        listed = subprocess.run([*KACTOR, "topics", "--bootstrap-server", servers, "--list"], check=True,
                                capture_output=True, text=True, timeout=60).stdout.split()
        assert "orders" in listed
        assert {p: read_partition(servers, "orders", p) for p in (0, 1)} == first
    finally:
        stop(proc, data)
    assert proc.returncode == 0


def test_a_second_cluster_on_the_dir_is_refused_and_the_first_loses_nothing(tmp_path: Path) -> None:
    data = tmp_path / "shared"
    proc, out = start(tmp_path, "--brokers", "1", "--data-dir", str(data))
    try:
        connect, servers = _up(out)
        _create(connect, "t", "0")
        before = _produce(servers, "t", [(0, f"A-{i}") for i in range(100)])
        second = subprocess.run([*KACTOR, "cluster", "--brokers", "1", "--data-dir", str(data)], capture_output=True,
                                text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert second.returncode == 1
        assert second.stderr == (f"kactor cluster: --data-dir {data} is in use: another kactor cluster running on it "
                                 f"holds {data / '.lock'}. Stop that cluster first, or give another --data-dir\n")
        after = _produce(servers, "t", [(0, f"A-{i}") for i in range(100, 200)])
        assert read_partition(servers, "t", 0) == [(o, v) for _, o, v in before + after] == [
            (i, f"A-{i}") for i in range(200)]
    finally:
        stop(proc, data)
    assert proc.returncode == 0
