"""The windowed rate a client quota is measured with: Kafka's ``Rate`` over a ``SampledStat`` of ``WindowedSum``
samples, with the ``MetricConfig`` a quota sensor gets (``quota.window.num`` samples of
``quota.window.size.seconds`` each) and the check ``Sensor.checkQuotas`` makes after a record.

Time is what the caller passes (milliseconds): the quota manager takes the clock's reading, so a replay or a frozen
test clock sees the same rates.
"""

from __future__ import annotations

import attrs


@attrs.frozen(slots=True)
class QuotaWindow:
    """MetricConfig of a quota sensor: ``samples`` windows of ``window_ms`` each (quota.window.num,
    quota.window.size.seconds)."""

    samples: int = 11
    window_ms: int = 1000


class _Sample:
    """SampledStat.Sample: a window's sum, its event count and when it started."""

    __slots__ = ("value", "event_count", "last_window_ms")

    def __init__(self, now_ms: int) -> None:
        self.value = 0.0
        self.event_count = 0
        self.last_window_ms = now_ms

    def reset(self, now_ms: int) -> None:
        self.value = 0.0
        self.event_count = 0
        self.last_window_ms = now_ms

    def is_complete(self, now_ms: int, window: QuotaWindow) -> bool:
        # MetricConfig's eventWindow is Long.MAX_VALUE for quota sensors: only time completes a sample
        return now_ms - self.last_window_ms >= window.window_ms


class Rate:
    """Kafka's ``Rate`` (unit seconds) over a ``WindowedSum`` ``SampledStat``: the sum of the retained samples over
    the time they span, counted as at least ``samples - 1`` whole windows."""

    __slots__ = ("_samples", "_current")

    def __init__(self) -> None:
        self._samples: list[_Sample] = []
        self._current = 0

    def record(self, window: QuotaWindow, value: float, now_ms: int) -> None:
        """SampledStat.record: into the current sample, advancing to the next once the current one is complete."""
        sample = self._current_sample(now_ms)
        if sample.is_complete(now_ms, window):
            sample = self._advance(window, now_ms)
        sample.value += value
        sample.event_count += 1

    def measure(self, window: QuotaWindow, now_ms: int) -> float:
        """Rate.measure: the windowed sum per second."""
        self._purge_obsolete(window, now_ms)
        total = sum(s.value for s in self._samples)
        return total / (self.window_size(window, now_ms) / 1000.0)

    def window_size(self, window: QuotaWindow, now_ms: int) -> int:
        """Rate.windowSize: the time since the oldest retained sample began, at least ``samples - 1`` full windows
        (so that a rate over the first second of traffic is not measured over one second only)."""
        self._purge_obsolete(window, now_ms)
        total_elapsed = now_ms - self._oldest(now_ms).last_window_ms
        full_windows = total_elapsed // window.window_ms
        min_full_windows = window.samples - 1
        if full_windows < min_full_windows:
            total_elapsed += (min_full_windows - full_windows) * window.window_ms
        return int(total_elapsed)

    def _current_sample(self, now_ms: int) -> _Sample:
        if not self._samples:
            self._samples.append(_Sample(now_ms))
        return self._samples[self._current]

    def _advance(self, window: QuotaWindow, now_ms: int) -> _Sample:
        self._current = (self._current + 1) % window.samples
        if self._current >= len(self._samples):
            sample = _Sample(now_ms)
            self._samples.append(sample)
            return sample
        sample = self._samples[self._current]
        sample.reset(now_ms)
        return sample

    def _oldest(self, now_ms: int) -> _Sample:
        if not self._samples:
            self._samples.append(_Sample(now_ms))
        return min(self._samples, key=lambda s: s.last_window_ms)

    def _purge_obsolete(self, window: QuotaWindow, now_ms: int) -> None:
        expire_age = window.samples * window.window_ms
        for s in self._samples:
            if now_ms - s.last_window_ms >= expire_age:
                s.reset(now_ms)


class QuotaViolationError(Exception):
    """Kafka's QuotaViolationException: the rate measured after a record, the bound it exceeds, and the window the
    rate was measured over."""

    def __init__(self, value: float, bound: float, window_size_ms: int) -> None:
        super().__init__(f"rate {value} above quota {bound}")
        self.value = value
        self.bound = bound
        self.window_size_ms = window_size_ms


class QuotaSensor:
    """A quota sensor: one Rate with an upper-bound quota (``None``: unlimited). ``record`` raises QuotaViolationError
    when the rate after the record is above the bound (Sensor.record + checkQuotas); ``check=False`` records
    without checking (recordNoThrottle, and the unrecord of a throttled fetch)."""

    __slots__ = ("rate", "window", "bound", "last_used_ms")

    def __init__(self, window: QuotaWindow, bound: float | None, now_ms: int) -> None:
        self.rate = Rate()
        self.window = window
        self.bound = bound
        self.last_used_ms = now_ms

    def record(self, value: float, now_ms: float, check: bool = True) -> None:
        now_ms = int(now_ms)  # Kafka's clock is whole milliseconds
        self.last_used_ms = now_ms
        self.rate.record(self.window, value, now_ms)
        if check and self.bound is not None:
            measured = self.rate.measure(self.window, now_ms)
            if not measured <= self.bound:  # Quota.acceptable for an upper bound
                raise QuotaViolationError(measured, self.bound, self.rate.window_size(self.window, now_ms))
