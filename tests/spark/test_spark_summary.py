"""Exact aggregates of the handcrafted trace (tests/spark/spark_support.py)."""

from __future__ import annotations

import csv
import json
import os
from typing import Any

import pytest
from spark_support import T0

from messages.codec import TRACE_VERSION

pytestmark = pytest.mark.spark


def by(rows: list[dict[str, Any]], *keys: str) -> dict[Any, dict[str, Any]]:
    return {tuple(r[k] for k in keys) if len(keys) > 1 else r[keys[0]]: r for r in rows}


def test_messages_by_type_and_route(summary: dict[str, Any]) -> None:
    t = summary["tables"]
    assert {r["type"]: r["count"] for r in t["messages_by_type"]} == {
        "ControllerEventProcessed": 4, "ZkWatchEvent": 3, "TopicDeletionProgress": 3, "ControllerGauges": 2,
        "ChannelRequestCompleted": 2, "LeaderAndIsrRequest": 2, "ReassignmentProgress": 2, "ControllerChanged": 2,
        "StateChangeBatch": 1, "LeaderAndIsrResponse": 1, "TimerFired": 1,
    }
    assert t["messages_by_type"][0] == {"type": "ControllerEventProcessed", "count": 4}
    route = by(t["messages_by_route"], "sender", "receiver", "type")
    assert route[("controller", "metrics", "ControllerEventProcessed")]["count"] == 4
    assert route[("edge:zk", "controller", "ZkWatchEvent")]["count"] == 3
    assert route[("edge:net", "replica-manager", "LeaderAndIsrRequest")]["count"] == 1
    assert sum(r["count"] for r in t["messages_by_route"]) == 23
    assert t["messages_by_process"] == [
        {"process": "broker-0", "messages": 20, "first_ts": T0, "last_ts": T0 + 7300},
        {"process": "broker-1", "messages": 3, "first_ts": T0 + 1008, "last_ts": T0 + 8001},
    ]


def test_truncated_last_line_is_a_warning(summary: dict[str, Any]) -> None:
    meta = summary["meta"]
    assert meta["messages"] == 23
    assert len(meta["warnings"]) == 1
    assert "broker-1.jsonl: line 5: truncated last line" in meta["warnings"][0]


def test_controller_event_times(summary: dict[str, Any]) -> None:
    ev = by(summary["tables"]["controller_event_times"], "event")
    bc = ev["BrokerChange"]
    # queue times 4, 2, 10 ms; processing times 16, 2598, 8 ms
    assert bc["count"] == 3
    assert (bc["queue_ms_p50"], bc["queue_ms_p95"], bc["queue_ms_p99"], bc["queue_ms_max"]) == (4.0, 10.0, 10.0, 10.0)
    assert (bc["processing_ms_p50"], bc["processing_ms_max"]) == (16.0, 2598.0)
    assert bc["controller_state"] == "BrokerChange"
    td = ev["TopicDeletion"]
    assert (td["count"], td["queue_ms_max"], td["processing_ms_p50"]) == (1, 1.0, 3.0)
    timeline = summary["tables"]["controller_event_timeline"]
    assert [(r["bucket_start_ms"] - T0, r["events"]) for r in timeline] == [(1000, 1), (2000, 1), (5000, 1), (6000, 1)]


def test_requests(summary: dict[str, Any]) -> None:
    t = summary["tables"]
    lat = by(t["request_latency"], "request_type")
    assert lat["LeaderAndIsr"] | {} == {
        "request_type": "LeaderAndIsr", "count": 1, "retried": 0, "failed": 0, "latency_ms_p50": 4.0,
        "latency_ms_p95": 4.0, "latency_ms_p99": 4.0, "latency_ms_max": 4.0, "queue_ms_p50": 1.0,
        "queue_ms_p95": 1.0, "queue_ms_p99": 1.0, "queue_ms_max": 1.0,
    }
    assert (lat["UpdateMetadata"]["retried"], lat["UpdateMetadata"]["latency_ms_max"]) == (1, 30.0)
    per_broker = by(t["request_latency_by_broker"], "broker_id", "request_type")
    assert set(per_broker) == {(0, "LeaderAndIsr"), (1, "UpdateMetadata")}
    assert per_broker[(1, "UpdateMetadata")]["latency_ms_p50"] == 30.0
    queue = by(t["channel_queue_timeline"], "broker_id")
    assert (queue[1]["bucket_start_ms"] - T0, queue[1]["queue_size_max"]) == (1000, 2)


