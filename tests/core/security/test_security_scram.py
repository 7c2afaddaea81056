"""SCRAM credentials and the server side of the exchange (core.security.scram): RFC 7677's SCRAM-SHA-256 test
vector end to end, the credential text Kafka keeps in /config/users/<user>, and each refusal of ScramSaslServer."""

from __future__ import annotations

import base64
import re

import pytest

from core.security import scram
from core.security.scram import ScramMechanism

SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512
# RFC 7677 section 3
CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
CLIENT_FINAL = (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def rfc_exchange(credential: scram.ScramCredential | None = None) -> scram.ScramServerState:
    client_first, username = scram.parse_client_first(CLIENT_FIRST)
    assert username == "user"
    cred = credential or scram.generate_credential(SHA256, "pencil", 4096, SALT)
    state, message = scram.server_first(SHA256, client_first, username, cred, SERVER_NONCE)
    assert message == SERVER_FIRST
    return state


def test_rfc_7677_scram_sha_256_test_vector() -> None:
    assert scram.server_final(rfc_exchange(), CLIENT_FINAL) == SERVER_FINAL


def test_the_stored_credential_string_round_trips_and_still_authenticates() -> None:
    cred = scram.generate_credential(SHA256, "pencil", 4096, SALT)
    text = scram.credential_to_string(cred)
    assert re.fullmatch(r"salt=W22ZaJ0SNY7soEsUEjb6gQ==,stored_key=[A-Za-z0-9+/]{43}=,"
                        r"server_key=[A-Za-z0-9+/]{43}=,iterations=4096", text), text
    assert scram.credential_from_string(text) == cred
    assert scram.server_final(rfc_exchange(scram.credential_from_string(text)), CLIENT_FINAL) == SERVER_FINAL


def test_generated_credentials_as_kafka_makes_them() -> None:
    """ScramFormatter.generateCredential: the salt is the UTF-8 of a base-36 random number of 130 bits; the keys are
    HMAC(SaltedPassword, "Client Key") hashed, and HMAC(SaltedPassword, "Server Key")."""
    cred = scram.generate_credential(SHA512, "alice-secret", 8192)
    assert re.fullmatch(rb"[0-9a-z]{1,26}", cred.salt) and int(cred.salt, 36) < 2 ** 130
    salted = scram.salted_password(SHA512, "alice-secret", cred.salt, 8192)
    assert len(salted) == 64 and cred.iterations == 8192
    assert cred.stored_key == scram.stored_key(SHA512, scram.client_key(SHA512, salted))
    assert cred.server_key == scram.server_key(SHA512, salted)
    assert scram.generate_credential(SHA512, "alice-secret").salt != cred.salt
    assert SHA256.mechanism_name == "SCRAM-SHA-256" and scram.MECHANISM_NAMES == ("SCRAM-SHA-256", "SCRAM-SHA-512")
    assert ScramMechanism.for_mechanism_name("SCRAM-SHA-512") is SHA512
    assert ScramMechanism.for_mechanism_name("PLAIN") is None


def test_a_full_sha_512_exchange_with_a_client_built_here() -> None:
    cred = scram.generate_credential(SHA512, "s3cret", 4096)
    client_first, username = scram.parse_client_first(b"n,,n=al=3Dice=2C,r=abc")
    assert username == "al=ice,"
    state, message = scram.server_first(SHA512, client_first, username, cred, "xyz")
    nonce = message.decode().split(",")[0][2:]
    final = scram.ClientFinalMessage(b"n,,", nonce, b"")
    proof = scram.client_proof(SHA512, scram.salted_password(SHA512, "s3cret", cred.salt, 4096), client_first,
                               state.server_first, final)
    message = f"{final.without_proof},p={base64.b64encode(proof).decode()}".encode()
    assert scram.server_final(state, message).startswith(b"v=")
    wrong = scram.client_proof(SHA512, scram.salted_password(SHA512, "guess", cred.salt, 4096), client_first,
                               state.server_first, final)
    with pytest.raises(scram.SaslException, match="Invalid client credentials"):
        scram.server_final(state, f"{final.without_proof},p={base64.b64encode(wrong).decode()}".encode())


def test_a_wrong_password_fails() -> None:
    state = rfc_exchange(scram.generate_credential(SHA256, "pencil2", 4096, SALT))
    with pytest.raises(scram.SaslException, match="Invalid client credentials"):
        scram.server_final(state, CLIENT_FINAL)


def test_a_final_message_with_another_nonce_is_judged_by_its_proof() -> None:
    """2.6.3's ScramSaslServer compares no nonce: a final message whose nonce was changed after its proof was made
    fails the proof; librdkafka < 2.6.1's final message (the client nonce twice, its proof made over that) passes."""
    state = rfc_exchange()
    tampered = CLIENT_FINAL.replace(b"hNlF$k0", b"hNlF$k1")
    with pytest.raises(scram.SaslException, match="Invalid client credentials"):
        scram.server_final(state, tampered)
    client_first, _ = scram.parse_client_first(CLIENT_FIRST)
    doubled = scram.ClientFinalMessage(b"n,,", client_first.nonce + state.server_first.nonce, b"")
    proof = scram.client_proof(SHA256, scram.salted_password(SHA256, "pencil", SALT, 4096), client_first,
                               state.server_first, doubled)
    final = f"{doubled.without_proof},p={base64.b64encode(proof).decode()}".encode()
    assert scram.server_final(state, final).startswith(b"v=")


@pytest.mark.parametrize("message", [
    b"y,,n=user,r=abc",  # channel binding flags other than n
    b"n,,n=user",  # no nonce
    b"n,,n=us,er,r=abc",
    b"\xff\xfe",
    b"",
])
def test_malformed_client_first_messages(message: bytes) -> None:
    with pytest.raises(scram.SaslException, match="Invalid SCRAM"):
        scram.parse_client_first(message)


def test_client_first_parts() -> None:
    first = scram.ClientFirstMessage.parse(b"n,a=user,m=x,n=user,r=abc,tokenauth=true")
    assert (first.authorization_id, first.sasl_name, first.nonce, first.extensions) == \
        ("user", "user", "abc", (("tokenauth", "true"),))
    assert first.bare == "n=user,r=abc,tokenauth=true"
    with pytest.raises(scram.SaslException, match="Invalid SCRAM client first message format"):
        scram.parse_client_first(b"n,,n=a=3Eb,r=abc")  # '=' not followed by 2C / 3D
    assert scram.sasl_name("a=b,c") == "a=3Db=2Cc" and scram.username_of("a=3Db=2Cc") == "a=b,c"


def test_server_first_refusals() -> None:
    client_first, username = scram.parse_client_first(CLIENT_FIRST)
    with pytest.raises(scram.SaslException, match="Authentication failed: Invalid user credentials"):
        scram.server_first(SHA256, client_first, username, None, "n")
    low = scram.generate_credential(SHA256, "pencil", 4095, SALT)
    with pytest.raises(scram.SaslException, match="Iterations 4095 is less than the minimum 4096 for SCRAM_SHA_256"):
        scram.server_first(SHA256, client_first, username, low, "n")
    other, name = scram.parse_client_first(b"n,a=admin,n=user,r=abc")
    with pytest.raises(scram.SaslAuthenticationException, match="authorization id that is different"):
        scram.server_first(SHA256, other, name, scram.generate_credential(SHA256, "p"), "n")


@pytest.mark.parametrize("message", [b"c=biws,r=x", b"c=biws,r=x,p=!!", b"p=abc"])
def test_malformed_client_final_messages(message: bytes) -> None:
    with pytest.raises(scram.SaslException, match="Invalid SCRAM client final message format"):
        scram.server_final(rfc_exchange(), message)


@pytest.mark.parametrize("text", ["salt=AA==,stored_key=AA==,server_key=AA==", "salt=AA==,stored_key=AA==,"
                                  "server_key=AA==,iterations=x", "=a", "salt=!,stored_key=AA==,server_key=AA==,"
                                  "iterations=1"])
def test_invalid_credential_strings(text: str) -> None:
    with pytest.raises(ValueError, match="Credentials not valid"):
        scram.credential_from_string(text)


def test_configs_add_config_values_become_credentials() -> None:
    """ConfigCommand.preProcessScramCredentials: ``[iterations=N,]password=P``, 4096 iterations by default."""
    out = scram.preprocess_scram_credentials({"SCRAM-SHA-256": "iterations=8192,password=a,b=c",
                                              "SCRAM-SHA-512": "password=x", "producer_byte_rate": "1024"})
    assert out["producer_byte_rate"] == "1024"
    c256 = scram.credential_from_string(out["SCRAM-SHA-256"])
    c512 = scram.credential_from_string(out["SCRAM-SHA-512"])
    assert (c256.iterations, c512.iterations) == (8192, 4096)
    assert scram.generate_credential(SHA256, "a,b=c", 8192, c256.salt) == c256  # the password is all after password=
    assert scram.generate_credential(SHA512, "x", 4096, c512.salt) == c512
    for value, message in (("password", "Invalid credential property SCRAM_SHA_256=password"),
                           ("iterations=8192", "Invalid credential property SCRAM_SHA_256=iterations=8192"),
                           ("iterations=4095,password=p", "Iterations 4095 is less than the minimum 4096 required "
                                                          "for SCRAM_SHA_256"),
                           ("iterations=,password=p", 'For input string: ""')):
        with pytest.raises(ValueError, match=re.escape(message)):
            scram.scram_credential_config(SHA256, value)
