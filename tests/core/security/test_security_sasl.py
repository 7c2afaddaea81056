"""The SASL server's pure part (core.security.sasl): Kafka's JaasConfig parsing, PLAIN (RFC 4616) against the JAAS
users, and SaslServerAuthenticator's state machine — the KIP-43 order (ApiVersions, SaslHandshake, tokens), an
unknown mechanism, requests out of turn, the RFC 7677 SCRAM-SHA-256 exchange through it, a wrong nonce, a wrong
password, and Kafka's messages for each failure."""

from __future__ import annotations

import base64

import pytest

from core.security import scram
from core.security.sasl import (
    ILLEGAL_SASL_STATE,
    UNSUPPORTED_SASL_MECHANISM,
    JaasEntry,
    ListenerSasl,
    SaslServerAuthenticator,
    SaslState,
    StepKind,
    may_begin_reauthentication,
    parse_jaas_config,
    plain_authenticate,
    server_jaas_entry,
    session_expired,
)
from core.security.scram import SaslAuthenticationException, SaslException, ScramMechanism

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"

# RFC 7677 section 3
SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
CLIENT_FINAL = (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


# -- JaasConfig ------------------------------------------------------------------------------------------------------
def test_jaas_config_of_plain_users() -> None:
    (entry,) = parse_jaas_config(PLAIN_JAAS)
    assert entry == JaasEntry("org.apache.kafka.common.security.plain.PlainLoginModule", "REQUIRED",
                              {"username": "admin", "password": "admin-secret", "user_admin": "admin-secret",
                               "user_alice": "alice-secret"})
    assert "secret" not in repr(entry)


def test_jaas_config_tokens_as_javas_stream_tokenizer() -> None:
    """Bare words, single quotes, escapes in quotes, comments, line breaks; several entries."""
    text = ("a.B Optional k1=v1 k2='x y' /* c */ k3=\"q\\\"uote\" // rest\n k4=\"semi;colon\";\n"
            "c.D sufficient;")
    assert parse_jaas_config(text) == (
        JaasEntry("a.B", "OPTIONAL", {"k1": "v1", "k2": "x y", "k3": 'q"uote', "k4": "semi;colon"}),
        JaasEntry("c.D", "SUFFICIENT", {}))


@pytest.mark.parametrize(("text", "message"), [
    ("", "Login module not specified in JAAS config"),
    ("a.B", "Login module control flag not specified in JAAS config"),
    ("a.B mandatory;", "Invalid login module control flag 'mandatory' in JAAS config"),
    ("a.B required user_x;", "Value not specified for key 'user_x' in JAAS config"),
    ("a.B required user_x=;", "Value not specified for key 'user_x' in JAAS config"),
    ("a.B required user_x=1", "JAAS config entry not terminated by semi-colon"),
])
def test_jaas_config_errors_are_kafkas(text: str, message: str) -> None:
    with pytest.raises(ValueError) as e:
        parse_jaas_config(text)
    assert str(e.value) == message


def test_a_server_jaas_config_takes_one_module_of_the_mechanism() -> None:
    assert server_jaas_entry(SCRAM_JAAS, "SCRAM-SHA-512").options == {}
    with pytest.raises(ValueError, match="JAAS config property contains 2 login modules, should be 1 module"):
        server_jaas_entry(SCRAM_JAAS + SCRAM_JAAS, "SCRAM-SHA-256")
    with pytest.raises(ValueError, match="cannot serve SASL mechanism PLAIN"):
        server_jaas_entry(SCRAM_JAAS, "PLAIN")


# -- PlainSaslServer -------------------------------------------------------------------------------------------------
USERS = parse_jaas_config(PLAIN_JAAS)[0].options


def test_plain_authenticates_a_jaas_user() -> None:
    assert plain_authenticate(USERS, b"\0alice\0alice-secret") == "alice"
    assert plain_authenticate(USERS, b"alice\0alice\0alice-secret") == "alice"


@pytest.mark.parametrize(("token", "error", "message"), [
    (b"\0alice\0wrong", SaslAuthenticationException, "Authentication failed: Invalid username or password"),
    (b"\0mallory\0x", SaslAuthenticationException, "Authentication failed: Invalid username or password"),
    (b"bob\0alice\0alice-secret", SaslAuthenticationException,
     "Authentication failed: Client requested an authorization id that is different from username"),
    (b"alice\0alice-secret", SaslException, "Invalid SASL/PLAIN response: expected 3 tokens, got 2"),
    (b"\0\0x", SaslException, "Authentication failed: username not specified"),
    (b"\0alice\0", SaslException, "Authentication failed: password not specified"),
])
def test_plain_refusals(token: bytes, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as e:
        plain_authenticate(USERS, token)
    assert type(e.value) is error and str(e.value) == message


# -- SaslServerAuthenticator -----------------------------------------------------------------------------------------
SASL = ListenerSasl(("PLAIN", "SCRAM-SHA-256"), {"PLAIN": parse_jaas_config(PLAIN_JAAS)[0],
                                                 "SCRAM-SHA-256": parse_jaas_config(SCRAM_JAAS)[0]})
RFC_CREDENTIAL = scram.generate_credential(ScramMechanism.SCRAM_SHA_256, "pencil", 4096, SALT)


class Lookup:
    """The ZooKeeper credential lookup, recording its calls."""

    def __init__(self, store: dict[str, scram.ScramCredential]) -> None:
        self.store = store
        self.calls: list[tuple[str, ScramMechanism]] = []

    def __call__(self, user: str, mechanism: ScramMechanism) -> scram.ScramCredential | None:
        self.calls.append((user, mechanism))
        return self.store.get(user)


def authenticator(credentials: dict[str, scram.ScramCredential] | None = None) -> SaslServerAuthenticator:
    store = {"user": RFC_CREDENTIAL} if credentials is None else credentials
    return SaslServerAuthenticator(SASL, Lookup(store), nonce=lambda: SERVER_NONCE)


def handshake(auth: SaslServerAuthenticator, mechanism: str, version: int = 1) -> None:
    step = auth.frame(18, 3, {})
    assert step.kind is StepKind.DISPATCH and auth.state is SaslState.HANDSHAKE_REQUEST
    step = auth.frame(17, version, {"mechanism": mechanism})
    assert step.kind is StepKind.ANSWER and step.body == {"error_code": 0, "mechanisms": ["PLAIN", "SCRAM-SHA-256"]}
    assert auth.state is SaslState.AUTHENTICATE and auth.kafka_headers is (version >= 1)


def test_plain_after_apiversions_and_a_v1_handshake() -> None:
    auth = authenticator()
    handshake(auth, "PLAIN")
    step = auth.frame(36, 2, {"auth_bytes": b"\0alice\0alice-secret"})
    assert step.kind is StepKind.EVALUATE and step.token == b"\0alice\0alice-secret"
    assert auth.evaluate(step.token) == b""
    assert auth.complete and auth.principal == "User:alice"


def test_the_handshake_may_come_first() -> None:
    auth = authenticator()
    assert auth.frame(17, 1, {"mechanism": "PLAIN"}).kind is StepKind.ANSWER
    assert auth.state is SaslState.AUTHENTICATE


def test_rfc_7677_scram_sha_256_through_the_authenticator() -> None:
    auth = authenticator()
    handshake(auth, "SCRAM-SHA-256")
    assert auth.evaluate(auth.frame(36, 1, {"auth_bytes": CLIENT_FIRST}).token) == SERVER_FIRST
    assert not auth.complete and auth.state is SaslState.AUTHENTICATE
    assert auth.lookup.calls == [("user", ScramMechanism.SCRAM_SHA_256)]  # type: ignore[attr-defined]
    assert auth.evaluate(auth.frame(36, 1, {"auth_bytes": CLIENT_FINAL}).token) == SERVER_FINAL
    assert auth.complete and auth.principal == "User:user"


def test_raw_tokens_after_a_v0_handshake() -> None:
    auth = authenticator()
    handshake(auth, "SCRAM-SHA-256", version=0)
    step = auth.raw(CLIENT_FIRST)
    assert step.kind is StepKind.EVALUATE and auth.evaluate(step.token) == SERVER_FIRST
    assert auth.evaluate(auth.raw(CLIENT_FINAL).token) == SERVER_FINAL and auth.complete


SCRAM_FAILED = ("Authentication failed during authentication due to invalid credentials with SASL mechanism "
                "SCRAM-SHA-256")


@pytest.mark.parametrize(("credential", "final", "message"), [
    # the wrong password: the proof does not give the stored key
    (scram.generate_credential(ScramMechanism.SCRAM_SHA_256, "pencil2", 4096, SALT), CLIENT_FINAL, SCRAM_FAILED),
    # the client-final message with another nonce than the one its proof was made with
    (RFC_CREDENTIAL, CLIENT_FINAL.replace(b"$k0,", b"$k1,"), SCRAM_FAILED),
])
def test_scram_failures_give_kafkas_message(credential: scram.ScramCredential, final: bytes, message: str) -> None:
    auth = authenticator({"user": credential})
    handshake(auth, "SCRAM-SHA-256")
    auth.evaluate(CLIENT_FIRST)
    with pytest.raises(SaslAuthenticationException) as e:
        auth.evaluate(final)
    assert str(e.value) == message and auth.failed and auth.username == ""


def test_an_unknown_scram_user_fails_at_the_first_message() -> None:
    auth = authenticator({})
    handshake(auth, "SCRAM-SHA-256")
    with pytest.raises(SaslAuthenticationException, match="^" + SCRAM_FAILED + "$"):
        auth.evaluate(CLIENT_FIRST)
    assert auth.failed


def test_a_token_auth_extension_finds_no_credential() -> None:
    """kactor has no delegation tokens: tokenauth=true is never a user's own password."""
    auth = authenticator()
    handshake(auth, "SCRAM-SHA-256")
    with pytest.raises(SaslAuthenticationException):
        auth.evaluate(CLIENT_FIRST + b",tokenauth=true")
    assert auth.lookup.calls == []  # type: ignore[attr-defined]


def test_plain_wrong_password_keeps_plains_message() -> None:
    auth = authenticator()
    handshake(auth, "PLAIN")
    with pytest.raises(SaslAuthenticationException) as e:
        auth.evaluate(b"\0alice\0nope")
    assert str(e.value) == "Authentication failed: Invalid username or password" and auth.failed


def test_an_unknown_mechanism_is_answered_with_the_enabled_ones_then_closed() -> None:
    auth = authenticator()
    step = auth.frame(17, 1, {"mechanism": "GSSAPI"})
    assert step.kind is StepKind.ANSWER_AND_CLOSE
    assert step.body == {"error_code": UNSUPPORTED_SASL_MECHANISM, "mechanisms": ["PLAIN", "SCRAM-SHA-256"]}
    assert auth.failed


@pytest.mark.parametrize("api_key", [3, 0, 36])
def test_a_request_before_the_handshake_closes_without_an_answer(api_key: int) -> None:
    """handleKafkaRequest: anything but ApiVersions or SaslHandshake is an InvalidRequestException (Metadata,
    Produce, a SaslAuthenticate before the handshake)."""
    auth = authenticator()
    step = auth.frame(api_key, 1, {})
    assert step.kind is StepKind.CLOSE and "during SASL handshake" in step.reason and auth.failed


def test_a_second_apiversions_closes() -> None:
    auth = authenticator()
    auth.frame(18, 3, {})
    assert auth.frame(18, 3, {}).kind is StepKind.CLOSE and auth.failed


def test_another_request_during_authentication_gets_illegal_sasl_state_then_closes() -> None:
    auth = authenticator()
    handshake(auth, "PLAIN")
    step = auth.frame(3, 9, {})
    assert step.kind is StepKind.ANSWER_AND_CLOSE and step.body is None and step.error == ILLEGAL_SASL_STATE
    assert step.reason == "Unexpected Kafka request of type 3 during SASL authentication." and auth.failed


def test_a_raw_token_out_of_turn_closes() -> None:
    auth = authenticator()
    assert auth.raw(b"\0alice\0alice-secret").kind is StepKind.CLOSE and auth.failed


# -- KIP-368: re-authentication --------------------------------------------------------------------------------------
REAUTH = ListenerSasl(SASL.mechanisms, SASL.jaas, {"PLAIN": 60_000, "SCRAM-SHA-256": 0})


def test_the_session_lifetime_is_the_mechanisms_connections_max_reauth_ms() -> None:
    """calcCompletionTimesAndReturnSessionLifetimeMs: PLAIN and SCRAM credentials do not expire, so the lifetime is
    connections.max.reauth.ms of the mechanism; 0 means no expiry."""
    auth = SaslServerAuthenticator(REAUTH, Lookup({}))
    handshake(auth, "PLAIN")
    assert auth.evaluate(auth.frame(36, 2, {"auth_bytes": b"\0alice\0alice-secret"}).token) == b""
    assert auth.supports_reauthentication
    assert auth.complete_session(1_000.0) == 60_000 and auth.session_expiry_ms == 61_000.0
    scram_auth = SaslServerAuthenticator(REAUTH, Lookup({"user": RFC_CREDENTIAL}), nonce=lambda: SERVER_NONCE)
    handshake(scram_auth, "SCRAM-SHA-256")
    scram_auth.evaluate(scram_auth.frame(36, 0, {"auth_bytes": CLIENT_FIRST}).token)
    scram_auth.evaluate(scram_auth.frame(36, 0, {"auth_bytes": CLIENT_FINAL}).token)
    assert scram_auth.complete and not scram_auth.supports_reauthentication  # SaslAuthenticate v0 only
    assert scram_auth.complete_session(1_000.0) == 0 and scram_auth.session_expiry_ms is None


def test_a_reauthentication_starts_at_the_handshake_and_keeps_the_principal() -> None:
    auth = SaslServerAuthenticator(REAUTH, Lookup({}), previous=("PLAIN", "User:alice"))
    assert auth.state is SaslState.REAUTH_PROCESS_HANDSHAKE
    step = auth.frame(17, 1, {"mechanism": "PLAIN"})
    assert step.kind is StepKind.ANSWER and step.body == {"error_code": 0, "mechanisms": ["PLAIN", "SCRAM-SHA-256"]}
    assert auth.evaluate(auth.frame(36, 2, {"auth_bytes": b"\0alice\0alice-secret"}).token) == b""
    assert auth.complete and auth.principal == "User:alice"


def test_a_reauthentication_as_another_principal_fails() -> None:
    auth = SaslServerAuthenticator(REAUTH, Lookup({}), previous=("PLAIN", "User:alice"))
    auth.frame(17, 1, {"mechanism": "PLAIN"})
    with pytest.raises(SaslAuthenticationException) as e:
        auth.evaluate(auth.frame(36, 2, {"auth_bytes": b"\0admin\0admin-secret"}).token)
    assert str(e.value) == "Cannot change principals during re-authentication from User.alice: User.admin"
    assert auth.failed


def test_a_reauthentication_with_another_mechanism_is_answered_then_closed() -> None:
    auth = SaslServerAuthenticator(REAUTH, Lookup({}), previous=("PLAIN", "User:alice"))
    step = auth.frame(17, 1, {"mechanism": "SCRAM-SHA-256"})
    assert step.kind is StepKind.ANSWER_AND_CLOSE and step.body["error_code"] == 0 and auth.failed
    assert step.reason == ("SASL mechanism 'SCRAM-SHA-256' requested by client is not supported for "
                           "re-authentication of mechanism 'PLAIN'")


def test_a_reauthentication_must_begin_with_the_handshake() -> None:
    auth = SaslServerAuthenticator(REAUTH, Lookup({}), previous=("PLAIN", "User:alice"))
    assert auth.frame(18, 3, {}).kind is StepKind.CLOSE and auth.failed


def test_a_wrong_password_at_reauthentication_says_re_authentication() -> None:
    auth = SaslServerAuthenticator(REAUTH, Lookup({}), previous=("SCRAM-SHA-256", "User:user"))
    auth.frame(17, 1, {"mechanism": "SCRAM-SHA-256"})
    with pytest.raises(SaslAuthenticationException) as e:
        auth.evaluate(auth.frame(36, 1, {"auth_bytes": CLIENT_FIRST}).token)
    assert str(e.value) == ("Authentication failed during re-authentication due to invalid credentials with SASL "
                            "mechanism SCRAM-SHA-256")


def test_when_a_session_expires_and_when_it_may_be_renewed() -> None:
    """serverAuthenticationSessionExpired and maybeBeginServerReauthentication's conditions."""
    assert not session_expired(None, 10**12)
    assert not session_expired(5_000.0, 5_000.0) and session_expired(5_000.0, 5_000.1)
    assert not may_begin_reauthentication(None, None, 0.0)  # no expiry: KafkaApis answers the handshake
    assert may_begin_reauthentication(5_000.0, None, 100.0)
    assert not may_begin_reauthentication(5_000.0, 100.0, 1_099.0)  # at most once a second
    assert may_begin_reauthentication(5_000.0, 100.0, 1_100.0)
