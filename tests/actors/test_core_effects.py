"""actors/core_effects.py: where each of the core's notification effects is delivered, and in which order."""

from __future__ import annotations

import pytest

from actors import names
from actors.core_effects import routes
from core.effects import BrokerEpochChanged, Enqueue, Reconfigure, ReplyHandle, Respond, SendRequest, StateChange
from messages import controller_events as ev
from messages.broker_lifecycle import BrokerRegistered
from messages.dynamic_config import LogConfigDefaultsChanged, TopicConfigChanged
from messages.observability import ControllerChanged
from messages.replication import LeadershipChange


def test_each_notification_goes_where_kafka_sends_it() -> None:
    event = ev.ZkPartitionReassignment()
    assert routes(Enqueue(event)) == ((names.CONTROLLER, event),)
    record = ControllerChanged(1, 2, True)
    assert routes(StateChange(record)) == ((names.STATE_CHANGE_LOG, record),)
    registered = BrokerRegistered(1, 42)
    assert routes(BrokerEpochChanged(registered)) == (("replica-manager", registered), ("metrics", registered))


def test_a_config_change_reaches_the_components_that_hold_that_config() -> None:
    topic = TopicConfigChanged("t", (("min.insync.replicas", "2"),))
    assert routes(Reconfigure(topic)) == (("replica-manager", topic),)  # the logs only
    defaults = LogConfigDefaultsChanged((("unclean.leader.election.enable", "true"),))
    assert routes(Reconfigure(defaults)) == (("replica-manager", defaults), ("controller", defaults))
    with pytest.raises(KeyError):  # a change nobody registered for is a programming error, not dropped silently
        routes(Reconfigure(ev.Startup()))


def test_other_effects_are_not_notifications() -> None:
    assert routes(SendRequest(1, object())) is None
    assert routes(Respond(ReplyHandle(3), object())) is None  # answered by the shard that parked the request


def test_a_leadership_change_of_consumer_offsets_goes_to_the_group_coordinator() -> None:
    change = LeadershipChange(((3, 7),), ((4, 2),))
    assert routes(change) == (("group-coordinator", change),)  # KafkaApis' onLeadershipChange → GroupCoordinator
