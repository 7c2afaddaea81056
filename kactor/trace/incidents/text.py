"""The findings as text lines (``kactor trace incidents``) and as table rows (the report)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kactor.trace.incidents.model import ErrorCount, Findings, Incident


def fmt_ts(ms: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%H:%M:%S.%f")[:-3]


def incident_line(i: Incident, t0: float | None = None) -> str:
    """One line: start (and seconds since the trace's first record), duration, kind, subject, partitions, detail."""
    rel = f" (+{(i.start_ms - t0) / 1000:.2f} s)" if t0 is not None else ""
    if i.end_ms is None:
        dur = "ongoing"
    elif i.end_ms == i.start_ms:
        dur = "instant"
    else:
        dur = f"{(i.end_ms - i.start_ms) / 1000:.2f} s"
    parts = ""
    if i.partitions:
        shown = ", ".join(i.partitions[:8]) + (f", … ({len(i.partitions)})" if len(i.partitions) > 8 else "")
        parts = f" [{shown}]"
    return f"{fmt_ts(i.start_ms)}{rel}  {dur:>8}  {i.kind:<17} {i.subject}{parts}: {i.detail}"


def error_line(e: ErrorCount) -> str:
    carried = f" ({e.partitions} partitions)" if e.partitions != e.requests else ""
    return (f"{e.error:<28} {e.request:<24} {e.requests:>6} answer{'s' if e.requests != 1 else ''}{carried}"
            + (f": {e.meaning}" if e.meaning else ""))


def report_lines(f: Findings) -> Iterator[str]:
    """The findings as text: the incidents, a line each, then the errors split into attention and expected."""
    span = (f.last_ms - f.first_ms) / 1000 if f.first_ms is not None and f.last_ms is not None else 0.0
    yield (f"{len(f.incidents)} incident{'s' if len(f.incidents) != 1 else ''} in {span:.1f} s of trace"
           + (f" from {fmt_ts(f.first_ms)} UTC" if f.first_ms is not None else ""))
    for i in f.incidents:
        yield "  " + incident_line(i, f.first_ms)
    attention = [e for e in f.errors if not e.expected]
    expected = [e for e in f.errors if e.expected]
    yield f"Errors that need attention (once per answer): {'none' if not attention else ''}".rstrip()
    for e in attention:
        yield "  " + error_line(e)
    yield f"Expected protocol answers (once per answer): {'none' if not expected else ''}".rstrip()
    for e in expected:
        yield "  " + error_line(e)


def incidents_json(f: Findings) -> list[dict[str, Any]]:
    return [{"kind": i.kind, "start_ts": i.start_ms, "end_ts": i.end_ms,
             "duration_ms": None if i.duration_ms is None else round(i.duration_ms, 3), "subject": i.subject,
             "partitions": " ".join(i.partitions), "detail": i.detail} for i in f.incidents]


def errors_json(f: Findings) -> list[dict[str, Any]]:
    return [{"error": e.error, "request": e.request, "answers": e.requests, "partitions": e.partitions,
             "expected": e.expected, "meaning": e.meaning, "first_ts": e.first_ms, "last_ts": e.last_ms}
            for e in f.errors]
