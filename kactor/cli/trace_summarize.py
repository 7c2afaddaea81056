"""``kactor trace summarize TRACE_DIR... [--out DIR] [--master URL] [--report/--no-report]``: the Spark summary."""

from __future__ import annotations

import argparse
import os

from kactor.cli import CliError


def register(trace_subparsers: argparse._SubParsersAction) -> None:
    p = trace_subparsers.add_parser(
        "summarize", help="summarise traces with Spark: tables (JSON, CSV), an HTML report, a terminal summary",
        description="Summarise kactor traces (JSON-lines folders, or Parquet from `kactor trace convert`) with "
                    "Spark, writing one JSON and one CSV file per table, and index.html with plots.")
    p.add_argument("traces", nargs="+", metavar="TRACE_DIR", help="trace folder(s) (or <process>.jsonl files)")
    p.add_argument("--out", default="trace-summary", metavar="DIR", help="output folder (default: ./trace-summary)")
    p.add_argument("--master", default=None, metavar="URL", help="Spark master URL (default: local[2])")
    p.add_argument("--report", action=argparse.BooleanOptionalAction, default=True,
                   help="write index.html with PNG plots (default: yes)")
    p.add_argument("--bucket-ms", type=int, default=None, metavar="MS",
                   help="time-series bucket width (default: chosen from the trace's time span)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spark.load import TraceInputError, discover

    if args.bucket_ms is not None and args.bucket_ms <= 0:
        raise CliError("--bucket-ms must be positive", code=2)
    try:
        source = discover(args.traces)  # bad input fails here, before Spark starts
    except TraceInputError as e:
        raise CliError(str(e)) from None
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise CliError(f"{args.out}: exists and is not a folder")

    from spark.report import build_report, print_summary
    from spark.session import active_session, build_session
    from spark.summarize import summarize

    owned = active_session() is None
    spark = build_session(args.master)
    try:
        result = summarize(spark, args.traces, args.out, bucket_ms=args.bucket_ms, source=source)
    except TraceInputError as e:
        raise CliError(str(e)) from None
    finally:
        if owned:
            spark.stop()
    if args.report:
        build_report(args.out, result)
    print_summary(result, args.out)
    return 0
