"""``kactor trace convert TRACE_DIR... --out DIR [--master URL]``: JSON-lines traces → Parquet (same schema)."""

from __future__ import annotations

import argparse
import os

from kactor.cli import CliError


def register(trace_subparsers: argparse._SubParsersAction) -> None:
    p = trace_subparsers.add_parser(
        "convert", help="convert JSON-lines traces to one Parquet dataset (readable by `trace summarize`)",
        description="Validate JSON-lines trace folders and write their records as one Parquet dataset with the "
                    "trace schema (process, seq, ts, sender, receiver, type, payload, cause).")
    p.add_argument("traces", nargs="+", metavar="TRACE_DIR", help="trace folder(s) (or <process>.jsonl files)")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (replaced if it holds a dataset)")
    p.add_argument("--master", default=None, metavar="URL", help="Spark master URL (default: local[2])")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spark.convert import convert, refuse
    from spark.load import TraceInputError, discover

    try:
        refuse(discover(args.traces), args.out)
    except TraceInputError as e:
        raise CliError(str(e)) from None
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise CliError(f"{args.out}: exists and is not a folder")

    from spark.session import active_session, build_session

    owned = active_session() is None
    spark = build_session(args.master, app_name="kactor-trace-convert")
    try:
        info = convert(spark, args.traces, args.out)
    except TraceInputError as e:
        raise CliError(str(e)) from None
    finally:
        if owned:
            spark.stop()
    for w in info["warnings"]:
        print(f"warning: {w}")
    print(f"wrote {info['messages']:,} messages of {len(info['processes'])} process(es) to {args.out} (Parquet)")
    return 0
