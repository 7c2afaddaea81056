"""The SCRAM CredentialCache (core/security/credential_cache.py) as Kafka 2.6.3's CredentialProvider fills it: a
user's config sets one credential per SCRAM mechanism, a mechanism missing from it removes that credential, a
credential that does not parse keeps the one before; the SASL SCRAM server authenticates from it, with no lookup
anywhere else (so without ZooKeeper)."""

from __future__ import annotations

import logging

import pytest

from core.security import scram
from core.security.credential_cache import CredentialCache, scram_entries
from core.security.sasl import ListenerSasl, SaslServerAuthenticator, parse_jaas_config
from core.security.sasl_client import SaslClient, SaslClientConfig
from core.security.scram import SaslAuthenticationException, ScramMechanism

SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"


def credential_text(mechanism: ScramMechanism, password: str) -> str:
    """What ``kactor configs --add-config 'SCRAM-SHA-...=[password=...]'`` stores (4096 iterations)."""
    return scram.scram_credential_config(mechanism, f"password={password}")


def authenticate(cache: CredentialCache, user: str, password: str, mechanism: ScramMechanism = SHA512) -> str:
    """A whole SCRAM exchange of kactor's own client against the SASL server reading ``cache``: the principal."""
    name = mechanism.mechanism_name
    sasl = ListenerSasl((name,), {name: parse_jaas_config(SCRAM_JAAS)[0]})
    server = SaslServerAuthenticator(sasl, cache)
    server.frame(17, 1, {"mechanism": name})
    client = SaslClient(SaslClientConfig(name, user, password))
    token = client.first()
    while not server.complete:
        challenge = server.evaluate(server.frame(36, 1, {"auth_bytes": token}).token)
        token = client.next(challenge)  # type: ignore[assignment]
    return server.principal


def test_a_users_config_sets_and_removes_each_mechanisms_credential() -> None:
    cache = CredentialCache()
    both = {"SCRAM-SHA-256": credential_text(SHA256, "a"), "SCRAM-SHA-512": credential_text(SHA512, "b"),
            "consumer_byte_rate": "1024"}
    cache.update_credentials("alice", both)
    assert cache("alice", SHA256) == scram.credential_from_string(both["SCRAM-SHA-256"])
    assert cache.get("alice", SHA512) == scram.credential_from_string(both["SCRAM-SHA-512"])
    assert cache("bob", SHA512) is None
    # --delete-config SCRAM-SHA-256: the notification's config lacks it, so that credential goes, the other stays
    cache.update_credentials("alice", {"SCRAM-SHA-512": both["SCRAM-SHA-512"]})
    assert cache("alice", SHA256) is None and cache("alice", SHA512) is not None
    cache.update_credentials("alice", {})  # the user's znode deleted: an empty config
    assert cache.users(SHA256) == cache.users(SHA512) == frozenset()


def test_a_credential_that_does_not_parse_keeps_the_one_before(caplog: pytest.LogCaptureFixture) -> None:
    cache = CredentialCache()
    good = credential_text(SHA512, "secret")
    cache.update_credentials("alice", {"SCRAM-SHA-512": good})
    with caplog.at_level(logging.ERROR, "kactor.security"):
        cache.update_credentials("alice", {"SCRAM-SHA-512": "salt=oops"})
    assert cache("alice", SHA512) == scram.credential_from_string(good)
    assert "Cannot update the SCRAM-SHA-512 credential of user alice: Credentials not valid: salt=oops" in caplog.text


def test_scram_entries_are_the_mechanisms_of_a_config_in_kafkas_order() -> None:
    config = {"producer_byte_rate": "1", "SCRAM-SHA-512": "x", "SCRAM-SHA-256": "y"}
    assert scram_entries(config) == (("SCRAM-SHA-256", "y"), ("SCRAM-SHA-512", "x"))
    assert scram_entries({"request_percentage": "50"}) == ()


def test_the_scram_server_authenticates_from_the_cache_alone() -> None:
    """The cache is the SASL server's whole credential lookup: a user in it logs in (both mechanisms), a wrong
    password and a user removed from it fail with Kafka's message."""
    cache = CredentialCache()
    cache.update_credentials("alice", {"SCRAM-SHA-256": credential_text(SHA256, "alice-secret"),
                                       "SCRAM-SHA-512": credential_text(SHA512, "alice-secret")})
    assert authenticate(cache, "alice", "alice-secret") == "User:alice"
    assert authenticate(cache, "alice", "alice-secret", SHA256) == "User:alice"
    with pytest.raises(SaslAuthenticationException, match="invalid credentials with SASL mechanism SCRAM-SHA-512"):
        authenticate(cache, "alice", "guess")
    cache.update_credentials("alice", {})
    with pytest.raises(SaslAuthenticationException, match="invalid credentials with SASL mechanism SCRAM-SHA-512"):
        authenticate(cache, "alice", "alice-secret")
