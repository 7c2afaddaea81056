"""A Kafka client properties file — what Kafka 2.6.3's tools read from ``--command-config``, ``--admin.config``,
``--consumer.config`` or ``--producer.config`` (Utils.loadProps) — as kactor's tools connect with it.

Two clients read it: librdkafka (confluent-kafka) for what it sends, and kactor.cli.kafka_wire for the requests it
does not send. The Java client settings are mapped to librdkafka's (`librdkafka_config`): ``security.protocol``;
``sasl.mechanism`` PLAIN / SCRAM-SHA-256 / SCRAM-SHA-512 with ``sasl.jaas.config``'s PlainLoginModule /
ScramLoginModule ``username`` and ``password``; ``ssl.truststore.location`` of type PEM (librdkafka's CA file) or
PKCS12 (its certificates handed to librdkafka as PEM text), ``ssl.keystore.location`` of type PEM (a file holding
the key and its certificate) or PKCS12 (which librdkafka reads itself), their passwords, ``ssl.key.password`` and
``ssl.endpoint.identification.algorithm``; ``client.id``. What librdkafka cannot do is refused with a message saying
so: a JKS store, GSSAPI or OAUTHBEARER, a JAAS login module other than those two. kafka_wire takes the same file as
a TLS context (edges/net/tls_context.py's ``client_context``, the brokers' own outbound one) and a SASL client
(core/security/sasl_client.py): `ClientProperties.ssl_context` and `.sasl`.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from core.security.sasl import PLAIN_LOGIN_MODULE, SCRAM_LOGIN_MODULE, parse_jaas_config
from core.security.sasl_client import SaslClientConfig
from kactor.cli import CliError
from kactor.cli.support import read_text_file
from kactor.config import parse_properties

Out = Callable[[str], None]
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SAME_NAME = ("client.id",)  # Java client settings librdkafka takes under the same name, whatever the client
# ... and those of a consumer's or a producer's file (--consumer.config, --producer.config)
CONSUMER_SAME_NAME = ("group.id", "group.instance.id", "auto.offset.reset", "enable.auto.commit",
                      "auto.commit.interval.ms", "isolation.level", "session.timeout.ms", "heartbeat.interval.ms",
                      "max.poll.interval.ms", "fetch.min.bytes", "fetch.max.bytes", "fetch.max.wait.ms",
                      "max.partition.fetch.bytes", "client.rack", "check.crcs")
PRODUCER_SAME_NAME = ("acks", "compression.type", "linger.ms", "batch.size", "retries", "retry.backoff.ms",
                      "enable.idempotence", "request.timeout.ms", "delivery.timeout.ms", "transactional.id",
                      "transaction.timeout.ms", "max.in.flight.requests.per.connection")
IGNORED = ("bootstrap.servers",)  # the tools set it from --bootstrap-server
# Kafka's client defaults for the TLS context (SslConfigs: ssl.protocol TLSv1.3, ssl.enabled.protocols)
DEFAULT_SSL_PROTOCOL = "TLSv1.3"
DEFAULT_ENABLED_PROTOCOLS = ("TLSv1.2", "TLSv1.3")


class UnsupportedClientConfigError(CliError):
    """A client property librdkafka cannot honour."""


def cannot(prefix: str, tool: str, what: str) -> UnsupportedClientConfigError:
    return UnsupportedClientConfigError(f"{prefix}{what}: {tool} uses librdkafka (confluent-kafka), which cannot "
                                        "do that")


@attrs.frozen(slots=True)
class ClientProperties:
    """A client properties file as kactor's tools connect with it: librdkafka's settings, and for kafka_wire the
    TLS context (None without TLS) and the SASL client settings (None without SASL)."""

    protocol: str = "PLAINTEXT"
    librdkafka: Mapping[str, Any] = attrs.field(factory=lambda: {"security.protocol": "PLAINTEXT"})
    ssl_context: ssl.SSLContext | None = attrs.field(default=None, eq=False, repr=False)
    sasl: SaslClientConfig | None = None


PLAINTEXT = ClientProperties()


def librdkafka_config(props: Mapping[str, str], warn: Out, prefix: str = "", tool: str = "kactor",
                      same_name: Iterable[str] = ()) -> dict[str, Any]:
    """Kafka client properties → librdkafka's. A setting librdkafka has no equivalent for is refused
    (`UnsupportedClientConfigError`) when it changes how the client connects, and otherwise warned of and left out,
    as Kafka's client warns of a setting it does not know. ``prefix`` starts an error's line (the tool's own, as
    AclCommand's "Error while executing ACL command: "), ``tool`` names the tool in a refusal, ``same_name`` are
    further settings passed on as they are."""
    conf: dict[str, Any] = {}
    rest = dict(props)
    protocol = _protocol(rest, prefix)
    conf["security.protocol"] = protocol
    sasl = _sasl(rest, protocol, prefix, tool)
    if sasl is not None:
        conf.update({"sasl.mechanism": sasl.mechanism, "sasl.username": sasl.username, "sasl.password": sasl.password})
    if protocol.endswith("SSL"):
        conf.update(_ssl(rest, prefix, tool))
    for key in (*SAME_NAME, *same_name):
        if key in rest:
            conf[key] = rest.pop(key)
    for key in IGNORED:
        rest.pop(key, None)
    for key in sorted(rest):
        if key.startswith("ssl.") and not protocol.endswith("SSL"):
            continue  # a protocol without TLS leaves the SSL settings unused, as Kafka's client does
        warn(f"WARN The configuration '{key}' was supplied but isn't used by kactor's client (librdkafka).")
    return conf


def _protocol(rest: dict[str, str], prefix: str) -> str:
    protocol = rest.pop("security.protocol", "PLAINTEXT").strip().upper()
    if protocol not in PROTOCOLS:
        raise CliError(f"{prefix}Invalid value {protocol} for configuration security.protocol: String must be one "
                       f"of: {', '.join(PROTOCOLS)}")
    return protocol


def _sasl(rest: dict[str, str], protocol: str, prefix: str, tool: str) -> SaslClientConfig | None:
    """The mechanism and the JAAS login's credentials (SaslClientAuthenticator's), None without SASL."""
    mechanism = rest.pop("sasl.mechanism", "GSSAPI").strip()
    jaas = rest.pop("sasl.jaas.config", None)
    if not protocol.startswith("SASL_"):
        return None
    if mechanism not in SASL_MECHANISMS:
        raise cannot(prefix, tool, f"sasl.mechanism={mechanism} (kactor's clients do {', '.join(SASL_MECHANISMS)})")
    if jaas is None:
        raise CliError(f"{prefix}Could not find a 'KafkaClient' entry in the JAAS configuration. System property "
                       "'java.security.auth.login.config' is not set")
    try:
        entries = parse_jaas_config(jaas)
    except ValueError as e:
        raise CliError(f"{prefix}{e}") from None
    if len(entries) != 1:
        raise CliError(f"{prefix}JAAS config property contains {len(entries)} login modules, should be 1 module")
    entry = entries[0]
    wanted = PLAIN_LOGIN_MODULE if mechanism == "PLAIN" else SCRAM_LOGIN_MODULE
    if entry.login_module != wanted:
        raise cannot(prefix, tool, f"login module {entry.login_module} for {mechanism} (it takes {wanted}'s "
                                    "username and password)")
    return SaslClientConfig(mechanism, entry.options.get("username", ""), entry.options.get("password", ""))


def _ssl(rest: dict[str, str], prefix: str, tool: str) -> dict[str, Any]:
    conf: dict[str, Any] = {}
    truststore = rest.pop("ssl.truststore.location", None)
    truststore_type = rest.pop("ssl.truststore.type", "JKS").strip().upper()
    truststore_password = rest.pop("ssl.truststore.password", None)
    if truststore is not None:
        if truststore_type == "PEM":
            conf["ssl.ca.location"] = truststore
        elif truststore_type == "PKCS12":  # librdkafka reads CA certificates as PEM only: given as text
            conf["ssl.ca.pem"] = _pkcs12_certificates(truststore, truststore_password, prefix)
        else:
            raise cannot(prefix, tool, f"a {truststore_type} trust store (ssl.truststore.location); give the CA "
                                        "certificates as PKCS12 or as a PEM file with ssl.truststore.type=PEM")
    keystore = rest.pop("ssl.keystore.location", None)
    keystore_type = rest.pop("ssl.keystore.type", "JKS").strip().upper()
    keystore_password = rest.pop("ssl.keystore.password", None)
    key_password = rest.pop("ssl.key.password", None)
    if keystore is not None:
        if keystore_type == "PEM":  # the key and its certificate chain in one file
            conf["ssl.certificate.location"] = keystore
            conf["ssl.key.location"] = keystore
            if key_password:
                conf["ssl.key.password"] = key_password
        elif keystore_type == "PKCS12":
            conf["ssl.keystore.location"] = keystore
            if keystore_password:
                conf["ssl.keystore.password"] = keystore_password
        else:
            raise cannot(prefix, tool, f"a {keystore_type} key store (ssl.keystore.location); give a PEM or PKCS12 "
                                        "key store")
    algorithm = rest.pop("ssl.endpoint.identification.algorithm", "https").strip()
    conf["ssl.endpoint.identification.algorithm"] = "https" if algorithm.lower() == "https" else "none"
    for key in ("ssl.protocol", "ssl.enabled.protocols", "ssl.cipher.suites"):  # kafka_wire's context takes them
        rest.pop(key, None)
    return conf


def _pkcs12_certificates(path: str, password: str | None, prefix: str) -> str:
    """The certificates of a PKCS12 trust store as PEM text (DefaultSslEngineFactory.createTruststore's)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    try:
        with open(path, "rb") as f:
            data = f.read()
        store = pkcs12.load_pkcs12(data, password.encode() if password else None)
    except (OSError, ValueError) as e:
        text = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise CliError(f"{prefix}Failed to load SSL truststore {path} of type PKCS12: {text}") from None
    certs = [c.certificate for c in store.additional_certs] + ([store.cert.certificate] if store.cert else [])
    if not certs:
        raise CliError(f"{prefix}Failed to load SSL truststore {path} of type PKCS12: no certificate in it")
    return "".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in certs)


