"""Effects: what the functional core asks the world to do.

A core procedure is a generator of type ``Proc[R] = Generator[Effect, Any, R]``. It yields:

- `messages.zk.ZkBatch` — run these ZooKeeper ops (pipelined, optionally epoch-fenced); the generator is resumed
  with ``tuple[ZkOpResult, ...]``, one result per op, in order.
- `SendRequest` — hand a LeaderAndIsr / UpdateMetadata / StopReplica request to that broker's channel; resumed
  with None (responses come back later as controller events).
- `AddBrokerChannel` / `RemoveBrokerChannel` — start or stop a BrokerChannelActor; resumed with None.
- `Schedule` / `Cancel` — a named timer of the controller; resumed with None.
- `Emit` — a record for an observer actor (state-change log, metrics); resumed with None.

Procedures compose with ``yield from``. `run_sync` drives one against a function that answers ZkBatch effects
(unit tests use it with an in-memory ZooKeeper model).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, TypeVar

from messages import message
from messages.common import Broker
from messages.zk import ZkBatch, ZkOpResult

R = TypeVar("R")
Proc = Generator[Any, Any, R]


@message
class SendRequest:
    """Queue ``request`` on broker ``broker_id``'s channel (dropped, as Kafka does, if it has no channel)."""

    broker_id: int
    request: Any


@message
class AddBrokerChannel:
    broker: Broker


@message
class RemoveBrokerChannel:
    broker_id: int


@message
class Schedule:
    key: str
    delay_ms: float


@message
class Cancel:
    key: str


@message
class Emit:
    """A record for the actor named ``to`` (e.g. "state-change-log", "metrics")."""

    to: str
    body: Any


def run_sync(proc: Proc[R], zk: Callable[[ZkBatch], tuple[ZkOpResult, ...]],
             sink: Callable[[Any], None] | None = None) -> R:
    """Drive a procedure to completion: ZkBatch effects are answered by ``zk``; every other effect goes to ``sink``."""
    try:
        effect = next(proc)
        while True:
            if isinstance(effect, ZkBatch):
                effect = proc.send(zk(effect))
            else:
                if sink is not None:
                    sink(effect)
                effect = proc.send(None)
    except StopIteration as stop:
        return stop.value
