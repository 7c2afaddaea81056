"""An operator's slips in `kactor chaos` (issue #39): a broker process started on a log dir a live broker holds.

- ``second-process``: the live broker's own command started a second time (its broker.id, its log dir; a listener
  port and metrics port of its own, so the ports are not what refuses it) — a supervisor started twice, a shell's
  history run again;
- ``other-dir``: a new broker (broker.id 100 + the target's) pointed at the live broker's log dir — a copied
  config whose log.dirs nobody changed.

Kafka 2.6.3's KafkaServer.startup reads the dir's meta.properties first (getBrokerMetadataAndOfflineDirs): the
other-dir slip dies there, its configured broker.id not the stored one ("kafka.common.InconsistentBrokerIdException:
Configured broker.id 100 doesn't match stored broker.id 0 in meta.properties ..."); then LogManager.lockLogDirs takes
``<dir>/.lock`` (a FileLock) before it reads a log, and the second-process slip dies with "Failed to acquire lock on
file .lock in <dir>. A Kafka instance in another process or thread is using this directory." Either never
registers, writes nothing into the dir, and the live broker goes on serving. `judge` holds a slip's outcome to that;
the runner (kactor/chaos/runner.py `_slip`) starts the process, watches ZooKeeper while it runs and hands `judge`
what it saw.

Why not in `kactor sim`: the dir's ownership (meta.properties, the ``.lock``) is the broker process's own start-up
(kactor/broker_process.py `_own_log_dirs`, on the OS's files through edges/log_dirs.py), which the simulator does not
run — it builds each broker's actors as the process would (kactor/sim_boot.py) on its simulated disk; modelling it
there would test a copy of that start-up, not the code a user runs.
"""

from __future__ import annotations

import attrs

from kactor.chaos.history import Violation

SLIPS = ("second-process", "other-dir")
SLIP_PROBABILITY = 0.3  # of the steps without a fault (drawn from a stream of its own: every step's fault is kept)
OTHER_BROKER_ID = 100  # the other-dir slip's broker.id: 100 + the target's, never one of the cluster's
SLIP_EXIT_S = 60.0  # a refused process exits within this (it connects to ZooKeeper first: a second or two)
LOCK_REFUSAL = "Failed to acquire lock on file .lock in {dir}. A Kafka instance in another process or thread"
BROKER_ID_REFUSAL = "InconsistentBrokerIdException: Configured broker.id {slip} doesn't match stored broker.id {target}"


def refusal(kind: str, target: int, log_dir: str) -> str:
    """The start of the line Kafka's refusal of the slip prints."""
    if kind == "other-dir":
        return BROKER_ID_REFUSAL.format(slip=slip_broker_id(kind, target), target=target)
    return LOCK_REFUSAL.format(dir=log_dir)


@attrs.frozen(slots=True)
class SlipOutcome:
    """What a slip's process did: its exit code (None: still running after SLIP_EXIT_S, then killed), the tail of
    its output, whether its broker.id was seen registered by it (another port in the registration, or the new id),
    and whether the live broker's process was still running afterwards."""

    kind: str
    target: int
    returncode: int | None
    output: str
    registered: bool
    target_alive: bool


def slip_broker_id(kind: str, target: int) -> int:
    return OTHER_BROKER_ID + target if kind == "other-dir" else target


def slip_args(base: list[str], kind: str, target: int, listener: str, metrics_port: int | None) -> list[str]:
    """The live broker's command line (LocalCluster.broker_args) turned into the slip's: later ``--override``s win,
    so the slip's own listener, metrics port and, for ``other-dir``, broker.id are appended."""
    args = [*base, "--override", f"listeners={listener}"]
    if metrics_port is not None:
        args += ["--override", f"kactor.metrics.port={metrics_port}"]
    if kind == "other-dir":
        args += ["--override", f"broker.id={slip_broker_id(kind, target)}"]
    return args


def judge(outcome: SlipOutcome, log_dir: str) -> list[Violation]:
    """Refused as Kafka refuses it: exited non-zero with Kafka's message (`refusal`), never registered, the live
    broker still running."""
    what = f"{outcome.kind} on broker {outcome.target}'s log dir {log_dir}"
    out = []
    if outcome.returncode is None:
        out.append(Violation("operator", f"{what}: still running after {SLIP_EXIT_S:.0f} s (killed): not refused"))
    elif outcome.returncode == 0:
        out.append(Violation("operator", f"{what}: exited 0, not refused"))
    elif refusal(outcome.kind, outcome.target, log_dir) not in outcome.output:
        last = outcome.output.strip().splitlines()[-1:] or ["(no output)"]
        out.append(Violation("operator", f"{what}: exited {outcome.returncode} without Kafka's refusal "
                                         f"({refusal(outcome.kind, outcome.target, log_dir)}...): {last[0]}"))
    if outcome.registered:
        out.append(Violation("operator", f"{what}: registered broker {slip_broker_id(outcome.kind, outcome.target)} "
                                         f"in ZooKeeper"))
    if not outcome.target_alive:
        out.append(Violation("operator", f"{what}: the live broker {outcome.target} exited meanwhile"))
    return out
