"""ConfigCommand's pure parts: --add-config / --delete-config parsing, entity names, broker config validation."""

from __future__ import annotations

import pytest

from core.broker.log_config import InvalidConfigurationException
from kactor.admin.configs import Entity, parse_configs_to_be_added, parse_configs_to_be_deleted, warning_for
from zk_bridge.admin import IllegalArgumentException
from zk_bridge.admin.dynamic_broker_config import validate_configs

FORMAT_ERROR = 'requirement failed: Invalid entity config: all configs to be added must be in the format "key=val".'


@pytest.mark.parametrize(("text", "expected"), [
    ("a=1", {"a": "1"}),
    ("a=1,b=2", {"a": "1", "b": "2"}),
    (" a = 1 , b=2 ", {"a": "1", "b": "2"}),
    ("k1=v1,k2=[v1,v2,v2],k3=v3", {"k1": "v1", "k2": "v1,v2,v2", "k3": "v3"}),
    ("cleanup.policy=[compact,delete]", {"cleanup.policy": "compact,delete"}),
    ("ssl.endpoint.identification.algorithm=", {"ssl.endpoint.identification.algorithm": ""}),
    ("a=1,", {"a": "1"}),  # Java's split drops the trailing empty string
    ("a=1,a=2", {"a": "2"}),  # Properties: the later value wins
    ("a=[x]y]", {"a": "xy"}),  # every bracket is removed from a value
])
def test_parse_configs_to_be_added(text, expected) -> None:
    assert parse_configs_to_be_added(text) == expected


@pytest.mark.parametrize("text", ["a", "a=1,b", "a=1=2", "", "a=1,,b=2"])
def test_parse_configs_to_be_added_refuses_what_is_not_key_val(text) -> None:
    with pytest.raises(IllegalArgumentException) as e:
        parse_configs_to_be_added(text)
    assert str(e.value) == FORMAT_ERROR


def test_parse_configs_to_be_deleted_splits_every_occurrence_at_commas() -> None:
    assert parse_configs_to_be_deleted(["a, b", " c"]) == ["a", "b", "c"]


def test_message_format_version_warning() -> None:
    assert warning_for({"message.format.version": "2.6"}) == (
        "WARNING: The configuration message.format.version=2.6 is specified. This configuration will be ignored if "
        "the version is newer than the inter.broker.protocol.version specified in the broker.")
    assert warning_for({"retention.ms": "1"}) is None


@pytest.mark.parametrize(("entity", "text"), [
    (Entity("topics", "orders"), "topic 'orders'"),
    (Entity("brokers", "1"), "brokers '1'"),
    (Entity("brokers", "<default>"), "default brokers"),
    (Entity("topics", None), "topics"),
])
def test_entity_names_as_config_command_prints_them(entity, text) -> None:
    assert str(entity) == text


@pytest.mark.parametrize(("props", "per_broker", "message"), [
    ({"zookeeper.connect": "x", "log.dirs": "y"}, True, "Cannot update these configs dynamically: "
                                                        "Set(zookeeper.connect, log.dirs)"),
    ({"advertised.listeners": "PLAINTEXT://h:1"}, False,
     "Cannot update these configs at default cluster level, broker id must be specified: Set(advertised.listeners)"),
    ({"listener.name.plaintext.ssl.keystore.location": "k"}, False,
     "Cannot update these configs at default cluster level, broker id must be specified: "
     "Set(listener.name.plaintext.ssl.keystore.location)"),
    ({"log.retention.ms": "-2"}, False, "Invalid value -2 for configuration log.retention.ms: Value must be at least "
                                        "-1"),
    ({"num.io.threads": "0"}, True, "Invalid value 0 for configuration num.io.threads: Value must be at least 1"),
    # every KafkaConfig key is known now: a read-only one is not taken for a custom config
    ({"socket.send.buffer.bytes": "1", "num.io.threads": "4"}, True,
     "Cannot update these configs dynamically: Set(socket.send.buffer.bytes)"),
    ({"ssl.cipher.suites": "x"}, False,
     "Cannot update these configs at default cluster level, broker id must be specified: Set(ssl.cipher.suites)"),
    ({"num.network.threads": "many"}, False,
     "Invalid value many for configuration num.network.threads: Not a number of type INT"),
    ({"leader.replication.throttled.rate": "fast"}, True,
     "Invalid value fast for configuration leader.replication.throttled.rate: Not a number of type LONG"),
])
def test_dynamic_broker_config_validation(props, per_broker, message) -> None:
    with pytest.raises(InvalidConfigurationException) as e:
        validate_configs(props, per_broker)
    assert str(e.value) == message


def test_dynamic_broker_config_accepts_dynamic_and_custom_configs() -> None:
    validate_configs({"min.insync.replicas": "2", "unclean.leader.election.enable": "true",
                      "log.cleanup.policy": "compact", "my.custom.setting": "anything"}, per_broker_config=False)
    validate_configs({"listener.name.plaintext.ssl.keystore.location": "k", "listeners": "PLAINTEXT://h:1"},
                     per_broker_config=True)
    validate_configs({"num.io.threads": "16", "max.connections": "100", "listener.name.plaintext.max.connections": "9"},
                     per_broker_config=False)
