"""The seeded fault schedule of a `kactor sim` run: which step crashes, restarts, cuts or heals what.

A schedule is a pure function of (seed, steps, brokers): the same seed gives the same faults. At most one broker is
down and one link cut at a time, so an RF-3 partition with min.insync.replicas=2 can always satisfy acks=all
somewhere; a crashed broker comes back after RESTART_AFTER_STEPS steps (its ZooKeeper session must have expired
first: a restarted broker cannot register over its old ephemeral), a cut link heals after 2 to 6 steps.

A quarter of the broker outages are orderly stops instead of crashes: SIGTERM's controlled shutdown (the controller
moves the broker's leaderships away first, then the broker closes its session). Which ones is drawn from a stream of
its own, so the steps and brokers of every fault are those of the schedules before stops existed. A quarter of the
remaining crashes are pauses instead (SIGSTOP, then SIGCONT where the restart would be: the process frozen for 8 s,
longer than its 6 s ZooKeeper session, which expires under it), drawn from a third stream. Half of the pauses, drawn
from a fourth stream, land in the middle of the broker's work ("pause-mid"): right after its next ZooKeeper request
goes out within the step (a SIGSTOP stops the process at an arbitrary point; this one between a request and what
its answer leads to), else at the step's end; the resume stays where it was (7-8 s later, still past the session).
A quarter of the crashes left, drawn from a fifth stream, are power losses: the broker's machine goes down, and its
disk (sim/disk.py) keeps only its fsynced bytes and a seeded share of the rest; it restarts as a crash does. A
quarter of the crashes left after that, from a sixth stream, are a failing log dir ("logdir-fail": every call on the
broker's only log dir raises EIO; the broker takes it offline and halts, and restarts on a new, empty disk). A
quarter of the plain crashes left, from a seventh stream, are quick restarts ("crash-restart": a supervisor starts the
process again 0.1-3 s later, inside the step, while its old session still holds its registration).

A fifth of the partitions, drawn from a stream of their own ("one-way-"), cut one direction of the link only
("one-way": what the first broker sends the second is held until the heal, TCP retransmitting it; the other way
works), and a fifth of the rest, from another ("slow-links-"), slow the link down instead ("slow-link": 50-500 ms
more latency both ways, a fifth of them 31-40 s, beyond the 30 s request timeout); they heal when the partition
would have, so every fault keeps its step and brokers. Beside them, from a stream of its own ("resets-"), a step
drops the connections of a link on their own at RESET_RATE ("reset": what is in flight on them fails, nothing is
cut).

On HOSTILE_SHARE of the seeds, from a stream of its own ("hostile-"), drawn once before the others' steps, a
"hostile" fault at a seeded step starts sim/hostile.py's hostile client (issue #39): it is the step's last fault, so
every other fault of every seed keeps its step, kind and brokers, and a seed without one has the schedule it had.
"""

from __future__ import annotations

import random

import attrs

STEP_MS = 1000.0  # simulated time per step
STOP_SHARE = 0.25  # of the broker outages: orderly stops (controlled shutdown) rather than crashes
PAUSE_SHARE = 0.25  # of the other outages: pauses (SIGSTOP for RESTART_AFTER_STEPS steps, longer than the session)
MID_PAUSE_SHARE = 0.5  # of the pauses: landing right after the broker's next ZooKeeper request (within the step)
POWER_LOSS_SHARE = 0.25  # of the crashes left: power losses (the disk keeps only what sim/disk.py's power loss keeps)
LOG_DIR_FAIL_SHARE = 0.25  # of the crashes left then: a log dir failing (the broker halts; restarts on a new disk)
QUICK_RESTART_SHARE = 0.25  # of the remaining crashes: the process started again at once (a supervisor's restart)
QUICK_RESTART_MS = (100.0, 3000.0)  # how long after the crash, within the old session's timeout
ONE_WAY_SHARE = 0.2  # of the partitions: one direction cut only (Sim.one_way_cut)
SLOW_SHARE = 0.2  # of the other partitions: a slow link instead (Sim.slow_link)
SLOW_MS = (50.0, 500.0)  # the latency a slow link adds
STALL_SHARE = 0.2  # of the slow links: slower than the request timeout (sim.runtime.REQUEST_TIMEOUT_MS, 30 s)
STALL_MS = (31000.0, 40000.0)
RESET_RATE = 0.02  # of the steps: a link's connections dropped on their own (Sim.reset_link)
HOSTILE_SHARE = 0.125  # of the seeds: a hostile client's requests (sim/hostile.py), once, at a seeded step
RESTART_AFTER_STEPS = 8  # > zookeeper.session.timeout.ms (sim.runtime.SESSION_TIMEOUT_MS) in steps


