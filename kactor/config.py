"""KafkaConfig: the broker's configuration, with Kafka's names and Kafka 2.6's defaults.

`load_config(properties_file, overrides)` reads a server.properties file (Java properties syntax, as
``kafka-server-start.sh`` takes) and ``key=value`` overrides. Every Kafka 2.6.3 broker config is known
(`core.broker.kafka_configs`): the keys of `CONFIG_DEFS` are the ones kactor acts on, with its own parsers; any other
known key is parsed and validated as Kafka does and noted at start-up with what kactor does instead
(`kactor.config_notes`); a key Kafka does not know is kept and warned about in Kafka's words. A malformed value is a
`ConfigError` with one clear line, raised before anything starts.

Listeners follow Kafka 2.6 (KafkaConfig.listeners / advertisedListeners / listenerSecurityProtocolMap /
interBrokerListenerName and validateValues), with Kafka's error words. kactor serves PLAINTEXT, SSL, SASL_PLAINTEXT
and SASL_SSL listeners: an SSL (or SASL_SSL) listener's TLS settings are the ``ssl.*`` keys with its
``listener.name.<name>.ssl.*`` overrides (`KafkaConfig.listener_ssl_values`), and its server context is built here
once at load time, so a bad key store is a start-up error naming its key. A SASL listener's mechanisms are
``sasl.enabled.mechanisms`` (or its ``listener.name.<name>.`` override) and each one's login module is
``listener.name.<name>.<mechanism>.sasl.jaas.config`` (`KafkaConfig.listener_sasl`), checked here too: GSSAPI and
OAUTHBEARER, a missing or malformed JAAS config, are start-up errors. An SSL inter-broker listener gives the broker's
own connections a client context (`inter_broker_tls_context`), a SASL one a mechanism and user to authenticate with
(`inter_broker_sasl_client`).
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import ssl
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from core.broker.kafka_configs import KAFKA_CONFIGS, ConfigError, text_of
from core.broker.replica_selector import replica_selector_for
from core.security.jaas import JaasFileError, ZkSaslLogin, zk_sasl_login
from core.security.sasl import REFUSED_MECHANISMS, SERVED_MECHANISMS, ListenerSasl, server_jaas_entry
from core.security.sasl_client import SaslClientConfig
from edges.net.tls_context import TlsConfigError, client_context, server_context
from kactor.config_notes import REFUSED, note_for
from messages.common import EndPoint

__all__ = ["CONFIG_DEFS", "ConfigError", "KafkaConfig", "build_config", "load_config"]


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


def _kafkas(key: str, text: str) -> Any:
    """Kafka's own parser and validator of the key (its type, range and words)."""
    return KAFKA_CONFIGS[key].parse(text)


def _bool(key: str, text: str) -> bool:
    t = text.strip().lower()
    if t not in ("true", "false"):
        raise ConfigError(f"Invalid value {text!r} for configuration {key}: Expected value to be either true or false")
    return t == "true"


def _str(key: str, text: str) -> str:
    return text.strip()


def _opt_str(key: str, text: str) -> str | None:
    return text.strip() or None


def _zookeeper_digest(key: str, text: str) -> str | None:
    """A ZooKeeper digest login, ``user:password`` (the form of ZooKeeper's DigestAuthenticationProvider); the value
    is a secret, so an error does not repeat it."""
    value = text.strip()
    if not value:
        return None
    user, sep, _ = value.partition(":")
    if not sep or not user:
        raise ConfigError(f"Invalid value [hidden] for configuration {key}: expected <user>:<password>")
    return value


def _replica_selector_class(key: str, text: str) -> str | None:
    """A replica selector kactor has (ReplicaManager.createReplicaSelector loads the class at start-up)."""
    name = _opt_str(key, text)
    try:
        replica_selector_for(name)
    except ValueError as e:
        raise ConfigError(f"Invalid value {text!r} for configuration {key}: {e}") from None
    return name


def _authorizer_class(key: str, text: str) -> str:
    """authorizer.class.name: empty (no authorizer) or AclAuthorizer (also as SimpleAclAuthorizer)."""
    from core.security.authorizer import authorizer_enabled

    try:
        authorizer_enabled(text)
    except ValueError as e:
        raise ConfigError(f"Invalid value {text} for configuration {key}: {e}") from None
    return text.strip()


