"""``kactor reassign-partitions --bootstrap-server`` (Kafka 2.6.3's ReassignPartitionsCommand on the admin API) on a
real 3-broker cluster: --generate from Metadata; --execute --throttle writing the brokers' and the topic's throttle
configs, then the reassignment in the topic znode, and --verify removing the throttles once it is done; --list,
--execute's refusal and --verify of a reassignment that cannot finish while its new replica's broker is stopped;
--cancel once it finished. (Cancelling an active one: tests/kactor/cli/test_reassign_kafka.py.) The first test runs
on the session's shared cluster (conftest shared_cluster); the second stops a broker, so it has a cluster of its own."""

from __future__ import annotations

import json
import signal

import pytest
from cluster_helpers import Cluster, run_kactor, wait_cached
from kafka_clients_helpers import bootstrap

from kactor.cli import main
from messages.common import TopicPartition

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
pytest.importorskip("confluent_kafka")

OVERRIDES = ("auto.leader.rebalance.enable=false",)


def tool(c: Cluster, *args: str, servers: str | None = None) -> tuple[int, list[str]]:
    proc = run_kactor("reassign-partitions", "--bootstrap-server", servers or bootstrap(c), *args, check=False)
    assert proc.stderr == ""
    return proc.returncode, proc.stdout.splitlines()


def configs(c: Cluster, kind: str, name: str) -> dict[str, str]:
    path = f"/config/{kind}/{name}"
    return c.json(path)["config"] if c.zk.exists(path) else {}


def plan(tmp_path, name: str, partitions: dict[int, list[int]], topic: str = "moving") -> str:
    f = tmp_path / name
    f.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic, "partition": p, "replicas": r} for p, r in sorted(partitions.items())]}))
    return str(f)


def test_generate_execute_with_throttle_verify(shared_cluster: Cluster, tmp_path) -> None:
    c = shared_cluster
    c.create_topic("moving", assignment={0: [0, 1], 1: [1, 2]})
    moves = tmp_path / "move.json"
    moves.write_text('{"topics":[{"topic":"moving"}],"version":1}')
    code, out = tool(c, "--generate", "--topics-to-move-json-file", str(moves), "--broker-list", "0,1,2")
    assert code == 0 and out[:2] == [
        "Current partition replica assignment",
        '{"version":1,"partitions":[{"topic":"moving","partition":0,"replicas":[0,1],"log_dirs":["any","any"]},'
        '{"topic":"moving","partition":1,"replicas":[1,2],"log_dirs":["any","any"]}]}']
    assert out[3] == "Proposed partition reassignment configuration"
    proposed = json.loads(out[4])["partitions"]
    assert [(p["topic"], p["partition"], len(set(p["replicas"]))) for p in proposed] == [("moving", 0, 2),
                                                                                         ("moving", 1, 2)]
    assert c.assignment("moving") == {0: [0, 1], 1: [1, 2]}  # --generate writes nothing

    code, out = tool(c, "--execute", "--reassignment-json-file", plan(tmp_path, "p.json", {0: [2, 1], 1: [1, 2]}),
                     "--throttle", "50000000")
    assert (code, out) == (0, [
        "Current partition replica assignment", "",
        '{"version":1,"partitions":[{"topic":"moving","partition":0,"replicas":[0,1],"log_dirs":["any","any"]},'
        '{"topic":"moving","partition":1,"replicas":[1,2],"log_dirs":["any","any"]}]}', "",
        "Save this to use as the --reassignment-json-file option during rollback",
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is "
        "removed.",
        "The inter-broker throttle limit was set to 50000000 B/s",
        "Successfully started partition reassignments for moving-0,moving-1"])
    # calculateMoveMap: moving-0's data is on 0 and 1 (sources), 2 fetches it; moving-1 does not move
    assert configs(c, "topics", "moving") == {"leader.replication.throttled.replicas": "0:0,0:1,1:1,1:2",
                                              "follower.replication.throttled.replicas": "0:2"}
    for b in (0, 1, 2):
        assert configs(c, "brokers", str(b)) == {"leader.replication.throttled.rate": "50000000",
                                                 "follower.replication.throttled.rate": "50000000"}
    c.wait(lambda: c.assignment("moving") == {0: [2, 1], 1: [1, 2]} and not c.zk.exists("/admin/reassign_partitions")
           and tool(c, "--list") == (0, ["No partition reassignments found."]), what="the reassignment done")
    code, out = tool(c, "--verify", "--reassignment-json-file", plan(tmp_path, "p.json", {0: [2, 1], 1: [1, 2]}))
    assert (code, out) == (0, ["Status of partition reassignment:",
                               "Reassignment of partition moving-0 is complete.",
                               "Reassignment of partition moving-1 is complete.",
                               "Clearing broker-level throttles on brokers 0,1,2",
                               "Clearing topic-level throttles on topic moving"])
    assert configs(c, "topics", "moving") == {}
    assert [configs(c, "brokers", str(b)) for b in (0, 1, 2)] == [{}, {}, {}]

    code, out = tool(c, "--execute", "--reassignment-json-file", plan(tmp_path, "bad.json", {0: [7, 1]}))
    assert (code, out) == (1, ["Error: Unknown broker id 7"])


