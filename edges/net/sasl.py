"""The SASL tokens of the broker's SASL listeners, evaluated on a thread of their own, off the I/O thread; a SCRAM
exchange reads the user's credential from the broker's CredentialCache (core/security/credential_cache.py, kept
current from the config change notifications), never from ZooKeeper. The state machine is
core/security/sasl.py's SaslServerAuthenticator (one per connection, kept on ``Conn.sasl``); the connection is muted
while its token is evaluated (one request in flight), so the thread and the I/O thread never touch it at once.

The answer goes back to the I/O thread as any answer does (the loop's "reply" command): a SaslAuthenticate response
after a v1 handshake (KIP-152), the raw size-prefixed token after a v0 one; a failure after a v0 handshake is closed
without an answer, as Kafka does (the client has no frame to read an error from). A failed authentication comes back
as `FailedAuthentication` (Kafka's DelayedResponseAuthenticationException): the I/O thread holds it, answer and
connection, for ``connection.failed.authentication.delay.ms`` before it writes the answer and closes (KIP-306).

The client side (`ClientExchange`) is the broker's own connections to a SASL inter-broker listener
(edges/net/outbound.py): the exchange runs on the I/O thread (its tokens need no I/O), before the connection's
requests are written.
"""

from __future__ import annotations

import logging
import struct
import time
from collections.abc import Callable
from typing import Any

import attrs

from core.api.admin import fit_response
from core.api.registry import spec_for_key
from core.security.sasl import SASL_AUTHENTICATE, SASL_AUTHENTICATION_FAILED, SASL_HANDSHAKE, SaslServerAuthenticator
from core.security.sasl_client import SaslClient
from core.security.scram import SaslAuthenticationException, SaslException
from edges.net.framing import encode_inbound_response
from edges.net.queue_worker import QueueWorker
from protocol.framing import RequestHeader, decode_response, encode_request

log = logging.getLogger("kactor.edges.transport")

_SIZE = struct.Struct(">i")


def authenticate_response_frame(version: int, correlation_id: int, error: int, message: str | None,
                                auth_bytes: bytes, session_lifetime_ms: int = 0) -> bytes | bytearray:
    """A SaslAuthenticate response frame (``session_lifetime_ms``: KIP-368's, from v1; 0: no re-authentication)."""
    spec = spec_for_key(SASL_AUTHENTICATE)
    assert spec is not None
    body = fit_response(SASL_AUTHENTICATE, version, {"error_code": error, "error_message": message,
                                                     "auth_bytes": auth_bytes,
                                                     "session_lifetime_ms": session_lifetime_ms})
    return encode_inbound_response(spec, version, correlation_id, body)


def monotonic_ms() -> float:
    """The clock of the SASL sessions' expiry (KIP-368): the I/O thread compares against it too."""
    return time.monotonic() * 1000.0


@attrs.frozen(slots=True)
class FailedAuthentication:
    """A token that failed authentication (DelayedResponseAuthenticationException): the answer built for it
    (buildResponseOnAuthenticateFailure; None after a v0 handshake, which has none) is written, and the connection
    closed, only after connection.failed.authentication.delay.ms (Selector.maybeDelayCloseOnAuthenticationFailure)."""

    frame: bytes | bytearray | None
    reason: str


def answer_token(auth: SaslServerAuthenticator, token: bytes, version: int | None, correlation_id: int,
                 peer: str, name: str = "", now_ms: Callable[[], float] = monotonic_ms,
                 ) -> bytes | bytearray | FailedAuthentication | None:
    """SaslServerAuthenticator.handleSaslToken: the frame answering ``token`` (``version`` None: a raw token after
    a v0 handshake); `FailedAuthentication` when the credentials are refused (an AuthenticationException: the close
    is delayed); None to close at once without an answer (an unexpected error, e.g. ZooKeeper's, closes at once in
    Kafka too). A failure is logged as Kafka's Selector logs it. On success the session's lifetime is set at
    ``now_ms()`` and told to a client that asked with SaslAuthenticate v1+."""
    try:
        answer = auth.evaluate(token)
    except SaslAuthenticationException as e:
        log.info("%s: Failed authentication with %s (%s)", name, peer, e)
        if version is None:
            return FailedAuthentication(None, str(e))
        return FailedAuthentication(
            authenticate_response_frame(version, correlation_id, SASL_AUTHENTICATION_FAILED, str(e), b""), str(e))
    except Exception:  # noqa: BLE001 - a ZooKeeper failure, our own bug: the connection is closed, not left waiting
        log.exception("%s: SASL authentication of %s failed", name, peer)
        auth.state = type(auth.state).FAILED
        return None
    lifetime = 0
    if auth.complete:
        lifetime = auth.complete_session(now_ms())
        log.debug("%s: %s %s as %s with %s; session lifetime %d ms", name, peer,
                  "re-authenticated" if auth.previous else "authenticated", auth.principal, auth.mechanism, lifetime)
    if version is None:
        return _SIZE.pack(len(answer)) + answer
    return authenticate_response_frame(version, correlation_id, 0, None, answer, lifetime)


