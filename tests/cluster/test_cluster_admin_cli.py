"""Issue #7 on a real cluster: every admin command and option as a subprocess (``python -m kactor ...``) against
three live brokers, with the controller acting on what the tools write, and every refusal checked for its exit code,
its one-line message, and a ZooKeeper left unchanged.

One cluster serves the whole module (each test uses its own topics and leaves the three brokers running): tools
run in about a second each, a cluster costs about five to start.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import DEFAULT_WAIT_S, TEST_SESSION_TIMEOUT_MS, Cluster, run_kactor
from kazoo.client import KazooClient

from kactor.cluster import LocalCluster
from tests.support.kazoo_clients import new_chroot

# one worker runs the module: its module-scoped cluster writes a fixed trace folder, and its tests share topics
pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("test_cluster_admin_cli")]

# the test extra installs it into this venv, whose bin/ need not be on PATH
KCM = (shutil.which("kafka-cluster-manager", path=os.path.dirname(sys.executable))
       or shutil.which("kafka-cluster-manager"))
# What a refused command must leave as it was (the rest of the tree — /brokers/ids, /controller — is the brokers').
WATCHED = ("/brokers/topics", "/config", "/admin")
ROLLBACK_HINT = "Save this to use as the --reassignment-json-file option during rollback"


@pytest.fixture(scope="module")
def cluster(zk_server, tmp_path_factory: pytest.TempPathFactory, cluster_trace_root: Path) -> Iterator[Cluster]:
    connect = new_chroot(zk_server.connect_string)
    # No automatic rebalance, so the preferred election below is the tools' doing; no controlled shutdown, so a
    # teardown with an imbalanced cluster does not spend its retries.
    lc = LocalCluster(3, zookeeper=connect,
                      base_dir=str(tmp_path_factory.mktemp("admin-cli-cluster")),
                      trace_dir=str(cluster_trace_root / "test_cluster_admin_cli-0"),
                      overrides=[f"zookeeper.session.timeout.ms={TEST_SESSION_TIMEOUT_MS}",
                                 "auto.leader.rebalance.enable=false", "controlled.shutdown.enable=false"])
    c = Cluster(lc)
    try:
        c.start()
        yield c
    finally:
        c.stop()


# -- helpers ---------------------------------------------------------------------------------------------------------
def kactor(c: Cluster, command: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``kactor COMMAND --zookeeper <the cluster> ARGS`` (never raises on a non-zero exit)."""
    return run_kactor(command, "--zookeeper", c.connect_string, *args, check=False, timeout=timeout)


def ok(r: subprocess.CompletedProcess[str]) -> list[str]:
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout.splitlines()


def snapshot(zk: KazooClient) -> dict[str, bytes]:
    out: dict[str, bytes] = {}

    def walk(p: str) -> None:
        data, _ = zk.get(p)
        out[p] = data
        for child in sorted(zk.get_children(p)):
            walk(f"{p}/{child}")
    for path in WATCHED:
        if zk.exists(path):
            walk(path)
    return out


def quiet_snapshot(c: Cluster) -> dict[str, bytes]:
    """The watched tree once the controller has stopped changing it (two reads 0.3 s apart agree)."""
    last: list[dict[str, bytes]] = [snapshot(c.zk)]

    def settled() -> dict[str, bytes] | None:
        time.sleep(0.3)
        now = snapshot(c.zk)
        same = now == last[0]
        last[0] = now
        return now if same else None
    return c.wait(settled, what="a quiet ZooKeeper tree")


def refused(c: Cluster, command: str, *args: str, message: str, code: int = 1) -> None:
    """The command exits ``code`` with one stderr line naming ``message`` and writes nothing."""
    before = quiet_snapshot(c)
    r = kactor(c, command, *args)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == code, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    assert len(lines) == 1, r.stderr
    prefix = f"kactor {command}: " + ("error: " if code == 2 else "")
    assert lines[0].startswith(prefix) and message in lines[0], lines[0]
    assert snapshot(c.zk) == before


def write(tmp_path: Path, name: str, content: Any) -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def plan(*items: tuple[str, int, list[int]]) -> dict[str, Any]:
    return {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r} for t, p, r in items]}


