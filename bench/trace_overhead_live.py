"""What recording costs a live cluster's throughput (issue #3): ``python -m bench.trace_overhead --live``.

`bench.trace_overhead` replays recorded inputs through the actors alone; a live broker process also reads and
writes its sockets, decodes and encodes every frame, runs its ZooKeeper client and hands messages between threads,
work that recording adds nothing to. Here the denominator is the real thing: a 3-broker
`LocalCluster` on the embedded ZooKeeper, one topic of ``--partitions`` partitions with replication factor 3, and
``--records`` single-record ProduceRequests with acks=all sent by ``--clients`` client threads (each to its
partitions' leaders over the broker transport, one request in flight per client), so every record is appended by the
leader, fetched by two followers, and acknowledged once the high watermark passes it — the message mix of a busy
broker. Throughput is records per CPU-second of the three broker processes (utime + stime from /proc, all threads:
the trace's flusher counts) over the workload.

Each run starts two fresh clusters side by side, one with no trace and one with every broker recording its trace,
and sends the workload to them in ``--chunks`` pieces, alternating (and alternating which goes first), so that
whatever else the shared 2-core machine does in the meantime falls on both alike: measured one after the other, a
run's two figures moved by ±20 % with the load (2026-11-25: per-run ratios 0.75–1.20 over 9 runs). The overhead is
1 − the median over the runs of recording / baseline.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from typing import Any

from bench.common import cpu_seconds, git_commit, load_average, start_together, topic_json, wait_quiet
from kactor.cluster import LocalCluster
from messages.common import TopicPartition
from protocol.zk import paths, znodes

TOPIC = "trace-overhead-live"
BROKERS = 3
WARM_UP = 300  # produce requests to each cluster before the measured chunks (at least one per partition)
# Both clusters alike: stopped in order after the measurement, each one's last broker cannot hand its leaderships
# to anyone and its controlled shutdown retries after this backoff (Kafka's 5 s: 10 s a cluster, 2 retries)
OVERRIDES = ("controlled.shutdown.retry.backoff.ms=200",)
_TS = re.compile(rb'^\{"seq":\d+,"ts":([0-9.]+),')


def _leaders_and_endpoints(zk: Any, partitions: int) -> tuple[dict[int, int], dict[int, tuple[str, int]]] | None:
    """(partition → leader, broker → (host, port)) once every partition has a leader and a full ISR, else None."""
    leaders = {}
    for p in range(partitions):
        try:
            data, _ = zk.get(paths.TopicPartitionStateZNode.path(TopicPartition(TOPIC, p)))
        except Exception:  # noqa: BLE001 - not written yet
            return None
        info = znodes.decode_partition_state(data.decode(), 0)
        if info is None or info.leader_and_isr.leader < 0 or len(info.leader_and_isr.isr) != BROKERS:
            return None
        leaders[p] = info.leader_and_isr.leader
    endpoints = {}
    for b in zk.get_children(paths.BrokerIdsZNode):
        broker = znodes.decode_broker(int(b), zk.get(paths.BrokerIdZNode.path(int(b)))[0].decode())
        plaintext = next(ep for ep in broker.endpoints if ep.security_protocol == "PLAINTEXT")
        endpoints[int(b)] = (plaintext.host, plaintext.port)
    return leaders, endpoints


def _produce(leaders: dict[int, int], endpoints: dict[int, tuple[str, int]], partitions: list[int], records: int,
             errors: list[str], retries: int) -> None:
    """One client: ``records`` single-record acks=all requests, round-robin over ``partitions``."""
    from edges.transport import BlockingClient
    from kactor.records import values_batch
    from messages.common import Errors, TopicPartition
    from messages.replication import ProducePartition, ProduceRequest

    def ok(answer: object) -> bool:
        parts = getattr(answer, "partitions", ())
        return len(parts) == 1 and parts[0].error == Errors.NONE

    clients = {b: BlockingClient(*endpoints[b]) for b in {leaders[p] for p in partitions}}
    try:
        for i in range(records):
            p = partitions[i % len(partitions)]
            batch = values_batch([f"record-{i:08d}"])
            request = ProduceRequest(-1, 30000, (ProducePartition(TopicPartition(TOPIC, p), batch),))
            answer = clients[leaders[p]].request(request, timeout_s=30.0)
            for _ in range(retries):  # the warm-up: a leader may not have its LeaderAndIsr yet
                if ok(answer):
                    break
                time.sleep(0.1)
                answer = clients[leaders[p]].request(request, timeout_s=30.0)
            if not ok(answer):
                errors.append(f"{TOPIC}-{p}: {answer!r}")
                return
    finally:
        for c in clients.values():
            c.close()


def _workload(leaders: dict[int, int], endpoints: dict[int, tuple[str, int]], partitions: int, records: int,
              clients: int, retries: int = 0) -> None:
    errors: list[str] = []
    threads = [threading.Thread(target=_produce, args=(leaders, endpoints, list(range(k, partitions, clients)),
                                                       records // clients, errors, retries)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(f"produce failed: {errors[0]}")


def _messages_between(trace_dir: str, windows: list[tuple[float, float]]) -> int:
    """Records of every broker trace with ts in one of ``windows`` (what the brokers received during the workload)."""
    n = 0
    for name in os.listdir(trace_dir):
        if not name.endswith(".jsonl"):
            continue
        with open(os.path.join(trace_dir, name), "rb") as f:
            for line in f:
                m = _TS.match(line)
                if m is not None:
                    ts = float(m.group(1))
                    n += any(t0 <= ts <= t1 for t0, t1 in windows)
    return n


class _Cluster:
    """One 3-broker cluster of a round, with the topic created, led and warmed up."""

    def __init__(self, base: str, recording: bool, partitions: int, clients: int, warm_up: int = WARM_UP) -> None:
        self.trace_dir = os.path.join(base, "trace") if recording else None
        self.lc = LocalCluster(BROKERS, base_dir=os.path.join(base, "cluster"), trace_dir=self.trace_dir,
                               log_level="WARNING", overrides=list(OVERRIDES))
        self.partitions, self.clients, self.warm_up = partitions, clients, warm_up
        self.windows: list[tuple[float, float]] = []  # wall-clock ms of the measured chunks, for the trace count
        self.cpu_s = 0.0
        self.records = 0

    def start(self) -> None:
        lc = self.lc
        lc.start()
        zk = lc.client()
        try:
            lc.wait_registered(zk, 60)
            lc.wait_for(lambda: lc.controller_id(zk) is not None, 60, "a controller")
            zk.create(paths.TopicZNode.path(TOPIC), topic_json(TOPIC, {p: [(p + i) % BROKERS for i in range(BROKERS)]
                                                                      for p in range(self.partitions)}))
            self.leaders, self.endpoints = lc.wait_for(lambda: _leaders_and_endpoints(zk, self.partitions), 120,
                                                       "every partition led with a full ISR")
        finally:
            zk.stop()
            zk.close()
        self.pids = [p.pid for p in lc.procs.values()]  # the brokers only: ZooKeeper's work is the same either way
        # every partition written at least once (each client round-robins over its own partitions)
        at_least = -(-self.partitions // self.clients) * self.clients
        _workload(self.leaders, self.endpoints, self.partitions, max(at_least, self.warm_up), self.clients, 100)

    def measure(self, records: int) -> None:
        c0, ms0 = cpu_seconds(self.pids), time.time() * 1000
        # a produce answered an error is sent again, as a client's retries do (on a loaded machine a follower may
        # fall out of the ISR for a moment): only a partition that fails 20 times in 2 s ends the run
        _workload(self.leaders, self.endpoints, self.partitions, records, self.clients, 20)
        self.cpu_s += cpu_seconds(self.pids) - c0
        self.windows.append((ms0, time.time() * 1000))
        self.records += records // self.clients * self.clients


def one_round(partitions: int, records: int, clients: int, chunks: int,
              warm_up: int = WARM_UP) -> dict[str, dict[str, float]]:
    """Two fresh clusters side by side, one recording and one not; the workload in ``chunks`` pieces, alternating
    between them (and which goes first), so that whatever else the machine does falls on both alike."""
    base = tempfile.mkdtemp(prefix="kactor-trace-live-")
    clusters = {mode: _Cluster(os.path.join(base, mode), mode == "recording", partitions, clients, warm_up)
                for mode in ("baseline", "recording")}
    try:
        try:
            start_together(*clusters.values())
            # settled: idle fetching alone keeps each broker at a few % of a core (8 shards long-polling 2 leaders)
            wait_quiet(lambda: clusters["baseline"].pids + clusters["recording"].pids, 60,
                       max_busy=0.2 + 0.2 * BROKERS)
            order = ["baseline", "recording"]
            for k in range(chunks):
                for mode in order if k % 2 == 0 else order[::-1]:
                    clusters[mode].measure(max(clients, records // chunks))
        finally:
            for c in clusters.values():
                c.lc.stop()  # flushes the traces the count below reads
        rec = clusters["recording"]
        assert rec.trace_dir is not None
        out = {mode: {"cpu_s": c.cpu_s, "records": float(c.records)} for mode, c in clusters.items()}
        out["recording"]["messages"] = float(_messages_between(rec.trace_dir, rec.windows))
    except BaseException:
        print(f"kept for a look: {base} (each cluster's broker logs and traces)", file=sys.stderr, flush=True)
        raise
    shutil.rmtree(base, ignore_errors=True)
    return out


def main(runs: int, partitions: int, records: int, clients: int, budget: float, chunks: int = 10,
         warm_up: int = WARM_UP) -> int:
    print(f"live: two {BROKERS}-broker clusters side by side, one recording; {partitions} partitions RF {BROKERS}; "
          f"{records} single-record acks=all produce requests to each per run from {clients} clients, in {chunks} "
          f"chunks alternating between them; load {load_average()}", flush=True)
    rates: dict[str, list[float]] = {"baseline": [], "recording": []}
    messages: list[float] = []
    for run in range(runs):
        r = one_round(partitions, records, clients, chunks, warm_up)
        line = []
        for mode in ("baseline", "recording"):
            rates[mode].append(r[mode]["records"] / r[mode]["cpu_s"])
            line.append(f"{mode} {rates[mode][-1]:,.0f} records/CPU-s ({r[mode]['cpu_s']:.2f} CPU-s)")
        messages.append(r["recording"]["messages"] / r["recording"]["records"])
        print(f"  run {run + 1}: " + "; ".join(line) + f"; ratio {rates['recording'][-1] / rates['baseline'][-1]:.3f}",
              flush=True)
    per_record = statistics.median(messages)
    print(f"\n{runs} runs (commit {git_commit()}; load {load_average()}); "
          f"{per_record:.1f} messages received by the brokers per record")
    for mode, label in (("baseline", "baseline (no trace)"), ("recording", "recording")):
        median = statistics.median(rates[mode])
        print(f"{label + ':':<21}median {median:,.0f} records/CPU-s = {median * per_record:,.0f} messages/CPU-s "
              f"(min {min(rates[mode]):,.0f}, max {max(rates[mode]):,.0f} records/CPU-s)")
    # the two clusters of a run shared the machine's load chunk by chunk: the ratio within a run is the figure
    paired = sorted(r / b for b, r in zip(rates["baseline"], rates["recording"], strict=True))
    ratio = statistics.median(paired)
    print(f"per-run ratios recording/baseline: {', '.join(f'{x:.3f}' for x in paired)}")
    print(f"ratio recording/baseline {ratio:.3f} (median of the runs) → overhead {1 - ratio:.1%} "
          f"(budget ≤ {budget:.0%})")
    return 0 if 1 - ratio <= budget else 1
