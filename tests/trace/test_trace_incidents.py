"""Incidents found in small hand-built traces (kactor/trace/incidents.py, issue #30)."""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import count
from pathlib import Path
from typing import Any

from kactor.trace.incidents import ProcessRun, Rec, detect, find_incidents, incident_line, report_lines

T0 = 1_800_000_000_000.0
_seq = count(1)


def tpj(tp: str) -> dict[str, Any]:
    topic, p = tp.rsplit("-", 1)
    return {"@": "TopicPartition", "topic": topic, "partition": int(p)}


def rec(process: str, ts: float, sender: str, receiver: str, payload: dict[str, Any]) -> Rec:
    return Rec(process, next(_seq), T0 + ts, sender, receiver, payload["@"], payload)


def state_write(process: str, ts: float, writer: str, request_id: int, tp: str, leader: int, isr: list[int],
                code: str = "OK") -> list[Rec]:
    """A state-znode SetData and ZooKeeper's answer 1 ms later."""
    topic, p = tp.rsplit("-", 1)
    data = json.dumps({"controller_epoch": 1, "leader": leader, "version": 1, "leader_epoch": 1, "isr": isr})
    op = {"@": "SetData", "path": f"/brokers/topics/{topic}/partitions/{p}/state", "data": data, "version": 0}
    ask = {"@": "ZkRequest", "request_id": request_id, "batch": {"@": "ZkBatch", "ops": [op], "fence_version": -1},
           "reply_to": writer}
    answer = {"@": "ZkResponse", "request_id": request_id, "results": [{"@": "ZkOpResult", "code": code}]}
    return [rec(process, ts, writer, "zk", ask), rec(process, ts + 1, "edge:zk", writer, answer)]


def leader_and_isr(process: str, ts: float, states: dict[str, tuple[int, list[int], list[int]]]) -> Rec:
    body = {"@": "LeaderAndIsrRequest", "controller_id": 0, "controller_epoch": 1, "broker_epoch": 1,
            "partition_states": [{"@": "LeaderAndIsrPartitionState", "topic_partition": tpj(tp), "leader": leader,
                                  "isr": isr, "replicas": replicas, "adding_replicas": []}
                                 for tp, (leader, isr, replicas) in states.items()], "live_leaders": []}
    return rec(process, ts, "edge:net", "replica-manager",
               {"@": "NetRequest", "connection_id": 1, "request_id": next(_seq), "body": body, "reply_expected": True})


def election(process: str, ts: float, tp: str, leader: int, strategy: str = "OfflinePartition") -> Rec:
    return rec(process, ts, "controller", "state-change-log", {
        "@": "StateChangeBatch", "controller_epoch": 1, "partition_changes": [], "replica_changes": [],
        "elections": [{"@": "LeaderElection", "topic_partition": tpj(tp), "strategy": strategy, "leader": leader,
                       "leader_epoch": 1, "isr": [leader], "unclean": False}]})


def run(process: str, broker: int, first: float, last: float, shutdown: float | None = None) -> ProcessRun:
    return ProcessRun(process, broker, T0 + first, T0 + last, None if shutdown is None else T0 + shutdown)


def three_brokers(killed_at: float = 5_000, restarted_at: float | None = None) -> list[ProcessRun]:
    runs = [run("broker-0", 0, 0, 20_000, shutdown=19_000), run("broker-2", 2, 0, 20_000, shutdown=19_000),
            run("broker-1", 1, 0, killed_at)]
    if restarted_at is not None:
        runs.append(run("broker-1.1", 1, restarted_at, 20_000, shutdown=19_000))
    return runs


def kinds(found: Any, kind: str) -> list[Any]:
    return [i for i in found.incidents if i.kind == kind]


