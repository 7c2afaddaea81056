"""``kactor trace generate --messages N --brokers B --partitions P --out DIR [--seed S]``: a synthetic trace."""

from __future__ import annotations

import argparse
import os

from kactor.cli import CliError


def register(trace_subparsers: argparse._SubParsersAction) -> None:
    p = trace_subparsers.add_parser(
        "generate", help="write a synthetic, valid trace (one broker-<id>.jsonl per broker)",
        description="Write a synthetic but valid kactor trace: controller events, elections, broker failures, "
                    "requests, gauges, deletions, reassignments. Deterministic for a given --seed.")
    p.add_argument("--messages", type=int, default=10_000, metavar="N", help="record lines in all (default 10000)")
    p.add_argument("--brokers", type=int, default=3, metavar="B", help="broker processes (default 3)")
    p.add_argument("--partitions", type=int, default=100, metavar="P", help="partitions in the cluster (default 100)")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spark.generate import generate

    for name in ("messages", "brokers", "partitions"):
        if getattr(args, name) < 1:
            raise CliError(f"--{name} must be at least 1", code=2)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise CliError(f"{args.out}: exists and is not a folder")
    stats = generate(args.out, args.messages, args.brokers, args.partitions, args.seed)
    rate = stats.messages / stats.elapsed_s if stats.elapsed_s > 0 else 0.0
    print(f"wrote {stats.messages:,} messages for {len(stats.files)} broker(s), {stats.partitions} partitions in "
          f"{stats.topics} topics, to {args.out} in {stats.elapsed_s:.2f} s ({rate:,.0f} lines/s)")
    return 0
