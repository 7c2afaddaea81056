"""actors.broker: the actors of a broker process, by name, in the order a live broker and a replay spawn them."""

from __future__ import annotations

from actors.broker import broker_actor_classes, spawn_broker_actors
from actors.clock import ManualClock
from actors.config_manager_actor import ConfigManagerActor
from actors.controller_actor import ControllerActor
from actors.group_coordinator_actor import GroupCoordinatorActor
from actors.kafka_server_actor import KafkaServerActor
from actors.metrics_actor import MetricsActor
from actors.network_actor import NetworkActor
from actors.observer_actor import ObserverActor
from actors.replica_manager_actor import ReplicaManagerActor
from actors.runtime import Runtime
from actors.timer_actor import TimerActor
from actors.topic_deletion_actor import TopicDeletionActor
from actors.transaction_coordinator_actor import TransactionCoordinatorActor
from actors.zk_bridge_actor import ZkBridgeActor

EXPECTED = ((ZkBridgeActor, "zk"), (TimerActor, "timer"), (NetworkActor, "net"), (MetricsActor, "metrics"),
            (ObserverActor, "state-change-log"), (ReplicaManagerActor, "replica-manager"),
            (ControllerActor, "controller"), (TopicDeletionActor, "topic-deletion"), (KafkaServerActor, "kafka-server"),
            (ConfigManagerActor, "config-manager"), (GroupCoordinatorActor, "group-coordinator"),
            (TransactionCoordinatorActor, "transaction-coordinator"))


def test_the_broker_actors_in_spawn_order() -> None:
    assert broker_actor_classes() == EXPECTED


def test_spawn_broker_actors_names_each_actor_in_that_order() -> None:
    rt = Runtime("broker-0", clock=ManualClock(0.0))
    try:
        spawn_broker_actors(rt)
        assert rt.names() == [name for _, name in EXPECTED]
        assert {name: type(rt.instances[name]) for name in rt.names()} == {name: cls for cls, name in EXPECTED}
    finally:
        rt.shutdown()
