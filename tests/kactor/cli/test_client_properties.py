"""A Kafka client properties file as kactor's tools connect with it (kactor/cli/client_properties.py): the PKCS12 trust
store ``kactor cluster --security`` writes handed to librdkafka as PEM text, a consumer's and a producer's own
settings, and kafka_wire's connections made as the file says — TLS checked against the trust store and the host
name, then SASL PLAIN or SCRAM against the brokers' own server-side authenticator, a refused login one line."""

from __future__ import annotations

import socket
import ssl
import struct
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.security import scram
from core.security.sasl import (
    SASL_HANDSHAKE,
    ListenerSasl,
    SaslServerAuthenticator,
    StepKind,
    parse_jaas_config,
)
from edges.net.sasl import evaluate_frame
from edges.net.tls_context import server_context
from kactor.cli import CliError, kafka_wire, main
from kactor.cli.client_properties import (
    CONSUMER_SAME_NAME,
    PLAINTEXT,
    client_properties,
    librdkafka_config,
    load,
)
from kactor.kafka_clients import KafkaClientError
from protocol.framing import api_versions_body, decode_request, encode_response
from tests.support.tls_certs import KEY_PASSWORD, STORE_PASSWORD, make_pki

PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="pw";'
SERVER_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="pw" '
               'user_admin="pw";')


def scram_jaas(password: str) -> str:
    return f'org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" password="{password}";'


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return make_pki(tmp_path_factory.mktemp("pki"))


def test_a_pkcs12_trust_store_reaches_librdkafka_as_pem_text(pki: Any) -> None:
    conf = librdkafka_config({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
                              "sasl.jaas.config": PLAIN_JAAS, "ssl.truststore.type": "PKCS12",
                              "ssl.truststore.location": pki.ca_p12, "ssl.truststore.password": STORE_PASSWORD},
                             print)
    assert conf == {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.username": "admin",
                    "sasl.password": "pw", "ssl.ca.pem": Path(pki.ca_pem).read_text(),
                    "ssl.endpoint.identification.algorithm": "https"}


def test_a_trust_store_that_cannot_be_read_is_one_line(pki: Any, tmp_path: Path) -> None:
    props = {"security.protocol": "SSL", "ssl.truststore.type": "PKCS12", "ssl.truststore.location": pki.ca_p12,
             "ssl.truststore.password": "wrong"}
    with pytest.raises(CliError, match=r"^Failed to load SSL truststore .*ca\.p12 of type PKCS12: ") as e:
        librdkafka_config(props, print)
    assert "\n" not in str(e.value)
    with pytest.raises(CliError, match="No such file or directory"):
        librdkafka_config({**props, "ssl.truststore.location": str(tmp_path / "none.p12")}, print)


def test_a_consumers_file_keeps_its_consumer_settings_and_warns_of_the_rest() -> None:
    warnings: list[str] = []
    conf = librdkafka_config({"group.id": "g", "auto.offset.reset": "earliest", "key.deserializer": "x.Y",
                              "client.id": "me"}, warnings.append, same_name=CONSUMER_SAME_NAME)
    assert conf == {"security.protocol": "PLAINTEXT", "group.id": "g", "auto.offset.reset": "earliest",
                    "client.id": "me"}
    assert warnings == ["WARN The configuration 'key.deserializer' was supplied but isn't used by kactor's client "
                        "(librdkafka)."]


def test_the_wire_side_of_a_file(pki: Any) -> None:
    props = client_properties({"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                               "sasl.jaas.config": scram_jaas("s3"), "ssl.truststore.type": "PEM",
                               "ssl.truststore.location": pki.ca_pem, "ssl.endpoint.identification.algorithm": ""},
                              print)
    assert props.protocol == "SASL_SSL"
    assert (props.sasl.mechanism, props.sasl.username, props.sasl.password) == ("SCRAM-SHA-512", "bob", "s3")
    assert props.ssl_context is not None and props.ssl_context.check_hostname is False
    assert props.ssl_context.verify_mode == ssl.CERT_REQUIRED
    plain = client_properties({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                               "sasl.jaas.config": PLAIN_JAAS}, print)
    assert plain.ssl_context is None and plain.sasl is not None
    assert load(None, "--command-config", print) is PLAINTEXT


# -- kafka_wire against a broker's own server side ------------------------------------------------------------------
def _frame(conn: socket.socket) -> bytes:
    (size,) = struct.unpack(">i", kafka_wire.recv_exact(conn, 4))
    return kafka_wire.recv_exact(conn, size)


