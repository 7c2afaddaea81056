"""``kactor acls --bootstrap-server``'s client settings: --command-config's Java AdminClient properties mapped to
librdkafka's, and a clear refusal of what librdkafka cannot do (JKS stores, GSSAPI, other login modules)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from kactor.cli import CliError, main
from kactor.cli.acls_kafka import (
    UnsupportedClientConfigError,
    from_ck_binding,
    librdkafka_config,
    load_command_config,
    to_ck_binding,
)

PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="s3cr=t";'
SCRAM_JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" password="pw";'


def test_sasl_plain_and_scram_become_librdkafkas_username_and_password() -> None:
    warnings: list[str] = []
    assert librdkafka_config({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                              "sasl.jaas.config": PLAIN_JAAS, "client.id": "me"}, warnings.append) == {
        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "admin",
        "sasl.password": "s3cr=t", "client.id": "me"}
    assert librdkafka_config({"security.protocol": "sasl_ssl", "sasl.mechanism": "SCRAM-SHA-512",
                              "sasl.jaas.config": SCRAM_JAAS, "ssl.truststore.type": "PEM",
                              "ssl.truststore.location": "/ca.pem", "ssl.endpoint.identification.algorithm": ""},
                             warnings.append) == {
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "bob",
        "sasl.password": "pw", "ssl.ca.location": "/ca.pem", "ssl.endpoint.identification.algorithm": "none"}
    assert warnings == []


def test_ssl_stores() -> None:
    assert librdkafka_config({"security.protocol": "SSL", "ssl.truststore.type": "PEM",
                              "ssl.truststore.location": "/ca.pem", "ssl.keystore.type": "PEM",
                              "ssl.keystore.location": "/me.pem", "ssl.key.password": "kp"}, print) == {
        "security.protocol": "SSL", "ssl.ca.location": "/ca.pem", "ssl.certificate.location": "/me.pem",
        "ssl.key.location": "/me.pem", "ssl.key.password": "kp", "ssl.endpoint.identification.algorithm": "https"}
    assert librdkafka_config({"security.protocol": "SSL", "ssl.keystore.type": "PKCS12",
                              "ssl.keystore.location": "/me.p12", "ssl.keystore.password": "ksp"}, print) == {
        "security.protocol": "SSL", "ssl.keystore.location": "/me.p12", "ssl.keystore.password": "ksp",
        "ssl.endpoint.identification.algorithm": "https"}


@pytest.mark.parametrize(("props", "message"), [
    ({"security.protocol": "SSL", "ssl.truststore.location": "/t.jks"}, "a JKS trust store"),
    ({"security.protocol": "SSL", "ssl.keystore.location": "/k.jks", "ssl.keystore.type": "JKS"}, "a JKS key store"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI", "sasl.jaas.config": PLAIN_JAAS},
     "sasl.mechanism=GSSAPI"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": SCRAM_JAAS},
     "login module org.apache.kafka.common.security.scram.ScramLoginModule for PLAIN"),
])
def test_what_librdkafka_cannot_do_is_refused_saying_so(props: dict[str, str], message: str) -> None:
    with pytest.raises(UnsupportedClientConfigError) as refused:
        librdkafka_config(props, print)
    text = str(refused.value)
    assert text.startswith("Error while executing ACL command: " + message)
    assert text.endswith("kactor acls --bootstrap-server uses librdkafka (confluent-kafka), which cannot do that")


def test_other_refusals_and_warnings() -> None:
    with pytest.raises(CliError, match="Invalid value TLS for configuration security.protocol"):
        librdkafka_config({"security.protocol": "TLS"}, print)
    with pytest.raises(CliError, match="Could not find a 'KafkaClient' entry in the JAAS configuration"):
        librdkafka_config({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, print)
    warnings: list[str] = []
    assert librdkafka_config({"retries": "3", "ssl.truststore.location": "/x.jks"}, warnings.append) == {
        "security.protocol": "PLAINTEXT"}
    assert warnings == ["WARN The configuration 'retries' was supplied but isn't used by kactor's client "
                        "(librdkafka)."]


def test_the_command_config_file_is_read_as_java_properties(tmp_path: Path) -> None:
    f = tmp_path / "admin.properties"
    f.write_text("# admin\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism: PLAIN\n"
                 "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n"
                 '    username="admin" password="pw";\n')
    assert dict(load_command_config(str(f), print).librdkafka) == {
        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "admin",
        "sasl.password": "pw"}
    assert dict(load_command_config(None, print).librdkafka) == {"security.protocol": "PLAINTEXT"}


def test_a_missing_command_config_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["acls", "--bootstrap-server", "127.0.0.1:1", "--command-config", str(tmp_path / "none"),
                 "--list"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kactor acls: Cannot read --command-config file") and err.count("\n") == 1


def test_bindings_cross_to_confluent_kafka_and_back() -> None:
    binding = AclBinding(ResourcePattern(ResourceType.TRANSACTIONAL_ID, "tx-", PatternType.PREFIXED),
                         AccessControlEntry("User:alice", "10.0.0.1", AclOperation.IDEMPOTENT_WRITE,
                                            AclPermissionType.DENY))
    ck = to_ck_binding(binding)
    assert (ck.restype.value, ck.name, ck.resource_pattern_type.value, ck.principal, ck.host, ck.operation.value,
            ck.permission_type.value) == (5, "tx-", 4, "User:alice", "10.0.0.1", 12, 2)
    assert from_ck_binding(ck) == binding


# -- DescribeAcls over kafka_wire (librdkafka answers a refused DescribeAcls with an empty list) -------------------
class _Broker:
    """kafka_wire.node_request answering DescribeAcls with ``answer``; the requests it got."""

    def __init__(self, answer: dict) -> None:
        self.answer = answer
        self.requests: list[tuple[int, int, dict]] = []

    def __call__(self, servers: object, node_id: object, api_key: int, version: int, body: dict,
                 timeout_s: float) -> dict:
        self.requests.append((api_key, version, body))
        return self.answer


def _acls(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], answer: dict,
          *argv: str) -> tuple[int, str, str, _Broker]:
    from kactor.cli import kafka_wire

    broker = _Broker(answer)
    monkeypatch.setattr(kafka_wire, "node_request", broker)
    code = main(["acls", "--bootstrap-server", "127.0.0.1:9", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err, broker


def test_list_on_a_broker_without_an_authorizer_fails_as_acl_command(monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """KafkaApis.handleDescribeAcls without an authorizer: SECURITY_DISABLED, "No Authorizer is configured on the
    broker"; AclCommand: "Error while executing ACL command: <the SecurityDisabledException>", exit 1."""
    code, out, err, broker = _acls(monkeypatch, capsys, {
        "throttle_time_ms": 0, "error_code": 54, "error_message": "No Authorizer is configured on the broker",
        "resources": []}, "--list")
    assert (code, out) == (1, "")
    assert err == ("kactor acls: Error while executing ACL command: org.apache.kafka.common.errors."
                   "SecurityDisabledException: No Authorizer is configured on the broker\n")
    assert broker.requests == [(29, 1, {"resource_type_filter": 1, "resource_name_filter": None,
                                        "pattern_type_filter": 1, "principal_filter": None, "host_filter": None,
                                        "operation": 1, "permission_type": 1})]


def test_list_prints_the_brokers_acls(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err, broker = _acls(monkeypatch, capsys, {
        "throttle_time_ms": 0, "error_code": 0, "error_message": None, "resources": [
            {"resource_type": 2, "resource_name": "orders", "pattern_type": 3, "acls": [
                {"principal": "User:alice", "host": "*", "operation": 3, "permission_type": 3}]}]},
        "--list", "--topic", "orders")
    assert (code, err) == (0, "")
    assert out == ("Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`: "
                   "\n \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW) \n\n")
    assert [(b["resource_type_filter"], b["resource_name_filter"], b["pattern_type_filter"])
            for _, _, b in broker.requests] == [(2, "orders", 3)]