def evaluate_frame(auth: SaslServerAuthenticator, token: bytes, version: int | None, correlation_id: int,
                   peer: str, name: str = "", now_ms: Callable[[], float] = monotonic_ms) -> bytes | bytearray | None:
    """`answer_token` for a caller that answers at once: a failure's answer is the frame (None: close)."""
    answer = answer_token(auth, token, version, correlation_id, peer, name, now_ms)
    return answer.frame if isinstance(answer, FailedAuthentication) else answer


class SaslWorker:
    """The thread evaluating tokens (a `QueueWorker`); each answer (`answer_token`'s) is handed to
    ``reply(conn_id, rid, answer)``."""

    __slots__ = ("_name", "_reply", "_worker")

    def __init__(self, name: str, reply: Callable[[int, int, Any], None]) -> None:
        self._name = name
        self._reply = reply
        self._worker: QueueWorker[tuple[Any, ...]] = QueueWorker(f"{name}-sasl", self._serve)

    def submit(self, conn_id: int, rid: int, auth: SaslServerAuthenticator, token: bytes, version: int | None,
               correlation_id: int, peer: str) -> None:
        self._worker.submit((conn_id, rid, auth, token, version, correlation_id, peer))

    def close(self) -> None:
        self._worker.close()

    def _serve(self, job: tuple[Any, ...]) -> None:
        conn_id, rid, auth, token, version, correlation_id, peer = job
        self._reply(conn_id, rid, answer_token(auth, token, version, correlation_id, peer, self._name))


# -- the client side: the broker's own connections to a SASL inter-broker listener --------------------------------
class ClientExchange:
    """An outbound connection's SASL exchange (SaslClientAuthenticator): SaslHandshake v1, then SaslAuthenticate v1
    requests until the client is done; the process's requests queued meanwhile are ``held`` and written after."""

    __slots__ = ("client", "held", "waiting_key", "corr")

    def __init__(self, client: SaslClient) -> None:
        self.client = client
        self.held: list[bytes] = []
        self.waiting_key = SASL_HANDSHAKE  # the api key of the answer awaited
        self.corr = 0

    def request(self, key: int, corr: int, body: dict[str, Any], client_id: str) -> bytes:
        self.waiting_key, self.corr = key, corr
        return encode_request(RequestHeader(key, 1, corr, client_id), body)

    def handshake(self, corr: int, client_id: str) -> bytes:
        return self.request(SASL_HANDSHAKE, corr, {"mechanism": self.client.config.mechanism}, client_id)

    def on_response(self, payload: bytes, next_corr: int, client_id: str) -> bytes | None:
        """The answer to the exchange's last request: the next request's frame, None once authenticated.
        SaslException when the peer refused (its error and message) or answered out of turn."""
        corr, body = decode_response(self.waiting_key, 1, payload)
        if corr != self.corr:
            raise SaslException(f"unexpected correlation id {corr} during SASL authentication (expected {self.corr})")
        if self.waiting_key == SASL_HANDSHAKE:
            if body["error_code"]:
                raise SaslException(f"SaslHandshake failed with error {body['error_code']}: the peer's mechanisms "
                                    f"are {body['mechanisms']}, {self.client.config.mechanism} was asked for")
            return self.request(SASL_AUTHENTICATE, next_corr, {"auth_bytes": self.client.first()}, client_id)
        if body["error_code"]:
            raise SaslException(f"SaslAuthenticate failed with error {body['error_code']}: {body['error_message']}")
        token = self.client.next(bytes(body["auth_bytes"] or b""))
        if self.client.complete:
            return None
        assert token is not None
        return self.request(SASL_AUTHENTICATE, next_corr, {"auth_bytes": token}, client_id)
