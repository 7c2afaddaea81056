"""Spark vs DuckDB on the same generated trace: `python -m spark.bench N [TRACE_DIR]`.

Spark: the whole summary end to end — session start, validation, every table — then stop.
DuckDB: only the main aggregation — messages by type, and controller-event queue-time percentiles by event — read
from the same files with explicit columns. The ratio says what Spark's generality and start-up cost here.
"""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
import time
from typing import Any

from spark.generate import generate
from spark.session import active_session, cds_archive_missing, prepare_cds_archive

DUCKDB_COLUMNS = ("{'trace_version': 'BIGINT', 'seq': 'BIGINT', 'ts': 'DOUBLE', 'sender': 'VARCHAR', "
                  "'receiver': 'VARCHAR', 'type': 'VARCHAR', 'payload': 'JSON', 'cause': 'BIGINT'}")


def duckdb_summary(trace_dir: str, threads: int = 2) -> dict[str, Any]:
    """Messages by type and event queue-time percentiles (ms) by event, with DuckDB."""
    import duckdb

    files = sorted(glob.glob(os.path.join(trace_dir, "*.jsonl")))
    con = duckdb.connect()
    try:
        con.execute(f"SET threads = {int(threads)}")
        src = (f"read_json({files!r}, format='newline_delimited', columns={DUCKDB_COLUMNS}, "
               "maximum_object_size=67108864, ignore_errors=true)")
        con.execute(f"CREATE TEMP VIEW trace AS SELECT * FROM {src} WHERE trace_version IS NULL AND type IS NOT NULL")
        by_type = con.execute("SELECT type, count(*) AS n FROM trace GROUP BY type ORDER BY n DESC, type").fetchall()
        events = con.execute(
            "SELECT payload->>'event' AS event, count(*) AS n, "
            "quantile_disc(q, [0.5, 0.95, 0.99]) AS p, max(q) AS mx FROM ("
            "  SELECT payload, CAST(payload->>'started_ms' AS DOUBLE) - CAST(payload->>'enqueued_ms' AS DOUBLE) AS q"
            "  FROM trace WHERE type = 'ControllerEventProcessed') GROUP BY event ORDER BY event").fetchall()
    finally:
        con.close()
    return {"messages_by_type": by_type, "event_queue_ms": events}


def _peak_rss_bytes(pid: int) -> int | None:
    """The peak resident set size (VmHWM) of process ``pid``, or None where /proc does not say."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def spark_summary(trace_dir: str, master: str | None = None) -> dict[str, Any]:
    """The full summary, session start and stop included. ``result["driver_peak_rss"]``: the driver JVM's peak
    resident size in bytes (local mode: the executors run in it too), read just before the JVM stops."""
    from pyspark import SparkContext

    from spark.session import active_session, build_session, stop_session
    from spark.summarize import summarize

    owned = active_session() is None  # a session already running (tests) is reused and left running
    spark = build_session(master, app_name="kactor-bench")
    try:
        result = summarize(spark, [trace_dir], None)
        proc = getattr(SparkContext._gateway, "proc", None)
        result["driver_peak_rss"] = _peak_rss_bytes(proc.pid) if proc is not None else None
        return result
    finally:
        if owned:
            stop_session(spark)


def bench_trace_summary(messages: int = 1_000_000, brokers: int = 5, partitions: int = 1000, seed: int = 0,
                        trace_dir: str | None = None, master: str | None = None,
                        keep: bool = False) -> dict[str, Any]:
    """Generate a trace (unless ``trace_dir`` already holds one), then time Spark and DuckDB on it.

    Returns the sizes, ``generate_s``, ``spark_s``, ``duckdb_s`` and ``ratio`` (spark_s / duckdb_s), and checks that
    both engines count the same messages.
    """
    own = trace_dir is None
    trace_dir = trace_dir or tempfile.mkdtemp(prefix="kactor-bench-trace-")
    try:
        gen_s = 0.0
        if not glob.glob(os.path.join(trace_dir, "*.jsonl")):
            gen_s = generate(trace_dir, messages, brokers, partitions, seed).elapsed_s
        size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(trace_dir, "*.jsonl")))
        cds_s = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="kactor-cds-trace-") as small:  # once per install: not timed
            if active_session() is None and cds_archive_missing():
                generate(small, 20_000, brokers, min(partitions, 100), seed)
                prepare_cds_archive(small)
        cds_s = time.perf_counter() - cds_s
        load_before = os.getloadavg()  # the machine is shared: the load says how much of it the run had
        t0 = time.perf_counter()
        s = spark_summary(trace_dir, master)
        spark_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        d = duckdb_summary(trace_dir)
        duck_s = time.perf_counter() - t0
        spark_total = s["meta"]["messages"]
        duck_total = sum(n for _, n in d["messages_by_type"])
        if spark_total != duck_total:
            raise AssertionError(f"Spark counted {spark_total} messages, DuckDB {duck_total}")
        return {"messages": spark_total, "bytes": size, "trace_dir": trace_dir, "generate_s": round(gen_s, 3),
                "cds_archive_s": round(cds_s, 3),
                "spark_s": round(spark_s, 3), "spark_phases_s": s["meta"]["phases_s"], "duckdb_s": round(duck_s, 3),
                "ratio": round(spark_s / duck_s, 2) if duck_s > 0 else float("inf"),
                "driver_peak_rss": s["driver_peak_rss"],
                "load_avg": {"before": [round(x, 2) for x in load_before],
                             "after": [round(x, 2) for x in os.getloadavg()]}}
    finally:
        if own and not keep:
            shutil.rmtree(trace_dir, ignore_errors=True)


if __name__ == "__main__":
    import json
    import sys

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    print(json.dumps(bench_trace_summary(n, trace_dir=sys.argv[2] if len(sys.argv) > 2 else None), indent=1))
