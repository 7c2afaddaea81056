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
