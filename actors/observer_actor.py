"""ObserverActor: the sink for records kept for people and tools (Kafka's state-change log, metrics).

Its value is in the trace, which records everything it receives; it keeps the latest of each record type so a
metrics endpoint can read them.
"""

from __future__ import annotations

from typing import Any

from actors.base import KActor


class ObserverActor(KActor):
    def on_start(self) -> None:
        self.latest: dict[str, Any] = {}
        self.counts: dict[str, int] = {}

    def on_unhandled(self, body: Any, sender: str) -> None:
        name = type(body).__name__
        self.latest[name] = body
        self.counts[name] = self.counts.get(name, 0) + 1