def test_state_transitions_and_elections(summary: dict[str, Any]) -> None:
    t = summary["tables"]
    assert t["partition_transitions"] == [
        {"from_state": "OfflinePartition", "to_state": "OnlinePartition", "count": 1},
        {"from_state": "OnlinePartition", "to_state": "OfflinePartition", "count": 2},
    ]
    assert t["replica_transitions"] == [{"from_state": "OnlineReplica", "to_state": "OfflineReplica", "count": 2}]
    assert t["leader_elections"] == [
        {"strategy": "OfflinePartition", "kind": "clean", "count": 1},
        {"strategy": "OfflinePartition", "kind": "unclean", "count": 1},
    ]


def test_deletions_and_reassignments(summary: dict[str, Any]) -> None:
    t = summary["tables"]
    assert t["topic_deletions"] == [{
        "topic": "payments", "queued_ts": T0 + 6000, "started_ts": T0 + 6100, "completed_ts": T0 + 6600,
        "ineligible": 0, "status": "Completed", "duration_ms": 500.0, "total_ms": 600.0,
    }]
    assert t["reassignments"] == [{
        "topic": "payments", "partition": 2, "started_ts": T0 + 7000, "finished_ts": T0 + 7250,
        "outcome": "Completed", "duration_ms": 250.0,
    }]


def test_gauges_over_time(summary: dict[str, Any]) -> None:
    g = summary["tables"]["gauges_timeline"]
    assert [(r["bucket_start_ms"] - T0, r["offline_partitions_max"], r["under_replicated_partitions_max"],
             r["topics_to_delete"]) for r in g] == [(1000, 1, 2, 0), (5000, 0, 1, 1)]


def test_errors_and_anomalies(summary: dict[str, Any]) -> None:
    t = summary["tables"]
    assert t["errors"] == [{"error": "STALE_CONTROLLER_EPOCH", "type": "LeaderAndIsrResponse", "count": 1}]
    assert t["anomaly_counts"] == [
        {"kind": "controller_change", "count": 2}, {"kind": "retried_request", "count": 1},
        {"kind": "slow_event", "count": 1}, {"kind": "stale_controller_epoch", "count": 1},
    ]
    an = by(t["anomalies"], "kind", "process", "seq")
    slow = an[("slow_event", "broker-0", 11)]
    assert slow["detail"] == "BrokerChange took 2598.000 ms (queued 2.000 ms)"
    assert an[("retried_request", "broker-0", 10)]["detail"] == \
        "UpdateMetadata to broker 1: 3 attempts, error NONE"
    assert an[("stale_controller_epoch", "broker-0", 6)]["type"] == "LeaderAndIsrResponse"
    assert an[("controller_change", "broker-1", 3)]["detail"] == "broker 1 resigned (epoch -1)"
    assert an[("controller_change", "broker-0", 2)]["detail"] == "broker 0 became controller (epoch 1)"


def test_incidents_are_the_reports_not_the_summarys(summary: dict[str, Any]) -> None:
    import copy

    from kactor.trace.incidents import report_rows
    from spark.report import INCIDENT_TABLES, add_incidents

    assert not set(INCIDENT_TABLES) & set(summary["tables"])  # spark.bench compares Spark's tables with DuckDB's
    t = add_incidents(copy.deepcopy({"meta": summary["meta"], "tables": summary["tables"]}), find=report_rows)["tables"]
    assert [(r["kind"], r["start_ts"] - T0, r["duration_ms"], r["subject"], r["partitions"]) for r in t["incidents"]] \
        == [("controller_change", 1.0, 0.0, "broker 0", ""), ("topic_deletion", 6000.0, 600.0, "topic payments", ""),
            ("reassignment", 7000.0, 250.0, "payments-2", "payments-2")]
    assert t["incidents"][0]["detail"] == "became the controller (epoch 1): the first controller election of this trace"
    assert t["error_answers"] == []  # the trace's STALE_CONTROLLER_EPOCH is a hop of an answer, not a NetReply


def test_tables_written_as_json_and_csv(summary: dict[str, Any]) -> None:
    from spark.summarize import TABLES

    out = summary["out"]
    for name in TABLES:
        with open(os.path.join(out, f"{name}.json")) as f:
            assert json.load(f) == summary["tables"][name], name
        with open(os.path.join(out, f"{name}.csv"), newline="") as f:
            assert len(list(csv.DictReader(f))) == len(summary["tables"][name]), name
    with open(os.path.join(out, "summary.json")) as f:
        meta = json.load(f)
    assert meta["messages"] == 23 and meta["bucket_ms"] == 1000 and meta["trace_versions"] == [TRACE_VERSION]
