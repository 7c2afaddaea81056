"""Which partitions the simulated producer writes to at each step of a `kactor sim` run: a pure function of the
seed, drawn from streams of its own (as sim/faults.py draws stops and pauses), so the fault schedule of every seed is
the one it had before.

A real producer writes where its records' keys send them: a busy partition gets records every step, a quiet one may
get none for many seconds. Until 2026-11-27 every partition got one record each step, so a leader elected within a
step always wrote the next step's record before anything could take its leadership away, and a replica that led an
epoch without writing a record and then followed (the state behind KAFKA-10706, fix 5d23a47) never arose. Now each
partition of a seed gets a rate from ``RATES`` (the ``rates-<seed>`` stream): at every step it is written with that
probability (the ``writes-<seed>`` stream, one draw per partition and step whether or not it is used, so one
partition's rate does not move another's draws). A seed whose partitions all drew 1.0 writes as before.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

RATES = (1.0, 0.5, 0.2)  # a partition's share of steps with a record: busy, half, quiet


def rates(seed: int, partitions: int) -> tuple[float, ...]:
    stream = random.Random(f"rates-{seed}")
    return tuple(stream.choice(RATES) for _ in range(partitions))


def writes(seed: int, steps: int, partitions: int) -> list[tuple[bool, ...]]:
    """For each step, whether each partition (in sorted order) gets a record."""
    shares: Sequence[float] = rates(seed, partitions)
    stream = random.Random(f"writes-{seed}")
    return [tuple(stream.random() < share for share in shares) for _ in range(steps)]


__all__ = ["RATES", "rates", "writes"]
