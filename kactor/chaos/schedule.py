"""A seed's schedule: the operations and faults of each step, drawn from ``random.Random(seed)`` alone.

Pure: the same (seed, steps, brokers, ensemble) always gives the same steps, so a failing seed is rerun by its
number. The generator keeps a model of the topics it created, deleted and expanded, so every operation names a
topic that exists at that point of the schedule (topic names are never reused: a deleted topic's records can
never be mistaken for a new one's).

Operations: create, delete, reassign, preferred (election), expand (add a partition), config (a topic override).
Faults, at most one per step, applied right after the step's operation and healed at the step's end:

* ``sigkill`` / ``sigterm``: the broker crashes / stops in order, and is restarted;
* ``sigstop``: the broker freezes past its ZooKeeper session timeout (its session expires), then continues;
* ``kill-controller``: the active controller is SIGKILLed right after the operation — mid-deletion or
  mid-reassignment when the operation was one — and restarted;
* ``partition``: two brokers cannot reach each other (both directions, at the transport edge), then heal;
* ``logdir``: a broker's log dir becomes unusable (replaced by a file); healed by restarting the broker on it;
* ``zk-kill`` / ``zk-kill-leader`` (with a ZooKeeper ensemble): a server of the ensemble, or its current
  leader, is killed and restarted.

Beside them an operator's slip (kactor/chaos/slips.py), on a share of the steps without a fault: a second broker
process started on a live broker's log dir (``second-process``: its own command again; ``other-dir``: a new broker
id on it), which must be refused. Drawn from a stream of its own (``operator-slips-<seed>``), three draws a step
whatever the step has, so every step's operation and fault are the ones the seed had before slips existed.
"""

from __future__ import annotations

import random

import attrs

from kactor.chaos.slips import SLIP_PROBABILITY, SLIPS

OPS = ("create", "delete", "reassign", "preferred", "expand", "config")
BROKER_FAULTS = ("sigkill", "sigterm", "sigstop", "kill-controller", "partition", "logdir")
ZK_FAULTS = ("zk-kill", "zk-kill-leader")
FAULT_PROBABILITY = 0.65
CONFIGS = (("retention.ms", "86400000"), ("retention.ms", "604800000"), ("min.insync.replicas", "1"),
           ("min.insync.replicas", "2"), ("cleanup.policy", "delete"))


@attrs.frozen(slots=True)
class Step:
    """One step: an operation on ``topic`` with its arguments, then an optional fault held ``hold_s`` seconds.

    ``args``: create (partitions, replication factor); reassign (partition, *replicas); expand (new partition
    count,); config (key, value); otherwise (). ``targets``: the broker(s) of a broker fault (two for a
    partition), the server index of zk-kill; () for kill-controller and zk-kill-leader (found at run time).
    """

    index: int
    op: str
    topic: str
    args: tuple[int | str, ...] = ()
    fault: str | None = None
    targets: tuple[int, ...] = ()
    hold_s: float = 0.0
    slip: str | None = None  # an operator's slip after the operation (kactor/chaos/slips.py), on a step without fault
    slip_target: int = -1  # the live broker whose log dir it is

    def describe(self) -> str:
        if self.op == "reassign":
            op = f"reassign {self.topic}-{self.args[0]} to {list(self.args[1:])}"
        elif self.op == "create":
            op = f"create {self.topic} ({self.args[0]} partitions, replication factor {self.args[1]})"
        elif self.op == "expand":
            op = f"expand {self.topic} to {self.args[0]} partitions"
        elif self.op == "config":
            op = f"config {self.topic} {self.args[0]}={self.args[1]}"
        else:
            op = f"{self.op} {self.topic}"
        if self.slip is not None:
            op = f"{op}; {self.slip} on broker {self.slip_target}'s log dir"
        if self.fault is None:
            return op
        target = f" {list(self.targets)}" if self.targets else ""
        return f"{op}; {self.fault}{target} for {self.hold_s:.1f}s"


@attrs.define
class _Model:
    """The topics as the schedule leaves them: name → partition count (replication factor alongside)."""

    partitions: dict[str, int] = attrs.Factory(dict)
    rf: dict[str, int] = attrs.Factory(dict)
    created: int = 0


