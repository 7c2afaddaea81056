"""controlled-shutdown: a broker is stopped with SIGTERM and asks the controller to move its leaderships first;
time from the ControlledShutdownRequest to the controller's answer.

Kafka's setup (Jun Rao, Kafka 1.1): 5 brokers, 25,000 topics × 1 partition, RF 2 = 50,000 replicas, about 10,000 on
the broker asked to stop and about 5,000 of them leaders: 3 s in 1.1 (6.5 min in 1.0).

Set-up: topic and partition state znodes are written straight into ZooKeeper before the brokers start (leader = first
replica, ISR = both replicas). Each run stops a non-controller broker, restarts it, and puts every leader back on its
preferred replica (/admin/preferred_replica_election) so each run starts from the same layout.

Victims: with the round-robin layout (replicas [t % 5, (t + 1) % 5]) the leaderships of broker v move to broker
(v + 1) % 5, so for one of the four possible victims — (controller − 1) % 5 — they move to the controller's OWN broker,
which then shares its process (one driver thread) and its ZooKeeper session with the controller. The runs alternate
between that victim ("own") and the others in turn ("other"), starting with "other", so both cases are measured
whichever broker won the election; each is also reported on its own line.

Figure: from the shutting broker's trace, the NetSend of its first ControlledShutdownRequest to the receipt of the
successful ControlledShutdownResponse (retries included). Also: the controller's own span (the request's arrival to
the end of the cascade that answered it).

Ceiling: the controller's own ZooKeeper work, done straight through kazoo from this process with no kactor logic in
between: the batches the controller sent between the request and its answer (read from its trace: in Kafka's
doControlledShutdown the election's reads of the led partitions' states, its fenced writes, then the ISR removal's
reads and writes of the followed ones), one after the other as the controller must (each batch needs the previous
one's answers), each pipelined and batched as kactor's ZooKeeper edge sends it (zk_bridge/executor.py: watch-less
reads READ_CHUNK per multiRead, fenced writes FENCED_CHUNK per transaction with the /controller_epoch check). Reads
are of the same state znodes, writes of the same bytes to scratch znodes (the cluster's versions stay untouched).
Also printed: the older ceiling, as many single fenced writes (one multi {check, setData} each, pipelined) as the
controller wrote state znodes — ZooKeeper work the controller does not do (no reads, 64× the transactions).
"""

from __future__ import annotations

import os
import time
from typing import Any

from kazoo.client import KazooClient

from actors import names
from bench import common as c
from messages.common import TopicPartition
from protocol.zk import paths, znodes
from zk_bridge.executor import FENCED_CHUNK, READ_CHUNK
from zk_bridge.multi_read import multi_read_async

ANCHOR = "Kafka 1.1: 3 s for ~10,000 replicas / ~5,000 leaders on the broker (1.0: 6.5 min); KAFKA-3436: 2,500 in 3 s"


def restore_preferred(bc: c.BenchCluster) -> int:
    states = c.read_states(bc.zk, bc.layout)
    moved = [(t, p) for (t, p), (st, _) in states.items() if st and st.leader != bc.layout[t][p][0]]
    if moved:
        data = znodes.encode_preferred_replica_election(TopicPartition(t, p) for t, p in moved).encode()
        c.wait_for(lambda: not bc.zk.exists(paths.PreferredReplicaElectionZNode), 120, "no pending election")
        bc.zk.ensure_path(paths.AdminZNode)
        bc.zk.create(paths.PreferredReplicaElectionZNode, data)
        c.wait_for(lambda: not bc.zk.exists(paths.PreferredReplicaElectionZNode), 300, "preferred election done")
        bc.settle()
    return len(moved)


