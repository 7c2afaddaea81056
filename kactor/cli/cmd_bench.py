"""``kactor bench NAME [--scale S] [--runs N]``: run one benchmark workload (bench/), print its figure beside the
same run's ZooKeeper ceiling and Kafka's anchor, and (run from a checkout) append a dated line to
docs/performance.md. bench/ is a package of the kactor distribution, so an installed kactor has the command too."""

from __future__ import annotations

import argparse

from bench.workloads import MODULES


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="run a benchmark against Kafka's published figures",
                       description="Run one benchmark on a real ZooKeeper and real broker processes. --scale 1 is "
                                   "the published workload's size; smaller scales shrink every count.")
    p.add_argument("name", choices=list(MODULES))
    p.add_argument("--scale", type=float, default=1.0, help="fraction of the published size (default 1)")
    p.add_argument("--runs", type=int, default=3, help="measured runs (median, min, max; default 3)")
    p.add_argument("--tmpfs", action="store_true", help="ZooKeeper's data dir on /dev/shm (no fsync cost)")
    p.add_argument("--no-doc", action="store_true",
                   help="do not append the result to docs/performance.md (only a run from a checkout appends)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bench.workloads import run_workload
    from kactor.cli import CliError

    if args.scale <= 0 or args.runs < 1:
        raise CliError("--scale must be > 0 and --runs >= 1", 2)
    run_workload(args.name, args.scale, args.runs, args.tmpfs, not args.no_doc)
    return 0
