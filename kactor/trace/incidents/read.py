"""Reading the records the detectors need from ``*.jsonl`` traces, without decoding the rest."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from typing import Any

from kactor.trace.incidents.detect import detect
from kactor.trace.incidents.model import LATE_PRODUCE_MS, Findings, ProcessRun, Rec
from kactor.trace.incidents.text import errors_json, incidents_json

_PREFIX = re.compile(r'\{"seq":(\d+),"ts":([0-9.eE+-]+),"sender":"([^"]*)","receiver":"([^"]*)","type":"([^"]*)"')
# the records the detectors read, and for the busy types a cheap test of the line before it is parsed
_WANTED: dict[str, Any] = {
    "StateChangeBatch": None, "ControllerChanged": None, "TopicDeletionProgress": None,
    "ReassignmentProgress": None, "BrokerShutdownRequested": None,
    "ZkRequest": lambda line: "/state" in line,
    "ZkResponse": None,  # paired with a pending state write: parsed only when one is pending (below)
    "ZkWatchEvent": lambda line: '"kind":"DELETED"' in line,
    "NetRequest": lambda line: any(f'"body":{{"@":"{t}Request"' in line
                                   for t in ("LeaderAndIsr", "Produce", "JoinGroup", "LeaveGroup")),
    "NetReply": lambda line: '"@":"ProduceResponse"' in line or '"@":"JoinGroupResponse"' in line
    or _ANY_ERROR.search(line) is not None,
}
_ANY_ERROR = re.compile(r'"@e":"Errors","v":"(?!NONE")')
_REQUEST_ID = re.compile(r'"request_id":(\d+)')


def _process_name(path: str) -> str:
    return os.path.basename(path).removesuffix(".jsonl")


def read_run(path: str) -> tuple[list[Rec], ProcessRun | None]:
    """The records ``detect`` reads from one process's trace file, and the process's run."""
    from kactor.trace.reader import read_header

    header = read_header(path)
    process = _process_name(path)
    broker_id = header.get("broker_id")
    recs: list[Rec] = []
    first = last = None
    shutdown_ts = None
    pending_zk: set[tuple[str, int]] = set()
    with open(path, encoding="utf-8") as f:
        f.readline()
        for line in f:
            m = _PREFIX.match(line)
            try:
                if m is None:
                    d = json.loads(line)
                    seq, ts, sender, receiver, typ = d["seq"], float(d["ts"]), d["sender"], d["receiver"], d["type"]
                    payload_line: str | None = None
                else:
                    seq, ts, sender, receiver, typ = int(m.group(1)), float(m.group(2)), m.group(3), m.group(4), \
                        m.group(5)
                    payload_line = line
            except (ValueError, KeyError, TypeError):
                if not line.endswith("\n"):
                    break  # a crash's truncated last line
                raise
            first = ts if first is None else first
            last = ts
            want = _WANTED.get(typ, False)
            if want is False:
                continue
            if typ == "BrokerShutdownRequested":
                shutdown_ts = ts if shutdown_ts is None else shutdown_ts
                continue
            if typ == "ZkResponse":
                rid = _REQUEST_ID.search(line)
                if rid is None or (receiver, int(rid.group(1))) not in pending_zk:
                    continue
            elif want is not None and not want(line):
                continue
            try:
                payload = json.loads(payload_line)["payload"] if payload_line is not None else d["payload"]
            except (ValueError, KeyError):
                if not line.endswith("\n"):
                    break
                raise
            if typ == "NetRequest" and (body := payload.get("body") or {}).get("@") == "ProduceRequest":
                # the batches are most of the bytes and no detector reads them: a record each stays small
                body["partitions"] = [{"tp": p.get("tp")} for p in body.get("partitions", [])]
            if typ == "ZkRequest":
                pending_zk.add((payload.get("reply_to") or sender, payload.get("request_id")))
            elif typ == "ZkResponse":
                pending_zk.discard((receiver, payload.get("request_id")))
            recs.append(Rec(process, int(seq), ts, sender, receiver, typ, payload))
    run = ProcessRun(process, broker_id, first, last, shutdown_ts) if first is not None and last is not None else None
    return recs, run


def read_trace(paths: Iterable[str]) -> tuple[list[Rec], list[ProcessRun]]:
    """The records ``detect`` reads from the trace folders or files ``paths``, in time order, and every run."""
    from kactor.trace.reader import trace_files

    recs: list[Rec] = []
    runs: list[ProcessRun] = []
    for p in paths:
        for f in trace_files(p):
            got, run = read_run(f)
            recs += got
            if run is not None:
                runs.append(run)
    recs.sort(key=lambda r: (r.ts, r.process, r.seq))
    return recs, runs


def find_incidents(paths: Iterable[str], late_produce_ms: float = LATE_PRODUCE_MS) -> Findings:
    recs, runs = read_trace(paths)
    return detect(recs, runs, late_produce_ms)


def report_rows(paths: Iterable[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], float | None]:
    """The incident finder ``kactor trace summarize`` hands the Spark report (spark.report.IncidentFinder): the
    incidents and the errors once per answer of one cluster's traces as table rows, and the traces' last timestamp."""
    f = find_incidents(paths)
    return incidents_json(f), errors_json(f), f.last_ms
