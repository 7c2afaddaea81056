"""Kafka 2.6.3's ReplicationQuotaManager: the SimpleRate window, the throttled-replicas lists, and the throttle
decision (shouldLeaderThrottle / shouldFollowerThrottle), under a frozen clock."""

from __future__ import annotations

import time

import pytest
from freezegun import freeze_time

from core.quota.rate import QuotaWindow
from core.quota.replication_quota_manager import (
    LEADER_REPLICATION,
    LEADER_REPLICATION_THROTTLED_REPLICAS,
    LONG_MAX,
    ReplicationQuotaConfig,
    ReplicationQuotaManager,
    SimpleRate,
    parse_throttled_partitions,
)
from messages.common import TopicPartition


def now_ms() -> float:
    return time.time() * 1000


def manager(topic_configs: dict, broker_id: int = 1, config: ReplicationQuotaConfig | None = None
            ) -> ReplicationQuotaManager:
    return ReplicationQuotaManager(config or ReplicationQuotaConfig(), LEADER_REPLICATION, broker_id,
                                   LEADER_REPLICATION_THROTTLED_REPLICAS, topic_configs)


def test_parse_throttled_partitions_keeps_this_brokers_partitions() -> None:
    """TopicConfigHandler.parseThrottledPartitions: the partitions listed with this broker; '*' is all; '' none."""
    assert parse_throttled_partitions("0:1,0:2,3:1, 4:2", 1) == frozenset({0, 3})
    assert parse_throttled_partitions(" * ", 1) is None
    assert parse_throttled_partitions("", 1) == frozenset()
    with pytest.raises(ValueError):
        parse_throttled_partitions("0-1", 1)


def test_simple_rate_measures_from_the_first_second() -> None:
    """SimpleRate: bytes over the time since the oldest sample, at least one window — unlike a quota's Rate, which
    spreads the first bytes over samples-1 windows."""
    window = QuotaWindow(11, 1000)
    rate = SimpleRate()
    rate.record(window, 3000, 0)
    assert rate.measure(window, 0) == 3000.0  # over one window, not ten
    assert rate.measure(window, 1500) == 2000.0  # 3000 B over 1.5 s
    rate.record(window, 1000, 2000)
    assert rate.measure(window, 4000) == 1000.0  # 4000 B over 4 s
    assert rate.measure(window, 11_000) == pytest.approx(1000 / 9)  # the first sample expired (11 windows)


def test_quota_exceeded_while_the_rate_is_above_the_bound_then_not() -> None:
    with freeze_time("2026-01-01 00:00:00") as clock:
        q = manager({})
        q.record(5_000_000, now_ms())
        assert not q.is_quota_exceeded(now_ms())  # no quota (Long.MaxValue)
        assert q.upper_bound == LONG_MAX
        q.update_quota(1_000_000)
        assert q.is_quota_exceeded(now_ms())  # 5 MB in the first second
        clock.tick(4.0)
        assert q.is_quota_exceeded(now_ms())  # 1.25 MB/s
        clock.tick(1.0)
        assert not q.is_quota_exceeded(now_ms())  # 5 MB over 5 s: at the bound is within it
        q.update_quota(999_999)
        assert q.is_quota_exceeded(now_ms())  # a new bound, same measurement
        clock.tick(7.0)
        assert q.byte_rate(now_ms()) == 0.0 and not q.is_quota_exceeded(now_ms())  # all 11 windows old


def test_reading_the_metric_does_not_move_the_window_the_quota_is_measured_over() -> None:
    """A byte-rate read long before the first bytes must not start a sample the quota's rate would then divide by."""
    with freeze_time("2026-01-01 00:00:00") as clock:
        q = manager({})
        q.update_quota(1000)
        assert q.metric_value(now_ms()) == 0.0
        clock.tick(9.0)
        q.record(3000, now_ms())
        assert q.metric_value(now_ms()) == 3000.0
        assert q.is_quota_exceeded(now_ms())  # 3000 B over one window, not over the 9 s since the read


def test_window_settings_are_replication_quota_window_num_and_size() -> None:
    with freeze_time("2026-01-01 00:00:00") as clock:
        q = manager({}, config=ReplicationQuotaConfig(num_quota_samples=2, quota_window_size_seconds=2))
        q.update_quota(100)
        q.record(300, now_ms())
        assert q.byte_rate(now_ms()) == 150.0  # at least one 2 s window
        clock.tick(4.0)
        assert q.byte_rate(now_ms()) == 0.0  # 2 samples of 2 s: expired


def test_is_throttled_reads_the_live_topic_configs() -> None:
    configs: dict[str, dict[str, str]] = {}
    q = manager(configs, broker_id=1)
    tp0, tp1, other = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)
    assert not q.is_throttled(tp0)
    configs["t"] = {"retention.ms": "5"}
    assert not q.is_throttled(tp0)
    configs["t"] = {LEADER_REPLICATION_THROTTLED_REPLICAS: "0:1,1:2"}
    assert q.is_throttled(tp0) and not q.is_throttled(tp1) and not q.is_throttled(other)
    configs["t"] = {LEADER_REPLICATION_THROTTLED_REPLICAS: "*"}
    assert q.is_throttled(tp0) and q.is_throttled(tp1)
    configs["t"] = {LEADER_REPLICATION_THROTTLED_REPLICAS: "garbage"}
    assert not q.is_throttled(tp0)
    del configs["t"]  # the throttle removed (the config or the topic gone)
    assert not q.is_throttled(tp0)


def test_should_throttle_needs_a_throttled_partition_out_of_sync_and_the_quota_exceeded() -> None:
    with freeze_time("2026-01-01 00:00:00"):
        tp = TopicPartition("t", 0)
        q = manager({"t": {LEADER_REPLICATION_THROTTLED_REPLICAS: "0:1"}})
        q.update_quota(1000)
        assert not q.should_throttle(tp, in_sync=False, now_ms=now_ms())  # nothing measured yet
        q.record(2000, now_ms())
        assert q.should_throttle(tp, in_sync=False, now_ms=now_ms())
        assert not q.should_throttle(tp, in_sync=True, now_ms=now_ms())  # an in-sync replica is never throttled
        assert not q.should_throttle(TopicPartition("t", 1), in_sync=False, now_ms=now_ms())  # not listed


def test_limited_is_kept_with_the_bound() -> None:
    """``limited`` is an attribute set with the bound (read on every fetch): no quota, a quota, none again."""
    q = manager({})
    assert not q.limited and q.upper_bound == LONG_MAX
    q.update_quota(1000)
    assert q.limited and q.upper_bound == 1000
    q.update_quota(LONG_MAX)
    assert not q.limited
