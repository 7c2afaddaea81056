"""The broker-side settings the ReplicaManager / Partition core needs (names after KafkaConfig, 2.6 defaults)."""

from __future__ import annotations

import attrs


@attrs.frozen
class BrokerSideConfig:
    broker_id: int
    log_dirs: tuple[str, ...]
    replica_lag_time_max_ms: int = 30000  # replica.lag.time.max.ms (2.5+; 10000 before)
    replica_high_watermark_checkpoint_interval_ms: int = 5000  # replica.high.watermark.checkpoint.interval.ms
    min_insync_replicas: int = 1  # min.insync.replicas (broker default; acks=all check)
    replica_fetch_max_bytes: int = 1048576  # replica.fetch.max.bytes (each partition of a follower's fetch)
    replica_fetch_response_max_bytes: int = 10485760  # replica.fetch.response.max.bytes (the whole response)
    replica_fetch_wait_max_ms: int = 500  # replica.fetch.wait.max.ms (the follower's FetchRequest max_wait_ms)
    replica_fetch_min_bytes: int = 1  # replica.fetch.min.bytes
    log_retention_check_interval_ms: int = 300000  # log.retention.check.interval.ms
    log_props: tuple[tuple[str, str], ...] = ()  # the broker's log.* properties (its logs' defaults)
    replica_selector_class: str | None = None  # replica.selector.class (KIP-392; None: no preferred read replica)
    replication_quota_window_num: int = 11  # replication.quota.window.num
    replication_quota_window_size_seconds: int = 1  # replication.quota.window.size.seconds
    # transaction.partition.verification.enable (Kafka 3.6, KIP-890 part 1; default true)
    transaction_partition_verification_enable: bool = True

    @property
    def isr_expiration_interval_ms(self) -> int:
        """The "isr-expiration" task period: replica.lag.time.max.ms / 2."""
        return self.replica_lag_time_max_ms // 2