class FakeBroker:
    """One listener: TLS when given a context, SASL with the brokers' SaslServerAuthenticator, then ApiVersions
    answered for each request; ``principals`` are those authenticated."""

    def __init__(self, tls: ssl.SSLContext | None, sasl: ListenerSasl | None) -> None:
        self.tls, self.sasl = tls, sasl
        self.credentials = {m: scram.generate_credential(m, "bob-secret", 4096) for m in scram.ScramMechanism}
        self.principals: list[str] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = self.listener.getsockname()[:2]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            try:
                self._one(conn)
            except (OSError, ConnectionError, ssl.SSLError):
                pass
            finally:
                conn.close()

    def _one(self, conn: socket.socket) -> None:
        if self.tls is not None:
            conn = self.tls.wrap_socket(conn, server_side=True)
        if self.sasl is not None:
            auth = SaslServerAuthenticator(self.sasl, lambda user, m: self.credentials[m] if user == "bob" else None)
            while not auth.complete:
                req = decode_request(_frame(conn))
                key, version, corr = (req.header.request_api_key, req.header.request_api_version,
                                      req.header.correlation_id)
                step = auth.frame(key, version, req.body)
                if step.kind is StepKind.ANSWER:
                    conn.sendall(encode_response(SASL_HANDSHAKE, version, corr, step.body))
                elif step.kind is StepKind.EVALUATE:
                    answer = evaluate_frame(auth, step.token, version, corr, "peer")
                    if answer is not None:
                        conn.sendall(answer)
                    if auth.failed:
                        return
                else:
                    return
            self.principals.append(auth.principal)
        while True:
            req = decode_request(_frame(conn))
            conn.sendall(encode_response(18, req.header.request_api_version, req.header.correlation_id,
                                         api_versions_body()))

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def broker(request: pytest.FixtureRequest, pki: Any) -> Iterator[FakeBroker]:
    tls_on, sasl_on = request.param
    tls = server_context({"ssl.keystore.type": "PKCS12", "ssl.keystore.location": pki.server.p12,
                          "ssl.keystore.password": STORE_PASSWORD, "ssl.protocol": "TLSv1.3",
                          "ssl.enabled.protocols": ("TLSv1.2", "TLSv1.3"), "ssl.cipher.suites": ()}) \
        if tls_on else None
    sasl = ListenerSasl(("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"),
                        {"PLAIN": parse_jaas_config(SERVER_JAAS)[0]}) if sasl_on else None
    b = FakeBroker(tls, sasl)
    yield b
    b.close()


def _api_versions(b: FakeBroker, props: dict[str, str], host: str = "127.0.0.1") -> dict[str, Any]:
    return kafka_wire.exchange((host, b.address[1]), 18, 2, {}, 5.0, client_properties(props, print))


@pytest.mark.parametrize("broker", [(False, True)], indirect=True)
@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_kafka_wire_logs_in_then_sends_its_request(broker: FakeBroker, mechanism: str) -> None:
    jaas = PLAIN_JAAS if mechanism == "PLAIN" else scram_jaas("bob-secret")
    answer = _api_versions(broker, {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism,
                                    "sasl.jaas.config": jaas})
    assert answer["error_code"] == 0 and any(k["api_key"] == 47 for k in answer["api_keys"])
    assert broker.principals == ["User:admin" if mechanism == "PLAIN" else "User:bob"]


@pytest.mark.parametrize("broker", [(False, True)], indirect=True)
def test_a_refused_login_is_one_authentication_failed_line(broker: FakeBroker) -> None:
    for mechanism, jaas in (("PLAIN", PLAIN_JAAS.replace('"pw"', '"guess"')),
                            ("SCRAM-SHA-256", scram_jaas("guess"))):
        with pytest.raises(KafkaClientError) as refused:
            _api_versions(broker, {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism,
                                   "sasl.jaas.config": jaas})
        text = str(refused.value)
        assert text.startswith(f"Authentication failed with 127.0.0.1:{broker.address[1]} ({mechanism}): ")
        assert "\n" not in text
    assert broker.principals == []
    with pytest.raises(kafka_wire.AuthenticationError, match=r"^Authentication failed"):  # not "no bootstrap ..."
        kafka_wire.metadata(kafka_wire.Servers(f"127.0.0.1:{broker.address[1]}", client_properties(
            {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
             "sasl.jaas.config": PLAIN_JAAS.replace('"pw"', '"guess"')}, print)), 5.0)


@pytest.mark.parametrize("broker", [(True, True)], indirect=True)
def test_sasl_ssl_with_the_pkcs12_trust_store_and_the_host_name_checked(broker: FakeBroker, pki: Any) -> None:
    props = {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": PLAIN_JAAS,
             "ssl.truststore.type": "PKCS12", "ssl.truststore.location": pki.ca_p12,
             "ssl.truststore.password": STORE_PASSWORD}
    for host in ("127.0.0.1", "localhost"):  # both in the certificate's names
        assert _api_versions(broker, props, host)["error_code"] == 0
    assert broker.principals == ["User:admin", "User:admin"]
    other_ca = str(Path(pki.ca_p12).with_name("other-ca.p12"))  # make_pki's second CA: not the server's
    with pytest.raises(kafka_wire.AuthenticationError, match=r"^SSL handshake with 127\.0\.0\.1:\d+ failed: "):
        _api_versions(broker, {**props, "ssl.truststore.location": other_ca})
    assert broker.principals == ["User:admin", "User:admin"]


