"""The config entries DescribeConfigs (and CreateTopics v5) answer with: each config's value, its source and its
synonyms, as Kafka 2.6's ``AdminManager.createTopicConfigEntry`` / ``createBrokerConfigEntry`` / ``configSynonyms``.

A topic's value is its ``/config/topics/<t>`` override, else the broker's log default for it (LogConfig
.TopicConfigSynonyms): the broker's own dynamic config (``/config/brokers/<id>``), the cluster default
(``/config/brokers/<default>``), ``server.properties``, else Kafka's default. The source of an entry is the first
synonym found in that order (DescribeConfigsResponse.ConfigSource ids below); synonyms are listed in that order.

Every broker config is a row of `core.broker.kafka_configs` (Kafka 2.6.3's KafkaConfig): its type, its default and
whether it is dynamic. What the broker was started with is `KafkaConfigView.originals`: every key supplied counts as
STATIC_BROKER_CONFIG, also when its value is the default, and a key Kafka does not know is described too (its type
UNKNOWN, so sensitive, as KafkaConfig.maybeSensitive treats it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from core.broker.kafka_configs import DYNAMIC_CONFIGS, KAFKA_CONFIGS, NO_DEFAULT, PASSWORD, text_of
from core.broker.log_config import LOG_CONFIGS, TOPIC_CONFIG_SYNONYMS
from zk_bridge.admin.dynamic_broker_config import QUOTA_CONFIG_KEYS

# DescribeConfigsResponse.ConfigSource
TOPIC_CONFIG = 1
DYNAMIC_BROKER_CONFIG = 2
DYNAMIC_DEFAULT_BROKER_CONFIG = 3
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5
# DescribeConfigsResponse.ConfigType (v3's config_type)
CONFIG_TYPE_IDS = {"UNKNOWN": 0, "BOOLEAN": 1, "STRING": 2, "INT": 3, "SHORT": 4, "LONG": 5, "DOUBLE": 6, "LIST": 7,
                   "CLASS": 8, "PASSWORD": 9}
# LogConfig's own defaults of the topic configs with no broker synonym (the throttled-replica lists)
_TOPIC_ONLY_DEFAULTS = {"follower.replication.throttled.replicas": "", "leader.replication.throttled.replicas": ""}
# KafkaConfig's rows and DynamicConfig.Broker's own (KafkaConfig.configTypeExact looks in both)
_BROKER_KEYS = {**KAFKA_CONFIGS, **QUOTA_CONFIG_KEYS}


def broker_synonyms(name: str) -> list[str]:
    """DynamicBrokerConfig.brokerConfigSynonyms (without listener overrides, which kactor does not have)."""
    if name in ("log.roll.ms", "log.roll.hours"):
        return ["log.roll.ms", "log.roll.hours"]
    if name in ("log.roll.jitter.ms", "log.roll.jitter.hours"):
        return ["log.roll.jitter.ms", "log.roll.jitter.hours"]
    if name == "log.flush.interval.ms":
        return ["log.flush.interval.ms", "log.flush.scheduler.interval.ms"]
    if name in ("log.retention.ms", "log.retention.minutes", "log.retention.hours"):
        return ["log.retention.ms", "log.retention.minutes", "log.retention.hours"]
    return [name]


def config_type(name: str) -> str:
    """KafkaConfig.configType: the type of ``name``, of its base config for a listener override, else UNKNOWN."""
    row = _BROKER_KEYS.get(name)
    if row is None and name.startswith("listener.name."):
        row = _BROKER_KEYS.get(name[len("listener.name."):].partition(".")[2])
    return row.type if row is not None else "UNKNOWN"


def is_sensitive(name: str) -> bool:
    """KafkaConfig.maybeSensitive: a PASSWORD, or a config whose type is unknown (to be safe)."""
    return config_type(name) in (PASSWORD, "UNKNOWN")


class KafkaConfigView(Protocol):
    """What the admin server reads of the broker's own configuration (kactor.config.KafkaConfig, handed to it at
    start-up): Kafka's ``KafkaConfig`` values by key, its ``originals`` and the broker id."""

    @property
    def values(self) -> Mapping[str, Any]: ...

    @property
    def originals(self) -> Mapping[str, str]: ...

    @property
    def broker_id(self) -> int: ...

    def __getitem__(self, key: str) -> Any: ...


