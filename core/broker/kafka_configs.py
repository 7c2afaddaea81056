"""Every Kafka 2.6.3 broker config, one row each: its type, its default, its validator and how it may be updated
while brokers run. The one home of these facts; `kactor.config` reads server.properties against it and the admin
answers (DescribeConfigs, the dynamic broker configs) describe from it.

Rows follow Kafka 2.6.3's ``KafkaConfig.configDef`` in its order, with the values of ``Defaults`` (and of the client
classes it refers to: SslConfigs, SaslConfigs, BrokerSecurityConfigs, OffsetConfig, TransactionLog, ...) written as
``ConfigDef.convertToString`` writes them, which is what DescribeConfigs shows. ``None``: no default (Kafka's
``null``); `NO_DEFAULT`: the config is required (only zookeeper.connect). Two defaults depend on the JVM in Kafka:
ssl.protocol / ssl.enabled.protocols are Java 11's (TLSv1.3), ssl.keymanager.algorithm / ssl.trustmanager.algorithm
the JDK's usual SunX509 / PKIX.

The update mode is DynamicBrokerConfig's: a config in ``AllDynamicConfigs`` is per-broker when it is in
``PerBrokerConfigs`` (SslConfigs.RECONFIGURABLE_CONFIGS and DynamicListenerConfig.ReconfigurableConfigs but
max.connections), cluster-wide otherwise (LogCleaner, DynamicLogConfig, DynamicThreadPool, metric.reporters,
SocketServer); every other config is read-only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import attrs


class ConfigError(ValueError):
    """A bad broker configuration: malformed value, value out of range, or a setting kactor refuses."""


BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD = (
    "BOOLEAN", "STRING", "INT", "SHORT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD")
READ_ONLY, PER_BROKER, CLUSTER_WIDE = "read-only", "per-broker", "cluster-wide"  # dynamicConfigUpdateModes' words
NO_DEFAULT = "<no default>"  # ConfigDef.NO_DEFAULT_VALUE

Validator = Callable[[str, Any], None]
_RANGES = {INT: (-(2**31), 2**31 - 1), SHORT: (-(2**15), 2**15 - 1), LONG: (-(2**63), 2**63 - 1)}


def _invalid(name: str, value: Any, message: str) -> ConfigError:
    """ConfigException(name, value, message)'s text."""
    return ConfigError(f"Invalid value {text_of(value)} for configuration {name}: {message}")


def at_least(minimum: int) -> Validator:
    """ConfigDef.Range.atLeast."""
    def check(name: str, value: Any) -> None:
        if value is not None and value < minimum:
            raise _invalid(name, value, f"Value must be at least {minimum}")
    return check


def one_of(*allowed: str) -> Validator:
    """ConfigDef.ValidString.in."""
    def check(name: str, value: Any) -> None:
        if value is not None and value not in allowed:
            raise _invalid(name, value, f"String must be one of: {', '.join(allowed)}")
    return check


def valid_list(*allowed: str) -> Validator:
    """ConfigDef.ValidList.in: every item one of ``allowed``."""
    item_check = one_of(*allowed)

    def check(name: str, value: Any) -> None:
        for item in value or ():
            item_check(name, item)
    return check


# ApiVersion.allVersions' keys (2.6.3): a version names one of these by its first two segments (three below 1.0)
_API_VERSIONS = frozenset((
    "0.8.0", "0.8.1", "0.8.2", "0.9.0", "0.10.0-IV0", "0.10.0-IV1", "0.10.0", "0.10.1-IV0", "0.10.1-IV1",
    "0.10.1-IV2", "0.10.1", "0.10.2-IV0", "0.10.2", "0.11.0-IV0", "0.11.0-IV1", "0.11.0-IV2", "0.11.0", "1.0-IV0",
    "1.0", "1.1-IV0", "1.1", "2.0-IV0", "2.0-IV1", "2.0", "2.1-IV0", "2.1-IV1", "2.1-IV2", "2.1", "2.2-IV0",
    "2.2-IV1", "2.2", "2.3-IV0", "2.3-IV1", "2.3", "2.4-IV0", "2.4-IV1", "2.4", "2.5-IV0", "2.5", "2.6-IV0", "2.6"))


def api_version(name: str, value: Any) -> None:
    """ApiVersionValidator over ApiVersion.apply."""
    segments = str(value).split(".")
    key = ".".join(segments[:3] if str(value).startswith("0.") else segments[:2])
    if key not in _API_VERSIONS:
        raise _invalid(name, value, f"Version `{value}` is not a valid version")


