"""Topic-level config names and value checks, as Kafka 2.6's ``kafka.log.LogConfig`` (validateNames + the
ConfigDef types/validators), and ``TopicCommand.parseTopicConfigsToBeAdded`` for ``--config k=v``."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from edges.admin import InvalidConfigurationException

# name -> (ConfigDef type, validator or None)
_Validator = Callable[[str, object], None]


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
MESSAGE_FORMAT_VERSION = "message.format.version"

_INT_RANGE = {"INT": (-(2**31), 2**31 - 1), "LONG": (-(2**63), 2**63 - 1)}


def _parse(name: str, kind: str, raw: str) -> object:
    """ConfigDef.parseType for the types topic configs use."""
    value = raw.strip()
    if kind in _INT_RANGE:
        lo, hi = _INT_RANGE[kind]
        try:
            number = int(value)
        except ValueError:
            number = None
        if number is None or not lo <= number <= hi:
            raise InvalidConfigurationException(
                f"Invalid value {raw} for configuration {name}: Not a number of type {kind}")
        return number
    if kind == "DOUBLE":
        try:
            return float(value)
        except ValueError:
            raise InvalidConfigurationException(
                f"Invalid value {raw} for configuration {name}: Not a number of type DOUBLE") from None
    if kind == "BOOLEAN":
        if value.lower() not in ("true", "false"):
            raise InvalidConfigurationException(
                f"Invalid value {raw} for configuration {name}: Expected value to be either true or false")
        return value.lower() == "true"
    if kind == "LIST":
        return [v.strip() for v in value.split(",")] if value else []
    return value


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


def parse_configs_to_add(pairs: Iterable[str]) -> dict[str, str]:
    """TopicCommand.parseTopicConfigsToBeAdded: each ``key=val`` (spaces around '=' allowed), then validated."""
    props: dict[str, str] = {}
    for pair in pairs:
        parts = re.split(r"\s*=\s*", pair)
        while parts and parts[-1] == "":  # Java's String.split drops trailing empty strings
            parts.pop()
        if len(parts) != 2:
            raise InvalidConfigurationException(
                'Invalid topic config: all configs to be added must be in the format "key=val".')
        props[parts[0].strip()] = parts[1].strip()
    validate(props)
    return props


def parse_configs_to_delete(names: Iterable[str]) -> list[str]:
    """TopicCommand.parseTopicConfigsToBeDeleted."""
    result = [n.strip() for n in names]
    validate_names(result)
    return result
