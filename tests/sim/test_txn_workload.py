"""sim/txn_workload.py's client faults on a fake network: at most MAX_IN_FLIGHT requests a connection, a request
timeout closing its connection and failing the rest on it, an answer after the timeout dropped, a delayed request
landing after later requests on the client's other connections (and those behind it on its own waiting for it), and
the fault stream its own (``txn-faults-<seed>``)."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from typing import Any

import pytest

import sim.txn_workload as tw
from messages.common import TopicPartition
from sim.txn_workload import MAX_IN_FLIGHT, REQUEST_TIMEOUT_MS, TxnWorkload


class FakeSim:
    """What TxnClient's connection layer uses of Sim: a clock, a queue, client_request recorded (not answered)."""

    def __init__(self, seed: int = 7) -> None:
        self.seed = seed
        self.now = 0.0
        self.brokers: dict[int, Any] = {}
        self.events: list[str] = []
        self.sent: list[tuple[float, str, int, Any, Callable[[Any], None]]] = []
        self._q: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()

    def at(self, delay: float, fn: Callable[[], None]) -> None:
        heapq.heappush(self._q, (self.now + delay, next(self._seq), fn))

    def run_for(self, ms: float) -> None:
        end = self.now + ms
        while self._q and self._q[0][0] <= end:
            t, _, fn = heapq.heappop(self._q)
            self.now = t
            fn()
        self.now = end

    def note(self, text: str) -> None:
        self.events.append(text)

    def client_request(self, dst: int, body: Any, version: int, on_answer: Callable[[Any], None],
                       client_id: str = "", route: str = "", expects: bool = True,
                       timeout_ms: float | None = None) -> None:
        self.sent.append((self.now, client_id, dst, body, on_answer))


def workload(delays: list[float] | None = None) -> tuple[FakeSim, TxnWorkload]:
    sim = FakeSim()
    w = TxnWorkload(sim, [TopicPartition("txn", 0)])  # type: ignore[arg-type]
    if delays is not None:
        queue = list(delays)
        w.delay = lambda: queue.pop(0) if queue else 0.0  # type: ignore[method-assign]
    return sim, w


def test_at_most_five_in_flight_per_connection() -> None:
    sim, w = workload([])
    p = w.producers[0]
    answers: list[Any] = []
    for i in range(MAX_IN_FLIGHT + 2):
        p.request(1, "Produce", f"r{i}", "route", answers.append)
    assert [s[3] for s in sim.sent] == [f"r{i}" for i in range(MAX_IN_FLIGHT)]
    sim.sent[0][4]("answer 0")  # one answered: the sixth goes
    assert [s[3] for s in sim.sent][-1] == f"r{MAX_IN_FLIGHT}" and len(sim.sent) == MAX_IN_FLIGHT + 1
    p.request(2, "Produce", "other", "route", answers.append)  # another broker, another connection: at once
    assert sim.sent[-1][3] == "other" and sim.sent[-1][1] != sim.sent[0][1]


def test_a_timeout_closes_the_connection_and_fails_the_rest_on_it() -> None:
    sim, w = workload([])
    p = w.producers[0]
    answers: list[tuple[str, Any]] = []
    p.request(1, "Produce", "a", "route", lambda x: answers.append(("a", x)))
    sim.run_for(1000.0)
    p.request(1, "Produce", "b", "route", lambda x: answers.append(("b", x)))
    first = sim.sent[0][1]
    sim.run_for(REQUEST_TIMEOUT_MS - 1000.0)
    assert answers == [("a", None), ("b", None)]  # a timed out, b failed with its connection
    assert any("timed out" in e for e in sim.events)
    sim.sent[1][4]("late")  # b's answer after the close: dropped
    assert answers == [("a", None), ("b", None)]
    p.request(1, "Produce", "c", "route", lambda x: answers.append(("c", x)))
    assert sim.sent[-1][1] != first  # a new connection


def test_a_delayed_request_lands_after_later_ones_and_past_its_timeout() -> None:
    sim, w = workload([8000.0])
    p = w.producers[0]
    answers: list[tuple[str, Any]] = []
    p.request(1, "Produce", "late", "route", lambda x: answers.append(("late", x)))
    p.request(1, "Produce", "behind", "route", lambda x: answers.append(("behind", x)))
    p.request(2, "EndTxn", "end", "route", lambda x: answers.append(("end", x)))
    assert [s[3] for s in sim.sent] == ["end"]  # the other connection's request goes at once
    sim.run_for(REQUEST_TIMEOUT_MS)
    assert ("late", None) in answers and ("behind", None) in answers  # the client gave up on both
    sim.run_for(8000.0 - REQUEST_TIMEOUT_MS)
    # the broker handles the delayed request all the same; what was behind it died with its connection
    assert [(s[0], s[3]) for s in sim.sent] == [(0.0, "end"), (8000.0, "late")]


def test_requests_behind_a_delayed_one_go_after_it_while_the_connection_lives() -> None:
    sim, w = workload([3000.0])
    p = w.producers[0]
    p.request(1, "Produce", "late", "route", lambda x: None)
    p.request(1, "Produce", "behind", "route", lambda x: None)
    sim.run_for(3000.0)
    assert [(s[0], s[3]) for s in sim.sent] == [(3000.0, "late"), (3000.0, "behind")]


def test_the_faults_draw_from_their_own_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tw, "DELAY_SHARE", 0.5)
    draws = [workload()[1].delay() for _ in range(1)] + [workload()[1].delay() for _ in range(1)]
    assert draws[0] == draws[1]  # the same seed, the same first draw
    _, w = workload()
    seq = [w.delay() for _ in range(50)]
    assert any(d > 0 for d in seq) and any(d == 0 for d in seq)
    assert all(d == 0 or tw.DELAY_MS[0] <= d <= tw.DELAY_MS[1] for d in seq)


def test_an_end_txn_landing_inside_a_later_transaction_of_the_same_epoch_is_a_stray() -> None:
    """KIP-890 part 2's case as the workload sees it: T1's EndTxn, delayed past its timeout, reaches the coordinator
    while T2 runs under the same producer id and epoch; one landing in a transaction of a new epoch is not."""
    sim, w = workload([8000.0, 0.0])
    p = w.producers[0]
    p.coordinator, p.producer_id, p.epoch = 1, 5, 0
    t1 = tw.OpenTxn(1, [], False, None, producer_id=5, epoch=0, began_ms=0.0)
    p.txns.append(t1)
    p.txn, p.phase = t1, "end"
    p._end(t1)
    sim.run_for(REQUEST_TIMEOUT_MS)  # timed out: the client retries it, the retry is answered
    p._end(t1)
    t1.ended_ms = sim.now
    p.txns.append(tw.OpenTxn(2, [], True, None, producer_id=5, epoch=0, began_ms=sim.now + 1000.0))
    p.txns.append(tw.OpenTxn(3, [], True, None, producer_id=5, epoch=1, began_ms=sim.now + 1000.0))
    sim.run_for(8000.0 - REQUEST_TIMEOUT_MS)
    assert [(n, at) for n, _, _, at in p.end_txn_landings] == [(1, REQUEST_TIMEOUT_MS), (1, 8000.0)]
    assert p.stray_end_txns() == [tw.StrayEndTxn("p0:T1's EndTxn", "p0:T2", 8000.0)]
    assert w.history().strays == (tw.StrayEndTxn("p0:T1's EndTxn", "p0:T2", 8000.0),)
