"""Kafka's tools on a real 2-broker cluster where only a cluster shows them: ``kactor topics --bootstrap-server
--alter --partitions`` (CreatePartitions through confluent-kafka, which refused the request it was given before), and
``kactor reassign-partitions --cancel`` of a reassignment still moving (KIP-455's cancellation, 2.4+): a partition's
move to a new broker throttled so that it cannot finish for a minute, then cancelled — the original replica set comes
back at once, the adding replica's log is deleted from its broker, the throttles are cleared and the leader still
holds every record. Before, the cancel waited for /admin/reassign_partitions to go (it goes when the move completes),
answered "The request timed out" after 30 s and the move completed.

One cluster for the module (the tests change nothing the other needs)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_helpers import (
    TEST_SESSION_TIMEOUT_MS,
    Cluster,
    produce,
    run_kactor,
    running,
    segment_records,
    topic_dirs,
)
from kafka_clients_helpers import bootstrap

from kactor.cluster import LocalCluster
from messages.common import Errors
from tests.support.kazoo_clients import new_chroot

# one worker runs the module: its module-scoped cluster writes a fixed trace folder, and its tests share topics
pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.xdist_group("test_cluster_reassign_cancel")]
pytest.importorskip("confluent_kafka")

RATE = 50_000  # B/s: the ~3.6 MB below would take over a minute to move
BATCHES, RECORDS, VALUE_BYTES = 4, 90, 10_000


@pytest.fixture(scope="module")
def cluster(zk_server, tmp_path_factory: pytest.TempPathFactory,  # noqa: ANN001
            cluster_trace_root: Path) -> Iterator[Cluster]:
    lc = LocalCluster(2, zookeeper=new_chroot(zk_server.connect_string),
                      base_dir=str(tmp_path_factory.mktemp("reassign-cancel")),
                      trace_dir=str(cluster_trace_root / "reassign-cancel-0"),
                      overrides=[f"zookeeper.session.timeout.ms={TEST_SESSION_TIMEOUT_MS}",
                                 "controlled.shutdown.retry.backoff.ms=200", "auto.leader.rebalance.enable=false"])
    with running(lc) as c:
        yield c


def test_alter_partitions_through_the_bootstrap_server(cluster: Cluster) -> None:
    c = cluster
    c.create_topic("grow", partitions=1, replication_factor=2)
    proc = run_kactor("topics", "--bootstrap-server", bootstrap(c), "--alter", "--topic", "grow", "--partitions", "3",
                      check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")  # 2.6.3's alterTopic prints nothing
    assignment = c.assignment("grow")
    assert assignment is not None and sorted(assignment) == [0, 1, 2]
    assert all(sorted(r) == [0, 1] for r in assignment.values())
    for p in (1, 2):
        c.wait_partition("grow", p, lambda st: st["leader"] >= 0, what=f"grow-{p} led")
    proc = run_kactor("topics", "--bootstrap-server", bootstrap(c), "--alter", "--topic", "grow", "--partitions", "2",
                      check=False)
    assert proc.returncode == 1 and proc.stdout == "" and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "Topic currently has 3 partitions, which is higher than the requested 2." in proc.stderr
    assert sorted(c.assignment("grow") or {}) == [0, 1, 2]


def _tool(c: Cluster, *args: str) -> tuple[int, list[str]]:
    proc = run_kactor("reassign-partitions", "--bootstrap-server", bootstrap(c), *args, check=False)
    assert proc.stderr == ""
    return proc.returncode, proc.stdout.splitlines()


def test_cancel_a_reassignment_still_moving(cluster: Cluster, tmp_path: Path) -> None:
    c = cluster
    c.create_topic("moving", assignment={0: [0]})
    values = [f"{i:06d}".ljust(VALUE_BYTES, "x") for i in range(BATCHES * RECORDS)]
    for b in range(BATCHES):
        result = produce(c, "moving", 0, tuple(values[b * RECORDS:(b + 1) * RECORDS]))
        assert result.error == Errors.NONE, result
    plan = tmp_path / "p.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "moving", "partition": 0, "replicas": [0, 1]}]}))
    code, out = _tool(c, "--execute", "--reassignment-json-file", str(plan), "--throttle", str(RATE))
    assert code == 0 and out[-1] == "Successfully started partition reassignment for moving-0", out
    c.wait(lambda: "moving-0" in topic_dirs(c, 1, "moving"), what="broker 1's adding replica of moving-0 created")
    assert _tool(c, "--list") == (0, ["Current partition reassignments:", "moving-0: replicas: 0,1. adding: 1."])

    started = time.monotonic()
    code, out = _tool(c, "--cancel", "--reassignment-json-file", str(plan))
    took = time.monotonic() - started
    assert (code, out) == (0, ["Successfully cancelled partition reassignment for: moving-0",
                               "None of the specified partition moves are active.",
                               "Clearing broker-level throttles on brokers 0,1",
                               "Clearing topic-level throttles on topic moving"])
    assert took < 20, f"the cancel took {took:.1f} s"
    # the original replica set, at once; nothing left of the reassignment
    assert c.json("/brokers/topics/moving") == {"version": 2, "partitions": {"0": [0]}, "adding_replicas": {},
                                                "removing_replicas": {}}
    assert not c.zk.exists("/admin/reassign_partitions")
    state = c.partition_state("moving", 0)
    assert state is not None and (state["leader"], state["isr"]) == (0, [0])
    assert _tool(c, "--list") == (0, ["No partition reassignments found."])
    for path in ("/config/topics/moving", "/config/brokers/0", "/config/brokers/1"):
        if c.zk.exists(path):
            assert not any("throttled" in k for k in c.json(path)["config"]), (path, c.json(path))
    # the adding replica's log is deleted (renamed ...-delete first, as Kafka's Log.logDeleteDirName)
    c.wait(lambda: "moving-0" not in topic_dirs(c, 1, "moving"), what="broker 1's moving-0 log deleted")
    # no record lost: the leader's log holds every one, and it takes more
    assert [r[2] for r in segment_records(c, 0, "moving", 0)] == values
    assert produce(c, "moving", 0, ("after",)).error == Errors.NONE
    assert c.assignment("moving") == {0: [0]}
