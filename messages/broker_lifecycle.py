"""Messages of a broker process's lifecycle (Kafka's KafkaServer startup / shutdown), sent by the process main."""

from __future__ import annotations

from typing import Any

from messages.registry import message


@message
class ControllerInit:
    """Give the ControllerActor its configuration (core.controller.config.ControllerConfig)."""

    config: Any


@message
class BrokerStartup:
    """Start the broker: register it in ZooKeeper, then start its controller candidate and broker side."""

    broker_id: int
    registration_json: str
    controlled_shutdown_enable: bool = True
    controlled_shutdown_max_retries: int = 3
    controlled_shutdown_retry_backoff_ms: int = 5000
    session_timeout_ms: int = 18000
    inter_broker_listener_name: str = "PLAINTEXT"  # the controller's endpoint a controlled shutdown connects to


@message
class BrokerRegistered:
    """Sent by the kafka-server actor to the broker's other actors once /brokers/ids/<id> exists."""

    broker_id: int
    broker_epoch: int


@message
class BrokerShutdownRequested:
    """SIGTERM: an orderly stop (controlled shutdown first when controlled.shutdown.enable)."""


@message
class BrokerShutdownComplete:
    """The broker may exit. ``controlled`` tells whether the controller acknowledged a controlled shutdown."""

    controlled: bool
    reason: str = ""
    error: bool = False


@message
class ReplicaManagerInit:
    """The broker side's configuration (the KafkaConfig keys ReplicaManager reads)."""

    broker_id: int
    log_dirs: tuple[str, ...]
    replica_lag_time_max_ms: int = 30000
    replica_fetch_wait_max_ms: int = 500
    replica_fetch_backoff_ms: int = 1000
    high_watermark_checkpoint_interval_ms: int = 5000
    partition_actors: int = 8
    min_insync_replicas: int = 1
    inter_broker_listener_name: str = "PLAINTEXT"  # the leaders' endpoint a follower fetches from
    replica_fetch_min_bytes: int = 1
    replica_fetch_max_bytes: int = 1048576
    replica_fetch_response_max_bytes: int = 10485760
    log_retention_check_interval_ms: int = 300000
    log_props: tuple[tuple[str, str], ...] = ()  # server.properties' log.* defaults, Kafka's names and text
    replica_selector_class: str | None = None  # replica.selector.class (KIP-392)
    replication_quota_window_num: int = 11  # replication.quota.window.num
    replication_quota_window_size_seconds: int = 1  # replication.quota.window.size.seconds
    # transactional.id.expiration.ms: how long the logs keep an idle producer's state (LogManager.maxPidExpirationMs)
    transactional_id_expiration_ms: int = 604800000
    # transaction.partition.verification.enable (Kafka 3.6, KIP-890 part 1)
    transaction_partition_verification_enable: bool = True

    @classmethod
    def from_kafka_config(cls, cfg: Any) -> ReplicaManagerInit:
        return cls(cfg.broker_id, tuple(cfg.log_dirs), cfg["replica.lag.time.max.ms"],
                   cfg["replica.fetch.wait.max.ms"], cfg["replica.fetch.backoff.ms"],
                   cfg["replica.high.watermark.checkpoint.interval.ms"], cfg["kactor.partition.actors"],
                   cfg["min.insync.replicas"], cfg.inter_broker_listener_name, cfg["replica.fetch.min.bytes"],
                   cfg["replica.fetch.max.bytes"], cfg["replica.fetch.response.max.bytes"],
                   cfg["log.retention.check.interval.ms"], tuple(sorted(cfg.log_props().items())),
                   cfg["replica.selector.class"], cfg["replication.quota.window.num"],
                   cfg["replication.quota.window.size.seconds"], cfg["transactional.id.expiration.ms"],
                   cfg["transaction.partition.verification.enable"])
