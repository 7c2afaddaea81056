"""The controller's share of kafka.server.KafkaConfig, with Kafka 2.6 defaults (reference §10).

`ControllerConfig` is what KafkaController takes; `StateMachineConfig` is the minimal duck-typed config the state
machines and the request batch need (``broker_id``, ``unclean_leader_election_enable``) — ControllerConfig has both.
"""

from __future__ import annotations

from typing import Any

import attrs

from messages import message

# Kafka 2.6 defaults
DEFAULT_DELETE_TOPIC_ENABLE = True
DEFAULT_AUTO_LEADER_REBALANCE_ENABLE = True
DEFAULT_LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS = 300
DEFAULT_LEADER_IMBALANCE_PER_BROKER_PERCENTAGE = 10
DEFAULT_UNCLEAN_LEADER_ELECTION_ENABLE = False
# KafkaController.onControllerFailover: scheduleAutoLeaderRebalanceTask(delay = 5, unit = TimeUnit.SECONDS)
AUTO_LEADER_REBALANCE_INITIAL_DELAY_MS = 5000
AUTO_LEADER_REBALANCE_TIMER = "auto-leader-rebalance"


@attrs.frozen
class StateMachineConfig:
    """What the state machines and the request batch need from KafkaConfig.

    Any object with these two attributes will do (duck typing), e.g. the controller's full config.
    ``unclean_leader_election_enable`` is the broker default of ``unclean.leader.election.enable`` that a topic's
    ``/config/topics/<t>`` override is merged over.
    """

    broker_id: int
    unclean_leader_election_enable: bool = False


@message
class ControllerConfig:
    """Configuration of one broker's controller module.

    ``broker_registration`` is the JSON this broker writes to /brokers/ids/<broker_id> (Kafka's BrokerInfo), used by
    RegisterBrokerAndReelect after a session expiry; None = no re-registration by the controller.
    """

    broker_id: int
    delete_topic_enable: bool = DEFAULT_DELETE_TOPIC_ENABLE
    auto_leader_rebalance_enable: bool = DEFAULT_AUTO_LEADER_REBALANCE_ENABLE
    leader_imbalance_check_interval_seconds: int = DEFAULT_LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS
    leader_imbalance_per_broker_percentage: int = DEFAULT_LEADER_IMBALANCE_PER_BROKER_PERCENTAGE
    unclean_leader_election_enable: bool = DEFAULT_UNCLEAN_LEADER_ELECTION_ENABLE
    broker_registration: str | None = None
    inter_broker_protocol_version: str = "2.6"
    # KafkaConfig.interBrokerListenerName: the listener of each broker the controller's channels connect to
    inter_broker_listener_name: str = "PLAINTEXT"

    @classmethod
    def from_kafka_config(cls, config: Any, broker_registration: str | None = None) -> ControllerConfig:
        """The controller's settings from a broker's KafkaConfig (kactor.config.KafkaConfig, Kafka's names)."""
        return cls(
            broker_id=int(config["broker.id"]),
            delete_topic_enable=bool(config["delete.topic.enable"]),
            auto_leader_rebalance_enable=bool(config["auto.leader.rebalance.enable"]),
            leader_imbalance_check_interval_seconds=int(config["leader.imbalance.check.interval.seconds"]),
            leader_imbalance_per_broker_percentage=int(config["leader.imbalance.per.broker.percentage"]),
            unclean_leader_election_enable=bool(config["unclean.leader.election.enable"]),
            broker_registration=broker_registration,
            inter_broker_protocol_version=str(config["inter.broker.protocol.version"]),
            inter_broker_listener_name=str(config.inter_broker_listener_name),
        )

    @property
    def leader_imbalance_check_interval_ms(self) -> int:
        return self.leader_imbalance_check_interval_seconds * 1000