def test_a_killed_leader_leaves_its_partitions_offline_until_the_election() -> None:
    recs = [leader_and_isr("broker-0", 100, {"t-0": (1, [1, 0, 2], [1, 0, 2]), "t-1": (0, [0, 1, 2], [0, 1, 2])}),
            *state_write("broker-0", 50, "controller", 1, "t-0", 1, [1, 0, 2]),
            *state_write("broker-0", 60, "controller", 2, "t-1", 0, [0, 1, 2]),
            rec("broker-0", 9_000, "edge:zk", "zk", {"@": "ZkWatchEvent", "path": "/brokers/ids/1", "kind": "DELETED"}),
            election("broker-0", 9_010, "t-0", 0),
            *state_write("broker-0", 9_010, "controller", 3, "t-0", 0, [0, 2]),
            *state_write("broker-0", 9_020, "controller", 4, "t-1", 0, [0, 2])]
    found = detect(sorted(recs, key=lambda r: r.ts), three_brokers())

    (down,) = kinds(found, "broker_down")
    assert (down.subject, down.start_ms, down.end_ms) == ("broker 1", T0 + 5_000, None)
    assert "killed" in down.detail and "registration vanished after 4.00 s" in down.detail
    (off,) = kinds(found, "partition_offline")
    assert off.partitions == ("t-0",)
    assert (off.start_ms, off.end_ms) == (T0 + 5_000, T0 + 9_011)  # the kill → ZooKeeper's answer to the write
    assert "its leader, broker 1, was killed" in off.detail
    assert "OfflinePartition election → broker 0" in off.detail
    (shrink,) = kinds(found, "isr_shrink")
    assert shrink.partitions == ("t-0", "t-1") and "broker 1 removed from the ISR by the controller (offline)" \
        in shrink.detail
    (under,) = kinds(found, "under_replicated")
    assert under.partitions == ("t-0", "t-1") and under.start_ms == T0 + 9_011 and under.end_ms is None
    assert "broker 1 not in the ISR" in under.detail


def test_an_under_replicated_interval_runs_from_the_shrink_to_the_expansion() -> None:
    recs = [leader_and_isr("broker-1", 10, {"t-0": (0, [0, 1, 2], [0, 1, 2])}),
            *state_write("broker-0", 1_000, "partition-3", 7, "t-0", 0, [0, 1]),
            *state_write("broker-0", 4_000, "partition-3", 8, "t-0", 0, [0, 1, 2])]
    runs = [run("broker-0", 0, 0, 6_000), run("broker-1", 1, 0, 6_000), run("broker-2", 2, 0, 6_000)]
    found = detect(sorted(recs, key=lambda r: r.ts), runs)
    (under,) = kinds(found, "under_replicated")
    assert (under.start_ms, under.end_ms, under.duration_ms) == (T0 + 1_001, T0 + 4_001, 3_000.0)
    assert under.partitions == ("t-0",)
    (shrink,) = kinds(found, "isr_shrink")
    assert shrink.detail == ("broker 2 removed from the ISR by the leader, broker 0 (out of sync longer than "
                             "replica.lag.time.max.ms)")
    (expand,) = kinds(found, "isr_expand")
    assert expand.start_ms == T0 + 4_001 and "broker 2 back in the ISR" in expand.detail
    assert kinds(found, "partition_offline") == [] and kinds(found, "broker_down") == []


def test_a_refused_state_write_changes_nothing() -> None:
    recs = [leader_and_isr("broker-1", 10, {"t-0": (0, [0, 1, 2], [0, 1, 2])}),
            *state_write("broker-0", 1_000, "partition-3", 7, "t-0", 0, [0, 1], code="BADVERSION")]
    runs = [run("broker-0", 0, 0, 6_000), run("broker-1", 1, 0, 6_000)]
    found = detect(sorted(recs, key=lambda r: r.ts), runs)
    assert found.incidents == ()


def controller(process: str, ts: float, broker: int, epoch: int, active: bool = True) -> Rec:
    return rec(process, ts, "controller", "state-change-log",
               {"@": "ControllerChanged", "broker_id": broker, "controller_epoch": epoch if active else -1,
                "active": active})


def test_controller_changes_say_why() -> None:
    recs = [controller("broker-1", 100, 1, 1),
            controller("broker-0", 5_500, 0, 2),  # broker 1 was killed at 5 s
            rec("broker-2", 7_000, "edge:zk", "zk", {"@": "ZkWatchEvent", "path": "/controller", "kind": "DELETED"}),
            controller("broker-0", 7_010, 0, 2, active=False),
            controller("broker-2", 7_050, 2, 3)]
    found = detect(sorted(recs, key=lambda r: r.ts), three_brokers())
    first, failover, deleted = kinds(found, "controller_change")
    assert first.detail == "became the controller (epoch 1): the first controller election of this trace"
    assert (failover.subject, failover.start_ms, failover.end_ms) == ("broker 0", T0 + 5_000, T0 + 5_500)
    assert failover.detail == ("became the controller (epoch 2): the previous controller, broker 1 (epoch 1), was "
                               "killed (no shutdown in its trace)")
    assert (deleted.subject, deleted.start_ms, deleted.end_ms) == ("broker 2", T0 + 7_010, T0 + 7_050)
    assert deleted.detail.endswith("broker 0 (epoch 2), resigned after /controller was deleted")


