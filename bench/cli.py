"""``kactor bench NAME [--scale S] [--runs N]``: run one benchmark workload (bench/), print its figure beside the
same run's ZooKeeper ceiling and Kafka's anchor, and (run from a checkout) append a dated line to
docs/performance.md. bench/ is a package of the kactor distribution, so an installed kactor has the command too;
kactor's CLI names this module in its command table (kactor.cli.COMMANDS) and imports it only when ``bench`` runs.

The data path's benchmarks have flags of their own: ``kactor bench produce`` (bench/produce_throughput.py),
``kactor bench fetch`` (bench/fetch_throughput.py) and ``kactor bench e2e-latency`` (bench/e2e_latency.py), each a
librdkafka client against a kactor cluster and, in the same run, its baselines.
"""

from __future__ import annotations

import argparse
import importlib
import shlex
import sys

from bench.workloads import MODULES

# name → (module with add_arguments(parser) and run(args, command), help)
DATA_PATH: dict[str, tuple[str, str]] = {
    "produce": ("bench.produce_throughput",
                "produce throughput (MB/s, records/s) at acks=all, RF 3, against the loopback+page-cache ceiling "
                "and Tansu"),
    "fetch": ("bench.fetch_throughput", "consumer fetch throughput from the beginning, against Tansu"),
    "e2e-latency": ("bench.e2e_latency", "end-to-end latency p50/p99 (produce acks=all → consumed), against Tansu"),
    "cleaner": ("bench.cleaner", "the log cleaner's MB/s against a plain read-and-rewrite of the same segments, and "
                                 "a group load of a compacted against an uncompacted __consumer_offsets partition"),
    "txn-produce": ("bench.txn_produce", "transactional produce (100 records a transaction) against idempotent "
                                         "produce, acks=all, RF 3, records/s and their ratio"),
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench",
                       description="Run one benchmark on a real ZooKeeper and real broker processes. --scale 1 is "
                                   "the published workload's size; smaller scales shrink every count.")
    names = p.add_subparsers(dest="name", metavar="NAME", required=True, parser_class=type(p))
    for name in MODULES:
        w = names.add_parser(name, help=f"the {name} workload (--scale, --runs)")
        w.add_argument("--scale", type=float, default=1.0, help="fraction of the published size (default 1)")
        w.add_argument("--runs", type=int, default=3, help="measured runs (median, min, max; default 3)")
        w.add_argument("--tmpfs", action="store_true", help="ZooKeeper's data dir on /dev/shm (no fsync cost)")
        w.add_argument("--no-doc", action="store_true",
                       help="do not append the result to docs/performance.md (only a run from a checkout appends)")
        w.set_defaults(func=run)
    for name, (module, text) in DATA_PATH.items():
        d = names.add_parser(name, help=text, description=text)
        importlib.import_module(module).add_arguments(d)
        d.set_defaults(func=run_data_path)


def run(args: argparse.Namespace) -> int:
    from bench.workloads import run_workload
    from kactor.cli import CliError

    if args.scale <= 0 or args.runs < 1:
        raise CliError("--scale must be > 0 and --runs >= 1", 2)
    run_workload(args.name, args.scale, args.runs, args.tmpfs, not args.no_doc)
    return 0


def run_data_path(args: argparse.Namespace) -> int:
    module = importlib.import_module(DATA_PATH[args.name][0])
    argv = sys.argv[sys.argv.index(args.name) + 1:] if args.name in sys.argv else []
    return int(module.run(args, shlex.join(["kactor", "bench", args.name, *argv])))
