"""The config entries DescribeConfigs (and CreateTopics v5) answer with: each config's value, its source and its
synonyms, as Kafka 2.6's ``AdminManager.createTopicConfigEntry`` / ``createBrokerConfigEntry`` / ``configSynonyms``.

A topic's value is its ``/config/topics/<t>`` override, else the broker's log default for it (LogConfig
.TopicConfigSynonyms): the broker's own dynamic config (``/config/brokers/<id>``), the cluster default
(``/config/brokers/<default>``), ``server.properties``, else Kafka's default. The source of an entry is the first
synonym found in that order (DescribeConfigsResponse.ConfigSource ids below); synonyms are listed in that order.

What kactor knows of server.properties is `kactor.config.KafkaConfig`: the keys whose value differs from Kafka's
default count as set there (STATIC_BROKER_CONFIG); the log defaults kactor does not parse are Kafka 2.6's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.broker.log_config import TOPIC_CONFIG_SYNONYMS
from kactor.admin.dynamic_broker_config import DYNAMIC_CONFIGS, QUOTA_CONFIGS, THREAD_POOL_CONFIGS
from kactor.admin.log_config import LOG_CONFIGS
from kactor.config import CONFIG_DEFS, KafkaConfig

# DescribeConfigsResponse.ConfigSource
TOPIC_CONFIG = 1
DYNAMIC_BROKER_CONFIG = 2
DYNAMIC_DEFAULT_BROKER_CONFIG = 3
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5
# DescribeConfigsResponse.ConfigType (v3's config_type)
CONFIG_TYPE_IDS = {"BOOLEAN": 1, "STRING": 2, "INT": 3, "SHORT": 4, "LONG": 5, "DOUBLE": 6, "LIST": 7, "CLASS": 8,
                   "PASSWORD": 9}
LONG_MAX = str(2**63 - 1)

# KafkaConfig's defaults of the broker configs that are topic-config defaults (KafkaConfig.scala, 2.6), and their
# types; None: no default (the synonym that follows supplies it: log.roll.hours for log.roll.ms, ...).
BROKER_LOG_DEFAULTS: dict[str, tuple[str | None, str]] = {
    "log.segment.bytes": ("1073741824", "INT"),
    "log.roll.ms": (None, "LONG"),
    "log.roll.hours": ("168", "INT"),
    "log.roll.jitter.ms": (None, "LONG"),
    "log.roll.jitter.hours": ("0", "INT"),
    "log.index.size.max.bytes": ("10485760", "INT"),
    "log.flush.interval.messages": (LONG_MAX, "LONG"),
    "log.flush.interval.ms": (None, "LONG"),
    "log.flush.scheduler.interval.ms": (LONG_MAX, "LONG"),
    "log.retention.bytes": ("-1", "LONG"),
    "log.retention.ms": (None, "LONG"),
    "log.retention.minutes": (None, "INT"),
    "log.retention.hours": ("168", "INT"),
    "message.max.bytes": ("1048588", "INT"),
    "log.index.interval.bytes": ("4096", "INT"),
    "log.cleaner.delete.retention.ms": ("86400000", "LONG"),
    "log.cleaner.min.compaction.lag.ms": ("0", "LONG"),
    "log.cleaner.max.compaction.lag.ms": (LONG_MAX, "LONG"),
    "log.segment.delete.delay.ms": ("60000", "LONG"),
    "log.cleaner.min.cleanable.ratio": ("0.5", "DOUBLE"),
    "log.cleanup.policy": ("delete", "LIST"),
    "unclean.leader.election.enable": ("false", "BOOLEAN"),
    "min.insync.replicas": ("1", "INT"),
    "compression.type": ("producer", "STRING"),
    "log.preallocate": ("false", "BOOLEAN"),
    "log.message.format.version": ("2.6-IV0", "STRING"),
    "log.message.timestamp.type": ("CreateTime", "STRING"),
    "log.message.timestamp.difference.max.ms": (LONG_MAX, "LONG"),
    "log.message.downconversion.enable": ("true", "BOOLEAN"),
}
# Types of the dynamic broker configs kactor does not parse itself (KafkaConfig's ConfigDef)
_DYNAMIC_TYPES = {**dict.fromkeys(THREAD_POOL_CONFIGS, "INT"), **dict.fromkeys(QUOTA_CONFIGS, "LONG"),
                  "log.cleaner.threads": "INT", "max.connections": "INT", "max.connections.per.ip": "INT"}
# LogConfig's own defaults of the topic configs with no broker synonym (the throttled-replica lists)
_TOPIC_ONLY_DEFAULTS = {"follower.replication.throttled.replicas": "", "leader.replication.throttled.replicas": ""}


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


def _text(value: Any) -> str | None:
    """ConfigDef.convertToString: lists comma-joined, booleans lower-case, None stays null."""
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (tuple, list)):
        return ",".join(map(str, value))
    return str(value)


class BrokerConfigView:
    """DynamicBrokerConfig's four layers of one broker: its dynamic configs, the cluster's dynamic defaults, its
    server.properties and Kafka's static defaults."""

    def __init__(self, config: KafkaConfig, dynamic_broker: Mapping[str, str],
                 dynamic_default: Mapping[str, str]) -> None:
        self.dynamic_broker = dict(dynamic_broker)
        self.dynamic_default = dict(dynamic_default)
        self.static = {k: t for k, v in config.non_default().items()
                       if not k.startswith("kactor.") and (t := _text(config[k])) is not None}
        self.static_defaults = {k: t for k, (v, _) in BROKER_LOG_DEFAULTS.items() if (t := v) is not None}
        self.static_defaults.update({k: t for k, (_, v) in CONFIG_DEFS.items()
                                     if not k.startswith("kactor.") and (t := _text(v)) is not None})
        self.types = {**_DYNAMIC_TYPES, **{k: kind for k, (_, kind) in BROKER_LOG_DEFAULTS.items()}}
        self.types.update({k: _kind_of_default(v) for k, (_, v) in CONFIG_DEFS.items() if k not in self.types})

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


def _kind_of_default(default: Any) -> str:
    if isinstance(default, bool):
        return "BOOLEAN"
    if isinstance(default, int):
        return "INT"
    if isinstance(default, tuple):
        return "LIST"
    return "STRING"


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
    """AdminManager.createBrokerConfigEntry over the broker's configs (per broker) or over the cluster's dynamic
    defaults (the "" resource: only the configs set in /config/brokers/<default>)."""
    if per_broker:
        all_names = sorted({*view.static_defaults, *view.static, *view.dynamic_default, *view.dynamic_broker})
    else:
        all_names = sorted(view.dynamic_default)
    entries = []
    for name in all_names:
        if names is not None and name not in names:
            continue
        synonyms = view.synonyms(name)
        if not per_broker:
            synonyms = [s for s in synonyms if s["source"] == DYNAMIC_DEFAULT_BROKER_CONFIG]
        value = view.current(name) if per_broker else view.dynamic_default[name]
        source = synonyms[0]["source"] if synonyms else DEFAULT_CONFIG
        entries.append({
            "name": name, "value": value, "read_only": name not in DYNAMIC_CONFIGS, "is_sensitive": False,
            "config_source": source, "is_default": source == DEFAULT_CONFIG,
            "synonyms": synonyms if include_synonyms else [],
            "config_type": CONFIG_TYPE_IDS.get(view.types.get(name, "STRING"), 2), "documentation": None,
        })
    return entries