def _list(key: str, text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


def _kafka(key: str) -> tuple[Callable[[str, str], Any], Any]:
    """A key kactor acts on exactly as Kafka 2.6.3 defines it: its type, validator and default
    (`core.broker.kafka_configs`, their one home)."""
    return (lambda _key, text: KAFKA_CONFIGS[key].parse(text)), KAFKA_CONFIGS[key].default_value()


# The ssl.* keys an SSL listener's server context is made of (SslConfigs / BrokerSecurityConfigs in 2.6.3).
SSL_LISTENER_KEYS = ("ssl.protocol", "ssl.enabled.protocols", "ssl.keystore.type", "ssl.keystore.location",
                     "ssl.keystore.password", "ssl.key.password", "ssl.truststore.type", "ssl.truststore.location",
                     "ssl.truststore.password", "ssl.client.auth", "ssl.cipher.suites",
                     "ssl.endpoint.identification.algorithm")
# The sasl.* keys a listener may override (the JAAS config is per listener and mechanism: _LISTENER_JAAS_RE)
SASL_LISTENER_KEYS = ("sasl.enabled.mechanisms", "connections.max.reauth.ms")
# listener.name.<name>.<key>: a listener's own value of a key (KafkaConfig.valuesWithPrefixOverride)
_LISTENER_PREFIXED_RE = re.compile(r"^listener\.name\.([^.]+)\.((?:ssl|sasl)\..+|connections\.max\.reauth\.ms)$")
# listener.name.<name>.<mechanism>.sasl.jaas.config or .connections.max.reauth.ms (valuesWithPrefixOverride's
# secondary prefix)
_LISTENER_JAAS_RE = re.compile(r"^listener\.name\.([^.]+)\.([^.]+)\.(sasl\.jaas\.config|connections\.max\.reauth\.ms)$")

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
    "listener.security.protocol.map": (_str, "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,"
                                             "SASL_SSL:SASL_SSL"),
    "inter.broker.listener.name": (_opt_str, None),
    "security.inter.broker.protocol": (_str, "PLAINTEXT"),
    "broker.rack": (_opt_str, None),
    "replica.selector.class": (_replica_selector_class, None),
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
    "socket.request.max.bytes": (_int(1), 104857600),
    "queued.max.requests": (_int(1), 500),
    "replica.lag.time.max.ms": (_int(1), 30000),
    "replica.fetch.wait.max.ms": (_int(0), 500),
    "replica.fetch.backoff.ms": (_int(0), 1000),
    "replica.fetch.min.bytes": (_int(1), 1),
    "replica.fetch.max.bytes": (_int(0), 1048576),
    "replica.fetch.response.max.bytes": (_int(0), 10485760),
    "log.retention.check.interval.ms": (_int(1), 300000),
    # the broker's log defaults (KafkaServer.copyKafkaConfigToLog): every log without a topic override takes them
    "log.segment.bytes": (_int(14), 1073741824),
    "log.roll.hours": (_int(1), 168),
    "log.roll.ms": (_int(1), None),
    "log.retention.hours": (_int(-1), 168),
    "log.retention.minutes": (_int(-1), None),
    "log.retention.ms": (_int(-1), None),
    "log.retention.bytes": (_int(-1), -1),
    "log.index.interval.bytes": (_int(0), 4096),
    "log.index.size.max.bytes": (_int(4), 10485760),
    "log.segment.delete.delay.ms": (_int(0), 60000),
    "log.message.timestamp.type": (_str, "CreateTime"),
    "log.flush.interval.messages": (_int(1), 2**63 - 1),
    "log.flush.interval.ms": (_int(), None),
    "log.flush.scheduler.interval.ms": (_int(), 2**63 - 1),
    "log.flush.offset.checkpoint.interval.ms": (_int(0), 60000),
    "log.flush.start.offset.checkpoint.interval.ms": (_int(0), 60000),
    # Kafka 3.9's, beyond 2.6 (core/broker/kafka_configs): when the LogManager's tasks first run after start-up
    "log.initial.task.delay.ms": _kafka("log.initial.task.delay.ms"),
    "message.max.bytes": (_int(0), 1048588),
    # the log cleaner's topic defaults (the log.cleaner.* synonyms of the topic configs) and the cleaner's own
    # settings (LogCleaner.cleanerConfig: edges/log_cleaner.py)
    **{key: _kafka(key) for key in (
        "log.cleanup.policy", "log.cleaner.delete.retention.ms", "log.cleaner.min.compaction.lag.ms",
        "log.cleaner.max.compaction.lag.ms", "log.cleaner.min.cleanable.ratio", "log.cleaner.enable",
        "log.cleaner.threads", "log.cleaner.dedupe.buffer.size", "log.cleaner.io.buffer.size",
        "log.cleaner.io.buffer.load.factor", "log.cleaner.io.max.bytes.per.second", "log.cleaner.backoff.ms")},
    "replica.high.watermark.checkpoint.interval.ms": (_int(1), 5000),
    "num.replica.fetchers": (_int(1), 1),
    "inter.broker.protocol.version": (_str, "2.6"),
    "reserved.broker.max.id": (_int(0), 1000),
    "broker.id.generation.enable": (_bool, True),
    # the group coordinator (GroupConfig, OffsetConfig)
    "offsets.topic.num.partitions": (_int(1), 50),
    "offsets.topic.replication.factor": (_int(1, 32767), 3),
    "offsets.topic.segment.bytes": (_int(1), 104857600),
    "offsets.retention.minutes": (_int(1), 10080),
    "offsets.retention.check.interval.ms": (_int(1), 600000),
    "offsets.commit.timeout.ms": (_int(1), 5000),
    "offset.metadata.max.bytes": (_int(0), 4096),
    "group.initial.rebalance.delay.ms": (_int(0), 3000),
    "group.min.session.timeout.ms": (_int(0), 6000),
    "group.max.session.timeout.ms": (_int(0), 1800000),
    "group.max.size": (_int(1), 2147483647),
    # the transaction coordinator (TransactionConfig)
    "transactional.id.expiration.ms": (_kafkas, 604800000),
    "transaction.partition.verification.enable": (_kafkas, True),  # KIP-890 part 1, on as 3.6: kafka_configs
    "transaction.max.timeout.ms": (_kafkas, 900000),
    "transaction.state.log.num.partitions": (_kafkas, 50),
    "transaction.state.log.replication.factor": (_kafkas, 3),
    "transaction.state.log.segment.bytes": (_kafkas, 104857600),
    "transaction.state.log.load.buffer.size": (_kafkas, 5242880),
    "transaction.state.log.min.isr": (_kafkas, 2),
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": (_kafkas, 10000),
    "transaction.remove.expired.transaction.cleanup.interval.ms": (_kafkas, 3600000),
    # client quotas (ClientQuotaManagerConfig; quota.*.default are 2.6's deprecated static client-id defaults)
    "quota.window.num": (_int(1), 11),
    "quota.window.size.seconds": (_int(1), 1),
    "quota.producer.default": (_int(1), (1 << 63) - 1),
    "quota.consumer.default": (_int(1), (1 << 63) - 1),
    "client.quota.callback.class": (_opt_str, None),
    # replication throttles (ReplicationQuotaManagerConfig)
    "replication.quota.window.num": (_int(1), 11),
    "replication.quota.window.size.seconds": (_int(1), 1),
    # an SSL listener's TLS (edges/net/tls_context.py), each also settable per listener as listener.name.<name>.<key>
    **{key: _kafka(key) for key in SSL_LISTENER_KEYS},
    "ssl.principal.mapping.rules": _kafka("ssl.principal.mapping.rules"),
    # a SASL listener's mechanisms (core/security/sasl.py); the JAAS configs are listener.name.<l>.<mech>.sasl.*
    "sasl.enabled.mechanisms": _kafka("sasl.enabled.mechanisms"),
    "connections.max.reauth.ms": _kafka("connections.max.reauth.ms"),  # KIP-368, per mechanism: listener_sasl
    "connection.failed.authentication.delay.ms": _kafka("connection.failed.authentication.delay.ms"),  # KIP-306
    "sasl.mechanism.inter.broker.protocol": _kafka("sasl.mechanism.inter.broker.protocol"),
    # the authorizer: empty = none (2.6's default) or AclAuthorizer, whose own super.users and
    # allow.everyone.if.no.acl.found are not KafkaConfig keys (core.security.authorizer.acl_authorizer_configs)
    "authorizer.class.name": (_authorizer_class, ""),
    # kactor's own settings (no Kafka equivalent)
    "kactor.trace.dir": (_opt_str, None),
    "kactor.metrics.port": (_int(0, 65535), 0),
    "kactor.partition.actors": (_int(1, 1024), 8),
    # a ZooKeeper digest login, user:password: kactor's addition beside Kafka's SASL login (a JAAS file's Client
    # section named in KAFKA_OPTS, KafkaConfig.zookeeper_sasl); with zookeeper.set.acl=true only the brokers'
    # identities may write kactor's znodes
    "kactor.zookeeper.digest": (_zookeeper_digest, None),
}
# kactor's own keys whose value is a secret (Kafka's are PASSWORD in kafka_configs): hidden wherever shown
KACTOR_SENSITIVE = frozenset({"kactor.zookeeper.digest"})

