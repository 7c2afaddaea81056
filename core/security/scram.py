"""SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka 2.6.3 keeps and checks them: the credential
(ScramFormatter.generateCredential), its text in ``/config/users/<user>`` (ScramCredentialUtils), and the server side
of the exchange (ScramSaslServer.evaluateResponse) as two pure steps — `server_first` answers the client-first message
with the credential the caller looked up and a nonce it drew; `server_final` checks the client's proof and answers
with the server signature.

As 2.6.3, `server_final` does not check that the client-final message repeats the server-first message's nonce: the
proof decides, over an auth message that holds the server-first message (so the server's fresh nonce) and the client's
final message as sent, so a replayed or tampered final message fails all the same. Kafka 4 added the RFC 5802 check,
and librdkafka before 2.6.1 (confluentinc/librdkafka#4895: Debian 12's kcat, many deployed clients) sends the client
nonce twice there: such clients authenticate against 2.6.3, and so here.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import hmac
import re
import secrets

import attrs

DEFAULT_ITERATIONS = 4096  # ConfigCommand.DefaultScramIterations


class ScramMechanism(enum.Enum):
    """ScramMechanism: (hash algorithm, minimum iterations); ``mechanism_name`` is the SASL name and the config key
    under /config/users/<user>."""

    SCRAM_SHA_256 = ("sha256", 4096)
    SCRAM_SHA_512 = ("sha512", 4096)

    def __str__(self) -> str:
        return self.name

    @property
    def mechanism_name(self) -> str:
        return self.name.replace("_", "-")

    @property
    def hash_name(self) -> str:
        return self.value[0]

    @property
    def min_iterations(self) -> int:
        return int(self.value[1])

    @classmethod
    def for_mechanism_name(cls, name: str) -> ScramMechanism | None:
        return next((m for m in cls if m.mechanism_name == name), None)


MECHANISM_NAMES = tuple(m.mechanism_name for m in ScramMechanism)  # ScramMechanism.mechanismNames


class SaslException(Exception):  # noqa: N818 (Kafka's exception names)
    """javax.security.sasl.SaslException: the exchange failed; the client is told only that authentication failed."""


class SaslAuthenticationException(SaslException):
    """Kafka's SaslAuthenticationException: a failure whose message is sent to the client."""


@attrs.frozen(slots=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


# -- ScramFormatter --------------------------------------------------------------------------------------------------
def hmac_digest(mechanism: ScramMechanism, key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, mechanism.hash_name).digest()


def salted_password(mechanism: ScramMechanism, password: str, salt: bytes, iterations: int) -> bytes:
    """ScramFormatter.saltedPassword: Hi(password, salt, i) of RFC 5802, which is PBKDF2 with HMAC over one block.
    The password is taken as UTF-8 without SASLprep, as Kafka's ``normalize`` does."""
    return hashlib.pbkdf2_hmac(mechanism.hash_name, password.encode("utf-8"), salt, iterations)


def client_key(mechanism: ScramMechanism, salted: bytes) -> bytes:
    return hmac_digest(mechanism, salted, b"Client Key")


def stored_key(mechanism: ScramMechanism, client_key_bytes: bytes) -> bytes:
    return hashlib.new(mechanism.hash_name, client_key_bytes).digest()


def server_key(mechanism: ScramMechanism, salted: bytes) -> bytes:
    return hmac_digest(mechanism, salted, b"Server Key")


def secure_random_string() -> str:
    """ScramFormatter.secureRandomString: ``new BigInteger(130, random).toString(36)``."""
    value = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, r = divmod(value, 36)
        out = digits[r] + out
        if value == 0:
            return out


def generate_credential(mechanism: ScramMechanism, password: str, iterations: int = DEFAULT_ITERATIONS,
                        salt: bytes | None = None) -> ScramCredential:
    """ScramFormatter.generateCredential; Kafka's salt is the UTF-8 of a `secure_random_string`."""
    if salt is None:
        salt = secure_random_string().encode("ascii")
    salted = salted_password(mechanism, password, salt, iterations)
    return ScramCredential(salt, stored_key(mechanism, client_key(mechanism, salted)),
                           server_key(mechanism, salted), iterations)


def sasl_name(username: str) -> str:
    """ScramFormatter.saslName: ``=`` as ``=3D``, ``,`` as ``=2C``."""
    return username.replace("=", "=3D").replace(",", "=2C")


def username_of(name: str) -> str:
    """ScramFormatter.username: the inverse of `sasl_name`; any other ``=`` is refused."""
    username = name.replace("=2C", ",")
    if "=" in username.replace("=3D", ""):
        raise ValueError(f"Invalid username: {name}")
    return username.replace("=3D", "=")


# -- ScramCredentialUtils --------------------------------------------------------------------------------------------
def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def credential_to_string(credential: ScramCredential) -> str:
    """ScramCredentialUtils.credentialToString: ``salt=…,stored_key=…,server_key=…,iterations=…`` (base64)."""
    return (f"salt={_b64(credential.salt)},stored_key={_b64(credential.stored_key)},"
            f"server_key={_b64(credential.server_key)},iterations={credential.iterations}")


def credential_from_string(text: str) -> ScramCredential:
    """ScramCredentialUtils.credentialFromString (ValueError "Credentials not valid" as Kafka)."""
    props: dict[str, str] = {}
    for token in text.split(","):
        index = token.find("=")
        if index <= 0:
            raise ValueError(f"Credentials not valid: {text}")
        props[token[:index]] = token[index + 1:]
    if set(props) != {"salt", "stored_key", "server_key", "iterations"}:
        raise ValueError(f"Credentials not valid: {text}")
    try:
        return ScramCredential(base64.b64decode(props["salt"], validate=True),
                               base64.b64decode(props["stored_key"], validate=True),
                               base64.b64decode(props["server_key"], validate=True), int(props["iterations"]))
    except (binascii.Error, ValueError):
        raise ValueError(f"Credentials not valid: {text}") from None


# -- ScramMessages ---------------------------------------------------------------------------------------------------
# Java's character classes ([\x01-\x7F&&[^=,]] ...) as Python ranges
_VALUE = r"[\x01-\x2b\x2d-\x7f]+"
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_BASE64 = r"(?:[a-zA-Z0-9/+]{4})*(?:[a-zA-Z0-9/+]{3}=|[a-zA-Z0-9/+]{2}==)?"
_RESERVED = rf"(?:m={_VALUE},)?"
_EXTENSIONS = rf"(?:,[A-Za-z]+={_VALUE})*"
_CLIENT_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,{_RESERVED}n=(?P<saslname>{_SASLNAME}),r=(?P<nonce>{_PRINTABLE})"
    rf"(?P<extensions>{_EXTENSIONS})")
