"""The group coordinator's settings in server.properties: Kafka 2.6's names and defaults, overrides, bad values."""

from __future__ import annotations

import pytest

from kactor.config import ConfigError, build_config
from messages.group import GroupCoordinatorConfig

BASE = {"broker.id": "1", "zookeeper.connect": "127.0.0.1:2181", "log.dirs": "/tmp/x"}


def test_defaults_are_kafka_26s():
    assert GroupCoordinatorConfig.from_kafka_config(build_config(BASE)) == GroupCoordinatorConfig(
        offsets_topic_num_partitions=50, offsets_topic_replication_factor=3, offsets_topic_segment_bytes=104857600,
        group_initial_rebalance_delay_ms=3000, group_min_session_timeout_ms=6000,
        group_max_session_timeout_ms=1800000, group_max_size=2147483647, offsets_retention_minutes=10080,
        offset_metadata_max_bytes=4096, offset_commit_timeout_ms=5000, offsets_retention_check_interval_ms=600000)


def test_a_small_cluster_overrides_them():
    cfg = build_config(dict(BASE, **{"offsets.topic.num.partitions": "4", "offsets.topic.replication.factor": "1",
                                     "group.initial.rebalance.delay.ms": "0"}))
    c = GroupCoordinatorConfig.from_kafka_config(cfg)
    assert (c.offsets_topic_num_partitions, c.offsets_topic_replication_factor, c.group_initial_rebalance_delay_ms) \
        == (4, 1, 0)


@pytest.mark.parametrize("key,value", [("offsets.topic.num.partitions", "0"), ("group.max.size", "x"),
                                       ("offsets.topic.replication.factor", "-1")])
def test_bad_values_are_refused_clearly(key, value):
    with pytest.raises(ConfigError, match=key):
        build_config(dict(BASE, **{key: value}))
