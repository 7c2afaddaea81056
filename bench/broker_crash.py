"""broker-crash: SIGKILL of a (non-controller) broker that leads a third of the partitions; time from its session
expiring to every new leader written in ZooKeeper, and to LeaderAndIsr answered by every live broker.

Issue #10: 3 brokers, 30,000 partitions, RF 3. Issue #4 (b): the same at 10,000 partitions (``--scale 0.3333``).
No published Kafka figure for exactly this; the nearest anchors are the 0.8 design budget (10k partitions × 2 ms per
sync ZK write ≈ 20 s) and KRaft vs ZK recovery at 2M partitions (37 s vs 503 s).

Set-up: topic + state znodes written straight into ZooKeeper before the brokers start. Each run kills a different
non-controller broker, restarts it, and restores preferred leaders (so every run starts from the same layout).

Figure, from the controller's trace: start = the /brokers/ids child watch delivered to the zk bridge after the kill
(the session expiry as the controller learns it); end = the ZkResponse to the last ZkRequest that wrote a new leader
for a partition the dead broker led. Ceiling: as many fenced conditional writes, pipelined.
"""

from __future__ import annotations

import time

from actors import names
from bench import common as c
from bench.controller_shutdown import restore_preferred
from protocol.zk import paths, znodes

ANCHOR = ("no exact Kafka figure; 0.8 design budget 10k partitions × 2 ms/sync write ≈ 20 s; KRaft vs ZK recovery "
          "at 2M partitions 37 s vs 503 s")


def _leader(state_data: str) -> int:
    info = znodes.decode_partition_state(state_data, 0)
    return info.leader_and_isr.leader if info is not None else -1


def measure_run(bc: c.BenchCluster, victim: int, controller: int, led: set[str], t_start_ms: float
                ) -> dict[str, float]:
    path = bc.trace_file(controller)
    expiry = None
    for r in c.scan(path, ["ZkWatchEvent"], t_start_ms):
        if r["sender"] == names.EDGE_ZK and r["payload"]["path"] == paths.BrokerIdsZNode:
            expiry = r
            break
    if expiry is None:
        raise RuntimeError(f"no {paths.BrokerIdsZNode} watch after the kill in {path}")
    leader_reqs: dict[int, int] = {}  # request_id → leader writes in it
    all_writes = 0
    for r in c.scan(path, ["ZkRequest"], expiry["ts"]):
        if r["sender"] != names.CONTROLLER:
            continue
        n = 0
        for op in r["payload"]["batch"]["ops"]:
            ops = op["ops"] if op.get("@") == "Multi" else [op]
            for o in ops:
                if o.get("@") == "SetData" and o["path"].endswith("/state"):
                    all_writes += 1
                    if o["path"] in led and _leader(o["data"]) != victim:
                        n += 1
        if n:
            leader_reqs[r["payload"]["request_id"]] = n
    written = sum(leader_reqs.values())
    end = None
    for r in c.scan(path, ["ZkResponse"], expiry["ts"]):
        if r["receiver"] == names.CONTROLLER and r["payload"]["request_id"] in leader_reqs:
            end = r["ts"] if end is None else max(end, r["ts"])
    lai_done = [r["payload"]["completed_ms"] for r in c.scan(path, ["ChannelRequestCompleted"], expiry["ts"])
                if r["payload"]["request_type"] == "LeaderAndIsrRequest"
                and r["payload"]["enqueued_ms"] >= expiry["ts"]]
    out = {"leader_writes": float(written), "all_writes": float(all_writes)}
    if end is not None:
        out["leaders_written"] = (end - expiry["ts"]) / 1000.0
    if lai_done:
        out["lai_answered"] = (max(lai_done) - expiry["ts"]) / 1000.0
    out["expiry_after_kill"] = (expiry["ts"] - t_start_ms) / 1000.0
    return out


def run(scale: float = 1.0, runs: int = 3, tmpfs: bool = False) -> c.Result:
    topics = c.scale_count(600, scale)
    layout = c.assignment(topics, 50, 3, 3)
    scale_text = f"3 brokers, {topics * 50:,} partitions ({topics} topics × 50), RF 3"
    load_before = c.load_average()
    figures: list[float] = []
    lai: list[float] = []
    ceilings: list[float] = []
    notes: list[str] = []
    payload = c.state_json(1, [1, 2], 2, 1)
    with c.BenchCluster(3, layout, tmpfs=tmpfs, overrides=["auto.leader.rebalance.enable=false"]) as bc:
        notes.append(f"set-up: znodes written directly (kazoo multi) in {bc.populate_s:.1f} s, cluster settled in "
                     f"{bc.startup_s:.1f} s; session timeout 6 s")
        controller = bc.controller()
        assert controller is not None
        victims = [b for b in range(3) if b != controller]
        for i in range(runs):
            victim = victims[i % len(victims)]
            states = c.read_states(bc.zk, layout)
            led = {c.state_path(t, p) for (t, p), (st, _) in states.items() if st and st.leader == victim}
            t_start = c.now_ms()
            bc.lc.kill_broker(victim)
            c.wait_for(lambda v=victim: v not in bc.live(), 120, f"broker {victim}'s session to expire")
            bc.settle()
            time.sleep(1.5)
            m = measure_run(bc, victim, controller, led, t_start)
            if "leaders_written" not in m:
                raise RuntimeError(f"no new leader written for broker {victim}'s {len(led)} partitions")
            figures.append(m["leaders_written"])
            if "lai_answered" in m:
                lai.append(m["lai_answered"])
            ceilings.append(c.ceiling_conditional_writes(bc.zk, [payload] * max(1, int(m["leader_writes"]))))
            print(f"  run {i + 1}: broker {victim} killed ({len(led)} leaders; session expired after "
                  f"{m['expiry_after_kill']:.1f} s): leaders written {m['leaders_written']:.2f} s "
                  f"({int(m['leader_writes'])} leader writes, {int(m['all_writes'])} state writes), LeaderAndIsr "
                  f"answered {m.get('lai_answered', float('nan')):.2f} s; ceiling {ceilings[-1]:.2f} s", flush=True)
            if i + 1 < runs:  # the next run starts from the same layout; nothing follows the last
                bc.restart(victim)
                bc.settle()
                restore_preferred(bc)
    return c.Result(
        name="broker-crash", scale_text=scale_text + (", ZK on tmpfs" if tmpfs else ""),
        figure_label="session expiry seen by the controller → every new leader written in ZooKeeper",
        figure=c.Measure(figures),
        ceiling_label="the same number of fenced conditional state writes, pipelined kazoo multi",
        ceiling=c.Measure(ceilings), anchor=ANCHOR,
        extra={"→ LeaderAndIsr answered by every live broker": c.Measure(lai)},
        notes=notes, load_before=load_before, load_after=c.load_average())
