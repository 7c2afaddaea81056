"""Effects: what the functional core asks the world to do.

A core procedure is a generator of type ``Proc[R] = Generator[Effect, Any, R]``. It yields:

- `messages.zk.ZkBatch` — run these ZooKeeper ops (pipelined, optionally epoch-fenced); the generator is resumed
  with ``tuple[ZkOpResult, ...]``, one result per op, in order.
- `SendRequest` — hand a LeaderAndIsr / UpdateMetadata / StopReplica request to that broker's channel; resumed
  with None (responses come back later as controller events).
- `AddBrokerChannel` / `RemoveBrokerChannel` — start or stop a BrokerChannelActor; resumed with None.
- `Schedule` / `Cancel` — a named timer of the controller; resumed with None.
- `Enqueue` — put an event on the controller's event queue (Kafka's ``eventManager.put``); resumed with None.
- `StateChange` — a record for the state-change log (Kafka's ``stateChangeLogger``); resumed with None.
- `BrokerEpochChanged` — the broker re-registered: its own broker side learns the new epoch; resumed with None.
- `Reconfigure` — a dynamic config change for the components that hold that config; resumed with None.
- `Respond` — the response of a delayed operation, to the `ReplyHandle` its request came with; resumed with None.

The core never names an actor: the actors decide where each effect goes (actors/core_effects.py).

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
class Enqueue:
    """Put ``event`` (a controller event) on the controller's event queue: KafkaController's ``eventManager.put``
    from inside an event (a follow-up it enqueues itself) or from the broker side (TopicConfigHandler's
    ``enableTopicUncleanLeaderElection``, DynamicLogConfig's ``enableDefaultUncleanLeaderElection``)."""

    event: Any


@message
class StateChange:
    """A record for the state-change log (Kafka's ``stateChangeLogger``): a StateChangeBatch, ControllerChanged,
    TopicDeletionProgress or ReassignmentProgress."""

    record: Any


@message
class BrokerEpochChanged:
    """processRegisterBrokerAndReelect re-registered the broker: the broker side of this process (KafkaApis' broker
    epoch check, the metrics) learns ``registered.broker_epoch``, as Kafka's read ``KafkaController.brokerEpoch``."""

    registered: Any


@message
class Reconfigure:
    """A dynamic config change (TopicConfigChanged, LogConfigDefaultsChanged) for the components that hold that
    config: Kafka's TopicConfigHandler → ``logManager.updateTopicConfig``, DynamicBrokerConfig's reconfigurables."""

    change: Any


@message
class ReplyHandle:
    """Where the answer to a request a core procedure may park goes (Kafka's ``responseCallback``): the request of
    that ``token`` (a replica manager's shard request, a group coordinator's client request). The core keeps it with
    the parked operation and hands it back in ``Respond``; only the actor that made it reads it."""

    token: int


@message
class Respond:
    """A delayed operation completed (DelayedProduce / DelayedFetch's ``responseCallback``, a group's join or sync):
    ``response`` answers the request that came with ``reply_to``."""

    reply_to: ReplyHandle
    response: Any


def run_sync(proc: Proc[R], zk: Callable[[ZkBatch], tuple[ZkOpResult, ...]],
             sink: Callable[[Any], None] | None = None, ask: Callable[[Any], Any] | None = None) -> R:
    """Drive a procedure to completion: ZkBatch effects are answered by ``zk``; every other effect goes to ``sink``
    and is answered by ``ask`` (None without one)."""
    try:
        effect = next(proc)
        while True:
            if isinstance(effect, ZkBatch):
                effect = proc.send(zk(effect))
            else:
                if sink is not None:
                    sink(effect)
                effect = proc.send(None if ask is None else ask(effect))
    except StopIteration as stop:
        return stop.value
