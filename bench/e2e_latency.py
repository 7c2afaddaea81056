"""End-to-end latency (issue #20): ``kactor bench e2e-latency`` or ``python -m bench.e2e_latency``.

Kafka's own ``kafka.tools.EndToEndLatency``, with librdkafka: one 1-KB record at a time is produced (acks=all,
linger.ms 0) to a one-partition topic and the producer waits for its acknowledgement; a consumer assigned to the
partition (positioned at its end before the first record; fetch.wait.max.ms 500, fetch.min.bytes 1 — the clients'
defaults) polls until that record arrives; the latency is produce call → record in the consumer's hands. The next
record goes only then, so every record meets an idle broker: the figure is the data path's per-record latency, not
its throughput. Also measured: the acknowledgement latency (produce call → acks=all answer), which on kactor
includes both followers fetching the record and the high watermark passing it.

Targets: kactor (3 brokers, RF 3, real ZooKeeper) and Tansu (RF 1, memory only: bench/tansu.py), taking turns per
run; p50 / p99 / max of each run, medians over ``--runs``; the ratios are kactor ÷ Tansu (lower is better for
kactor). Each run checks every record arrived, in order, with its bytes.
"""

from __future__ import annotations

import argparse
import statistics
import struct
import sys
import time
from dataclasses import dataclass
from typing import Any

from bench.common import load_average, machine_line
from bench.data_path import (
    RECORD_BYTES,
    add_common_arguments,
    check_args,
    client_versions,
    consumer,
    measure_and_report,
    module_main,
    parse_targets,
    producer,
    record_value,
    settle,
    start_targets,
    stop_targets,
)

TOPIC = "bench-latency"
ALL = ("kactor", "tansu")
_SEQ = struct.Struct(">q")


@dataclass
class LatencyRun:
    e2e_ms: list[float]
    ack_ms: list[float]
    load: str

    @staticmethod
    def percentile(values: list[float], q: float) -> float:
        s = sorted(values)
        return s[min(len(s) - 1, int(q * len(s)))]

    def text(self) -> str:
        p = self.percentile
        return (f"end-to-end p50 {p(self.e2e_ms, 0.5):.2f} ms, p99 {p(self.e2e_ms, 0.99):.2f} ms, max "
                f"{max(self.e2e_ms):.2f} ms; acks=all answer p50 {p(self.ack_ms, 0.5):.2f} ms, p99 "
                f"{p(self.ack_ms, 0.99):.2f} ms ({len(self.e2e_ms)} records; load {self.load})")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common_arguments(p, ALL, 1000, "round trips measured per run", partitions=False)
    p.add_argument("--warm-up", type=int, default=20, help="round trips not counted before each run's (default 20)")


def latency_run(bootstrap: str, records: int, value: bytes, warm_up: int = 20, timeout: float = 30.0) -> LatencyRun:
    """``records`` sequential round trips (after ``warm_up`` not counted); each record's first 8 bytes are its
    sequence number, so the consumer knows it has the one just sent."""
    from confluent_kafka import TopicPartition

    prod = producer(bootstrap, **{"linger.ms": 0})
    cons = consumer(bootstrap)
    try:
        _, high = cons.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=30)
        cons.assign([TopicPartition(TOPIC, 0, high)])
        acked: list[Any] = []
        e2e: list[float] = []
        ack: list[float] = []
        load = load_average()
        for seq in range(-warm_up, records):
            payload = _SEQ.pack(seq) + value[_SEQ.size:]
            del acked[:]
            t0 = time.perf_counter()
            prod.produce(TOPIC, payload, partition=0, on_delivery=lambda err, _m: acked.append(err))
            prod.flush(timeout)
            t_ack = time.perf_counter()
            if acked != [None]:
                raise RuntimeError(f"record {seq} not acknowledged: {acked}")
            deadline = time.monotonic() + timeout
            while True:
                m = cons.poll(0.1)
                if m is not None:
                    if m.error() is not None:
                        if m.error().fatal() or m.topic() == TOPIC:
                            raise RuntimeError(f"consumer error: {m.error()}")
                        continue  # the client's own (e.g. its group coordinator's): this consumer has no group
                    got = _SEQ.unpack_from(m.value())[0]
                    if got != seq or m.value() != payload:
                        raise RuntimeError(f"record {seq} expected, {got} read (out of order or corrupt)")
                    break
                if time.monotonic() > deadline:
                    raise TimeoutError(f"record {seq} acknowledged but not consumed within {timeout:.0f}s")
            t_recv = time.perf_counter()
            if seq >= 0:
                e2e.append((t_recv - t0) * 1000)
                ack.append((t_ack - t0) * 1000)
        return LatencyRun(e2e, ack, load)
    finally:
        cons.close()


def measure(args: argparse.Namespace) -> dict[str, list[Any]]:
    names = parse_targets(args.targets, ALL)
    value = record_value()
    results: dict[str, list[Any]] = {n: [] for n in names}
    targets = start_targets(names, args.trace, TOPIC, 1)
    try:
        for r in range(args.runs):
            print(f"run {r + 1} of {args.runs} (load {load_average()})", flush=True)
            for name in names[r % len(names):] + names[:r % len(names)]:
                settle(targets)
                one = latency_run(targets[name].bootstrap, args.records, value, args.warm_up)
                results[name].append(one)
                print(f"  {name:<8}{one.text()}", flush=True)
    finally:
        stop_targets(targets)
    return results


def run(args: argparse.Namespace, command: str) -> int:
    args.partitions = 1
    check_args(args, ALL)
    if args.warm_up < 0:
        from kactor.cli import CliError

        raise CliError("--warm-up must be >= 0", 2)
    print(f"end-to-end latency: {args.records:,} sequential round trips of a {RECORD_BYTES}-B record per run, "
          f"acks=all, linger.ms 0, {args.runs} runs; client {client_versions()}; {machine_line()}", flush=True)
    return measure_and_report(args, command, measure, ("tansu",), "end-to-end latency",
                              f"{args.records:,} sequential 1 KB records, acks=all", summary)


def summary(results: dict[str, list[LatencyRun]], labels: dict[str, str], _baselines: tuple[str, ...]) -> list[str]:
    med: dict[str, dict[str, float]] = {}
    out = []
    for n, runs in results.items():
        pick = {"p50": [LatencyRun.percentile(r.e2e_ms, 0.5) for r in runs],
                "p99": [LatencyRun.percentile(r.e2e_ms, 0.99) for r in runs],
                "ack p50": [LatencyRun.percentile(r.ack_ms, 0.5) for r in runs],
                "ack p99": [LatencyRun.percentile(r.ack_ms, 0.99) for r in runs]}
        med[n] = {k: statistics.median(v) for k, v in pick.items()}
        out.append(f"{n:<8}: end-to-end p50 {med[n]['p50']:.2f} ms, p99 {med[n]['p99']:.2f} ms; acks=all answer "
                   f"p50 {med[n]['ack p50']:.2f} ms, p99 {med[n]['ack p99']:.2f} ms (medians of {len(runs)} runs; "
                   f"p50 per run {', '.join(f'{x:.2f}' for x in pick['p50'])})  [{labels[n]}]")
    if "kactor" in med and "tansu" in med:
        out.append("ratio kactor/tansu: " + ", ".join(f"{k} {med['kactor'][k] / med['tansu'][k]:.2f}"
                                                      for k in ("p50", "p99", "ack p50") if med["tansu"][k]))
    return out


def main(argv: list[str] | None = None) -> int:
    return module_main("bench.e2e_latency", __doc__, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
