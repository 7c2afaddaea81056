"""Actors' messages travel as the tuple (body, sender name, cause seq) instead of a frozen Envelope (issue #43: its
__init__ was a quarter of a delivery's instructions). What the actors see and what the trace records are as
before, on thespian's simpleSystemBase (a broker) and on kactor's inline system (the simulator, a replay); an
Envelope is still taken."""

from __future__ import annotations

from typing import Any

import pytest

from actors.base import KActor
from actors.clock import ManualClock
from actors.runtime import Runtime
from kactor.trace.inline_system import InlineActorSystem
from messages.runtime import Envelope

SEEN: list[tuple[str, Any, str]] = []


class Relay(KActor):
    def on_int(self, msg: int, sender: str) -> None:
        SEEN.append((self.name, msg, sender))
        self.post("sink", msg * 10)


class Sink(KActor):
    def on_int(self, msg: int, sender: str) -> None:
        SEEN.append((self.name, msg, sender))

    def on_str(self, msg: str, sender: str) -> None:
        raise ValueError(msg)


@pytest.mark.parametrize("system", ["thespian", "inline"])
def test_posted_messages_are_delivered_and_recorded_with_their_cause(system: str) -> None:
    SEEN.clear()
    rt = Runtime(f"tuple-{system}", clock=ManualClock(5.0),
                 actor_system=InlineActorSystem() if system == "inline" else None)
    recorded: list[tuple[int, float, str, str, Any, int | None]] = []
    rt.observer = lambda *line: recorded.append(line)
    try:
        rt.spawn(Relay, "relay")
        rt.spawn(Sink, "sink")
        rt.deliver("relay", 1, "edge:test", None)
        rt.deliver("relay", 2, "edge:test", 77)
        rt.deliver("sink", "boom", "edge:test", None)  # a failing handler: ActorFailed recorded, caused by it
        relay, sink = rt.instances["relay"], rt.instances["sink"]
        # an Envelope, as thespian or a test may still hand one over, and the tuple itself
        sink.receiveMessage(Envelope(3, "edge:old", 2), None)
        sink._receive((4, "edge:new", None), None)
        assert relay.name == "relay"
    finally:
        rt.shutdown()
    assert SEEN == [("relay", 1, "edge:test"), ("sink", 10, "relay"), ("relay", 2, "edge:test"),
                    ("sink", 20, "relay"), ("sink", 3, "edge:old"), ("sink", 4, "edge:new")]
    lines = [(seq, sender, receiver, body if not hasattr(body, "handler") else body.handler, cause)
             for seq, _ts, sender, receiver, body, cause in recorded]
    assert lines[:4] == [(1, "edge:test", "relay", 1, None), (2, "relay", "sink", 10, 1),
                         (3, "edge:test", "relay", 2, 77), (4, "relay", "sink", 20, 3)]
    assert lines[4][:4] == (5, "edge:test", "sink", "boom")
    failed = lines[5]
    assert failed[0] == 6 and failed[1:3] == ("sink", "sink") and failed[4] == 5  # ActorFailed, caused by seq 5
    assert type(recorded[5][4]).__name__ == "ActorFailed"
    assert lines[6:] == [(7, "edge:old", "sink", 3, 2), (8, "edge:new", "sink", 4, None)]
