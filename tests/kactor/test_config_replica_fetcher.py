"""The replica fetcher's and the log cleaner's settings in server.properties reach every PartitionActor shard:
Kafka 2.6's names and defaults, overrides, bad values refused."""

from __future__ import annotations

import pytest

from kactor.config import ConfigError, build_config
from messages.broker_lifecycle import ReplicaManagerInit

BASE = {"broker.id": "1", "zookeeper.connect": "127.0.0.1:2181", "log.dirs": "/tmp/x"}


def _fetch_settings(init: ReplicaManagerInit) -> tuple[int, int, int, int]:
    return (init.replica_fetch_min_bytes, init.replica_fetch_max_bytes, init.replica_fetch_response_max_bytes,
            init.log_retention_check_interval_ms)


def test_defaults_are_kafka_26s() -> None:
    assert _fetch_settings(ReplicaManagerInit.from_kafka_config(build_config(BASE))) == (1, 1048576, 10485760,
                                                                                         300000)


def test_overrides_reach_the_replica_manager() -> None:
    cfg = build_config(dict(BASE, **{"replica.fetch.min.bytes": "1024", "replica.fetch.max.bytes": "65536",
                                     "replica.fetch.response.max.bytes": "131072",
                                     "log.retention.check.interval.ms": "1000"}))
    assert _fetch_settings(ReplicaManagerInit.from_kafka_config(cfg)) == (1024, 65536, 131072, 1000)


@pytest.mark.parametrize(("key", "value"), [("replica.fetch.min.bytes", "0"), ("replica.fetch.max.bytes", "x"),
                                            ("log.retention.check.interval.ms", "0")])
def test_bad_values_are_refused(key: str, value: str) -> None:
    with pytest.raises(ConfigError):
        build_config(dict(BASE, **{key: value}))


def test_the_log_properties_reach_the_replica_manager_as_kafkas_text() -> None:
    cfg = build_config(dict(BASE, **{"log.segment.bytes": "1024", "log.retention.minutes": "5"}))
    props = dict(ReplicaManagerInit.from_kafka_config(cfg).log_props)
    assert props["log.segment.bytes"] == "1024" and props["log.retention.minutes"] == "5"
    assert props["log.retention.hours"] == "168" and "log.retention.ms" not in props  # unset: not passed
    assert dict(ReplicaManagerInit.from_kafka_config(build_config(BASE)).log_props)["message.max.bytes"] == "1048588"
    with pytest.raises(ConfigError):
        build_config(dict(BASE, **{"log.segment.bytes": "13"}))  # below LegacyRecord.RECORD_OVERHEAD_V0
