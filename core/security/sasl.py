"""SASL on a broker listener, the pure part: the JAAS config of a listener's mechanism (Kafka's JaasConfig), the PLAIN
server (PlainSaslServer with PlainServerCallbackHandler) and the per-connection state machine of Kafka 2.6.3's
SaslServerAuthenticator (the KIP-43 flow: ApiVersions, then SaslHandshake, then the tokens — in SaslAuthenticate
requests after a v1 handshake (KIP-152), raw size-prefixed tokens after a v0 one).

The network edge (edges/net/inbound.py) feeds it each frame a SASL connection sends before it is authenticated and
does what the returned `Step` says; the SCRAM credential lookup (the broker's CredentialCache) is a callable the edge
runs on a thread of its own. SCRAM's exchange is core/security/scram.py.
"""

from __future__ import annotations

import enum
import hmac
import io
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from core.security.scram import (
    SaslAuthenticationException,
    SaslException,
    ScramCredential,
    ScramMechanism,
    ScramServerState,
    parse_client_first,
    secure_random_string,
    server_final,
    server_first,
)

# Kafka's Errors codes of the exchange (the rest of the codes are messages.common.Errors)
UNSUPPORTED_SASL_MECHANISM = 33
ILLEGAL_SASL_STATE = 34
SASL_AUTHENTICATION_FAILED = 58

API_VERSIONS = 18
SASL_HANDSHAKE = 17
SASL_AUTHENTICATE = 36

PLAIN = "PLAIN"
SERVED_MECHANISMS = (PLAIN, "SCRAM-SHA-256", "SCRAM-SHA-512")
REFUSED_MECHANISMS = ("GSSAPI", "OAUTHBEARER")
PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
MAX_RECEIVE_SIZE = 524288  # SaslServerAuthenticator's saslAuthRequestMaxReceiveSize (sasl.server.max.receive.size)
FAILED_AUTHENTICATION_DELAY_MS = 100  # KafkaConfig's Defaults.FailedAuthenticationDelayMs (KIP-306)


# -- JaasConfig ------------------------------------------------------------------------------------------------------
@attrs.frozen(slots=True)
class JaasEntry:
    """One AppConfigurationEntry: the login module's class, its control flag and its options."""

    login_module: str
    control_flag: str
    options: Mapping[str, str] = attrs.field(factory=dict)

    def __repr__(self) -> str:  # the options hold passwords
        return f"JaasEntry({self.login_module} {self.control_flag}, {len(self.options)} options)"


_FLAGS = ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL")
_EOF, _WORD, _QUOTED = "eof", "word", "quoted"


