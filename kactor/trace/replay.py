"""Replay one broker process's trace on simpleSystemBase and check it reproduces every message exactly.

The actors of a broker process are rebuilt (same classes, same names, same spawn order) with no edges. Every
external input the trace recorded (ZooKeeper responses and watches, network requests and responses, timer firings,
the process's own start-up inputs) is delivered in the recorded order with the clock set to its recorded time; the
actors' own messages are not fed, they are produced, and with ``check`` each is compared with the recorded one.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from typing import Any

import attrs

from kactor.clock import ManualClock
from kactor.runtime import Runtime
from kactor.trace.reader import Record, TraceError, decode_body, read_header, read_records
from messages.codec import to_json


@attrs.frozen
class Divergence:
    seq: int
    field: str
    expected: dict[str, Any] | None
    actual: dict[str, Any] | None


@attrs.define
class ReplayResult:
    path: str
    compared: int = 0
    delivered: int = 0
    divergence: Divergence | None = None
    wall_s: float = 0.0
    recorded_span_ms: float = 0.0
    runtime: Runtime | None = None

    @property
    def identical(self) -> bool:
        return self.divergence is None


def _as_dict(seq: int, ts: float, sender: str, receiver: str, type_name: str, payload: Any,
             cause: int | None) -> dict[str, Any]:
    return {"seq": seq, "ts": ts, "sender": sender, "receiver": receiver, "type": type_name, "payload": payload,
            "cause": cause}


def _record_dict(r: Record) -> dict[str, Any]:
    return _as_dict(r.seq, r.ts, r.sender, r.receiver, r.type, r.payload, r.cause)


def _rewrite_input(body: Any, scratch: str, paths: dict[str, str]) -> Any:
    """External inputs that name local paths are pointed at a scratch folder, so a replay never touches the
    recorded broker's log dirs; ``paths`` learns scratch → recorded, to map them back before comparing."""
    from messages.broker_lifecycle import ReplicaManagerInit

    if isinstance(body, ReplicaManagerInit):
        dirs = tuple(f"{scratch}/log-dir-{i}" for i in range(len(body.log_dirs)))
        paths.update(zip(dirs, body.log_dirs, strict=True))
        return attrs.evolve(body, log_dirs=dirs)
    return body


def _unmap_paths(value: Any, paths: dict[str, str]) -> Any:
    if not paths:
        return value
    if isinstance(value, str):
        for scratch, original in paths.items():
            if scratch in value:
                value = value.replace(scratch, original)
        return value
    if isinstance(value, list):
        return [_unmap_paths(v, paths) for v in value]
    if isinstance(value, dict):
        return {k: _unmap_paths(v, paths) for k, v in value.items()}
    return value


def replay(path: str, until: int | None = None, check: bool = True, keep_runtime: bool = False,
           tamper: Callable[[Record, Any], Any] | None = None) -> ReplayResult:
    """Replay the trace at ``path`` up to (and including) seq ``until``.

    ``tamper(record, body) -> body`` may alter an external input before it is delivered (tests use it to show that
    replay finds the first divergence).
    """
    from kactor.broker_process import spawn_broker_actors

    header = read_header(path)
    records = list(read_records(path))
    result = ReplayResult(path)
    if records:
        result.recorded_span_ms = records[-1].ts - records[0].ts
    produced: list[tuple] = []
    rt = Runtime(str(header.get("process", "replay")), clock=ManualClock(float(header.get("started_ms", 0))))
    rt.observer = lambda *rec: produced.append(rec)
    scratch = tempfile.mkdtemp(prefix="kactor-replay-")
    paths: dict[str, str] = {}
    t0 = time.perf_counter()
    try:
        spawn_broker_actors(rt)
        j = 0  # next recorded record to compare
        for rec in records:
            if until is not None and rec.seq > until:
                break
            if not rec.external:
                continue
            body = _rewrite_input(decode_body(path, rec), scratch, paths)
            if tamper is not None:
                body = tamper(rec, body)
            rt.deliver(rec.receiver, body, rec.sender, rec.cause, at_ms=rec.ts)
            result.delivered += 1
            if check:
                j = _compare(records, produced, j, result, until, paths)
                produced.clear()
                if result.divergence is not None:
                    break
        if check and result.divergence is None:
            remaining = [r for r in records[j:] if until is None or r.seq <= until]
            if remaining and result.delivered and not _only_after_last_input(records, j):
                r = remaining[0]
                result.divergence = Divergence(r.seq, "missing", _record_dict(r), None)
        result.compared = j if check else 0
    finally:
        result.wall_s = time.perf_counter() - t0
        if keep_runtime:
            result.runtime = rt
        else:
            rt.shutdown()
        import shutil

        shutil.rmtree(scratch, ignore_errors=True)
    return result


def _compare(records: list[Record], produced: list[tuple], j: int, result: ReplayResult,
             until: int | None, paths: dict[str, str]) -> int:
    for seq, ts, sender, receiver, body, cause in produced:
        if j >= len(records) or (until is not None and records[j].seq > until):
            return j  # the trace ends here (a crash, or --until): what the replay adds cannot be checked
        expected = records[j]
        actual = _as_dict(seq, ts, sender, receiver, type(body).__name__,
                          expected.payload if expected.external else _unmap_paths(to_json(body), paths), cause)
        exp = _record_dict(expected)
        for field in ("seq", "sender", "receiver", "type", "cause", "ts", "payload"):
            if exp[field] != actual[field]:
                result.divergence = Divergence(expected.seq, field, exp, actual)
                return j
        j += 1
    return j


def _only_after_last_input(records: list[Record], j: int) -> bool:
    """True when the unmatched records are all external inputs that were never delivered (none are)."""
    return all(r.external for r in records[j:])


def check_trace_file(path: str) -> None:
    """Raise TraceError unless every line of ``path`` decodes to a known message type."""
    for rec in read_records(path):
        decode_body(path, rec)
    return None


__all__ = ["Divergence", "ReplayResult", "TraceError", "check_trace_file", "replay"]
