"""The timer edge (one heap, one thread) and the "timer" actor in front of it."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

from edge_support import Arming, EdgeTestArm, EdgeTestDisarm, Recorder, poll

from actors.runtime import Runtime
from actors.timer_actor import TimerActor
from edges.timer import TimerEdge
from messages.runtime import ActorFailed, ScheduleTimer, TimerFired


class FakeRuntime:
    """Just the part of Runtime the edge uses: a thread-safe inject, recorded with the time it happened."""

    process_name = "fake"

    def __init__(self) -> None:
        self.injected: list[tuple[float, str, Any, str, int | None]] = []
        self.lock = threading.Lock()

    def inject(self, to: str, body: Any, sender: str, cause: int | None = None) -> None:
        with self.lock:
            self.injected.append((time.monotonic(), to, body, sender, cause))

    def fired(self) -> list[tuple[str, str]]:
        with self.lock:
            return [(to, body.key) for _, to, body, _, _ in self.injected]


def make_edge() -> tuple[FakeRuntime, TimerEdge]:
    rt = FakeRuntime()
    return rt, TimerEdge(rt)


def test_fires_in_deadline_order_with_sender_and_cause() -> None:
    rt, edge = make_edge()
    try:
        start = time.monotonic()
        edge.schedule("a", "late", 90, cause=3)
        edge.schedule("a", "early", 30, cause=1)
        edge.schedule("b", "middle", 60, cause=2)
        assert poll(lambda: len(rt.fired()) == 3, 2.0)
        assert rt.fired() == [("a", "early"), ("b", "middle"), ("a", "late")]
        for (at, _, body, sender, cause), (delay, want_cause) in zip(rt.injected, [(30, 1), (60, 2), (90, 3)],
                                                                     strict=True):
            assert isinstance(body, TimerFired) and sender == "edge:timer" and cause == want_cause
            assert at - start >= delay / 1000.0  # never early
        assert edge.pending() == 0
    finally:
        edge.close()


def test_equal_deadlines_fire_in_scheduling_order_and_past_deadlines_fire_at_once() -> None:
    rt, edge = make_edge()
    try:
        for i in range(20):
            edge.schedule("o", f"k{i}", -5)  # a negative delay means "now"
        assert poll(lambda: len(rt.fired()) == 20, 1.0)
        assert [k for _, k in rt.fired()] == [f"k{i}" for i in range(20)]
    finally:
        edge.close()


def test_schedule_replaces_the_same_owner_and_key() -> None:
    rt, edge = make_edge()
    try:
        edge.schedule("o", "k", 10_000)
        edge.schedule("o", "k", 20)  # shorter replaces longer: fires soon, once
        edge.schedule("o", "x", 30)
        edge.schedule("o", "x", 10_000)  # longer replaces shorter: must not fire at 30 ms
        edge.schedule("other", "x", 60)  # another owner's "x" is a different timer
        assert poll(lambda: ("other", "x") in rt.fired(), 2.0)
        assert rt.fired() == [("o", "k"), ("other", "x")]
        assert edge.pending() == 1
    finally:
        edge.close()


def test_cancel() -> None:
    rt, edge = make_edge()
    try:
        edge.schedule("o", "k", 30)
        edge.schedule("o", "j", 30)
        edge.schedule("p", "sentinel", 80)
        assert edge.cancel("o", "k") is True
        assert edge.cancel("o", "k") is False
        assert edge.cancel("o", "never") is False
        assert poll(lambda: ("p", "sentinel") in rt.fired(), 2.0)
        assert rt.fired() == [("o", "j"), ("p", "sentinel")]
        edge.schedule("q", "a", 20)
        edge.schedule("q", "b", 20)
        edge.schedule("r", "c", 50)
        assert edge.cancel_owner("q") == 2
        assert poll(lambda: ("r", "c") in rt.fired(), 2.0)
        assert ("q", "a") not in rt.fired() and ("q", "b") not in rt.fired()
    finally:
        edge.close()


def test_100k_pending_timers_keep_the_heap_bounded_and_a_short_one_still_fires() -> None:
    # What scheduling costs is a benchmark's business, not a test's (timed asserts fail on a loaded 2-core machine);
    # here: replacing every timer leaves the heap bounded (lazy deletion + compaction), and a short timer is not
    # stuck behind 100k long ones.
    rt, edge = make_edge()
    try:
        rnd = random.Random(7)
        for i in range(100_000):
            edge.schedule(f"owner{i % 100}", f"key{i}", rnd.uniform(30_000, 60_000))
        for i in range(100_000):
            edge.schedule(f"owner{i % 100}", f"key{i}", rnd.uniform(30_000, 60_000))
        assert edge.pending() == 100_000
        assert len(edge._heap) <= 2 * 100_000 + 1024
        edge.schedule("fast", "now", 20)
        assert poll(lambda: rt.fired() == [("fast", "now")], 30.0)
        assert edge.pending() == 100_000
    finally:
        edge.close()


def test_close_stops_the_thread_and_drops_timers() -> None:
    rt, edge = make_edge()
    edge.schedule("o", "k", 30)
    edge.close()
    assert not edge._thread.is_alive()
    assert edge._thread.daemon
    edge.schedule("o", "late", 0)  # after close: ignored, no error
    time.sleep(0.06)
    assert rt.fired() == []
    edge.close()  # idempotent


# -- the "timer" actor in a live runtime ----------------------------------------------------------------------------
def test_timer_actor_arms_the_edge_and_fired_names_its_cause(make_node: Any) -> None:
    node = make_node("t1", net=False, timer=True, extra={"arming": Arming})
    node.rt.inject("arming", EdgeTestArm("tick", 30), sender="test")
    node.rt.inject("arming", EdgeTestArm("gone", 30), sender="test")
    node.rt.inject("arming", EdgeTestDisarm("gone"), sender="test")
    node.rt.inject("arming", EdgeTestArm("tock", 60), sender="test")
    fired = node.rec.wait(TimerFired, "arming", count=2)
    assert [r.body.key for r in fired] == ["tick", "tock"]
    for r in fired:
        # The cause of a TimerFired is the ScheduleTimer the timer actor received for it.
        assert r.sender == "edge:timer"
        assert r.cause == node.rec.seq_of(ScheduleTimer(r.body.key, 30 if r.body.key == "tick" else 60), "timer")
    time.sleep(0.05)  # "gone" was due 40 ms ago: it must not have fired
    assert [r.body.key for r in node.rec.of(TimerFired)] == ["tick", "tock"]
    assert node.timer is not None and node.timer.pending() == 0


def test_timer_actor_without_an_edge_does_nothing() -> None:
    """Replay: no timer in runtime.edges, so ScheduleTimer / CancelTimer are recorded and otherwise ignored."""
    rt = Runtime("replay")
    rec = Recorder()
    rt.observer = rec
    try:
        rt.spawn(TimerActor, "timer")
        rt.spawn(Arming, "arming")
        rt.inject("arming", EdgeTestArm("k", 0), sender="test")
        rt.inject("arming", EdgeTestDisarm("k"), sender="test")
        assert rt.run_until_idle() == 2
        assert len(rec.of(ScheduleTimer, "timer")) == 1
        assert rec.of(ActorFailed) == []
        assert rt.inbox.empty()
    finally:
        rt.shutdown()