def wait_led_by_first_replica(c: Cluster, topic: str, epoch: int | None = None) -> dict[int, dict[str, Any]]:
    """Every partition has a state znode whose leader is its first replica and whose ISR is all its replicas."""
    def check() -> dict[int, dict[str, Any]] | None:
        assignment = c.assignment(topic)
        if assignment is None:
            return None
        states = {p: c.partition_state(topic, p) for p in assignment}
        good = all(st is not None and st["leader"] == assignment[p][0] and sorted(st["isr"]) == sorted(assignment[p])
                   and (epoch is None or st["leader_epoch"] == epoch) for p, st in states.items())
        return states if good else None  # type: ignore[return-value]
    return c.wait(check, what=f"{topic}: every partition led by its first replica with a full ISR")


def describe_json(c: Cluster) -> dict[str, Any]:
    r = kactor(c, "describe", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def others(c: Cluster) -> tuple[int, int, int]:
    """(controller, x, y): x and y are the two brokers that are not the controller."""
    ctl = c.controller_id()
    assert ctl is not None
    x, y = (b for b in (0, 1, 2) if b != ctl)
    return ctl, x, y


def controller_metric(c: Cluster, name: str) -> float:
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    ctl = c.controller_id()
    assert ctl is not None
    with urllib.request.urlopen(c.lc.metrics_url(ctl), timeout=5) as r:
        text = r.read().decode()
    return next(s.value for f in text_string_to_metric_families(text) for s in f.samples if s.name == name)


# -- kactor topics ---------------------------------------------------------------------------------------------------
def test_topics_create_describe_list_alter_delete(cluster: Cluster) -> None:
    c = cluster
    epoch = c.controller_epoch()
    assert ok(kactor(c, "topics", "--create", "--topic", "orders", "--partitions", "3", "--replication-factor", "2",
                     "--config", "retention.ms=1000", "--start-index", "0")) == ["Created topic orders."]
    assert c.json("/brokers/topics/orders") == {"version": 2, "partitions": {"0": [0, 1], "1": [1, 2], "2": [2, 0]},
                                                "adding_replicas": {}, "removing_replicas": {}}
    assert c.json("/config/topics/orders") == {"version": 1, "config": {"retention.ms": "1000"}}
    states = wait_led_by_first_replica(c, "orders")
    for p, replicas in {0: [0, 1], 1: [1, 2], 2: [2, 0]}.items():  # the controller's NewPartition → OnlinePartition
        assert states[p] == {"controller_epoch": epoch, "leader": replicas[0], "version": 1, "leader_epoch": 0,
                             "isr": replicas}
    assert ok(kactor(c, "topics", "--describe", "--topic", "orders")) == [
        "Topic: orders\tPartitionCount: 3\tReplicationFactor: 2\tConfigs: retention.ms=1000",
        "\tTopic: orders\tPartition: 0\tLeader: 0\tReplicas: 0,1\tIsr: 0,1",
        "\tTopic: orders\tPartition: 1\tLeader: 1\tReplicas: 1,2\tIsr: 1,2",
        "\tTopic: orders\tPartition: 2\tLeader: 2\tReplicas: 2,0\tIsr: 2,0"]

    assert ok(kactor(c, "topics", "--create", "--topic", "manual", "--replica-assignment", "2:1,1:0")) == [
        "Created topic manual."]
    wait_led_by_first_replica(c, "manual", epoch=0)
    assert c.assignment("manual") == {0: [2, 1], 1: [1, 0]}
    before = quiet_snapshot(c)
    r = kactor(c, "topics", "--create", "--topic", "manual", "--partitions", "1", "--replication-factor", "1",
               "--if-not-exists")
    assert ok(r) == [] and r.stderr == ""
    assert snapshot(c.zk) == before
    assert ok(kactor(c, "topics", "--list", "--topic", "orders|manual")) == ["manual", "orders"]
    assert ok(kactor(c, "topics", "--describe", "--topic", "orders|manual", "--under-replicated-partitions")) == []
    assert ok(kactor(c, "topics", "--describe", "--topic", "orders|manual", "--unavailable-partitions")) == []
    assert ok(kactor(c, "topics", "--describe", "--topic", "orders|manual", "--topics-with-overrides")) == [
        "Topic: orders\tPartitionCount: 3\tReplicationFactor: 2\tConfigs: retention.ms=1000"]

    # --alter --partitions: AdminZkClient.addPartitions continues the placement; the controller brings them online
    assert ok(kactor(c, "topics", "--alter", "--topic", "orders", "--partitions", "5")) == [
        "WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the "
        "messages will be affected", "Adding partitions succeeded!"]
    assert c.assignment("orders") == {0: [0, 1], 1: [1, 2], 2: [2, 0], 3: [0, 2], 4: [1, 0]}
    states = wait_led_by_first_replica(c, "orders")
    assert states[3] == {"controller_epoch": epoch, "leader": 0, "version": 1, "leader_epoch": 0, "isr": [0, 2]}
    assert ok(kactor(c, "topics", "--describe", "--topic", "orders"))[0].startswith(
        "Topic: orders\tPartitionCount: 5\tReplicationFactor: 2")
    lines = ok(kactor(c, "topics", "--alter", "--topic", "orders", "--config", "cleanup.policy=compact",
                      "--delete-config", "retention.ms"))
    assert lines[0].startswith("WARNING: Altering topic configuration from this script has been deprecated")
    assert lines[-1] == "Updated config for topic orders."
    assert c.json("/config/topics/orders") == {"version": 1, "config": {"cleanup.policy": "compact"}}
    changes = [c.json(f"/config/changes/{n}") for n in sorted(c.zk.get_children("/config/changes"))]
    assert {"version": 2, "entity_path": "topics/orders"} in changes

    # refusals: exit 1, one line, nothing written
    refused(c, "topics", "--create", "--topic", "orders", "--partitions", "1", "--replication-factor", "1",
            message="Topic 'orders' already exists.")
    refused(c, "topics", "--create", "--topic", "big", "--partitions", "1", "--replication-factor", "4",
            message="Replication factor: 4 larger than available brokers: 3.")
    refused(c, "topics", "--create", "--topic", "bad name", "--partitions", "1", "--replication-factor", "1",
            message='Topic name "bad name" is illegal')
    refused(c, "topics", "--create", "--topic", "orders.x", "--partitions", "1", "--replication-factor", "1",
            "--replica-assignment", "0", message="option --replica-assignment can't be used", code=2)
    refused(c, "topics", "--alter", "--topic", "orders", "--partitions", "6", "--replica-assignment",
            "0:1,1:2,2:0,0:2,1:0,0:7", message="Some brokers specified for partition id 5 are not available")
    refused(c, "topics", "--alter", "--topic", "orders", "--partitions", "4",
            message="The number of partitions for a topic can only be increased. Topic orders currently has 5 "
                    "partitions, 4 would not be an increase.")
    for action in ("--alter", "--describe", "--delete"):
        extra = ["--partitions", "9"] if action == "--alter" else []
        refused(c, "topics", action, "--topic", "nope", *extra, message="Topic 'nope' does not exist as expected")
    assert ok(kactor(c, "topics", "--delete", "--topic", "nope", "--if-exists")) == []

    # --delete: the controller's TopicDeletionManager removes the topic from ZooKeeper
    assert ok(kactor(c, "topics", "--delete", "--topic", "manual")) == [
        "Topic manual is marked for deletion.", "Note: This will have no impact if delete.topic.enable is not set "
                                                "to true."]
    c.wait(lambda: not any(c.zk.exists(p) for p in ("/brokers/topics/manual", "/config/topics/manual",
                                                    "/admin/delete_topics/manual")),
           what="topic manual deleted by the controller")
    assert ok(kactor(c, "topics", "--list", "--topic", "orders|manual")) == ["orders"]


# -- a dead broker: unavailable / under-replicated, deletion and reassignment that wait for it ------------------------
def test_dead_broker_views_deletion_reassignment_and_preferred_election(cluster: Cluster, tmp_path: Path) -> None:
    c = cluster
    ctl, x, y = others(c)
    for topic, assignment in (("frail", f"{x}:{y}"), ("lonely", f"{x}"), ("stuck", f"{x}")):
        ok(kactor(c, "topics", "--create", "--topic", topic, "--replica-assignment", assignment))
        wait_led_by_first_replica(c, topic, epoch=0)

    c.kill(x)
    c.wait(lambda: x not in c.live_brokers(), TEST_SESSION_TIMEOUT_MS / 1000 + DEFAULT_WAIT_S, f"broker {x} gone")
    st = c.wait_partition("frail", 0, lambda st: st["leader"] == y)
    assert st == {"controller_epoch": c.controller_epoch(), "leader": y, "version": 1, "leader_epoch": 1, "isr": [y]}
    for topic in ("lonely", "stuck"):  # removeReplicasFromIsr keeps the last ISR member and sets NoLeader
        st = c.wait_partition(topic, 0, lambda st: st["leader"] == -1)
        assert st["isr"] == [x] and st["leader_epoch"] == 1
    topics = "frail|lonely|stuck"
    assert ok(kactor(c, "topics", "--describe", "--topic", topics, "--under-replicated-partitions")) == [
        f"\tTopic: frail\tPartition: 0\tLeader: {y}\tReplicas: {x},{y}\tIsr: {y}"]
    assert ok(kactor(c, "topics", "--describe", "--topic", topics, "--unavailable-partitions")) == [
        f"\tTopic: lonely\tPartition: 0\tLeader: none\tReplicas: {x}\tIsr: {x}",
        f"\tTopic: stuck\tPartition: 0\tLeader: none\tReplicas: {x}\tIsr: {x}"]
    view = describe_json(c)
    flags = {(t["name"], p["partition"]): (p["leader"], p["under_replicated"], p["offline"])
             for t in view["topics"] for p in t["partitions"] if t["name"] in ("frail", "lonely", "stuck")}
    assert flags == {("frail", 0): (y, True, False), ("lonely", 0): (None, False, True),
                     ("stuck", 0): (None, False, True)}
    assert [b["id"] for b in view["brokers"]] == sorted({0, 1, 2} - {x})

    # deleting a topic whose replica is down: marked, not completed; a second --delete says so (exit 0, as Kafka 2.6)
    ok(kactor(c, "topics", "--delete", "--topic", "lonely"))
    before = quiet_snapshot(c)
    assert ok(kactor(c, "topics", "--delete", "--topic", "lonely")) == ["Topic lonely is already marked for deletion."]
    assert snapshot(c.zk) == before
    assert ok(kactor(c, "topics", "--list", "--topic", "lonely")) == ["lonely - marked for deletion"]

    # a reassignment that cannot finish while the partition has no leader: in progress, and a second is refused
    stuck_plan = write(tmp_path, "stuck.json", plan(("stuck", 0, [y])))
    assert ok(kactor(c, "reassign-partitions", "--execute", "--reassignment-json-file", stuck_plan)) == [
        "Current partition replica assignment", "",
        f'{{"version":1,"partitions":[{{"topic":"stuck","partition":0,"replicas":[{x}],"log_dirs":["any"]}}]}}', "",
        ROLLBACK_HINT, "Successfully started partition reassignment for stuck-0"]
    c.wait(lambda: c.json("/brokers/topics/stuck")["adding_replicas"] == {"0": [y]},
           what="the controller to start the reassignment of stuck-0 (KIP-455 adding_replicas)")
    assert c.json("/brokers/topics/stuck") == {"version": 2, "partitions": {"0": [y, x]},
                                               "adding_replicas": {"0": [y]}, "removing_replicas": {"0": [x]}}
    assert ok(kactor(c, "reassign-partitions", "--verify", "--reassignment-json-file", stuck_plan)) == [
        "Status of partition reassignment:", "Reassignment of partition stuck-0 is still in progress."]
    other_plan = write(tmp_path, "other.json", plan(("frail", 0, [y, ctl])))
    refused(c, "reassign-partitions", "--execute", "--reassignment-json-file", other_plan,
            message="There is an existing assignment running.")
    r = kactor(c, "reassign-partitions", "--verify", "--wait", "--timeout", "1000", "--poll-interval", "0.2",
               "--reassignment-json-file", stuck_plan)
    assert r.returncode == 1 and r.stderr.strip().splitlines()[-1] == (
        "kactor reassign-partitions: Timed out after 1 s waiting for the reassignment of 1 partition: stuck-0")
    view = describe_json(c)
    stuck = next(t for t in view["topics"] if t["name"] == "stuck")["partitions"][0]
    assert stuck["reassigning"] and stuck["reassignment_target"] == [y]
    assert view["pending_reassignment"] == [{"topic": "stuck", "partition": 0, "replicas": [y]}]

    # the broker returns: the deletion and the reassignment complete; --verify --wait shows it
    c.restart(x)
    r = kactor(c, "reassign-partitions", "--verify", "--wait", "--timeout", "60000", "--poll-interval", "0.2",
               "--reassignment-json-file", stuck_plan)
    assert ok(r)[-1] == "Reassignment of partition stuck-0 is complete."
    assert "Waiting for reassignment: 1/1 partitions done" in r.stderr
    assert c.json("/brokers/topics/stuck") == {"version": 2, "partitions": {"0": [y]}, "adding_replicas": {},
                                               "removing_replicas": {}}
    c.wait(lambda: not c.zk.exists("/admin/reassign_partitions"), what="/admin/reassign_partitions removed")
    c.wait_partition("stuck", 0, lambda st: st["leader"] == y and st["isr"] == [y])
    c.wait(lambda: not c.zk.exists("/brokers/topics/lonely") and not c.zk.exists("/admin/delete_topics/lonely"),
           what="topic lonely deleted once its replica is back")

    # preferred replica election: frail-0 is led by y, its preferred replica x is back in the ISR
    c.wait_partition("frail", 0, lambda st: sorted(st["isr"]) == sorted([x, y]) and st["leader"] == y)
    c.wait(lambda: controller_metric(c, "kafka_controller_KafkaController_PreferredReplicaImbalanceCount") >= 1,
           what="PreferredReplicaImbalanceCount >= 1")
    election = write(tmp_path, "election.json", {"partitions": [{"topic": "frail", "partition": 0}]})
    assert ok(kactor(c, "preferred-replica-election", "--path-to-json-file", election)) == [
        "Created preferred replica election path with frail-0",
        "Successfully started preferred replica election for partitions Set(frail-0)"]
    st = c.wait_partition("frail", 0, lambda st: st["leader"] == x, what=f"frail-0 led by {x} again")
    assert st["leader_epoch"] == 2 and sorted(st["isr"]) == sorted([x, y])
    c.wait(lambda: not c.zk.exists("/admin/preferred_replica_election"), what="election znode removed")
    # without a file: every partition of the cluster (once every preferred replica is back in its ISR)
    for topic in c.zk.get_children("/brokers/topics"):
        c.wait(lambda t=topic: all(sorted((c.partition_state(t, p) or {}).get("isr", [])) == sorted(r)
                                   for p, r in (c.assignment(t) or {}).items()), what=f"{topic}: full ISRs")
    lines = ok(kactor(c, "preferred-replica-election"))
    assert lines[0].startswith("Created preferred replica election path with ") and "frail-0" in lines[0]
    c.wait(lambda: not c.zk.exists("/admin/preferred_replica_election"), what="election znode removed")
    for topic in c.zk.get_children("/brokers/topics"):
        wait_led_by_first_replica(c, topic)
    c.wait(lambda: controller_metric(c, "kafka_controller_KafkaController_PreferredReplicaImbalanceCount") == 0,
           what="PreferredReplicaImbalanceCount 0")
    refused(c, "preferred-replica-election", "--path-to-json-file",
            write(tmp_path, "dup.json", {"partitions": [{"topic": "frail", "partition": 0}] * 2}),
            message="Preferred replica election data contains duplicate partitions: frail-0")
    refused(c, "preferred-replica-election", "--path-to-json-file",
            write(tmp_path, "none.json", {"partitions": [{"topic": "nope", "partition": 0}]}),
            message="none of the listed partitions exists (nope-0)")
    refused(c, "preferred-replica-election", "--path-to-json-file", str(tmp_path / "missing.json"),
            message="Cannot read preferred replica election JSON file")


# -- kactor reassign-partitions on live brokers --------------------------------------------------------------------
def test_reassign_generate_execute_verify(cluster: Cluster, tmp_path: Path) -> None:
    c = cluster
    ok(kactor(c, "topics", "--create", "--topic", "moving", "--replica-assignment", "0:1,1:0"))
    wait_led_by_first_replica(c, "moving", epoch=0)
    move = write(tmp_path, "move.json", {"topics": [{"topic": "moving"}], "version": 1})
    before = quiet_snapshot(c)
    lines = ok(kactor(c, "reassign-partitions", "--generate", "--topics-to-move-json-file", move, "--broker-list",
                      "1,2", "--start-index", "0"))
    assert snapshot(c.zk) == before
    assert lines == [
        "Current partition replica assignment",
        '{"version":1,"partitions":[{"topic":"moving","partition":0,"replicas":[0,1],"log_dirs":["any","any"]},'
        '{"topic":"moving","partition":1,"replicas":[1,0],"log_dirs":["any","any"]}]}',
        "",
        "Proposed partition reassignment configuration",
        '{"version":1,"partitions":[{"topic":"moving","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},'
        '{"topic":"moving","partition":1,"replicas":[2,1],"log_dirs":["any","any"]}]}']
    proposed = write(tmp_path, "proposed.json", lines[4])
    lines = ok(kactor(c, "reassign-partitions", "--execute", "--reassignment-json-file", proposed))
    assert lines[2] == MOVING_BEFORE and lines[-1] == ("Successfully started partition reassignments for "
                                                             "moving-0,moving-1")
    r = kactor(c, "reassign-partitions", "--verify", "--wait", "--timeout", "60000", "--poll-interval", "0.2",
               "--reassignment-json-file", proposed)
    assert ok(r)[-2:] == ["Reassignment of partition moving-0 is complete.",
                          "Reassignment of partition moving-1 is complete."]
    assert c.json("/brokers/topics/moving") == {"version": 2, "partitions": {"0": [1, 2], "1": [2, 1]},
                                                "adding_replicas": {}, "removing_replicas": {}}
    c.wait(lambda: not c.zk.exists("/admin/reassign_partitions"), what="/admin/reassign_partitions removed")
    # ReassignPartitionLeaderElectionStrategy: moving-0's leader 0 left, the first live ISR target replica leads;
    # moving-1's leader 1 stays (its epoch is bumped)
    st0 = c.wait_partition("moving", 0, lambda st: sorted(st["isr"]) == [1, 2])
    st1 = c.wait_partition("moving", 1, lambda st: sorted(st["isr"]) == [1, 2])
    assert st0["leader"] == 1 and st1["leader"] == 1
    # verify of a plan already done, with no reassignment running
    assert ok(kactor(c, "reassign-partitions", "--verify", "--reassignment-json-file", proposed))[1:] == [
        "Reassignment of partition moving-0 is complete.", "Reassignment of partition moving-1 is complete."]

    refused(c, "reassign-partitions", "--generate", "--topics-to-move-json-file",
            write(tmp_path, "nope.json", {"topics": [{"topic": "nope"}], "version": 1}), "--broker-list", "1,2",
            message="Topic not found: nope")
    refused(c, "reassign-partitions", "--generate", "--topics-to-move-json-file", move, "--broker-list", "1",
            message="Replication factor: 2 larger than available brokers: 1.")
    for bad, message in (
            (plan(("moving", 0, [1, 9])), "The proposed assignment contains non-existent brokerIDs: 9"),
            (plan(("moving", 5, [1, 2])), "The proposed assignment contains non-existent partitions: moving-5"),
            (plan(("moving", 0, [1, 2, 1])), "Partition replica lists may not contain duplicate entries"),
            ({"version": 1, "partitions": []}, "Partition reassignment list cannot be empty"),
            ("{oops", "not valid JSON")):
        refused(c, "reassign-partitions", "--execute", "--reassignment-json-file", write(tmp_path, "bad.json", bad),
                message=message)
    refused(c, "reassign-partitions", "--verify", "--reassignment-json-file", str(tmp_path / "missing.json"),
            message="Cannot read reassignment JSON file")


# the rollback JSON ``--execute`` prints for moving (its assignment before the move)
MOVING_BEFORE = ('{"version":1,"partitions":[{"topic":"moving","partition":0,"replicas":[0,1],'
                 '"log_dirs":["any","any"]},{"topic":"moving","partition":1,"replicas":[1,0],"log_dirs":["any","any"]}]}')


# -- kactor describe -----------------------------------------------------------------------------------------------
def test_describe_json_table_and_watch(cluster: Cluster) -> None:
    c = cluster
    ok(kactor(c, "topics", "--create", "--topic", "seen", "--replica-assignment", "1:2:0"))
    wait_led_by_first_replica(c, "seen", epoch=0)
    view = describe_json(c)
    assert view["controller"] == {"id": c.controller_id(), "epoch": c.controller_epoch()}
    assert [(b["id"], b["endpoints"], b["epoch"]) for b in view["brokers"]] == [
        (b, [f"PLAINTEXT://127.0.0.1:{c.lc.ports[b]}"], c.zk.exists(f"/brokers/ids/{b}").czxid) for b in (0, 1, 2)]
    seen = next(t for t in view["topics"] if t["name"] == "seen")
    st = c.partition_state("seen", 0)
    assert seen["partitions"] == [{
        "partition": 0, "leader": 1, "leader_epoch": 0, "controller_epoch": st["controller_epoch"],  # type: ignore
        "isr": [1, 2, 0], "replicas": [1, 2, 0], "adding_replicas": [], "removing_replicas": [],
        "reassignment_target": None, "under_replicated": False, "offline": False, "reassigning": False}]
    assert view["summary"]["offline"] == 0 and view["summary"]["under_replicated"] == 0

    table = ok(kactor(c, "describe"))
    text = "\n".join(table)
    assert f"Controller: broker {c.controller_id()}" in text and f"Controller epoch: {c.controller_epoch()}" in text
    assert f"PLAINTEXT://127.0.0.1:{c.lc.ports[2]}" in text and "│ seen" in text

    # --watch (piped): a new frame when the cluster changes, exit 0 on Ctrl-C
    proc = subprocess.Popen([sys.executable, "-m", "kactor", "describe", "--zookeeper", c.connect_string, "--watch",
                             "--interval", "0.2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ))
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.extend(proc.stdout), daemon=True)  # type: ignore[arg-type]
    reader.start()
    try:
        c.wait(lambda: any("│ seen" in line for line in out), what="a first --watch frame")
        ok(kactor(c, "topics", "--create", "--topic", "watched", "--replica-assignment", "0"))
        c.wait(lambda: any("│ watched" in line for line in out), what="a --watch frame showing the new topic")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(timeout=10)
    frames = [line for line in out if line.startswith("──") or line.startswith("─")]
    assert len(frames) >= 2


# -- usage errors: exit 2, one line, nothing written -----------------------------------------------------------------
@pytest.mark.parametrize(("command", "args"), [
    ("topics", []),
    ("topics", ["--create", "--list"]),
    ("topics", ["--create", "--topic", "t", "--partitions", "1"]),
    ("topics", ["--create", "--topic", "t", "--partitions", "x", "--replication-factor", "1"]),
    ("topics", ["--list", "--partitions", "3"]),
    ("topics", ["--delete"]),
    ("topics", ["--alter", "--topic", "orders"]),
    ("topics", ["--describe", "--under-replicated-partitions", "--unavailable-partitions"]),
    ("topics", ["--create", "--topic", "t", "--partitions", "1", "--replication-factor", "1", "--if-exists"]),
    ("reassign-partitions", ["--generate", "--broker-list", "1"]),
    ("reassign-partitions", ["--execute"]),
    ("reassign-partitions", ["--verify", "--reassignment-json-file", "x", "--broker-list", "1"]),
    ("reassign-partitions", ["--execute", "--reassignment-json-file", "x", "--wait"]),
    ("reassign-partitions", ["--verify", "--reassignment-json-file", "x", "--timeout", "0"]),
    ("preferred-replica-election", ["--path-to-json-file"]),
    ("describe", ["--watch", "--json"]),
    ("describe", ["--interval", "0"]),
])
def test_usage_errors_exit_2_and_write_nothing(cluster: Cluster, command: str, args: list[str]) -> None:
    refused(cluster, command, *args, message="", code=2)


def test_unreachable_zookeeper_is_one_line(tmp_path: Path) -> None:
    verify = write(tmp_path, "p.json", plan(("t", 0, [1])))
    for command in ("topics", "reassign-partitions", "preferred-replica-election", "describe"):
        extra = {"topics": ["--list"], "reassign-partitions": ["--verify", "--reassignment-json-file", verify]}
        r = run_kactor(command, "--zookeeper", "127.0.0.1:1", "--connect-timeout", "0.5", *extra.get(command, []),
                       check=False)
        assert r.returncode == 1, (command, r.stderr)
        assert r.stderr.strip().splitlines() == [
            f"kactor {command}: Timed out waiting for connection to ZooKeeper at 127.0.0.1:1 after 0.5 s"]


# -- interop with Yelp's kafka-utils ------------------------------------------------------------------------------
@pytest.mark.skipif(KCM is None, reason="kafka-utils is not installed (pip install kafka-utils==4.1.0 puts "
                                        "kafka-cluster-manager on PATH)")
def test_kafka_utils_interop_both_ways(cluster: Cluster, tmp_path: Path) -> None:
    c = cluster
    (tmp_path / "kactor.yaml").write_text(
        f'clusters:\n  local:\n    broker_list:\n      - "127.0.0.1:{c.lc.ports[0]}"\n'
        f'    zookeeper: "{c.connect_string}"\nlocal_config:\n  cluster: local\n')

    def kcm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(KCM), "--cluster-type", "kactor", "--discovery-base-path", str(tmp_path), *args],
                              capture_output=True, text=True, timeout=120)

    # kactor → kafka-utils: a topic made by `kactor topics` is read by `kafka-cluster-manager stats`
    ok(kactor(c, "topics", "--create", "--topic", "interop", "--partitions", "6", "--replication-factor", "2",
              "--start-index", "0"))
    wait_led_by_first_replica(c, "interop", epoch=0)
    assert c.assignment("interop") == {0: [0, 1], 1: [1, 2], 2: [2, 0], 3: [0, 2], 4: [1, 0], 5: [2, 1]}
    stats = kcm("stats")
    assert stats.returncode == 0, stats.stderr
    assert "Leader Count" in stats.stdout and "Partition Count" in stats.stdout
    assert "interop" in stats.stdout or "Replica Count" in stats.stdout
    # kafka-utils → kactor: its plan (here: replication factor 2 → 3) goes to /admin/reassign_partitions, the
    # real controller applies it, and `kactor topics --describe` reads the layout it leaves
    apply = kcm("--apply", "--no-confirm", "set_replication_factor", "--topic", "interop", "3")
    assert apply.returncode == 0, apply.stdout + apply.stderr
    c.wait(lambda: all(len(r) == 3 for r in (c.assignment("interop") or {}).values())
           and not c.zk.exists("/admin/reassign_partitions"), what="the kafka-utils plan applied by the controller")
    wait_led_by_first_replica(c, "interop")
    assignment = c.assignment("interop")
    assert assignment is not None
    lines = ok(kactor(c, "topics", "--describe", "--topic", "interop"))
    assert lines[0] == "Topic: interop\tPartitionCount: 6\tReplicationFactor: 3\tConfigs: "
    assert lines[1:] == [f"\tTopic: interop\tPartition: {p}\tLeader: {r[0]}\tReplicas: {','.join(map(str, r))}"
                         f"\tIsr: {','.join(map(str, (c.partition_state('interop', p) or {})['isr']))}"
                         for p, r in sorted(assignment.items())]
    stats = kcm("stats")
    assert stats.returncode == 0, stats.stderr