def wire_ssl_context(props: Mapping[str, str], prefix: str = "") -> ssl.SSLContext:
    """The TLS context kafka_wire connects with: the brokers' own client context (edges/net/tls_context.py) from the
    file's ``ssl.*`` settings, with Kafka's client defaults for the protocol versions."""
    from edges.net.tls_context import TlsConfigError, client_context

    values: dict[str, Any] = {k: v for k, v in props.items() if k.startswith("ssl.")}
    values.setdefault("ssl.truststore.type", "JKS")
    values.setdefault("ssl.keystore.type", "JKS")
    values.setdefault("ssl.endpoint.identification.algorithm", "https")
    values["ssl.protocol"] = values.get("ssl.protocol") or DEFAULT_SSL_PROTOCOL
    for key, default in (("ssl.enabled.protocols", DEFAULT_ENABLED_PROTOCOLS), ("ssl.cipher.suites", ())):
        given = values.get(key)
        values[key] = tuple(p.strip() for p in given.split(",") if p.strip()) if given else default
    try:
        return client_context(values)
    except TlsConfigError as e:
        raise CliError(f"{prefix}{e}") from None


def client_properties(props: Mapping[str, str], warn: Out, prefix: str = "", tool: str = "kactor",
                      same_name: Iterable[str] = ()) -> ClientProperties:
    """The file's settings for both clients (`librdkafka_config`, `wire_ssl_context`, the SASL login)."""
    conf = librdkafka_config(props, warn, prefix, tool, same_name)
    protocol = conf["security.protocol"]
    sasl = _sasl(dict(props), protocol, prefix, tool)
    context = wire_ssl_context(props, prefix) if protocol.endswith("SSL") else None
    return ClientProperties(protocol, conf, context, sasl)


def load(path: str | None, option: str, warn: Out, prefix: str = "", tool: str = "kactor",
         same_name: Iterable[str] = ()) -> ClientProperties:
    """Utils.loadProps of the file given with ``option`` (PLAINTEXT without one); a missing file is one line."""
    if path is None:
        return PLAINTEXT
    text = read_text_file(path, f"{option} file")
    return client_properties(parse_properties(text, path), warn, prefix, tool, same_name)


def command_config(path: str | None, warn: Out, prefix: str = "", tool: str = "kactor") -> dict[str, Any]:
    """Utils.loadProps of --command-config, mapped to librdkafka."""
    if path is None:
        return {"security.protocol": "PLAINTEXT"}
    text = read_text_file(path, "--command-config file")
    return librdkafka_config(parse_properties(text, path), warn, prefix, tool)


@attrs.frozen(slots=True)
class Servers:
    """Where a tool connects (``--bootstrap-server``, checked) and how (its client properties file)."""

    bootstrap: str
    props: ClientProperties = PLAINTEXT

    def librdkafka(self, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """librdkafka's settings for this file, then ``extra`` (a tool's own, which win)."""
        return {**self.props.librdkafka, **(extra or {})}
