"""A log's effective configuration, as Kafka 2.6's ``kafka.log.LogConfig``: the topic's ``/config/topics/<t>``
overrides over the broker's log defaults (``LogManager.currentDefaultConfig``: the static broker config with the
dynamic broker configs of ``/config/brokers/<default>`` and ``/config/brokers/<id>`` applied).

Only the settings the kactor broker acts on are typed (``min.insync.replicas``, ``unclean.leader.election.enable``);
the rest travel as text. `LogConfigs` is one shard's view: its defaults and the overrides of the topics it hosts,
read from ZooKeeper when a partition is first hosted (Partition.createLog's ``fetchTopicConfig``) and replaced by the
config manager's change notifications (TopicConfigHandler / DynamicLogConfig).

`LOG_CONFIGS` is LogConfig's ConfigDef (each topic config's type and validator): `validate` is LogConfig.validate, which
the admin server (CreateTopics, AlterConfigs) and the tools (kafka-topics, kafka-configs) run before they write a
topic's config; a refusal is `InvalidConfigurationException` with ConfigException's message.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from core.broker.kafka_configs import LIST, ConfigError, parse_type
from core.effects import Proc
from core.zk_client import KafkaZkClient
from messages.zk import NONODE, OK
from protocol.zk import paths, znodes

log = logging.getLogger("kactor.broker")

MIN_IN_SYNC_REPLICAS = "min.insync.replicas"
UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable"
MESSAGE_FORMAT_VERSION = "message.format.version"
TOPIC_CONFIG_TYPE = "topics"

class InvalidConfigurationException(ValueError):  # noqa: N818 (Kafka's exception names)
    """org.apache.kafka.common.config.ConfigException as LogConfig.validate and DynamicBrokerConfig throw it (the admin
    server answers it INVALID_CONFIG, a tool prints it as one line)."""


# name -> (ConfigDef type, validator or None)
_Validator = Callable[[str, object], None]


@functools.lru_cache(maxsize=64)
def _policies(cleanup_policy: str) -> frozenset[str]:
    """cleanup.policy's words, as LogConfig.delete / compact compare them (asked on every produce: split once)."""
    return frozenset(p.strip().lower() for p in cleanup_policy.split(","))


def _at_least(minimum: float) -> _Validator:
    def check(name: str, value: object) -> None:
        if value < minimum:  # type: ignore[operator]
            raise InvalidConfigurationException(
                f"Invalid value {value} for configuration {name}: Value must be at least {minimum}")
    return check


def _between(lo: float, hi: float) -> _Validator:
    def check(name: str, value: object) -> None:
        if not lo <= value <= hi:  # type: ignore[operator]
            raise InvalidConfigurationException(
                f"Invalid value {value} for configuration {name}: Value must be no more than {hi}"
                if value > hi else  # type: ignore[operator]
                f"Invalid value {value} for configuration {name}: Value must be at least {lo}")
    return check


def _one_of(*allowed: str) -> _Validator:
    def check(name: str, value: object) -> None:
        values = value if isinstance(value, list) else [value]
        for v in values:
            if v not in allowed:
                raise InvalidConfigurationException(
                    f"Invalid value {v} for configuration {name}: String must be one of: {', '.join(allowed)}")
    return check


_THROTTLED = re.compile(r"^(\*|\s*\d+\s*:\s*\d+\s*)$")


def _throttled_replicas(name: str, value: object) -> None:
    """ThrottledReplicaListValidator: ``*`` or ``partition:broker`` entries."""
    entries = value if isinstance(value, list) else [value]
    if entries and not (entries == ["*"] or all(_THROTTLED.match(e) and e.strip() != "*" for e in entries)):
        raise InvalidConfigurationException(
            f"Invalid value {','.join(entries)} for configuration {name}: Must be a list in the format "
            "[PartitionId]:[BrokerId],[PartitionId]:[BrokerId],... or the wildcard '*'")


