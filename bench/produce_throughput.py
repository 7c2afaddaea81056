"""Produce throughput (issue #20): ``kactor bench produce`` or ``python -m bench.produce_throughput``.

librdkafka (confluent-kafka, bench/data_path.py's PRODUCER_CONFIG: acks=all, linger.ms 5, batch.size 1,000,000, no
compression) produces 1-KB records as fast as it is let to a topic of ``--partitions`` partitions on each target:

- **kactor**: 3 broker processes on a real ZooKeeper, the topic at replication factor 3 (every record appended by
  its leader, fetched by two followers, acknowledged once the high watermark passes it), not recording traces
  (a broker's default; ``--trace``: every broker records its trace);
- **ceiling** (bench/ceiling.py): the same record bytes in frames of the batch size the producer really sent to
  kactor in the same run, through a leader process to 2 follower processes over loopback sockets, each appending
  to a file in the page cache, acknowledged once both followers have — no broker logic;
- **kactor-traced** (only when named in ``--targets``): a second such cluster beside the first whose brokers record
  their traces; the two take turns run by run, and the cost of recording is the ratio of their records per broker
  CPU-second (the fair measure on 2 shared cores: bench/trace_overhead_live.py's);
- **kactor-sasl-ssl** (only when named in ``--targets``): the kactor cluster with every connection, the client's
  and the brokers' own, over SASL_SSL (bench/data_path.py's SaslSslKactorTarget); its ratio to **kactor** in the
  same run is the cost of securing the cluster (issue #29's goal: at least 0.7);
- **Tansu** (bench/tansu.py): the same client and workload on a Rust Kafka broker that keeps records in memory
  and cannot replicate (so RF 1 there: a lighter workload than kactor's, which the ratio does not correct for).

Each run measures every target once, in rotating order, so the machine's other load falls on all alike; the
figures are medians over ``--runs``. Throughput is acknowledged record bytes (values) / (first produce → last
acknowledgement). Printed beside them: CPU milliseconds per MB of every process (the client is this process), and
the load average. The ratios are kactor ÷ ceiling and kactor ÷ Tansu (higher is better for kactor).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any

from bench.common import load_average, machine_line
from bench.data_path import (
    PRODUCER_CONFIG,
    RECORD_BYTES,
    ProduceRun,
    add_common_arguments,
    broker_cpu,
    check_args,
    client_versions,
    measure_and_report,
    median_text,
    module_main,
    parse_targets,
    record_value,
    run_line,
    settle,
    start_targets,
    stop_targets,
    summary,
)

TOPIC = "bench-produce"
ALL = ("kactor", "tansu", "ceiling", "kactor-traced", "kactor-sasl-ssl")
DEFAULT_TARGETS = ("kactor", "tansu", "ceiling")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common_arguments(p, ALL, 200_000, "1-KB records produced per run and target (200,000 = 204.8 MB)",
                         default_targets=DEFAULT_TARGETS)
    p.add_argument("--max-seconds", type=float, default=30.0,
                   help="stop producing after this long in a run (a slow target is measured over what it acked)")
    p.add_argument("--profile", metavar="DIR",
                   help="record py-spy profiles of kactor's processes during each run into DIR, and print where "
                        "their CPU went")


def measure(args: argparse.Namespace) -> dict[str, list[Any]]:
    """Every target's runs: {name: [ProduceRun | CeilingRun, ...]}."""
    from bench.ceiling import run_ceiling
    from bench.data_path import produce_run
    from bench.py_spy import Profiler

    names = parse_targets(args.targets, ALL)
    value = record_value()
    results: dict[str, list[Any]] = {n: [] for n in names}
    targets = start_targets(names, args.trace, TOPIC, args.partitions)
    try:
        for run in range(args.runs):
            print(f"run {run + 1} of {args.runs} (load {load_average()})", flush=True)
            order = names[run % len(names):] + names[:run % len(names)]
            batch_records = PRODUCER_CONFIG["batch.size"] // (RECORD_BYTES + 70)
            measured: dict[str, Any] = {}
            for name in sorted(order, key=lambda n: n == "ceiling"):  # the ceiling last: it uses a run's batch size
                settle(targets)
                if name == "ceiling":
                    sent = next((measured[n] for n in ("kactor", "tansu") if n in measured), None)
                    if sent is not None and sent.batch_records:
                        batch_records = round(sent.batch_records)
                    r = run_ceiling(args.records, batch_records, value=value)
                else:
                    t = targets[name]
                    profiler = None
                    if args.profile and name.startswith("kactor"):
                        profiler = Profiler(args.profile, t.pids(), f"{name}-run{run + 1}")
                        profiler.start()
                    r = produce_run(t.bootstrap, TOPIC, args.records, args.max_seconds, t.pids(), value,
                                    client=t.client)
                    if profiler is not None:
                        print("\n".join(profiler.stop()), flush=True)
                    if r.errors:
                        print(f"  {name}: delivery errors: {r.errors[:3]}", flush=True)
                measured[name] = r
                results[name].append(r)
                print(run_line(name, r) + (f"; {r.batch_records:,.0f} records a batch"
                                           if isinstance(r, ProduceRun) else ""), flush=True)
    finally:
        stop_targets(targets)
    return results


def run(args: argparse.Namespace, command: str) -> int:
    check_args(args, ALL)
    print(f"produce throughput: {args.records:,} records of {RECORD_BYTES} B per run, {args.partitions} partitions, "
          f"{args.runs} runs; client {client_versions()}; {PRODUCER_CONFIG}; "
          f"{machine_line()}; load {load_average()}", flush=True)
    return measure_and_report(args, command, measure, ("ceiling", "tansu"), "produce throughput",
                              f"{args.records:,} × 1 KB records, {args.partitions} partitions, acks=all",
                              produce_summary)


def produce_summary(results: dict[str, list[Any]], labels: dict[str, str], baselines: tuple[str, ...]) -> list[str]:
    """summary(), and for the kactor clusters their records per broker CPU-second, recording against not."""
    out = summary(results, labels, baselines)
    per_cpu = {n: [r.records / broker_cpu(r.cpu) for r in results[n] if broker_cpu(r.cpu) > 0]
               for n in ("kactor", "kactor-traced") if n in results}
    for n, rates in per_cpu.items():
        out.append(f"{n}: {median_text(rates, '{:,.0f}')} records per broker CPU-second")
    secured = {n: [r.mb_per_s for r in results.get(n, [])] for n in ("kactor", "kactor-sasl-ssl")}
    if secured["kactor"] and secured["kactor-sasl-ssl"]:
        paired = sorted(s / p for p, s in zip(secured["kactor"], secured["kactor-sasl-ssl"], strict=False))
        ratio = statistics.median(secured["kactor-sasl-ssl"]) / statistics.median(secured["kactor"])
        runs = ", ".join(f"{x:.3f}" for x in paired)
        out.append(f"SASL_SSL against PLAINTEXT: {ratio:.3f} (medians; per run {runs}; goal ≥ 0.7, issue #29)")
    if len(per_cpu) == 2 and per_cpu["kactor"] and per_cpu["kactor-traced"]:
        paired = sorted(t / b for b, t in zip(per_cpu["kactor"], per_cpu["kactor-traced"], strict=False))
        ratio = statistics.median(paired)
        out.append(f"recording traces: ratio of records per broker CPU-second recording/not {ratio:.3f} (median of "
                   f"the runs' {', '.join(f'{x:.3f}' for x in paired)}) → overhead {1 - ratio:.1%} (budget ≤ 15 %)")
    return out


def main(argv: list[str] | None = None) -> int:
    return module_main("bench.produce_throughput", __doc__, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
