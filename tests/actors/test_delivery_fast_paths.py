"""The delivery path's shortcuts (issue #43, cheap messages) change nothing an actor or a trace sees: a runtime with
no trace and no observer (the simulator) numbers its messages and their causes as one that records them, and an
actor's ``now_ms``, bound to the runtime's clock at ActorInit, reads the clock as it moves."""

from __future__ import annotations

from typing import Any

import pytest

from actors.base import KActor
from actors.clock import ManualClock
from actors.runtime import Runtime
from kactor.trace.inline_system import InlineActorSystem

SEEN: list[tuple[str, Any, str, int | None, float]] = []


class Relay(KActor):
    def on_int(self, msg: int, sender: str) -> None:
        SEEN.append((self.name, msg, sender, self.runtime.current_seq, self.now_ms()))
        if msg < 1000:
            self.post("sink", msg * 10)
            self.post("relay", msg * 100)


class Sink(KActor):
    def on_int(self, msg: int, sender: str) -> None:
        SEEN.append((self.name, msg, sender, self.runtime.current_seq, self.now_ms()))

    def on_str(self, msg: str, sender: str) -> None:
        raise ValueError(msg)


def _run(system: str, observe: bool) -> tuple[list[Any], list[Any], int]:
    SEEN.clear()
    clock = ManualClock(5.0)
    rt = Runtime(f"fast-{system}-{observe}", clock=clock,
                 actor_system=InlineActorSystem() if system == "inline" else None)
    recorded: list[Any] = []
    if observe:
        rt.observer = lambda seq, ts, sender, receiver, body, cause: recorded.append((seq, receiver, body, cause))
    try:
        rt.spawn(Relay, "relay")
        rt.spawn(Sink, "sink")
        rt.deliver("relay", 1, "edge:test", None)
        clock.set(9.5)
        rt.deliver("relay", 2, "edge:test", 77)
        rt.deliver("sink", "boom", "edge:test", None)  # ActorFailed is recorded (and numbered) either way
        rt.deliver("sink", 3, "edge:test", None)
        with pytest.raises(KeyError):
            rt.instances["relay"].post("nobody", 1)
        seq = rt.seq
    finally:
        rt.shutdown()
    return list(SEEN), recorded, seq


@pytest.mark.parametrize("system", ["thespian", "inline"])
def test_a_runtime_without_trace_or_observer_numbers_messages_as_one_recording_them(system: str) -> None:
    seen_quiet, _, seq_quiet = _run(system, observe=False)
    seen_observed, recorded, seq_observed = _run(system, observe=True)
    assert seen_quiet == seen_observed
    assert seq_quiet == seq_observed == len(recorded) == recorded[-1][0]
    # the handlers saw the seq each message was recorded with, and the clock as it was at each delivery
    assert [(name, msg, cur) for name, msg, _s, cur, _t in seen_observed] == \
        [(receiver, body, seq) for seq, receiver, body, _c in recorded if type(body) is int]
    assert {t for *_, t in seen_observed[:3]} == {5.0} and seen_observed[-1][4] == 9.5
