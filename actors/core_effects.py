"""Where the functional core's effects go: each typed effect of core/effects.py that tells another component
something becomes (actor name, message) pairs, in the order they are posted (`routes`), and `EffectInterpreter`
is the one interpreter of the effects every actor running a core handles alike (timers, answers, notifications).

The core says what it means (an event for the controller's queue, a state-change record, a config change, the
broker component an API is routed to: core.api.registry.Route); this module alone maps that to the actors of
actors/names.py.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from typing import Any

from actors import names
from core.api.registry import Route
from core.effects import BrokerEpochChanged, Cancel, Enqueue, Reconfigure, Respond, Schedule, StateChange
from messages.dynamic_config import LogConfigDefaultsChanged, TopicConfigChanged
from messages.quota import ClientQuotaConfigChanged, ReplicationQuotasChanged
from messages.replication import LeadershipChange
from messages.security import AuthorizerChanged
from messages.topic import GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME
from messages.txn_markers import TxnMarkersWritten

# DynamicBrokerConfig's reconfigurables and TopicConfigHandler's targets: the replica manager's shards hold the logs
# (LogManager); the controller reads unclean.leader.election.enable from the broker's log defaults.
RECONFIGURABLES: dict[type, tuple[str, ...]] = {
    TopicConfigChanged: (names.REPLICA_MANAGER,),
    LogConfigDefaultsChanged: (names.REPLICA_MANAGER, names.CONTROLLER),
    ClientQuotaConfigChanged: (names.NET,),  # the quota managers live beside the listeners (edges/client_quotas.py)
    ReplicationQuotasChanged: (names.REPLICA_MANAGER,),  # each shard's leader / follower ReplicationQuotaManager
    # AclAuthorizer's cache for the request fronts that authorize (KafkaApis' authorizer)
    AuthorizerChanged: (names.REPLICA_MANAGER, names.GROUP_COORDINATOR, names.TRANSACTION_COORDINATOR,
                        names.CONTROLLER),
}


# The actor of each broker component an API is routed to (core.api.registry.Route): KafkaApis' collaborators
ROUTE_ACTORS: dict[Route, str] = {
    Route.REPLICA_MANAGER: names.REPLICA_MANAGER,
    Route.CONTROLLER: names.CONTROLLER,
    Route.GROUP_COORDINATOR: names.GROUP_COORDINATOR,
    Route.TRANSACTION_COORDINATOR: names.TRANSACTION_COORDINATOR,
}

# KafkaApis' onLeadershipChange: the coordinator of each internal topic's partitions
LEADERSHIP_LISTENERS: dict[str, str] = {
    GROUP_METADATA_TOPIC_NAME: names.GROUP_COORDINATOR,
    TRANSACTION_STATE_TOPIC_NAME: names.TRANSACTION_COORDINATOR,
}


def actor_for(route: Route | str) -> str:
    """The actor that serves requests routed ``route`` (an ApiSpec's): a `Route`'s actor; a string route is an
    actor's name as it stands (tests' own actors)."""
    return ROUTE_ACTORS[route] if isinstance(route, Route) else route


def routes(effect: Any) -> tuple[tuple[str, Any], ...] | None:
    """The (actor name, message) pairs ``effect`` is delivered as; None if it is not a notification effect."""
    if isinstance(effect, StateChange):
        return ((names.STATE_CHANGE_LOG, effect.record),)
    if isinstance(effect, Enqueue):
        return ((names.CONTROLLER, effect.event),)
    if isinstance(effect, BrokerEpochChanged):
        return tuple((name, effect.registered) for name in names.BROKER_EPOCH_LISTENERS)
    if isinstance(effect, LeadershipChange):  # KafkaApis' onLeadershipChange → Group/TransactionCoordinator
        return ((LEADERSHIP_LISTENERS[effect.topic], effect),)
    if isinstance(effect, TxnMarkersWritten):  # WriteTxnMarkers → GroupCoordinator.scheduleHandleTxnCompletion
        # through the replica manager's front, as the shard's answers go: the coordinator then hears an append that
        # completed with the marker before the marker (Kafka: the append's callback runs in
        # DelayedProduce.onComplete, scheduleHandleTxnCompletion later), never the other way round
        return ((names.REPLICA_MANAGER, effect),)
    if isinstance(effect, Reconfigure):
        return tuple((name, effect.change) for name in RECONFIGURABLES[type(effect.change)])
    return None


class _Everyone:
    def __contains__(self, name: object) -> bool:
        return True


# optional= for an actor whose process may lack any recipient (a shard without a group coordinator in unit tests)
EVERY_RECIPIENT: Container[str] = _Everyone()


class EffectInterpreter:
    """The handler a ProcDriver calls with each effect of an actor's core: ``Schedule`` / ``Cancel`` set and cancel
    the actor's own timers, ``Respond`` goes to ``respond`` (the actor that made the `core.effects.ReplyHandle`
    knows where its answer goes), a notification goes where `routes` sends it, and the effects only this actor
    handles (``own``, by type) to their handlers. A recipient in ``optional`` that this process does not have is
    skipped (nobody to tell); any other effect is a programming error (TypeError)."""

    def __init__(self, actor: Any, *, own: Mapping[type, Callable[[Any], Any]] | None = None,
                 respond: Callable[[Respond], None] | None = None, optional: Container[str] = ()) -> None:
        self._actor = actor
        self._own = dict(own or {})
        self._respond = respond
        self._optional = optional

    def __call__(self, effect: Any) -> Any:
        own = self._own.get(type(effect))
        if own is not None:
            return own(effect)
        actor = self._actor
        if isinstance(effect, Schedule):
            actor.schedule(effect.key, effect.delay_ms)
        elif isinstance(effect, Cancel):
            actor.cancel_timer(effect.key)
        elif isinstance(effect, Respond) and self._respond is not None:
            self._respond(effect)
        elif (delivered := routes(effect)) is not None:
            for to, body in delivered:
                if to in self._optional and not actor.runtime.has_actor(to):
                    continue
                actor.post(to, body)
        else:
            raise TypeError(f"{actor.name}: unexpected effect {type(effect).__name__}")
        return None
