"""Replication throttles on a real cluster (Kafka 2.6.3's ReplicationQuotaManagers): a partition of ~6 MB moved to a
new broker with ``kactor reassign-partitions --execute --throttle 1000000`` takes about 6 s (at least 60% of
bytes / rate) where unthrottled it takes well under one, the new replica holds every record, and ``--verify`` then
finds the reassignment complete and removes the throttles."""

from __future__ import annotations

import json
import time

import pytest
from cluster_helpers import Cluster, produce, run_kactor, segment_records
from kafka_clients_helpers import bootstrap

from messages.common import Errors

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

OVERRIDES = ("auto.leader.rebalance.enable=false",)
RATE = 1_000_000  # B/s
BATCHES, RECORDS, VALUE_BYTES = 7, 90, 10_000  # 7 batches of ~900 kB (below message.max.bytes): ~6.3 MB


def tool(c: Cluster, *args: str) -> tuple[int, list[str]]:
    proc = run_kactor("reassign-partitions", "--bootstrap-server", bootstrap(c), *args, check=False)
    assert proc.stderr == ""
    return proc.returncode, proc.stdout.splitlines()


def configs(c: Cluster, kind: str, name: str) -> dict[str, str]:
    path = f"/config/{kind}/{name}"
    return c.json(path)["config"] if c.zk.exists(path) else {}


def test_throttled_reassignment_moves_at_the_throttle_rate_and_verify_removes_the_throttles(start_cluster,
                                                                                             tmp_path) -> None:
    c: Cluster = start_cluster(3, overrides=OVERRIDES)
    c.create_topic("moving", assignment={0: [0]})
    values = [f"{i:06d}".ljust(VALUE_BYTES, "x") for i in range(BATCHES * RECORDS)]
    for b in range(BATCHES):
        result = produce(c, "moving", 0, tuple(values[b * RECORDS:(b + 1) * RECORDS]))
        assert result.error == Errors.NONE, result
    total_bytes = sum(len(v) for v in values)
    plan = tmp_path / "p.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "moving", "partition": 0, "replicas": [0, 1]}]}))

    code, out = tool(c, "--execute", "--reassignment-json-file", str(plan), "--throttle", str(RATE))
    started = time.monotonic()  # the tool's last step started the reassignment (unthrottled, it is over in < 1 s)
    assert code == 0 and out[-2:] == [f"The inter-broker throttle limit was set to {RATE} B/s",
                                      "Successfully started partition reassignment for moving-0"]
    # calculateMoveMap: broker 0 holds the data (leader throttle), broker 1 fetches it (follower throttle)
    assert configs(c, "topics", "moving") == {"leader.replication.throttled.replicas": "0:0",
                                              "follower.replication.throttled.replicas": "0:1"}
    c.wait_partition("moving", 0, lambda st: st["isr"] == [0, 1], timeout=60, what="broker 1 in sync")
    took = time.monotonic() - started
    assert took >= total_bytes / RATE * 0.6, f"{total_bytes} B moved in {took:.1f} s at a {RATE} B/s throttle"
    c.wait(lambda: not c.zk.exists("/admin/reassign_partitions"), what="the reassignment done")

    moved = c.wait(lambda: (r := segment_records(c, 1, "moving", 0)) and len(r) == len(values) and r,
                   what="every record in broker 1's log")
    assert [(offset, value) for offset, _, value in moved] == list(enumerate(values))

    code, out = tool(c, "--verify", "--reassignment-json-file", str(plan))
    assert (code, out) == (0, ["Status of partition reassignment:",
                               "Reassignment of partition moving-0 is complete.",
                               "Clearing broker-level throttles on brokers 0,1,2",
                               "Clearing topic-level throttles on topic moving"])
    assert configs(c, "topics", "moving") == {}
    assert [configs(c, "brokers", str(b)) for b in (0, 1, 2)] == [{}, {}, {}]