def _tokens(text: str) -> list[tuple[str, str]]:
    """Java's StreamTokenizer as JaasConfig sets it up: whitespace is 0-32, ``;`` and ``=`` are tokens, ``"`` and
    ``'`` quote (with Java's backslash escapes), ``//`` and ``/* */`` are comments (a lone ``/`` comments out the
    rest of the line), every other character is part of a word."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(text)
    escapes = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "a": "\a", "v": "\v"}
    while i < n:
        c = text[i]
        if ord(c) <= 32:
            i += 1
        elif c == "/":
            if text.startswith("/*", i):
                end = text.find("*/", i + 2)
                i = n if end < 0 else end + 2
            else:
                end = text.find("\n", i)
                i = n if end < 0 else end + 1
        elif c in ";=":
            out.append((c, c))
            i += 1
        elif c in "\"'":
            i += 1
            buf = io.StringIO()
            while i < n and text[i] != c and text[i] not in "\n\r":
                if text[i] == "\\" and i + 1 < n:
                    buf.write(escapes.get(text[i + 1], text[i + 1]))
                    i += 2
                else:
                    buf.write(text[i])
                    i += 1
            i += 1
            out.append((_QUOTED, buf.getvalue()))
        else:
            start = i
            while i < n and ord(text[i]) > 32 and text[i] not in ";=\"'/":
                i += 1
            out.append((_WORD, text[start:i]))
    return out


def parse_jaas_config(text: str) -> tuple[JaasEntry, ...]:
    """JaasConfig(loginContextName, jaasConfigParams): ``<loginModuleClass> <controlFlag> (<key>=<value>)*;`` one or
    more times; ValueError with Kafka's message (IllegalArgumentException) for a malformed one."""
    tokens = _tokens(text) + [(_EOF, "")]
    pos = 0
    entries: list[JaasEntry] = []

    def take() -> tuple[str, str]:
        nonlocal pos
        token = tokens[pos]
        pos = min(pos + 1, len(tokens) - 1)
        return token

    while (token := take())[0] != _EOF:
        module = token[1]
        kind, flag = take()
        if kind == _EOF:
            raise ValueError("Login module control flag not specified in JAAS config")
        if kind not in (_WORD, _QUOTED) or flag.upper() not in _FLAGS:
            raise ValueError(f"Invalid login module control flag '{flag}' in JAAS config")
        options: dict[str, str] = {}
        while (token := take())[0] not in (_EOF, ";"):
            key = token[1]
            if take()[0] != "=" or (value := take())[0] not in (_WORD, _QUOTED):
                raise ValueError(f"Value not specified for key '{key}' in JAAS config")
            options[key] = value[1]
        if token[0] != ";":
            raise ValueError("JAAS config entry not terminated by semi-colon")
        entries.append(JaasEntry(module, flag.upper(), options))
    if not entries:
        raise ValueError("Login module not specified in JAAS config")
    return tuple(entries)


def server_jaas_entry(text: str, mechanism: str) -> JaasEntry:
    """JaasContext.loadServerContext over a ``<mechanism>.sasl.jaas.config`` value: exactly one login module, the
    one kactor's mechanism takes (PlainLoginModule for PLAIN, ScramLoginModule for SCRAM-SHA-*)."""
    entries = parse_jaas_config(text)
    if len(entries) != 1:
        raise ValueError(f"JAAS config property contains {len(entries)} login modules, should be 1 module")
    entry = entries[0]
    wanted = PLAIN_LOGIN_MODULE if mechanism == PLAIN else SCRAM_LOGIN_MODULE
    if entry.login_module != wanted:
        raise ValueError(f"login module {entry.login_module} cannot serve SASL mechanism {mechanism}: kactor "
                         f"loads no Java class and takes {wanted}")
    return entry


# -- PlainSaslServer -------------------------------------------------------------------------------------------------
def plain_authenticate(users: Mapping[str, str], token: bytes) -> str:
    """PlainSaslServer.evaluateResponse (RFC 4616: ``authzid NUL authcid NUL passwd``) with
    PlainServerCallbackHandler (the JAAS options ``user_<name>="<password>"``): the authenticated user name."""
    parts = token.decode("utf-8", errors="replace").split("\u0000")
    if len(parts) != 3:
        raise SaslException(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(parts)}")
    authorization_id, username, password = parts
    if not username:
        raise SaslException("Authentication failed: username not specified")
    if not password:
        raise SaslException("Authentication failed: password not specified")
    expected = users.get(f"user_{username}")
    if expected is None or not _equal(expected, password):
        raise SaslAuthenticationException("Authentication failed: Invalid username or password")
    if authorization_id and authorization_id != username:
        raise SaslAuthenticationException(
            "Authentication failed: Client requested an authorization id that is different from username")
    return username


