"""``kactor trace incidents TRACE_DIR... [--late-produce-ms MS] [--json]``: what happened, a line per incident
(kactor/trace/incidents/), then the errors once per answer, split into those that need attention and the
protocol's expected answers."""

from __future__ import annotations

import argparse
import json
import sys

from kactor.cli import CliError


def _positive_ms(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number: {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return v


def register(trace_subparsers: argparse._SubParsersAction) -> None:
    p = trace_subparsers.add_parser(
        "incidents", help="list what happened in a trace: brokers down, partitions offline, under-replicated, "
                          "controller changes, ISR changes, late produces, deletions, reassignments",
        description="Find the incidents in kactor traces (a line each: start, duration, kind, what and why), then "
                    "count the errors once per answer, split into those that need attention and the expected "
                    "protocol answers.")
    p.add_argument("traces", nargs="+", metavar="TRACE_DIR", help="trace folders (or .jsonl files) of one run")
    p.add_argument("--late-produce-ms", type=_positive_ms, default=None, metavar="MS",
                   help="a produce request answered later than this after it arrived is late (default 1000)")
    p.add_argument("--json", action="store_true", help="the incidents and error counts as one JSON object")

    def run(args: argparse.Namespace) -> int:
        from kactor.trace.incidents import LATE_PRODUCE_MS, errors_json, find_incidents, incidents_json, report_lines
        from kactor.trace.reader import TraceError

        try:
            found = find_incidents(args.traces, args.late_produce_ms or LATE_PRODUCE_MS)
        except TraceError as e:
            raise CliError(str(e)) from None
        if args.json:
            json.dump({"incidents": incidents_json(found), "errors": errors_json(found)}, sys.stdout, indent=1)
            print()
        else:
            for line in report_lines(found):
                print(line)
        return 0

    p.set_defaults(func=run)
