"""config_entries: DescribeConfigs' values, sources and synonyms as Kafka 2.6's AdminManager computes them (pure)."""

from __future__ import annotations

from kactor.config import build_config
from zk_bridge.admin.config_entries import (
    DEFAULT_CONFIG,
    DYNAMIC_BROKER_CONFIG,
    DYNAMIC_DEFAULT_BROKER_CONFIG,
    STATIC_BROKER_CONFIG,
    TOPIC_CONFIG,
    BrokerConfigView,
    broker_config_entries,
    topic_config_entries,
)


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


def test_every_kafka_broker_config_is_described_with_its_default() -> None:
    mine = {e["name"]: e for e in broker_config_entries(view(), per_broker=True, include_synonyms=True)}
    # every KafkaConfig key of 2.6.3 (kactor.* left out), and Kafka 3.6's KIP-890 switch, which kactor serves
    assert len(mine) == 209
    verification = mine["transaction.partition.verification.enable"]
    assert (verification["value"], verification["config_source"], verification["config_type"]) == \
        ("true", DEFAULT_CONFIG, 1)  # BOOLEAN: on by default, as 3.6
    adv = mine["advertised.listeners"]  # a client expects it: null when not set, as 2.6
    assert (adv["value"], adv["config_source"], adv["read_only"], adv["synonyms"], adv["config_type"]) == \
        (None, DEFAULT_CONFIG, False, [], 2)
    threads = mine["num.network.threads"]
    assert (threads["value"], threads["config_source"], threads["read_only"], threads["synonyms"]) == \
        ("3", DEFAULT_CONFIG, False, [{"name": "num.network.threads", "value": "3", "source": DEFAULT_CONFIG}])
    assert (mine["log.cleaner.io.max.bytes.per.second"]["value"], mine["transaction.state.log.min.isr"]["value"],
            mine["inter.broker.protocol.version"]["value"]) == ("1.7976931348623157E308", "2", "2.6-IV0")
    assert (mine["zookeeper.connect"]["value"], mine["zookeeper.connect"]["config_source"]) == \
        ("127.0.0.1:1", STATIC_BROKER_CONFIG)


def test_a_static_key_set_to_its_default_is_static_broker_config() -> None:
    """Audit divergence 14: 2.6 reports every supplied key as STATIC_BROKER_CONFIG, whatever its value."""
    (e,) = broker_config_entries(view(num_partitions="1"), True, True, ["num.partitions"])
    assert (e["value"], e["config_source"], e["is_default"]) == ("1", STATIC_BROKER_CONFIG, False)
    assert e["synonyms"] == [{"name": "num.partitions", "value": "1", "source": STATIC_BROKER_CONFIG},
                             {"name": "num.partitions", "value": "1", "source": DEFAULT_CONFIG}]
    (t,) = topic_config_entries(view(log_segment_bytes="1073741824"), {}, True, ["segment.bytes"])
    assert (t["value"], t["config_source"]) == ("1073741824", STATIC_BROKER_CONFIG)


def test_retention_synonyms_in_kafkas_order() -> None:
    """brokerConfigSynonyms: log.retention.ms, .minutes, .hours; each layer in turn; dropWhile(name != asked)."""
    v = view({}, {"log.retention.ms": "1000"}, log_retention_minutes="5")
    entries = {e["name"]: e for e in broker_config_entries(v, True, True, [
        "log.retention.ms", "log.retention.minutes", "log.retention.hours"])}
    assert entries["log.retention.ms"]["synonyms"] == [
        {"name": "log.retention.ms", "value": "1000", "source": DYNAMIC_DEFAULT_BROKER_CONFIG},
        {"name": "log.retention.minutes", "value": "5", "source": STATIC_BROKER_CONFIG},
        {"name": "log.retention.hours", "value": "168", "source": DEFAULT_CONFIG}]
    assert entries["log.retention.minutes"]["synonyms"] == [
        {"name": "log.retention.minutes", "value": "5", "source": STATIC_BROKER_CONFIG},
        {"name": "log.retention.hours", "value": "168", "source": DEFAULT_CONFIG}]
    assert (entries["log.retention.hours"]["value"], entries["log.retention.hours"]["config_source"],
            entries["log.retention.hours"]["read_only"]) == ("168", DEFAULT_CONFIG, True)
    (t,) = topic_config_entries(v, {}, True, ["retention.ms"])
    assert (t["value"], t["config_source"], [s["name"] for s in t["synonyms"]]) == (
        "1000", DYNAMIC_DEFAULT_BROKER_CONFIG, ["log.retention.ms", "log.retention.minutes", "log.retention.hours"])


def test_passwords_and_unknown_keys_are_sensitive() -> None:
    """KafkaConfig.maybeSensitive: a PASSWORD or a config of unknown type; its value and its synonyms' are null."""
    v = view({"leader.replication.throttled.rate": "1000"}, {}, ssl_key_password="secret", my_custom_key="x")
    entries = {e["name"]: e for e in broker_config_entries(v, True, True)}
    pw = entries["ssl.key.password"]
    assert (pw["value"], pw["is_sensitive"], pw["config_source"], pw["config_type"], pw["read_only"]) == \
        (None, True, STATIC_BROKER_CONFIG, 9, False)
    assert pw["synonyms"] == [{"name": "ssl.key.password", "value": None, "source": STATIC_BROKER_CONFIG}]
    custom = entries["my.custom.key"]
    assert (custom["value"], custom["is_sensitive"], custom["config_source"], custom["config_type"],
            custom["read_only"]) == (None, True, STATIC_BROKER_CONFIG, 0, True)
    # DynamicConfig.Broker's own configs: typed (LONG), not sensitive, but not in AllDynamicConfigs: read-only
    rate = entries["leader.replication.throttled.rate"]
    assert (rate["value"], rate["is_sensitive"], rate["config_source"], rate["config_type"], rate["read_only"]) == \
        ("1000", False, DYNAMIC_BROKER_CONFIG, 5, True)
