"""The client side of SASL for the broker's own connections over a SASL inter-broker listener (Kafka's
SaslClientAuthenticator with PlainSaslClient / ScramSaslClient): the tokens a broker sends with the inter-broker
listener's JAAS ``username`` / ``password`` and ``sasl.mechanism.inter.broker.protocol``, as pure steps."""

from __future__ import annotations

import base64
import hmac

import attrs

from core.security.scram import (
    ClientFinalMessage,
    ClientFirstMessage,
    SaslException,
    ScramMechanism,
    ServerFirstMessage,
    client_proof,
    hmac_digest,
    salted_password,
    sasl_name,
    secure_random_string,
    server_key,
)
from core.security.scram import (
    auth_message as scram_auth_message,
)


@attrs.frozen(slots=True)
class SaslClientConfig:
    """The mechanism and credentials a broker authenticates with to its peers' inter-broker listener."""

    mechanism: str
    username: str
    password: str = attrs.field(repr=False)


class SaslClient:
    """One connection's client exchange: ``first()`` is the initial token, ``next(challenge)`` the next one (None
    once the server's last token is checked); ``complete`` after that. SaslException on a bad server token."""

    __slots__ = ("config", "nonce", "complete", "_scram", "_client_first", "_server_first", "_salted", "_final")

    def __init__(self, config: SaslClientConfig, nonce: str | None = None) -> None:
        self.config = config
        self.nonce = nonce or secure_random_string()
        self.complete = False
        self._scram = ScramMechanism.for_mechanism_name(config.mechanism)
        self._client_first: ClientFirstMessage | None = None
        self._server_first: ServerFirstMessage | None = None
        self._salted = b""
        self._final: ClientFinalMessage | None = None

    def first(self) -> bytes:
        if self._scram is None:  # PlainSaslClient: authzid empty, NUL, user, NUL, password
            return f"\0{self.config.username}\0{self.config.password}".encode()
        self._client_first = ClientFirstMessage(sasl_name(self.config.username), self.nonce)
        return self._client_first.to_message().encode()

    def next(self, challenge: bytes) -> bytes | None:
        if self._scram is None:
            self.complete = True
            return None
        if self._server_first is None:
            return self._client_final(challenge)
        return self._verify_server_final(challenge)

    def _client_final(self, challenge: bytes) -> bytes:
        """ScramSaslClient in RECEIVE_SERVER_FIRST_MESSAGE."""
        assert self._scram is not None and self._client_first is not None
        fields = _fields(challenge)
        try:
            server = ServerFirstMessage(fields["r"], base64.b64decode(fields["s"]), int(fields["i"]))
        except (KeyError, ValueError):
            raise SaslException(f"Invalid SCRAM server first message format: {challenge!r}") from None
        if not server.nonce.startswith(self.nonce) or server.nonce == self.nonce:
            raise SaslException("Invalid server nonce: does not start with client nonce")
        if server.iterations < self._scram.min_iterations:
            raise SaslException(f"Requested iterations {server.iterations} is less than the minimum "
                                f"{self._scram.min_iterations} for {self._scram}")
        self._server_first = server
        self._salted = salted_password(self._scram, self.config.password, server.salt, server.iterations)
        self._final = ClientFinalMessage(b"n,,", server.nonce, b"")
        proof = client_proof(self._scram, self._salted, self._client_first, server, self._final)
        return f"{self._final.without_proof},p={base64.b64encode(proof).decode()}".encode()

    def _verify_server_final(self, challenge: bytes) -> None:
        """ScramSaslClient in RECEIVE_SERVER_FINAL_MESSAGE: the server's signature proves it knows the key."""
        assert self._scram is not None and self._client_first is not None and self._server_first is not None
        assert self._final is not None
        fields = _fields(challenge)
        if "e" in fields:
            raise SaslException(f"Sasl authentication using {self._scram} failed with error: {fields['e']}")
        auth = scram_auth_message(self._client_first, self._server_first, self._final)
        expected = hmac_digest(self._scram, server_key(self._scram, self._salted), auth)
        try:
            signature = base64.b64decode(fields.get("v", ""), validate=True)
        except ValueError:
            signature = b""
        if not hmac.compare_digest(signature, expected):
            raise SaslException("Invalid server signature in server final message")
        self.complete = True
        return None


def _fields(message: bytes) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in message.decode("utf-8", errors="replace").split(","):
        key, sep, value = item.partition("=")
        if sep:
            out.setdefault(key, value)
    return out
