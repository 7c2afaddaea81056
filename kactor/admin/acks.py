"""What ``kactor describe --watch --produce`` shows of a live producer next to the leaders: per partition the last
acknowledged offset, acknowledgements per second, how long ago the last one came, the longest pause between two
(a leader moving: the producer waits for metadata, retries, and the acks resume at the new leader), records waiting
for an answer and records that failed with their last error.

Pure bookkeeping fed by the producer's delivery reports, on an injectable clock; thread-safe (reports arrive on the
producer's thread, snapshots are taken on the display's).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

import attrs

RATE_WINDOW_S = 5.0


@attrs.frozen(slots=True)
class PartitionAcks:
    """One partition's acknowledgements, as of a snapshot."""

    acked: int = 0
    last_offset: int = -1
    since_last_ack_s: float | None = None
    rate: float = 0.0
    max_gap_s: float = 0.0
    in_flight: int = 0
    failed: int = 0
    last_error: str | None = None


@attrs.frozen(slots=True)
class AckSnapshot:
    topic: str
    acks: str
    target_rate: float
    partitions: dict[int, PartitionAcks]

    @property
    def acked(self) -> int:
        return sum(p.acked for p in self.partitions.values())

    @property
    def failed(self) -> int:
        return sum(p.failed for p in self.partitions.values())

    @property
    def in_flight(self) -> int:
        return sum(p.in_flight for p in self.partitions.values())

    @property
    def max_gap_s(self) -> float:
        return max((p.max_gap_s for p in self.partitions.values()), default=0.0)


class _Partition:
    __slots__ = ("acked", "failed", "first_sent", "in_flight", "last_ack", "last_error", "last_offset", "max_gap",
                 "recent", "unacked")

    def __init__(self) -> None:
        self.acked = 0
        self.failed = 0
        self.in_flight = 0
        self.last_offset = -1
        self.last_ack: float | None = None
        self.first_sent: float | None = None
        self.max_gap = 0.0
        self.last_error: str | None = None
        self.recent: deque[float] = deque()
        self.unacked = False  # records sent since the last acknowledgement: a pause in progress


class AckTracker:
    """Counts sends and delivery reports per partition."""

    def __init__(self, topic: str, acks: str, target_rate: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.topic = topic
        self.acks = acks
        self.target_rate = target_rate
        self._clock = clock
        self._lock = threading.Lock()
        self._parts: dict[int, _Partition] = {}

    def sent(self, partition: int) -> None:
        with self._lock:
            p = self._parts.setdefault(partition, _Partition())
            p.in_flight += 1
            p.unacked = True
            if p.first_sent is None:
                p.first_sent = self._clock()

    def delivered(self, partition: int, offset: int, error: str | None) -> None:
        """A delivery report: acknowledged at ``offset``, or failed with ``error``."""
        now = self._clock()
        with self._lock:
            p = self._parts.setdefault(partition, _Partition())
            p.in_flight = max(0, p.in_flight - 1)
            if error is not None:
                p.failed += 1
                p.last_error = error
                return
            since = p.last_ack if p.last_ack is not None else p.first_sent
            if since is not None:
                p.max_gap = max(p.max_gap, now - since)
            p.acked += 1
            p.last_offset = max(p.last_offset, offset)
            p.last_ack = now
            p.unacked = p.in_flight > 0
            p.recent.append(now)

    def snapshot(self) -> AckSnapshot:
        now = self._clock()
        out: dict[int, PartitionAcks] = {}
        with self._lock:
            for n, p in self._parts.items():
                while p.recent and p.recent[0] < now - RATE_WINDOW_S:
                    p.recent.popleft()
                waited_since = p.last_ack if p.last_ack is not None else p.first_sent
                # a pause still going on (records waiting, or failed, since the last ack) counts as a gap already
                gap = max(p.max_gap, now - waited_since) if p.unacked and waited_since is not None else p.max_gap
                out[n] = PartitionAcks(p.acked, p.last_offset, None if p.last_ack is None else now - p.last_ack,
                                       len(p.recent) / RATE_WINDOW_S, gap, p.in_flight, p.failed, p.last_error)
        return AckSnapshot(self.topic, self.acks, self.target_rate, out)
