"""The client of ``kafka-acls.sh --bootstrap-server`` (Kafka 2.6.3's AclCommand.AdminClientService, driven by
kactor/cli/cmd_acls.py with the same options and output as the ZooKeeper way): CreateAcls / DeleteAcls /
DescribeAcls as Kafka's Admin calls them.

The client is librdkafka's AdminClient (confluent-kafka). ``--command-config`` is read as Kafka's AdminClient reads its
property file, and the Java client settings are mapped to librdkafka's: ``security.protocol``; ``sasl.mechanism``
PLAIN / SCRAM-SHA-256 / SCRAM-SHA-512 with ``sasl.jaas.config``'s PlainLoginModule / ScramLoginModule ``username`` and
``password``; ``ssl.truststore.location`` and ``ssl.keystore.location`` of type PEM (librdkafka's CA and client
certificate files; a PEM keystore holds the key and its certificate) or PKCS12 (a keystore only, which librdkafka
reads itself), their passwords, ``ssl.key.password`` and ``ssl.endpoint.identification.algorithm``; ``client.id``.
What librdkafka cannot do is refused with a message saying so: a JKS store (or a PKCS12 trust store), GSSAPI or
OAUTHBEARER, a JAAS login module other than those two, and a ``--delegation-token`` resource (librdkafka's ACL
binding has no DelegationToken resource type).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from core.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from core.security.sasl import PLAIN_LOGIN_MODULE, SCRAM_LOGIN_MODULE, parse_jaas_config
from kactor.cli import CliError
from kactor.cli.kafka_support import java_exception
from kactor.cli.support import read_text_file
from kactor.config import parse_properties
from kactor.kafka_clients import DEFAULT_TIMEOUT_S, KafkaClientError, admin_client, error_text, parse_bootstrap

Out = Callable[[str], None]
ERROR = "Error while executing ACL command: "
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
# Java client settings librdkafka takes under the same name
SAME_NAME = ("client.id",)
IGNORED = ("bootstrap.servers",)  # AclCommand sets it from --bootstrap-server


class UnsupportedClientConfigError(CliError):
    """A --command-config setting librdkafka cannot honour."""


def _cannot(what: str) -> UnsupportedClientConfigError:
    return UnsupportedClientConfigError(f"{ERROR}{what}: kactor acls --bootstrap-server uses librdkafka "
                                        f"(confluent-kafka), which cannot do that")


def librdkafka_config(props: Mapping[str, str], warn: Out) -> dict[str, Any]:
    """Kafka AdminClient properties → librdkafka's. A setting librdkafka has no equivalent for is refused
    (`UnsupportedClientConfigError`) when it changes how the client connects, and otherwise warned of and left out,
    as Kafka's client warns of a setting it does not know."""
    conf: dict[str, Any] = {}
    rest = dict(props)
    protocol = rest.pop("security.protocol", "PLAINTEXT").strip().upper()
    if protocol not in PROTOCOLS:
        raise CliError(f"{ERROR}Invalid value {protocol} for configuration security.protocol: String must be one of: "
                       f"{', '.join(PROTOCOLS)}")
    conf["security.protocol"] = protocol
    mechanism = rest.pop("sasl.mechanism", "GSSAPI").strip()
    jaas = rest.pop("sasl.jaas.config", None)
    if protocol.startswith("SASL_"):
        if mechanism not in SASL_MECHANISMS:
            raise _cannot(f"sasl.mechanism={mechanism} (kactor's clients do {', '.join(SASL_MECHANISMS)})")
        if jaas is None:
            raise CliError(f"{ERROR}Could not find a 'KafkaClient' entry in the JAAS configuration. System property "
                           "'java.security.auth.login.config' is not set")
        try:
            entries = parse_jaas_config(jaas)
        except ValueError as e:
            raise CliError(f"{ERROR}{e}") from None
        if len(entries) != 1:
            raise CliError(f"{ERROR}JAAS config property contains {len(entries)} login modules, should be 1 module")
        entry = entries[0]
        wanted = PLAIN_LOGIN_MODULE if mechanism == "PLAIN" else SCRAM_LOGIN_MODULE
        if entry.login_module != wanted:
            raise _cannot(f"login module {entry.login_module} for {mechanism} (it takes {wanted}'s username and "
                          "password)")
        conf.update({"sasl.mechanism": mechanism, "sasl.username": entry.options.get("username", ""),
                     "sasl.password": entry.options.get("password", "")})
    if protocol.endswith("SSL"):
        conf.update(_ssl(rest))
    for key in SAME_NAME:
        if key in rest:
            conf[key] = rest.pop(key)
    for key in IGNORED:
        rest.pop(key, None)
    for key in sorted(rest):
        if key.startswith("ssl.") and not protocol.endswith("SSL"):
            continue  # a protocol without TLS leaves the SSL settings unused, as Kafka's client does
        warn(f"WARN The configuration '{key}' was supplied but isn't used by kactor's client (librdkafka).")
    return conf