LOG_CONFIGS: dict[str, tuple[str, _Validator | None]] = {
    "cleanup.policy": ("LIST", _one_of("compact", "delete")),
    "compression.type": ("STRING", _one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")),
    "delete.retention.ms": ("LONG", _at_least(0)),
    "file.delete.delay.ms": ("LONG", _at_least(0)),
    "flush.messages": ("LONG", _at_least(0)),
    "flush.ms": ("LONG", _at_least(0)),
    "follower.replication.throttled.replicas": ("LIST", _throttled_replicas),
    "index.interval.bytes": ("INT", _at_least(0)),
    "leader.replication.throttled.replicas": ("LIST", _throttled_replicas),
    "max.compaction.lag.ms": ("LONG", _at_least(1)),
    "max.message.bytes": ("INT", _at_least(0)),
    "message.downconversion.enable": ("BOOLEAN", None),
    "message.format.version": ("STRING", None),
    "message.timestamp.difference.max.ms": ("LONG", _at_least(0)),
    "message.timestamp.type": ("STRING", _one_of("CreateTime", "LogAppendTime")),
    "min.cleanable.dirty.ratio": ("DOUBLE", _between(0, 1)),
    "min.compaction.lag.ms": ("LONG", _at_least(0)),
    "min.insync.replicas": ("INT", _at_least(1)),
    "preallocate": ("BOOLEAN", None),
    "retention.bytes": ("LONG", None),
    "retention.ms": ("LONG", _at_least(-1)),
    "segment.bytes": ("INT", _at_least(14)),
    "segment.index.bytes": ("INT", _at_least(0)),
    "segment.jitter.ms": ("LONG", _at_least(0)),
    "segment.ms": ("LONG", _at_least(1)),
    "unclean.leader.election.enable": ("BOOLEAN", None),
}
CONFIG_NAMES: tuple[str, ...] = tuple(sorted(LOG_CONFIGS))

def _parse(name: str, kind: str, raw: str) -> object:
    """ConfigDef.parseType (KafkaConfig's, core.broker.kafka_configs), refused as LogConfig.validate refuses it; a
    LIST as a list, which the validators above take."""
    try:
        value = parse_type(name, kind, raw)
    except ConfigError as e:
        raise InvalidConfigurationException(str(e)) from None
    return list(value) if kind == LIST else value


def validate_names(names: Iterable[str]) -> None:
    """LogConfig.validateNames."""
    for name in names:
        if name not in LOG_CONFIGS:
            raise InvalidConfigurationException(f"Unknown topic config name: {name}")


def validate(props: dict[str, str]) -> None:
    """LogConfig.validate: known names, values of the right type and range."""
    validate_names(props)
    for name, raw in props.items():
        validate_value(name, raw)


def validate_value(name: str, raw: str, topic_config: str | None = None) -> None:
    """ConfigDef.parse of one value of topic config ``topic_config`` (default: ``name``), reported as ``name`` (a
    broker config whose value is that topic config's default has the same type and validator)."""
    kind, check = LOG_CONFIGS[topic_config or name]
    value = _parse(name, kind, raw)
    if check is not None:
        check(name, value)


# LogConfig.TopicConfigSynonyms (Kafka 2.6): topic config name -> the broker config that is its default.
TOPIC_CONFIG_SYNONYMS: dict[str, str] = {
    "segment.bytes": "log.segment.bytes",
    "segment.ms": "log.roll.ms",
    "segment.jitter.ms": "log.roll.jitter.ms",
    "segment.index.bytes": "log.index.size.max.bytes",
    "flush.messages": "log.flush.interval.messages",
    "flush.ms": "log.flush.interval.ms",
    "retention.bytes": "log.retention.bytes",
    "retention.ms": "log.retention.ms",
    "max.message.bytes": "message.max.bytes",
    "index.interval.bytes": "log.index.interval.bytes",
    "delete.retention.ms": "log.cleaner.delete.retention.ms",
    "min.compaction.lag.ms": "log.cleaner.min.compaction.lag.ms",
    "max.compaction.lag.ms": "log.cleaner.max.compaction.lag.ms",
    "file.delete.delay.ms": "log.segment.delete.delay.ms",
    "min.cleanable.dirty.ratio": "log.cleaner.min.cleanable.ratio",
    "cleanup.policy": "log.cleanup.policy",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
    "min.insync.replicas": "min.insync.replicas",
    "compression.type": "compression.type",
    "preallocate": "log.preallocate",
    "message.format.version": "log.message.format.version",
    "message.timestamp.type": "log.message.timestamp.type",
    "message.timestamp.difference.max.ms": "log.message.timestamp.difference.max.ms",
    "message.downconversion.enable": "log.message.downconversion.enable",
}
# DynamicLogConfig.ReconfigurableConfigs: the broker names above, less log.message.format.version (ExcludedConfigs).
DYNAMIC_LOG_CONFIGS: frozenset[str] = frozenset(
    b for t, b in TOPIC_CONFIG_SYNONYMS.items() if t != MESSAGE_FORMAT_VERSION)
_TOPIC_NAME_OF: dict[str, str] = {b: t for t, b in TOPIC_CONFIG_SYNONYMS.items()}

Props = Mapping[str, str]


def parse_boolean(text: str) -> bool:
    """ConfigDef's BOOLEAN parse: "true" / "false" in any case (surrounding spaces trimmed); ValueError otherwise."""
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise ValueError(f"Expected value to be either true or false, got {text!r}")
    return value == "true"


def scala_to_boolean(text: str | None) -> bool:
    """``Try(s.toBoolean).getOrElse(false)``, how TopicConfigHandler reads unclean.leader.election.enable (no trim)."""
    return text is not None and text.lower() == "true"


# Kafka 2.6's defaults (Defaults.scala / LogConfig) for the settings the log acts on.
DEFAULT_SEGMENT_BYTES = 1024 * 1024 * 1024  # log.segment.bytes
DEFAULT_SEGMENT_MS = 7 * 24 * 60 * 60 * 1000  # log.roll.hours = 168
DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000  # log.retention.hours = 168
DEFAULT_RETENTION_BYTES = -1  # log.retention.bytes
DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024 + 12  # message.max.bytes = 1048588 (1 MiB + Records.LOG_OVERHEAD)
DEFAULT_INDEX_INTERVAL_BYTES = 4096  # log.index.interval.bytes
DEFAULT_SEGMENT_INDEX_BYTES = 10 * 1024 * 1024  # log.index.size.max.bytes
DEFAULT_FILE_DELETE_DELAY_MS = 60000  # log.segment.delete.delay.ms
LONG_MAX = 2**63 - 1
DEFAULT_FLUSH_MESSAGES = LONG_MAX  # log.flush.interval.messages: never
DEFAULT_FLUSH_MS = LONG_MAX  # log.flush.interval.ms, else log.flush.scheduler.interval.ms: never
DEFAULT_DELETE_RETENTION_MS = 24 * 60 * 60 * 1000  # log.cleaner.delete.retention.ms
DEFAULT_MIN_COMPACTION_LAG_MS = 0  # log.cleaner.min.compaction.lag.ms
DEFAULT_MAX_COMPACTION_LAG_MS = LONG_MAX  # log.cleaner.max.compaction.lag.ms
DEFAULT_MIN_CLEANABLE_DIRTY_RATIO = 0.5  # log.cleaner.min.cleanable.ratio
CREATE_TIME, LOG_APPEND_TIME = "CreateTime", "LogAppendTime"

# topic config name -> (attribute, minimum) of the integer settings
_INT_SETTINGS: dict[str, tuple[str, int]] = {
    "segment.bytes": ("segment_bytes", 14),  # LegacyRecord.RECORD_OVERHEAD_V0
    "segment.ms": ("segment_ms", 1),
    "retention.ms": ("retention_ms", -1),
    "retention.bytes": ("retention_bytes", -(2**63)),
    "max.message.bytes": ("max_message_bytes", 0),
    "index.interval.bytes": ("index_interval_bytes", 0),
    "segment.index.bytes": ("segment_index_bytes", 4),
    "file.delete.delay.ms": ("file_delete_delay_ms", 0),
    "flush.messages": ("flush_messages", 0),
    "flush.ms": ("flush_ms", 0),
    "delete.retention.ms": ("delete_retention_ms", 0),
    "min.compaction.lag.ms": ("min_compaction_lag_ms", 0),
    "max.compaction.lag.ms": ("max_compaction_lag_ms", 1),
}


@attrs.frozen
class LogConfig:
    """kafka.log.LogConfig: the typed settings the broker uses, and every property as text (``originals``)."""

    min_insync_replicas: int = 1
    unclean_leader_election_enable: bool = False
    originals: tuple[tuple[str, str], ...] = ()
    segment_bytes: int = DEFAULT_SEGMENT_BYTES
    segment_ms: int = DEFAULT_SEGMENT_MS
    retention_ms: int = DEFAULT_RETENTION_MS
    retention_bytes: int = DEFAULT_RETENTION_BYTES
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES
    segment_index_bytes: int = DEFAULT_SEGMENT_INDEX_BYTES
    file_delete_delay_ms: int = DEFAULT_FILE_DELETE_DELAY_MS
    flush_messages: int = DEFAULT_FLUSH_MESSAGES  # Log.append flushes once this many messages are unflushed
    flush_ms: int = DEFAULT_FLUSH_MS  # LogManager.flushDirtyLogs flushes a log this long after its last flush
    message_timestamp_type: str = CREATE_TIME
    cleanup_policy: str = "delete"
    delete_retention_ms: int = DEFAULT_DELETE_RETENTION_MS  # tombstones kept this long after their segment's clean
    min_compaction_lag_ms: int = DEFAULT_MIN_COMPACTION_LAG_MS
    max_compaction_lag_ms: int = DEFAULT_MAX_COMPACTION_LAG_MS
    min_cleanable_dirty_ratio: float = DEFAULT_MIN_CLEANABLE_DIRTY_RATIO

    @property
    def delete(self) -> bool:
        """LogConfig.delete: cleanup.policy includes delete (time/size retention applies)."""
        return "delete" in _policies(self.cleanup_policy)

    @property
    def compact(self) -> bool:
        """LogConfig.compact: cleanup.policy includes compact (the log cleaner dedupes the log by key)."""
        return "compact" in _policies(self.cleanup_policy)

    @staticmethod
    def from_props(defaults: Props, overrides: Props) -> LogConfig:
        """LogConfig.fromProps(defaults, overrides): an override wins; a value that does not parse is refused with
        ConfigException's message (ValueError), as Kafka refuses the whole config."""
        merged = {**defaults, **overrides}
        min_isr_text = merged.get(MIN_IN_SYNC_REPLICAS, "1")
        try:
            min_isr = int(min_isr_text.strip())
        except ValueError:
            raise ValueError(f"Invalid value {min_isr_text} for configuration {MIN_IN_SYNC_REPLICAS}: "
                             "Not a number of type INT") from None
        if min_isr < 1:
            raise ValueError(f"Invalid value {min_isr} for configuration {MIN_IN_SYNC_REPLICAS}: "
                             "Value must be at least 1")
        unclean_text = merged.get(UNCLEAN_LEADER_ELECTION_ENABLE, "false")
        try:
            unclean = parse_boolean(unclean_text)
        except ValueError:
            raise ValueError(f"Invalid value {unclean_text} for configuration {UNCLEAN_LEADER_ELECTION_ENABLE}: "
                             "Expected value to be either true or false") from None
        typed: dict[str, Any] = {}
        for name, (attribute, minimum) in _INT_SETTINGS.items():
            text = merged.get(name)
            if text is None:
                continue
            try:
                value = int(text.strip())
            except ValueError:
                raise ValueError(f"Invalid value {text} for configuration {name}: Not a number of type LONG") from None
            if value < minimum:
                raise ValueError(f"Invalid value {value} for configuration {name}: Value must be at least {minimum}")
            typed[attribute] = value
        timestamp_type = merged.get("message.timestamp.type", CREATE_TIME).strip()
        if timestamp_type not in (CREATE_TIME, LOG_APPEND_TIME):
            raise ValueError(f"Invalid value {timestamp_type} for configuration message.timestamp.type: String must "
                             f"be one of: {CREATE_TIME}, {LOG_APPEND_TIME}")
        ratio_text = merged.get("min.cleanable.dirty.ratio")
        if ratio_text is not None:
            try:
                ratio = float(ratio_text.strip())
            except ValueError:
                raise ValueError(f"Invalid value {ratio_text} for configuration min.cleanable.dirty.ratio: Not a "
                                 "number of type DOUBLE") from None
            if not 0 <= ratio <= 1:
                bound = "be no more than 1" if ratio > 1 else "be at least 0"
                raise ValueError(f"Invalid value {ratio} for configuration min.cleanable.dirty.ratio: Value must "
                                 f"{bound}")
            typed["min_cleanable_dirty_ratio"] = ratio
        return LogConfig(min_isr, unclean, tuple(merged.items()), message_timestamp_type=timestamp_type,
                         cleanup_policy=merged.get("cleanup.policy", "delete"), **typed)


def log_defaults_from_broker_config(broker_props: Props) -> dict[str, str]:
    """KafkaServer.copyKafkaConfigToLog / DynamicLogConfig.reconfigure: the broker configs that are log defaults,
    renamed to their topic config names."""
    result = {_TOPIC_NAME_OF[k]: v for k, v in broker_props.items() if k in _TOPIC_NAME_OF}
    # KafkaConfig.logFlushIntervalMs: log.flush.interval.ms, else log.flush.scheduler.interval.ms
    if "flush.ms" not in result and "log.flush.scheduler.interval.ms" in broker_props:
        result["flush.ms"] = broker_props["log.flush.scheduler.interval.ms"]
    # KafkaConfig.logRetentionTimeMillis / logRollTimeMillis: the ms setting wins, then minutes, then hours
    for topic_name, prefix in (("retention.ms", "log.retention"), ("segment.ms", "log.roll")):
        if topic_name in result:
            continue
        for unit, factor in (("minutes", 60_000), ("hours", 3_600_000)):
            text = broker_props.get(f"{prefix}.{unit}")
            if text is not None and text.strip().lstrip("-").isdigit():
                result[topic_name] = str(int(text) * factor)
                break
    return result


def effective_broker_config(static: Props, dynamic_default: Props, dynamic_broker: Props) -> dict[str, str]:
    """DynamicBrokerConfig.updateCurrentConfig's precedence for the dynamically updatable configs: the broker's own
    ``/config/brokers/<id>`` over the cluster's ``/config/brokers/<default>`` over ``server.properties``."""
    result = dict(static)
    for layer in (dynamic_default, dynamic_broker):
        result.update({k: v for k, v in layer.items() if k in DYNAMIC_LOG_CONFIGS})
    return result


class LogConfigs:
    """One shard's LogManager config state: the current log defaults and each hosted topic's overrides."""

    def __init__(self, defaults: Props) -> None:
        self.defaults: dict[str, str] = dict(defaults)
        self.overrides: dict[str, dict[str, str]] = {}
        # each topic's LogConfig as last derived: built once per change of the defaults or of its overrides, not once
        # per partition (a LeaderAndIsr of 500 partitions of one topic parsed the same properties 500 times)
        self._built: dict[str, LogConfig] = {}

    def for_topic(self, topic: str) -> LogConfig:
        """The topic's effective LogConfig; an unusable override is dropped (warned once where it was set)."""
        config = self._built.get(topic)
        if config is None:
            try:
                config = LogConfig.from_props(self.defaults, self.overrides.get(topic, {}))
            except ValueError:
                config = LogConfig.from_props(self.defaults, {})
            self._built[topic] = config
        return config

    def update_topic(self, topic: str, overrides: Props, partitions: Iterable[Any]) -> bool:
        """TopicConfigHandler.updateLogConfig: if this shard hosts partitions of ``topic``, their config becomes the
        defaults with these overrides. Returns False (and changes nothing) when nothing is hosted, or when the config
        does not parse (Kafka's exception leaves the logs' config as it was)."""
        hosted = [p for p in partitions if p.topic_partition.topic == topic]
        if not hosted:
            self.overrides.pop(topic, None)
            self._built.pop(topic, None)
            return False
        try:
            config = LogConfig.from_props(self.defaults, overrides)
        except ValueError as e:
            log.error("Ignoring the config of topic %s: %s", topic, e)
            return False
        self.overrides[topic] = dict(overrides)
        self._built[topic] = config
        for p in hosted:
            _apply(p, config)
        return True

    def reconfigure_defaults(self, defaults: Props, partitions: Iterable[Any]) -> None:
        """DynamicLogConfig.reconfigure: new broker defaults, then every log's config re-derived with its own
        overrides."""
        try:
            LogConfig.from_props(defaults, {})
        except ValueError as e:
            log.error("Ignoring new log defaults: %s", e)
            return
        self.defaults = dict(defaults)
        self._built.clear()
        for p in partitions:
            _apply(p, self.for_topic(p.topic_partition.topic))

    def fetch_topic_configs(self, partitions: Iterable[Any]) -> Proc[None]:
        """Partition.createLog's ``fetchTopicConfig`` for partitions hosted for the first time: one pipelined read
        of ``/config/topics/<t>`` per topic; the partitions' config is set from it. A missing node is no override;
        a read that fails or does not decode keeps the defaults (logged)."""
        fresh = list(partitions)
        topics = sorted({p.topic_partition.topic for p in fresh})
        if not topics:
            return
        config_paths = [paths.ConfigEntityZNode.path(TOPIC_CONFIG_TYPE, t) for t in topics]
        results = yield from KafkaZkClient().get_entity_configs_raw(TOPIC_CONFIG_TYPE, topics)
        for topic, path, r in zip(topics, config_paths, results, strict=True):
            self._built.pop(topic, None)
            if r.code == OK:
                try:
                    self.overrides[topic] = znodes.decode_config_entity(r.data, path)
                except znodes.ZnodeDecodeError as e:
                    log.error("Ignoring the config of topic %s: %s", topic, e)
                    self.overrides.pop(topic, None)
            elif r.code == NONODE:
                self.overrides.pop(topic, None)
            else:
                log.warning("Cannot read the config of topic %s (%s): using the broker defaults", topic, r.code)
                self.overrides.pop(topic, None)
            try:
                LogConfig.from_props(self.defaults, self.overrides.get(topic, {}))
            except ValueError as e:
                log.error("Ignoring the config of topic %s: %s", topic, e)
        for p in fresh:
            _apply(p, self.for_topic(p.topic_partition.topic))


def _apply(partition: Any, config: LogConfig) -> None:
    """A partition and its log take a (new) effective config (Log.updateConfig)."""
    partition.min_insync_replicas = config.min_insync_replicas
    log_ = getattr(partition, "log", None)
    if log_ is not None:
        log_.config = config
