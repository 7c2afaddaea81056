"""The producer of ``kactor describe --watch --produce``: it sends at ``--rate`` however fast the acknowledgements
come back (librdkafka's poll returns as soon as it serves one delivery report)."""

from __future__ import annotations

from typing import Any

from kactor.admin.acks import AckTracker
from kactor.admin.watch_producer import WatchProducer


class _EagerProducer:
    """A producer whose every record is acknowledged at once: poll(timeout) serves the waiting reports and returns
    after 1 ms of the fake clock whenever there is one, as librdkafka's does; the run stops after 2 s."""

    def __init__(self, watch: list[WatchProducer]) -> None:
        self.now = 0.0
        self.watch = watch
        self.sent: list[tuple[float, int]] = []
        self.waiting: list[tuple[int, int, Any]] = []

    def clock(self) -> float:
        return self.now

    def produce(self, topic: str, value: bytes, partition: int, on_delivery: Any) -> None:
        self.sent.append((self.now, partition))
        self.waiting.append((partition, len(self.sent) - 1, on_delivery))

    def poll(self, timeout: float) -> int:
        served, self.waiting = self.waiting, []
        self.now += 0.001 if served else timeout
        for _partition, offset, report in served:
            report(None, _Msg(offset))
        if self.now >= 2.0:
            self.watch[0]._stop.set()
        return len(served)


class _Msg:
    def __init__(self, offset: int) -> None:
        self._offset = offset

    def offset(self) -> int:
        return self._offset


def test_sends_at_the_rate_however_fast_acks_come_back() -> None:
    watch: list[WatchProducer] = []
    producer = _EagerProducer(watch)
    tracker = AckTracker("t", "all", 20.0, clock=producer.clock)
    w = WatchProducer("unused:0", "t", 20.0, "all", tracker, producer=producer, clock=producer.clock)
    watch.append(w)
    w.partitions = [0, 1, 2]
    w._run()
    assert len(producer.sent) == 40  # 2 s at 20 a second (was 1,000+: one record per acknowledgement)
    assert [round(t, 3) for t, _ in producer.sent[:4]] == [0.0, 0.05, 0.1, 0.15]
    assert [p for _, p in producer.sent[:6]] == [0, 1, 2, 0, 1, 2]
    assert tracker.snapshot().partitions[0].acked == 14
