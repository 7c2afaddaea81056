"""Issue #19's stuck seeded run on a real cluster: a partition created while its only replica is offline (so it has
no state znode and has never had a leader), reassigned, its broker back, then the topic deleted. Kafka 2.6 leaves the
topic znode with adding/removing replicas for ever and the deletion never completes; kactor applies the target
replicas at once (docs/kafka-2.6-departures.md) and both the reassignment and the deletion complete."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cluster_helpers import run_kactor, topic_dirs

pytestmark = pytest.mark.cluster


def test_reassign_never_led_partition_then_restart_then_delete(start_cluster, tmp_path: Path) -> None:
    c = start_cluster(2)
    ctrl = c.controller_id()
    assert ctrl is not None
    offline = 1 - ctrl
    c.stop_broker(offline)
    c.wait(lambda: offline not in c.live_brokers(), what=f"broker {offline} gone")
    # created with its only replica on the stopped broker: no leader can be elected, no state znode is written
    run_kactor("topics", "--zookeeper", c.connect_string, "--create", "--topic", "t",
               "--replica-assignment", str(offline))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [ctrl]}]}))
    out = run_kactor("reassign-partitions", "--zookeeper", c.connect_string, "--execute",
                     "--reassignment-json-file", str(plan))
    assert "Successfully started" in out.stdout, out.stdout
    # the target replicas are applied at once: no adding/removing replicas, the partition comes online on them
    c.wait(lambda: not c.zk.exists("/admin/reassign_partitions"), what="/admin/reassign_partitions removed")
    assert c.json("/brokers/topics/t") == {"version": 2, "partitions": {"0": [ctrl]}, "adding_replicas": {},
                                           "removing_replicas": {}}
    st = c.wait_partition("t", 0, lambda s: s["leader"] == ctrl, what=f"t-0 led by {ctrl}")
    assert (st["leader"], st["leader_epoch"], st["isr"]) == (ctrl, 0, [ctrl])
    c.wait(lambda: topic_dirs(c, ctrl, "t") == ["t-0"], what=f"t-0's log on broker {ctrl}")

    c.restart(offline)
    assert c.json("/brokers/topics/t")["partitions"] == {"0": [ctrl]}
    out = run_kactor("topics", "--zookeeper", c.connect_string, "--delete", "--topic", "t")
    assert out.stdout.startswith("Topic t is marked for deletion."), out.stdout
    c.wait(lambda: not any(c.zk.exists(p) for p in ("/brokers/topics/t", "/config/topics/t",
                                                     "/admin/delete_topics/t")),
           what="/brokers/topics/t, /config/topics/t and /admin/delete_topics/t removed")
    c.wait(lambda: topic_dirs(c, ctrl, "t") == [] and topic_dirs(c, offline, "t") == [],
           what="no t-0 log dir on either broker")