LOG_PROPS = ("log.segment.bytes", "log.roll.hours", "log.roll.ms", "log.retention.hours", "log.retention.minutes",
             "log.retention.ms", "log.retention.bytes", "log.index.interval.bytes", "log.index.size.max.bytes",
             "log.segment.delete.delay.ms", "log.message.timestamp.type", "message.max.bytes",
             "log.flush.interval.messages", "log.flush.interval.ms", "log.flush.scheduler.interval.ms",
             "log.flush.offset.checkpoint.interval.ms", "log.flush.start.offset.checkpoint.interval.ms",
             "log.initial.task.delay.ms",
             "log.cleanup.policy", "log.cleaner.delete.retention.ms", "log.cleaner.min.compaction.lag.ms",
             "log.cleaner.max.compaction.lag.ms", "log.cleaner.min.cleanable.ratio")
_KEY_RE = re.compile(r"^[a-z][a-z0-9._-]*$")


@attrs.frozen
class KafkaConfig:
    """The parsed configuration: ``values`` maps every known key to its effective value; ``originals`` is what the user
    supplied, as written (Kafka's ``originals``: unknown keys included)."""

    values: Mapping[str, Any]
    originals: Mapping[str, str] = attrs.field(factory=dict)
    # the ZooKeeper client's SASL login, from the JAAS file KAFKA_OPTS names (load_config; None: no JAAS Client
    # section), as Kafka's ZooKeeper client takes it from -Djava.security.auth.login.config
    zookeeper_sasl: ZkSaslLogin | None = None

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def log_props(self) -> dict[str, str]:
        """The server.properties log defaults set (or defaulted) here, as Kafka's property strings: what
        core.broker.log_config.log_defaults_from_broker_config turns into the LogConfig of every log without an
        override of its own."""
        return {k: str(text_of(self.values[k])) for k in LOG_PROPS if self.values[k] is not None}

    @property
    def broker_id(self) -> int:
        return int(self.values["broker.id"])

    @property
    def log_dirs(self) -> tuple[str, ...]:
        """KafkaConfig.logDirs: log.dirs when it is set, even to nothing, else log.dir, each a comma-separated list
        (CoreUtils.parseCsvList); build_config refuses an empty one."""
        return _log_dirs(self.values)

    @property
    def listener_security_protocol_map(self) -> dict[str, str]:
        """KafkaConfig.listenerSecurityProtocolMap: normalised listener name → security protocol."""
        return parse_security_protocol_map(self.values["listener.security.protocol.map"])

    @property
    def listeners(self) -> tuple[EndPoint, ...]:
        """KafkaConfig.listeners: what the broker binds, one socket per listener."""
        return listener_list_to_end_points(self.values["listeners"], self.listener_security_protocol_map)

    @property
    def advertised_listeners(self) -> tuple[EndPoint, ...]:
        """KafkaConfig.advertisedListeners: what /brokers/ids/<id> registers; the listeners when not set."""
        adv = self.values["advertised.listeners"]
        if adv is None:
            return self.listeners
        return listener_list_to_end_points(adv, self.listener_security_protocol_map, require_distinct_ports=False)

    @property
    def inter_broker_listener_name(self) -> str:
        """KafkaConfig.interBrokerListenerName: the listener the controller and the followers connect by."""
        return inter_broker_listener_name_and_security_protocol(self.values, self.listener_security_protocol_map)[0]

    def listener_ssl_values(self, listener_name: str) -> tuple[dict[str, Any], str]:
        """KafkaConfig.valuesWithPrefixOverride("listener.name.<name>."): the listener's effective ssl.* values, and
        the prefix that names its keys in an error ("" when the listener overrides none of them)."""
        prefix = f"listener.name.{listener_name.lower()}."
        out = {key: self.values[key] for key in SSL_LISTENER_KEYS}
        overridden = False
        for key in SSL_LISTENER_KEYS:
            if prefix + key in self.values:
                out[key] = self.values[prefix + key]
                overridden = True
        return out, prefix if overridden else ""

    def listener_sasl(self, listener_name: str) -> ListenerSasl:
        """SaslChannelBuilder.configure for a SASL listener: its enabled mechanisms (``sasl.enabled.mechanisms``, the
        listener's override first) and each one's JAAS entry from ``listener.name.<l>.<mechanism>.sasl.jaas.config``
        (JaasContext.loadServerContext; kactor reads no JAAS file). ConfigError naming the key at fault."""
        prefix = f"listener.name.{listener_name.lower()}."
        key = "sasl.enabled.mechanisms"
        if prefix + key in self.values:
            key = prefix + key
        mechanisms = tuple(self.values[key] or ())
        if not mechanisms:
            raise ConfigError(f"listener {listener_name}: {key} is empty: a SASL listener needs a mechanism")
        jaas = {}
        for mechanism in mechanisms:
            if mechanism in REFUSED_MECHANISMS:
                raise ConfigError(f"listener {listener_name}: {key}={','.join(mechanisms)}: SASL mechanism "
                                  f"{mechanism} is refused: kactor serves {', '.join(SERVED_MECHANISMS)} (note that "
                                  "Kafka's default is GSSAPI: set sasl.enabled.mechanisms)")
            if mechanism not in SERVED_MECHANISMS:
                raise ConfigError(f"listener {listener_name}: {key}={','.join(mechanisms)}: unknown SASL mechanism "
                                  f"{mechanism} (kactor serves {', '.join(SERVED_MECHANISMS)})")
            jaas_key = f"{prefix}{mechanism.lower()}.sasl.jaas.config"
            text = self.values.get(jaas_key)
            if not text:
                raise ConfigError(f"listener {listener_name}: {jaas_key} is not set: could not find a JAAS "
                                  f"configuration for SASL mechanism {mechanism} (kactor reads no JAAS file: "
                                  "java.security.auth.login.config is not supported)")
            try:
                jaas[mechanism] = server_jaas_entry(str(text), mechanism)
            except ValueError as e:
                raise ConfigError(f"listener {listener_name}: {jaas_key}: {e}") from None
        return ListenerSasl(mechanisms, jaas, {m: self._max_reauth_ms(prefix, m) for m in mechanisms},
                            self.values["connection.failed.authentication.delay.ms"])

    def _max_reauth_ms(self, prefix: str, mechanism: str) -> int:
        """connections.max.reauth.ms for one mechanism of a listener (SaslChannelBuilder's
        connectionsMaxReauthMsByMechanism): ``listener.name.<l>.<mechanism>.`` first, then ``listener.name.<l>.``,
        then the broker's."""
        key = "connections.max.reauth.ms"
        for candidate in (f"{prefix}{mechanism.lower()}.{key}", prefix + key, key):
            if candidate in self.values:
                try:
                    value = int(self.values[candidate])
                except (TypeError, ValueError):
                    raise ConfigError(f"Invalid value {self.values[candidate]} for configuration {candidate}: Not a "
                                      "number of type LONG") from None
                return max(0, value)
        return 0

    def listener_sasl_configs(self) -> dict[str, ListenerSasl]:
        """Listener name → the SASL settings of every SASL_PLAINTEXT / SASL_SSL listener."""
        return {ep.listener_name: self.listener_sasl(ep.listener_name) for ep in self.listeners
                if ep.security_protocol in ("SASL_PLAINTEXT", "SASL_SSL")}

    def inter_broker_sasl_client(self) -> SaslClientConfig | None:
        """What the broker's own connections authenticate with when the inter-broker listener is SASL (2.6's
        ChannelBuilders.clientChannelBuilder with the listener's JAAS context):
        ``sasl.mechanism.inter.broker.protocol``, which KafkaConfig.validateValues requires among the listener's
        enabled mechanisms, and the ``username`` / ``password`` options of that mechanism's
        ``listener.name.<l>.<mechanism>.sasl.jaas.config``."""
        name, protocol = inter_broker_listener_name_and_security_protocol(self.values,
                                                                          self.listener_security_protocol_map)
        if not protocol.startswith("SASL"):
            return None
        mechanism = str(self.values["sasl.mechanism.inter.broker.protocol"])
        sasl = self.listener_sasl(name)
        if mechanism not in sasl.mechanisms:
            raise ConfigError("requirement failed: sasl.mechanism.inter.broker.protocol must be included in "
                              "sasl.enabled.mechanisms when SASL is used for inter-broker communication "
                              f"(sasl.mechanism.inter.broker.protocol={mechanism}, the inter-broker listener {name} "
                              f"enables {','.join(sasl.mechanisms)})")
        options = sasl.jaas[mechanism].options
        key = f"listener.name.{name.lower()}.{mechanism.lower()}.sasl.jaas.config"
        if not options.get("username") or "password" not in options:
            raise ConfigError(f"inter-broker listener {name}: {key} has no username and password: the brokers "
                              f"authenticate to each other with them ({mechanism})")
        return SaslClientConfig(mechanism, options["username"], options["password"])

    def listener_tls_contexts(self) -> dict[str, ssl.SSLContext]:
        """Listener name → the server context of every SSL and SASL_SSL listener (SslChannelBuilder.configure, and
        SaslChannelBuilder's SSL transport layer: the key store and trust store read now, so a bad one is a
        start-up error naming its key)."""
        contexts = {}
        for ep in self.listeners:
            if ep.security_protocol not in ("SSL", "SASL_SSL"):
                continue
            ssl_values, prefix = self.listener_ssl_values(ep.listener_name)
            try:
                contexts[ep.listener_name] = server_context(ssl_values, prefix)
            except TlsConfigError as e:
                raise ConfigError(f"listener {ep.listener_name}: {e}") from None
        return contexts

    def inter_broker_tls_context(self) -> ssl.SSLContext | None:
        """The client context of the broker's own connections (the controller's channels, the followers' fetchers,
        the transaction markers) when the inter-broker listener is SSL or SASL_SSL, from that listener's ssl.* values
        (2.6's ChannelBuilders.clientChannelBuilder with the listener's prefix); None for PLAINTEXT and
        SASL_PLAINTEXT."""
        name, protocol = inter_broker_listener_name_and_security_protocol(self.values,
                                                                          self.listener_security_protocol_map)
        if protocol not in ("SSL", "SASL_SSL"):
            return None
        ssl_values, prefix = self.listener_ssl_values(name)
        try:
            return client_context(ssl_values, prefix)
        except TlsConfigError as e:
            raise ConfigError(f"inter-broker listener {name}: {e}") from None

    @property
    def loopback_only(self) -> bool:
        """True while every listener (bound and advertised) is a loopback address: the user configured nothing
        beyond this machine, so the broker's ZooKeeper client refuses non-loopback servers too."""
        return all(_is_loopback(ep.host) for ep in self.listeners + self.advertised_listeners)

    def non_default(self) -> dict[str, Any]:
        """The keys whose value differs from the default (what a trace header records)."""
        return {k: "[hidden]" if _sensitive(k) else _jsonable(v) for k, v in self.values.items()
                if v != default_of(k)}

    @property
    def unknown(self) -> tuple[str, ...]:
        """The supplied keys Kafka 2.6.3 does not know (AbstractConfig.unused, for a broker)."""
        return tuple(k for k in self.originals if k not in self.values)

    def startup_notes(self) -> list[tuple[int, str]]:
        """(log level, line) for every supplied key Kafka does not know (AbstractConfig.logUnused's words) and every
        known key kactor does not act on (what kactor does instead), in the order supplied."""
        notes = []
        for key, text in self.originals.items():
            if key not in self.values:
                notes.append((logging.WARNING, f"The configuration '{key}' was supplied but isn't a known config."))
            elif key not in CONFIG_DEFS and _LISTENER_PREFIXED_RE.match(key) is None \
                    and _LISTENER_JAAS_RE.match(key) is None:
                shown = "[hidden]" if KAFKA_CONFIGS[key].sensitive else text.strip()
                notes.append((logging.INFO, f"{key}={shown}: {note_for(key)}"))
        return notes

    def log_startup_notes(self, logger: logging.Logger | None = None) -> None:
        """Log `startup_notes` once, when the broker starts (its logging is set up after the config is read)."""
        logger = logger or logging.getLogger("kactor.config")
        for level, line in self.startup_notes():
            logger.log(level, "%s", line)


