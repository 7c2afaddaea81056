"""Ports of Kafka's ControllerEventManagerTest (3.0.0, reference §11.6) to kactor's ControllerActor.

Kafka's ControllerEventManager is a queue plus the controller-event-thread; in kactor it is the ControllerActor's
mailbox and FIFO (one event at a time, even across ZooKeeper round trips), and its metrics (EventQueueTimeMs,
EventQueueSize, the per-state RateAndTimeMs timers) are folded by the MetricsActor from ControllerEventProcessed
records. The tests run the real actors on a runtime with a manual clock; a stand-in "zk" actor holds every ZkRequest
until the test answers it, which plays the role of Kafka's test latch (an event that is "blocked" in process()).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from actors.base import KActor
from actors.clock import ManualClock
from actors.controller_actor import ControllerActor
from actors.metrics_actor import MetricsActor
from actors.runtime import Runtime
from core.controller.config import ControllerConfig
from messages import controller_events as ev
from messages.broker_lifecycle import ControllerInit
from messages.common import Errors
from messages.observability import ControllerEventProcessed
from messages.requests import UpdateMetadataResponse
from messages.runtime import TimerFired
from messages.zk import NONODE, OK, GetData, ZkOpResult, ZkRequest, ZkResponse, ZStat

EDGE = "edge:test"
T0 = 1_000_000.0


class HeldZk(KActor):
    """Stands in for the ZkBridgeActor: keeps each request until the test answers it."""

    def on_start(self) -> None:
        self.requests: list[ZkRequest] = []

    def on_ZkRequest(self, msg: ZkRequest, sender: str) -> None:
        self.requests.append(msg)


class Sink(KActor):
    """timer / state-change-log / net: records what it is sent, decides nothing."""

    def on_start(self) -> None:
        self.got: list[Any] = []

    def on_unhandled(self, body: Any, sender: str) -> None:
        self.got.append(body)


class Harness:
    def __init__(self) -> None:
        self.clock = ManualClock(T0)
        self.rt = Runtime("cem-test", clock=self.clock)
        self.processed: list[ControllerEventProcessed] = []
        self.rt.observer = self._observe
        for cls, name in ((HeldZk, "zk"), (Sink, "timer"), (Sink, "state-change-log"), (Sink, "net"),
                          (MetricsActor, "metrics"), (ControllerActor, "controller")):
            self.rt.spawn(cls, name)
        self.deliver(ControllerInit(ControllerConfig(broker_id=1)))

    def _observe(self, seq: int, ts: float, sender: str, receiver: str, body: Any, cause: int | None) -> None:
        if isinstance(body, ControllerEventProcessed):
            self.processed.append(body)

    def deliver(self, body: Any, at_ms: float | None = None, to: str = "controller") -> None:
        self.rt.deliver(to, body, EDGE, at_ms=at_ms)

    @property
    def controller(self) -> ControllerActor:
        return self.rt.instances["controller"]

    @property
    def zk_requests(self) -> list[ZkRequest]:
        return self.rt.instances["zk"].requests

    @property
    def metrics(self) -> Any:
        return self.rt.instances["metrics"].metrics

    def answer(self, request: ZkRequest, *results: ZkOpResult, at_ms: float | None = None) -> None:
        self.deliver(ZkResponse(request.request_id, results), at_ms=at_ms)


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    try:
        yield harness
    finally:
        if harness.rt.key in _runtime_keys():
            harness.rt.shutdown()


def _runtime_keys() -> set[str]:
    from actors import runtime

    return set(runtime._RUNTIMES)


def _controller_znode(broker_id: int) -> ZkOpResult:
    return ZkOpResult(OK, json.dumps({"version": 1, "brokerid": broker_id, "timestamp": "0"}),
                      ZStat(0, 1, 0, 0, 0))


def _block_on_startup(h: Harness, at_ms: float) -> ZkRequest:
    """Startup's first step (registerZNodeChangeHandlerAndCheckExistence on /controller) waits for ZooKeeper."""
    h.deliver(ev.Startup(), at_ms=at_ms)
    assert h.controller.current is not None and isinstance(h.controller.current.event, ev.Startup)
    return h.zk_requests[-1]


def _finish_startup_as_follower(h: Harness, first: ZkRequest, at_ms: float) -> None:
    """Answer Startup's reads: /controller exists and names broker 2, so elect() stops there."""
    h.answer(first, ZkOpResult(OK, stat=ZStat(0, 1, 0, 0, 0)), at_ms=at_ms)
    get = h.zk_requests[-1]
    assert isinstance(get.batch.ops[0], GetData) and get.batch.ops[0].path == "/controller"
    h.answer(get, _controller_znode(2), at_ms=at_ms)


def test_metrics_cleaned_on_close(h: Harness) -> None:
    """testMetricsCleanedOnClose: closing the event manager leaves none of its metrics behind. kactor keeps them in
    the process's MetricsActor, so they go with the runtime: after shutdown nothing of it can be looked up."""
    h.deliver(ev.TopicChange(), at_ms=T0)
    assert h.metrics.event_queue_time[0] == 1
    key = h.rt.key
    h.rt.shutdown()
    with pytest.raises(KeyError):
        Runtime.lookup(key)


def test_event_without_rate_metrics(h: Harness) -> None:
    """testEventWithoutRateMetrics: UpdateMetadataResponseReceived's state has no RateAndTimeMs timer; the event is
    processed normally (queue time recorded, no timer created)."""
    h.deliver(ev.UpdateMetadataResponseReceived(UpdateMetadataResponse(Errors.NONE), 2), at_ms=T0)
    assert [p.event for p in h.processed] == ["UpdateMetadataResponseReceived"]
    assert h.processed[0].controller_state == "UpdateMetadataResponseReceived"
    assert h.metrics.event_queue_time == (1, 0.0)
    assert h.metrics.rate_and_time == {}
    assert h.controller.current is None and not h.controller.queue


