"""Where the functional core's notifications go: each typed effect of core/effects.py that tells another component
something becomes (actor name, message) pairs, in the order they are posted.

The core says what it means (an event for the controller's queue, a state-change record, a config change); this
module alone maps that to the actors of actors/names.py.
"""

from __future__ import annotations

from typing import Any

from actors import names
from core.effects import BrokerEpochChanged, Enqueue, Reconfigure, StateChange
from messages.dynamic_config import LogConfigDefaultsChanged, TopicConfigChanged
from messages.quota import ClientQuotaConfigChanged
from messages.replication import LeadershipChange

# DynamicBrokerConfig's reconfigurables and TopicConfigHandler's targets: the replica manager's shards hold the logs
# (LogManager); the controller reads unclean.leader.election.enable from the broker's log defaults.
RECONFIGURABLES: dict[type, tuple[str, ...]] = {
    TopicConfigChanged: (names.REPLICA_MANAGER,),
    LogConfigDefaultsChanged: (names.REPLICA_MANAGER, names.CONTROLLER),
    ClientQuotaConfigChanged: (names.NET,),  # the quota managers live beside the listeners (edges/client_quotas.py)
}


def routes(effect: Any) -> tuple[tuple[str, Any], ...] | None:
    """The (actor name, message) pairs ``effect`` is delivered as; None if it is not a notification effect."""
    if isinstance(effect, StateChange):
        return ((names.STATE_CHANGE_LOG, effect.record),)
    if isinstance(effect, Enqueue):
        return ((names.CONTROLLER, effect.event),)
    if isinstance(effect, BrokerEpochChanged):
        return tuple((name, effect.registered) for name in names.BROKER_EPOCH_LISTENERS)
    if isinstance(effect, LeadershipChange):  # KafkaApis' onLeadershipChange → GroupCoordinator
        return ((names.GROUP_COORDINATOR, effect),)
    if isinstance(effect, Reconfigure):
        return tuple((name, effect.change) for name in RECONFIGURABLES[type(effect.change)])
    return None