def _base_key(key: str) -> str:
    """The Kafka config a key is: itself, or the key a listener.name.<name>. prefix overrides."""
    m = _LISTENER_PREFIXED_RE.match(key)
    if m is not None:
        return m.group(2)
    m = _LISTENER_JAAS_RE.match(key)
    return m.group(3) if m is not None else key


def _sensitive(key: str) -> bool:
    row = KAFKA_CONFIGS.get(_base_key(key))  # None: kactor's own key
    return key in KACTOR_SENSITIVE if row is None else row.sensitive


def default_of(key: str) -> Any:
    """The value of ``key`` when nobody sets it: kactor's for a key it acts on, else Kafka's (parsed); a
    listener's override has none."""
    if key in CONFIG_DEFS:
        return CONFIG_DEFS[key][1]
    if key not in KAFKA_CONFIGS:
        return None
    return KAFKA_CONFIGS[key].default_value()


def _jsonable(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


# EndPoint.uriParseExp: LISTENER_NAME://host:port, an IPv6 host in brackets, an empty host allowed.
_ENDPOINT_RE = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*?)\]?:(-?[0-9]+)$")
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_security_protocol_map(text: str) -> dict[str, str]:
    """KafkaConfig.listenerSecurityProtocolMap over CoreUtils.parseCsvMap: ``NAME:PROTOCOL,...``; names are
    normalised to upper case (ListenerName.normalised), protocols checked (SecurityProtocol.forName)."""
    out: dict[str, str] = {}
    for item in (p for p in re.split(r"\s*,\s*", text.strip()) if p):
        name, sep, protocol = item.rpartition(":")
        if not sep:
            raise ConfigError("Error parsing configuration property 'listener.security.protocol.map': "
                              f"{item!r} is not NAME:PROTOCOL")
        protocol = protocol.strip().upper()
        if protocol not in SECURITY_PROTOCOLS:
            raise ConfigError(f"Invalid security protocol `{protocol}` defined in listener.security.protocol.map")
        out[name.strip().upper()] = protocol
    return out


