"""What recording costs a live cluster's throughput (issue #3): ``python -m bench.trace_overhead --live``.

`bench.trace_overhead` replays recorded inputs through the actors alone; a live broker process also reads and
writes its sockets, decodes and encodes every frame, runs its ZooKeeper client and hands messages between threads,
and all of that is throughput recording does not touch. Here the denominator is the real thing: a 3-broker
`LocalCluster` on the embedded ZooKeeper, one topic of ``--partitions`` partitions with replication factor 3, and
``--records`` single-record ProduceRequests with acks=all sent by ``--clients`` client threads (each to its
partitions' leaders over the broker transport, one request in flight per client), so every record is appended by the
leader, fetched by two followers, and acknowledged once the high watermark passes it — the message mix of a busy
broker. Throughput is records per CPU-second of the three broker processes (utime + stime from /proc) over the
workload; each run starts a fresh cluster, once with no trace and once with every broker recording its trace, and
the modes alternate. The overhead is 1 − recording / baseline of the medians; the median of each run's own ratio
(its two clusters ran back to back, under the same load) is printed beside it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import tempfile
import threading
import time
from typing import Any

from bench.common import cpu_seconds, git_commit, load_average, topic_json, wait_quiet
from kactor.cluster import LocalCluster

TOPIC = "trace-overhead-live"
BROKERS = 3
_TS = re.compile(rb'^\{"seq":\d+,"ts":([0-9.]+),')


def _leaders_and_endpoints(zk: Any, partitions: int) -> tuple[dict[int, int], dict[int, tuple[str, int]]] | None:
    """(partition → leader, broker → (host, port)) once every partition has a leader and a full ISR, else None."""
    leaders = {}
    for p in range(partitions):
        try:
            data, _ = zk.get(f"/brokers/topics/{TOPIC}/partitions/{p}/state")
        except Exception:  # noqa: BLE001 - not written yet
            return None
        st = json.loads(data)
        if st["leader"] < 0 or len(st["isr"]) != BROKERS:
            return None
        leaders[p] = st["leader"]
    endpoints = {}
    for b in zk.get_children("/brokers/ids"):
        reg = json.loads(zk.get(f"/brokers/ids/{b}")[0])
        endpoints[int(b)] = (reg["host"], reg["port"])
    return leaders, endpoints


def _produce(leaders: dict[int, int], endpoints: dict[int, tuple[str, int]], partitions: list[int], records: int,
             errors: list[str], retries: int) -> None:
    """One client: ``records`` single-record acks=all requests, round-robin over ``partitions``."""
    from kactor.edges.transport import BlockingClient
    from messages.common import Errors, TopicPartition
    from messages.replication import ProduceRequest

    clients = {b: BlockingClient(*endpoints[b]) for b in {leaders[p] for p in partitions}}
    try:
        for i in range(records):
            p = partitions[i % len(partitions)]
            request = ProduceRequest(TopicPartition(TOPIC, p), (f"record-{i:08d}",), -1)
            answer = clients[leaders[p]].request("replica-manager", request, 30.0)
            for _ in range(retries):  # the warm-up: a leader may not have its LeaderAndIsr yet
                if getattr(answer, "error", None) == Errors.NONE:
                    break
                time.sleep(0.1)
                answer = clients[leaders[p]].request("replica-manager", request, 30.0)
            if getattr(answer, "error", None) != Errors.NONE:
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


def _messages_between(trace_dir: str, t0_ms: float, t1_ms: float) -> int:
    """Records of every broker trace with ts in [t0_ms, t1_ms] (what the brokers received during the workload)."""
    n = 0
    for name in os.listdir(trace_dir):
        if not name.endswith(".jsonl"):
            continue
        with open(os.path.join(trace_dir, name), "rb") as f:
            for line in f:
                m = _TS.match(line)
                if m is not None and t0_ms <= float(m.group(1)) <= t1_ms:
                    n += 1
    return n


def one_run(recording: bool, partitions: int, records: int, clients: int) -> dict[str, float]:
    """A fresh cluster; the workload once to warm it (connections, code paths), then measured."""
    base = tempfile.mkdtemp(prefix="kactor-trace-live-")
    trace_dir = os.path.join(base, "trace") if recording else None
    lc = LocalCluster(BROKERS, base_dir=os.path.join(base, "cluster"), trace_dir=trace_dir, log_level="WARNING")
    out: dict[str, float] = {}
    try:
        lc.start()
        zk = lc.client()
        lc.wait_for(lambda: len(zk.get_children("/brokers/ids")) == BROKERS, 60, "brokers to register")
        lc.wait_for(lambda: lc.controller_id(zk) is not None, 60, "a controller")
        zk.create(f"/brokers/topics/{TOPIC}",
                  topic_json({p: [(p + i) % BROKERS for i in range(BROKERS)] for p in range(partitions)}))
        leaders, endpoints = lc.wait_for(lambda: _leaders_and_endpoints(zk, partitions), 120,
                                         "every partition led with a full ISR")
        zk.stop()
        zk.close()
        pids = [p.pid for p in lc.procs.values()]  # the brokers only: ZooKeeper's work is the same either way
        _workload(leaders, endpoints, partitions, max(partitions, records // 10), clients, 100)  # warm-up
        # settled: idle fetching alone keeps each broker at a few % of a core (8 shards long-polling 2 leaders)
        wait_quiet(lambda: pids, 60, max_busy=0.1 + 0.1 * BROKERS)
        c0, t0, ms0 = cpu_seconds(pids), time.perf_counter(), time.time() * 1000
        _workload(leaders, endpoints, partitions, records, clients)
        c1, t1, ms1 = cpu_seconds(pids), time.perf_counter(), time.time() * 1000
        out = {"cpu_s": c1 - c0, "wall_s": t1 - t0, "records": float(records // clients * clients)}
    finally:
        lc.stop()
        if trace_dir is not None and out:
            out["messages"] = float(_messages_between(trace_dir, ms0, ms1))
        shutil.rmtree(base, ignore_errors=True)
    return out


def main(runs: int, partitions: int, records: int, clients: int, budget: float) -> int:
    print(f"live: {BROKERS} brokers, {partitions} partitions RF {BROKERS}, {records} single-record acks=all "
          f"produce requests from {clients} clients per run; load {load_average()}", flush=True)
    rates: dict[str, list[float]] = {"baseline": [], "recording": []}
    walls: dict[str, list[float]] = {"baseline": [], "recording": []}
    messages: list[float] = []
    for run in range(runs):
        line = []
        for mode in ("baseline", "recording"):
            r = one_run(mode == "recording", partitions, records, clients)
            rates[mode].append(r["records"] / r["cpu_s"])
            walls[mode].append(r["records"] / r["wall_s"])
            if "messages" in r:
                messages.append(r["messages"] / r["records"])
            line.append(f"{mode} {rates[mode][-1]:,.0f} records/CPU-s ({r['cpu_s']:.2f} CPU-s, "
                        f"{walls[mode][-1]:,.0f} records/s wall)")
        print(f"  run {run + 1}: " + "; ".join(line), flush=True)
    base, rec = statistics.median(rates["baseline"]), statistics.median(rates["recording"])
    overhead = 1 - rec / base
    per_record = statistics.median(messages) if messages else 0.0
    print(f"\n{runs} runs of each mode (commit {git_commit()}; load {load_average()}); "
          f"{per_record:.1f} messages received by the brokers per record")
    for mode, median in (("baseline (no trace)", base), ("recording", rec)):
        key = mode.split()[0]
        print(f"{mode + ':':<21}median {median:,.0f} records/CPU-s = {median * per_record:,.0f} messages/CPU-s "
              f"(min {min(rates[key]):,.0f}, max {max(rates[key]):,.0f} records/CPU-s); "
              f"wall median {statistics.median(walls[key]):,.0f} records/s")
    # each run's two clusters ran back to back, so the ratio within a run sees the same load on the machine
    paired = sorted(r / b for b, r in zip(rates["baseline"], rates["recording"], strict=True))
    print(f"per-run ratios recording/baseline: {', '.join(f'{x:.3f}' for x in paired)} "
          f"(median {statistics.median(paired):.3f} → {1 - statistics.median(paired):.1%})")
    print(f"ratio recording/baseline {rec / base:.3f} → overhead {overhead:.1%} (budget ≤ {budget:.0%})")
    return 0 if overhead <= budget else 1
