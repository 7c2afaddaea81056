"""actors.runtime.Inbox: the network-to-actor hand-off keeps queue.Queue's order and blocking, without a lock and a
notify per message, and wakes its driver through one bare lock (issue #43)."""

from __future__ import annotations

import queue
import threading
import time

import pytest

from actors.base import KActor
from actors.runtime import Inbox, Runtime


def test_a_put_while_the_reader_is_busy_wakes_nothing() -> None:
    """While the driver is not waiting its wake lock stays held: puts are a deque append each (queue.Queue took its
    Condition's lock and notified on every one)."""
    inbox = Inbox()
    for i in range(1000):
        inbox.put(i)
    assert inbox._wake.locked()
    assert [inbox.get_nowait() for _ in range(1000)] == list(range(1000))
    with pytest.raises(queue.Empty):
        inbox.get_nowait()
    assert inbox.empty() and inbox.qsize() == 0


def test_a_wake_up_the_reader_did_not_wait_for_only_makes_it_look_again() -> None:
    """A writer that saw the driver waiting may release after the driver timed out: the next wait returns at once,
    finds nothing, and waits again for its whole timeout, with the lock held again."""
    inbox = Inbox()
    inbox._waiting = True  # as a writer sees it just before a timed-out driver clears it
    inbox.put("a")
    assert not inbox._wake.locked()
    inbox.put("b")  # nobody is waiting now: no second release (it would raise on an unlocked lock)
    assert [inbox.get(timeout=1), inbox.get(timeout=1)] == ["a", "b"]
    t0 = time.monotonic()
    with pytest.raises(queue.Empty):
        inbox.get(timeout=0.05)
    assert time.monotonic() - t0 >= 0.05
    assert inbox._wake.locked() and not inbox._waiting


def test_get_waits_for_a_put_and_times_out_without_one() -> None:
    inbox = Inbox()
    t0 = time.monotonic()
    with pytest.raises(queue.Empty):
        inbox.get(timeout=0.05)
    assert time.monotonic() - t0 >= 0.05
    threading.Timer(0.05, inbox.put, ("late",)).start()
    assert inbox.get(timeout=5) == "late"


def test_many_writers_one_reader_lose_nothing_and_keep_each_writers_order() -> None:
    inbox = Inbox()
    writers, each = 4, 20_000

    def write(w: int) -> None:
        for i in range(each):
            inbox.put((w, i))

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    seen: dict[int, list[int]] = {w: [] for w in range(writers)}
    for _ in range(writers * each):
        w, i = inbox.get(timeout=10)
        seen[w].append(i)
    for t in threads:
        t.join()
    assert all(got == list(range(each)) for got in seen.values())
    assert inbox.empty()


class _Sink(KActor):
    got: list[int] = []

    def on_int(self, msg: int, sender: str) -> None:
        _Sink.got.append(msg)


def test_the_driver_delivers_what_edges_inject_in_order() -> None:
    rt = Runtime("inbox-test")
    rt.spawn(_Sink, "sink")
    _Sink.got = []
    rt.start_driver()
    try:
        for i in range(500):
            rt.inject("sink", i, "net")
        deadline = time.monotonic() + 10
        while len(_Sink.got) < 500 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _Sink.got == list(range(500))
        assert rt.seq == 500  # every one recorded (traced) as it was delivered
    finally:
        rt.shutdown()


def test_urgent_items_are_taken_first_and_each_deque_keeps_its_order() -> None:
    inbox = Inbox()
    for i in range(3):
        inbox.put(("broker", i))
    inbox.put_urgent(("controller", 0))
    inbox.put(("broker", 3))
    inbox.put_urgent(("controller", 1))
    assert inbox.qsize() == 6
    got = [inbox.get(timeout=1) for _ in range(4)] + [inbox.get_nowait() for _ in range(2)]
    assert got == [("controller", 0), ("controller", 1), ("broker", 0), ("broker", 1), ("broker", 2), ("broker", 3)]
    assert inbox.empty()


def test_an_urgent_put_wakes_a_waiting_driver() -> None:
    inbox = Inbox()
    threading.Timer(0.05, inbox.put_urgent, ("zk answer",)).start()
    assert inbox.get(timeout=5) == "zk answer"


def test_the_live_driver_takes_zookeeper_and_controller_inputs_first() -> None:
    """Kafka's controller has threads of its own; here, once the driver runs, ZooKeeper's answers and the
    controller's, its deletion manager's and its channels' inputs wait behind no broker request. Before (tests,
    the simulator, replay) every input keeps its order of arrival."""
    from actors.names import CONTROLLER, EDGE_NET, EDGE_ZK, REPLICA_MANAGER, TOPIC_DELETION, channel, shard

    inputs = [(REPLICA_MANAGER, "fetch", EDGE_NET), (shard(0), "zk answer", EDGE_ZK), (shard(1), "response", EDGE_NET),
              (CONTROLLER, "shutdown request", EDGE_NET), (channel(2), "response", EDGE_NET),
              (TOPIC_DELETION, "x", EDGE_NET), ("zk", "watch", EDGE_ZK)]
    rt = Runtime("inbox-order")
    try:
        for to, body, sender in inputs:
            rt.inject(to, body, sender)
        assert [item[:3] for item in rt.inbox.queue] == inputs and not rt.inbox.urgent
        rt.inbox.queue.clear()
        rt._urgent_live = True  # what start_driver sets, without a thread taking the inputs meanwhile
        for to, body, sender in inputs:
            rt.inject(to, body, sender)
        taken = [rt.inbox.get_nowait()[:3] for _ in inputs]
        assert taken == [inputs[i] for i in (1, 3, 4, 5, 6, 0, 2)]
    finally:
        rt.shutdown()


def test_start_driver_turns_the_order_on() -> None:
    rt = Runtime("inbox-driver")
    assert not rt._urgent_live
    rt.start_driver()
    try:
        assert rt._urgent_live
    finally:
        rt.shutdown()