def create_end_point(text: str, protocol_map: Mapping[str, str]) -> EndPoint:
    """EndPoint.createEndPoint: ``LISTENER_NAME://host:port`` with its security protocol from ``protocol_map``.
    An empty host binds loopback (kactor's departure: Kafka binds every interface)."""
    m = _ENDPOINT_RE.match(text.strip())
    if m is None:
        raise ConfigError(f"Unable to parse {text} to a broker endpoint")
    name, host, port = m.group(1).upper(), m.group(2), int(m.group(3))
    if name not in protocol_map:
        raise ConfigError(f"No security protocol defined for listener {name}")
    if not 0 <= port <= 65535:
        raise ConfigError(f"port {port} out of range in {text}")
    return EndPoint(host or "127.0.0.1", port, name, protocol_map[name])


def listener_list_to_end_points(listeners: Iterable[str], protocol_map: Mapping[str, str],
                                require_distinct_ports: bool = True) -> tuple[EndPoint, ...]:
    """CoreUtils.listenerListToEndPoints: every listener parsed; names distinct, ports distinct (0 excepted)."""
    text = ",".join(listeners)
    try:
        end_points = tuple(create_end_point(item, protocol_map) for item in listeners)
    except ConfigError as e:
        raise ConfigError(f"Error creating broker listeners from '{text}': {e}") from None
    if len({ep.listener_name for ep in end_points}) != len(end_points):
        raise ConfigError(f"requirement failed: Each listener must have a different name, listeners: {text}")
    ports = [ep.port for ep in end_points if ep.port != 0]
    if require_distinct_ports and len(set(ports)) != len(ports):
        raise ConfigError(f"requirement failed: Each listener must have a different port, listeners: {text}")
    return end_points


