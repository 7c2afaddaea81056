"""`spark-submit spark/job.py TRACE_DIR... --out DIR [--no-report]`: the trace summary as a Spark application."""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv: list[str] | None = None) -> int:
    from spark.load import TraceInputError
    from spark.report import build_report, print_summary
    from spark.session import build_session
    from spark.summarize import summarize

    parser = argparse.ArgumentParser(prog="spark/job.py", description="Summarise kactor traces with Spark.")
    parser.add_argument("traces", nargs="+", metavar="TRACE_DIR")
    parser.add_argument("--out", required=True, metavar="DIR")
    parser.add_argument("--report", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--bucket-ms", type=int, default=None)
    args = parser.parse_args(argv)
    spark = build_session()
    try:
        result = summarize(spark, args.traces, args.out, bucket_ms=args.bucket_ms)
    except TraceInputError as e:
        print(f"spark/job.py: {e}", file=sys.stderr)
        return 1
    finally:
        spark.stop()
    if args.report:
        build_report(args.out, result)
    print_summary(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
