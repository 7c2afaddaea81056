"""kactor reassign-partitions --bootstrap-server without a cluster: ReassignPartitionsCommand's option checks and
messages (exit 1), calculateMoveMap and the throttles it gives, --list's lines, and --cancel / --execute against a
stand-in for the cluster's answers."""

from __future__ import annotations

import json

import pytest

from kactor.cli import main
from kactor.cli.reassign_kafka import (
    CANNOT_EXECUTE_BECAUSE_OF_EXISTING,
    RUN_VERIFY_PERIODICALLY,
    Ongoing,
    TerseFailureError,
    calculate_move_map,
    cancel,
    execute,
    follower_throttles,
    leader_throttles,
    reassigning_brokers,
    reassignments_to_lines,
)
from messages.common import TopicPartition
from zk_bridge.server import free_port

B = f"127.0.0.1:{free_port()}"
TP0, TP1 = TopicPartition("t", 0), TopicPartition("t", 1)


@pytest.mark.parametrize(("argv", "message"), [
    ([], "Command must include exactly one action: --generate, --execute, --verify, --cancel, --list"),
    (["--list", "--cancel"], "Command must include exactly one action: --generate, --execute, --verify, --cancel, "
                             "--list"),
    (["--execute"], 'Missing required argument "[reassignment-json-file]"'),
    (["--generate", "--topics-to-move-json-file", "f"], 'Missing required argument "[broker-list]"'),
    (["--verify", "--reassignment-json-file", "f", "--throttle", "5"],
     'Option "[throttle]" can\'t be used with action "[verify]"'),
    (["--list", "--additional"], 'Option "[additional]" can\'t be used with action "[list]"'),
    (["--execute", "--reassignment-json-file", "f", "--preserve-throttles"],
     'Option "[preserve-throttles]" can\'t be used with action "[execute]"'),
])
def test_bad_options_get_kafkas_message(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reassign-partitions", "--bootstrap-server", B, *argv]) == 1
    assert capsys.readouterr().err == f"kactor reassign-partitions: {message}\n"


@pytest.mark.parametrize("option", ["--list", "--cancel"])
def test_list_and_cancel_need_the_bootstrap_server(option: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reassign-partitions", "--zookeeper", "127.0.0.1:1", option]) == 1
    assert capsys.readouterr().err == (f'kactor reassign-partitions: You must specify --bootstrap-server when using '
                                       f'"[{option[2:]}]"\n')


def test_throttles_need_the_bootstrap_server(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reassign-partitions", "--zookeeper", "127.0.0.1:1", "--execute", "--reassignment-json-file", "f",
                 "--throttle", "100"]) == 1
    assert capsys.readouterr().err == ("kactor reassign-partitions: --throttle needs --bootstrap-server: kactor's "
                                       "--zookeeper path writes and clears no replication throttles\n")


def test_the_move_map_and_its_throttles() -> None:
    # t-0 moves from 0,1 to 1,2; t-1 (already moving from 2 to 0,2) is not in the new plan
    moves = calculate_move_map({TP1: Ongoing((0, 2), adding=(0,), removing=())}, {TP0: [1, 2]},
                               {TP0: [0, 1], TP1: [0, 2]})
    assert moves == {"t": {0: ({0, 1}, {2}), 1: ({0, 2}, set())}}
    assert leader_throttles(moves) == {"t": "0:0,0:1,1:0,1:2"}
    assert follower_throttles(moves) == {"t": "0:2"}
    assert reassigning_brokers(moves) == {0, 1, 2}


def test_list_lines() -> None:
    assert reassignments_to_lines({}) == ["No partition reassignments found."]
    assert reassignments_to_lines({TP1: Ongoing((2, 0, 1), adding=(2,), removing=(1,)), TP0: Ongoing((0, 1))}) == [
        "Current partition reassignments:", "t-0: replicas: 0,1.", "t-1: replicas: 2,0,1. adding: 2. removing: 1."]


class FakeCluster:
    """The answers of a cluster with one ongoing reassignment (t-0: 0,1 → 1,2) and brokers 0, 1, 2."""

    def __init__(self) -> None:
        self.altered: list[dict] = []
        self.configs: list[tuple[str, dict]] = []

    def list_reassignments(self, partitions=None):
        return {TP0: Ongoing((1, 2, 0), adding=(2,), removing=(0,))}

    def alter(self, targets):
        self.altered.append(dict(targets))
        return {}

    def brokers(self):
        return {0: None, 1: None, 2: None}

    def assignment(self, topics):
        return {TP0: [1, 2, 0], TP1: [0, 1]}

    def alter_configs(self, kind, changes):
        self.configs.append((kind, dict(changes)))


def test_cancel_sends_null_replicas_for_the_moving_partitions_and_clears_the_throttles() -> None:
    cluster, out = FakeCluster(), []
    plan = json.dumps({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2]},
                                                    {"topic": "t", "partition": 1, "replicas": [0, 1]}]})
    cancel(cluster, out.append, plan, preserve_throttles=False)  # type: ignore[arg-type]
    assert cluster.altered == [{TP0: None}]
    assert out == ["Successfully cancelled partition reassignment for: t-0",
                   "None of the specified partition moves are active.",
                   "Clearing broker-level throttles on brokers 0,1,2",
                   "Clearing topic-level throttles on topic t"]
    assert cluster.configs[0][0] == "BROKER" and cluster.configs[0][1]["2"] == [
        ("leader.replication.throttled.rate", None), ("follower.replication.throttled.rate", None),
        ("replica.alter.log.dirs.io.max.bytes.per.second", None)]
    assert cluster.configs[1] == ("TOPIC", {"t": [("leader.replication.throttled.replicas", None),
                                                  ("follower.replication.throttled.replicas", None)]})


