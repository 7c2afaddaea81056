"""Issue #6: a reassignment plan written by Yelp's kafka-utils (the real ``kafka-cluster-manager`` console script,
ecosystem-notes §6) against the cluster's ZooKeeper chroot is carried out by the controller, which then deletes
/admin/reassign_partitions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cluster_helpers import topic_dirs

pytestmark = pytest.mark.cluster

CLUSTER_MANAGER = os.path.join(os.path.dirname(sys.executable), "kafka-cluster-manager")


def _discovery(c, base: Path) -> Path:  # type: ignore[no-untyped-def]
    """kafka-utils' cluster config: <cluster-type>.yaml in a discovery dir, ZooKeeper with the test's chroot."""
    brokers = "\n".join(f'      - "127.0.0.1:{c.lc.ports[b]}"' for b in sorted(c.lc.ports))
    (base / "kactortest.yaml").write_text(
        "clusters:\n  local:\n    broker_list:\n" + brokers + "\n"
        f'    zookeeper: "{c.connect_string}"\n'
        "local_config:\n  cluster: local\n")
    return base


def _cluster_manager(base: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLUSTER_MANAGER, "--cluster-type", "kactortest", "--discovery-base-path", str(base), *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not os.path.exists(CLUSTER_MANAGER),
                    reason="kafka-utils is not installed in this venv (pip install kafka-utils==4.1.0, the test extra)")
def test_kafka_cluster_manager_rebalance_plan_is_carried_out(start_cluster, tmp_path: Path) -> None:
    c = start_cluster(3)
    # every replica of "orders" on brokers 0 and 1: a rebalance over brokers moves some of them to broker 2
    c.create_topic("orders", assignment={p: [p % 2, (p + 1) % 2] for p in range(6)})
    base = _discovery(c, tmp_path)
    plan_file = tmp_path / "plan.json"
    out = _cluster_manager(base, "--apply", "--no-confirm", "--write-to-file", str(plan_file),
                           "rebalance", "--brokers", "--max-partition-movements", "4")
    assert out.returncode == 0, (out.stdout, out.stderr)
    plan = json.loads(plan_file.read_text())
    moves = {p["partition"]: p["replicas"] for p in plan["partitions"]}
    assert moves and all(p["topic"] == "orders" for p in plan["partitions"]), plan
    assert any(2 in r for r in moves.values()), plan

    c.wait(lambda: not c.zk.exists("/admin/reassign_partitions"), what="the controller to delete the plan's znode")
    expected = {p: moves.get(p, [p % 2, (p + 1) % 2]) for p in range(6)}
    c.wait(lambda: c.assignment("orders") == expected, what=f"orders assigned as planned: {expected}")
    topic = c.json("/brokers/topics/orders")
    assert topic["adding_replicas"] == {} and topic["removing_replicas"] == {}
    for p, replicas in expected.items():
        st = c.wait_partition("orders", p, lambda s, r=replicas: sorted(s["isr"]) == sorted(r),
                              what=f"orders-{p} ISR = {replicas}")
        assert st["leader"] in replicas
    c.wait(lambda: all((f"orders-{p}" in topic_dirs(c, b, "orders")) == (b in expected[p])
                       for p in range(6) for b in (0, 1, 2)), what="log dirs only on the planned replicas")
    # kafka-utils sees the new layout and no pending plan: a second rebalance is accepted
    stats = _cluster_manager(base, "stats")
    assert stats.returncode == 0, (stats.stdout, stats.stderr)
