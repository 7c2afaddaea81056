"""The client side of SASL (core.security.sasl_client, the broker's own connections to a SASL inter-broker
listener): PLAIN's token, SCRAM-SHA-256/512 against this project's server side end to end, and the client's checks of
the server (its nonce, its signature, an error it sends)."""

from __future__ import annotations

import pytest

from core.security import scram
from core.security.sasl import ListenerSasl, SaslServerAuthenticator, parse_jaas_config
from core.security.sasl_client import SaslClient, SaslClientConfig
from core.security.scram import SaslException, ScramMechanism

JAAS = parse_jaas_config("org.apache.kafka.common.security.scram.ScramLoginModule required;")[0]


def test_plain_sends_one_token() -> None:
    client = SaslClient(SaslClientConfig("PLAIN", "admin", "admin-secret"))
    assert client.first() == b"\0admin\0admin-secret"
    assert client.next(b"") is None and client.complete


@pytest.mark.parametrize("mechanism", list(ScramMechanism))
def test_scram_against_the_server(mechanism: ScramMechanism) -> None:
    name = mechanism.mechanism_name
    credential = scram.generate_credential(mechanism, "admin-secret", 4096)
    server = SaslServerAuthenticator(ListenerSasl((name,), {name: JAAS}), lambda user, m: credential
                                     if (user, m) == ("ad,min", mechanism) else None)
    server.frame(17, 1, {"mechanism": name})
    client = SaslClient(SaslClientConfig(name, "ad,min", "admin-secret"))
    first = client.first()
    assert first.startswith(b"n,,n=ad=2Cmin,r=")
    final = client.next(server.evaluate(first))
    assert final is not None and not client.complete
    assert client.next(server.evaluate(final)) is None
    assert client.complete and server.complete and server.principal == "User:ad,min"


def scram_client_and_server_first() -> tuple[SaslClient, bytes]:
    credential = scram.generate_credential(ScramMechanism.SCRAM_SHA_256, "pw", 4096)
    client = SaslClient(SaslClientConfig("SCRAM-SHA-256", "u", "pw"), nonce="abc")
    client_first, user = scram.parse_client_first(client.first())
    _, server_first = scram.server_first(ScramMechanism.SCRAM_SHA_256, client_first, user, credential, "xyz")
    return client, server_first


def test_scram_client_checks_the_server() -> None:
    client, server_first = scram_client_and_server_first()
    client.next(server_first)
    with pytest.raises(SaslException, match="Invalid server signature in server final message"):
        client.next(b"v=AAAA")
    client, _ = scram_client_and_server_first()
    with pytest.raises(SaslException, match="Invalid server nonce: does not start with client nonce"):
        client.next(b"r=zzzxyz,s=AAAA,i=4096")
    client, server_first = scram_client_and_server_first()
    client.next(server_first)
    with pytest.raises(SaslException, match="failed with error: invalid-proof"):
        client.next(b"e=invalid-proof")
    client, _ = scram_client_and_server_first()
    with pytest.raises(SaslException, match="Requested iterations 100 is less than the minimum 4096"):
        client.next(b"r=abcxyz,s=AAAA,i=100")
    assert not client.complete