def produce(process: str, ts: float, request_id: int, tp: str) -> Rec:
    body = {"@": "ProduceRequest", "acks": -1, "timeout_ms": 30000,
            "partitions": [{"@": "ProducePartition", "tp": tpj(tp), "records": {"@b64": ""}}]}
    return rec(process, ts, "edge:net", "replica-manager",
               {"@": "NetRequest", "connection_id": 4, "request_id": request_id, "body": body, "reply_expected": True})


def produced(process: str, ts: float, request_id: int, tp: str, error: str = "NONE") -> Rec:
    body = {"@": "ProduceResponse", "partitions": [
        {"@": "ProducePartitionResponse", "tp": tpj(tp), "error": {"@e": "Errors", "v": error}, "base_offset": 0}]}
    return rec(process, ts, "replica-manager", "net",
               {"@": "NetReply", "connection_id": 4, "request_id": request_id, "body": body})


def test_a_produce_answered_late_is_a_stall_with_what_held_it_up() -> None:
    recs = [leader_and_isr("broker-0", 10, {"t-0": (0, [0, 1, 2], [0, 1, 2])}),
            *state_write("broker-0", 20, "controller", 1, "t-0", 0, [0, 1, 2]),
            produce("broker-0", 4_000, 1, "t-0"), produced("broker-0", 4_020, 1, "t-0"),
            produce("broker-0", 5_200, 2, "t-0"), produce("broker-0", 5_300, 3, "t-0"),
            *state_write("broker-0", 8_000, "partition-0", 9, "t-0", 0, [0, 2]),
            produced("broker-0", 8_010, 2, "t-0"), produced("broker-0", 8_020, 3, "t-0")]
    found = detect(sorted(recs, key=lambda r: r.ts), three_brokers())
    (stall,) = kinds(found, "produce_stall")
    assert (stall.subject, stall.start_ms, stall.end_ms, stall.partitions) == \
        ("broker 0", T0 + 5_200, T0 + 8_020, ("t-0",))
    assert stall.detail.startswith("2 produce requests (acks=-1) answered after up to 2.81 s (> 1 s)")
    assert "isr_shrink 1 partition at +2.80 s" in stall.detail
    assert "broker_down broker 1 at -0.20 s" in stall.detail
    assert kinds(detect(sorted(recs, key=lambda r: r.ts), three_brokers(), late_produce_ms=5_000),
                 "produce_stall") == []


def test_errors_are_counted_once_per_answer_expected_apart() -> None:
    stale = {"@": "LeaderAndIsrResponse", "error": {"@e": "Errors", "v": "NONE"}, "partition_errors": [
        {"@": "PartitionError", "topic_partition": tpj(f"t-{p}"), "error": {"@e": "Errors", "v":
                                                                            "STALE_CONTROLLER_EPOCH"}}
        for p in range(3)]}
    recs = [rec("broker-2", 100, "replica-manager", "net",
                {"@": "NetReply", "connection_id": 1, "request_id": 1, "body": stale}),
            rec("broker-2", 101, "edge:net", "channel-2",  # the same answer at the controller: a hop, not counted
                {"@": "NetResponse", "request_id": 1, "body": stale}),
            produced("broker-2", 200, 5, "t-0", "UNKNOWN_SERVER_ERROR")]
    found = detect(recs, [run("broker-2", 2, 0, 1_000)])
    attention, expected = found.errors
    assert (attention.error, attention.request, attention.requests, attention.partitions, attention.expected) == \
        ("UNKNOWN_SERVER_ERROR", "Produce", 1, 1, False)
    assert attention.meaning == "the server experienced an unexpected error when processing the request"
    assert (expected.error, expected.request, expected.requests, expected.partitions, expected.expected) == \
        ("STALE_CONTROLLER_EPOCH", "LeaderAndIsr", 1, 3, True)
    assert "controller" in expected.meaning
    lines = list(report_lines(found))
    assert lines[1].startswith("Errors that need attention") and "UNKNOWN_SERVER_ERROR" in lines[2]
    assert lines[3].startswith("Expected protocol answers") and "STALE_CONTROLLER_EPOCH" in lines[4]