def test_list_verify_and_cancel_of_a_reassignment_that_cannot_finish_yet(start_cluster, tmp_path, capsys) -> None:
    c: Cluster = start_cluster(3, overrides=OVERRIDES)
    # the broker to stop is not the controller: the reassignment requests go to the controller
    controller = c.controller_id()
    a, stopped = (b for b in c.live_brokers() if b != controller)
    c.create_topic("moving", assignment={0: [controller, a]})
    c.wait_partition("moving", 0, lambda st: st["isr"] == [controller, a], what="moving-0 in sync")
    # the tool reads the plan's topics from the brokers it is given: wait for both to hold the controller's
    # UpdateMetadata for the new topic (the state znode above is written before it is sent; on a loaded machine the
    # tool once asked first and was answered UNKNOWN_TOPIC_OR_PARTITION)
    for b in (controller, a):
        wait_cached(c, b, TopicPartition("moving", 0), lambda st: True, "moving-0 known")
    target = plan(tmp_path, "p.json", {0: [controller, a, stopped]})
    up = ",".join("{}:{}".format(*c.lc.broker_address(b)) for b in (controller, a))  # not the stopped broker
    # the broker stops answering but stays registered until its session expires: the reassignment starts (it is a
    # known broker) and cannot finish. In-process, so that it starts well before the expiry.
    c.lc.signal_broker(stopped, signal.SIGSTOP)
    try:
        assert main(["reassign-partitions", "--bootstrap-server", up, "--execute",
                     "--reassignment-json-file", target]) == 0
        assert capsys.readouterr().out.splitlines()[-1] == "Successfully started partition reassignment for moving-0"
        assert tool(c, "--list", servers=up) == (0, [
            "Current partition reassignments:", f"moving-0: replicas: {controller},{a},{stopped}. adding: {stopped}."])
        assert tool(c, "--execute", "--reassignment-json-file", target, servers=up) == (1, [
            "Cannot execute because there is an existing partition assignment.  Use --additional to override this "
            "and create a new partition assignment in addition to the existing one."])
        assert tool(c, "--verify", "--reassignment-json-file", target, servers=up) == (0, [
            "Status of partition reassignment:", "Reassignment of partition moving-0 is still in progress."])
    finally:
        c.lc.signal_broker(stopped, signal.SIGCONT)
    # Cancelling it here would wait for /admin/reassign_partitions to go (kactor's controller takes API reassignments
    # through that znode: zk_bridge/admin/admin_reassign.py), that is for the reassignment to finish; the broker resumes
    # and finishes it, and a cancel then finds nothing to cancel.
    c.wait(lambda: c.assignment("moving") == {0: [controller, a, stopped]}
           and not c.zk.exists("/admin/reassign_partitions"), 60, what="the reassignment done once the broker resumed")
    assert tool(c, "--list") == (0, ["No partition reassignments found."])
    assert tool(c, "--cancel", "--reassignment-json-file", target) == (0, [
        "None of the specified partition reassignments are active.",
        "None of the specified partition moves are active.",
        "Clearing broker-level throttles on brokers 0,1,2",
        "Clearing topic-level throttles on topic moving"])
