"""TimerActor ("timer"): hands ScheduleTimer / CancelTimer to the timer edge.

It exists so that arming a timer is a traced message like any other: a replay sees the ScheduleTimer, and the
TimerFired that follows (recorded as an external input from "edge:timer") names it as its cause. In replay there
is no timer edge, so this actor does nothing and the recorded TimerFired inputs stand in for real timers.
"""

from __future__ import annotations

from actors.base import KActor
from actors.edge_slots import Timers
from messages.runtime import CancelTimer, ScheduleTimer


class TimerActor(KActor):
    """The actor named "timer": the actor-side face of `edges.timer.TimerEdge`."""

    def _edge(self) -> Timers | None:
        return self.runtime.edges.timer

    def on_ScheduleTimer(self, msg: ScheduleTimer, sender: str) -> None:
        edge = self.runtime.edges.timer  # _edge, inline: every shard's step may arm its timer
        if edge is not None:
            # The timer belongs to whoever asked; this message's seq becomes the TimerFired's cause.
            edge.schedule(sender, msg.key, msg.delay_ms, self.runtime.current_seq)

    def on_CancelTimer(self, msg: CancelTimer, sender: str) -> None:
        edge = self._edge()
        if edge is not None:
            edge.cancel(sender, msg.key)
