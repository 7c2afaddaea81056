"""What kactor does with a Kafka 2.6.3 broker config it accepts but does not act on, in one line each: logged once at
start-up for every such key the user set (`kactor.config.KafkaConfig.startup_notes`), so that a config file written for
Kafka starts and says what it changes nothing about.

A key kactor acts on is a key of `kactor.config.CONFIG_DEFS`; a note here for such a key is never shown. Keys whose
silent neglect would weaken security are not noted but refused (`REFUSED`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_OS_BUFFERS = "kactor leaves the socket buffers at the operating system's sizes"
_NO_TRANSACTIONS = "kactor's transaction coordinator does not act on this setting"
_CLIENT_QUOTAS = ("kactor takes client quotas from /config/users and /config/clients only; the static defaults and "
                  "quota.window.* keep Kafka's defaults")
_NO_LOG_DIR_THROTTLE = ("kactor measures replica.alter.log.dirs.io.max.bytes.per.second over the replication quota's "
                        "window (replication.quota.window.*)")
_SASL = ("kactor's SASL listeners serve PLAIN (JAAS users) and SCRAM-SHA-256/512 (ZooKeeper credentials) from "
         "sasl.enabled.mechanisms, sasl.mechanism.inter.broker.protocol and "
         "listener.name.<l>.<mechanism>.sasl.jaas.config only; the other SASL settings (Kerberos, OAUTHBEARER, login "
         "and callback classes) do not apply")
_OPENSSL = ("kactor's SSL listeners use Python's ssl module (OpenSSL): Java's providers, key and trust manager "
            "algorithms and SSL engine factories do not apply")
_LISTENERS_ONLY = ("kactor binds what listeners says (Kafka 2.6 reads port, host.name and their advertised forms only "
                   "when listeners is not set)")

_PREFIX_NOTES: tuple[tuple[str, str], ...] = (
    ("transaction.", _NO_TRANSACTIONS),
    ("transactional.", _NO_TRANSACTIONS),
    ("quota.", _CLIENT_QUOTAS),
    ("alter.log.dirs.replication.quota.", _NO_LOG_DIR_THROTTLE),
    ("ssl.", _OPENSSL),
    ("sasl.", _SASL),
    ("zookeeper.ssl.", "kactor connects to ZooKeeper without TLS (zookeeper.ssl.client.enable=true is refused)"),
    ("delegation.token.", "kactor has no delegation tokens"),
    ("password.encoder.", "kactor stores no encrypted password configs"),
    ("metric", "kactor exports its metrics on kactor.metrics.port (Prometheus text), not through metric reporters"),
    ("kafka.metrics.", "kactor exports its metrics on kactor.metrics.port (Prometheus text), not through reporters"),
)

NOTES: dict[str, str] = {
    "num.network.threads": "kactor serves all connections on one selector thread",
    "num.io.threads": "kactor handles requests in its actors (kactor.partition.actors shards the partitions), "
                      "not in a request-handler pool",
    "background.threads": "kactor runs its periodic tasks in its actors",
    "num.recovery.threads.per.data.dir": "kactor loads each log in the actor that hosts its partition",
    "num.replica.alter.log.dirs.threads": "kactor's partition shards copy the replicas moving between log dirs in "
                                          "their scheduled tasks, one at a time per shard",
    "socket.send.buffer.bytes": _OS_BUFFERS,
    "socket.receive.buffer.bytes": _OS_BUFFERS,
    "replica.socket.receive.buffer.bytes": _OS_BUFFERS,
    "queued.max.requests": "kactor queues requests in its actors' mailboxes",
    "queued.max.request.bytes": "kactor queues requests in its actors' mailboxes",
    "port": _LISTENERS_ONLY,
    "host.name": _LISTENERS_ONLY,
    "advertised.host.name": _LISTENERS_ONLY,
    "advertised.port": _LISTENERS_ONLY,
    "control.plane.listener.name": "kactor's controller sends its requests over the inter-broker listener",
    "max.connections": "kactor limits no connection count",
    "max.connections.per.ip": "kactor limits no connection count",
    "max.connections.per.ip.overrides": "kactor limits no connection count",
    "connections.max.idle.ms": "kactor closes no idle connection",
    "sasl.jaas.config": "Server config sasl.jaas.config should be prefixed with SASL mechanism name, ignoring config "
                        "(a broker's listener takes listener.name.<l>.<mechanism>.sasl.jaas.config, as Kafka)",
    "principal.builder.class": "kactor builds principals as Kafka's DefaultKafkaPrincipalBuilder (an SSL "
                               "certificate's DN, ANONYMOUS otherwise) and loads no Java class",
    "security.providers": _OPENSSL,
    "create.topic.policy.class.name": "kactor loads no Java class: no create-topic policy is applied",
    "alter.config.policy.class.name": "kactor loads no Java class: no alter-config policy is applied",
    "client.quota.callback.class": _CLIENT_QUOTAS,
    "log.preallocate": "kactor does not preallocate segment files",
    "log.flush.offset.checkpoint.interval.ms": "kactor does not checkpoint the recovery point on a timer",
    "log.flush.start.offset.checkpoint.interval.ms": "kactor does not checkpoint the log start offset on a timer",
    "log.message.format.version": "kactor writes record batches of magic 2 (the 2.6 format)",
    "log.message.downconversion.enable": "kactor does not down-convert records for old consumers",
    "compression.type": "kactor keeps the producer's compression",
    "offsets.topic.compression.codec": "kactor writes __consumer_offsets uncompressed",
    "zookeeper.sync.time.ms": "kactor has no ZooKeeper follower lag setting",
    "zookeeper.clientCnxnSocket": "kactor's ZooKeeper client has its own socket",
}
_GENERIC = "kactor accepts it as Kafka 2.6.3 does and does not act on it"


def note_for(key: str) -> str:
    """What kactor does instead of acting on ``key`` (a known Kafka config it does not act on)."""
    if key in NOTES:
        return NOTES[key]
    for prefix, note in _PREFIX_NOTES:
        if key.startswith(prefix):
            return note
    return _GENERIC


def _true(value: Any) -> bool:
    return value is True


# key → (when its value is refused, why): ignoring these would leave the broker less protected than the user asked
REFUSED: dict[str, tuple[Callable[[Any], bool], str]] = {
    "zookeeper.ssl.client.enable": (_true, "kactor connects to ZooKeeper without TLS"),
}