def test_execute_refuses_while_another_reassignment_runs_unless_additional() -> None:
    cluster, out = FakeCluster(), []
    plan = json.dumps({"version": 1, "partitions": [{"topic": "t", "partition": 1, "replicas": [1, 2]}]})
    with pytest.raises(TerseFailureError) as e:
        execute(cluster, out.append, plan, additional=False, throttle=-1)  # type: ignore[arg-type]
    assert str(e.value) == CANNOT_EXECUTE_BECAUSE_OF_EXISTING and cluster.altered == []
    execute(cluster, out.append, plan, additional=True, throttle=7)  # type: ignore[arg-type]
    assert cluster.altered == [{TP1: [1, 2]}]
    assert out[-2:] == ["The inter-broker throttle limit was set to 7 B/s",
                        "Successfully started partition reassignment for t-1"]
    # the ongoing t-0 counts too: its sources lead, its adding replica 2 follows
    assert cluster.configs[0] == ("TOPIC", {"t": [("leader.replication.throttled.replicas", "0:0,0:1,0:2,1:0,1:1"),
                                                  ("follower.replication.throttled.replicas", "1:2")]})


class MovingCluster(FakeCluster):
    """FakeCluster whose brokers answer AlterReplicaLogDirs from ``answers`` (one dict per call, replica -> code)
    and DescribeLogDirs from ``found``."""

    def __init__(self, answers, found=None) -> None:
        super().__init__()
        self.answers = list(answers)
        self.log_dir_calls: list[dict] = []
        self.found = found or {}

    def list_reassignments(self, partitions=None):
        return {}

    def alter_replica_log_dirs(self, moves):
        self.log_dir_calls.append(dict(moves))
        return self.answers.pop(0)

    def describe_replica_log_dirs(self, replicas):
        return self.found

    def metadata(self):
        from types import SimpleNamespace
        return SimpleNamespace(topics={"t": SimpleNamespace(error=None, partitions={
            0: SimpleNamespace(replicas=[1, 2]), 1: SimpleNamespace(replicas=[0, 1])})})


