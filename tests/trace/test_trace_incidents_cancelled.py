"""A reassignment the controller cancelled (its ReassignmentProgress(Cancelled) record) ends its incident, showing
the origin replicas it went back to."""

from __future__ import annotations

from typing import Any

from test_trace_incidents import leader_and_isr, rec, run, state_write, tpj

from kactor.trace.incidents import Rec, detect


def _progress(ts: float, **fields: Any) -> Rec:
    return rec("broker-0", ts, "controller", "state-change-log", {"@": "ReassignmentProgress", **fields})


def test_a_cancelled_reassignment_is_one_incident_with_the_origin_replicas() -> None:
    recs = [leader_and_isr("broker-0", 10, {"d-0": (0, [0, 1], [0, 1])}),
            *state_write("broker-0", 20, "controller", 1, "d-0", 0, [0, 1]),
            _progress(1_000, topic_partition=tpj("d-0"), phase="Started", target_replicas=[1, 2], reason=""),
            _progress(1_800, topic_partition=tpj("d-0"), phase="Cancelled", target_replicas=[0, 1], reason="")]
    found = detect(sorted(recs, key=lambda r: r.ts), [run("broker-0", 0, 0, 6_000)])
    assert [(i.kind, i.subject, i.duration_ms, i.detail) for i in found.incidents] == [
        ("reassignment", "d-0", 800.0, "cancelled: replicas → [0, 1]")]