def inter_broker_listener_name_and_security_protocol(values: Mapping[str, Any], protocol_map: Mapping[str, str],
                                                     explicit: Iterable[str] = ()) -> tuple[str, str]:
    """KafkaConfig.getInterBrokerListenerNameAndSecurityProtocol. ``explicit``: the keys the user set (Kafka's
    ``originals``), for the rule that only one of the two keys may be given."""
    name = values["inter.broker.listener.name"]
    if name is not None:
        if "security.inter.broker.protocol" in explicit:
            raise ConfigError("Only one of inter.broker.listener.name and security.inter.broker.protocol "
                              "should be set.")
        name = name.upper()
        if name not in protocol_map:
            raise ConfigError(f"Listener with name {name} defined in inter.broker.listener.name not found in "
                              "listener.security.protocol.map.")
        return name, protocol_map[name]
    protocol = values["security.inter.broker.protocol"].upper()
    if protocol not in SECURITY_PROTOCOLS:
        raise ConfigError(f"Invalid security protocol `{protocol}` defined in security.inter.broker.protocol")
    return protocol, protocol  # ListenerName.forSecurityProtocol


def _validate_listeners(config: KafkaConfig, explicit: Iterable[str]) -> None:
    """KafkaConfig.validateValues's listener rules, then kactor's own: every listener PLAINTEXT or SSL, and every
    SSL listener's server context and an SSL inter-broker listener's client context made (the channel builders)."""
    protocol_map = config.listener_security_protocol_map
    listeners, advertised = config.listeners, config.advertised_listeners
    inter_broker, _ = inter_broker_listener_name_and_security_protocol(config.values, protocol_map, explicit)
    advertised_names = list(dict.fromkeys(ep.listener_name for ep in advertised))
    listener_names = list(dict.fromkeys(ep.listener_name for ep in listeners))
    if inter_broker not in advertised_names:
        raise ConfigError("requirement failed: inter.broker.listener.name must be a listener name defined in "
                          "advertised.listeners. The valid options based on currently configured listeners are "
                          + ",".join(advertised_names))
    if not set(advertised_names) <= set(listener_names):
        raise ConfigError("requirement failed: advertised.listeners listener names must be equal to or a subset of "
                          f"the ones defined in listeners. Found {','.join(advertised_names)}. The valid options "
                          f"based on the current configuration are {','.join(listener_names)}")
    if any(ep.host == "0.0.0.0" for ep in advertised):
        raise ConfigError("requirement failed: advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. "
                          "Use a routable IP address.")
    config.listener_sasl_configs()
    config.inter_broker_sasl_client()
    if any(ep.security_protocol in ("SSL", "SASL_SSL") for ep in listeners):
        rules = config.values["ssl.principal.mapping.rules"].strip()
        if rules != "DEFAULT":
            raise ConfigError(f"ssl.principal.mapping.rules={rules} is refused: kactor maps a certificate's "
                              "distinguished name by the DEFAULT rule only")
        config.listener_tls_contexts()
        config.inter_broker_tls_context()