def _ssl(rest: dict[str, str]) -> dict[str, Any]:
    conf: dict[str, Any] = {}
    truststore = rest.pop("ssl.truststore.location", None)
    truststore_type = rest.pop("ssl.truststore.type", "JKS").strip().upper()
    rest.pop("ssl.truststore.password", None)  # a PEM trust store has none
    if truststore is not None:
        if truststore_type != "PEM":
            raise _cannot(f"a {truststore_type} trust store (ssl.truststore.location); give the CA certificates as "
                          "a PEM file with ssl.truststore.type=PEM")
        conf["ssl.ca.location"] = truststore
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
            raise _cannot(f"a {keystore_type} key store (ssl.keystore.location); give a PEM or PKCS12 key store")
    algorithm = rest.pop("ssl.endpoint.identification.algorithm", "https").strip()
    conf["ssl.endpoint.identification.algorithm"] = "https" if algorithm.lower() == "https" else "none"
    return conf


def refuse_delegation_tokens(resource_types: Iterable[ResourceType]) -> None:
    if ResourceType.DELEGATION_TOKEN in set(resource_types):
        raise _cannot("ACLs on a DelegationToken resource (librdkafka has no such resource type)")


def command_config(path: str | None, warn: Out) -> dict[str, Any]:
    """Utils.loadProps of --command-config, mapped to librdkafka."""
    if path is None:
        return {"security.protocol": "PLAINTEXT"}
    return librdkafka_config(parse_properties(read_text_file(path, "--command-config file"), path), warn)


# -- kactor's ACL values <-> confluent-kafka's -----------------------------------------------------------------------
def _ck_binding(cls: Any, resource_type: ResourceType, name: str | None, pattern_type: PatternType,
                principal: str | None, host: str | None, operation: AclOperation,
                permission: AclPermissionType) -> Any:
    from confluent_kafka.admin import AclOperation as CkOp
    from confluent_kafka.admin import AclPermissionType as CkPerm
    from confluent_kafka.admin import ResourcePatternType as CkPattern
    from confluent_kafka.admin import ResourceType as CkType

    refuse_delegation_tokens([resource_type])
    return cls(CkType(resource_type.code), name, CkPattern(pattern_type.code), principal, host,
               CkOp(operation.code), CkPerm(permission.code))


def to_ck_binding(binding: AclBinding) -> Any:
    from confluent_kafka.admin import AclBinding as CkBinding

    p, e = binding.pattern, binding.entry
    return _ck_binding(CkBinding, p.resource_type, p.name, p.pattern_type, e.principal, e.host, e.operation,
                       e.permission_type)


def to_ck_filter(f: AclBindingFilter) -> Any:
    from confluent_kafka.admin import AclBindingFilter as CkFilter

    p, e = f.pattern_filter, f.entry_filter
    return _ck_binding(CkFilter, p.resource_type, p.name, p.pattern_type, e.principal, e.host, e.operation,
                       e.permission_type)


def from_ck_binding(b: Any) -> AclBinding:
    return AclBinding(ResourcePattern(ResourceType.from_code(int(b.restype.value)), b.name,
                                      PatternType.from_code(int(b.resource_pattern_type.value))),
                      AccessControlEntry(b.principal, b.host, AclOperation.from_code(int(b.operation.value)),
                                         AclPermissionType.from_code(int(b.permission_type.value))))


# -- the Admin calls of AclCommand.AdminClientService ---------------------------------------------------------------
class AdminAcls:
    """The Admin calls AclCommand makes: ``createAcls(...).all().get()`` and the others, an error raised as
    CliError with AclCommand's "Error while executing ACL command: <the Java exception>"."""

    def __init__(self, bootstrap_server: str, config: Mapping[str, Any], timeout_s: float = DEFAULT_TIMEOUT_S
                 ) -> None:
        try:
            bootstrap = parse_bootstrap(bootstrap_server)
        except ValueError as e:
            raise CliError(f"{ERROR}Invalid url in bootstrap.servers: {e}") from None
        self.client = admin_client(bootstrap, "kactor-acls", config)
        self.timeout_s = timeout_s

    def _wait(self, futures: Iterable[Any]) -> list[Any]:
        from confluent_kafka import KafkaException

        try:
            return [f.result(timeout=self.timeout_s) for f in futures]
        except KafkaException as e:
            error = e.args[0] if e.args else None
            if error is not None and hasattr(error, "code"):
                raise CliError(ERROR + java_exception(error)) from None
            raise CliError(ERROR + error_text(e)) from None
        except (TimeoutError, KafkaClientError) as e:
            raise CliError(f"{ERROR}org.apache.kafka.common.errors.TimeoutException: {e}") from None

    def create(self, bindings: list[AclBinding]) -> None:
        self._wait(self.client.create_acls([to_ck_binding(b) for b in bindings]).values())

    def delete(self, filters: list[AclBindingFilter]) -> None:
        self._wait(self.client.delete_acls([to_ck_filter(f) for f in filters]).values())

    def describe(self, f: AclBindingFilter) -> list[AclBinding]:
        (found,) = self._wait([self.client.describe_acls(to_ck_filter(f))])
        return [from_ck_binding(b) for b in found]
