"""The simulated clock's rounding to the trace's precision (µs), fast."""

from __future__ import annotations

_M_LO, _M_HI = float(1 << 52), float(1 << 53)


def round_ms(ms: float) -> float:
    """``round(ms, 3)``, the same double, in a third of its time for a simulated clock's values (the run's epoch
    START_MS lies in [2**40, 2**41) ms, where a double is a whole number of 2**-12 ms): ``ms`` * 1000 rounded half to
    even, exactly in integers, then divided by 1000, which is correctly rounded as round's decimal conversion is. Any
    other value goes to round itself. (The event loop rounds every event's time: round's conversion through decimal
    digits was a hundredth of a seed's CPU; tests/sim/test_sim_rounding.py holds the two equal.)"""
    m = ms * 4096.0
    if _M_LO <= m < _M_HI:
        i = int(m)
        if i == m:
            q, r = divmod(i * 125, 512)  # ms * 1000 = i * 125 / 512
            if r > 256 or (r == 256 and q & 1):
                q += 1
            return q / 1000
    return round(ms, 3)


__all__ = ["round_ms"]
