"""Consumer fetch throughput (issue #20): ``kactor bench fetch`` or ``python -m bench.fetch_throughput``.

``--records`` 1-KB records are produced once (acks=all, not timed) to a topic of ``--partitions`` partitions on
each target — kactor (3 brokers, RF 3, a real ZooKeeper) and Tansu beside it (RF 1, memory only: bench/tansu.py) —
then each run a fresh librdkafka consumer (bench/data_path.py's CONSUMER_CONFIG: assigned partitions, no group
membership, fetch.max.bytes 50 MB, 1 MB per partition) reads every partition from the beginning to its end. The
figure is record bytes read / (first consume call → last record); each run checks every record came back, in offset
order with no gap, with the bytes produced. Targets take turns, rotating, so the machine's other load falls on both
alike; medians over ``--runs``; the ratio is kactor ÷ Tansu (higher is better for kactor).

The consumer's ``fetch.queue.backoff.ms`` is 10 (``--fetch-queue-backoff-ms``): librdkafka's default, 1000, stops
fetching a partition for a whole second whenever its pre-fetch queue (queued.max.messages.kbytes, 64 MB) is full,
so a broker that serves faster than the application drains is measured as a one-second sleep (the bimodal runs of
docs/performance-log.md, "Consumer fetch and librdkafka's queue backoff"). librdkafka's documentation says to
lower it for exactly this; Kafka's Java consumer has no such wait (it fetches again once its buffer is drained).

On kactor a consumer reads from the leaders, which read their logs (`Log.read`: the segment files, through the
page cache); Tansu serves from memory.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bench.common import load_average, machine_line
from bench.data_path import (
    CONSUMER_CONFIG,
    RECORD_BYTES,
    WARM_UP,
    add_common_arguments,
    check_args,
    client_versions,
    consume_run,
    measure_and_report,
    module_main,
    parse_targets,
    produce_run,
    record_value,
    run_line,
    settle,
    start_targets,
    stop_targets,
)

TOPIC = "bench-fetch"
ALL = ("kactor", "tansu")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common_arguments(p, ALL, 200_000, "1-KB records in the topic, read whole by every run (200,000 = 204.8 MB)")
    p.add_argument("--fetch-queue-backoff-ms", type=int, default=10, metavar="MS",
                   help="the consumer's fetch.queue.backoff.ms (default 10; librdkafka's own default is 1000: a "
                   "one-second pause whenever its 64 MB pre-fetch queue is full)")


def measure(args: argparse.Namespace) -> dict[str, list[Any]]:
    names = parse_targets(args.targets, ALL)
    value = record_value()
    results: dict[str, list[Any]] = {n: [] for n in names}
    targets = start_targets(names, args.trace, TOPIC, args.partitions)
    try:
        ends: dict[str, dict[int, int]] = {}
        for name, t in targets.items():
            filled = produce_run(t.bootstrap, TOPIC, args.records, 600.0, t.pids(), value, track_ends=True)
            if filled.errors or filled.records != args.records:
                raise RuntimeError(f"{name}: {filled.records:,} of {args.records:,} records acknowledged "
                                   f"({filled.errors[:3]})")
            ends[name] = {p: filled.ends.get(p, 1) for p in range(args.partitions)}  # 1: the warm-up record
            print(f"  {name}: {args.records:,} records produced (acks=all), ends {ends[name]}", flush=True)

        def same_bytes(_p: int, _off: int, v: bytes) -> bool:
            return v in (value, WARM_UP)

        for run in range(args.runs):
            print(f"run {run + 1} of {args.runs} (load {load_average()})", flush=True)
            for name in names[run % len(names):] + names[:run % len(names)]:
                settle(targets)
                t = targets[name]
                r = consume_run(t.bootstrap, TOPIC, ends[name], t.pids(), check=same_bytes,
                                **{"fetch.queue.backoff.ms": args.fetch_queue_backoff_ms})
                if r.out_of_order:
                    raise RuntimeError(f"{name}: {r.out_of_order} records out of order, missing or not as produced")
                results[name].append(r)
                print(run_line(name, r), flush=True)
    finally:
        stop_targets(targets)
    return results


def run(args: argparse.Namespace, command: str) -> int:
    from kactor.cli import CliError

    check_args(args, ALL)
    if args.fetch_queue_backoff_ms < 0:
        raise CliError("--fetch-queue-backoff-ms must be >= 0", 2)
    print(f"fetch throughput: {args.records:,} records of {RECORD_BYTES} B, {args.partitions} partitions, read "
          f"whole {args.runs} times; client {client_versions()}; {CONSUMER_CONFIG}, fetch.queue.backoff.ms "
          f"{args.fetch_queue_backoff_ms}; {machine_line()}", flush=True)
    return measure_and_report(args, command, measure, ("tansu",), "fetch throughput",
                              f"{args.records:,} × 1 KB records, {args.partitions} partitions, from the beginning")


def main(argv: list[str] | None = None) -> int:
    return module_main("bench.fetch_throughput", __doc__, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
