"""The report's incidents (issue #30): the incident and error tables kactor/trace/incidents.py finds, the report's
first screen listing them with a timeline, and the under-replicated series filled from the intervals."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark

T0 = 1_800_000_000_000.0


def _line(seq: int, ts: float, sender: str, receiver: str, payload: dict[str, Any]) -> str:
    return json.dumps({"seq": seq, "ts": T0 + ts, "sender": sender, "receiver": receiver, "type": payload["@"],
                       "payload": payload, "cause": None}, separators=(",", ":"))


def _state_write(seq: int, ts: float, rid: int, isr: list[int]) -> list[str]:
    data = json.dumps({"controller_epoch": 1, "leader": 0, "version": 1, "leader_epoch": 1, "isr": isr})
    op = {"@": "SetData", "path": "/brokers/topics/t/partitions/0/state", "data": data, "version": 0}
    return [_line(seq, ts, "partition-0", "zk", {"@": "ZkRequest", "request_id": rid, "reply_to": "partition-0",
                                                 "batch": {"@": "ZkBatch", "ops": [op], "fence_version": -1}}),
            _line(seq + 1, ts, "edge:zk", "partition-0",
                  {"@": "ZkResponse", "request_id": rid, "results": [{"@": "ZkOpResult", "code": "OK"}]})]


def _trace(folder: Path) -> str:
    """Broker 0 leads t-0 (replicas 0, 1, 2); broker 2 leaves the ISR at +1.5 s and is back at +4.2 s."""
    lair = {"@": "LeaderAndIsrRequest", "controller_id": 0, "controller_epoch": 1, "broker_epoch": 1,
            "live_leaders": [], "partition_states": [{
                "@": "LeaderAndIsrPartitionState", "topic_partition": {"@": "TopicPartition", "topic": "t",
                                                                       "partition": 0},
                "leader": 0, "isr": [0, 1, 2], "replicas": [0, 1, 2], "adding_replicas": []}]}
    lines = [json.dumps({"trace_version": 4, "process": "broker-0", "broker_id": 0}),
             _line(1, 0, "edge:net", "replica-manager", {"@": "NetRequest", "connection_id": 1, "request_id": 1,
                                                          "body": lair, "reply_expected": True}),
             *_state_write(2, 10, 1, [0, 1, 2]), *_state_write(4, 1500, 2, [0, 1]),
             *_state_write(6, 4200, 3, [0, 1, 2]),
             _line(8, 6000, "edge:timer", "x", {"@": "TimerFired"})]
    (folder / "broker-0.jsonl").write_text("\n".join(lines) + "\n")
    return str(folder)


def test_the_under_replicated_series_is_filled_from_the_intervals(tmp_path: Path) -> None:
    from kactor.trace.incidents import report_rows
    from spark.report import incident_tables

    gauges = [{"bucket_start_ms": T0 + 1000, "samples": 1, "offline_partitions_max": 0,
               "under_replicated_partitions_max": 0}]
    warnings: list[str] = []
    t = incident_tables([_trace(tmp_path)], 1000, gauges, warnings, report_rows)
    assert warnings == []
    assert [(r["kind"], r["start_ts"] - T0, r["duration_ms"], r["partitions"]) for r in t["incidents"]] == [
        ("isr_shrink", 1500.0, 0.0, "t-0"), ("under_replicated", 1500.0, 2700.0, "t-0"),
        ("isr_expand", 4200.0, 0.0, "t-0")]
    # under-replicated from +1.5 s to +4.2 s: buckets 1 to 4; the gauge's own row keeps its other values
    assert [(r["bucket_start_ms"] - T0, r["under_replicated_partitions_max"], r["samples"]) for r in gauges] == [
        (1000, 1, 1), (2000, 1, 0), (3000, 1, 0), (4000, 1, 0)]
    assert gauges[0]["offline_partitions_max"] == 0


def test_peaks_per_bucket() -> None:
    from spark.report import _peaks

    # 2 partitions from 1.5 s to 4.2 s, 1 more from 4.0 s to 4.1 s, 3 from 7.0 s to 7.0 s (an instant)
    assert _peaks([(1500, 4200, 2), (4000, 4100, 1), (7000, 7000, 3)], 1000) == {
        1000: 2, 2000: 2, 3000: 2, 4000: 3, 7000: 3}


def test_a_parquet_input_has_no_incidents_and_says_so(tmp_path: Path) -> None:
    from kactor.trace.incidents import report_rows
    from spark.report import incident_tables

    warnings: list[str] = []
    (tmp_path / "part-0.parquet").write_bytes(b"PAR1")
    assert incident_tables([str(tmp_path)], 1000, [], warnings, report_rows) == {"incidents": [], "error_answers": []}
    assert len(warnings) == 1 and warnings[0].startswith("incidents not found:") and "no trace files" in warnings[0]


def test_the_reports_first_screen_lists_the_incidents(tmp_path: Path) -> None:
    from rich.console import Console

    from kactor.trace.incidents import report_rows
    from spark.report import build_report, incident_tables, print_summary

    gauges: list[dict[str, Any]] = []
    (tmp_path / "t").mkdir()
    tables = incident_tables([_trace(tmp_path / "t")], 1000, gauges, [], report_rows)
    tables["gauges_timeline"] = gauges
    tables["error_answers"] = [
        {"error": "UNKNOWN_SERVER_ERROR", "request": "Produce", "answers": 2, "partitions": 2, "expected": False,
         "meaning": "", "first_ts": T0, "last_ts": T0},
        {"error": "STALE_CONTROLLER_EPOCH", "request": "LeaderAndIsr", "answers": 1, "partitions": 3,
         "expected": True, "meaning": "a deposed controller", "first_ts": T0, "last_ts": T0}]
    meta = {"inputs": [], "processes": ["broker-0"], "messages": 8, "first_ts": T0, "last_ts": T0 + 6000,
            "bucket_ms": 1000, "slow_event_ms": 2000.0, "warnings": []}
    out = str(tmp_path / "out")
    page = Path(build_report(out, {"meta": meta, "tables": tables}, find=report_rows)).read_text(encoding="utf-8")
    first = page.index('<h2 id="incidents">')
    assert first < page.index("<h2>Plots</h2>") and page.index('src="incidents.png"') < page.index("<h2>Plots</h2>")
    assert "<td>under_replicated</td><td>1 partition</td><td class=l>t-0</td>" in page
    assert page.index("UNKNOWN_SERVER_ERROR") < page.index("Expected protocol answers") < \
        page.index("STALE_CONTROLLER_EPOCH")
    assert os.path.getsize(os.path.join(out, "incidents.png")) > 1000
    console = Console(record=True, width=160)
    print_summary({"meta": meta, "tables": tables}, out, console=console, find=report_rows)
    text = console.export_text()
    assert text.index("Incidents (3)") < text.index("Leader elections:")
    assert "under_replicated" in text and "2.70 s" in text
    assert "Errors that need attention (once per answer): UNKNOWN_SERVER_ERROR (Produce): 2" in text
    assert "Expected protocol answers (once per answer): STALE_CONTROLLER_EPOCH (LeaderAndIsr): 1" in text


def test_peaks_over_a_gap_of_years_fill_only_the_timelines_rows() -> None:
    """Two traces of different eras read as one cluster: an incident open from the first to the end of the second
    spans 10^8 one-second buckets; only the timeline's rows between are filled, and the edges' buckets."""
    from spark.report import MAX_FILL_BUCKETS, _peaks

    year_ms = 365 * 86_400_000
    far = 3 * year_ms
    got = _peaks([(1500, far + 500, 2)], 1000, known=(1000, 5000, far - 7000, far + 9000))
    assert got == {1000: 2, 5000: 2, far - 7000: 2, far: 2}
    # a gap of up to MAX_FILL_BUCKETS is filled bucket by bucket, rows or not; one bucket more, only the rows
    assert len(_peaks([(500, MAX_FILL_BUCKETS * 1000 + 500, 1)], 1000)) == MAX_FILL_BUCKETS + 1
    assert _peaks([(500, (MAX_FILL_BUCKETS + 1) * 1000 + 500, 1)], 1000, known=(7000,)) == {
        0: 1, 7000: 1, (MAX_FILL_BUCKETS + 1) * 1000: 1}
