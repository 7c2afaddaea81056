"""The authentication layer under the dispatch (edges/net/inbound.py): Kafka's SaslServerAuthenticator on a
connection of a SASL_PLAINTEXT or SASL_SSL listener (SASL_SSL: after its TLS handshake), with KafkaChannel's
re-authentication (KIP-368) and the Selector's delayed close of a failed authentication (KIP-306).

A connection of a SASL listener is authenticated before any other request is served: its frames go to the
connection's authenticator (core/security/sasl.py) — ApiVersions is answered as anywhere, SaslHandshake here, the
tokens on the SASL thread (edges/net/sasl.py) — until it is complete and the connection's principal is
``User:<name>``; a frame above sasl.server.max.receive.size (512 KB) before then closes it at once; a failed
authentication (wrong credentials, an unknown mechanism, a request out of turn) is held for
``connection.failed.authentication.delay.ms`` (KIP-306: Kafka's Selector delays the close, and the failure's answer
with it, so a password guesser waits that long for each guess): not read nor written meanwhile, then answered and
closed; other connections are served as usual.

The dispatch asks this layer only about a connection whose ``sasl`` is set (being authenticated) or whose
``sasl_mechanism`` is (authenticated, for its session's expiry): a PLAINTEXT or SSL connection never calls it."""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from core.api.admin import fit_response
from core.api.registry import ApiSpec
from core.security.sasl import (
    SASL_HANDSHAKE,
    ListenerSasl,
    SaslServerAuthenticator,
    StepKind,
    may_begin_reauthentication,
    session_expired,
)
from core.security.scram import ScramCredential, ScramMechanism
from edges.net.framing import encode_inbound_response
from edges.net.sasl import FailedAuthentication, SaslWorker, monotonic_ms
from edges.net.selector import Conn, DelayedCloses, Loop
from protocol.framing import RequestHeader

log = logging.getLogger("kactor.edges.transport")

Frame = bytes | bytearray


class Channels(Protocol):
    """What the authentication layer asks of the dispatch above it (edges/net/inbound.py's Inbound): the
    one-in-flight bookkeeping of a connection's answers and its close."""

    def answer(self, conn: Conn, rid: int, frame: bytes | None) -> None: ...

    def expect_answer(self, conn: Conn, rid: int, queued: bool) -> None: ...

    def close_after_flush(self, conn: Conn, reason: str) -> None: ...

    def forget_waiting(self, conn: Conn) -> None: ...

    def close(self, conn: Conn, reason: str) -> None: ...

    def flush(self, conn: Conn) -> None: ...


def _now_ms() -> float:
    return time.monotonic() * 1000.0


