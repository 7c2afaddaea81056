"""SSL listeners' configuration (kactor/config.py + edges/net/tls_context.py): Kafka 2.6.3's ssl.* names and
defaults, the listener.name.<l>.ssl.* overrides (KafkaConfig.valuesWithPrefixOverride), and the start-up errors of
a listener whose server context cannot be made, each naming its key."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from kactor.config import ConfigError, build_config
from tests.support.tls_certs import KEY_PASSWORD, STORE_PASSWORD, Pki, make_pki

BASE = {"broker.id": "1", "zookeeper.connect": "127.0.0.1:2181",
        "listeners": "PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9093"}


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def p12(pki: Pki, prefix: str = "") -> dict[str, str]:
    return {f"{prefix}ssl.keystore.type": "PKCS12", f"{prefix}ssl.keystore.location": pki.server.p12,
            f"{prefix}ssl.keystore.password": STORE_PASSWORD}


def error(settings: dict[str, str]) -> str:
    with pytest.raises(ConfigError) as e:
        build_config({**BASE, **settings})
    return str(e.value)


def test_kafkas_ssl_defaults(pki: Pki) -> None:
    plain = {**BASE, "listeners": "PLAINTEXT://127.0.0.1:9092"}
    assert (build_config(plain)["ssl.keystore.type"], build_config(plain)["ssl.truststore.type"]) == ("JKS", "JKS")
    config = build_config({**BASE, **p12(pki)})
    assert (config["ssl.protocol"], config["ssl.enabled.protocols"]) == ("TLSv1.3", ("TLSv1.2", "TLSv1.3"))
    assert config["ssl.client.auth"] == "none"
    assert config["ssl.endpoint.identification.algorithm"] == "https"
    assert config["ssl.principal.mapping.rules"] == "DEFAULT"
    ctx = config.listener_tls_contexts()["SSL"]
    assert (ctx.minimum_version, ctx.maximum_version) == (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3)
    assert ctx.verify_mode == ssl.CERT_NONE
    assert set(config.listener_tls_contexts()) == {"SSL"}  # the PLAINTEXT listener has none
    assert config.startup_notes() == []  # the keys kactor acts on are not noted


def test_an_ssl_listener_without_a_keystore_is_refused() -> None:
    assert error({}) == ("listener SSL: ssl.keystore.location is not set: an SSL listener needs the broker's "
                         "certificate and private key (ssl.keystore.type PKCS12 or PEM)")


def test_a_bad_keystore_path_names_the_key(pki: Pki, tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.p12")
    assert error({**p12(pki), "ssl.keystore.location": missing}) == (
        f"listener SSL: Failed to load SSL store {missing} (ssl.keystore.location): No such file or directory")


def test_a_wrong_keystore_password_is_a_start_up_error(pki: Pki) -> None:
    message = error({**p12(pki), "ssl.keystore.password": "wrong"})
    assert message.startswith(f"listener SSL: Failed to load SSL keystore {pki.server.p12} of type PKCS12 "
                              "(ssl.keystore.location): ")


def test_kafkas_keystore_password_rules(pki: Pki) -> None:
    no_password = {k: v for k, v in p12(pki).items() if k != "ssl.keystore.password"}
    assert error(no_password) == ("listener SSL: ssl.keystore.password: SSL key store is specified, but key store "
                                  "password is not specified.")
    assert error({"ssl.keystore.type": "PEM", "ssl.keystore.location": pki.server.pem,
                  "ssl.keystore.password": "x"}) == (
        "listener SSL: ssl.keystore.password: SSL key store password cannot be specified with PEM format, only key "
        "password may be specified")
    assert error({"ssl.truststore.password": "x", **p12(pki)}) == (
        "listener SSL: ssl.truststore.password: SSL trust store is not specified, but trust store password is "
        "specified.")


def test_the_default_jks_type_reads_a_pkcs12_file_as_java_does(pki: Pki) -> None:
    """ssl.keystore.type and ssl.truststore.type default to JKS, under which Java 9+ reads a PKCS12 file too
    (keystore.type.compat): a Kafka user's PKCS12 stores work without naming their type. A type kactor cannot read
    is refused by name."""
    config = build_config({**BASE, "ssl.keystore.location": pki.server.p12, "ssl.keystore.password": STORE_PASSWORD,
                           "ssl.truststore.location": pki.ca_p12, "ssl.truststore.password": STORE_PASSWORD,
                           "ssl.client.auth": "required"})
    assert config["ssl.keystore.type"] == "JKS" and config.listener_tls_contexts()["SSL"].verify_mode == \
        ssl.CERT_REQUIRED
    assert error({"ssl.keystore.type": "BKS", "ssl.keystore.location": pki.server.p12,
                  "ssl.keystore.password": STORE_PASSWORD}) == (
        "listener SSL: ssl.keystore.type=BKS: kactor reads JKS, JCEKS, PKCS12 and PEM key stores")


def test_a_pem_keystore_with_its_key_password(pki: Pki) -> None:
    settings = {"ssl.keystore.type": "PEM", "ssl.keystore.location": pki.server.pem}
    assert error({**settings, "ssl.key.password": "wrong"}).startswith(
        f"listener SSL: Failed to load SSL keystore {pki.server.pem} of type PEM (ssl.keystore.location): ")
    config = build_config({**BASE, **settings, "ssl.key.password": KEY_PASSWORD})
    assert config.listener_tls_contexts()["SSL"].verify_mode == ssl.CERT_NONE


@pytest.mark.parametrize(("auth", "mode"), [("none", ssl.CERT_NONE), ("requested", ssl.CERT_OPTIONAL),
                                            ("required", ssl.CERT_REQUIRED)])
@pytest.mark.parametrize("store", ["PEM", "PKCS12"])
def test_client_auth_and_the_truststore(pki: Pki, auth: str, mode: int, store: str) -> None:
    trust = ({"ssl.truststore.type": "PEM", "ssl.truststore.location": pki.ca_pem} if store == "PEM" else
             {"ssl.truststore.type": "PKCS12", "ssl.truststore.location": pki.ca_p12,
              "ssl.truststore.password": STORE_PASSWORD})
    ctx = build_config({**BASE, **p12(pki), **trust, "ssl.client.auth": auth}).listener_tls_contexts()["SSL"]
    assert ctx.verify_mode == mode
    assert [c["subject"] for c in ctx.get_ca_certs()] == [((("organizationName", "kactor tests"),),
                                                           (("commonName", "kactor test CA"),))]


def test_listener_prefixed_keys_override_the_plain_ones(pki: Pki) -> None:
    settings = {**BASE, "listeners": "PLAINTEXT://127.0.0.1:9092,CLIENTS://127.0.0.1:9093,ADMINS://127.0.0.1:9094",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CLIENTS:SSL,ADMINS:SSL",
                **p12(pki), "ssl.client.auth": "none",
                "listener.name.admins.ssl.client.auth": "required",
                "listener.name.admins.ssl.truststore.type": "PEM",
                "listener.name.admins.ssl.truststore.location": pki.ca_pem,
                "listener.name.admins.ssl.enabled.protocols": "TLSv1.3"}
    config = build_config(settings)
    contexts = config.listener_tls_contexts()
    assert contexts["CLIENTS"].verify_mode == ssl.CERT_NONE
    assert contexts["CLIENTS"].minimum_version == ssl.TLSVersion.TLSv1_2
    assert contexts["ADMINS"].verify_mode == ssl.CERT_REQUIRED
    assert contexts["ADMINS"].minimum_version == ssl.TLSVersion.TLSv1_3
    assert config.unknown == () and config.startup_notes() == []
    # an override's error names the listener's key
    assert error({**settings, "listener.name.admins.ssl.keystore.location": "/nonexistent/x.p12"}) == (
        "listener ADMINS: Failed to load SSL store /nonexistent/x.p12 (listener.name.admins.ssl.keystore.location): "
        "No such file or directory")
    assert error({**settings, "listener.name.admins.ssl.client.auth": "maybe"}) == (
        "Invalid value maybe for configuration ssl.client.auth: String must be one of: required, requested, none")


def test_unknown_protocols_and_principal_rules_are_refused(pki: Pki) -> None:
    assert error({**p12(pki), "ssl.enabled.protocols": "TLSv1.2,SSLv3"}) == (
        "listener SSL: Invalid value TLSv1.2,SSLv3 for configuration ssl.enabled.protocols: kactor's TLS knows "
        "TLSv1, TLSv1.1, TLSv1.2, TLSv1.3")
    assert error({**p12(pki), "ssl.principal.mapping.rules": "RULE:^CN=(.*?),.*$/$1/,DEFAULT"}) == (
        "ssl.principal.mapping.rules=RULE:^CN=(.*?),.*$/$1/,DEFAULT is refused: kactor maps a certificate's "
        "distinguished name by the DEFAULT rule only")


def test_an_ssl_inter_broker_listener_gives_the_brokers_own_connections_a_client_context(pki: Pki) -> None:
    assert build_config({**BASE, **p12(pki)}).inter_broker_tls_context() is None  # PLAINTEXT
    trust = {"ssl.truststore.type": "PEM", "ssl.truststore.location": pki.ca_pem}
    config = build_config({**BASE, **p12(pki), **trust, "security.inter.broker.protocol": "SSL"})
    ctx = config.inter_broker_tls_context()
    assert ctx is not None and ctx.check_hostname and ctx.verify_mode == ssl.CERT_REQUIRED  # 2.6's https default
    assert [c["subject"][1] for c in ctx.get_ca_certs()] == [(("commonName", "kactor test CA"),)]
    # by name, with the listener's own settings: no host name check, its key store shown to peers
    named = {**BASE, "listeners": "PLAINTEXT://127.0.0.1:9092,INTERNAL://127.0.0.1:9093",
             "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SSL",
             "inter.broker.listener.name": "INTERNAL", **p12(pki, "listener.name.internal."), **trust,
             "listener.name.internal.ssl.endpoint.identification.algorithm": ""}
    ctx = build_config(named).inter_broker_tls_context()
    assert ctx is not None and not ctx.check_hostname and ctx.verify_mode == ssl.CERT_REQUIRED
    assert error({**named, "listener.name.internal.ssl.endpoint.identification.algorithm": "ldaps"}) == (
        "inter-broker listener INTERNAL: listener.name.internal.ssl.endpoint.identification.algorithm=ldaps: only "
        "https (a host name check) or an empty value (none) is known")


def test_the_registration_advertises_the_ssl_listener(pki: Pki) -> None:
    import json

    from kactor.broker_process import registration_json

    reg = json.loads(registration_json(build_config({**BASE, **p12(pki)}), 1))
    assert reg["endpoints"] == ["PLAINTEXT://127.0.0.1:9092", "SSL://127.0.0.1:9093"]
    assert reg["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL"}
    assert (reg["host"], reg["port"]) == ("127.0.0.1", 9092)


def test_a_trace_header_shows_no_store_password(pki: Pki) -> None:
    config = build_config({**BASE, **p12(pki), "kactor.metrics.port": "9999",
                           "listener.name.ssl.ssl.key.password": "k", "listener.name.ssl.ssl.client.auth": "required"})
    shown = config.non_default()
    assert shown["ssl.keystore.password"] == "[hidden]" and shown["listener.name.ssl.ssl.key.password"] == "[hidden]"
    assert shown["listener.name.ssl.ssl.client.auth"] == "required" and shown["kactor.metrics.port"] == 9999
    assert shown["ssl.keystore.location"] == pki.server.p12
