"""replica.selector.class (KIP-392) reaches the replica manager with Kafka's class names; an unknown class is refused
at start-up with one clear line (Kafka fails to load it when the ReplicaManager is built)."""

from __future__ import annotations

import pytest

from kactor.config import ConfigError, build_config
from messages.broker_lifecycle import ReplicaManagerInit

BASE = {"broker.id": "1", "zookeeper.connect": "127.0.0.1:2181", "log.dirs": "/tmp/x"}
RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"


def test_unset_by_default_and_passed_on_when_set() -> None:
    assert ReplicaManagerInit.from_kafka_config(build_config(BASE)).replica_selector_class is None
    cfg = build_config(dict(BASE, **{"replica.selector.class": RACK_AWARE, "broker.rack": "r2"}))
    assert ReplicaManagerInit.from_kafka_config(cfg).replica_selector_class == RACK_AWARE
    assert cfg["broker.rack"] == "r2"
    assert not [n for n in cfg.startup_notes() if "replica.selector.class" in str(n)]


def test_an_unknown_selector_class_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"replica.selector.class: Class com.example.MySelector cannot be found"):
        build_config(dict(BASE, **{"replica.selector.class": "com.example.MySelector"}))
