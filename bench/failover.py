"""failover: the controller's broker is SIGKILLed; time from the new controller winning /controller to
UpdateMetadata (with every partition's state) sent to every live broker.

Kafka's setup (Jun Rao, Kafka 1.1): 2,000 topics × 50 partitions, RF 1 = 100,000 partitions; 14 s in 1.1, 28 s in
1.0, measured from "Creating /controller" to the end of onControllerFailover. Issue #4's variant: 10,000 partitions
RF 3 (``--layout rf3``).

Set-up: the topic znodes and the partition state znodes (leader = first replica, ISR = replicas, as the controller
writes them on creation) are written straight into ZooKeeper with kazoo multi() batches before any broker starts;
the brokers elect their first controller once all have registered.

Figure, from the new controller's trace: start = its ControllerChanged record (the cascade of the ZkResponse of its
winning /controller multi); end = for each live broker, the first SendRequest of an UpdateMetadataRequest carrying
partition states (replicaStateMachine.startup's), and the latest of those. Also reported: the same end bounded by the
first input delivered after that cascade (its CPU time included) and the time the brokers received it.
Ceiling: pipelined kazoo reads of what initializeControllerContext reads (topic children, every topic znode, every
partition state znode), in the same run against the same ZooKeeper.
"""

from __future__ import annotations

from typing import Any

from bench import common as c

ANCHOR = "Kafka 1.1: 14 s for 100k partitions (1.0: 28 s); 2018 trunk 7–15 s"


def layout_for(scale: float, kind: str) -> tuple[dict[str, dict[int, list[int]]], str]:
    if kind == "rf3":  # issue #4 (a): 3 brokers, 10,000 partitions, RF 3
        topics = c.scale_count(200, scale)
        return c.assignment(topics, 50, 3, 3), f"{topics * 50:,} partitions ({topics} topics × 50, RF 3), 3 brokers"
    topics = c.scale_count(2000, scale)
    return c.assignment(topics, 50, 1, 3), f"{topics * 50:,} partitions ({topics} topics × 50, RF 1), 3 brokers"


def measure_run(bc: c.BenchCluster, t_start_ms: float, victim: int) -> dict[str, float]:
    new = c.wait_for(lambda: (lambda x: (x,) if x not in (None, victim) else None)(bc.controller()), 180,
                     "a new controller")[0]
    bc.settle()
    path = bc.trace_file(new)
    live = [b for b in bc.live()]

    def first_updates() -> tuple[dict[str, Any], dict[int, dict[str, Any]]] | None:
        """The controller's win and its first UpdateMetadata with partitions to each live broker, once all are in the
        trace (the writer flushes every second; at 100,000 partitions each such line is megabytes long)."""
        changed = [r for r in c.scan(path, ["ControllerChanged"], t_start_ms) if r["payload"]["active"]]
        if not changed:
            return None
        epoch = changed[0]["payload"]["controller_epoch"]
        found: dict[int, dict[str, Any]] = {}
        for r in c.scan(path, ["SendRequest"], changed[0]["ts"]):
            req = r["payload"]["request"]
            if (req.get("@") == "UpdateMetadataRequest" and req["controller_epoch"] == epoch
                    and req["partition_states"] and r["payload"]["broker_id"] not in found):
                found[r["payload"]["broker_id"]] = r
            if len(found) == len(live):
                return changed[0], found
        return None

    win, first_um = c.wait_for(first_updates, 60, f"the new controller's UpdateMetadata to {live} in {path}", 1.0)
    epoch = win["payload"]["controller_epoch"]
    last = max(first_um.values(), key=lambda r: r["seq"])
    bound = c.first_input_after(path, last["seq"]) or last["ts"]
    received = []
    for b in live:
        got = None
        for r in c.scan(bc.trace_file(b), ["NetRequest"], win["ts"]):
            body = r["payload"]["body"]
            if body.get("@") == "UpdateMetadataRequest" and body["controller_epoch"] == epoch and \
                    body["partition_states"]:
                got = r["ts"]
                break
        if got is not None:
            received.append(got)
    out = {"queued": (last["ts"] - win["ts"]) / 1000.0, "cascade_end": (bound - win["ts"]) / 1000.0,
           "new_controller": float(new)}
    if len(received) == len(live):
        out["received"] = (max(received) - win["ts"]) / 1000.0
    return out


def run(scale: float = 1.0, runs: int = 3, kind: str = "rf1", tmpfs: bool = False) -> c.Result:
    layout, scale_text = layout_for(scale, kind)
    load_before = c.load_average()
    figures: list[float] = []
    bounds: list[float] = []
    received: list[float] = []
    ceilings: list[float] = []
    notes: list[str] = []
    with c.BenchCluster(3, layout, tmpfs=tmpfs) as bc:
        notes.append(f"set-up: znodes written directly (kazoo multi) in {bc.populate_s:.1f} s, cluster settled in "
                     f"{bc.startup_s:.1f} s")
        for i in range(runs):
            victim = bc.controller()
            assert victim is not None
            t_start = c.now_ms()
            bc.lc.kill_broker(victim)
            m = measure_run(bc, t_start, victim)
            figures.append(m["queued"])
            bounds.append(m["cascade_end"])
            if "received" in m:
                received.append(m["received"])
            ceilings.append(c.ceiling_failover_reads(bc.zk, layout))
            print(f"  run {i + 1}: controller {victim} → {int(m['new_controller'])}: UpdateMetadata queued "
                  f"{m['queued']:.2f} s (cascade end {m['cascade_end']:.2f} s, received "
                  f"{m.get('received', float('nan')):.2f} s); ceiling {ceilings[-1]:.2f} s", flush=True)
            if i + 1 < runs:  # the next run has three brokers again; nothing follows the last
                bc.restart(victim)
                bc.settle()
    return c.Result(
        name=f"failover{'-rf3' if kind == 'rf3' else ''}", scale_text=scale_text + (", ZK on tmpfs" if tmpfs else ""),
        figure_label="new controller wins /controller → UpdateMetadata with all partitions queued to every broker",
        figure=c.Measure(figures), ceiling_label="pipelined kazoo reads of topic + state znodes",
        ceiling=c.Measure(ceilings), anchor=ANCHOR if kind == "rf1" else "issue #4 target ≤ 2× the ceiling",
        extra={"→ end of that cascade": c.Measure(bounds), "→ received by every broker": c.Measure(received)},
        notes=notes, load_before=load_before, load_after=c.load_average())
