"""The values the incident detectors read and give: trace records, process runs, incidents, error counts."""

from __future__ import annotations

from typing import Any

import attrs

LATE_PRODUCE_MS = 1000.0


@attrs.frozen(slots=True)
class Rec:
    """One trace record the detectors read: ``payload`` is its codec JSON (``{"@": "Type", ...}``)."""

    process: str
    seq: int
    ts: float
    sender: str
    receiver: str
    type: str
    payload: Any


@attrs.frozen(slots=True)
class ProcessRun:
    """One process incarnation's trace (``broker-0.1``): its first and last record and whether it shut down in
    order (its ``BrokerShutdownRequested``: SIGTERM; without one the process was killed or crashed)."""

    process: str
    broker_id: int | None
    first_ts: float
    last_ts: float
    shutdown_ts: float | None = None  # when it was asked to shut down in order (SIGTERM)

    @property
    def orderly(self) -> bool:
        return self.shutdown_ts is not None


@attrs.frozen(slots=True)
class Incident:
    kind: str
    start_ms: float
    end_ms: float | None  # None: still going on at the end of the trace
    subject: str
    detail: str
    partitions: tuple[str, ...] = ()

    @property
    def duration_ms(self) -> float | None:
        return None if self.end_ms is None else self.end_ms - self.start_ms


@attrs.frozen(slots=True)
class ErrorCount:
    """``requests`` answers to ``request`` requests carried ``error`` (``partitions`` times in all)."""

    error: str
    request: str
    requests: int
    partitions: int
    expected: bool
    meaning: str
    first_ms: float
    last_ms: float


@attrs.frozen(slots=True)
class Findings:
    incidents: tuple[Incident, ...]
    errors: tuple[ErrorCount, ...]
    first_ms: float | None
    last_ms: float | None
    late_produce_ms: float
