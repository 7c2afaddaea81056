"""log.initial.task.delay.ms in server.properties, as Kafka 3.9 defines it (LogConfig's defineInternal: LONG, default
30000, atLeast(0); beyond 2.6, whose LogManager.InitialTaskDelayMs is fixed): read, refused in Kafka's words when bad,
carried to every PartitionActor shard with the broker's log properties, read-only, and described only where set."""

from __future__ import annotations

import pytest

from core.broker.kafka_configs import KAFKA_CONFIGS, LONG
from core.broker.log_manager import log_initial_task_delay_ms
from kactor.config import ConfigError, build_config
from messages.broker_lifecycle import ReplicaManagerInit
from zk_bridge.admin.config_entries import DEFAULT_CONFIG, STATIC_BROKER_CONFIG, BrokerConfigView, broker_config_entries
from zk_bridge.admin.dynamic_broker_config import NON_DYNAMIC_CONFIGS

KEY = "log.initial.task.delay.ms"
BASE = {"broker.id": "1", "zookeeper.connect": "127.0.0.1:2181", "log.dirs": "/tmp/x"}


def _shard_delay(raw: dict[str, str]) -> int:
    """The delay a PartitionActor shard's ReplicaManager schedules its log tasks with."""
    return log_initial_task_delay_ms(dict(ReplicaManagerInit.from_kafka_config(build_config(raw)).log_props))


def test_kafka_39s_definition() -> None:
    row = KAFKA_CONFIGS[KEY]
    assert (row.type, row.default, row.dynamic, row.internal) == (LONG, "30000", False, True)
    assert KEY in NON_DYNAMIC_CONFIGS  # not in DynamicBrokerConfig.AllDynamicConfigs: AlterConfigs refuses it


def test_the_default_is_2_6s_fixed_delay_and_a_setting_reaches_the_shards() -> None:
    assert build_config(BASE)[KEY] == 30000 and _shard_delay(BASE) == 30000
    assert build_config({**BASE, KEY: "1000"})[KEY] == 1000 and _shard_delay({**BASE, KEY: "1000"}) == 1000
    assert _shard_delay({**BASE, KEY: "0"}) == 0


@pytest.mark.parametrize(("text", "why"), [("-1", "Value must be at least 0"), ("1s", "Not a number of type LONG"),
                                            ("9223372036854775808", "Not a number of type LONG")])
def test_a_bad_value_is_refused_before_anything_starts(text: str, why: str) -> None:
    with pytest.raises(ConfigError) as refused:
        build_config({**BASE, KEY: text})
    assert str(refused.value) == f"Invalid value {text} for configuration {KEY}: {why}"


def test_describe_configs_lists_it_only_where_it_was_supplied() -> None:
    """ConfigHelper.allConfigs (3.9): the supplied originals, then nonInternalValues, which leave internal configs
    out: a broker that does not set it does not show it, one that does shows its STATIC_BROKER_CONFIG value."""
    unset = BrokerConfigView(build_config(BASE), {}, {})
    assert KEY not in {e["name"] for e in broker_config_entries(unset, per_broker=True, include_synonyms=True)}
    assert broker_config_entries(unset, True, True, [KEY]) == []
    supplied = BrokerConfigView(build_config({**BASE, KEY: "1000"}), {}, {})
    (entry,) = broker_config_entries(supplied, True, True, [KEY])
    assert (entry["value"], entry["config_source"], entry["read_only"], entry["config_type"], entry["synonyms"]) == \
        ("1000", STATIC_BROKER_CONFIG, True, 5, [{"name": KEY, "value": "1000", "source": STATIC_BROKER_CONFIG},
                                                 {"name": KEY, "value": "30000", "source": DEFAULT_CONFIG}])
