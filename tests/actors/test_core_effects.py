"""actors/core_effects.py: where each of the core's notification effects is delivered, and in which order."""

from __future__ import annotations

import pytest

from actors import names
from actors.core_effects import EVERY_RECIPIENT, EffectInterpreter, actor_for, routes
from core.effects import (
    BrokerEpochChanged,
    Cancel,
    Enqueue,
    Reconfigure,
    ReplyHandle,
    Respond,
    Schedule,
    SendRequest,
    StateChange,
)
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
    assert routes(BrokerEpochChanged(registered)) == (("replica-manager", registered), ("metrics", registered),
                                                      ("kafka-server", registered))


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


class _Actor:
    """What EffectInterpreter uses of an actor: its name, timers, posting and the process's actors."""

    name = "a"

    def __init__(self, present: set[str]) -> None:
        self.present = present
        self.done: list[tuple[str, object]] = []
        self.runtime = self

    def has_actor(self, name: str) -> bool:
        return name in self.present

    def schedule(self, key: str, delay_ms: float) -> None:
        self.done.append(("schedule", (key, delay_ms)))

    def cancel_timer(self, key: str) -> None:
        self.done.append(("cancel", key))

    def post(self, to: str, body: object) -> None:
        self.done.append((to, body))


def test_one_interpreter_for_timers_answers_notifications_and_an_actors_own_effects() -> None:
    actor = _Actor({names.CONTROLLER})
    answered: list[Respond] = []
    sent: list[SendRequest] = []
    interpret = EffectInterpreter(actor, own={SendRequest: sent.append}, respond=answered.append,
                                  optional=frozenset(names.BROKER_EPOCH_LISTENERS))
    event = ev.ZkPartitionReassignment()
    registered = BrokerRegistered(1, 42)
    for effect in (Schedule("k", 5.0), Cancel("k"), Enqueue(event), BrokerEpochChanged(registered),
                   Respond(ReplyHandle(7), "answer"), SendRequest(2, "req")):
        assert interpret(effect) is None
    # the broker-epoch listeners are optional and absent here: nobody to tell
    assert actor.done == [("schedule", ("k", 5.0)), ("cancel", "k"), (names.CONTROLLER, event)]
    assert answered == [Respond(ReplyHandle(7), "answer")] and sent == [SendRequest(2, "req")]
    # an actor that answers nothing and has no own effects refuses them; a recipient not optional is always posted to
    strict = EffectInterpreter(actor)
    with pytest.raises(TypeError, match="a: unexpected effect Respond"):
        strict(Respond(ReplyHandle(1), None))
    with pytest.raises(TypeError, match="unexpected effect SendRequest"):
        strict(SendRequest(1, None))
    strict(StateChange(ControllerChanged(1, 2, True)))
    assert actor.done[-1] == (names.STATE_CHANGE_LOG, ControllerChanged(1, 2, True))
    before = len(actor.done)
    EffectInterpreter(actor, optional=EVERY_RECIPIENT)(StateChange(ControllerChanged(1, 2, True)))
    assert len(actor.done) == before  # this process has no state-change log: skipped


def test_each_apis_route_is_served_by_its_components_actor() -> None:
    """An ApiSpec's route names the broker component (core.api.registry.Route); which actor that is is said here
    alone. Every API key a broker serves reaches an actor of actors/names.py or an edge handler."""
    import core.api  # noqa: F401 - registers every API
    from core.api import registry

    assert {r: actor_for(r) for r in registry.Route} == {
        registry.Route.REPLICA_MANAGER: names.REPLICA_MANAGER, registry.Route.CONTROLLER: names.CONTROLLER,
        registry.Route.GROUP_COORDINATOR: names.GROUP_COORDINATOR,
        registry.Route.TRANSACTION_COORDINATOR: names.TRANSACTION_COORDINATOR}
    assert actor_for("some-test-actor") == "some-test-actor"
    specs = [registry.spec_for_key(k) for k in sorted(registry.registered_keys())]
    assert all(s is not None and (s.edge_handler is not None or isinstance(s.route, registry.Route)) for s in specs)
    assert registry.spec_for_key(3).route is registry.Route.REPLICA_MANAGER  # Metadata: KafkaApis' MetadataCache
    assert actor_for(registry.spec_for_key(10).route) == names.GROUP_COORDINATOR  # FindCoordinator
