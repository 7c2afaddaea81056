"""SASL listeners in kactor/config.py: sasl.enabled.mechanisms (its listener override), each mechanism's
listener.name.<l>.<mechanism>.sasl.jaas.config as Kafka's JaasContext.loadServerContext finds it, the mechanisms
refused at start-up (GSSAPI, 2.6's default, and OAUTHBEARER), and a SASL_SSL listener's TLS context."""

from __future__ import annotations

import logging

import pytest

from core.security.sasl_client import SaslClientConfig
from kactor.config import ConfigError, build_config
from tests.support.tls_certs import STORE_PASSWORD, Pki, make_pki

BASE = {"broker.id": "1", "zookeeper.connect": "127.0.0.1:2181"}
PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
SASL_LISTENERS = {"listeners": "PLAINTEXT://127.0.0.1:9092,SASL_PLAINTEXT://127.0.0.1:9093",
                  "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
                  "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
                  "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": SCRAM_JAAS}


def error(**settings: str) -> str:
    with pytest.raises(ConfigError) as e:
        build_config({**BASE, **settings})
    return str(e.value)


def test_a_sasl_plaintext_listener_with_plain_and_scram() -> None:
    config = build_config({**BASE, **SASL_LISTENERS})
    (name, sasl), = config.listener_sasl_configs().items()
    assert name == "SASL_PLAINTEXT" and sasl.mechanisms == ("PLAIN", "SCRAM-SHA-512")
    assert sasl.jaas["PLAIN"].options["user_alice"] == "alice-secret"
    assert sasl.jaas["SCRAM-SHA-512"].login_module == "org.apache.kafka.common.security.scram.ScramLoginModule"
    assert config.listener_tls_contexts() == {}
    # the JAAS configs are passwords: hidden in the trace header, not noted as unknown keys
    shown = config.non_default()
    assert shown["listener.name.sasl_plaintext.plain.sasl.jaas.config"] == "[hidden]"
    assert all("jaas" not in line for _, line in config.startup_notes())


def test_a_listeners_own_mechanisms() -> None:
    config = build_config({**BASE, **SASL_LISTENERS, "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN"})
    assert config.listener_sasl("SASL_PLAINTEXT").mechanisms == ("PLAIN",)


def test_kafkas_default_mechanism_gssapi_is_refused_with_a_hint() -> None:
    assert error(listeners="SASL_PLAINTEXT://127.0.0.1:9093,PLAINTEXT://127.0.0.1:9092") == (
        "listener SASL_PLAINTEXT: sasl.enabled.mechanisms=GSSAPI: SASL mechanism GSSAPI is refused: kactor serves "
        "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (note that Kafka's default is GSSAPI: set sasl.enabled.mechanisms)")


