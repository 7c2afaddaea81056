"""Incidents found in a trace: what happened to the cluster, the first thing an operator reads (issue #30).

A pure core, ``detect(records, runs)``, over the few records that tell it (``Rec``: a trace line with its payload as
the codec's JSON), and a reader, ``read_trace(paths)``, that picks those records out of the ``*.jsonl`` files
without decoding the rest. What is found:

- ``broker_down``: a broker process whose trace ends before the others' do, killed (no orderly shutdown in its
  trace: SIGKILL or a crash) or stopped, until its next incarnation starts;
- ``partition_offline``: partitions without a live leader (Kafka's OfflinePartitionsCount), from the death of their
  leader's process (or the state znode's leader −1) until a state znode names a live leader;
- ``under_replicated``: ISR smaller than the replicas (Kafka's Partition.isUnderReplicated: adding replicas of a
  reassignment not counted), from the state znode writes the trace holds;
- ``isr_shrink`` / ``isr_expand``: a state znode write that removed or added ISR members, and who wrote it;
- ``controller_change``: a broker became the active controller, and why (the previous one died, stopped, resigned,
  or /controller was deleted);
- ``produce_stall``: produce requests answered more than ``late_produce_ms`` after they arrived, grouped per broker
  into stalls, with the incidents that overlap them (an acks=all produce waits for every ISR member);
- ``group_rebalance``: a consumer group's join phase, from the first JoinGroup request to the leader's JoinGroup
  answer of the new generation, and why (the group formed, members joined, left with a LeaveGroup or without one,
  the coordinator moved);
- ``topic_deletion`` / ``reassignment``: from the controller's progress records, with their durations.

Errors are counted once per request: in the answers a process sends back (``NetReply``), each error code once per
answer, with how many partitions carried it; ``EXPECTED_ERRORS`` are the protocol's ordinary answers, every other
code needs attention (``ATTENTION_ERRORS`` says what the common ones mean; the meanings are Kafka's).
"""

from __future__ import annotations

from kactor.trace.incidents.detect import detect, tp_name
from kactor.trace.incidents.errors import ATTENTION_ERRORS, EXPECTED_ERRORS
from kactor.trace.incidents.model import LATE_PRODUCE_MS, ErrorCount, Findings, Incident, ProcessRun, Rec
from kactor.trace.incidents.read import find_incidents, read_run, read_trace, report_rows
from kactor.trace.incidents.text import error_line, errors_json, fmt_ts, incident_line, incidents_json, report_lines

__all__ = [
    "ATTENTION_ERRORS", "EXPECTED_ERRORS", "LATE_PRODUCE_MS", "ErrorCount", "Findings", "Incident", "ProcessRun", "Rec",
    "detect", "error_line", "errors_json", "find_incidents", "fmt_ts", "incident_line", "incidents_json",
    "read_run", "read_trace", "report_lines", "report_rows", "tp_name",
]