def test_a_deletion_and_a_reassignment_with_their_durations_and_no_offline_noise() -> None:
    def progress(ts: float, typ: str, **fields: Any) -> Rec:
        return rec("broker-0", ts, "controller", "state-change-log", {"@": typ, **fields})

    recs = [leader_and_isr("broker-0", 10, {"d-0": (0, [0, 1], [0, 1])}),
            *state_write("broker-0", 20, "controller", 1, "d-0", 0, [0, 1]),
            progress(1_000, "ReassignmentProgress", topic_partition=tpj("d-0"), phase="Started",
                     target_replicas=[1, 2], reason=""),
            progress(2_500, "ReassignmentProgress", topic_partition=tpj("d-0"), phase="Completed",
                     target_replicas=[1, 2], reason=""),
            progress(3_000, "TopicDeletionProgress", topic="d", phase="Queued", reason=""),
            progress(3_010, "TopicDeletionProgress", topic="d", phase="Started", reason=""),
            *state_write("broker-0", 3_020, "controller", 2, "d-0", -1, [1]),
            progress(3_400, "TopicDeletionProgress", topic="d", phase="Completed", reason="")]
    found = detect(sorted(recs, key=lambda r: r.ts), [run("broker-0", 0, 0, 6_000)])
    assert [(i.kind, i.subject, i.duration_ms) for i in found.incidents] == \
        [("reassignment", "d-0", 1_500.0), ("topic_deletion", "topic d", 400.0)]
    assert found.incidents[0].detail == "completed: replicas → [1, 2]"


def test_the_clusters_own_stop_at_the_end_is_one_incident() -> None:
    recs = [leader_and_isr("broker-0", 10, {"t-0": (0, [0, 1], [0, 1])}),
            *state_write("broker-0", 20, "controller", 1, "t-0", 0, [0, 1]),
            *state_write("broker-0", 5_500, "controller", 2, "t-0", 0, [0])]  # broker 1's controlled shutdown
    runs = [run("broker-1", 1, 0, 5_600, shutdown=5_000), run("broker-0", 0, 0, 9_000, shutdown=8_000)]
    found = detect(sorted(recs, key=lambda r: r.ts), runs)
    (stop,) = found.incidents
    assert (stop.kind, stop.subject, stop.start_ms, stop.end_ms) == ("cluster_stop", "2 brokers", T0 + 5_000,
                                                                     T0 + 9_000)
    # a broker killed earlier and never restarted does not hide the stop; one killed during it does
    killed = run("broker-2", 2, 0, 3_000)
    assert [i.kind for i in detect(sorted(recs, key=lambda r: r.ts), [*runs, killed]).incidents] == \
        ["broker_down", "cluster_stop"]
    # a broker stopping in order during the stop leaves its partitions without a leader: not an incident either
    leader_stops = [run("broker-1", 1, 0, 7_000, shutdown=5_000), run("broker-0", 0, 0, 9_000, shutdown=8_000)]
    lead = [leader_and_isr("broker-0", 10, {"t-1": (1, [1], [1])}), *state_write("broker-0", 30, "controller", 3,
                                                                                   "t-1", 1, [1])]
    assert [i.kind for i in detect(sorted(recs + lead, key=lambda r: r.ts), leader_stops).incidents] == \
        ["cluster_stop"]
    crashed = run("broker-2", 2, 0, 9_000)
    assert "cluster_stop" not in [i.kind for i in detect(sorted(recs, key=lambda r: r.ts), [*runs, crashed]).incidents]


def join(process: str, ts: float, rid: int, member: str) -> Rec:
    body = {"@": "JoinGroupRequest", "group_id": "g", "session_timeout_ms": 10000, "member_id": member}
    return rec(process, ts, "edge:net", "group-coordinator",
               {"@": "NetRequest", "connection_id": rid, "request_id": rid, "body": body, "reply_expected": True})


def joined(process: str, ts: float, rid: int, generation: int, members: list[str], leader: bool = True) -> Rec:
    body = {"@": "JoinGroupResponse", "error": {"@e": "Errors", "v": "NONE"}, "generation_id": generation,
            "members": [{"@": "JoinGroupMember", "member_id": m} for m in members] if leader else []}
    return rec(process, ts, "group-coordinator", "net",
               {"@": "NetReply", "connection_id": rid, "request_id": rid, "body": body})


A = "a-0123456789abcdef0123456789abcdef0123"  # client id "a" and a 36-character UUID's length
B = "b-0123456789abcdef0123456789abcdef0123"


