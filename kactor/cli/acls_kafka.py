"""The client of ``kafka-acls.sh --bootstrap-server`` (Kafka 2.6.3's AclCommand.AdminClientService, driven by
kactor/cli/cmd_acls.py with the same options and output as the ZooKeeper way): CreateAcls / DeleteAcls /
DescribeAcls as Kafka's Admin calls them.

The client is librdkafka's AdminClient (confluent-kafka) for CreateAcls and DeleteAcls; DescribeAcls is sent by
kactor.cli.kafka_wire, as Kafka's AdminClient sends it (v1 to any broker): librdkafka 2.16 answers a DescribeAcls
refused as a whole (SECURITY_DISABLED from a broker without an authorizer) with an empty list, and the tool printed
nothing and exited 0 where AclCommand fails with the SecurityDisabledException.

``--command-config`` is read as every kactor tool reads a
Kafka client properties file (kactor/cli/client_properties.py), its refusals prefixed as AclCommand prints an error.
A ``--delegation-token`` resource is refused too (librdkafka's ACL binding has no DelegationToken resource type).
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
from kactor.cli import CliError, client_properties
from kactor.cli.client_properties import ClientProperties, UnsupportedClientConfigError
from kactor.cli.kafka_support import java_exception
from kactor.kafka_clients import DEFAULT_TIMEOUT_S, KafkaClientError, admin_client, error_text, parse_bootstrap

Out = Callable[[str], None]
ERROR = "Error while executing ACL command: "
DESCRIBE_ACLS = (29, 1)  # the first version with the pattern type (2.6's client sends v2: the same fields, flexible)
TOOL = "kactor acls --bootstrap-server"


def librdkafka_config(props: Mapping[str, str], warn: Out) -> dict[str, Any]:
    """Kafka AdminClient properties → librdkafka's (kactor/cli/client_properties.py), refused as AclCommand fails."""
    return client_properties.librdkafka_config(props, warn, ERROR, TOOL)


def load_command_config(path: str | None, warn: Out) -> ClientProperties:
    """Utils.loadProps of --command-config, for librdkafka and for the login check, read once."""
    return client_properties.load(path, "--command-config", warn, ERROR, TOOL)


def check_login(bootstrap_server: str, props: ClientProperties) -> None:
    """The file's login tried once before the ACL requests (kactor/cli/kafka_support.py's ``servers`` says why):
    a refusal is AclCommand's one error line, at once."""
    from kactor.cli import kafka_wire

    if props.protocol == "PLAINTEXT":
        return
    try:
        kafka_wire.check_login(kafka_wire.Servers(parse_bootstrap(bootstrap_server), props), DEFAULT_TIMEOUT_S)
    except ValueError:
        return  # a malformed --bootstrap-server: AdminAcls says so
    except kafka_wire.AuthenticationError as e:
        raise CliError(f"{ERROR}{e}") from None


def _cannot(what: str) -> UnsupportedClientConfigError:
    return client_properties.cannot(ERROR, TOOL, what)


def refuse_delegation_tokens(resource_types: Iterable[ResourceType]) -> None:
    if ResourceType.DELEGATION_TOKEN in set(resource_types):
        raise _cannot("ACLs on a DelegationToken resource (librdkafka has no such resource type)")


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

    def __init__(self, bootstrap_server: str, config: Mapping[str, Any], timeout_s: float = DEFAULT_TIMEOUT_S,
                 props: ClientProperties | None = None) -> None:
        from kactor.cli.client_properties import PLAINTEXT, Servers

        try:
            bootstrap = parse_bootstrap(bootstrap_server)
        except ValueError as e:
            raise CliError(f"{ERROR}Invalid url in bootstrap.servers: {e}") from None
        self.client = admin_client(bootstrap, "kactor-acls", config)
        self.servers = Servers(bootstrap, props if props is not None else PLAINTEXT)
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
        """``describeAcls(filter).values().get()``: DescribeAcls v1 (kafka_wire); a refusal (its top-level error:
        SECURITY_DISABLED, CLUSTER_AUTHORIZATION_FAILED, ...) is AclCommand's line with the Java exception made of
        the broker's error and message."""
        from kactor.cli import kafka_wire
        from kactor.cli.java_errors import java_exception_text

        refuse_delegation_tokens([f.pattern_filter.resource_type])
        p, e = f.pattern_filter, f.entry_filter
        body = {"resource_type_filter": p.resource_type.code, "resource_name_filter": p.name,
                "pattern_type_filter": p.pattern_type.code, "principal_filter": e.principal, "host_filter": e.host,
                "operation": e.operation.code, "permission_type": e.permission_type.code}
        try:
            answer = kafka_wire.node_request(self.servers, None, *DESCRIBE_ACLS, body, self.timeout_s)
        except KafkaClientError as err:
            raise CliError(f"{ERROR}org.apache.kafka.common.errors.TimeoutException: {err}") from None
        if answer["error_code"]:
            raise CliError(ERROR + java_exception_text(answer["error_code"], answer.get("error_message")))
        return [AclBinding(ResourcePattern(ResourceType.from_code(r["resource_type"]), r["resource_name"],
                                           PatternType.from_code(r["pattern_type"])),
                           AccessControlEntry(a["principal"], a["host"], AclOperation.from_code(a["operation"]),
                                              AclPermissionType.from_code(a["permission_type"])))
                for r in answer["resources"] for a in r["acls"]]
