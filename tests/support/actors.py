"""Actors under test on a real Runtime (thespian's simpleSystemBase, a ManualClock): stand-in peers that answer
nothing, a ZooKeeper bridge answering from the in-memory model, and a record of every message delivered, as the trace
would hold it."""

from __future__ import annotations

from typing import Any

import attrs

from actors.base import KActor
from actors.clock import ManualClock
from actors.runtime import Runtime
from messages.registry import message
from messages.zk import ZkRequest, ZkResponse
from tests.support.fake_zookeeper import FakeZooKeeper


class Sink(KActor):
    """Takes any message and answers none: stands in for an edge ("net", "timer", "zk") or a peer actor."""

    def on_unhandled(self, body: Any, sender: str) -> None:
        pass


@message
class ReleaseHeldZkRequests:
    """(tests) Tell a ZooKeeperModel to stop holding and answer what it held."""


class ZooKeeperModel(KActor):
    """Stands in for the ZkBridgeActor ("zk"): answers every ZkRequest from ``zk``, an in-memory FakeZooKeeper the
    test may replace or seed. With ``hold`` set, requests wait in ``held`` until a ReleaseHeldZkRequests arrives (a
    slow ZooKeeper)."""

    def on_start(self) -> None:
        self.zk = FakeZooKeeper()
        self.hold = False
        self.held: list[ZkRequest] = []
        self.requests: list[ZkRequest] = []

    def on_ZkRequest(self, req: ZkRequest, sender: str) -> None:
        self.requests.append(req)
        if self.hold:
            self.held.append(req)
        else:
            self._answer(req)

    def _answer(self, req: ZkRequest) -> None:
        self.post(req.reply_to, ZkResponse(req.request_id, self.zk(req.batch)))

    def on_ReleaseHeldZkRequests(self, msg: ReleaseHeldZkRequests, sender: str) -> None:
        self.hold = False
        while self.held:
            self._answer(self.held.pop(0))


@attrs.frozen
class Delivered:
    """One message as the runtime delivered it: at the actors' clock, from ``sender`` to ``receiver``."""

    at_ms: float
    sender: str
    receiver: str
    body: Any


class ActorTestbed:
    """A Runtime on a ManualClock whose every delivery is kept in ``delivered`` (the runtime's observer hook)."""

    def __init__(self, process_name: str = "test", start_ms: float = 1_000.0, sinks: tuple[str, ...] = ()) -> None:
        self.clock = ManualClock(start_ms)
        self.rt = Runtime(process_name, clock=self.clock)
        self.delivered: list[Delivered] = []
        self.rt.observer = lambda seq, ts, sender, receiver, body, cause: self.delivered.append(
            Delivered(ts, sender, receiver, body))
        for name in sinks:
            self.rt.spawn(Sink, name)

    def deliver(self, to: str, body: Any, sender: str, at_ms: float | None = None) -> list[Delivered]:
        """Deliver one input (at ``at_ms`` on the clock, if given) and return what it caused, the input excluded."""
        start = len(self.delivered)
        self.rt.deliver(to, body, sender, at_ms=at_ms)
        return self.delivered[start + 1:]

    def shutdown(self) -> None:
        self.rt.shutdown()