def _equal(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


# -- SaslServerAuthenticator -----------------------------------------------------------------------------------------
class SaslState(enum.Enum):
    """SaslServerAuthenticator.SaslState (REAUTH_BAD_MECHANISM is FAILED here: the handshake is answered, then the
    connection closed)."""

    REAUTH_PROCESS_HANDSHAKE = "REAUTH_PROCESS_HANDSHAKE"
    INITIAL_REQUEST = "INITIAL_REQUEST"
    HANDSHAKE_OR_VERSIONS_REQUEST = "HANDSHAKE_OR_VERSIONS_REQUEST"
    HANDSHAKE_REQUEST = "HANDSHAKE_REQUEST"
    AUTHENTICATE = "AUTHENTICATE"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


class StepKind(enum.Enum):
    DISPATCH = "dispatch"  # ApiVersions: answered as on any listener
    ANSWER = "answer"  # answer with ``body`` (SaslHandshake's response)
    ANSWER_AND_CLOSE = "answer and close"  # answer with ``body``, then close (a failure Kafka tells the client of)
    EVALUATE = "evaluate"  # a token for the mechanism: `evaluate` it (off the I/O thread: SCRAM reads ZooKeeper)
    CLOSE = "close"  # close without an answer


@attrs.frozen(slots=True)
class Step:
    kind: StepKind
    body: Any = None  # the answer's wire body; None with ``error``: the request's own error response
    reason: str = ""
    token: bytes = b""
    error: int = 0


# A SCRAM credential lookup: (user, mechanism) -> the stored credential, None for an unknown user.
CredentialLookup = Callable[[str, ScramMechanism], "ScramCredential | None"]


@attrs.frozen(slots=True)
class ListenerSasl:
    """A SASL listener's mechanisms (sasl.enabled.mechanisms, in order), each one's JAAS entry, each one's
    ``connections.max.reauth.ms`` (KIP-368; 0 or absent: sessions never expire) and the broker's
    ``connection.failed.authentication.delay.ms`` (KIP-306: how long a connection whose authentication failed is held,
    its failure answer with it, before the answer is written and the connection closed; 0: at once)."""

    mechanisms: tuple[str, ...]
    jaas: Mapping[str, JaasEntry] = attrs.field(factory=dict)
    max_reauth_ms: Mapping[str, int] = attrs.field(factory=dict)
    failed_authentication_delay_ms: int = FAILED_AUTHENTICATION_DELAY_MS


# KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS: a re-authentication at most once a second
MIN_REAUTH_INTERVAL_MS = 1000.0


def session_expired(expiry_ms: float | None, now_ms: float) -> bool:
    """KafkaChannel.serverAuthenticationSessionExpired: the connection's session (KIP-368) is over; its next request
    other than a re-authentication closes it."""
    return expiry_ms is not None and now_ms > expiry_ms


def may_begin_reauthentication(expiry_ms: float | None, last_start_ms: float | None, now_ms: float) -> bool:
    """KafkaChannel.maybeBeginServerReauthentication: a SaslHandshake on an authenticated connection starts a
    re-authentication when its session has an expiry and the last one started at least a second ago; otherwise
    KafkaApis answers it (ILLEGAL_SASL_STATE)."""
    if expiry_ms is None:
        return False
    return last_start_ms is None or now_ms - last_start_ms >= MIN_REAUTH_INTERVAL_MS


class SaslServerAuthenticator:
    """One connection's authentication, as Kafka 2.6.3's SaslServerAuthenticator: ``frame`` for each Kafka request
    before authentication is complete (the caller has decoded its header: api key, version, body), ``raw`` for a
    token after a v0 handshake, ``evaluate`` for a token the mechanism checks. ``principal`` is ``User:<name>`` once
    ``complete``. Touched by one thread at a time (the connection is muted while a token is evaluated)."""

    __slots__ = ("sasl", "lookup", "nonce", "state", "mechanism", "kafka_headers", "username", "_scram", "previous",
                 "supports_reauthentication", "session_expiry_ms")

    def __init__(self, sasl: ListenerSasl, lookup: CredentialLookup,
                 nonce: Callable[[], str] = secure_random_string, previous: tuple[str, str] | None = None) -> None:
        """``previous``: (mechanism, principal) of the authentication this one renews (KIP-368's
        ReauthInfo.reauthenticating); it starts at the SaslHandshake, which must name the same mechanism, and must
        end with the same principal."""
        self.sasl = sasl
        self.lookup = lookup
        self.nonce = nonce
        self.previous = previous
        self.state = SaslState.INITIAL_REQUEST if previous is None else SaslState.REAUTH_PROCESS_HANDSHAKE
        self.mechanism = ""
        self.kafka_headers = True  # False after a v0 handshake: raw tokens without Kafka's framing
        self.username = ""
        self._scram: ScramServerState | None = None
        # ReauthInfo.connectedClientSupportsReauthentication: a SaslAuthenticate above v0 was seen
        self.supports_reauthentication = False
        self.session_expiry_ms: float | None = None  # ReauthInfo.sessionExpirationTimeNanos, in ms

    @property
    def authentication_text(self) -> str:
        """ReauthInfo.authenticationOrReauthenticationText."""
        return "authentication" if self.previous is None else "re-authentication"

    def complete_session(self, now_ms: float) -> int:
        """ReauthInfo.calcCompletionTimesAndReturnSessionLifetimeMs at ``now_ms``: the session lifetime the
        SaslAuthenticate answer carries (``connections.max.reauth.ms`` of the mechanism; PLAIN and SCRAM credentials
        do not expire), its expiry set when it is not 0."""
        lifetime = max(0, int(self.sasl.max_reauth_ms.get(self.mechanism, 0)))
        self.session_expiry_ms = now_ms + lifetime if lifetime > 0 else None
        return lifetime

    @property
    def complete(self) -> bool:
        return self.state is SaslState.COMPLETE

    @property
    def failed(self) -> bool:
        return self.state is SaslState.FAILED

    @property
    def principal(self) -> str:
        return f"User:{self.username}"

    def frame(self, api_key: int, version: int, body: Mapping[str, Any]) -> Step:
        """handleKafkaRequest (before the handshake) or handleSaslToken with Kafka headers (after a v1 one)."""
        if self.state is SaslState.REAUTH_PROCESS_HANDSHAKE:
            if api_key != SASL_HANDSHAKE:
                self.state = SaslState.FAILED
                return Step(StepKind.CLOSE, reason=f"Unexpected Kafka request of type {api_key} during SASL "
                                                   "re-authentication.")
            return self._handshake_phase(api_key, version, body)
        if self.state in (SaslState.INITIAL_REQUEST, SaslState.HANDSHAKE_OR_VERSIONS_REQUEST,
                          SaslState.HANDSHAKE_REQUEST):
            return self._handshake_phase(api_key, version, body)
        if self.state is SaslState.AUTHENTICATE and self.kafka_headers:
            if api_key != SASL_AUTHENTICATE:
                # answered with the request's own error response, then closed
                self.state = SaslState.FAILED
                return Step(StepKind.ANSWER_AND_CLOSE, None, f"Unexpected Kafka request of type {api_key} during "
                            f"SASL {self.authentication_text}.", error=ILLEGAL_SASL_STATE)
            if version > 0:
                self.supports_reauthentication = True
            return Step(StepKind.EVALUATE, token=bytes(body.get("auth_bytes") or b""))
        self.state = SaslState.FAILED
        return Step(StepKind.CLOSE, reason=f"Unexpected Kafka request of type {api_key} in SASL state "
                                           f"{self.state.value}")

    def _handshake_phase(self, api_key: int, version: int, body: Mapping[str, Any]) -> Step:
        if api_key not in (API_VERSIONS, SASL_HANDSHAKE):
            self.state = SaslState.FAILED
            return Step(StepKind.CLOSE, reason=f"Unexpected Kafka request of type {api_key} during SASL handshake.")
        if api_key == API_VERSIONS:
            if self.state is SaslState.HANDSHAKE_REQUEST:
                # handleApiVersionsRequest: a second one is an IllegalSaslStateException
                self.state = SaslState.FAILED
                return Step(StepKind.CLOSE, reason="Unexpected ApiVersions request received during SASL "
                                                   "authentication")
            self.state = SaslState.HANDSHAKE_REQUEST
            return Step(StepKind.DISPATCH)
        mechanism = str(body.get("mechanism") or "")
        self.kafka_headers = version >= 1
        enabled = list(self.sasl.mechanisms)
        if mechanism not in enabled:
            self.state = SaslState.FAILED
            return Step(StepKind.ANSWER_AND_CLOSE, {"error_code": UNSUPPORTED_SASL_MECHANISM, "mechanisms": enabled},
                        f"Unsupported SASL mechanism {mechanism}")
        if self.previous is not None and mechanism != self.previous[0]:
            # ReauthInfo.saslMechanismUnchanged: the handshake is answered, the re-authentication then fails
            self.state = SaslState.FAILED
            return Step(StepKind.ANSWER_AND_CLOSE, {"error_code": 0, "mechanisms": enabled},
                        f"SASL mechanism '{mechanism}' requested by client is not supported for re-authentication "
                        f"of mechanism '{self.previous[0]}'")
        self.mechanism = mechanism
        self.state = SaslState.AUTHENTICATE
        return Step(StepKind.ANSWER, {"error_code": 0, "mechanisms": enabled})

    def raw(self, token: bytes) -> Step:
        """A frame after a v0 handshake: the mechanism's raw token (handleSaslToken without Kafka headers)."""
        if self.state is not SaslState.AUTHENTICATE or self.kafka_headers:
            self.state = SaslState.FAILED
            return Step(StepKind.CLOSE, reason="unexpected SASL token")
        return Step(StepKind.EVALUATE, token=token)

    def evaluate(self, token: bytes) -> bytes:
        """saslServer.evaluateResponse for the negotiated mechanism: the server's answer token. Raises
        SaslAuthenticationException with the message the client is told (a plain SaslException becomes Kafka's
        "Authentication failed during authentication due to invalid credentials with SASL mechanism <m>"); the
        state is then FAILED."""
        try:
            response = self._evaluate(token)
        except SaslAuthenticationException:
            self.state = SaslState.FAILED
            raise
        except SaslException as e:
            self.state = SaslState.FAILED
            raise SaslAuthenticationException(f"Authentication failed during {self.authentication_text} due to "
                                              f"invalid credentials with SASL mechanism {self.mechanism}") from e
        if self.complete and self.previous is not None and self.principal != self.previous[1]:
            # ReauthInfo.ensurePrincipalUnchanged
            self.state = SaslState.FAILED
            before, after = self.previous[1].split(":", 1), self.principal.split(":", 1)
            raise SaslAuthenticationException(f"Cannot change principals during re-authentication from "
                                              f"{before[0]}.{before[1]}: {after[0]}.{after[1]}")
        return response

    def _evaluate(self, token: bytes) -> bytes:
        if self.mechanism == PLAIN:
            self.username = plain_authenticate(self.sasl.jaas[PLAIN].options, token)
            self.state = SaslState.COMPLETE
            return b""
        scram = ScramMechanism.for_mechanism_name(self.mechanism)
        if scram is None:  # a mechanism the listener enabled but nothing evaluates: refused by the config
            raise SaslException(f"no SASL server for {self.mechanism}")
        if self._scram is None:
            client_first, username = parse_client_first(token)
            # ScramSaslServer ignores an extension it does not know; tokenauth=true asks for a delegation token's
            # credential, and kactor has none
            token_auth = dict(client_first.extensions).get("tokenauth", "").lower() == "true"
            credential = None if token_auth else self.lookup(username, scram)
            self._scram, answer = server_first(scram, client_first, username, credential, self.nonce())
            return answer
        answer = server_final(self._scram, token)
        self.username = self._scram.username
        self.state = SaslState.COMPLETE
        return answer
