"""Broker configs as Kafka 2.6.3 reads them: every known key accepted, an unknown key warned about in Kafka's words, a
known key kactor does not act on noted once, a malformed value refused in Kafka's words (core.broker.kafka_configs)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from core.broker.kafka_configs import (
    CLUSTER_WIDE,
    DYNAMIC_CONFIGS,
    KAFKA_CONFIGS,
    PER_BROKER,
    PER_BROKER_CONFIGS,
    READ_ONLY,
    text_of,
)
from kactor.config import CONFIG_DEFS, ConfigError, build_config, load_config, parse_properties

SHIPPED = Path(__file__).resolve().parent.parent / "cluster" / "data" / "kafka-2.6.3-server.properties"
BASE = {"broker.id": "0", "zookeeper.connect": "127.0.0.1:2181"}
NOT_ACTED_ON_IN_SHIPPED = ("num.network.threads", "num.io.threads", "socket.send.buffer.bytes",
                           "socket.receive.buffer.bytes", "num.recovery.threads.per.data.dir")


def test_the_table_has_every_kafka_263_config_with_its_default_and_mode() -> None:
    # KafkaConfig.configDef of 2.6.3, 3.6's transaction.partition.verification.enable (issue #40), on as in 3.6, and
    # 3.9's internal log.initial.task.delay.ms
    assert len(KAFKA_CONFIGS) == 210 and KAFKA_CONFIGS["transaction.partition.verification.enable"].default == "true"
    assert len(DYNAMIC_CONFIGS) == 72 and len(PER_BROKER_CONFIGS) == 34  # DynamicBrokerConfig.AllDynamicConfigs
    row = KAFKA_CONFIGS["num.network.threads"]
    assert (row.type, row.default, row.mode) == ("INT", "3", CLUSTER_WIDE)
    assert (KAFKA_CONFIGS["advertised.listeners"].default, KAFKA_CONFIGS["advertised.listeners"].mode) == \
        (None, PER_BROKER)
    assert KAFKA_CONFIGS["log.retention.hours"].mode == READ_ONLY  # only log.retention.ms is a DynamicLogConfig
    assert KAFKA_CONFIGS["log.retention.ms"].mode == CLUSTER_WIDE
    assert KAFKA_CONFIGS["log.message.format.version"].mode == READ_ONLY  # DynamicLogConfig.ExcludedConfigs
    assert KAFKA_CONFIGS["max.connections"].mode == CLUSTER_WIDE  # ClusterLevelListenerConfigs
    assert KAFKA_CONFIGS["message.max.bytes"].default == "1048588"
    assert KAFKA_CONFIGS["transaction.state.log.min.isr"].default == "2"
    assert KAFKA_CONFIGS["sasl.jaas.config"].sensitive and not KAFKA_CONFIGS["ssl.keystore.location"].sensitive


def test_the_keys_kactor_acts_on_default_as_kafka_except_the_documented_ones() -> None:
    """CONFIG_DEFS keeps kactor's parsers; its defaults must be Kafka's (the table's) but for the listed departures:
    the loopback listener (docs), zookeeper.connect (required) and the short spelling of the protocol version."""
    departures = {"listeners", "zookeeper.connect", "inter.broker.protocol.version"}
    kafka_keys = [k for k in CONFIG_DEFS if not k.startswith("kactor.")]
    assert [k for k in kafka_keys if k not in KAFKA_CONFIGS] == []
    assert {k for k in kafka_keys if text_of(CONFIG_DEFS[k][1]) != KAFKA_CONFIGS[k].default} == departures


def test_kafkas_shipped_server_properties_is_accepted_and_each_unused_key_noted_once() -> None:
    raw = parse_properties(SHIPPED.read_text())
    assert set(NOT_ACTED_ON_IN_SHIPPED) <= set(raw)
    config = load_config(str(SHIPPED))
    assert config.unknown == ()
    assert config["num.io.threads"] == 8 and config["transaction.state.log.min.isr"] == 1
    assert config["offsets.topic.replication.factor"] == 1 and config["group.initial.rebalance.delay.ms"] == 0
    notes = config.startup_notes()
    assert [level for level, _ in notes] == [logging.INFO] * len(NOT_ACTED_ON_IN_SHIPPED)
    assert [line.split("=")[0] for _, line in notes] == list(NOT_ACTED_ON_IN_SHIPPED)
    assert notes[0][1] == "num.network.threads=3: kactor serves all connections on one selector thread"
    assert notes[2][1] == "socket.send.buffer.bytes=102400: kactor leaves the socket buffers at the operating " \
                          "system's sizes"


def test_an_unknown_key_is_kept_and_warned_about_in_kafkas_words(caplog: pytest.LogCaptureFixture) -> None:
    config = build_config({**BASE, "made.up.key": "1", "listener.name.plaintext.foo": "x"})
    assert config.unknown == ("made.up.key", "listener.name.plaintext.foo")
    assert "made.up.key" not in config.values and config.originals["made.up.key"] == "1"
    with caplog.at_level(logging.INFO, logger="kactor.config"):
        config.log_startup_notes()
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.WARNING, "The configuration 'made.up.key' was supplied but isn't a known config."),
        (logging.WARNING, "The configuration 'listener.name.plaintext.foo' was supplied but isn't a known config.")]


def test_a_key_kactor_acts_on_is_not_noted_and_a_password_is_not_shown() -> None:
    config = build_config({**BASE, "num.partitions": "3", "ssl.key.password": "secret", "sasl.jaas.config": "x"})
    assert config.startup_notes() == [
        (logging.INFO, "sasl.jaas.config=[hidden]: Server config sasl.jaas.config should be prefixed with SASL "
                       "mechanism name, ignoring config (a broker's listener takes "
                       "listener.name.<l>.<mechanism>.sasl.jaas.config, as Kafka)")]
    assert config.non_default()["ssl.key.password"] == "[hidden]"


@pytest.mark.parametrize(("key", "value", "message"), [
    ("num.network.threads", "abc", "Invalid value abc for configuration num.network.threads: Not a number of type INT"),
    ("num.io.threads", "0", "Invalid value 0 for configuration num.io.threads: Value must be at least 1"),
    ("queued.max.request.bytes", "9223372036854775808",
     "Invalid value 9223372036854775808 for configuration queued.max.request.bytes: Not a number of type LONG"),
    ("transaction.state.log.replication.factor", "40000", "Invalid value 40000 for configuration "
     "transaction.state.log.replication.factor: Not a number of type SHORT"),
    ("log.cleaner.enable", "yes",
     "Invalid value yes for configuration log.cleaner.enable: Expected value to be either true or false"),
    ("log.cleanup.policy", "compact,shred",
     "Invalid value shred for configuration log.cleanup.policy: String must be one of: compact, delete"),
    ("log.message.format.version", "9.9",
     "Invalid value 9.9 for configuration log.message.format.version: Version `9.9` is not a valid version"),
    ("ssl.client.auth", "maybe",
     "Invalid value maybe for configuration ssl.client.auth: String must be one of: required, requested, none"),
    ("log.cleaner.min.cleanable.ratio", "half",
     "Invalid value half for configuration log.cleaner.min.cleanable.ratio: Not a number of type DOUBLE"),
])
def test_a_malformed_known_key_fails_with_kafkas_words(key: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        build_config({**BASE, key: value})
    assert str(e.value) == message


@pytest.mark.parametrize(("settings", "message"), [
    ({"compression.type": "zip"}, "requirement failed: compression.type : zip is not valid. Valid options are "
                                  "uncompressed,zstd,lz4,snappy,gzip,producer"),
    ({"offsets.topic.replication.factor": "1", "offsets.commit.required.acks": "2"},
     "requirement failed: offsets.commit.required.acks must be greater or equal -1 and less or equal to "
     "offsets.topic.replication.factor"),
    ({"queued.max.request.bytes": "1000"},
     "requirement failed: queued.max.request.bytes must be larger or equal to socket.request.max.bytes"),
    ({"max.connections.per.ip": "0"}, "requirement failed: max.connections.per.ip can be set to zero only if "
                                      "max.connections.per.ip.overrides property is set."),
    ({"connections.max.idle.ms": "50"}, "requirement failed: connection.failed.authentication.delay.ms=100 should "
     "always be less than connections.max.idle.ms=50 to prevent failed authentication responses from timing out"),
])
def test_kafkas_cross_checks_of_the_keys_kactor_reads(settings: dict[str, str], message: str) -> None:
    """KafkaConfig.validateValues over keys that parse one by one but not together."""
    with pytest.raises(ConfigError) as e:
        build_config({**BASE, **settings})
    assert str(e.value) == message


def test_the_keys_kactor_acts_on_keep_their_messages() -> None:
    with pytest.raises(ConfigError) as e:
        build_config({**BASE, "num.partitions": "0"})
    assert str(e.value) == "Invalid value 0 for configuration num.partitions: Value must be at least 1"


@pytest.mark.parametrize(("key", "value", "message"), [
    ("kactor.partition.actor", "4", "Unknown configuration 'kactor.partition.actor'"),
    ("authorizer.class.name", "com.example.RangerAuthorizer",
     "Invalid value com.example.RangerAuthorizer for configuration authorizer.class.name: kactor serves only "
     "kafka.security.auth.SimpleAclAuthorizer or kafka.security.authorizer.AclAuthorizer, not "
     "com.example.RangerAuthorizer"),
    ("zookeeper.ssl.client.enable", "true",
     "zookeeper.ssl.client.enable=true is refused: kactor connects to ZooKeeper without TLS"),
])
def test_a_typo_in_kactors_namespace_and_a_setting_kactor_cannot_honour_are_refused(key: str, value: str,
                                                                                      message: str) -> None:
    with pytest.raises(ConfigError) as e:
        build_config({**BASE, key: value})
    assert str(e.value) == message


def test_a_sasl_listener_with_kafkas_default_mechanism_is_refused() -> None:
    with pytest.raises(ConfigError, match="SASL mechanism GSSAPI is refused"):
        build_config({**BASE, "listeners": "PLAINTEXT://127.0.0.1:9092,SASL_SSL://127.0.0.1:9093"})


@pytest.mark.parametrize("name", ["kafka.security.authorizer.AclAuthorizer", "kafka.security.auth.SimpleAclAuthorizer"])
def test_acl_authorizer_is_accepted_under_both_names(name: str) -> None:
    assert build_config({**BASE, "authorizer.class.name": name})["authorizer.class.name"] == name


def test_the_default_of_an_off_switch_is_accepted() -> None:
    config = build_config({**BASE, "authorizer.class.name": "", "zookeeper.ssl.client.enable": "false"})
    assert config["authorizer.class.name"] == "" and config["zookeeper.ssl.client.enable"] is False
    assert config.non_default() == {"broker.id": 0, "zookeeper.connect": "127.0.0.1:2181",
                                    "zookeeper.connection.timeout.ms": 18000}