@pytest.mark.parametrize("broker", [(True, False)], indirect=True)
def test_mutual_tls_with_a_pem_key_store(broker: FakeBroker, pki: Any) -> None:
    assert _api_versions(broker, {"security.protocol": "SSL", "ssl.truststore.type": "PEM",
                                  "ssl.truststore.location": pki.ca_pem, "ssl.keystore.type": "PEM",
                                  "ssl.keystore.location": pki.client.pem, "ssl.key.password": KEY_PASSWORD}
                         )["error_code"] == 0


@pytest.mark.parametrize("broker", [(True, False)], indirect=True)
def test_plaintext_to_a_tls_port_fails_in_bounded_time(broker: FakeBroker) -> None:
    with pytest.raises(KafkaClientError, match=r"^request to 127\.0\.0\.1:\d+ failed"):
        kafka_wire.exchange(broker.address, 18, 2, {}, 3.0)


# -- the options --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ["topics", "--zookeeper", "127.0.0.1:1", "--command-config", "f", "--list"],
    ["configs", "--zookeeper", "127.0.0.1:1", "--command-config", "f", "--describe", "--entity-type", "topics"],
    ["reassign-partitions", "--zookeeper", "127.0.0.1:1", "--command-config", "f", "--verify",
     "--reassignment-json-file", "x"],
    ["produce", "--zookeeper", "127.0.0.1:1", "--producer.config", "f", "--topic", "t", "--count", "1"],
    ["preferred-replica-election", "--zookeeper", "127.0.0.1:1", "--admin.config", "f"],
])
def test_the_file_without_bootstrap_server_is_a_usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    option = argv[3]
    assert f"The {option} option can only be used with --bootstrap-server option" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["topics", "--list"],
    ["configs", "--describe", "--entity-type", "topics"],
    ["consumer-groups", "--list"],
    ["delete-records", "--offset-json-file", "x"],
    ["log-dirs", "--describe"],
    ["reassign-partitions", "--list"],
    ["leader-election", "--election-type", "preferred", "--all-topic-partitions"],
    ["consume", "--topic", "t"],
    ["produce", "--topic", "t"],
    ["preferred-replica-election"],
])
def test_a_file_that_cannot_be_read_is_one_line(argv: list[str], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    option = {"leader-election": "--admin.config", "preferred-replica-election": "--admin.config",
              "consume": "--consumer.config",
              "produce": "--producer.config"}.get(argv[0], "--command-config")
    missing = str(tmp_path / "client.properties")
    assert main([argv[0], "--bootstrap-server", "127.0.0.1:1", option, missing, *argv[1:]]) == 1
    err = capsys.readouterr().err
    assert err == f"kactor {argv[0]}: Cannot read {option} file {missing}: No such file or directory\n"


@pytest.mark.parametrize("argv", [[], ["--zookeeper", "127.0.0.1:1", "--bootstrap-server", "127.0.0.1:2"]])
def test_preferred_replica_election_takes_exactly_one_way_in(argv: list[str], capsys: pytest.CaptureFixture[str]
                                                             ) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["preferred-replica-election", *argv])
    assert exit_.value.code == 2
    assert "Exactly one of '[bootstrap-server]' or '[zookeeper]' must be provided" in capsys.readouterr().err


@pytest.mark.parametrize("broker", [(False, True)], indirect=True)
def test_a_tool_tries_the_files_login_once_first(broker: FakeBroker, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """librdkafka retries a refused login until the tool's timeout; Kafka's client, and so kactor's tools, fail at
    once with the broker's refusal (the fake broker answers nothing but the login and ApiVersions)."""
    f = tmp_path / "client.properties"
    f.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                 f"sasl.jaas.config={PLAIN_JAAS.replace('pw', 'guess')}\n")
    port = broker.address[1]
    assert main(["topics", "--bootstrap-server", f"127.0.0.1:{port}", "--command-config", str(f), "--list"]) == 1
    assert capsys.readouterr().err == (
        f"kactor topics: Authentication failed with 127.0.0.1:{port} (PLAIN): SaslAuthenticate failed with error "
        "58: Authentication failed: Invalid username or password\n")
    assert main(["acls", "--bootstrap-server", f"127.0.0.1:{port}", "--command-config", str(f), "--list"]) == 1
    assert capsys.readouterr().err == (
        f"kactor acls: Error while executing ACL command: Authentication failed with 127.0.0.1:{port} (PLAIN): "
        "SaslAuthenticate failed with error 58: Authentication failed: Invalid username or password\n")
    assert broker.principals == []


def test_no_broker_answering_a_secured_file_is_the_tools_own_error(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The login tried first says nothing when no broker takes the connection: the tool's requests report it."""
    from zk_bridge.server import free_port

    f = tmp_path / "client.properties"
    f.write_text(f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config={PLAIN_JAAS}\n")
    port = free_port()
    assert main(["log-dirs", "--bootstrap-server", f"127.0.0.1:{port}", "--command-config", str(f), "--describe",
                 "--timeout", "500"]) == 1
    assert capsys.readouterr().err == (
        f"kactor log-dirs: no bootstrap server answered (request to 127.0.0.1:{port} failed: Connection refused): "
        "is a broker listening there with SASL_PLAINTEXT?\n")