def test_oauthbearer_and_unknown_mechanisms_are_refused() -> None:
    assert "SASL mechanism OAUTHBEARER is refused" in error(**{**SASL_LISTENERS,
                                                             "sasl.enabled.mechanisms": "PLAIN,OAUTHBEARER"})
    assert "listener.name.sasl_plaintext.sasl.enabled.mechanisms=DIGEST-MD5: unknown SASL mechanism DIGEST-MD5" in \
        error(**{**SASL_LISTENERS, "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "DIGEST-MD5"})


def test_a_mechanism_without_its_jaas_config_is_refused() -> None:
    settings = dict(SASL_LISTENERS)
    del settings["listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config"]
    assert error(**settings) == (
        "listener SASL_PLAINTEXT: listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config is not set: could not "
        "find a JAAS configuration for SASL mechanism SCRAM-SHA-512 (kactor reads no JAAS file: "
        "java.security.auth.login.config is not supported)")


def test_the_unprefixed_jaas_config_is_ignored_as_kafkas_broker_ignores_it() -> None:
    settings = dict(SASL_LISTENERS)
    del settings["listener.name.sasl_plaintext.plain.sasl.jaas.config"]
    assert "plain.sasl.jaas.config is not set" in error(**settings, **{"sasl.jaas.config": PLAIN_JAAS})
    config = build_config({**BASE, **SASL_LISTENERS, "sasl.jaas.config": PLAIN_JAAS})
    assert (logging.INFO, "sasl.jaas.config=[hidden]: Server config sasl.jaas.config should be prefixed with SASL "
                          "mechanism name, ignoring config (a broker's listener takes "
                          "listener.name.<l>.<mechanism>.sasl.jaas.config, as Kafka)") in config.startup_notes()


def test_a_malformed_or_mismatched_jaas_config_names_its_key() -> None:
    assert error(**{**SASL_LISTENERS, "listener.name.sasl_plaintext.plain.sasl.jaas.config":
                    "org.apache.kafka.common.security.plain.PlainLoginModule required user_alice=x"}) == (
        "listener SASL_PLAINTEXT: listener.name.sasl_plaintext.plain.sasl.jaas.config: JAAS config entry not "
        "terminated by semi-colon")
    assert "login module org.apache.kafka.common.security.scram.ScramLoginModule cannot serve SASL mechanism " \
           "PLAIN" in error(**{**SASL_LISTENERS, "listener.name.sasl_plaintext.plain.sasl.jaas.config": SCRAM_JAAS})


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def test_a_sasl_ssl_listener_gets_its_tls_context(pki: Pki) -> None:
    config = build_config({**BASE, "listeners": "PLAINTEXT://127.0.0.1:9092,SASL_SSL://127.0.0.1:9094",
                           "sasl.enabled.mechanisms": "SCRAM-SHA-512",
                           "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
                           "ssl.keystore.type": "PKCS12", "ssl.keystore.location": pki.server.p12,
                           "ssl.keystore.password": STORE_PASSWORD})
    assert set(config.listener_tls_contexts()) == {"SASL_SSL"}
    assert set(config.listener_sasl_configs()) == {"SASL_SSL"}
    assert "listener SASL_SSL: ssl.keystore.location is not set" in error(**{
        "listeners": "PLAINTEXT://127.0.0.1:9092,SASL_SSL://127.0.0.1:9094", "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS})


INTER_BROKER = {"listeners": "INTERNAL://127.0.0.1:9092,CLIENTS://127.0.0.1:9093",
                "listener.security.protocol.map": "INTERNAL:SASL_PLAINTEXT,CLIENTS:PLAINTEXT",
                "inter.broker.listener.name": "INTERNAL", "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
                "sasl.mechanism.inter.broker.protocol": "PLAIN",
                "listener.name.internal.plain.sasl.jaas.config": PLAIN_JAAS,
                "listener.name.internal.scram-sha-512.sasl.jaas.config": SCRAM_JAAS}


def test_a_sasl_inter_broker_listener_authenticates_with_its_jaas_user() -> None:
    """ChannelBuilders.clientChannelBuilder: sasl.mechanism.inter.broker.protocol, and the username / password of
    that mechanism's login module on the inter-broker listener."""
    config = build_config({**BASE, **INTER_BROKER})
    assert config.inter_broker_sasl_client() == SaslClientConfig("PLAIN", "admin", "admin-secret")
    assert build_config({**BASE, **{k: v for k, v in INTER_BROKER.items() if k != "listener.security.protocol.map"},
                         "listener.security.protocol.map": "INTERNAL:PLAINTEXT,CLIENTS:SASL_PLAINTEXT",
                         "listener.name.clients.plain.sasl.jaas.config": PLAIN_JAAS,
                         "listener.name.clients.scram-sha-512.sasl.jaas.config": SCRAM_JAAS}
                        ).inter_broker_sasl_client() is None


def test_a_sasl_inter_broker_listener_needs_its_mechanism_and_user() -> None:
    assert error(**{**INTER_BROKER, "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-256"}) == (
        "requirement failed: sasl.mechanism.inter.broker.protocol must be included in sasl.enabled.mechanisms when "
        "SASL is used for inter-broker communication (sasl.mechanism.inter.broker.protocol=SCRAM-SHA-256, the "
        "inter-broker listener INTERNAL enables PLAIN,SCRAM-SHA-512)")
    assert error(**{**INTER_BROKER, "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512"}) == (
        "inter-broker listener INTERNAL: listener.name.internal.scram-sha-512.sasl.jaas.config has no username and "
        "password: the brokers authenticate to each other with them (SCRAM-SHA-512)")
    # 2.6's default mechanism, GSSAPI, is not among those kactor serves
    assert "sasl.mechanism.inter.broker.protocol=GSSAPI" in error(
        **{k: v for k, v in INTER_BROKER.items() if k != "sasl.mechanism.inter.broker.protocol"})


def test_a_sasl_ssl_inter_broker_listener_gets_tls_and_sasl(pki: Pki) -> None:
    config = build_config({**BASE, **INTER_BROKER,
                           "listener.security.protocol.map": "INTERNAL:SASL_SSL,CLIENTS:PLAINTEXT",
                           "ssl.keystore.type": "PKCS12", "ssl.keystore.location": pki.server.p12,
                           "ssl.keystore.password": STORE_PASSWORD, "ssl.truststore.type": "PEM",
                           "ssl.truststore.location": pki.ca_pem})
    assert config.inter_broker_tls_context() is not None
    assert config.inter_broker_sasl_client() == SaslClientConfig("PLAIN", "admin", "admin-secret")
    assert build_config({**BASE, **INTER_BROKER}).inter_broker_tls_context() is None  # SASL_PLAINTEXT


def test_connections_max_reauth_ms_per_mechanism_of_a_listener() -> None:
    """SaslChannelBuilder's connectionsMaxReauthMsByMechanism: the listener's mechanism prefix, then the listener's,
    then the broker's; 2.6's default is 0 (sessions never expire)."""
    assert build_config({**BASE, **SASL_LISTENERS}).listener_sasl("SASL_PLAINTEXT").max_reauth_ms == {
        "PLAIN": 0, "SCRAM-SHA-512": 0}
    config = build_config({**BASE, **SASL_LISTENERS, "connections.max.reauth.ms": "60000",
                           "listener.name.sasl_plaintext.scram-sha-512.connections.max.reauth.ms": "5000"})
    assert config.listener_sasl("SASL_PLAINTEXT").max_reauth_ms == {"PLAIN": 60000, "SCRAM-SHA-512": 5000}
    config = build_config({**BASE, **SASL_LISTENERS, "listener.name.sasl_plaintext.connections.max.reauth.ms": "7"})
    assert config.listener_sasl("SASL_PLAINTEXT").max_reauth_ms == {"PLAIN": 7, "SCRAM-SHA-512": 7}
    # acted on now: no start-up note saying otherwise
    config = build_config({**BASE, **SASL_LISTENERS, "connections.max.reauth.ms": "60000"})
    assert all("connections.max.reauth.ms" not in line for _, line in config.startup_notes())
