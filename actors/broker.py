"""The actors of one broker process, by name and in spawn order: what a live broker (``kactor.broker_process``)
and a replay (``kactor.trace.replay``) both build, so a trace names the same actors in both."""

from __future__ import annotations

from actors import names
from actors.runtime import Runtime


def broker_actor_classes() -> tuple[tuple[type, str], ...]:
    """Every actor class of a broker process with its name, in spawn order. The imports are here, not at the top,
    so that CLI commands that never build a broker do not pay for them; a replay calls this before forking workers
    or starting its clock, so the workers do not each import the actors again."""
    from actors.broker_channel_actor import BrokerChannelActor  # noqa: F401 - registers message types
    from actors.config_manager_actor import ConfigManagerActor
    from actors.controller_actor import ControllerActor
    from actors.group_coordinator_actor import GroupCoordinatorActor
    from actors.kafka_server_actor import KafkaServerActor
    from actors.metrics_actor import MetricsActor
    from actors.network_actor import NetworkActor
    from actors.observer_actor import ObserverActor
    from actors.replica_manager_actor import ReplicaManagerActor
    from actors.timer_actor import TimerActor
    from actors.topic_deletion_actor import TopicDeletionActor
    from actors.transaction_coordinator_actor import TransactionCoordinatorActor
    from actors.zk_bridge_actor import ZkBridgeActor

    return ((ZkBridgeActor, names.ZK), (TimerActor, names.TIMER), (NetworkActor, names.NET),
            (MetricsActor, names.METRICS), (ObserverActor, names.STATE_CHANGE_LOG),
            (ReplicaManagerActor, names.REPLICA_MANAGER), (ControllerActor, names.CONTROLLER),
            (TopicDeletionActor, names.TOPIC_DELETION), (KafkaServerActor, names.KAFKA_SERVER),
            (ConfigManagerActor, names.CONFIG_MANAGER), (GroupCoordinatorActor, names.GROUP_COORDINATOR),
            (TransactionCoordinatorActor, names.TRANSACTION_COORDINATOR))


def spawn_broker_actors(rt: Runtime) -> None:
    """Every actor of a broker process, in a fixed order (a replay spawns the same set the same way)."""
    for cls, name in broker_actor_classes():
        rt.spawn(cls, name)
