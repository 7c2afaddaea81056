"""The trace summary as an HTML report (index.html + matplotlib PNGs) and as a short terminal summary (rich).

Both work from the tables ``spark.summarize`` returns or wrote (``load_result(out_dir)`` reads them back), so a
report can be rebuilt without Spark. Both open with the incidents (``add_incidents``: the caller's finder, kactor's
kactor/trace/incidents/, over the traces the summary read) and the errors once per answer.
"""

from __future__ import annotations

import bisect
import copy
import html
import json
import os
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from spark.summarize import TABLES, write_table

# The caller's incident finder (kactor trace summarize hands kactor.trace.incidents.report_rows): for one cluster's
# JSON-lines traces, its incidents and its errors once per answer as table rows, and the traces' last timestamp (an
# incident still open ends there); OSError or ValueError for traces it cannot read.
IncidentFinder = Callable[[list[str]], tuple[list[dict[str, Any]], list[dict[str, Any]], float | None]]
# the tables the report adds to the summary's (add_incidents): not Spark's, so not in spark.bench's comparison
INCIDENT_TABLES = ("incidents", "error_answers")

PLOTS = {
    "incidents.png": "Incidents over time",
    "event_queue_time.png": "Controller event queue time over time",
    "request_latency.png": "Request latency per broker",
    "offline_partitions.png": "Offline and under-replicated partitions over time",
    "state_transitions.png": "State transitions",
}
HTML_TABLES = (
    ("messages_by_type", "Messages by type", 50),
    ("messages_by_process", "Messages by process", 100),
    ("controller_event_times", "Controller events: queue and processing time (ms)", 100),
    ("request_latency", "Controller → broker requests (ms)", 50),
    ("request_latency_by_broker", "Requests per broker (ms)", 200),
    ("partition_transitions", "Partition state transitions", 100),
    ("replica_transitions", "Replica state transitions", 100),
    ("leader_elections", "Leader elections", 50),
    ("topic_deletions", "Topic deletions (ms)", 100),
    ("reassignments", "Reassignments (ms)", 100),
    ("errors", "Errors in every record (each hop of an answer counts)", 100),
    ("anomaly_counts", "Anomalies", 50),
    ("anomalies", "Anomalies (first 200)", 200),
    ("messages_by_route", "Messages by sender → receiver", 200),
)


def load_result(out_dir: str) -> dict[str, Any]:
    """Read back what ``summarize`` wrote to ``out_dir``."""
    with open(os.path.join(out_dir, "summary.json"), encoding="utf-8") as f:
        meta = json.load(f)
    tables = {}
    for name in (*TABLES, *INCIDENT_TABLES):
        path = os.path.join(out_dir, f"{name}.json")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                tables[name] = json.load(f)
    return {"meta": meta, "tables": tables}


