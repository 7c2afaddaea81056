"""kactor reassign-partitions --bootstrap-server without a cluster: ReassignPartitionsCommand's option checks and
messages (exit 1), calculateMoveMap and the throttles it gives, --list's lines, and --cancel / --execute against a
stand-in for the cluster's answers."""

from __future__ import annotations

import json

import pytest

from kactor.cli import main
from kactor.cli.reassign_kafka import (
    CANNOT_EXECUTE_BECAUSE_OF_EXISTING,
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
