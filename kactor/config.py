"""KafkaConfig: the broker's configuration, with Kafka's names and Kafka 2.6's defaults.

`load_config(properties_file, overrides)` reads a server.properties file (Java properties syntax, as
``kafka-server-start.sh`` takes) and ``key=value`` overrides. An unknown key or a malformed value is a `ConfigError`
with one clear line, raised before anything starts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs


class ConfigError(ValueError):
    """A bad broker configuration: unknown key, malformed value or value out of range."""


def _int(lo: int | None = None, hi: int | None = None) -> Callable[[str, str], int]:
    def parse(key: str, text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise ConfigError(f"Invalid value {text!r} for configuration {key}: Not a number of type INT") from None
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            bounds = f"at least {lo}" if hi is None else f"in [{lo},...,{hi}]"
            raise ConfigError(f"Invalid value {value} for configuration {key}: Value must be {bounds}")
        return value

    return parse


def _bool(key: str, text: str) -> bool:
    t = text.strip().lower()
    if t not in ("true", "false"):
        raise ConfigError(f"Invalid value {text!r} for configuration {key}: Expected value to be either true or false")
    return t == "true"


def _str(key: str, text: str) -> str:
    return text.strip()


def _opt_str(key: str, text: str) -> str | None:
    return text.strip() or None


def _list(key: str, text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


# name → (parser, default). Defaults are Kafka 2.6's, except the listener, which binds loopback (see docs).
CONFIG_DEFS: dict[str, tuple[Callable[[str, str], Any], Any]] = {
    "broker.id": (_int(-1), -1),
    "zookeeper.connect": (_str, None),
    "zookeeper.session.timeout.ms": (_int(1), 18000),
    "zookeeper.connection.timeout.ms": (_int(1), None),
    "zookeeper.max.in.flight.requests": (_int(1), 10),
    "zookeeper.set.acl": (_bool, False),
    "listeners": (_list, ("PLAINTEXT://127.0.0.1:9092",)),
    "advertised.listeners": (_list, None),
    "broker.rack": (_opt_str, None),
    "log.dirs": (_list, None),
    "log.dir": (_str, "/tmp/kafka-logs"),
    "num.partitions": (_int(1), 1),
    "default.replication.factor": (_int(1), 1),
    "min.insync.replicas": (_int(1), 1),
    "delete.topic.enable": (_bool, True),
    "auto.create.topics.enable": (_bool, True),
    "auto.leader.rebalance.enable": (_bool, True),
    "leader.imbalance.check.interval.seconds": (_int(1), 300),
    "leader.imbalance.per.broker.percentage": (_int(0), 10),
    "unclean.leader.election.enable": (_bool, False),
    "controlled.shutdown.enable": (_bool, True),
    "controlled.shutdown.max.retries": (_int(1), 3),
    "controlled.shutdown.retry.backoff.ms": (_int(0), 5000),
    "controller.socket.timeout.ms": (_int(0), 30000),
    "request.timeout.ms": (_int(0), 30000),
    "replica.lag.time.max.ms": (_int(1), 30000),
    "replica.fetch.wait.max.ms": (_int(0), 500),
    "replica.fetch.backoff.ms": (_int(0), 1000),
    "replica.high.watermark.checkpoint.interval.ms": (_int(1), 5000),
    "num.replica.fetchers": (_int(1), 1),
    "inter.broker.protocol.version": (_str, "2.6"),
    "reserved.broker.max.id": (_int(0), 1000),
    "broker.id.generation.enable": (_bool, True),
    # kactor's own settings (no Kafka equivalent)
    "kactor.trace.dir": (_opt_str, None),
    "kactor.metrics.port": (_int(0, 65535), 0),
    "kactor.partition.actors": (_int(1, 1024), 8),
}

_KEY_RE = re.compile(r"^[a-z][a-z0-9._-]*$")


@attrs.frozen
class KafkaConfig:
    """The parsed configuration: ``values`` maps every known key to its effective value."""

    values: Mapping[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    @property
    def broker_id(self) -> int:
        return int(self.values["broker.id"])

    @property
    def log_dirs(self) -> tuple[str, ...]:
        return self.values["log.dirs"] or (self.values["log.dir"],)

    @property
    def listener(self) -> tuple[str, str, int]:
        """(listener name, host, port) of the first listener — the inter-broker and controller listener."""
        return parse_listener(self.values["listeners"][0])

    @property
    def advertised_listener(self) -> tuple[str, str, int]:
        adv = self.values["advertised.listeners"]
        return parse_listener(adv[0]) if adv else self.listener

    def non_default(self) -> dict[str, Any]:
        """The keys whose value differs from the default (what a trace header records)."""
        return {k: _jsonable(v) for k, v in self.values.items() if v != CONFIG_DEFS[k][1]}


def _jsonable(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


def parse_listener(text: str) -> tuple[str, str, int]:
    m = re.fullmatch(r"([A-Z_][A-Z0-9_]*)://([^:/]*):(\d+)", text.strip())
    if not m:
        raise ConfigError(f"Invalid listener {text!r}: expected LISTENER_NAME://host:port, e.g. PLAINTEXT://127.0.0.1:9092")
    name, host, port = m.group(1), m.group(2), int(m.group(3))
    if port > 65535:
        raise ConfigError(f"Invalid listener {text!r}: port {port} out of range")
    return name, host or "127.0.0.1", port


def parse_properties(text: str, source: str = "<properties>") -> dict[str, str]:
    """Parse Java .properties text (``key=value`` or ``key: value``, # and ! comments, backslash continuations)."""
    out: dict[str, str] = {}
    logical: list[str] = []
    lineno_start = 0
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip() if not logical else raw.lstrip()
        if not logical:
            lineno_start = lineno
            if not line or line[0] in "#!":
                continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            logical.append(line[:-1])
            continue
        logical.append(line)
        entry = "".join(logical)
        logical = []
        m = re.match(r"^([^=:\s]+)\s*[=:\s]\s*(.*)$", entry)
        if not m:
            raise ConfigError(f"{source}:{lineno_start}: malformed line {entry!r} (expected key=value)")
        out[m.group(1)] = m.group(2)
    return out


def parse_overrides(items: Iterable[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"Invalid override {item!r}: expected key=value")
        out[key.strip()] = value
    return out


def build_config(raw: Mapping[str, str]) -> KafkaConfig:
    """Validate raw string settings against CONFIG_DEFS and fill in defaults."""
    values: dict[str, Any] = {k: d for k, (_, d) in CONFIG_DEFS.items()}
    for key, text in raw.items():
        if key not in CONFIG_DEFS:
            hint = "" if _KEY_RE.match(key) else " (malformed key)"
            raise ConfigError(f"Unknown configuration {key!r}{hint}")
        values[key] = CONFIG_DEFS[key][0](key, text)
    if not values["zookeeper.connect"]:
        raise ConfigError("Missing required configuration \"zookeeper.connect\" which has no default value.")
    if values["broker.id"] < 0:
        raise ConfigError("broker.id must be set to a non-negative integer (generated broker ids are not supported)")
    for listener in values["listeners"]:
        parse_listener(listener)
    if values["zookeeper.connection.timeout.ms"] is None:
        values["zookeeper.connection.timeout.ms"] = values["zookeeper.session.timeout.ms"]
    return KafkaConfig(values)


def load_config(properties_file: str | None, overrides: Iterable[str] = ()) -> KafkaConfig:
    raw: dict[str, str] = {}
    if properties_file:
        try:
            with open(properties_file, encoding="utf-8") as f:
                raw.update(parse_properties(f.read(), properties_file))
        except OSError as e:
            raise ConfigError(f"cannot read {properties_file}: {e.strerror}") from None
    raw.update(parse_overrides(overrides))
    return build_config(raw)