def incident_tables(inputs: list[str], bucket_ms: int, gauges: list[dict[str, Any]], warnings: list[str],
                    find: IncidentFinder) -> dict[str, list[dict[str, Any]]]:
    """The incidents and the errors once per answer (``find``, the caller's: kactor/trace/incidents/, a pure-Python
    pass over the JSON-lines traces that reads only the records it needs), and the gauges' under-replicated and
    offline series filled from the intervals: each bucket's largest number of partitions under-replicated (offline)
    at one time (the controller's under-replicated gauge is 0 in its traces, and its offline gauge counts only the
    moments between its OfflinePartition and OnlinePartition transitions, not the time since the leader died). A
    Parquet input has no incidents (a warning says so). A campaign folder (spark.load.campaign_folders: a ``kactor
    sim`` run's seeds, separate clusters) has its seeds' incidents found one seed at a time, each subject after its
    seed folder's name (``seed-2: broker 0``), and their errors once per answer added up over the seeds."""
    from spark.load import campaign_folders

    # (subject prefix, paths) per cluster: the inputs as one, or each seed folder of a campaign apart
    plain = [p for p in inputs if not campaign_folders(p)]
    runs = [("", plain)] if plain else []
    runs += [(os.path.basename(sub) + ": ", [sub]) for p in inputs for sub in campaign_folders(p)]
    try:
        found = [(prefix, find(paths)) for prefix, paths in runs]
    except (OSError, ValueError) as e:
        warnings.append(f"incidents not found: {e}")
        return {"incidents": [], "error_answers": []}
    rows = {r["bucket_start_ms"]: r for r in gauges}
    for kind, column in (("under_replicated", "under_replicated_partitions_max"),
                         ("partition_offline", "offline_partitions_max")):
        spans = [(i["start_ts"], i["end_ts"] if i["end_ts"] is not None else (last_ms or 0.0),
                  len(i["partitions"].split()))
                 for _, (incident_rows, _e, last_ms) in found for i in incident_rows if i["kind"] == kind]
        for b, n in _peaks(spans, bucket_ms, rows).items():
            row = rows.get(b)
            if row is None:
                row = rows[b] = {k: None for k in (gauges[0] if gauges else ("bucket_start_ms",))}
                row.update(bucket_start_ms=b, samples=0)
            row[column] = max(row.get(column) or 0, n)
    gauges[:] = [rows[b] for b in sorted(rows)]
    if len(found) == 1 and not found[0][0]:
        return {"incidents": found[0][1][0], "error_answers": found[0][1][1]}
    incidents = [dict(r, subject=prefix + r["subject"]) for prefix, (incident_rows, _e, _l) in found
                 for r in incident_rows]
    errors: dict[tuple[Any, ...], dict[str, Any]] = {}
    for _, (_i, error_rows, _l) in found:
        for r in error_rows:
            key = (r["error"], r["request"], r["expected"])
            if key not in errors:
                errors[key] = dict(r)
                continue
            e = errors[key]
            e["answers"] += r["answers"]
            e["partitions"] += r["partitions"]
            e["first_ts"], e["last_ts"] = min(e["first_ts"], r["first_ts"]), max(e["last_ts"], r["last_ts"])
    # ordered as each seed's are (kactor/trace/incidents/detect.py): attention first, the most answers first
    return {"incidents": incidents, "error_answers": sorted(errors.values(), key=lambda r: (
        r["expected"], -r["answers"], r["error"]))}


# the most buckets a level is filled into between two edges; over a longer gap only the timeline's own rows are
# (an hour at the default 1 s buckets: a real incident's gap between events, never two traces' eras apart)
MAX_FILL_BUCKETS = 3600