def test_event_queue_time(h: Harness) -> None:
    """testEventQueueTime: the first event is taken at once (queue time 0) and blocks; the second waits 500 ms.
    EventQueueTimeMs has count 2, min 0, max 500. The waiting event runs as soon as the first one completes — on
    the ZooKeeper answer itself, with no further input."""
    first = _block_on_startup(h, T0)
    h.deliver(ev.TopicChange(), at_ms=T0)
    assert len(h.controller.queue) == 1
    _finish_startup_as_follower(h, first, T0 + 500)
    assert [p.event for p in h.processed] == ["Startup", "TopicChange"]
    queue_times = [p.started_ms - p.enqueued_ms for p in h.processed]
    assert queue_times == [0.0, 500.0]
    assert min(queue_times) == 0.0 and max(queue_times) == 500.0
    assert h.metrics.event_queue_time == (2, 500.0)
    assert h.controller.current is None and not h.controller.queue


def test_event_queue_time_reset_on_timeout(h: Harness) -> None:
    """testEventQueueTimeResetOnTimeout: Kafka clears its EventQueueTimeMs histogram after the queue has been idle
    for eventQueueTimeTimeoutMs, so a stale max does not linger. kactor exports the timer as a Prometheus summary
    (count, sum), which must never go backwards, so nothing is cleared; what an idle queue shows is EventQueueSize 0
    and a count that stays where it was."""
    h.deliver(ev.TopicChange(), at_ms=T0)
    h.deliver(ev.TopicChange(), at_ms=T0 + 1)
    assert h.metrics.event_queue_time == (2, 0.0) and h.metrics.event_queue_size == 0
    h.clock.advance(300_000)  # Kafka's default eventQueueTimeTimeoutMs: still cumulative here
    assert h.metrics.snapshot().event_queue_time == (2, 0.0)
    assert h.metrics.snapshot().event_queue_size == 0


def test_successful_event(h: Harness) -> None:
    """testSuccessfulEvent: AutoPreferredReplicaLeaderElection — the thread is in the event's state while it runs,
    Idle afterwards, and AutoLeaderBalanceRateAndTimeMs counts one more event."""
    h.deliver(TimerFired("auto-leader-rebalance"), at_ms=T0)  # the rebalance timer's input becomes the event
    assert [p.event for p in h.processed] == ["AutoPreferredReplicaLeaderElection"]
    assert h.processed[0].controller_state == "AutoLeaderBalance"
    assert h.metrics.rate_and_time["AutoLeaderBalanceRateAndTimeMs"][0] == 1
    assert h.metrics.controller_state == int(ev.ControllerState.Idle)
    # while an event waits for ZooKeeper the actor is in that event's state
    first = _block_on_startup(h, T0 + 10)
    assert h.controller._core().controller_state(h.controller.current.event) == "ControllerChange"
    assert h.metrics.controller_state == int(ev.ControllerState.ControllerChange)  # the gauge, as a scrape sees it
    _finish_startup_as_follower(h, first, T0 + 20)
    assert h.controller.current is None and h.metrics.controller_state == int(ev.ControllerState.Idle)
    assert h.metrics.rate_and_time["ControllerChangeRateAndTimeMs"][0] == 1


def test_event_that_throws_exception(h: Harness) -> None:
    """testEventThatThrowsException: a BrokerChange whose processing fails — the thread survives, its state goes
    back to Idle and LeaderElectionRateAndTimeMs counts the event; the next event is processed normally."""
    h.controller._core().active_controller_id = 1  # an active controller reads /brokers/ids on BrokerChange
    h.deliver(ev.BrokerChange(), at_ms=T0)
    read = h.zk_requests[-1]
    assert read.batch.ops[0].path == "/brokers/ids"
    h.answer(read, ZkOpResult("CONNECTIONLOSS"), at_ms=T0 + 3)  # KeeperError inside processBrokerChange
    assert [p.event for p in h.processed] == ["BrokerChange"]
    assert h.metrics.rate_and_time["LeaderElectionRateAndTimeMs"] == (1, 3.0)
    assert h.metrics.controller_state == int(ev.ControllerState.Idle)
    assert h.controller.current is None
    h.controller._core().active_controller_id = -1
    h.deliver(ev.TopicChange(), at_ms=T0 + 4)
    assert [p.event for p in h.processed] == ["BrokerChange", "TopicChange"]


def test_events_queued_behind_a_zookeeper_wait_run_in_order_without_another_input(h: Harness) -> None:
    """kactor regression (found on a real cluster): an event that completes on a ZkResponse must start the events
    queued meanwhile; they used to wait for the next input, so a ControlledShutdown request could sit unanswered."""
    first = _block_on_startup(h, T0)
    for _ in range(3):
        h.deliver(ev.TopicChange(), at_ms=T0 + 1)
    h.deliver(ev.UpdateMetadataResponseReceived(UpdateMetadataResponse(Errors.NONE), 3), at_ms=T0 + 2)
    assert len(h.controller.queue) == 4
    h.answer(first, ZkOpResult(NONODE), at_ms=T0 + 5)
    # elect() reads /controller next: Startup is still waiting, nothing queued has started
    assert [p.event for p in h.processed] == []
    h.answer(h.zk_requests[-1], _controller_znode(2), at_ms=T0 + 6)
    assert [p.event for p in h.processed] == ["Startup", "TopicChange", "TopicChange", "TopicChange",
                                              "UpdateMetadataResponseReceived"]
    assert h.controller.current is None and not h.controller.queue
