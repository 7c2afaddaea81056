"""A broker owns its log dirs as a Kafka 2.6.3 broker does (issue #39), on a real ZooKeeper: before it registers or
writes anything, KafkaServer.startup's meta.properties checks refuse another cluster's dir
(InconsistentClusterIdException) and another broker's (InconsistentBrokerIdException), and LogManager.lockLogDirs
refuses a dir whose ``.lock`` a live process holds — the broker exits non-zero with Kafka's message and leaves the
dir's files as they were."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from core.broker.broker_metadata import BrokerMetadata, format_meta_properties
from kactor.broker_process import BrokerProcess, BrokerStartError, get_or_create_cluster_id
from kactor.config import KafkaConfig, build_config

pytestmark = pytest.mark.cluster

HOLDER = ("import fcntl, os, sys\n"
          "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)\n"
          "fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
          "print('locked', flush=True)\n"
          "sys.stdin.read()\n")


def _config(zk_chroot: str, log_dir: Path, broker_id: int = 0) -> KafkaConfig:
    return build_config({"broker.id": str(broker_id), "zookeeper.connect": zk_chroot,
                         "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": str(log_dir),
                         "zookeeper.session.timeout.ms": "4000"})


def _live_broker_dir(log_dir: Path, metadata: BrokerMetadata) -> dict[str, tuple[bytes, int]]:
    """What a live broker's dir holds (its meta.properties, a partition, its checkpoints); its files' contents and
    modification times, to see that nothing was written."""
    (log_dir / "t-0").mkdir(parents=True)
    (log_dir / "t-0" / "00000000000000000000.log").write_bytes(b"\0" * 64)
    (log_dir / "meta.properties").write_text(format_meta_properties(metadata, 0.0))
    (log_dir / "replication-offset-checkpoint").write_text("0\n1\nt 0 5\n")
    (log_dir / "recovery-point-offset-checkpoint").write_text("0\n1\nt 0 5\n")
    return _files(log_dir)


def _files(log_dir: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(log_dir)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(log_dir.rglob("*")) if p.is_file()}


def test_another_clusters_dir_stops_the_broker_before_it_registers(zk_chroot: str, zk: KazooClient,
                                                                   tmp_path: Path) -> None:
    log_dir = tmp_path / "broker-0"
    before = _live_broker_dir(log_dir, BrokerMetadata(0, "the-old-cluster"))
    done = subprocess.run([sys.executable, "-m", "kactor", "broker", "--override", "broker.id=0",
                           "--override", f"zookeeper.connect={zk_chroot}",
                           "--override", "listeners=PLAINTEXT://127.0.0.1:0", "--override", f"log.dirs={log_dir}"],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    cluster_id = get_or_create_cluster_id(zk)  # the broker created /cluster/id before it compared
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        f"kactor broker: kafka.common.InconsistentClusterIdException: The Cluster ID {cluster_id} doesn't match "
        "stored clusterId Some(the-old-cluster) in meta.properties. The broker is trying to join the wrong "
        "cluster. Configured zookeeper.connect may be wrong.")
    assert zk.exists("/brokers/ids/0") is None and zk.exists("/controller") is None
    assert _files(log_dir) == before


def test_another_brokers_dir_is_refused(zk_chroot: str, zk: KazooClient, tmp_path: Path) -> None:
    log_dir = tmp_path / "broker-0"
    before = _live_broker_dir(log_dir, BrokerMetadata(0, get_or_create_cluster_id(zk)))
    with pytest.raises(BrokerStartError) as e:
        BrokerProcess(_config(zk_chroot, log_dir, broker_id=5)).start()
    assert str(e.value) == (
        "kafka.common.InconsistentBrokerIdException: Configured broker.id 5 doesn't match stored broker.id 0 in "
        "meta.properties. If you moved your data, make sure your configured broker.id matches. If you intend to "
        "create a new broker, you should remove all data in your data directories (log.dirs).")
    assert zk.exists("/brokers/ids/5") is None
    assert _files(log_dir) == before


def test_a_dir_a_live_process_holds_is_refused_and_left_alone(zk_chroot: str, zk: KazooClient,
                                                              tmp_path: Path) -> None:
    log_dir = tmp_path / "broker-0"
    # the same broker.id and cluster: the live broker's own dir, started a second time
    before = _live_broker_dir(log_dir, BrokerMetadata(0, get_or_create_cluster_id(zk)))
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(log_dir / ".lock")], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        (log_dir / "meta.properties.tmp").write_text("the live broker's write under way")
        before = _files(log_dir)  # with the .lock the holder created
        with pytest.raises(BrokerStartError) as e:
            BrokerProcess(_config(zk_chroot, log_dir)).start()
        assert str(e.value) == (
            f"org.apache.kafka.common.KafkaException: Failed to acquire lock on file .lock in {log_dir}. A Kafka "
            "instance in another process or thread is using this directory.")
        assert zk.exists("/brokers/ids/0") is None
        # no clean-shutdown marker, no checkpoint, no snapshot: nothing written, nothing removed
        assert _files(log_dir) == before
        assert sorted(os.listdir(log_dir)) == [".lock", "meta.properties", "meta.properties.tmp",
                                               "recovery-point-offset-checkpoint", "replication-offset-checkpoint",
                                               "t-0"]
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(10)
