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
