"""Interop with Yelp's kafka-utils (ecosystem-notes §6): it reads a topic created by ``kactor topics`` and
writes a plan that ``kactor describe`` / ``kactor reassign-partitions --verify`` show; and it sees a plan written
by ``kactor reassign-partitions --execute`` as pending. Skipped when kafka-utils is not installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from admin_helpers import register_broker, write_state
from kazoo.client import KazooClient

# the test extra installs it into this venv, whose bin/ need not be on PATH
KCM = (shutil.which("kafka-cluster-manager", path=os.path.dirname(sys.executable))
       or shutil.which("kafka-cluster-manager"))
pytestmark = pytest.mark.skipif(KCM is None, reason="kafka-utils not installed (pip install kafka-utils==4.1.0)")


@pytest.fixture
def kcm(zk_chroot: str, tmp_path: Path):
    (tmp_path / "kactor.yaml").write_text(
        f'clusters:\n  local:\n    broker_list:\n      - "127.0.0.1:9092"\n    zookeeper: "{zk_chroot}"\n'
        "local_config:\n  cluster: local\n")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(KCM), "--cluster-type", "kactor", "--discovery-base-path", str(tmp_path), *args],
                              capture_output=True, text=True, timeout=120)
    return run


def _cluster(kactor, zk: KazooClient) -> None:
    for b in (1, 2, 3, 4):
        register_broker(zk, b)
    assert kactor("topics", "--create", "--topic", "orders", "--partitions", "4", "--replication-factor", "2",
                  "--start-index", "0").returncode == 0
    for p, replicas in json.loads(zk.get("/brokers/topics/orders")[0])["partitions"].items():
        write_state(zk, "orders", int(p), replicas[0], replicas)


def test_kafka_utils_reads_kactor_topic_and_kactor_shows_its_plan(kactor, kcm, zk: KazooClient,
                                                                  tmp_path: Path) -> None:
    _cluster(kactor, zk)
    stats = kcm("stats")
    assert stats.returncode == 0, stats.stderr
    assert "Leader Count" in stats.stdout
    # 4 partitions x RF 2 on 4 brokers from the kactor placement: 2 replicas and 1 leader each
    assert "Leader count imbalance: 0" in stats.stdout

    apply = kcm("--apply", "--no-confirm", "decommission", "4")
    assert apply.returncode == 0, apply.stderr
    raw = zk.get("/admin/reassign_partitions")[0]
    plan = json.loads(raw)
    moved = {(p["topic"], p["partition"]): p["replicas"] for p in plan["partitions"]}
    assert moved and all(4 not in r for r in moved.values())

    view = json.loads(kactor("describe", "--json").stdout)
    reassigning = {(t["name"], p["partition"]): p["reassignment_target"]
                   for t in view["topics"] for p in t["partitions"] if p["reassigning"]}
    assert reassigning == moved

    plan_file = tmp_path / "plan.json"
    plan_file.write_bytes(raw)
    verify = kactor("reassign-partitions", "--verify", "--reassignment-json-file", str(plan_file))
    assert verify.returncode == 0, verify.stderr
    for topic, partition in moved:
        assert f"Reassignment of partition {topic}-{partition} is still in progress." in verify.stdout
    refused = kactor("reassign-partitions", "--execute", "--reassignment-json-file", str(plan_file))
    assert refused.returncode == 1 and "There is an existing assignment running." in refused.stderr


def test_kafka_utils_sees_kactor_plan_as_pending(kactor, kcm, zk: KazooClient, tmp_path: Path) -> None:
    _cluster(kactor, zk)
    plan = tmp_path / "p.json"
    plan.write_text('{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[3,4]}]}')
    assert kactor("reassign-partitions", "--execute", "--reassignment-json-file", str(plan)).returncode == 0
    r = kcm("--apply", "--no-confirm", "rebalance", "--leaders")
    assert r.returncode == 1
    assert "Previous reassignment pending" in r.stdout + r.stderr
