"""event-storm: 50,000 partitions; 1,000 ISR-change notifications (as from 5 brokers) and 100 broker flaps at once:
p99 and max controller event queue time and processing time, and ZooKeeper reads per notification.

Notifications are /isr_change_notification/isr_change_<seq> znodes written as brokers write them (each naming a few
partitions); a flap is a registration /brokers/ids/<1000+i> (an unreachable endpoint) created and deleted again by
this process. Times come from the controller's ControllerEventProcessed records. Ceiling: pipelined reads of every
notification znode plus the state znode of every partition they name (what the controller must read at least),
against the total time from the first write to the last event processed.
Anchors: about 10 ms per IsrChangeNotification event (KAFKA-5879); 2 s = "exceptionally slow" (KAFKA-16446).
"""

from __future__ import annotations

import time

from bench import common as c
from messages.common import Broker, EndPoint, TopicPartition
from protocol.zk import paths, znodes

ANCHOR = "≈10 ms per IsrChangeNotification event when healthy (KAFKA-5879); > 2 s per event = exceptionally slow"


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def run(scale: float = 1.0, runs: int = 3, tmpfs: bool = False) -> c.Result:
    topics = c.scale_count(1000, scale)
    layout = c.assignment(topics, 50, 3, 3)
    n_notes = c.scale_count(1000, scale, minimum=5)
    n_flaps = c.scale_count(100, scale, minimum=2)
    keys = [(t, p) for t, parts in layout.items() for p in parts]
    load_before = c.load_average()
    totals: list[float] = []
    ceilings: list[float] = []
    q99: list[float] = []
    qmax: list[float] = []
    p99: list[float] = []
    pmax: list[float] = []
    reads: list[float] = []
    with c.BenchCluster(3, layout, tmpfs=tmpfs, overrides=["auto.leader.rebalance.enable=false"]) as bc:
        zk = bc.zk
        controller = bc.controller()
        assert controller is not None
        # an unreachable endpoint: the controller's channel to it never connects
        broker_json = znodes.encode_broker(Broker(1000, (EndPoint("127.0.0.1", 1),)), timestamp_ms=0).encode()
        for i in range(runs):
            notes = []
            for k in range(n_notes):
                tps = [keys[(k * 7 + j * 131) % len(keys)] for j in range(5)]
                notes.append(znodes.encode_isr_change(TopicPartition(t, p) for t, p in tps).encode())
            t_start = c.now_ms()
            t0 = time.perf_counter()
            c.pipelined(lambda d=d: zk.create_async(paths.IsrChangeNotificationSequenceZNode.path(), d, sequence=True)
                        for d in notes)
            for f in range(n_flaps):
                path = paths.BrokerIdZNode.path(1000 + f)
                zk.create(path, broker_json, ephemeral=True)
                zk.delete(path)
            c.wait_for(lambda: not zk.get_children(paths.IsrChangeNotificationZNode), 600, "notifications consumed")
            bc.settle()
            time.sleep(1.5)
            path = bc.trace_file(controller)
            events = [r["payload"] for r in c.scan(path, ["ControllerEventProcessed"], t_start)]
            total = (max(e["finished_ms"] for e in events) - t_start) / 1000.0 if events else time.perf_counter() - t0
            queue = [e["started_ms"] - e["enqueued_ms"] for e in events]
            proc = [e["finished_ms"] - e["started_ms"] for e in events]
            n_reads = 0
            for r in c.scan(path, ["ZkRequest"], t_start):
                n_reads += sum(1 for op in r["payload"]["batch"]["ops"]
                               if op.get("@") == "GetData"
                               and op["path"].startswith(paths.IsrChangeNotificationSequenceZNode.path()))
            totals.append(total)
            q99.append(_pct(queue, 0.99))
            qmax.append(max(queue, default=0.0))
            p99.append(_pct(proc, 0.99))
            pmax.append(max(proc, default=0.0))
            reads.append(n_reads / n_notes)
            # ceiling: read each notification and each named partition's state, pipelined (scratch notifications)
            zk.ensure_path("/kactor-bench-storm")
            c.pipelined(lambda d=d, k=k: zk.create_async(f"/kactor-bench-storm/{k}", d) for k, d in enumerate(notes))
            t1 = time.perf_counter()
            c.pipelined(lambda k=k: zk.get_async(f"/kactor-bench-storm/{k}") for k in range(n_notes))
            named = {tp for n in notes for tp in znodes.decode_isr_change(n.decode())}
            c.pipelined(lambda k=k: zk.get_async(paths.TopicPartitionStateZNode.path(k)) for k in named)
            ceilings.append(time.perf_counter() - t1)
            zk.delete("/kactor-bench-storm", recursive=True)
            print(f"  run {i + 1}: {len(events)} events in {total:.2f} s; queue p99 {q99[-1]:.0f} ms max "
                  f"{qmax[-1]:.0f} ms; processing p99 {p99[-1]:.0f} ms max {pmax[-1]:.0f} ms; "
                  f"{reads[-1]:.2f} notification reads per notification; ceiling {ceilings[-1]:.2f} s", flush=True)
    return c.Result(
        name="event-storm", scale_text=f"3 brokers, {len(keys):,} partitions RF 3; {n_notes:,} ISR-change "
        f"notifications + {n_flaps} broker flaps" + (", ZK on tmpfs" if tmpfs else ""),
        figure_label="first notification written → last controller event processed", figure=c.Measure(totals),
        ceiling_label="pipelined reads of the notifications and the named state znodes",
        ceiling=c.Measure(ceilings), anchor=ANCHOR,
        extra={"queue time p99 (ms)": c.Measure(q99, "ms"), "queue time max (ms)": c.Measure(qmax, "ms"),
               "processing time p99 (ms)": c.Measure(p99, "ms"), "processing time max (ms)": c.Measure(pmax, "ms"),
               "notification znode reads per notification": c.Measure(reads, "reads")},
        load_before=load_before, load_after=c.load_average())