def measure_run(bc: c.BenchCluster, victim: int, controller: int, t_start_ms: float) -> dict[str, Any]:
    time.sleep(1.5)  # the controller's trace flushes every second
    bpath = bc.trace_file(victim)
    sent = [r for r in c.scan(bpath, ["NetSend"], t_start_ms)
            if r["payload"]["body"].get("@") == "ControlledShutdownRequest"]
    answers = [r for r in c.scan(bpath, ["NetResponse"], t_start_ms)
               if r["payload"]["body"].get("@") == "ControlledShutdownResponse"]
    if not sent or not answers:
        raise RuntimeError(f"no ControlledShutdown request/answer in {bpath}")
    ok = [r for r in answers if r["payload"]["body"]["error"]["v"] == "NONE"
          and not r["payload"]["body"]["remaining_partitions"]]
    end = (ok or answers)[0]
    cpath = bc.trace_file(controller)
    arrived = [r for r in c.scan(cpath, ["NetRequest"], t_start_ms)
               if r["payload"]["body"].get("@") == "ControlledShutdownRequest"]
    replies = [r for r in c.scan(cpath, ["NetReply"], t_start_ms)
               if r["payload"]["body"].get("@") == "ControlledShutdownResponse"]
    writes = 0
    phases: list[str] = []
    batches: list[list[tuple[str, str, str | None]]] = []  # the controller's ZooKeeper batches, for the ceiling
    if arrived and replies:
        sent_at: dict[int, tuple[float, str]] = {}
        for r in c.scan(cpath, ["ZkRequest", "ZkResponse"], arrived[0]["ts"]):
            if r["seq"] > replies[-1]["seq"]:
                break
            p = r["payload"]
            if r["type"] == "ZkResponse":
                if p["request_id"] in sent_at:
                    t0, what = sent_at.pop(p["request_id"])
                    phases.append(f"{what} {(r['ts'] - t0) / 1000.0:.2f}s")
                continue
            ops = p["batch"]["ops"]
            kinds = sorted({op.get("@", "?") for op in ops})
            if r["sender"] == names.CONTROLLER:
                batches.append([(op.get("@", "?"), op.get("path", ""), op.get("data")) for op in ops])
            if r["sender"] == names.CONTROLLER and len(ops) >= 10:  # the state reads and writes, not the small ones
                sent_at[p["request_id"]] = (r["ts"], f"{len(ops)} {'/'.join(kinds)}")
            for op in ops:
                if op.get("@") == "SetData" and op["path"].endswith("/state"):
                    writes += 1
    out: dict[str, Any] = {"broker_view": (end["ts"] - sent[0]["ts"]) / 1000.0, "attempts": float(len(sent)),
                           "writes": float(writes), "payload": 0.0, "zk_phases": phases, "zk_batches": batches}
    if arrived and replies:
        bound = c.first_input_after(cpath, replies[-1]["seq"]) or replies[-1]["ts"]
        out["controller_view"] = (min(bound, end["ts"]) - arrived[0]["ts"]) / 1000.0
    return out


def ceiling_same_work(zk: KazooClient, batches: list[list[tuple[str, str, str | None]]]) -> tuple[float, list[str]]:
    """The controller's ZooKeeper batches (``measure_run``'s "zk_batches": (op kind, path, data) each), done again
    straight through kazoo: one batch after the other, each batch's reads READ_CHUNK per multiRead and its writes
    FENCED_CHUNK per fenced transaction, every request of a batch pipelined — as zk_bridge/executor.py sends them.
    GetData reads the same znode; SetData writes the same bytes to a scratch znode (created before, not timed).
    Returns (seconds of the batches alone, one "n kind seconds" line per batch); any other op kind is counted in the
    line and not sent (a controlled shutdown sends none)."""
    base = f"/kactor-bench-same-work-{os.getpid()}"
    zk.ensure_path(base)
    epoch_stat = zk.exists(paths.ControllerEpochZNode)
    if epoch_stat is None:
        raise RuntimeError("no /controller_epoch: the ceiling's writes are fenced on it")
    writes = [(bi, i) for bi, ops in enumerate(batches) for i, (kind, _, _) in enumerate(ops) if kind == "SetData"]
    scratch = {k: f"{base}/{n}" for n, k in enumerate(writes)}
    _, r = c.pipelined(lambda path=path: zk.create_async(path, b"") for path in scratch.values())
    if c.errors(r):
        raise RuntimeError(f"ceiling setup failed: {c.errors(r)[0]!r}")
    total = 0.0
    lines: list[str] = []
    bad: list[Any] = []
    try:
        for bi, ops in enumerate(batches):
            reads = [path for kind, path, _ in ops if kind == "GetData"]
            sets = [(scratch[(bi, i)], (data or "").encode()) for i, (kind, _, data) in enumerate(ops)
                    if kind == "SetData"]
            others = len(ops) - len(reads) - len(sets)

            def fenced(chunk: list[tuple[str, bytes]]) -> Any:
                t = zk.transaction()
                t.check(paths.ControllerEpochZNode, epoch_stat.version)
                for path, data in chunk:
                    t.set_data(path, data, 0)  # each scratch znode is written once, at version 0
                return t.commit_async()

            # a batch holds reads or writes (a controlled shutdown's never both); a read of a missing znode is an
            # answer (NONODE), a failed write is not
            secs, res = c.pipelined(lambda chunk=reads[i:i + READ_CHUNK]: multi_read_async(zk, chunk)
                                    for i in range(0, len(reads), READ_CHUNK))
            bad += c.errors(res)
            total += secs
            secs_w, res = c.pipelined(lambda chunk=sets[i:i + FENCED_CHUNK]: fenced(chunk)
                                      for i in range(0, len(sets), FENCED_CHUNK))
            bad += c.errors(res) + [x for v in res if isinstance(v, list) for x in v if isinstance(x, BaseException)]
            secs += secs_w
            total += secs_w
            what = "/".join(k for k, n in (("GetData", len(reads)), ("SetData", len(sets))) if n)
            lines.append(f"{len(ops)} {what or '-'}{f' (+{others} not sent)' if others else ''} {secs:.2f}s")
    finally:
        c.pipelined(lambda path=path: zk.delete_async(path) for path in scratch.values())
        zk.delete(base)
    if bad:
        raise RuntimeError(f"ceiling requests failed: {bad[0]!r}")
    return total, lines