def _peaks(spans: list[tuple[float, float, int]], bucket_ms: int, known: Iterable[int] = ()) -> dict[int, int]:
    """Each bucket's largest sum of the ``spans`` (start, end, count) covering one instant of it: the buckets an edge
    falls in and those a level spans between two edges — all of them over a gap of up to MAX_FILL_BUCKETS, only the
    ``known`` ones (the timeline's rows) over a longer one, so the memory is bounded by the edges and the rows, not by
    the time spanned (an incident left open from a trace of 2023 to the end of one of 2026 read beside it spans 10^8
    one-second buckets)."""
    edges = [e for start, end, n in spans for e in ((start, n), (end, -n))]
    steps = sorted(edges, key=lambda e: (e[0], -e[1]))  # a start before an end at the same time
    peak: dict[int, int] = {}
    level = 0
    if not steps:
        return peak
    rows = sorted(set(known))
    for (ts, step), nxt in zip(steps, [*steps[1:], None], strict=True):
        b = int(ts // bucket_ms * bucket_ms)
        peak[b] = max(peak.get(b, 0), level)  # the level up to ts, in this bucket
        level += step
        peak[b] = max(peak[b], level)
        if nxt is not None and level > 0:  # the buckets the level spans without an edge in them
            last = int(nxt[0] // bucket_ms * bucket_ms)
            if (last - b) // bucket_ms <= MAX_FILL_BUCKETS:
                between: Iterable[int] = range(b + bucket_ms, last, bucket_ms)
            else:
                between = rows[bisect.bisect_right(rows, b):bisect.bisect_left(rows, last)]
            for k in between:
                peak[k] = max(peak.get(k, 0), level)
    return peak


def add_incidents(result: dict[str, Any], out_dir: str | None = None, *, find: IncidentFinder) -> dict[str, Any]:
    """``result`` with the incident tables added (a copy; once), from the JSON-lines traces its meta names; written
    (with the gauges filled from the under-replicated intervals) to ``out_dir``. A pure-Python pass after Spark's: the
    summary's own tables stay what Spark and DuckDB both compute."""
    if all(name in result["tables"] for name in INCIDENT_TABLES):
        return result
    # a new result: the caller's (Spark's tables, which spark.bench and the tests compare) is left as it was
    meta = copy.deepcopy(result["meta"])
    tables = dict(result["tables"])
    tables["gauges_timeline"] = copy.deepcopy(tables.get("gauges_timeline", []))
    result = {**result, "meta": meta, "tables": tables}
    warnings = meta.setdefault("warnings", [])
    tables.update(incident_tables(list(meta.get("inputs", [])), int(meta.get("bucket_ms") or 1000),
                                  tables["gauges_timeline"], warnings, find))
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        for name in (*INCIDENT_TABLES, "gauges_timeline"):
            write_table(out_dir, name, tables[name])
        with open(os.path.join(out_dir, "summary.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
    return result


def _fmt_ts(ms: float | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"


def _plots(out_dir: str, tables: dict[str, list[dict[str, Any]]], t0: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def secs(rows: list[dict[str, Any]]) -> list[float]:
        return [(r["bucket_start_ms"] - t0) / 1000 for r in rows]

    def save(fig: Any, name: str) -> None:
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, name), dpi=100)
        plt.close(fig)

    rows = tables.get("controller_event_timeline", [])
    fig, ax = plt.subplots(figsize=(9, 4))
    if rows:
        x = secs(rows)
        ax.plot(x, [r["queue_ms_p50"] or 0 for r in rows], label="p50", lw=1)
        ax.plot(x, [r["queue_ms_p95"] or 0 for r in rows], label="p95", lw=1)
        ax.plot(x, [r["queue_ms_max"] or 0 for r in rows], label="max", lw=0.8, alpha=0.7)
        ax.legend(loc="upper right")
    ax.set_xlabel("seconds since first message")
    ax.set_ylabel("queue time (ms, symlog)")
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set_title(PLOTS["event_queue_time.png"])
    save(fig, "event_queue_time.png")

    rows = tables.get("request_latency_by_broker", [])
    fig, ax = plt.subplots(figsize=(9, 4))
    brokers = sorted({r["broker_id"] for r in rows})
    kinds = sorted({r["request_type"] for r in rows})
    width = 0.8 / max(1, len(kinds))
    for k, kind in enumerate(kinds):
        by = {r["broker_id"]: r for r in rows if r["request_type"] == kind}
        xs = [i + k * width for i in range(len(brokers))]
        ax.bar(xs, [(by.get(b) or {}).get("latency_ms_p95") or 0 for b in brokers], width, label=f"{kind} p95")
        ax.scatter(xs, [(by.get(b) or {}).get("latency_ms_p50") or 0 for b in brokers], color="black", s=8, zorder=3)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(brokers))], [f"broker {b}" for b in brokers])
    ax.set_ylabel("latency (ms); dots: p50")
    ax.set_title(PLOTS["request_latency.png"])
    if kinds:
        ax.legend(loc="upper right", fontsize="small")
    save(fig, "request_latency.png")

    _incident_plot(plt, tables.get("incidents", []), t0, save)

    rows = tables.get("gauges_timeline", [])
    fig, ax = plt.subplots(figsize=(9, 4))
    if rows:
        x = secs(rows)
        ax.step(x, [r.get("offline_partitions_max") or 0 for r in rows], where="post", label="offline (max)")
        ax.step(x, [r.get("under_replicated_partitions_max") or 0 for r in rows], where="post",
                label="under-replicated (max)")
        ax.legend(loc="upper right")
    ax.set_xlabel("seconds since first message")
    ax.set_ylabel("partitions")
    ax.set_title(PLOTS["offline_partitions.png"])
    save(fig, "offline_partitions.png")

    pt = [(f"P {r['from_state']} → {r['to_state']}", r["count"]) for r in tables.get("partition_transitions", [])]
    rt = [(f"R {r['from_state']} → {r['to_state']}", r["count"]) for r in tables.get("replica_transitions", [])]
    items = pt + rt
    fig, ax = plt.subplots(figsize=(9, max(3.0, 0.3 * len(items) + 1)))
    if items:
        ax.barh([i[0] for i in items], [i[1] for i in items], color=["C0"] * len(pt) + ["C1"] * len(rt))
        ax.invert_yaxis()
        ax.tick_params(axis="y", labelsize=8)
    ax.set_xlabel("count (P: partition, R: replica)")
    ax.set_title(PLOTS["state_transitions.png"])
    save(fig, "state_transitions.png")


# the timeline's lanes, top to bottom, and their colours: what needs attention in warm colours
INCIDENT_LANES = (
    ("partition_offline", "tab:red"), ("broker_down", "tab:brown"), ("produce_stall", "tab:orange"),
    ("under_replicated", "gold"), ("isr_shrink", "tab:purple"), ("isr_expand", "tab:green"),
    ("controller_change", "tab:blue"), ("group_rebalance", "tab:pink"), ("reassignment", "tab:cyan"),
    ("topic_deletion", "tab:gray"),
    ("cluster_stop", "lightgray"),
)


def _incident_plot(plt: Any, rows: list[dict[str, Any]], t0: float, save: Any) -> None:
    """A lane per kind of incident, a bar per incident from its start to its end (at least a visible sliver)."""
    lanes = [(k, c) for k, c in INCIDENT_LANES if any(r["kind"] == k for r in rows)]
    end = max([(r["end_ts"] or r["start_ts"]) for r in rows], default=t0)
    span = max((end - t0) / 1000, 1.0)
    fig, ax = plt.subplots(figsize=(9, max(2.5, 0.45 * len(lanes) + 1.2)))
    for y, (kind, colour) in enumerate(lanes):
        bars = []
        for r in rows:
            if r["kind"] != kind:
                continue
            start = (r["start_ts"] - t0) / 1000
            stop = ((r["end_ts"] if r["end_ts"] is not None else end) - t0) / 1000
            bars.append((start, max(stop - start, span / 300)))
        ax.broken_barh(bars, (y - 0.35, 0.7), facecolors=colour)
    ax.set_yticks(range(len(lanes)), [k.replace("_", " ") for k, _ in lanes])
    ax.invert_yaxis()
    ax.set_xlim(0, span * 1.02)
    ax.set_xlabel("seconds since first message")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(PLOTS["incidents.png"] + ("" if rows else ": none"))
    save(fig, "incidents.png")


def _fmt_duration(ms: float | None) -> str:
    if ms is None:
        return "ongoing"
    return "instant" if ms == 0 else f"{ms / 1000:.2f} s"


def _incidents_html(tables: dict[str, list[dict[str, Any]]], t0: float) -> str:
    """The first screen: the incidents, a row each, then the errors once per answer, attention first."""
    rows = tables.get("incidents", [])
    body = "".join(
        f"<tr class={html.escape(r['kind'])}><td>{_fmt_ts(r['start_ts'])}</td>"
        f"<td>+{(r['start_ts'] - t0) / 1000:.2f} s</td><td>{_fmt_duration(r['duration_ms'])}</td>"
        f"<td>{html.escape(r['kind'])}</td><td>{html.escape(r['subject'])}</td>"
        f"<td class=l>{html.escape(r['partitions'])}</td><td class=l>{html.escape(r['detail'])}</td></tr>"
        for r in rows)
    parts = ['<h2 id="incidents">Incidents</h2>',
             "<table><thead><tr><th>start</th><th>since first</th><th>duration</th><th>kind</th><th>subject</th>"
             f"<th>partitions</th><th>what and why</th></tr></thead><tbody>{body}</tbody></table>"
             if rows else "<p class=empty>none</p>",
             f'<img src="incidents.png" alt="{html.escape(PLOTS["incidents.png"])}">']
    errors = tables.get("error_answers", [])
    for expected, title in ((False, "Errors that need attention"), (True, "Expected protocol answers")):
        chosen = [e for e in errors if bool(e["expected"]) == expected]
        parts.append(f"<h3>{title} (once per answer)</h3>")
        if not chosen:
            parts.append("<p class=empty>none</p>")
            continue
        parts.append("<table><thead><tr><th>error</th><th>request</th><th>answers</th><th>partitions</th>"
                     "<th>meaning (Kafka's)</th></tr></thead><tbody>" + "".join(
                         f"<tr><td>{html.escape(e['error'])}</td><td>{html.escape(e['request'])}</td>"
                         f"<td>{e['answers']:,}</td><td>{e['partitions']:,}</td>"
                         f"<td class=l>{html.escape(e['meaning'])}</td></tr>" for e in chosen)
                     + "</tbody></table>")
    return "".join(parts)


def _html_table(rows: list[dict[str, Any]], limit: int) -> str:
    if not rows:
        return "<p class=empty>none</p>"
    cols = list(rows[0])
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in cols)
    body = []
    for r in rows[:limit]:
        cells = []
        for c in cols:
            v = r.get(c)
            if c.endswith("_ts") or c == "ts":
                v = _fmt_ts(v)
            cells.append(f"<td>{html.escape('' if v is None else str(v))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = f"<p class=more>{len(rows) - limit} more rows in the CSV</p>" if len(rows) > limit else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{more}"


def build_report(out_dir: str, result: dict[str, Any] | None = None, *, find: IncidentFinder) -> str:
    """Write index.html and the PNG plots into ``out_dir``; return the path of index.html."""
    result = add_incidents(result or load_result(out_dir), out_dir, find=find)
    meta, tables = result["meta"], result["tables"]
    os.makedirs(out_dir, exist_ok=True)
    _plots(out_dir, tables, meta.get("first_ts") or 0.0)
    warn = "".join(f"<li>{html.escape(w)}</li>" for w in meta.get("warnings", []))
    facts = [
        ("inputs", ", ".join(meta.get("inputs", []))),
        ("processes", ", ".join(meta.get("processes", []))),
        ("messages", f"{meta.get('messages', 0):,}"),
        ("first message", _fmt_ts(meta.get("first_ts"))),
        ("last message", _fmt_ts(meta.get("last_ts"))),
        ("time bucket", f"{meta.get('bucket_ms')} ms"),
        ("slow event threshold", f"{meta.get('slow_event_ms')} ms"),
    ]
    parts = [
        "<!doctype html><html><head><meta charset=utf-8><title>kactor trace summary</title><style>",
        "body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;margin:.5em 0}"
        "td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px;text-align:right}th{background:#eee}"
        "td:first-child,th:first-child{text-align:left}img{max-width:100%;border:1px solid #ddd}"
        ".warn{color:#a40}.empty,.more{color:#777}td.l{text-align:left}"
        "tr.partition_offline td,tr.broker_down td,tr.produce_stall td{background:#fde8e4}"
        "tr.under_replicated td{background:#fff6d5}",
        "</style></head><body><h1>kactor trace summary</h1><table>",
        "".join(f"<tr><th>{k}</th><td>{html.escape(str(v))}</td></tr>" for k, v in facts),
        "</table>",
        f"<h2 class=warn>Warnings</h2><ul class=warn>{warn}</ul>" if warn else "",
        _incidents_html(tables, meta.get("first_ts") or 0.0),
        "<h2>Plots</h2>",
        "".join(f'<h3>{html.escape(title)}</h3><img src="{name}" alt="{html.escape(title)}">'
                for name, title in PLOTS.items() if name != "incidents.png"),
    ]
    for name, title, limit in HTML_TABLES:
        if name in ("incidents", "error_answers"):
            continue
        parts.append(f'<h2 id="{name}">{html.escape(title)}</h2>'
                     f'<p><a href="{name}.csv">{name}.csv</a> · <a href="{name}.json">{name}.json</a></p>')
        parts.append(_html_table(tables.get(name, []), limit))
    parts.append("</body></html>\n")
    path = os.path.join(out_dir, "index.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(parts))
    return path


def _print_incidents(console: Any, t: dict[str, list[dict[str, Any]]], t0: float | None) -> None:
    from rich.markup import escape
    from rich.table import Table

    rows = t.get("incidents", [])
    tab = Table(title=f"Incidents ({len(rows)})", title_justify="left")
    for c in ("start", "duration", "kind", "subject", "what and why"):
        tab.add_column(c, justify="right" if c in ("start", "duration") else "left",
                       overflow="fold", ratio=4 if c == "what and why" else None)
    for r in rows:
        rel = f"+{(r['start_ts'] - t0) / 1000:.2f} s" if t0 is not None else _fmt_ts(r["start_ts"])
        subject = r["subject"] + (f" [{r['partitions']}]" if r["partitions"] else "")
        tab.add_row(rel, _fmt_duration(r["duration_ms"]), r["kind"], escape(subject), escape(r["detail"]))
    console.print(tab)
    errors = t.get("error_answers", [])
    for expected, title in ((False, "Errors that need attention"), (True, "Expected protocol answers")):
        chosen = ", ".join(f"{e['error']} ({e['request']}): {e['answers']:,}" for e in errors
                           if bool(e["expected"]) == expected)
        console.print(f"{title} (once per answer): {chosen or 'none'}")


def print_summary(result: dict[str, Any], out_dir: str | None = None, console: Any = None, *,
                  find: IncidentFinder) -> None:
    """A short summary on the terminal: totals, top message types, slowest events, elections, anomalies."""
    from rich.console import Console
    from rich.table import Table

    # soft_wrap: a line longer than the terminal (a report's path, the totals) is not broken at its width, so a path
    # can be copied and a reader of piped output (a test, grep) finds each line whole; tables still fit the width
    console = console or Console(soft_wrap=True)
    result = add_incidents(result, out_dir, find=find)
    meta, t = result["meta"], result["tables"]
    span = ((meta["last_ts"] - meta["first_ts"]) / 1000) if meta.get("first_ts") is not None else 0.0
    console.print(f"[bold]{meta['messages']:,}[/] messages from {len(meta['processes'])} process(es) over "
                  f"{span:,.1f} s ({_fmt_ts(meta.get('first_ts'))} → {_fmt_ts(meta.get('last_ts'))})")
    for w in meta.get("warnings", []):
        console.print(f"[yellow]warning:[/] {w}")
    _print_incidents(console, t, meta.get("first_ts"))

    tab = Table(title="Top message types")
    tab.add_column("type")
    tab.add_column("count", justify="right")
    for r in t.get("messages_by_type", [])[:8]:
        tab.add_row(r["type"], f"{r['count']:,}")
    console.print(tab)

    tab = Table(title="Controller events (ms)")
    for c in ("event", "count", "queue p99", "proc p50", "proc p99", "proc max"):
        tab.add_column(c, justify="left" if c == "event" else "right")
    rows = sorted(t.get("controller_event_times", []), key=lambda r: -(r["processing_ms_max"] or 0))[:8]
    for r in rows:
        tab.add_row(r["event"], f"{r['count']:,}", f"{r['queue_ms_p99']}", f"{r['processing_ms_p50']}",
                    f"{r['processing_ms_p99']}", f"{r['processing_ms_max']}")
    console.print(tab)

    elections = ", ".join(f"{r['strategy']}/{r['kind']}: {r['count']:,}" for r in t.get("leader_elections", []))
    console.print(f"Leader elections: {elections or 'none'}")
    # errors and controller changes are above, once per answer and with their cause
    anomalies = ", ".join(f"{r['kind']}: {r['count']:,}" for r in t.get("anomaly_counts", [])
                          if r["kind"] not in ("error", "stale_controller_epoch", "controller_change"))
    console.print(f"Other signals: {anomalies or 'none'}")
    if out_dir:
        console.print(f"Tables (JSON, CSV) in {out_dir}" + (
            f"; report: {os.path.join(out_dir, 'index.html')}"
            if os.path.exists(os.path.join(out_dir, "index.html")) else ""))