PLAN_WITH_DIRS = json.dumps({"version": 1, "partitions": [
    {"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["/b1/d2", "any"]},
    {"topic": "t", "partition": 1, "replicas": [0, 1], "log_dirs": ["/b0/d1", "/b1/d1"]}]})


def test_execute_starts_the_log_dir_moves_retrying_replica_not_available() -> None:
    from kactor.cli.reassign_kafka import execute_moves

    cluster = MovingCluster([{(TP0, 1): 0, (TP1, 0): 9, (TP1, 1): 0}, {(TP1, 0): 0}])
    out: list[str] = []
    execute(cluster, out.append, PLAN_WITH_DIRS, additional=False, throttle=-1)  # type: ignore[arg-type]
    assert cluster.altered == [{TP0: [1, 2], TP1: [0, 1]}]
    assert cluster.log_dir_calls == [{(TP0, 1): "/b1/d2", (TP1, 0): "/b0/d1", (TP1, 1): "/b1/d1"},
                                     {(TP1, 0): "/b0/d1"}]
    assert out[-3:] == ["Successfully started partition reassignments for t-0,t-1",
                        "Successfully started log directory moves for: t-0-1,t-1-1",
                        "Successfully started log directory move for: t-1-0"]
    # a replica that never arrives times out; another error fails at once
    now = [0.0]
    cluster = MovingCluster([{(TP1, 0): 9}] * 100)
    with pytest.raises(TerseFailureError) as e:
        execute_moves(cluster, out.append, {(TP1, 0): "/d"}, 1.0,  # type: ignore[arg-type]
                      sleep=lambda s: now.__setitem__(0, now[0] + s), clock=lambda: now[0])
    assert str(e.value) == "Timed out before log directory move could be started for: t-1-0"
    assert 10 <= len(cluster.log_dir_calls) <= 12  # every 100 ms for 1 s
    from zk_bridge.admin import AdminCommandFailedException
    with pytest.raises(AdminCommandFailedException) as failed:
        execute_moves(MovingCluster([{(TP1, 0): 57}]), out.append, {(TP1, 0): "/x"}, 1.0)  # type: ignore[arg-type]
    assert str(failed.value).startswith("Failed to alter dir for t-1-0: ")


def test_verify_reports_each_log_dir_move() -> None:
    from kactor.cli.reassign_kafka import verify

    found = {(TP0, 1): ("/b1/d1", "/b1/d2"), (TP1, 0): ("/b0/d1", None), (TP1, 1): ("/b1/d2", None)}
    cluster, out = MovingCluster([], found), []
    assert verify(cluster, out.append, PLAN_WITH_DIRS, preserve_throttles=False) is False  # type: ignore[arg-type]
    assert out == ["Status of partition reassignment:\n"
                   "Reassignment of partition t-0 is complete.\n"
                   "Reassignment of partition t-1 is complete.",
                   "Reassignment of replica t-0-1 is still in progress.\n"
                   "Reassignment of replica t-1-0 completed successfully.\n"
                   "Partition t-1 on broker 1 is not being moved from log dir /b1/d2 to /b1/d1."]
    assert cluster.configs == []  # a move still runs: the throttles stay
    found[(TP0, 1)] = ("/b1/d2", None)
    out.clear()
    assert verify(cluster, out.append, PLAN_WITH_DIRS, preserve_throttles=False) is True  # type: ignore[arg-type]
    assert "Reassignment of replica t-0-1 completed successfully." in out[1]


def test_log_dirs_over_zookeeper_need_the_bootstrap_server(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(PLAN_WITH_DIRS)
    assert main(["reassign-partitions", "--zookeeper", "127.0.0.1:1", "--execute", "--reassignment-json-file",
                 str(plan)]) == 1
    assert "bootstrap-server needs to be provided when replica reassignments are present." in capsys.readouterr().err


def test_execute_sets_the_log_dir_throttle_on_the_brokers_with_a_log_dir_move() -> None:
    """--replica-alter-log-dirs-throttle (2.6's modifyLogDirThrottle): replica.alter.log.dirs.io.max.bytes.per.second
    on every broker of a replica whose log_dirs entry is not "any" (calculateMovingBrokers), with the verify warning;
    the inter-broker throttles stay untouched without --throttle."""
    cluster = MovingCluster([{(TP0, 1): 0, (TP1, 0): 0, (TP1, 1): 0}])
    out: list[str] = []
    execute(cluster, out.append, PLAN_WITH_DIRS, additional=False, throttle=-1,  # type: ignore[arg-type]
            log_dir_throttle=2048)
    assert cluster.configs == [("BROKER", {"0": [("replica.alter.log.dirs.io.max.bytes.per.second", "2048")],
                                           "1": [("replica.alter.log.dirs.io.max.bytes.per.second", "2048")]})]
    assert RUN_VERIFY_PERIODICALLY in out
    assert "The replica-alter-dir throttle limit was set to 2048 B/s" in out
    assert not any(line.startswith("The inter-broker throttle") for line in out)


@pytest.mark.parametrize(("timeout", "seconds"), [(["--timeout", "2500"], 2.5), ([], 10.0)])
def test_the_timeout_is_in_ms_as_kafkas(timeout: list[str], seconds: float, tmp_path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """ReassignPartitionsCommand's --timeout: "Maximum time in ms to wait for log directory replica assignment to
    begin." (default 10000): --execute waits for its log-dir moves that long."""
    from kactor import kafka_clients
    from kactor.cli import reassign_kafka

    waited: list[float] = []
    monkeypatch.setattr(kafka_clients, "admin_client", lambda *a, **k: object())
    monkeypatch.setattr(kafka_clients, "cluster_metadata", lambda *a, **k: None)
    monkeypatch.setattr(reassign_kafka, "execute", lambda cluster, out, text, additional, throttle, move_timeout_s,
                        log_dir_throttle: waited.append(move_timeout_s))
    plan = tmp_path / "p.json"
    plan.write_text(PLAN_WITH_DIRS)
    assert main(["reassign-partitions", "--bootstrap-server", B, "--execute", "--reassignment-json-file", str(plan),
                 *timeout]) == 0
    assert waited == [seconds]


def test_verify_wait_takes_its_timeout_in_ms_too(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    from contextlib import contextmanager

    from kactor.admin import reassign
    from kactor.cli import cmd_reassign_partitions

    waited: list[float] = []

    @contextmanager
    def no_zookeeper(args: object):  # type: ignore[no-untyped-def]
        yield None

    monkeypatch.setattr(cmd_reassign_partitions, "admin_client", no_zookeeper)
    monkeypatch.setattr(reassign, "verify_assignment", lambda admin, out, text, **kw: waited.append(kw["timeout_s"]))
    plan = tmp_path / "p.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1]}]}))
    for extra, seconds in ((["--timeout", "1500"], 1.5), ([], reassign.DEFAULT_WAIT_TIMEOUT_S)):
        assert main(["reassign-partitions", "--zookeeper", "127.0.0.1:1", "--verify", "--wait",
                     "--reassignment-json-file", str(plan), *extra]) == 0
        assert waited.pop() == seconds
