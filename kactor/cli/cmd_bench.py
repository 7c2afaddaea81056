"""``kactor bench NAME [--scale S] [--runs N]``: run one benchmark workload (bench/), print its figure beside the
same run's ZooKeeper ceiling and Kafka's anchor, and append a dated line to docs/performance.md."""

from __future__ import annotations

import argparse

WORKLOADS = ("failover", "failover-rf3", "controlled-shutdown", "broker-crash", "zk-bridge", "event-storm",
             "topic-churn")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="run a benchmark against Kafka's published figures",
                       description="Run one benchmark on a real ZooKeeper and real broker processes. --scale 1 is "
                                   "the published workload's size; smaller scales shrink every count.")
    p.add_argument("name", choices=WORKLOADS)
    p.add_argument("--scale", type=float, default=1.0, help="fraction of the published size (default 1)")
    p.add_argument("--runs", type=int, default=3, help="measured runs (median, min, max; default 3)")
    p.add_argument("--tmpfs", action="store_true", help="ZooKeeper's data dir on /dev/shm (no fsync cost)")
    p.add_argument("--no-doc", action="store_true", help="do not append the result to docs/performance.md")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import os
    import sys

    # bench/ sits beside kactor/ in the source tree and is not an installed package: make it importable
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if repo not in sys.path:
        sys.path.insert(0, repo)
    from bench.__main__ import run_workload
    from kactor.cli import CliError

    if args.scale <= 0 or args.runs < 1:
        raise CliError("--scale must be > 0 and --runs >= 1", 2)
    run_workload(args.name, args.scale, args.runs, args.tmpfs, not args.no_doc)
    return 0
