"""The SASL listener's CredentialCache kept by the "net" actor: a UserCredentialsChanged (what the config manager
reads of /config/users/<user>) updates the cache its SCRAM logins read, with no ZooKeeper behind the listener at all
— a user added logs in, a user removed is refused."""

from __future__ import annotations

import time
from typing import Any

from test_edges_sasl import SASL, Client, scram_client_final

from core.security import scram
from core.security.credential_cache import CredentialCache
from core.security.scram import ScramMechanism
from messages.credentials import UserCredentialsChanged

SHA256 = ScramMechanism.SCRAM_SHA_256


def login(port: int, user: str, password: str) -> int:
    """One SCRAM-SHA-256 login on a new connection: the error code of its last SaslAuthenticate answer."""
    c = Client(port)
    c.handshake("SCRAM-SHA-256")
    client_first = f"n,,n={user},r=nonce{time.monotonic_ns()}".encode()
    first = c.authenticate(client_first)
    if first["error_code"]:
        return int(first["error_code"])
    return int(c.authenticate(scram_client_final(client_first, first["auth_bytes"], password))["error_code"])


def updated(cache: CredentialCache, user: str, present: bool) -> None:
    deadline = time.monotonic() + 10
    while (cache(user, SHA256) is not None) != present:
        assert time.monotonic() < deadline, f"{user} never {'added' if present else 'removed'}"
        time.sleep(0.01)


def test_the_net_actor_keeps_the_listeners_credential_cache(make_node: Any) -> None:
    cache = CredentialCache()
    node = make_node("b", extra_listeners=(("127.0.0.1", 0, "SASL"),), sasl={"SASL": SASL}, scram_credentials=cache)
    port = node.net.bound[1][1]
    assert login(port, "carol", "carol-secret") == 58  # SASL_AUTHENTICATION_FAILED: no such user yet
    text = scram.scram_credential_config(SHA256, "password=carol-secret")
    node.rt.inject("net", UserCredentialsChanged("carol", (("SCRAM-SHA-256", text),)), "config-manager")
    updated(cache, "carol", True)
    assert login(port, "carol", "carol-secret") == 0
    node.rt.inject("net", UserCredentialsChanged("carol", ()), "config-manager")  # the user deleted
    updated(cache, "carol", False)
    assert login(port, "carol", "carol-secret") == 58
