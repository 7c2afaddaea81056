"""Which broker configs may be set dynamically, and how they are checked, as Kafka 2.6's
``kafka.server.DynamicBrokerConfig`` (validateConfigs) and ``kafka.server.DynamicConfig.Broker`` (validate).

Kafka knows every static broker config name; kactor knows the ones in its own `kactor.config.CONFIG_DEFS`. A name
neither dynamic nor known is a custom config, which Kafka accepts too (DynamicConfig.Broker allows custom props).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from core.broker.log_config import DYNAMIC_LOG_CONFIGS, TOPIC_CONFIG_SYNONYMS
from kactor.admin import InvalidConfigurationException
from kactor.admin.log_config import validate_value
from kactor.config import CONFIG_DEFS

# DynamicConfig.Broker's own configs: the replication quotas, updatable through ZooKeeper while brokers run
# (ConfigCommand.BrokerConfigsUpdatableUsingZooKeeperWhileBrokerRunning).
QUOTA_CONFIGS: tuple[str, ...] = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                                  "replica.alter.log.dirs.io.max.bytes.per.second")
UPDATABLE_WHILE_BROKER_RUNNING = frozenset(QUOTA_CONFIGS)
# DynamicBrokerConfig.DynamicSecurityConfigs (SslConfigs.RECONFIGURABLE_CONFIGS)
SECURITY_CONFIGS: tuple[str, ...] = ("ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password",
                                     "ssl.key.password", "ssl.truststore.type", "ssl.truststore.location",
                                     "ssl.truststore.password")
LOG_CLEANER_CONFIGS: tuple[str, ...] = ("log.cleaner.threads", "log.cleaner.dedupe.buffer.size",
                                        "log.cleaner.io.buffer.load.factor", "log.cleaner.io.buffer.size",
                                        "log.cleaner.io.max.bytes.per.second", "log.cleaner.backoff.ms")
THREAD_POOL_CONFIGS: tuple[str, ...] = ("num.io.threads", "num.network.threads", "num.replica.fetchers",
                                        "num.recovery.threads.per.data.dir", "background.threads")
LISTENER_CONFIGS: tuple[str, ...] = ("advertised.listeners", "listeners", "listener.security.protocol.map")
SOCKET_SERVER_CONFIGS: tuple[str, ...] = ("max.connections.per.ip", "max.connections.per.ip.overrides",
                                          "max.connections")
DYNAMIC_CONFIGS: frozenset[str] = frozenset((*QUOTA_CONFIGS, *SECURITY_CONFIGS, *LOG_CLEANER_CONFIGS,
                                             *DYNAMIC_LOG_CONFIGS, *THREAD_POOL_CONFIGS, "metric.reporters",
                                             *LISTENER_CONFIGS, *SOCKET_SERVER_CONFIGS))
PER_BROKER_CONFIGS: frozenset[str] = frozenset((*SECURITY_CONFIGS, *LISTENER_CONFIGS))
LISTENER_PREFIX = "listener.name."
# DynamicConfig.Broker.nonDynamicProps: known broker configs that are not dynamic (kactor's own settings excluded)
NON_DYNAMIC_CONFIGS: frozenset[str] = frozenset(
    k for k in CONFIG_DEFS if not k.startswith("kactor.") and k not in DYNAMIC_CONFIGS)

_TOPIC_CONFIG_OF = {broker: topic for topic, broker in TOPIC_CONFIG_SYNONYMS.items()}


def _int_at_least(minimum: int, kind: str = "INT") -> Callable[[str, str], None]:
    def check(name: str, raw: str) -> None:
        try:
            value = int(raw.strip())
        except ValueError:
            raise InvalidConfigurationException(
                f"Invalid value {raw} for configuration {name}: Not a number of type {kind}") from None
        if value < minimum:
            raise InvalidConfigurationException(
                f"Invalid value {value} for configuration {name}: Value must be at least {minimum}")
    return check


_TYPE_CHECKS: dict[str, Callable[[str, str], None]] = {
    **dict.fromkeys(QUOTA_CONFIGS, _int_at_least(0, "LONG")),
    **dict.fromkeys(THREAD_POOL_CONFIGS, _int_at_least(1)),
    "log.cleaner.threads": _int_at_least(0),
    "max.connections.per.ip": _int_at_least(0),
    "max.connections": _int_at_least(0),
}


def scala_set(names: Iterable[str]) -> str:
    """A Scala Set's toString, as Kafka's messages show config names: ``Set(a, b)``."""
    return f"Set({', '.join(names)})"


def is_password_config(name: str) -> bool:
    """DynamicBrokerConfig.isPasswordConfig."""
    return name.endswith("password")


def validate_config_types(props: Mapping[str, str]) -> None:
    """DynamicBrokerConfig.validateConfigTypes / DynamicConfig.Broker.validate's ConfigDef.parse: the values of
    the known dynamic configs have their type and range; custom configs pass."""
    for name, raw in props.items():
        if name in _TOPIC_CONFIG_OF and name in DYNAMIC_LOG_CONFIGS:
            validate_value(name, raw, _TOPIC_CONFIG_OF[name])
        elif name in _TYPE_CHECKS:
            _TYPE_CHECKS[name](name, raw)


def validate_configs(props: Mapping[str, str], per_broker_config: bool) -> None:
    """DynamicBrokerConfig.validateConfigs (what ConfigCommand checks before writing broker configs)."""
    def check_invalid(invalid: list[str], message: str) -> None:
        if invalid:
            raise InvalidConfigurationException(f"{message}: {scala_set(invalid)}")

    check_invalid([k for k in props if k in NON_DYNAMIC_CONFIGS], "Cannot update these configs dynamically")
    check_invalid([k for k in props if k in SECURITY_CONFIGS],
                  "These security configs can be dynamically updated only per-listener using the listener prefix")
    validate_config_types(props)
    if not per_broker_config:
        check_invalid([k for k in props if k in PER_BROKER_CONFIGS or k.startswith(LISTENER_PREFIX)],
                      "Cannot update these configs at default cluster level, broker id must be specified")
