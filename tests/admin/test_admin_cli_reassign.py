"""``kactor reassign-partitions`` and ``kactor preferred-replica-election`` against the real ZooKeeper (Kafka 2.6's
legacy --zookeeper paths), in the test's process as ``python -m kactor`` runs them, and as subprocesses where the
process matters (an interrupted wait, an unreachable server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from admin_helpers import REPO, one_line, run_cli, snapshot
from kazoo.client import KazooClient


def _topic(kactor, name: str = "foo", partitions: int = 2, rf: int = 2) -> None:
    r = kactor("topics", "--create", "--topic", name, "--partitions", str(partitions), "--replication-factor",
               str(rf), "--start-index", "0")
    assert r.returncode == 0, r.stderr


def _file(tmp_path: Path, name: str, content: object) -> str:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def _plan(*items: tuple[str, int, list[int]]) -> dict:
    return {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r} for t, p, r in items]}


def test_generate_prints_current_and_proposed_and_writes_nothing(kactor, zk: KazooClient, brokers,
                                                                 tmp_path: Path) -> None:
    _topic(kactor)
    before = snapshot(zk)
    f = _file(tmp_path, "move.json", {"topics": [{"topic": "foo"}], "version": 1})
    r = kactor("reassign-partitions", "--generate", "--topics-to-move-json-file", f, "--broker-list", "2,3",
               "--start-index", "0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "Current partition replica assignment",
        '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},'
        '{"topic":"foo","partition":1,"replicas":[2,3],"log_dirs":["any","any"]}]}',
        "",
        "Proposed partition reassignment configuration",
        '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[2,3],"log_dirs":["any","any"]},'
        '{"topic":"foo","partition":1,"replicas":[3,2],"log_dirs":["any","any"]}]}']
    assert snapshot(zk) == before


@pytest.mark.parametrize(("topics_json", "broker_list", "message"), [
    ({"topics": [{"topic": "nope"}]}, "1,2", "Topic not found: nope"),
    ({"topics": [{"topic": "foo"}, {"topic": "foo"}]}, "1,2", "List of topics to reassign contains duplicate"),
    ({"topics": [{"topic": "foo"}]}, "1,1", "Broker list contains duplicate entries: 1"),
    ({"topics": [{"topic": "foo"}]}, "3", "Replication factor: 2 larger than available brokers: 1."),
    ({"topics": [{"topic": "foo"}]}, "7,8", "Replication factor: 2 larger than available brokers: 0."),
    ("{oops", "1,2", "not valid JSON"),
])
def test_generate_errors(kactor, zk: KazooClient, brokers, tmp_path: Path, topics_json, broker_list,
                         message) -> None:
    _topic(kactor)
    before = snapshot(zk)
    f = _file(tmp_path, "move.json", topics_json)
    r = kactor("reassign-partitions", "--generate", "--topics-to-move-json-file", f, "--broker-list", broker_list)
    assert r.returncode == 1 and message in one_line(r.stderr)
    assert snapshot(zk) == before


def test_execute_writes_znode_and_refuses_a_second_one(kactor, zk: KazooClient, brokers, tmp_path: Path) -> None:
    _topic(kactor)
    f = _file(tmp_path, "plan.json", _plan(("foo", 1, [3, 1]), ("foo", 0, [2, 3])))
    r = kactor("reassign-partitions", "--execute", "--reassignment-json-file", f)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "Current partition replica assignment", "",
        '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any","any"]},'
        '{"topic":"foo","partition":1,"replicas":[2,3],"log_dirs":["any","any"]}]}', "",
        "Save this to use as the --reassignment-json-file option during rollback",
        "Successfully started partition reassignments for foo-0,foo-1"]
    assert zk.get("/admin/reassign_partitions")[0] == (
        b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[2,3]},'
        b'{"topic":"foo","partition":1,"replicas":[3,1]}]}')
    before = snapshot(zk)
    r = kactor("reassign-partitions", "--execute", "--reassignment-json-file", f)
    assert r.returncode == 1
    assert one_line(r.stderr) == "kactor reassign-partitions: There is an existing assignment running."
    assert snapshot(zk) == before


@pytest.mark.parametrize(("plan", "message"), [
    (_plan(("foo", 5, [1, 2])), "The proposed assignment contains non-existent partitions: foo-5"),
    (_plan(("nope", 0, [1, 2])), "The proposed assignment contains non-existent partitions: nope-0"),
    (_plan(("foo", 0, [1, 9])), "The proposed assignment contains non-existent brokerIDs: 9"),
    (_plan(("foo", 0, [1, 2, 1])), "Partition replica lists may not contain duplicate entries: foo-0 contains "
                                   "multiple entries for 1"),
    (_plan(("foo", 0, []),), "Partition replica list cannot be empty"),
    ({"version": 1, "partitions": []}, "Partition reassignment list cannot be empty"),
    (_plan(("foo", 0, [1]), ("foo", 0, [2])), "Partition reassignment contains duplicate topic partitions: foo-0"),
    ("garbage", "not valid JSON"),
])
def test_execute_refusals_leave_zookeeper_unchanged(kactor, zk: KazooClient, brokers, tmp_path: Path, plan,
                                                    message) -> None:
    _topic(kactor)
    before = snapshot(zk)
    r = kactor("reassign-partitions", "--execute", "--reassignment-json-file", _file(tmp_path, "p.json", plan))
    assert r.returncode == 1 and message in one_line(r.stderr)
    assert snapshot(zk) == before


def test_verify_reports_progress_then_completion(kactor, zk: KazooClient, brokers, tmp_path: Path) -> None:
    _topic(kactor)
    execute = _file(tmp_path, "plan.json", _plan(("foo", 0, [2, 3])))
    assert kactor("reassign-partitions", "--execute", "--reassignment-json-file", execute).returncode == 0
    f = _file(tmp_path, "verify.json", _plan(("foo", 0, [2, 3]), ("foo", 1, [2, 3])))
    r = kactor("reassign-partitions", "--verify", "--reassignment-json-file", f)
    assert r.returncode == 0
    assert r.stdout.splitlines() == ["Status of partition reassignment:",
                                     "Reassignment of partition foo-0 is still in progress.",
                                     "Reassignment of partition foo-1 is complete."]
    # what the controller does next (KIP-455): znode gone, topic znode holds adding/removing for foo-0
    zk.delete("/admin/reassign_partitions")
    zk.set("/brokers/topics/foo", b'{"version":2,"partitions":{"0":[2,3,1],"1":[2,3]},"adding_replicas":{"0":[3]},'
                                  b'"removing_replicas":{"0":[1]}}')
    assert "foo-0 is still in progress" in kactor("reassign-partitions", "--verify", "--reassignment-json-file",
                                                  f).stdout
    zk.set("/brokers/topics/foo", b'{"version":2,"partitions":{"0":[2,3],"1":[3,2]},"adding_replicas":{},'
                                  b'"removing_replicas":{}}')
    assert kactor("reassign-partitions", "--verify", "--reassignment-json-file", f).stdout.splitlines()[1:] == [
        "Reassignment of partition foo-0 is complete.",
        "There is no active reassignment of partition foo-1, but replica set is 3,2 rather than 2,3."]


def test_verify_wait_polls_until_done(kactor, zk: KazooClient, zk_chroot: str, brokers, tmp_path: Path) -> None:
    _topic(kactor)
    f = _file(tmp_path, "plan.json", _plan(("foo", 0, [2, 3])))
    assert kactor("reassign-partitions", "--execute", "--reassignment-json-file", f).returncode == 0
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "kactor", "reassign-partitions", "--zookeeper", zk_chroot,
                             "--verify", "--wait", "--reassignment-json-file", f, "--poll-interval", "0.2"],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # the controller's part, once the tool has seen the reassignment in progress (not after a fixed sleep:
        # a loaded machine may take seconds to start the tool)
        first = proc.stderr.readline()
        assert first.startswith("Waiting for reassignment: 0/1 partitions done"), first
        zk.set("/brokers/topics/foo", b'{"version":2,"partitions":{"0":[2,3],"1":[2,3]},"adding_replicas":{},'
                                      b'"removing_replicas":{}}')
        zk.delete("/admin/reassign_partitions")
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "Waiting for reassignment: 1/1 partitions done" in err
    assert out.splitlines()[-1] == "Reassignment of partition foo-0 is complete."


def test_verify_wait_times_out(kactor, zk: KazooClient, brokers, tmp_path: Path) -> None:
    _topic(kactor)
    f = _file(tmp_path, "plan.json", _plan(("foo", 0, [2, 3])))
    assert kactor("reassign-partitions", "--execute", "--reassignment-json-file", f).returncode == 0
    r = kactor("reassign-partitions", "--verify", "--wait", "--timeout", "1000", "--poll-interval", "0.2",
               "--reassignment-json-file", f)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1] == ("kactor reassign-partitions: Timed out after 1 s waiting for the "
                                                 "reassignment of 1 partition: foo-0")
    assert "Reassignment of partition foo-0 is still in progress." in r.stdout


@pytest.mark.parametrize("args", [
    ["--generate", "--broker-list", "1"],
    ["--execute"],
    ["--verify"],
    ["--execute", "--reassignment-json-file", "x", "--broker-list", "1"],
    ["--execute", "--reassignment-json-file", "x", "--wait"],
])
def test_reassign_usage_errors(kactor, args) -> None:
    r = kactor("reassign-partitions", *args)
    assert r.returncode == 2 and one_line(r.stderr).startswith("kactor reassign-partitions: error: ")


def test_two_actions_get_kafkas_message(kactor) -> None:
    r = kactor("reassign-partitions", "--execute", "--verify", "--reassignment-json-file", "x")
    assert (r.returncode, r.stderr) == (1, "kactor reassign-partitions: Command must include exactly one action: "
                                           "--generate, --execute, --verify, --cancel, --list\n")


def test_missing_file_is_one_line(kactor) -> None:
    r = kactor("reassign-partitions", "--execute", "--reassignment-json-file", "/nonexistent/plan.json")
    assert r.returncode == 1 and "Cannot read reassignment JSON file /nonexistent/plan.json" in one_line(r.stderr)


# -- preferred replica election ----------------------------------------------------------------------------------
def test_preferred_election_all_partitions(kactor, zk: KazooClient, brokers) -> None:
    _topic(kactor, "foo", 2)
    _topic(kactor, "bar", 1)
    r = kactor("preferred-replica-election")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "Created preferred replica election path with bar-0,foo-0,foo-1",
        "Successfully started preferred replica election for partitions Set(bar-0, foo-0, foo-1)"]
    assert zk.get("/admin/preferred_replica_election")[0] == (
        b'{"version":1,"partitions":[{"topic":"bar","partition":0},{"topic":"foo","partition":0},'
        b'{"topic":"foo","partition":1}]}')
    before = snapshot(zk)
    r = kactor("preferred-replica-election")
    assert r.returncode == 1
    assert one_line(r.stderr) == ("kactor preferred-replica-election: Preferred replica leader election currently "
                                  "in progress for bar-0,foo-0,foo-1. Aborting operation")
    assert snapshot(zk) == before


def test_preferred_election_from_file_skips_unknown(kactor, zk: KazooClient, brokers, tmp_path: Path) -> None:
    _topic(kactor, "foo", 2)
    f = _file(tmp_path, "e.json", {"partitions": [{"topic": "foo", "partition": 1},
                                                  {"topic": "foo", "partition": 7}]})
    r = kactor("preferred-replica-election", "--path-to-json-file", f)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == ("Skipping preferred replica leader election for partition foo-7 since it "
                                         "doesn't exist.")
    assert zk.get("/admin/preferred_replica_election")[0] == (
        b'{"version":1,"partitions":[{"topic":"foo","partition":1}]}')


@pytest.mark.parametrize(("content", "message"), [
    ('{"partitions":[{"topic":"foo","partition":0},{"topic":"foo","partition":0}]}',
     "Preferred replica election data contains duplicate partitions: foo-0"),
    ("{}", "Preferred replica election data is empty"),
    ('{"partitions":[{"topic":"nope","partition":0}]}', "none of the listed partitions exists (nope-0)"),
])
def test_preferred_election_refusals(kactor, zk: KazooClient, brokers, tmp_path: Path, content, message) -> None:
    _topic(kactor, "foo", 1)
    before = snapshot(zk)
    r = kactor("preferred-replica-election", "--path-to-json-file", _file(tmp_path, "e.json", content))
    assert r.returncode == 1 and message in one_line(r.stderr)
    assert snapshot(zk) == before


def test_preferred_election_unreachable() -> None:
    r = run_cli("preferred-replica-election", "--zookeeper", "127.0.0.1:1", "--connect-timeout", "0.5")
    assert r.returncode == 1 and "Timed out waiting for connection to ZooKeeper" in one_line(r.stderr)


def test_subprocess_helper_is_importable() -> None:
    assert subprocess  # the module-level helpers are used above