@attrs.frozen
class Fault:
    step: int
    # "crash", "power-loss", "logdir-fail", "stop", "restart", "pause", "pause-mid", "resume", "partition",
    # "one-way" (a's sends to b held), "slow-link", "heal", "reset" (a link's connections dropped), "hostile" (the
    # hostile client starts: sim/hostile.py; ``a`` unused)
    kind: str
    a: int
    b: int = -1
    after_ms: float = 0.0  # a crash-restart's restart, this long after the crash (within the step)
    latency_ms: float = 0.0  # a slow link's added latency

    def __str__(self) -> str:
        if self.a < 0:
            return self.kind
        return f"{self.kind} b{self.a}" + (f"|b{self.b}" if self.b >= 0 else "")


def schedule(seed: int, steps: int, brokers: int) -> list[Fault]:
    rng = random.Random(f"faults-{seed}")
    stops = random.Random(f"stops-{seed}")
    pauses = random.Random(f"pauses-{seed}")
    mid = random.Random(f"mid-pauses-{seed}")
    power = random.Random(f"power-losses-{seed}")
    dir_fails = random.Random(f"log-dir-failures-{seed}")
    quick = random.Random(f"quick-restarts-{seed}")
    one_way = random.Random(f"one-way-{seed}")
    slow = random.Random(f"slow-links-{seed}")
    resets = random.Random(f"resets-{seed}")
    hostile_step = hostile_step_of(seed, steps)
    paused = False
    faults: list[Fault] = []
    down_until: tuple[int, int] | None = None  # (broker, restart step)
    cut_until: tuple[int, int, int] | None = None  # (a, b, heal step)
    for step in range(steps):
        if down_until is not None and step >= down_until[1]:
            faults.append(Fault(step, "resume" if paused else "restart", down_until[0]))
            down_until = None
        if cut_until is not None and step >= cut_until[2]:
            faults.append(Fault(step, "heal", cut_until[0], cut_until[1]))
            cut_until = None
        roll = rng.random()
        if roll < 0.12 and down_until is None:
            b = rng.randrange(brokers)
            kind = "stop" if stops.random() < STOP_SHARE else "crash"
            paused = kind == "crash" and pauses.random() < PAUSE_SHARE
            power_lost = power.random() < POWER_LOSS_SHARE  # drawn for every outage: its own stream stays aligned
            dir_failed = dir_fails.random() < LOG_DIR_FAIL_SHARE
            if paused:
                kind = "pause-mid" if mid.random() < MID_PAUSE_SHARE else "pause"
            elif kind == "crash" and power_lost:
                kind = "power-loss"
            elif kind == "crash" and dir_failed:
                kind = "logdir-fail"
            after = 0.0
            if kind == "crash" and quick.random() < QUICK_RESTART_SHARE:
                kind, after = "crash-restart", round(quick.uniform(*QUICK_RESTART_MS))
            faults.append(Fault(step, kind, b, after_ms=after))
            down_until = (b, step + RESTART_AFTER_STEPS)
        elif roll < 0.24 and cut_until is None and brokers > 1:
            a, b = sorted(rng.sample(range(brokers), 2))
            # drawn for every partition: each stream stays aligned whatever the others drew
            one, reverse = one_way.random() < ONE_WAY_SHARE, one_way.random() < 0.5
            slowed, stall = slow.random() < SLOW_SHARE, slow.random() < STALL_SHARE
            extra = round(slow.uniform(*(STALL_MS if stall else SLOW_MS)), 3)
            if one:
                faults.append(Fault(step, "one-way", *((b, a) if reverse else (a, b))))
            elif slowed:
                faults.append(Fault(step, "slow-link", a, b, latency_ms=extra))
            else:
                faults.append(Fault(step, "partition", a, b))
            cut_until = (a, b, step + rng.randint(2, 6))
        if resets.random() < RESET_RATE and brokers > 1:  # after the step's other faults: theirs keep their order
            x, y = sorted(resets.sample(range(brokers), 2))
            faults.append(Fault(step, "reset", x, y))
        if step == hostile_step:
            faults.append(Fault(step, "hostile", -1))
    return faults


def hostile_step_of(seed: int, steps: int) -> int:
    """The step of the seed's hostile client, -1 for none: a stream of its own, so the other faults stay as drawn."""
    rng = random.Random(f"hostile-{seed}")
    return rng.randrange(steps) if rng.random() < HOSTILE_SHARE and steps > 0 else -1