def text_of(value: Any) -> str | None:
    """ConfigDef.convertToString: lists comma-joined, booleans lower-case, doubles as Java prints them."""
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return repr(value).replace("e+", "E").replace("e-", "E-")
    if isinstance(value, (tuple, list)):
        return ",".join(map(str, value))
    return str(value)


def parse_type(name: str, kind: str, text: str) -> Any:
    """ConfigDef.parseType of a string value, with Kafka's words for a value that does not parse."""
    trimmed = text.strip()
    if kind in _RANGES:
        lo, hi = _RANGES[kind]
        try:
            number = int(trimmed)
        except ValueError:
            number = None
        if number is None or not lo <= number <= hi:
            raise ConfigError(f"Invalid value {text} for configuration {name}: Not a number of type {kind}")
        return number
    if kind == DOUBLE:
        try:
            return float(trimmed)
        except ValueError:
            raise ConfigError(f"Invalid value {text} for configuration {name}: Not a number of type DOUBLE") from None
    if kind == BOOLEAN:
        if trimmed.lower() not in ("true", "false"):
            raise ConfigError(f"Invalid value {text} for configuration {name}: Expected value to be either true or "
                              "false")
        return trimmed.lower() == "true"
    if kind == LIST:
        return tuple(re.split(r"\s*,\s*", trimmed)) if trimmed else ()
    return trimmed  # STRING, CLASS (kactor loads no class), PASSWORD


@attrs.frozen(slots=True)
class ConfigKey:
    """One row of KafkaConfig.configDef."""

    name: str
    type: str
    default: str | None  # ConfigDef.convertToString of the default; None: null; NO_DEFAULT: required
    validator: Validator | None = None
    mode: str = READ_ONLY
    # ConfigDef.defineInternal: accepted and read, but DescribeConfigs lists it only where it was supplied
    # (ConfigHelper.allConfigs: the originals, then nonInternalValues)
    internal: bool = False

    @property
    def sensitive(self) -> bool:
        """KafkaConfig.maybeSensitive: a PASSWORD's value is never shown."""
        return self.type == PASSWORD

    @property
    def dynamic(self) -> bool:
        return self.mode != READ_ONLY

    def parse(self, text: str) -> Any:
        """ConfigDef.parseValue: the type, then the validator."""
        value = parse_type(self.name, self.type, text)
        if self.validator is not None:
            self.validator(self.name, value)
        return value

    def default_value(self) -> Any:
        """The parsed default (None for null and for a required config)."""
        if self.default is None or self.default == NO_DEFAULT:
            return None
        key = (self.name, self.type, self.default)
        # parsed once: every broker's config parses every row's default (parse_type's values are immutable)
        value = _PARSED_DEFAULTS.get(key, _UNPARSED)
        if value is _UNPARSED:
            value = _PARSED_DEFAULTS[key] = parse_type(self.name, self.type, self.default)
        return value


_UNPARSED = object()
_PARSED_DEFAULTS: dict[tuple[str, str, str], Any] = {}


def _def(name: str, kind: str, default: str | None, validator: Validator | None = None,
         mode: str = READ_ONLY, internal: bool = False) -> ConfigKey:
    return ConfigKey(name, kind, default, validator, mode, internal)