class SaslLayer:
    """The SASL listeners of one process (SaslChannelBuilder) and their connections' authentication; runs on the I/O
    thread but for the SASL thread's evaluation of tokens, whose answers come back through ``reply``."""

    def __init__(self, name: str, loop: Loop, rids: itertools.count[int], channels: Channels,
                 sasl: dict[str, ListenerSasl] | None = None,
                 scram_credentials: Callable[[str, ScramMechanism], ScramCredential | None] | None = None,
                 clock: Callable[[], float] = _now_ms) -> None:
        self.name = name
        self.loop = loop
        self._rids = rids
        self._channels = channels
        # listener name → the mechanisms and JAAS entries of a SASL listener (SaslChannelBuilder); SCRAM's credential
        # lookup (ZooKeeper's /config/users, read on the SASL thread)
        self._sasl = sasl or {}
        self._scram_credentials = scram_credentials or (lambda user, mechanism: None)
        self._worker = SaslWorker(name, self._reply) if self._sasl else None
        # SASL listener name → the connections of it whose authentication failed, held until their close is due
        # (Selector.delayedClosingChannels): the connection, the failure's answer (None: none) and why
        self._delayed_closes: dict[str, DelayedCloses[int, tuple[Conn, Frame | None, str]]] = {
            listener: DelayedCloses(s.failed_authentication_delay_ms, clock) for listener, s in self._sasl.items()}

    def close_workers(self) -> None:
        if self._worker is not None:
            self._worker.close()

    def _reply(self, conn_id: int, rid: int, frame: Frame | FailedAuthentication | None) -> None:
        """The SASL thread's answer to a token (None: close the connection; FailedAuthentication: its delayed close)."""
        self.loop.submit(("reply", conn_id, rid, frame, 0))

    # -- the I/O thread ----------------------------------------------------------------------------------------------
    def start(self, conn: Conn) -> None:
        """A connection of a SASL listener gets its authenticator (SaslChannelBuilder.buildChannel)."""
        sasl = self._sasl.get(conn.listener)
        if sasl is not None:
            conn.sasl = SaslServerAuthenticator(sasl, self._scram_credentials)

    def too_large(self, conn: Conn, error: Exception) -> None:
        """A frame above sasl.server.max.receive.size before the connection is authenticated: closed at once."""
        # SaslServerAuthenticator: "Failing SASL authentication due to invalid receive size"
        log.info("%s: Failed authentication with %s (Failing SASL authentication due to invalid receive size: %s)",
                 self.name, conn.peer, error)
        self._channels.close(conn, f"SASL frame from {conn.peer} too large")

    def session_goes_on(self, conn: Conn, api_key: int) -> bool:
        """SocketServer.Processor.processCompletedReceives on an authenticated SASL connection (KIP-368): a
        SaslHandshake begins a re-authentication when the session has an expiry and none began in the last second
        (KafkaChannel.maybeBeginServerReauthentication); otherwise a request after the session's expiry closes the
        connection ("Disconnecting expired channel"). False when the request is not to be served."""
        now = monotonic_ms()
        if api_key == SASL_HANDSHAKE and may_begin_reauthentication(conn.session_expiry_ms, conn.reauth_started_ms,
                                                                     now):
            conn.reauth_started_ms = now
            conn.sasl = SaslServerAuthenticator(self._sasl[conn.listener], self._scram_credentials,
                                                previous=(conn.sasl_mechanism, conn.principal))
            log.info("%s: beginning re-authentication of %s (%s)", self.name, conn.peer, conn.principal)
            return True
        if session_expired(conn.session_expiry_ms, now):
            log.info("%s: Disconnecting expired channel %s (%s): its SASL session ended %.0f ms ago", self.name,
                     conn.peer, conn.principal, now - (conn.session_expiry_ms or now))
            self._channels.close(conn, "SASL session expired")
            return False
        return True

    def frame(self, conn: Conn, spec: ApiSpec, header: RequestHeader, body: dict[str, Any]) -> bool:
        """A request of a connection not yet authenticated: whether it is dispatched as on any listener (ApiVersions);
        otherwise it is answered here, handed to the SASL thread, or closes the connection."""
        version, correlation_id = header.request_api_version, header.correlation_id
        step = conn.sasl.frame(header.request_api_key, version, body)
        if step.kind is StepKind.DISPATCH:
            return True
        if step.kind is StepKind.CLOSE:
            log.info("%s: Failed authentication with %s (%s)", self.name, conn.peer, step.reason)
            self.fail(conn, None, step.reason)
            return False
        rid = next(self._rids)
        self._channels.expect_answer(conn, rid, queued=False)
        if step.kind is StepKind.EVALUATE:
            assert self._worker is not None
            self._worker.submit(conn.conn_id, rid, conn.sasl, step.token, version, correlation_id, conn.peer)
            return False
        wire = (spec.error_response(version, body, step.error) if step.body is None
                else fit_response(spec.api_key, version, step.body))
        frame = encode_inbound_response(spec, version, correlation_id, wire)
        if step.kind is StepKind.ANSWER_AND_CLOSE:  # buildResponseOnAuthenticateFailure: sent after the delay
            log.info("%s: Failed authentication with %s (%s)", self.name, conn.peer, step.reason)
            self.fail(conn, frame, step.reason)
            return False
        self._channels.answer(conn, rid, frame)  # type: ignore[arg-type]
        return False

    def raw(self, conn: Conn, token: bytes) -> None:
        """A frame after a v0 SaslHandshake: the mechanism's token without Kafka's request header."""
        step = conn.sasl.raw(token)
        if step.kind is not StepKind.EVALUATE:
            log.info("%s: Failed authentication with %s (%s)", self.name, conn.peer, step.reason)
            self.fail(conn, None, step.reason)
            return
        rid = next(self._rids)
        self._channels.expect_answer(conn, rid, queued=False)
        assert self._worker is not None
        self._worker.submit(conn.conn_id, rid, conn.sasl, step.token, None, 0, conn.peer)

    def after_token(self, conn: Conn) -> None:
        """A token's answer is queued: the connection authenticated (its principal set, its requests served from
        now on) or, after a failure, closed once the answer is written (Kafka's FAILED state)."""
        auth = conn.sasl
        if auth.complete:
            conn.principal = auth.principal
            conn.sasl_mechanism = auth.mechanism
            conn.session_expiry_ms = auth.session_expiry_ms
            conn.sasl = None
        elif auth.failed:
            self._channels.close_after_flush(conn, f"SASL authentication of {conn.peer} failed")

    # -- failed authentication: the delayed close (KIP-306) ---------------------------------------------------------
    def failed(self, conn: Conn) -> bool:
        """Whether ``conn`` (of a SASL listener) is held for its failed authentication's delayed close."""
        delayed = self._delayed_closes.get(conn.listener)
        return delayed is not None and conn.conn_id in delayed

    def fail(self, conn: Conn, frame: Frame | None, reason: str) -> None:
        """KafkaChannel.prepare's AuthenticationException on a SASL connection (DelayedResponseAuthenticationException):
        the failure's answer (``frame``; None: none) and the close are delayed by
        connection.failed.authentication.delay.ms (Selector.maybeDelayCloseOnAuthenticationFailure, KIP-306); the
        connection is neither read nor written meanwhile (delayCloseOnAuthenticationFailure), the I/O thread goes on
        with the others. A delay of 0 answers and closes at once."""
        self._channels.forget_waiting(conn)  # the rid of the failed request: this answer replaces it
        delayed = self._delayed_closes.get(conn.listener)
        if delayed is None or delayed.delay_ms <= 0:
            self._close_failed(conn, frame, reason)
            return
        delayed.add(conn.conn_id, (conn, frame, reason))
        self.loop.set_events(conn, 0)

    def _close_failed(self, conn: Conn, frame: Frame | None, reason: str) -> None:
        """Selector.handleCloseOnAuthenticationFailure: the failure's answer written, then the connection closed."""
        if conn.closed:
            return
        if frame:
            conn.out.append(frame)  # type: ignore[arg-type]
        self._channels.close_after_flush(conn, reason)
        if not conn.closed:
            self.loop.guarded(conn, self._channels.flush, self._channels.close)

    def sweep(self) -> None:
        """Selector.completeDelayedChannelClose: the failed authentications whose delay is over are answered and
        closed."""
        for delayed in self._delayed_closes.values():
            if delayed:
                for conn, frame, reason in delayed.pop_due():
                    self._close_failed(conn, frame, reason)

    def forget(self, conn: Conn) -> None:
        """``conn`` was closed otherwise: it is no longer held (Selector.close drops it from
        delayedClosingChannels)."""
        delayed = self._delayed_closes.get(conn.listener)
        if delayed is not None:
            delayed.discard(conn.conn_id)
