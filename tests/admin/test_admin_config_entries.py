"""config_entries: DescribeConfigs' values, sources and synonyms as Kafka 2.6's AdminManager computes them (pure)."""

from __future__ import annotations

from kactor.admin.config_entries import (
    DEFAULT_CONFIG,
    DYNAMIC_BROKER_CONFIG,
    DYNAMIC_DEFAULT_BROKER_CONFIG,
    STATIC_BROKER_CONFIG,
    TOPIC_CONFIG,
    BrokerConfigView,
    broker_config_entries,
    topic_config_entries,
)
from kactor.config import build_config


def view(dynamic_broker: dict[str, str] | None = None, dynamic_default: dict[str, str] | None = None,
         **static: str) -> BrokerConfigView:
    config = build_config({"broker.id": "1", "zookeeper.connect": "127.0.0.1:1",
                           **{k.replace("_", "."): v for k, v in static.items()}})
    return BrokerConfigView(config, dynamic_broker or {}, dynamic_default or {})


def entry(entries: list[dict], name: str) -> dict:
    return next(e for e in entries if e["name"] == name)


def test_every_topic_config_with_kafkas_defaults() -> None:
    entries = topic_config_entries(view(), {}, include_synonyms=True)
    assert len(entries) == 26 and [e["name"] for e in entries] == sorted(e["name"] for e in entries)
    assert {e["name"]: e["value"] for e in entries if e["name"] in (
        "retention.ms", "segment.ms", "max.message.bytes", "cleanup.policy", "flush.ms")} == {
        "retention.ms": "604800000", "segment.ms": "604800000", "max.message.bytes": "1048588",
        "cleanup.policy": "delete", "flush.ms": "9223372036854775807"}
    assert all(e["config_source"] == DEFAULT_CONFIG for e in entries)
    # configSynonyms' dropWhile(name != log.retention.ms): the default from log.retention.hours is not listed
    assert entry(entries, "retention.ms")["synonyms"] == []
    assert entry(entries, "segment.bytes")["synonyms"] == [
        {"name": "log.segment.bytes", "value": "1073741824", "source": DEFAULT_CONFIG}]


def test_topic_override_then_broker_layers() -> None:
    v = view({"min.insync.replicas": "3"}, {"min.insync.replicas": "2"}, min_insync_replicas="2")
    (e,) = topic_config_entries(v, {"min.insync.replicas": "1"}, True, ["min.insync.replicas"])
    assert (e["value"], e["config_source"]) == ("1", TOPIC_CONFIG)
    assert [s["source"] for s in e["synonyms"]] == [TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG,
                                                    DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG,
                                                    DEFAULT_CONFIG]
    (e,) = topic_config_entries(v, {}, False, ["min.insync.replicas"])
    assert (e["value"], e["config_source"], e["synonyms"]) == ("3", DYNAMIC_BROKER_CONFIG, [])


def test_broker_entries_per_broker_and_cluster_default() -> None:
    v = view({}, {"log.cleaner.threads": "2"}, num_partitions="4")
    mine = broker_config_entries(v, per_broker=True, include_synonyms=True)
    assert (entry(mine, "num.partitions")["value"], entry(mine, "num.partitions")["config_source"],
            entry(mine, "num.partitions")["read_only"]) == ("4", STATIC_BROKER_CONFIG, True)
    assert (entry(mine, "log.cleaner.threads")["value"], entry(mine, "log.cleaner.threads")["read_only"]) == \
        ("2", False)
    assert not any(e["name"].startswith("kactor.") for e in mine)
    assert broker_config_entries(v, per_broker=False, include_synonyms=True) == [
        {"name": "log.cleaner.threads", "value": "2", "read_only": False, "is_sensitive": False,
         "config_source": DYNAMIC_DEFAULT_BROKER_CONFIG, "is_default": False,
         "synonyms": [{"name": "log.cleaner.threads", "value": "2", "source": DYNAMIC_DEFAULT_BROKER_CONFIG}],
         "config_type": 3, "documentation": None}]  # INT