_BROKER_COMPRESSION_OPTIONS = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")


def _log_dirs(values: Mapping[str, Any]) -> tuple[str, ...]:
    dirs = values["log.dirs"]
    return dirs if dirs is not None else _list("log.dir", values["log.dir"])


def _validate_values(values: Mapping[str, Any]) -> None:
    """KafkaConfig.validateValues' rules over the keys kactor reads but does not act on (those over the listeners
    are `_validate_listeners`), with Kafka's words."""
    def require(ok: bool, message: str) -> None:
        if not ok:
            raise ConfigError(f"requirement failed: {message}")

    # an empty log.dirs (say log.dirs=${DATA} with DATA unset) is no reason to write into log.dir's default
    require(bool(_log_dirs(values)), "At least one log directory must be defined via log.dirs or log.dir.")

    acks, rf = values["offsets.commit.required.acks"], values["offsets.topic.replication.factor"]
    require(-1 <= acks <= rf, "offsets.commit.required.acks must be greater or equal -1 and less or equal to "
                              "offsets.topic.replication.factor")
    compression = values["compression.type"]
    require(compression in _BROKER_COMPRESSION_OPTIONS, f"compression.type : {compression} is not valid. Valid "
                                                        f"options are {','.join(_BROKER_COMPRESSION_OPTIONS)}")
    queued = values["queued.max.request.bytes"]
    require(queued <= 0 or queued >= values["socket.request.max.bytes"],
            "queued.max.request.bytes must be larger or equal to socket.request.max.bytes")
    if values["max.connections.per.ip"] == 0:
        require(bool(values["max.connections.per.ip.overrides"]), "max.connections.per.ip can be set to zero only if "
                                                                  "max.connections.per.ip.overrides property is set.")
    idle, delay = values["connections.max.idle.ms"], values["connection.failed.authentication.delay.ms"]
    if idle >= 0:
        require(delay < idle, f"connection.failed.authentication.delay.ms={delay} should always be less than "
                              f"connections.max.idle.ms={idle} to prevent failed authentication responses from "
                              "timing out")


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