_CLIENT_FINAL = re.compile(
    rf"c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS},p=(?P<proof>{_BASE64})")


@attrs.frozen(slots=True)
class ClientFirstMessage:
    """ScramMessages.ClientFirstMessage: the gs2 header's authorization id, the SASL name, the nonce and the
    extensions (``name=value`` after the nonce, in the order sent)."""

    sasl_name: str
    nonce: str
    authorization_id: str = ""
    extensions: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, message: bytes) -> ClientFirstMessage:
        text = _text(message)
        m = _CLIENT_FIRST.fullmatch(text)
        if m is None:
            raise SaslException(f"Invalid SCRAM client first message format: {text}")
        extensions = tuple(tuple(item.split("=", 1)) for item in m.group("extensions").split(",")[1:])
        return cls(m.group("saslname"), m.group("nonce"), m.group("authzid") or "", extensions)  # type: ignore[arg-type]

    @property
    def bare(self) -> str:
        """clientFirstMessageBare: ``n=<name>,r=<nonce>[,<extensions>]``."""
        extensions = ",".join(f"{k}={v}" for k, v in self.extensions)
        return f"n={self.sasl_name},r={self.nonce}" + (f",{extensions}" if extensions else "")

    def to_message(self) -> str:
        return f"n,{self.authorization_id},{self.bare}"


@attrs.frozen(slots=True)
class ServerFirstMessage:
    nonce: str  # the client's nonce followed by the server's
    salt: bytes
    iterations: int

    def to_message(self) -> str:
        return f"r={self.nonce},s={_b64(self.salt)},i={self.iterations}"


@attrs.frozen(slots=True)
class ClientFinalMessage:
    channel_binding: bytes
    nonce: str
    proof: bytes

    @classmethod
    def parse(cls, message: bytes) -> ClientFinalMessage:
        text = _text(message)
        m = _CLIENT_FINAL.fullmatch(text)
        if m is None:
            raise SaslException(f"Invalid SCRAM client final message format: {text}")
        return cls(base64.b64decode(m.group("channel")), m.group("nonce"), base64.b64decode(m.group("proof")))

    @property
    def without_proof(self) -> str:
        return f"c={_b64(self.channel_binding)},r={self.nonce}"


def _text(message: bytes) -> str:
    try:
        return message.decode("utf-8")
    except UnicodeDecodeError:
        raise SaslException("Invalid SCRAM message: not UTF-8") from None


def auth_message(client_first: ClientFirstMessage, server_first: ServerFirstMessage,
                 client_final: ClientFinalMessage) -> bytes:
    """ScramFormatter.authMessage: client-first-bare, server-first, client-final-without-proof."""
    return f"{client_first.bare},{server_first.to_message()},{client_final.without_proof}".encode()


def client_proof(mechanism: ScramMechanism, salted: bytes, client_first: ClientFirstMessage,
                 server_first: ServerFirstMessage, client_final: ClientFinalMessage) -> bytes:
    """ScramFormatter.clientProof (the client's side, for tests and tools)."""
    key = client_key(mechanism, salted)
    signature = hmac_digest(mechanism, stored_key(mechanism, key), auth_message(client_first, server_first,
                                                                                 client_final))
    return bytes(a ^ b for a, b in zip(key, signature, strict=True))


