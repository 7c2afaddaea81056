"""Transactional produce against idempotent produce (issue #27): ``kactor bench txn-produce`` or
``python -m bench.txn_produce``.

A kactor cluster (3 broker processes on a real ZooKeeper, the topic at replication factor 3) and one librdkafka
client (confluent-kafka), 1-KB records, acks=all, in each run every way in turn (the order alternates run by run, so
the machine's other load falls on all alike):

- **idempotent**: ``enable.idempotence`` (InitProducerId, sequence numbers), ``--records`` records produced as fast
  as the producer takes them, then flushed;
- **transactional**: a ``transactional.id`` producer (InitProducerId through the transaction coordinator), the same
  records in transactions of ``--per-txn`` (100) records each: begin, produce, commit (AddPartitionsToTxn, the
  records, EndTxn; the coordinator writes __transaction_state and the COMMIT markers to the partitions).

- **unverified**: the transactional way again, against a second cluster started with
  ``transaction.partition.verification.enable=false`` (issue #40; the first cluster's is ``true``): the cost of
  KIP-890 part 1's verification (each
  transaction's first batch to each partition waits for the coordinator's verify-only AddPartitionsToTxn) is the
  ratio transactional ÷ unverified.

Throughput is acknowledged record bytes (values) / (first produce → last acknowledgement, a transaction's records
being acknowledged when its commit returns). The ratio is transactional ÷ idempotent records/s (the cost of the
transactions: 1.0 would be free). The librdkafka producer's other settings are bench/data_path.py's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

from bench.common import IN_CHECKOUT, append_doc_line, git_commit, load_average, machine_line, start_together
from bench.data_path import (
    PRODUCER_CONFIG,
    RECORD_BYTES,
    CpuMeter,
    KactorTarget,
    ProduceRun,
    broker_cpu,
    client_versions,
    median_text,
    producer,
    record_value,
    warm_up,
)

TOPIC = "bench-txn-produce"
WAYS = ("idempotent", "transactional", "unverified")
# both named, whatever the brokers' default (on since issue #40; 2.6.3 has no verification)
VERIFIED = ("transaction.partition.verification.enable=true",)
UNVERIFIED = ("transaction.partition.verification.enable=false",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--records", type=int, default=50_000,
                   help="1-KB records produced per run and way (default 50,000 = 51.2 MB)")
    p.add_argument("--per-txn", type=int, default=100, help="records per transaction (default 100)")
    p.add_argument("--partitions", type=int, default=3, help="partitions of the topic (default 3)")
    p.add_argument("--runs", type=int, default=3, help="measured runs (median, min, max; default 3)")
    p.add_argument("--max-seconds", type=float, default=120.0,
                   help="stop producing after this long in a run (the run is measured over what was acknowledged)")
    p.add_argument("--no-doc", action="store_true", help="do not append the result to docs/performance.md")
    p.add_argument("--profile", metavar="DIR",
                   help="record py-spy profiles of the brokers during each transactional run into DIR, and print "
                        "where their CPU went")


def idempotent_run(bootstrap: str, records: int, max_seconds: float, pids: dict[str, int],
                   value: bytes) -> ProduceRun:
    """``records`` records from an idempotent producer as fast as it takes them, then a flush."""
    prod = producer(bootstrap, **{"enable.idempotence": True})
    acked, errors = [0], []
    last_ack = [0.0]

    def on_delivery(err: Any, _msg: Any) -> None:
        if err is None:
            acked[0] += 1
            last_ack[0] = time.perf_counter()
        elif len(errors) < 10:
            errors.append(str(err))

    load = load_average()
    meter = CpuMeter(pids)
    t0 = time.perf_counter()
    deadline = t0 + max_seconds
    sent = 0
    while sent < records and time.perf_counter() < deadline:
        try:
            prod.produce(TOPIC, value, on_delivery=on_delivery)
            sent += 1
        except BufferError:
            prod.poll(0.005)
            continue
        if sent % 1000 == 0:
            prod.poll(0)
    left = prod.flush(max(60.0, max_seconds))
    if left:
        errors.append(f"{left} records still unacknowledged after the flush")
    cpu = meter.used()
    return ProduceRun(acked[0], acked[0] * len(value), last_ack[0] - t0, cpu, 0.0, 0.0, errors, load, {})


def transactional_run(bootstrap: str, records: int, per_txn: int, max_seconds: float, pids: dict[str, int],
                      value: bytes, run: int) -> ProduceRun:
    """``records`` records in transactions of ``per_txn``: begin, produce, commit (which flushes them)."""
    from confluent_kafka import KafkaException

    prod = producer(bootstrap, **{"enable.idempotence": True, "transactional.id": f"bench-txn-{run}",
                                  "transaction.timeout.ms": 60_000})
    prod.init_transactions(60)
    errors: list[str] = []
    acked = 0
    load = load_average()
    meter = CpuMeter(pids)
    t0 = time.perf_counter()
    deadline = t0 + max_seconds
    last_ack = t0
    while acked < records and time.perf_counter() < deadline:
        n = min(per_txn, records - acked)
        prod.begin_transaction()
        for _ in range(n):
            while True:
                try:
                    prod.produce(TOPIC, value)
                    break
                except BufferError:
                    prod.poll(0.005)
        try:
            prod.commit_transaction(60)
        except KafkaException as e:
            errors.append(str(e))
            break
        acked += n
        last_ack = time.perf_counter()
    cpu = meter.used()
    return ProduceRun(acked, acked * len(value), last_ack - t0, cpu, 0.0, 0.0, errors, load, {})


def _line(way: str, r: ProduceRun) -> str:
    return (f"  {way:<13} {r.mb_per_s:7.2f} MB/s {r.records_per_s:9,.0f} records/s ({r.records:,} records in "
            f"{r.seconds:.1f} s; broker CPU {broker_cpu(r.cpu):.1f} s; load {r.load})")


def run(args: argparse.Namespace, command: str) -> int:
    from kactor.cli import CliError

    if args.records < 1 or args.per_txn < 1 or args.partitions < 1 or args.runs < 1 or args.max_seconds <= 0:
        raise CliError("--records, --per-txn, --partitions and --runs must be >= 1, --max-seconds > 0", 2)
    load_before = load_average()
    print(f"txn-produce: {args.records:,} records of {RECORD_BYTES} B per run and way, {args.per_txn} per "
          f"transaction, {args.partitions} partitions, {args.runs} runs; client {client_versions()}; "
          f"acks={PRODUCER_CONFIG['acks']}, linger.ms {PRODUCER_CONFIG['linger.ms']}; {machine_line()}; "
          f"load {load_before}", flush=True)
    value = record_value()
    results: dict[str, list[ProduceRun]] = {w: [] for w in WAYS}
    target, unverified = KactorTarget(overrides=VERIFIED), KactorTarget(overrides=UNVERIFIED)
    try:
        start_together(target, unverified)
        for t in (target, unverified):
            t.create_topic(TOPIC, args.partitions)
            warm_up(t.bootstrap, TOPIC, args.partitions)
        for i in range(args.runs):
            for way in (WAYS if i % 2 == 0 else WAYS[::-1]):
                if way == "idempotent":
                    r = idempotent_run(target.bootstrap, args.records, args.max_seconds, target.pids(), value)
                elif way == "unverified":
                    r = transactional_run(unverified.bootstrap, args.records, args.per_txn, args.max_seconds,
                                          unverified.pids(), value, i)
                else:
                    profiler = None
                    if args.profile:
                        from bench.py_spy import Profiler

                        profiler = Profiler(args.profile, target.pids(), f"transactional-run{i + 1}")
                        profiler.start()
                    r = transactional_run(target.bootstrap, args.records, args.per_txn, args.max_seconds,
                                          target.pids(), value, i)
                    if profiler is not None:
                        print("\n".join(profiler.stop()), flush=True)
                if r.errors:
                    print(f"  {way}: errors: {r.errors[:3]}", flush=True)
                results[way].append(r)
                print(_line(way, r), flush=True)
    finally:
        unverified.stop()
        target.stop()
    if not all(results[w] and all(r.records for r in results[w]) for w in WAYS):
        print("a way acknowledged nothing: no ratio", flush=True)
        return 1
    rates = {w: [r.records_per_s for r in results[w]] for w in WAYS}
    mbs = {w: [r.mb_per_s for r in results[w]] for w in WAYS}
    paired = [t / i for i, t in zip(rates["idempotent"], rates["transactional"], strict=True)]
    ratio = statistics.median(rates["transactional"]) / statistics.median(rates["idempotent"])
    verified_paired = [t / u for u, t in zip(rates["unverified"], rates["transactional"], strict=True)]
    verified_ratio = statistics.median(rates["transactional"]) / statistics.median(rates["unverified"])
    lines = [f"idempotent    : {median_text(mbs['idempotent'], '{:,.2f}')} MB/s; "
             f"{median_text(rates['idempotent'], '{:,.0f}')} records/s",
             f"transactional : {median_text(mbs['transactional'], '{:,.2f}')} MB/s; "
             f"{median_text(rates['transactional'], '{:,.0f}')} records/s ({args.per_txn} records a transaction)",
             f"ratio transactional/idempotent: {ratio:.3f} (medians; per run "
             f"{', '.join(f'{x:.3f}' for x in paired)})",
             f"unverified    : {median_text(mbs['unverified'], '{:,.2f}')} MB/s; "
             f"{median_text(rates['unverified'], '{:,.0f}')} records/s (transaction.partition.verification.enable="
             f"false)",
             f"ratio verification on/off: {verified_ratio:.3f} (medians; per run "
             f"{', '.join(f'{x:.3f}' for x in verified_paired)})",
             f"load {load_before} (before) → {load_average()} (after)"]
    print("\n".join(lines), flush=True)
    if not args.no_doc and IN_CHECKOUT:
        import datetime

        append_doc_line(
            f"- {datetime.date.today().isoformat()} `{git_commit()}` ({machine_line()}; load {load_before} → "
            f"{load_average()}) **txn-produce** {args.records:,} × 1 KB records a run, {args.partitions} partitions, "
            f"RF 3, acks=all, confluent-kafka: transactional ({args.per_txn} a transaction) "
            f"**{median_text(rates['transactional'], '{:,.0f}')} records/s** against idempotent "
            f"{median_text(rates['idempotent'], '{:,.0f}')} records/s; ratio **{ratio:.3f}**; verification on/off "
            f"(KIP-890 part 1) **{verified_ratio:.3f}**. `{command}`")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.txn_produce", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    a = p.parse_args(argv)
    return run(a, "python -m bench.txn_produce " + " ".join(argv if argv is not None else sys.argv[1:]))


if __name__ == "__main__":
    sys.exit(main())