def test_group_rebalances_with_their_causes() -> None:
    leave = {"@": "LeaveGroupRequest", "group_id": "g", "members": [{"@": "MemberIdentity", "member_id": B}]}
    recs = [join("broker-0", 1_000, 1, ""), joined("broker-0", 1_050, 1, 1, [A]),
            join("broker-0", 2_000, 2, ""), join("broker-0", 2_100, 3, A),
            joined("broker-0", 2_600, 3, 2, [A, B]), joined("broker-0", 2_600, 2, 2, [], leader=False),
            rec("broker-0", 4_000, "edge:net", "group-coordinator",
                {"@": "NetRequest", "connection_id": 5, "request_id": 5, "body": leave, "reply_expected": True}),
            join("broker-0", 4_010, 6, A), joined("broker-0", 4_400, 6, 3, [A]),
            join("broker-2", 9_000, 7, A), joined("broker-2", 9_300, 7, 4, [A])]
    found = detect(recs, [run("broker-0", 0, 0, 10_000), run("broker-2", 2, 0, 10_000)])
    assert [(i.subject, i.start_ms - T0, i.end_ms - T0, i.detail) for i in kinds(found, "group_rebalance")] == [
        ("group g", 1_000, 1_050, "generation 1, 1 member: the group formed: 1 member"),
        ("group g", 2_000, 2_600, "generation 2, 2 members: joined: b-01234567"),
        ("group g", 4_010, 4_400, "generation 3, 1 member: left (LeaveGroup): b-01234567"),
        ("group g", 9_000, 9_300, "generation 4, 1 member: its coordinator moved to broker 2")]


def write_trace(folder: Path, name: str, broker: int, recs: list[Rec]) -> None:
    lines = [json.dumps({"trace_version": 4, "process": name.split(".")[0], "broker_id": broker})]
    for r in recs:
        lines.append(json.dumps({"seq": r.seq, "ts": r.ts, "sender": r.sender, "receiver": r.receiver,
                                 "type": r.type, "payload": r.payload, "cause": None}, separators=(",", ":")))
    # a record the detectors skip, and one more at the end of the process
    lines.append(json.dumps({"seq": 999_999, "ts": recs[-1].ts + 1, "sender": "edge:timer", "receiver": "x",
                             "type": "TimerFired", "payload": {"@": "TimerFired"}, "cause": None},
                            separators=(",", ":")))
    (folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n")


def test_the_reader_and_the_command_find_the_same(tmp_path: Path) -> None:
    b0 = [leader_and_isr("broker-0", 10, {"t-0": (1, [1, 0], [1, 0])}),
          *state_write("broker-0", 20, "controller", 1, "t-0", 1, [1, 0]),
          election("broker-0", 3_000, "t-0", 0),
          *state_write("broker-0", 3_000, "controller", 2, "t-0", 0, [0]),
          rec("broker-0", 5_000, "edge:timer", "x", {"@": "TimerFired"})]
    b1 = [rec("broker-1", 5, "edge:process", "kafka-server", {"@": "BrokerStartup"}),
          rec("broker-1", 1_000, "edge:timer", "x", {"@": "TimerFired"})]
    write_trace(tmp_path, "broker-0", 0, b0)
    write_trace(tmp_path, "broker-1", 1, b1)
    found = find_incidents([str(tmp_path)])
    assert [(i.kind, i.partitions, i.start_ms, i.end_ms) for i in found.incidents] == [
        ("broker_down", (), T0 + 1_001, None),
        ("partition_offline", ("t-0",), T0 + 1_001, T0 + 3_001),
        ("isr_shrink", ("t-0",), T0 + 3_001, T0 + 3_001),
        ("under_replicated", ("t-0",), T0 + 3_001, None)]
    proc = subprocess.run([sys.executable, "-m", "kactor", "trace", "incidents", str(tmp_path)],
                          capture_output=True, text=True, check=True)
    assert [line.strip() for line in proc.stdout.splitlines()[1:5]] == \
        [incident_line(i, found.first_ms) for i in found.incidents]
    assert "partition_offline 1 partition [t-0]: its leader, broker 1, was killed" in proc.stdout
    as_json = json.loads(subprocess.run([sys.executable, "-m", "kactor", "trace", "incidents", str(tmp_path), "--json"],
                                        capture_output=True, text=True, check=True).stdout)
    assert [(i["kind"], i["start_ts"], i["duration_ms"], i["partitions"]) for i in as_json["incidents"]] == [
        ("broker_down", T0 + 1_001, None, ""), ("partition_offline", T0 + 1_001, 2_000.0, "t-0"),
        ("isr_shrink", T0 + 3_001, 0.0, "t-0"), ("under_replicated", T0 + 3_001, None, "t-0")]
    assert as_json["errors"] == []
    bad = subprocess.run([sys.executable, "-m", "kactor", "trace", "incidents", str(tmp_path / "nope")],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "no such trace folder" in bad.stderr