_ROWS: tuple[ConfigKey, ...] = (
    _def("zookeeper.connect", STRING, NO_DEFAULT),
    _def("zookeeper.session.timeout.ms", INT, "18000"),
    _def("zookeeper.connection.timeout.ms", INT, None),
    _def("zookeeper.sync.time.ms", INT, "2000"),
    _def("zookeeper.set.acl", BOOLEAN, "false"),
    _def("zookeeper.max.in.flight.requests", INT, "10", at_least(1)),
    _def("zookeeper.ssl.client.enable", BOOLEAN, "false"),
    _def("zookeeper.clientCnxnSocket", STRING, None),
    _def("zookeeper.ssl.keystore.location", STRING, None),
    _def("zookeeper.ssl.keystore.password", PASSWORD, None),
    _def("zookeeper.ssl.keystore.type", STRING, None),
    _def("zookeeper.ssl.truststore.location", STRING, None),
    _def("zookeeper.ssl.truststore.password", PASSWORD, None),
    _def("zookeeper.ssl.truststore.type", STRING, None),
    _def("zookeeper.ssl.protocol", STRING, "TLSv1.2"),
    _def("zookeeper.ssl.enabled.protocols", LIST, None),
    _def("zookeeper.ssl.cipher.suites", LIST, None),
    _def("zookeeper.ssl.endpoint.identification.algorithm", STRING, "HTTPS"),
    _def("zookeeper.ssl.crl.enable", BOOLEAN, "false"),
    _def("zookeeper.ssl.ocsp.enable", BOOLEAN, "false"),
    _def("broker.id.generation.enable", BOOLEAN, "true"),
    _def("reserved.broker.max.id", INT, "1000", at_least(0)),
    _def("broker.id", INT, "-1"),
    _def("message.max.bytes", INT, "1048588", at_least(0), mode=CLUSTER_WIDE),
    _def("num.network.threads", INT, "3", at_least(1), mode=CLUSTER_WIDE),
    _def("num.io.threads", INT, "8", at_least(1), mode=CLUSTER_WIDE),
    _def("num.replica.alter.log.dirs.threads", INT, None),
    _def("background.threads", INT, "10", at_least(1), mode=CLUSTER_WIDE),
    _def("queued.max.requests", INT, "500", at_least(1)),
    _def("queued.max.request.bytes", LONG, "-1"),
    _def("request.timeout.ms", INT, "30000"),
    _def("authorizer.class.name", STRING, ""),
    _def("port", INT, "9092"),
    _def("host.name", STRING, ""),
    _def("listeners", STRING, None, mode=PER_BROKER),
    _def("advertised.host.name", STRING, None),
    _def("advertised.port", INT, None),
    _def("advertised.listeners", STRING, None, mode=PER_BROKER),
    _def("listener.security.protocol.map", STRING,
         "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL", mode=PER_BROKER),
    _def("control.plane.listener.name", STRING, None),
    _def("socket.send.buffer.bytes", INT, "102400"),
    _def("socket.receive.buffer.bytes", INT, "102400"),
    _def("socket.request.max.bytes", INT, "104857600", at_least(1)),
    _def("max.connections.per.ip", INT, "2147483647", at_least(0), mode=CLUSTER_WIDE),
    _def("max.connections.per.ip.overrides", STRING, "", mode=CLUSTER_WIDE),
    _def("max.connections", INT, "2147483647", at_least(0), mode=CLUSTER_WIDE),
    _def("connections.max.idle.ms", LONG, "600000"),
    _def("connection.failed.authentication.delay.ms", INT, "100", at_least(0)),
    _def("broker.rack", STRING, None),
    _def("num.partitions", INT, "1", at_least(1)),
    _def("log.dir", STRING, "/tmp/kafka-logs"),
    _def("log.dirs", STRING, None),
    _def("log.segment.bytes", INT, "1073741824", at_least(14), mode=CLUSTER_WIDE),
    _def("log.roll.ms", LONG, None, mode=CLUSTER_WIDE),
    _def("log.roll.hours", INT, "168", at_least(1)),
    _def("log.roll.jitter.ms", LONG, None, mode=CLUSTER_WIDE),
    _def("log.roll.jitter.hours", INT, "0", at_least(0)),
    _def("log.retention.ms", LONG, None, mode=CLUSTER_WIDE),
    _def("log.retention.minutes", INT, None),
    _def("log.retention.hours", INT, "168"),
    _def("log.retention.bytes", LONG, "-1", mode=CLUSTER_WIDE),
    _def("log.retention.check.interval.ms", LONG, "300000", at_least(1)),
    _def("log.cleanup.policy", LIST, "delete", valid_list("compact", "delete"), mode=CLUSTER_WIDE),
    _def("log.cleaner.threads", INT, "1", at_least(0), mode=CLUSTER_WIDE),
    _def("log.cleaner.io.max.bytes.per.second", DOUBLE, "1.7976931348623157E308", mode=CLUSTER_WIDE),
    _def("log.cleaner.dedupe.buffer.size", LONG, "134217728", mode=CLUSTER_WIDE),
    _def("log.cleaner.io.buffer.size", INT, "524288", at_least(0), mode=CLUSTER_WIDE),
    _def("log.cleaner.io.buffer.load.factor", DOUBLE, "0.9", mode=CLUSTER_WIDE),
    _def("log.cleaner.backoff.ms", LONG, "15000", at_least(0), mode=CLUSTER_WIDE),
    _def("log.cleaner.min.cleanable.ratio", DOUBLE, "0.5", mode=CLUSTER_WIDE),
    _def("log.cleaner.enable", BOOLEAN, "true"),
    _def("log.cleaner.delete.retention.ms", LONG, "86400000", mode=CLUSTER_WIDE),
    _def("log.cleaner.min.compaction.lag.ms", LONG, "0", mode=CLUSTER_WIDE),
    _def("log.cleaner.max.compaction.lag.ms", LONG, "9223372036854775807", mode=CLUSTER_WIDE),
    _def("log.index.size.max.bytes", INT, "10485760", at_least(4), mode=CLUSTER_WIDE),
    _def("log.index.interval.bytes", INT, "4096", at_least(0), mode=CLUSTER_WIDE),
    _def("log.flush.interval.messages", LONG, "9223372036854775807", at_least(1), mode=CLUSTER_WIDE),
    _def("log.segment.delete.delay.ms", LONG, "60000", at_least(0), mode=CLUSTER_WIDE),
    _def("log.flush.scheduler.interval.ms", LONG, "9223372036854775807"),
    _def("log.flush.interval.ms", LONG, None, mode=CLUSTER_WIDE),
    _def("log.flush.offset.checkpoint.interval.ms", INT, "60000", at_least(0)),
    _def("log.flush.start.offset.checkpoint.interval.ms", INT, "60000", at_least(0)),
    # Kafka 3.9's (ServerLogConfigs.LOG_INITIAL_TASK_DELAY_MS_CONFIG, LogConfig's defineInternal: LOW, "for testing
    # only"), beyond 2.6, whose LogManager.InitialTaskDelayMs is a fixed 30000: the delay before the LogManager's
    # periodic tasks first run (docs/kafka-2.6-departures.md)
    _def("log.initial.task.delay.ms", LONG, "30000", at_least(0), internal=True),
    _def("log.preallocate", BOOLEAN, "false", mode=CLUSTER_WIDE),
    _def("num.recovery.threads.per.data.dir", INT, "1", at_least(1), mode=CLUSTER_WIDE),
    _def("auto.create.topics.enable", BOOLEAN, "true"),
    _def("min.insync.replicas", INT, "1", at_least(1), mode=CLUSTER_WIDE),
    _def("log.message.format.version", STRING, "2.6-IV0", api_version),
    _def("log.message.timestamp.type", STRING, "CreateTime", one_of("CreateTime", "LogAppendTime"), mode=CLUSTER_WIDE),
    _def("log.message.timestamp.difference.max.ms", LONG, "9223372036854775807", mode=CLUSTER_WIDE),
    _def("create.topic.policy.class.name", CLASS, None),
    _def("alter.config.policy.class.name", CLASS, None),
    _def("log.message.downconversion.enable", BOOLEAN, "true", mode=CLUSTER_WIDE),
    _def("controller.socket.timeout.ms", INT, "30000"),
    _def("default.replication.factor", INT, "1"),
    _def("replica.lag.time.max.ms", LONG, "30000"),
    _def("replica.socket.timeout.ms", INT, "30000"),
    _def("replica.socket.receive.buffer.bytes", INT, "65536"),
    _def("replica.fetch.max.bytes", INT, "1048576", at_least(0)),
    _def("replica.fetch.wait.max.ms", INT, "500"),
    _def("replica.fetch.backoff.ms", INT, "1000", at_least(0)),
    _def("replica.fetch.min.bytes", INT, "1"),
    _def("replica.fetch.response.max.bytes", INT, "10485760", at_least(0)),
    _def("num.replica.fetchers", INT, "1", mode=CLUSTER_WIDE),
    _def("replica.high.watermark.checkpoint.interval.ms", LONG, "5000"),
    _def("fetch.purgatory.purge.interval.requests", INT, "1000"),
    _def("producer.purgatory.purge.interval.requests", INT, "1000"),
    _def("delete.records.purgatory.purge.interval.requests", INT, "1"),
    _def("auto.leader.rebalance.enable", BOOLEAN, "true"),
    _def("leader.imbalance.per.broker.percentage", INT, "10"),
    _def("leader.imbalance.check.interval.seconds", LONG, "300"),
    _def("unclean.leader.election.enable", BOOLEAN, "false", mode=CLUSTER_WIDE),
    _def("security.inter.broker.protocol", STRING, "PLAINTEXT"),
    _def("inter.broker.protocol.version", STRING, "2.6-IV0", api_version),
    _def("inter.broker.listener.name", STRING, None),
    _def("replica.selector.class", STRING, None),
    _def("controlled.shutdown.max.retries", INT, "3"),
    _def("controlled.shutdown.retry.backoff.ms", LONG, "5000"),
    _def("controlled.shutdown.enable", BOOLEAN, "true"),
    _def("group.min.session.timeout.ms", INT, "6000"),
    _def("group.max.session.timeout.ms", INT, "1800000"),
    _def("group.initial.rebalance.delay.ms", INT, "3000"),
    _def("group.max.size", INT, "2147483647", at_least(1)),
    _def("offset.metadata.max.bytes", INT, "4096"),
    _def("offsets.load.buffer.size", INT, "5242880", at_least(1)),
    _def("offsets.topic.replication.factor", SHORT, "3", at_least(1)),
    _def("offsets.topic.num.partitions", INT, "50", at_least(1)),
    _def("offsets.topic.segment.bytes", INT, "104857600", at_least(1)),
    _def("offsets.topic.compression.codec", INT, "0"),
    _def("offsets.retention.minutes", INT, "10080", at_least(1)),
    _def("offsets.retention.check.interval.ms", LONG, "600000", at_least(1)),
    _def("offsets.commit.timeout.ms", INT, "5000", at_least(1)),
    _def("offsets.commit.required.acks", SHORT, "-1"),
    _def("delete.topic.enable", BOOLEAN, "true"),
    _def("compression.type", STRING, "producer", mode=CLUSTER_WIDE),
    _def("transactional.id.expiration.ms", INT, "604800000", at_least(1)),
    _def("transaction.max.timeout.ms", INT, "900000", at_least(1)),
    _def("transaction.state.log.min.isr", INT, "2", at_least(1)),
    _def("transaction.state.log.load.buffer.size", INT, "5242880", at_least(1)),
    _def("transaction.state.log.replication.factor", SHORT, "3", at_least(1)),
    _def("transaction.state.log.num.partitions", INT, "50", at_least(1)),
    _def("transaction.state.log.segment.bytes", INT, "104857600", at_least(1)),
    _def("transaction.abort.timed.out.transaction.cleanup.interval.ms", INT, "10000", at_least(1)),
    _def("transaction.remove.expired.transaction.cleanup.interval.ms", INT, "3600000", at_least(1)),
    # Kafka 3.6's (KIP-890 part 1), beyond 2.6; dynamic in 3.6, read at start-up here. On by default, as 3.6: 2.6.3
    # has none, and without it a stray transactional produce hangs every read_committed reader (kafka-2.6-departures)
    _def("transaction.partition.verification.enable", BOOLEAN, "true"),
    _def("max.incremental.fetch.session.cache.slots", INT, "1000", at_least(0)),
    _def("fetch.max.bytes", INT, "57671680", at_least(1024)),
    _def("metrics.num.samples", INT, "2", at_least(1)),
    _def("metrics.sample.window.ms", LONG, "30000", at_least(1)),
    _def("metric.reporters", LIST, "", mode=CLUSTER_WIDE),
    _def("metrics.recording.level", STRING, "INFO"),
    _def("kafka.metrics.reporters", LIST, ""),
    _def("kafka.metrics.polling.interval.secs", INT, "10", at_least(1)),
    _def("quota.producer.default", LONG, "9223372036854775807", at_least(1)),
    _def("quota.consumer.default", LONG, "9223372036854775807", at_least(1)),
    _def("quota.window.num", INT, "11", at_least(1)),
    _def("replication.quota.window.num", INT, "11", at_least(1)),
    _def("alter.log.dirs.replication.quota.window.num", INT, "11", at_least(1)),
    _def("quota.window.size.seconds", INT, "1", at_least(1)),
    _def("replication.quota.window.size.seconds", INT, "1", at_least(1)),
    _def("alter.log.dirs.replication.quota.window.size.seconds", INT, "1", at_least(1)),
    _def("client.quota.callback.class", CLASS, None),
    _def("connections.max.reauth.ms", LONG, "0"),
    _def("security.providers", STRING, None),
    _def("principal.builder.class", CLASS, None, mode=PER_BROKER),
    _def("ssl.protocol", STRING, "TLSv1.3", mode=PER_BROKER),
    _def("ssl.provider", STRING, None, mode=PER_BROKER),
    _def("ssl.enabled.protocols", LIST, "TLSv1.2,TLSv1.3", mode=PER_BROKER),
    _def("ssl.keystore.type", STRING, "JKS", mode=PER_BROKER),
    _def("ssl.keystore.location", STRING, None, mode=PER_BROKER),
    _def("ssl.keystore.password", PASSWORD, None, mode=PER_BROKER),
    _def("ssl.key.password", PASSWORD, None, mode=PER_BROKER),
    _def("ssl.truststore.type", STRING, "JKS", mode=PER_BROKER),
    _def("ssl.truststore.location", STRING, None, mode=PER_BROKER),
    _def("ssl.truststore.password", PASSWORD, None, mode=PER_BROKER),
    _def("ssl.keymanager.algorithm", STRING, "SunX509", mode=PER_BROKER),
    _def("ssl.trustmanager.algorithm", STRING, "PKIX", mode=PER_BROKER),
    _def("ssl.endpoint.identification.algorithm", STRING, "https", mode=PER_BROKER),
    _def("ssl.secure.random.implementation", STRING, None, mode=PER_BROKER),
    _def("ssl.client.auth", STRING, "none", one_of("required", "requested", "none"), mode=PER_BROKER),
    _def("ssl.cipher.suites", LIST, "", mode=PER_BROKER),
    _def("ssl.principal.mapping.rules", STRING, "DEFAULT"),
    _def("ssl.engine.factory.class", CLASS, None, mode=PER_BROKER),
    _def("sasl.mechanism.inter.broker.protocol", STRING, "GSSAPI", mode=PER_BROKER),
    _def("sasl.jaas.config", PASSWORD, None, mode=PER_BROKER),
    _def("sasl.enabled.mechanisms", LIST, "GSSAPI", mode=PER_BROKER),
    _def("sasl.server.callback.handler.class", CLASS, None),
    _def("sasl.client.callback.handler.class", CLASS, None),
    _def("sasl.login.class", CLASS, None),
    _def("sasl.login.callback.handler.class", CLASS, None),
    _def("sasl.kerberos.service.name", STRING, None, mode=PER_BROKER),
    _def("sasl.kerberos.kinit.cmd", STRING, "/usr/bin/kinit", mode=PER_BROKER),
    _def("sasl.kerberos.ticket.renew.window.factor", DOUBLE, "0.8", mode=PER_BROKER),
    _def("sasl.kerberos.ticket.renew.jitter", DOUBLE, "0.05", mode=PER_BROKER),
    _def("sasl.kerberos.min.time.before.relogin", LONG, "60000", mode=PER_BROKER),
    _def("sasl.kerberos.principal.to.local.rules", LIST, "DEFAULT", mode=PER_BROKER),
    _def("sasl.login.refresh.window.factor", DOUBLE, "0.8", mode=PER_BROKER),
    _def("sasl.login.refresh.window.jitter", DOUBLE, "0.05", mode=PER_BROKER),
    _def("sasl.login.refresh.min.period.seconds", SHORT, "60", mode=PER_BROKER),
    _def("sasl.login.refresh.buffer.seconds", SHORT, "300", mode=PER_BROKER),
    _def("delegation.token.master.key", PASSWORD, None),
    _def("delegation.token.max.lifetime.ms", LONG, "604800000", at_least(1)),
    _def("delegation.token.expiry.time.ms", LONG, "86400000", at_least(1)),
    _def("delegation.token.expiry.check.interval.ms", LONG, "3600000", at_least(1)),
    _def("password.encoder.secret", PASSWORD, None),
    _def("password.encoder.old.secret", PASSWORD, None),
    _def("password.encoder.keyfactory.algorithm", STRING, None),
    _def("password.encoder.cipher.algorithm", STRING, "AES/CBC/PKCS5Padding"),
    _def("password.encoder.key.length", INT, "128", at_least(8)),
    _def("password.encoder.iterations", INT, "4096", at_least(1024)),
)
KAFKA_CONFIGS: Mapping[str, ConfigKey] = {row.name: row for row in _ROWS}
DYNAMIC_CONFIGS: frozenset[str] = frozenset(k for k, row in KAFKA_CONFIGS.items() if row.dynamic)  # AllDynamicConfigs
PER_BROKER_CONFIGS: frozenset[str] = frozenset(k for k, row in KAFKA_CONFIGS.items() if row.mode == PER_BROKER)