# -- ScramSaslServer -------------------------------------------------------------------------------------------------
@attrs.frozen(slots=True)
class ScramServerState:
    """What the server keeps between its first and final messages (ScramSaslServer in RECEIVE_CLIENT_FINAL_MESSAGE):
    the authenticated user is ``username`` once `server_final` succeeds."""

    mechanism: ScramMechanism
    username: str
    client_first: ClientFirstMessage
    server_first: ServerFirstMessage
    credential: ScramCredential


def parse_client_first(message: bytes) -> tuple[ClientFirstMessage, str]:
    """The client-first message and the user name it asks for (the credential to look up)."""
    client_first = ClientFirstMessage.parse(message)
    try:
        username = username_of(client_first.sasl_name)
    except ValueError as e:
        raise SaslException(f"Authentication failed: Credentials could not be obtained ({e})") from None
    return client_first, username


def server_first(mechanism: ScramMechanism, client_first: ClientFirstMessage, username: str,
                 credential: ScramCredential | None, server_nonce: str) -> tuple[ScramServerState, bytes]:
    """ScramSaslServer.evaluateResponse in RECEIVE_CLIENT_FIRST_MESSAGE: refuse an unknown user, an authorization id
    other than the user, a credential below the mechanism's minimum iterations; answer ``r=<client nonce><server
    nonce>,s=<salt>,i=<iterations>``."""
    if credential is None:
        raise SaslException("Authentication failed: Invalid user credentials")
    if client_first.authorization_id and client_first.authorization_id != username:
        raise SaslAuthenticationException(
            "Authentication failed: Client requested an authorization id that is different from username")
    if credential.iterations < mechanism.min_iterations:
        raise SaslException(f"Iterations {credential.iterations} is less than the minimum "
                            f"{mechanism.min_iterations} for {mechanism}")
    first = ServerFirstMessage(client_first.nonce + server_nonce, credential.salt, credential.iterations)
    return ScramServerState(mechanism, username, client_first, first, credential), first.to_message().encode()


def server_final(state: ScramServerState, message: bytes) -> bytes:
    """ScramSaslServer.evaluateResponse in RECEIVE_CLIENT_FINAL_MESSAGE: the client's proof must give the stored key
    (H(ClientSignature XOR ClientProof)); answer ``v=<server signature>``. The nonce is not compared with the
    server-first message's (2.6.3's ScramSaslServer does not; the module's note says why that is safe)."""
    client_final = ClientFinalMessage.parse(message)
    mech, cred = state.mechanism, state.credential
    auth = auth_message(state.client_first, state.server_first, client_final)
    signature = hmac_digest(mech, cred.stored_key, auth)
    if len(client_final.proof) != len(signature):
        raise SaslException("Invalid client credentials")
    computed = stored_key(mech, bytes(a ^ b for a, b in zip(signature, client_final.proof, strict=True)))
    if not hmac.compare_digest(computed, cred.stored_key):
        raise SaslException("Invalid client credentials")
    return f"v={_b64(hmac_digest(mech, cred.server_key, auth))}".encode()


# -- ConfigCommand's SCRAM users -------------------------------------------------------------------------------------
_CREDENTIAL_PROPERTY = re.compile(r"(?:iterations=([0-9]*),)?password=(.*)")


def scram_credential_config(mechanism: ScramMechanism, value: str) -> str:
    """ConfigCommand.preProcessScramCredentials' ``scramCredential``: ``[iterations=N,]password=P`` (the value of a
    ``SCRAM-SHA-256=[...]`` entry of --add-config) becomes the credential string to store; ValueError with Kafka's
    message for another shape or fewer iterations than the mechanism's minimum."""
    m = _CREDENTIAL_PROPERTY.fullmatch(value)
    if m is None:
        raise ValueError(f"Invalid credential property {mechanism}={value}")
    text, password = m.group(1), m.group(2)
    if text is not None and not (text and int(text) < 2 ** 31):
        raise ValueError(f'For input string: "{text}"')  # Scala's toInt
    iterations = DEFAULT_ITERATIONS if text is None else int(text)
    if iterations < mechanism.min_iterations:
        raise ValueError(f"Iterations {iterations} is less than the minimum {mechanism.min_iterations} required for "
                         f"{mechanism}")
    return credential_to_string(generate_credential(mechanism, password, iterations))


def preprocess_scram_credentials(configs: dict[str, str]) -> dict[str, str]:
    """ConfigCommand.preProcessScramCredentials: each SCRAM mechanism's entry replaced by its credential string (the
    other entries, quotas, as they are)."""
    out = dict(configs)
    for mechanism in ScramMechanism:
        if mechanism.mechanism_name in out:
            out[mechanism.mechanism_name] = scram_credential_config(mechanism, out[mechanism.mechanism_name])
    return out


# -- CredentialCache -------------------------------------------------------------------------------------------------
