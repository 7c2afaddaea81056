"""``kactor trace summarize TRACE_DIR... [--out DIR] [--master URL] [--conf K=V]... [--report/--no-report]``: the
Spark summary, in local mode or on a Spark standalone cluster (docs/deploy.md)."""

from __future__ import annotations

import argparse
import os
import re

from kactor.cli import CliError

# The master URLs Spark 3.5/4 knows; anything else would fail inside the JVM with a stack trace.
_MASTER_RE = re.compile(r"local|local\[(\*|\d+)(,\d+)?\]|local-cluster\[\d+,\d+,\d+\]|spark://.+|yarn|k8s://.+")


def register(trace_subparsers: argparse._SubParsersAction) -> None:
    p = trace_subparsers.add_parser(
        "summarize", help="summarise traces with Spark: tables (JSON, CSV), an HTML report, a terminal summary",
        description="Summarise kactor traces (JSON-lines folders, or Parquet from `kactor trace convert`) with "
                    "Spark, writing one JSON and one CSV file per table, and index.html with plots.")
    p.add_argument("traces", nargs="+", metavar="TRACE_DIR",
                   help="trace folder(s) (or <process>.jsonl files); a `kactor sim --trace-dir` folder summarises "
                        "every seed's traces, its processes named seed-N/<process>")
    p.add_argument("--out", default="trace-summary", metavar="DIR", help="output folder (default: ./trace-summary)")
    p.add_argument("--master", default=None, metavar="URL",
                   help="Spark master URL (default: local[2]): local[N], or spark://HOST:PORT of a standalone "
                        "cluster, whose executors read the trace folders by path: they must be at the same "
                        "absolute path on this machine and on every worker (a shared mount)")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark property, as spark-submit's --conf (repeatable); e.g. spark.driver.host=ADDRESS "
                        "for workers on other machines (the driver binds 127.0.0.1 otherwise), "
                        "spark.executor.memory (default 2g), spark.executor.cores (default 1)")
    p.add_argument("--executor-timeout", type=float, default=None, metavar="S",
                   help="with a cluster master: give up if no executor registers within S seconds (default 60)")
    p.add_argument("--report", action=argparse.BooleanOptionalAction, default=True,
                   help="write index.html with PNG plots (default: yes)")
    p.add_argument("--bucket-ms", type=int, default=None, metavar="MS",
                   help="time-series bucket width (default: chosen from the trace's time span)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spark.load import TraceInputError, discover

    if args.bucket_ms is not None and args.bucket_ms <= 0:
        raise CliError("--bucket-ms must be positive", code=2)
    if args.master is not None and not _MASTER_RE.fullmatch(args.master):
        raise CliError(f"--master {args.master}: not a Spark master URL (local[N], spark://HOST:PORT, ...)", code=2)
    if args.executor_timeout is not None and args.executor_timeout <= 0:
        raise CliError("--executor-timeout must be positive", code=2)
    conf = {}
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CliError(f"--conf {item}: expected KEY=VALUE", code=2)
        conf[key.strip()] = value
    try:
        source = discover(args.traces)  # bad input fails here, before Spark starts
    except TraceInputError as e:
        raise CliError(str(e)) from None
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise CliError(f"{args.out}: exists and is not a folder")

    from kactor.trace.incidents import report_rows
    from spark.report import build_report, print_summary
    from spark.session import EXECUTOR_WAIT_S, SparkMasterError, active_session, build_session
    from spark.summarize import summarize

    owned = active_session() is None
    try:
        spark = build_session(args.master, conf=conf, executor_wait_s=args.executor_timeout or EXECUTOR_WAIT_S)
    except SparkMasterError as e:
        raise CliError(str(e)) from None
    try:
        result = summarize(spark, args.traces, args.out, bucket_ms=args.bucket_ms, source=source)
    except TraceInputError as e:
        raise CliError(str(e)) from None
    finally:
        if owned:
            spark.stop()
    if args.report:
        build_report(args.out, result, find=report_rows)
    print_summary(result, args.out, find=report_rows)
    return 0
