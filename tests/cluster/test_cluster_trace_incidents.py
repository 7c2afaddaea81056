"""Issue #30 on a real cluster: the incidents `kactor trace incidents` finds in a recorded 3-broker trace — a broker
SIGKILLed under an acks=all producer (its partitions offline, the others under-replicated, the produces it held up
answered late), then a controller failover by deleting /controller."""

from __future__ import annotations

import threading
import time

import pytest
from cluster_helpers import produce, run_kactor

pytestmark = pytest.mark.cluster

TOPIC = "incidents"


def test_a_killed_broker_and_a_controller_failover_are_found_in_the_trace(start_cluster) -> None:  # noqa: ANN001
    from kactor.trace.incidents import find_incidents

    c = start_cluster(3, killed_under_load=True)
    c.create_topic(TOPIC, partitions=3, replication_factor=3)
    c.wait(lambda: all((st := c.partition_state(TOPIC, p)) is not None and len(st["isr"]) == 3 for p in range(3)),
           what="every partition with a full ISR")
    ctrl = c.controller_id()
    leaders = {p: c.partition_state(TOPIC, p)["leader"] for p in range(3)}
    victim = next(b for b in sorted(set(leaders.values())) if b != ctrl)
    led = sorted(f"{TOPIC}-{p}" for p, b in leaders.items() if b == victim)

    stop = threading.Event()
    answers: list[tuple[int, float]] = []

    def producer() -> None:  # acks=all to the partitions the survivors lead: they wait for the dead follower
        while not stop.is_set():
            for p in range(3):
                t0 = time.monotonic()
                try:
                    produce(c, TOPIC, p, ("v",))
                    answers.append((p, time.monotonic() - t0))
                except Exception:  # noqa: BLE001 - the dead leader refuses connections: try again
                    pass
            time.sleep(0.05)

    thread = threading.Thread(target=producer, daemon=True)
    thread.start()
    try:
        time.sleep(1.0)
        c.kill(victim)
        c.wait(lambda: victim not in c.live_brokers(), what=f"broker {victim} expired")
        c.wait(lambda: all((st := c.partition_state(TOPIC, p))["leader"] != victim and victim not in st["isr"]
                           for p in range(3)), what=f"leaders and ISRs off broker {victim}")
        time.sleep(1.0)
    finally:
        stop.set()
        thread.join(timeout=60)
    assert answers, "the producer got no answer"
    c.restart(victim)
    c.wait(lambda: all(victim in c.partition_state(TOPIC, p)["isr"] for p in range(3)),
           what=f"broker {victim} back in every ISR")

    epoch = c.controller_epoch()
    c.zk.delete("/controller")
    c.wait(lambda: c.controller_id() is not None and c.controller_epoch() > epoch, what="a new controller")
    time.sleep(1.0)
    c.stop()  # every broker stopped in order: its trace flushed and closed

    found = find_incidents([c.trace_dir])
    by_kind: dict[str, list] = {}
    for i in found.incidents:
        by_kind.setdefault(i.kind, []).append(i)
    text = "\n".join(f"{i.kind} {i.subject} {i.partitions} {i.start_ms} {i.end_ms}: {i.detail}"
                     for i in found.incidents)

    (down,) = [i for i in by_kind.get("broker_down", []) if i.subject == f"broker {victim}"]
    assert "killed" in down.detail and down.end_ms is not None and down.duration_ms > 0, text

    offline = [i for i in by_kind.get("partition_offline", []) if set(led) <= set(i.partitions)]
    assert len(offline) == 1, text
    assert offline[0].start_ms == down.start_ms and offline[0].end_ms is not None, text
    assert offline[0].duration_ms > 0 and f"broker {victim}" in offline[0].detail, text

    under = [i for i in by_kind.get("under_replicated", [])
             if f"broker {victim} not in the ISR" in i.detail and i.end_ms is not None]
    assert under and max(i.duration_ms for i in under) > 0, text
    assert any(f"broker {victim} removed from the ISR" in i.detail for i in by_kind.get("isr_shrink", [])), text
    assert any(f"broker {victim} back in the ISR" in i.detail for i in by_kind.get("isr_expand", [])), text

    changes = by_kind.get("controller_change", [])
    assert [i.detail.split(":")[0] for i in changes][-1] == f"became the controller (epoch {epoch + 1})", text
    assert "/controller was deleted" in changes[-1].detail, text

    stalls = by_kind.get("produce_stall", [])
    assert stalls and max(i.duration_ms for i in stalls) > 1000, text
    assert any("isr_shrink" in i.detail or "broker_down" in i.detail for i in stalls), text

    out = run_kactor("trace", "incidents", c.trace_dir).stdout
    assert f"broker_down       broker {victim}: killed" in out and "partition_offline" in out, out