def make_schedule(seed: int, steps: int, brokers: int = 3, zk_servers: int = 0) -> tuple[Step, ...]:
    """The schedule of ``seed``: ``steps`` steps for a cluster of ``brokers`` (ids 0..n-1) on a ZooKeeper
    ensemble of ``zk_servers`` servers (0 or 1: a standalone server, no ZooKeeper faults)."""
    if steps < 0 or brokers < 1:
        raise ValueError("steps must be >= 0 and brokers >= 1")
    rng = random.Random(seed)
    slips = random.Random(f"operator-slips-{seed}")
    model = _Model()
    faults = [f for f in BROKER_FAULTS if brokers >= 2 or f != "partition"]
    if zk_servers >= 3:
        faults += ZK_FAULTS
    out = []
    for i in range(steps):
        op, topic, args = _operation(rng, model, brokers)
        fault, targets, hold = None, (), 0.0
        if rng.random() < FAULT_PROBABILITY:
            # the controller killed mid-deletion / mid-reassignment: half of those operations get it
            mid_operation = op in ("delete", "reassign") and rng.random() < 0.5
            fault = "kill-controller" if mid_operation else rng.choice(faults)
            targets, hold = _fault_target(rng, fault, brokers, zk_servers)
        roll, slip, slip_target = slips.random(), slips.choice(SLIPS), slips.randrange(brokers)
        if fault is not None or roll >= SLIP_PROBABILITY:
            slip, slip_target = None, -1
        out.append(Step(i, op, topic, args, fault, targets, hold, slip, slip_target))
    return tuple(out)


def _operation(rng: random.Random, model: _Model, brokers: int) -> tuple[str, str, tuple[int | str, ...]]:
    live = sorted(model.partitions)
    weights = {"create": 3 if len(live) < 2 else 1, "delete": 1 if len(live) >= 2 else 0,
               "reassign": 3 if live else 0, "preferred": 1 if live else 0, "expand": 1 if live else 0,
               "config": 1 if live else 0}
    op = rng.choices(OPS, weights=[weights[o] for o in OPS])[0]
    if op == "create":
        name = f"t{model.created}"
        model.created += 1
        partitions = rng.randint(1, 3)
        rf = rng.randint(min(2, brokers), min(3, brokers))
        model.partitions[name], model.rf[name] = partitions, rf
        return op, name, (partitions, rf)
    topic = rng.choice(live)
    if op == "delete":
        del model.partitions[topic], model.rf[topic]
        return op, topic, ()
    if op == "reassign":
        partition = rng.randrange(model.partitions[topic])
        replicas = rng.sample(range(brokers), model.rf[topic])
        return op, topic, (partition, *replicas)
    if op == "expand":
        model.partitions[topic] += 1
        return op, topic, (model.partitions[topic],)
    if op == "config":
        return op, topic, rng.choice(CONFIGS)
    return op, topic, ()


def _fault_target(rng: random.Random, fault: str, brokers: int, zk_servers: int) -> tuple[tuple[int, ...], float]:
    """(targets, hold seconds) of a fault; a sigstop's hold is counted beyond the session timeout."""
    if fault == "partition":
        return tuple(sorted(rng.sample(range(brokers), 2))), round(rng.uniform(2.0, 6.0), 1)
    if fault == "zk-kill":
        return (rng.randrange(zk_servers),), round(rng.uniform(2.0, 4.0), 1)
    if fault in ("zk-kill-leader", "kill-controller"):
        return (), round(rng.uniform(1.0, 3.0), 1)
    if fault == "sigstop":
        return (rng.randrange(brokers),), round(rng.uniform(1.0, 2.0), 1)
    return (rng.randrange(brokers),), round(rng.uniform(1.0, 3.0), 1)


def parse_seeds(text: str) -> tuple[int, ...]:
    """``1-50``, ``7`` or ``1,3,5-9`` → the seeds in order, each once; ValueError with a clear message."""
    seeds: dict[int, None] = {}  # ordered, each once
    for part in text.split(","):
        part = part.strip()
        lo, sep, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise ValueError(f"bad seed range {part!r}: expected N, N-M or a comma-separated list") from None
        if a < 0 or b < a:
            raise ValueError(f"bad seed range {part!r}: seeds are non-negative and N <= M")
        seeds.update(dict.fromkeys(range(a, b + 1)))
    return tuple(seeds)
