"""Replication throttles, as Kafka 2.6.3's ``kafka.server.ReplicationQuotaManager`` (one for the leader side, one for
the follower side of a broker) with the parts of ``TopicConfigHandler`` / ``BrokerConfigHandler`` that feed it.

A partition is *throttled* on this broker when its topic's ``leader.replication.throttled.replicas`` (leader side) or
``follower.replication.throttled.replicas`` (follower side) lists ``<partition>:<this broker>`` or is ``*``. The
quota is the broker's ``leader.replication.throttled.rate`` / ``follower.replication.throttled.rate`` (bytes/s, from
``/config/brokers/<id>``; Long.MaxValue = none), measured by one ``SimpleRate`` sensor of
``replication.quota.window.num`` windows of ``replication.quota.window.size.seconds``. The bytes of throttled
partitions are recorded (without a check) as they are sent or fetched; while the measured rate is above the quota a
throttled partition that is not in sync gets no data (`should_throttle`, Kafka's ``shouldLeaderThrottle`` /
``shouldFollowerThrottle``).

Topic configs are read where the shard keeps them (``LogConfigs.overrides``: every hosted topic's overrides), and a
list is parsed once per value, so that a partition of a topic with no throttle costs two dict look-ups. Times are
milliseconds the caller passes (the actor's clock); nothing here reads a clock or does I/O.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import attrs

from core.quota.rate import QuotaWindow, Rate
from messages.common import TopicPartition

log = logging.getLogger("kactor.quota")

LONG_MAX = (1 << 63) - 1
DEFAULT_REPLICATION_THROTTLED_RATE = LONG_MAX  # ReplicationQuotaManagerConfig.QuotaBytesPerSecondDefault
DEFAULT_NUM_QUOTA_SAMPLES = 11  # replication.quota.window.num
DEFAULT_QUOTA_WINDOW_SIZE_SECONDS = 1  # replication.quota.window.size.seconds
LEADER_REPLICATION_THROTTLED_RATE = "leader.replication.throttled.rate"
FOLLOWER_REPLICATION_THROTTLED_RATE = "follower.replication.throttled.rate"
LEADER_REPLICATION_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICATION_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"
LEADER_REPLICATION = "LeaderReplication"  # QuotaType.LeaderReplication: the metric group of its byte-rate
FOLLOWER_REPLICATION = "FollowerReplication"
ALTER_LOG_DIRS_REPLICATION = "AlterLogDirsReplication"
# DynamicConfig.Broker.ReplicaAlterLogDirsIoMaxBytesPerSecondProp: the alter-log-dirs quota, every moving replica's
ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND = "replica.alter.log.dirs.io.max.bytes.per.second"
ALL_REPLICAS = "*"  # ReplicationQuotaManagerConfig.AllThrottledReplicasValue


class SimpleRate(Rate):
    """org.apache.kafka.common.metrics.stats.SimpleRate: a Rate measured over the time since its oldest retained
    sample began, at least one window (no floor of ``samples - 1`` windows: a throttle bites from the first
    second)."""

    __slots__ = ()

    def window_size(self, window: QuotaWindow, now_ms: int) -> int:
        self._purge_obsolete(window, now_ms)
        elapsed = now_ms - self._oldest(now_ms).last_window_ms
        return int(max(elapsed, window.window_ms))

    def peek(self, window: QuotaWindow, now_ms: int) -> float:
        """The rate ``measure`` would give, read without touching the samples: a measurement starts a sample when
        there is none and restarts expired ones, which moves the start of the window this rate divides by (a metric
        read every second would keep an empty sample seconds old, and the first bytes after it would look slow)."""
        expire_age = window.samples * window.window_ms
        live = [s for s in self._samples if now_ms - s.last_window_ms < expire_age]
        if not live:
            return 0.0
        elapsed = now_ms - min(s.last_window_ms for s in live)
        return sum(s.value for s in live) / (max(elapsed, window.window_ms) / 1000.0)


@attrs.frozen(slots=True)
class ReplicationQuotaConfig:
    """ReplicationQuotaManagerConfig."""

    num_quota_samples: int = DEFAULT_NUM_QUOTA_SAMPLES
    quota_window_size_seconds: int = DEFAULT_QUOTA_WINDOW_SIZE_SECONDS

    @property
    def window(self) -> QuotaWindow:
        return QuotaWindow(self.num_quota_samples, self.quota_window_size_seconds * 1000)


def parse_throttled_partitions(value: str, broker_id: int) -> frozenset[int] | None:
    """TopicConfigHandler.parseThrottledPartitions: the partitions ``broker_id`` is listed for in a
    ``partition:broker,...`` list; None for ``*`` (every replica). ValueError for a value that is not such a list
    (ThrottledReplicaListValidator)."""
    value = value.strip()
    if value == ALL_REPLICAS:
        return None
    if not value:
        return frozenset()
    out: set[int] = set()
    for entry in value.split(","):
        partition, sep, broker = entry.strip().partition(":")
        if not sep or not partition.strip().isdigit() or not broker.strip().isdigit():
            raise ValueError(f"{value} must be the literal '*' or a list of replicas in the following format: "
                             "[partitionId]:[brokerId],[partitionId]:[brokerId],...")
        if int(broker) == broker_id:
            out.add(int(partition))
    return frozenset(out)


class ReplicationQuotaManager:
    """ReplicationQuotaManager of one side (``quota_type`` LeaderReplication or FollowerReplication) of broker
    ``broker_id``. ``topic_configs`` is the live map of the hosted topics' overrides (LogConfigs.overrides); the
    throttled replicas are read from it under ``replicas_prop``."""

    def __init__(self, config: ReplicationQuotaConfig, quota_type: str, broker_id: int, replicas_prop: str,
                 topic_configs: Mapping[str, Mapping[str, str]]) -> None:
        self.config = config
        self.quota_type = quota_type
        self.broker_id = broker_id
        self._window = config.window
        self._replicas_prop = replicas_prop
        self._topic_configs = topic_configs
        self._parsed: dict[str, tuple[str, frozenset[int] | None]] = {}  # topic -> (the value, its partitions)
        self._bound = float(DEFAULT_REPLICATION_THROTTLED_RATE)
        # whether a quota is set: without one the quota is never exceeded, so no partition is ever held back, and the
        # callers skip the throttled-replicas look-up and the recording (which then only feeds the byte-rate metric:
        # it reads 0 while no rate is set); kept with the bound (read on every fetch and answer: not a property)
        self.limited = self._bound < LONG_MAX
        self._rate = SimpleRate()

    # -- the quota ----------------------------------------------------------------------------------------------------
    def update_quota(self, bytes_per_second: int) -> None:
        """updateQuota(Quota.upperBound(rate)): the sensor keeps what it measured."""
        if float(bytes_per_second) != self._bound:
            log.debug("%s: replication quota set to %d B/s", self.quota_type, bytes_per_second)
        self._bound = float(bytes_per_second)
        self.limited = self._bound < LONG_MAX

    @property
    def upper_bound(self) -> int:
        """upperBound."""
        return int(self._bound) if self._bound < LONG_MAX else LONG_MAX

    def is_quota_exceeded(self, now_ms: float) -> bool:
        """isQuotaExceeded: the sensor's checkQuotas (the measured rate above the bound)."""
        if not self.limited:
            return False
        return not self.byte_rate(now_ms) <= self._bound

    def byte_rate(self, now_ms: float) -> float:
        """The sensor's rate as checkQuotas measures it (bytes/s)."""
        return self._rate.measure(self._window, int(now_ms))

    def metric_value(self, now_ms: float) -> float:
        """The ``byte-rate`` metric (bytes/s), read without disturbing the quota's measurement (SimpleRate.peek)."""
        return self._rate.peek(self._window, int(now_ms))

    def record(self, value: int, now_ms: float) -> None:
        """record: add ``value`` bytes to the rate, whatever the quota (sensor.record(value, now, false))."""
        self._rate.record(self._window, float(value), int(now_ms))

    # -- the throttled partitions -------------------------------------------------------------------------------------
    def is_throttled(self, tp: TopicPartition) -> bool:
        """isThrottled: the topic's throttled-replicas list names this broker for the partition, or is ``*``."""
        overrides = self._topic_configs.get(tp.topic)
        if not overrides:
            return False
        value = overrides.get(self._replicas_prop)
        if not value:
            return False
        cached = self._parsed.get(tp.topic)
        if cached is None or cached[0] != value:
            try:
                partitions = parse_throttled_partitions(value, self.broker_id)
            except ValueError as e:  # Kafka's handler throws and keeps what it had; nothing was had here
                log.error("Ignoring %s of topic %s: %s", self._replicas_prop, tp.topic, e)
                partitions = frozenset()
            cached = (value, partitions)
            self._parsed[tp.topic] = cached
        partitions = cached[1]
        return partitions is None or tp.partition in partitions

    def should_throttle(self, tp: TopicPartition, in_sync: bool, now_ms: float) -> bool:
        """ReplicaManager.shouldLeaderThrottle / ReplicaFetcherThread.shouldFollowerThrottle: the replica is not in
        sync, the partition is throttled, and the quota is exceeded."""
        return not in_sync and self.limited and self.is_throttled(tp) and self.is_quota_exceeded(now_ms)