def build_config(raw: Mapping[str, str], zookeeper_sasl: ZkSaslLogin | None = None) -> KafkaConfig:
    """Validate raw string settings and fill in defaults: a key of CONFIG_DEFS by kactor's parser, any other Kafka
    2.6.3 config by its type and validator (ConfigDef.parse); a key Kafka does not know is kept in ``originals``
    only. ``kactor.*`` is kactor's own namespace, where an unknown key is a typo and refused. ``zookeeper_sasl``: the
    ZooKeeper SASL login the environment gives (`zookeeper_sasl_from_environment`)."""
    values: dict[str, Any] = {k: row.default_value() for k, row in KAFKA_CONFIGS.items()}
    values.update({k: d for k, (_, d) in CONFIG_DEFS.items()})
    for key, text in raw.items():
        if key in CONFIG_DEFS:
            values[key] = CONFIG_DEFS[key][0](key, text)
        elif key in KAFKA_CONFIGS:
            values[key] = KAFKA_CONFIGS[key].parse(text)
        elif (m := _LISTENER_PREFIXED_RE.match(key)) is not None and m.group(2) in (*SSL_LISTENER_KEYS,
                                                                                     *SASL_LISTENER_KEYS):
            values[key] = KAFKA_CONFIGS[m.group(2)].parse(text)
        elif (m := _LISTENER_JAAS_RE.match(key)) is not None:
            values[key] = KAFKA_CONFIGS[m.group(3)].parse(text)
        elif key.startswith("kactor."):
            hint = "" if _KEY_RE.match(key) else " (malformed key)"
            raise ConfigError(f"Unknown configuration {key!r}{hint}")
    for key, (refused, why) in REFUSED.items():
        if key in raw and refused(values[key]):
            raise ConfigError(f"{key}={text_of(values[key])} is refused: {why}")
    if not values["zookeeper.connect"]:
        raise ConfigError("Missing required configuration \"zookeeper.connect\" which has no default value.")
    if values["broker.id"] < 0:
        raise ConfigError("broker.id must be set to a non-negative integer (generated broker ids are not supported)")
    if values["zookeeper.connection.timeout.ms"] is None:
        values["zookeeper.connection.timeout.ms"] = values["zookeeper.session.timeout.ms"]
    if values["zookeeper.set.acl"] and not values["kactor.zookeeper.digest"] and zookeeper_sasl is None:
        # KafkaServer.initZkClient's check (JaasUtils.isZkSecurityEnabled), with kactor's digest login beside SASL
        raise ConfigError(
            "zookeeper.set.acl is true, but no ZooKeeper login is configured: name a JAAS file whose Client section "
            "logs in with org.apache.zookeeper.server.auth.DigestLoginModule (username, password) in "
            "KAFKA_OPTS=-Djava.security.auth.login.config=<file>, as for Kafka (SASL DIGEST-MD5), or set "
            "kactor.zookeeper.digest=<user>:<password> (a ZooKeeper digest login)")
    _validate_values(values)
    config = KafkaConfig(values, dict(raw), zookeeper_sasl)
    _validate_listeners(config, raw.keys())
    return config


def zookeeper_sasl_from_environment(environ: Mapping[str, str] | None = None) -> ZkSaslLogin | None:
    """The ZooKeeper SASL login of a broker started with ``environ`` (the process's by default): the JAAS file that
    ``-Djava.security.auth.login.config`` in ``KAFKA_OPTS`` names, as kafka-server-start.sh hands it to the JVM
    (core.security.jaas.zk_sasl_login). A file kactor cannot log in with is a ConfigError."""
    def read(path: str) -> str:
        with open(path, encoding="utf-8") as f:
            return f.read()

    try:
        return zk_sasl_login(os.environ if environ is None else environ, read)
    except JaasFileError as e:
        raise ConfigError(str(e)) from None


def load_config(properties_file: str | None, overrides: Iterable[str] = (),
                environ: Mapping[str, str] | None = None) -> KafkaConfig:
    """The broker's configuration: ``properties_file``, then ``overrides`` (``key=value``), and the ZooKeeper SASL
    login of ``environ`` (the process's environment by default: KAFKA_OPTS)."""
    raw: dict[str, str] = {}
    if properties_file:
        try:
            with open(properties_file, encoding="utf-8") as f:
                raw.update(parse_properties(f.read(), properties_file))
        except OSError as e:
            raise ConfigError(f"cannot read {properties_file}: {e.strerror}") from None
    raw.update(parse_overrides(overrides))
    return build_config(raw, zookeeper_sasl_from_environment(environ))