class BrokerConfigView:
    """DynamicBrokerConfig's four layers of one broker: its dynamic configs, the cluster's dynamic defaults, its
    server.properties (staticBrokerConfigs: what was supplied, unknown keys included) and Kafka's defaults
    (staticDefaultConfigs: the non-null ones)."""

    def __init__(self, config: KafkaConfigView, dynamic_broker: Mapping[str, str],
                 dynamic_default: Mapping[str, str]) -> None:
        self.dynamic_broker = dict(dynamic_broker)
        self.dynamic_default = dict(dynamic_default)
        self.static = {k: v.strip() for k, v in config.originals.items() if not k.startswith("kactor.")}
        self.static_defaults = {k: row.default for k, row in KAFKA_CONFIGS.items()
                                if row.default is not None and row.default != NO_DEFAULT}
        # kactor's one default that is not Kafka's: the listener it binds when none is configured (docs)
        if "listeners" not in self.static:
            self.static_defaults["listeners"] = text_of(config.values["listeners"]) or ""
        self.types = {k: row.type for k, row in _BROKER_KEYS.items()}

    def layers(self) -> tuple[tuple[Mapping[str, str], int], ...]:
        return ((self.dynamic_broker, DYNAMIC_BROKER_CONFIG), (self.dynamic_default, DYNAMIC_DEFAULT_BROKER_CONFIG),
                (self.static, STATIC_BROKER_CONFIG), (self.static_defaults, DEFAULT_CONFIG))

    def synonyms(self, name: str) -> list[dict[str, Any]]:
        """AdminManager.configSynonyms(name, brokerSynonyms(name)): each synonym found in each layer, layer by
        layer, then ``dropWhile(_.name != name)`` (so a default that comes from log.retention.hours is not listed as
        a synonym of log.retention.ms, as in Kafka)."""
        found = []
        for layer, source in self.layers():
            for synonym in broker_synonyms(name):
                if synonym in layer:
                    found.append({"name": synonym, "value": layer[synonym], "source": source})
        for i, s in enumerate(found):
            if s["name"] == name:
                return found[i:]
        return []

    def current(self, name: str) -> str | None:
        """The broker's current value of ``name`` (KafkaConfig after the dynamic updates)."""
        for layer, _ in self.layers():
            if name in layer:
                return layer[name]
        return None

    def log_default(self, topic_config: str) -> str | None:
        """KafkaServer.copyKafkaConfigToLog for one topic config: the broker's current value of its synonym."""
        broker_name = TOPIC_CONFIG_SYNONYMS.get(topic_config)
        if broker_name is None:
            return _TOPIC_ONLY_DEFAULTS.get(topic_config)
        if broker_name == "log.retention.ms":
            return _retention_ms(self)
        if broker_name in ("log.roll.ms", "log.roll.jitter.ms"):
            ms = self.current(broker_name)
            hours = self.current(broker_name.replace(".ms", ".hours"))
            return ms if ms is not None else str(int(hours or "0") * 3_600_000)
        if broker_name == "log.flush.interval.ms":
            ms = self.current(broker_name)
            return ms if ms is not None else self.current("log.flush.scheduler.interval.ms")
        return self.current(broker_name)


def _retention_ms(view: BrokerConfigView) -> str:
    """KafkaConfig.logRetentionTimeMillis: ms, else minutes, else hours."""
    ms = view.current("log.retention.ms")
    if ms is not None:
        return ms
    minutes = view.current("log.retention.minutes")
    if minutes is not None:
        return str(int(minutes) * 60_000)
    return str(int(view.current("log.retention.hours") or "168") * 3_600_000)


def topic_config_entries(view: BrokerConfigView, overrides: Mapping[str, str], include_synonyms: bool,
                         names: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """AdminManager.createTopicConfigEntry for every LogConfig name (or those asked for), in name order."""
    entries = []
    for name in sorted(LOG_CONFIGS):
        if names is not None and name not in names:
            continue
        broker_name = TOPIC_CONFIG_SYNONYMS.get(name)
        synonyms = view.synonyms(broker_name) if broker_name else []
        value = overrides.get(name, view.log_default(name))
        if name in overrides:
            synonyms.insert(0, {"name": name, "value": overrides[name], "source": TOPIC_CONFIG})
        entries.append({
            "name": name, "value": value, "read_only": False, "is_sensitive": False,
            "config_source": synonyms[0]["source"] if synonyms else DEFAULT_CONFIG,
            "is_default": not synonyms or synonyms[0]["source"] == DEFAULT_CONFIG,
            "synonyms": synonyms if include_synonyms else [],
            "config_type": CONFIG_TYPE_IDS[LOG_CONFIGS[name][0]], "documentation": None,
        })
    return entries


def broker_config_entries(view: BrokerConfigView, per_broker: bool, include_synonyms: bool,
                          names: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """AdminManager.createBrokerConfigEntry over the broker's configs (per broker: every KafkaConfig key and every
    key supplied or set dynamically) or over the cluster's dynamic defaults (the "" resource: only the configs set in
    /config/brokers/<default>)."""
    if per_broker:
        # ConfigHelper.allConfigs: an internal config (ConfigDef.defineInternal) only where it was supplied
        all_names = sorted({*(k for k, row in KAFKA_CONFIGS.items() if not row.internal), *view.static,
                            *view.dynamic_default, *view.dynamic_broker})
    else:
        all_names = sorted(view.dynamic_default)
    entries = []
    for name in all_names:
        if names is not None and name not in names:
            continue
        sensitive = is_sensitive(name)
        synonyms = view.synonyms(name)
        if not per_broker:
            synonyms = [s for s in synonyms if s["source"] == DYNAMIC_DEFAULT_BROKER_CONFIG]
        if sensitive:
            synonyms = [{**s, "value": None} for s in synonyms]
        value = view.current(name) if per_broker else view.dynamic_default[name]
        source = synonyms[0]["source"] if synonyms else DEFAULT_CONFIG
        entries.append({
            "name": name, "value": None if sensitive else value, "read_only": name not in DYNAMIC_CONFIGS,
            "is_sensitive": sensitive, "config_source": source, "is_default": source == DEFAULT_CONFIG,
            "synonyms": synonyms if include_synonyms else [],
            "config_type": CONFIG_TYPE_IDS[config_type(name)], "documentation": None,
        })
    return entries
