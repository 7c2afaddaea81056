"""Which broker configs may be set dynamically, and how they are checked, as Kafka 2.6's
``kafka.server.DynamicBrokerConfig`` (validateConfigs) and ``kafka.server.DynamicConfig.Broker`` (validate).

Which KafkaConfig key is dynamic, and whether per broker or cluster-wide, is a column of
`core.broker.kafka_configs`; this module adds DynamicConfig.Broker's own configs (the replication quotas, which exist
only dynamically) and the checks. A name neither dynamic nor a KafkaConfig key is a custom config, which Kafka accepts
too (DynamicConfig.Broker allows custom props).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from core.broker.kafka_configs import (
    DYNAMIC_CONFIGS,
    KAFKA_CONFIGS,
    LONG,
    PER_BROKER_CONFIGS,
    ConfigError,
    ConfigKey,
    at_least,
)
from core.broker.log_config import (
    DYNAMIC_LOG_CONFIGS,
    TOPIC_CONFIG_SYNONYMS,
    InvalidConfigurationException,
    validate_value,
)

__all__ = ["DYNAMIC_CONFIGS", "PER_BROKER_CONFIGS"]

# DynamicConfig.Broker's own configs: the replication quotas, updatable through ZooKeeper while brokers run
# (ConfigCommand.BrokerConfigsUpdatableUsingZooKeeperWhileBrokerRunning).
QUOTA_CONFIGS: tuple[str, ...] = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
                                  "replica.alter.log.dirs.io.max.bytes.per.second")
QUOTA_CONFIG_KEYS: Mapping[str, ConfigKey] = {  # DynamicConfig.Broker.brokerConfigDef's own rows
    name: ConfigKey(name, LONG, str(2**63 - 1), at_least(0)) for name in QUOTA_CONFIGS}
UPDATABLE_WHILE_BROKER_RUNNING = frozenset(QUOTA_CONFIGS)
# DynamicBrokerConfig.DynamicSecurityConfigs (SslConfigs.RECONFIGURABLE_CONFIGS)
SECURITY_CONFIGS: tuple[str, ...] = ("ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password",
                                     "ssl.key.password", "ssl.truststore.type", "ssl.truststore.location",
                                     "ssl.truststore.password")
LISTENER_PREFIX = "listener.name."
# DynamicConfig.Broker.nonDynamicProps: the KafkaConfig keys that are not dynamic
NON_DYNAMIC_CONFIGS: frozenset[str] = frozenset(k for k in KAFKA_CONFIGS if k not in DYNAMIC_CONFIGS)
# DynamicConfig.Broker.brokerConfigDef: the quotas and every dynamic KafkaConfig key, with their types and validators
BROKER_CONFIG_DEF: Mapping[str, ConfigKey] = {
    **QUOTA_CONFIG_KEYS, **{k: row for k, row in KAFKA_CONFIGS.items() if row.dynamic}}
_TOPIC_CONFIG_OF = {broker: topic for topic, broker in TOPIC_CONFIG_SYNONYMS.items()}
# DynamicBrokerConfig.ClusterLevelListenerConfigs: a listener-prefixed name for these is not per-broker
CLUSTER_LEVEL_LISTENER_CONFIGS = frozenset(("max.connections",))


def scala_set(names: Iterable[str]) -> str:
    """A Scala Set's toString, as Kafka's messages show config names: ``Set(a, b)``."""
    return f"Set({', '.join(names)})"


_DYNAMIC_PASSWORD_CONFIGS = tuple(sorted(k for k in DYNAMIC_CONFIGS if KAFKA_CONFIGS[k].sensitive))


def is_password_config(name: str) -> bool:
    """DynamicBrokerConfig.isPasswordConfig: the name ends with a dynamic PASSWORD config's name."""
    return any(name.endswith(p) for p in _DYNAMIC_PASSWORD_CONFIGS)


def _base_name(name: str) -> str:
    """DynamicBrokerConfig.ListenerConfigRegex: ``listener.name.<listener>.<config>`` → ``<config>``."""
    if name.startswith(LISTENER_PREFIX):
        _, sep, base = name[len(LISTENER_PREFIX):].partition(".")
        if sep:
            return base
    return name


def validate_config_types(props: Mapping[str, str]) -> None:
    """DynamicBrokerConfig.validateConfigTypes / DynamicConfig.Broker.validate's ConfigDef.parse: the values of
    the known dynamic configs (a listener override as its base config) have their type and range; custom configs
    pass."""
    for name, raw in props.items():
        row = BROKER_CONFIG_DEF.get(_base_name(name))
        if row is None:
            continue
        try:
            row.parse(raw)
        except ConfigError as e:
            raise InvalidConfigurationException(str(e)) from None
        if name in _TOPIC_CONFIG_OF and name in DYNAMIC_LOG_CONFIGS:
            # the broker default of a topic config takes that topic config's range too (LogConfig re-reads it)
            validate_value(name, raw, _TOPIC_CONFIG_OF[name])


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
        check_invalid([k for k in props if k in PER_BROKER_CONFIGS or (
                          k.startswith(LISTENER_PREFIX) and _base_name(k) != k
                          and _base_name(k) not in CLUSTER_LEVEL_LISTENER_CONFIGS)],
                      "Cannot update these configs at default cluster level, broker id must be specified")
