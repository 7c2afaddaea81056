"""The data plane of a chaos run behind one small interface: produce with acks=all, read committed records, tell
the UNKNOWN_SERVER_ERROR answers received.

`DataClient` is what the runner uses; `kactor.chaos.kafka_client.KafkaDataClient` is the one it runs with, made of
Kafka's own client library (`ChaosRun(..., client_factory=...)` takes another).
"""

from __future__ import annotations

from typing import Protocol

from kactor.chaos.history import ErrorAnswer


class ProduceError(Exception):
    """Not acknowledged: no leader, unreachable, timed out or an error answer (the records may or may not be in
    the log; nothing is expected of them)."""


class DataClient(Protocol):
    def produce(self, topic: str, partition: int, values: tuple[str, ...]) -> int:
        """Append ``values`` with acks=all; the offset of the first (they are at consecutive offsets).
        ProduceError unless the cluster acknowledged them."""

    def read(self, topic: str, partition: int, offset: int) -> tuple[tuple[str, ...], int]:
        """(records from ``offset`` below the leader's high watermark, that high watermark), as a consumer's
        fetch sees them; ((), -1) when the partition cannot be read now."""

    def error_answers(self) -> tuple[ErrorAnswer, ...]:
        """The UNKNOWN_SERVER_ERROR answers the client received so far (``ts``: time.monotonic())."""

    def close(self) -> bool | None:
        """Let go of the client's connections; False when part of that was given up (a close that hung)."""