def victim_order(controller: int, brokers: int = 5) -> list[tuple[int, str]]:
    """The victims in run order, each with its case: "own" when its leaderships move to the controller's own broker
    ((controller - 1) % brokers takes them to controller), "other" when another broker takes them. Alternates
    other, own, other, own, ... with the "other" victims taken in turn."""
    own = (controller - 1) % brokers
    others = [b for b in range(brokers) if b not in (controller, own)]
    out: list[tuple[int, str]] = []
    for i in range(2 * len(others)):
        out.append((others[i // 2], "other") if i % 2 == 0 else (own, "own"))
    return out


def run(scale: float = 1.0, runs: int = 3, tmpfs: bool = False, keep: bool = False,
        only: str | None = None) -> c.Result:
    """``only`` = "own" or "other" runs that case alone; ``keep`` keeps the cluster's dir (traces) and prints it."""
    topics = c.scale_count(25000, scale, minimum=5)
    layout = c.assignment(topics, 1, 2, 5)
    scale_text = f"5 brokers, {topics:,} topics × 1 partition, RF 2 ({2 * topics:,} replicas)"
    load_before = c.load_average()
    figures: list[float] = []
    controller_view: list[float] = []
    by_case: dict[str, list[float]] = {"other": [], "own": []}
    ceilings: list[float] = []
    single_writes: list[float] = []
    notes: list[str] = []
    payload = c.state_json(1, [1], 2, 1)
    with c.BenchCluster(5, layout, tmpfs=tmpfs,
                        overrides=["auto.leader.rebalance.enable=false"], keep=keep) as bc:
        if keep:
            print(f"  keeping {bc.base}", flush=True)
        notes.append(f"set-up: znodes written directly (kazoo multi) in {bc.populate_s:.1f} s, cluster settled in "
                     f"{bc.startup_s:.1f} s")
        controller = bc.controller()
        assert controller is not None
        order = [v for v in victim_order(controller) if only is None or v[1] == only]
        idle: list[float] = []
        for i in range(runs):
            idle.append(bc.idle_cores)
            victim, case = order[i % len(order)]
            states = c.read_states(bc.zk, layout)
            leaders = sum(1 for st, _ in states.values() if st and st.leader == victim)
            replicas = sum(1 for parts in layout.values() for r in parts.values() if victim in r)
            t_start = c.now_ms()
            code = bc.lc.stop_broker(victim, timeout=600)
            m = measure_run(bc, victim, controller, t_start)
            figures.append(m["broker_view"])
            by_case[case].append(m["broker_view"])
            if "controller_view" in m:
                controller_view.append(m["controller_view"])
            n_writes = int(m["writes"]) or replicas
            same_work, ceiling_lines = ceiling_same_work(bc.zk, m["zk_batches"])
            ceilings.append(same_work)
            single_writes.append(c.ceiling_conditional_writes(bc.zk, [payload] * n_writes))
            print(f"  run {i + 1}: broker {victim} ({replicas} replicas, {leaders} leaders; leaderships to broker "
                  f"{(victim + 1) % 5}, case {case}; controller {controller}) exit {code}: "
                  f"{m['broker_view']:.2f} s in {int(m['attempts'])} request(s), controller "
                  f"{m.get('controller_view', float('nan')):.2f} s, {n_writes} state writes; ceiling "
                  f"{ceilings[-1]:.2f} s ({m['broker_view'] / ceilings[-1]:.2f}x); {n_writes} single fenced writes "
                  f"{single_writes[-1]:.2f} s", flush=True)
            # each ZooKeeper batch of the controller's answer, request → response, from its trace; then the same
            # batches straight through kazoo (the ceiling)
            print(f"    controller's ZooKeeper round trips: {', '.join(m['zk_phases']) or 'none'}", flush=True)
            print(f"    the same batches through kazoo:     {', '.join(ceiling_lines) or 'none'}", flush=True)
            if i + 1 < runs:  # the next run starts from the same layout; nothing follows the last
                bc.restart(victim)
                bc.settle()
                restore_preferred(bc)
        # the idle brokers' own fetch rounds: what the shutdown shared the machine with
        notes.append("idle cluster CPU as each run started: " + ", ".join(f"{x:.2f}" for x in idle) + " cores")
    return c.Result(
        name="controlled-shutdown", scale_text=scale_text + (", ZK on tmpfs" if tmpfs else ""),
        figure_label="ControlledShutdownRequest sent → successful answer received (broker's trace)",
        figure=c.Measure(figures),
        ceiling_label="the controller's own ZooKeeper batches (state reads and fenced writes), one after the other, "
                      "each pipelined and batched as kactor's ZooKeeper edge sends it, straight through kazoo",
        ceiling=c.Measure(ceilings), anchor=ANCHOR,
        extra={"controller: request arrival → end of answering cascade": c.Measure(controller_view),
               "older ceiling: as many single fenced state writes (one multi each), pipelined":
                   c.Measure(single_writes),
               "leaderships to another broker": c.Measure(by_case["other"]),
               "leaderships to the controller's own broker": c.Measure(by_case["own"])},
        notes=notes, load_before=load_before, load_after=c.load_average())
