"""sim/run.py's ActorErrors: an actor's logged exception is a violation, except a zombie controller's
StateChangeFailedError on a partition state a newer controller wrote while /controller_epoch is indeed newer —
Kafka's own fencing, which its ControllerEventManager logs the same way (seed 9863)."""

from __future__ import annotations

import logging
import sys

from core.controller.errors import StateChangeFailedError
from kactor.sim_boot import SimBoot
from sim.run import ActorErrors, play, start_cluster

ZOMBIE = ("Leader and isr path written by another controller. This probably means the current controller with epoch "
          "{} went through a soft failure and another controller was elected with epoch 3. Aborting state change by "
          "this controller")


class _Sim:
    now = 1_700_000_027_203.0
    events: list[str] = []

    def __init__(self, epoch: int) -> None:
        self.epoch = epoch
        self.noted: list[str] = []

    def controller_epoch(self) -> int:
        return self.epoch

    def note(self, text: str) -> None:
        self.noted.append(text)


def _record(exc: BaseException) -> logging.LogRecord:
    try:
        raise exc
    except BaseException:
        info = sys.exc_info()
    return logging.LogRecord("kactor.controller", logging.ERROR, __file__, 1, "Error processing event BrokerChange()",
                             None, info)


def test_a_zombie_controller_fenced_by_a_newer_epoch_is_not_a_violation_and_anything_else_is() -> None:
    sim = _Sim(epoch=3)
    errors = ActorErrors(sim)  # type: ignore[arg-type]
    errors.emit(_record(StateChangeFailedError(ZOMBIE.format(2))))
    assert errors.found == [] and len(errors.fenced) == 1
    assert sim.noted == ["a zombie controller of epoch 2 fenced: Error processing event BrokerChange()"]
    errors.emit(_record(StateChangeFailedError(ZOMBIE.format(3))))  # not stale: /controller_epoch is its own
    errors.emit(_record(StateChangeFailedError("Cannot change state")))
    errors.emit(_record(KeyError("x")))
    assert len(errors.found) == 3 and len(errors.fenced) == 1


def test_seed_9863_s_zombie_controller_is_fenced_and_the_seed_is_clean() -> None:
    """Paused controller b1 (epoch 2) handles a BrokerChange after b0 was elected with epoch 3; resuming a
    reassignment, its updateLeaderEpoch finds sim-x1-0's state written at epoch 3 and aborts, as Kafka's does."""
    cluster = start_cluster(9863, SimBoot())
    try:
        result = play(cluster, 9863, 50)
        fenced = [e for e in cluster.sim.events if "zombie controller" in e]
    finally:
        cluster.close()
    assert result.violations == ()
    assert fenced == ["27203.000 a zombie controller of epoch 2 fenced: Error processing event BrokerChange()"]
