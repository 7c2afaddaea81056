"""Injectable clocks.

Actors never read the system clock: they ask the runtime's Clock. Live, the clock reads ``time.time()`` once per
external input (so every message of one cascade sees the same instant and a replay reproduces it); in replay the
clock is set from the trace's timestamps; unit tests pass a ManualClock or run under freezegun with SystemClock.
"""

from __future__ import annotations

import time


class Clock:
    """Milliseconds since the epoch, as Kafka's ``Time.milliseconds()``."""

    def now_ms(self) -> float:
        raise NotImplementedError


class SystemClock(Clock):
    """Reads ``time.time()`` on every call (freezegun-friendly)."""

    def now_ms(self) -> float:
        return time.time() * 1000.0


class ManualClock(Clock):
    """A clock tests and replay move by hand."""

    def __init__(self, start_ms: float = 0.0) -> None:
        self._now = float(start_ms)

    def now_ms(self) -> float:
        return self._now

    def set(self, now_ms: float) -> None:
        # float() only when it is not one already (the simulator sets the clock before every event)
        self._now = now_ms if now_ms.__class__ is float else float(now_ms)

    def advance(self, ms: float) -> None:
        self._now += ms
