"""sim/rounding.py's round_ms is round(ms, 3), double for double: the event loop's times (and so every seed's events)
are what they were with round."""

from __future__ import annotations

import random

from sim.rounding import round_ms
from sim.runtime import START_MS


def test_round_ms_is_round_to_three_places_on_a_run_s_clock_values() -> None:
    rng = random.Random(43)
    for _ in range(200_000):
        ms = START_MS + rng.uniform(0.0, 3_600_000.0)
        if rng.random() < 0.5:  # a time rounded already plus a delay, as the event loop adds them
            ms = round(ms, 3) + rng.choice([0.0, 0.2, 1.0, 1.234, 500.0, 30000.0, rng.uniform(0.2, 3.0)])
        assert round_ms(ms) == round(ms, 3), ms


def test_round_ms_rounds_half_to_even_as_round_does() -> None:
    # every residue of a double's 2**-12 ms steps against the thousandths, ties (an exact half) among them
    base = int(START_MS) * 4096
    for k in range(8192):
        ms = (base + k) / 4096
        assert round_ms(ms) == round(ms, 3), ms


def test_round_ms_of_other_values_is_round_s() -> None:
    for ms in (0.0, 0.0005, 0.0015, 1.2345, -3.0005, 1e6 + 0.0005, 2.0**41 + 0.5, float("inf")):
        assert round_ms(ms) == round(ms, 3)


def test_sim_at_skips_rounding_only_where_the_sum_is_the_rounded_double() -> None:
    # Sim.at's fast path: a clock holding a rounded time plus a whole delay is round_ms of the sum itself
    import heapq
    import itertools
    import types

    from actors.clock import ManualClock
    from sim.runtime import Sim, SimTimers

    rng = random.Random(44)
    for _ in range(100_000):
        now = round_ms(START_MS + rng.uniform(0.0, 3_600_000.0))
        delay = rng.choice([0.0, 1.0, 500.0, 30000.0, float(rng.randrange(0, 10**7)), rng.uniform(0.0, 3000.0),
                            round(rng.uniform(0.2, 3.0), 3)])
        sim = types.SimpleNamespace(clock=ManualClock(now), _queue=[], _seq=itertools.count())
        Sim.at(sim, delay, lambda: None)  # type: ignore[arg-type]
        t = heapq.heappop(sim._queue)[0]
        assert t == round(now + delay, 3) and t.__class__ is float, (now, delay)
        # SimTimers.schedule's Sim.at of max(0.0, float(delay)), its clamp inline: an int delay, a negative one, a NaN
        sim.at = lambda d, fn, sim=sim: Sim.at(sim, d, fn)  # type: ignore[misc]
        timers = SimTimers.__new__(SimTimers)
        timers.sim, timers.live, timers._tokens = sim, {}, itertools.count(1)  # type: ignore[assignment]
        for d in (delay, int(delay), -delay - 1.0, float("nan")):
            timers.schedule("owner", "key", d)
            t = heapq.heappop(sim._queue)[0]
            assert t == round(now + max(0.0, float(d)), 3) and t.__class__ is float, (now, d)
