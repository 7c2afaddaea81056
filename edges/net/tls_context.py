"""TLS settings for the broker's SSL listeners and its clients: the server's and the client's ``ssl.SSLContext`` from
``ssl.*`` settings (Kafka's SslFactory / DefaultSslEngineFactory) and the principal of the peer's certificate
(DefaultKafkaPrincipalBuilder with ``ssl.principal.mapping.rules=DEFAULT``). The connections that use them are
edges/net/tls.py's; this module imports nothing of the network edge, so the configuration and the command-line tools
read ``ssl.*`` without loading the wire protocol.

Key and trust stores are JKS (Kafka's default ``ssl.keystore.type`` / ``ssl.truststore.type``) or JCEKS, read with
pyjks, PKCS12, read with ``cryptography`` — either format under either type, by the file's content, as Java 9+ reads
them — or PEM (a file holding the private key and the certificate chain, the key encrypted with ``ssl.key.password``
or not at all — Kafka 2.7's PEM support, KIP-651; a trust store of CA certificates). A certificate OpenSSL refuses at
its security level but Java accepts (signed with SHA-1, as KafkaJS's test certificates are) is refused with one line
naming the setting that accepts it, ``ssl.cipher.suites=DEFAULT:@SECLEVEL=0``, which lowers the level of that
listener's context only. ``TlsConfigError`` names the key at fault; the shell turns it into a start-up ConfigError.
"""

from __future__ import annotations

import os
import secrets
import ssl
import tempfile
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cryptography import x509

# ``cryptography`` is imported where a store is read, not here: a broker or tool without an SSL listener never needs
# it, and it took ~70 ms of every broker's and command's start.

ANONYMOUS = "User:ANONYMOUS"  # KafkaPrincipal.ANONYMOUS: an SSL peer that sent no certificate

# ssl.enabled.protocols names (Java's) → OpenSSL's versions
_VERSIONS = {"TLSv1": ssl.TLSVersion.TLSv1, "TLSv1.1": ssl.TLSVersion.TLSv1_1, "TLSv1.2": ssl.TLSVersion.TLSv1_2,
             "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_CONTEXT_PROTOCOLS = ("TLS", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3")  # ssl.protocol (SSLContext.getInstance)
_CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


class TlsConfigError(ValueError):
    """A listener's TLS settings cannot make a server context: ``str()`` is one line naming the key."""


def _password(value: Any) -> str | None:
    """A PASSWORD config's text; an empty one is none (so ``listener.name.<l>.ssl.keystore.password=`` unsets the
    plain key's for a listener whose PEM store takes none)."""
    text = None if value is None else str(value)
    return text or None


def server_context(ssl_values: Mapping[str, Any], prefix: str = "") -> ssl.SSLContext:
    """DefaultSslEngineFactory.configure + createSSLContext for a broker listener (server mode). ``ssl_values``:
    the listener's effective ``ssl.*`` values (its ``listener.name.<l>.ssl.*`` overrides applied); ``prefix`` is put
    before a key named in an error (``listener.name.<l>.`` when the override was the one set)."""
    ctx = _base_context(ssl_values, ssl.PROTOCOL_TLS_SERVER, prefix)
    location = ssl_values.get("ssl.keystore.location")
    if not location:
        raise TlsConfigError(f"{prefix}ssl.keystore.location is not set: an SSL listener needs the broker's "
                             "certificate and private key (ssl.keystore.type PKCS12 or PEM)")
    _load_keystore(ctx, ssl_values, prefix)
    client_auth = str(ssl_values.get("ssl.client.auth") or "none").lower()
    ctx.verify_mode = _CLIENT_AUTH[client_auth]
    if ctx.verify_mode != ssl.CERT_NONE and not _load_truststore(ctx, ssl_values, prefix):
        ctx.load_default_certs(ssl.Purpose.CLIENT_AUTH)  # Java's default trust store, the system's here
    elif ctx.verify_mode == ssl.CERT_NONE:
        _load_truststore(ctx, ssl_values, prefix)  # checked as Kafka does even when not used
    return ctx


def client_context(ssl_values: Mapping[str, Any], prefix: str = "") -> ssl.SSLContext:
    """DefaultSslEngineFactory in client mode, for the broker's own connections over an SSL inter-broker listener
    (the controller's channels, the followers' fetchers): the peer's certificate checked against the trust store (the
    system's CAs without one) and, with ``ssl.endpoint.identification.algorithm=https`` (2.6's default), its name
    against the host connected to; the key store, when set, is the certificate shown to a peer that asks for one."""
    ctx = _base_context(ssl_values, ssl.PROTOCOL_TLS_CLIENT, prefix)
    if ssl_values.get("ssl.keystore.location"):
        _load_keystore(ctx, ssl_values, prefix)
    if not _load_truststore(ctx, ssl_values, prefix):
        ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)
    algorithm = str(ssl_values.get("ssl.endpoint.identification.algorithm") or "")
    if algorithm.lower() not in ("", "https"):
        raise TlsConfigError(f"{prefix}ssl.endpoint.identification.algorithm={algorithm}: only https (a host name "
                             "check) or an empty value (none) is known")
    ctx.check_hostname = algorithm.lower() == "https"
    ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


def _base_context(ssl_values: Mapping[str, Any], protocol: int, prefix: str) -> ssl.SSLContext:
    """The context's protocol versions (ssl.protocol, ssl.enabled.protocols) and cipher suites (ssl.cipher.suites)."""
    context_protocol = str(ssl_values.get("ssl.protocol") or "TLSv1.3")
    if context_protocol not in _CONTEXT_PROTOCOLS:
        raise TlsConfigError(f"Invalid value {context_protocol} for configuration {prefix}ssl.protocol: "
                             f"{context_protocol} SSLContext not available")
    enabled = tuple(ssl_values.get("ssl.enabled.protocols") or ())
    unknown = [p for p in enabled if p not in _VERSIONS]
    if unknown or not enabled:
        raise TlsConfigError(f"Invalid value {','.join(enabled)} for configuration {prefix}ssl.enabled.protocols: "
                             f"kactor's TLS knows {', '.join(_VERSIONS)}")
    ctx = ssl.SSLContext(protocol)  # type: ignore[arg-type]
    versions = sorted(_VERSIONS[p] for p in enabled)
    try:
        ctx.minimum_version, ctx.maximum_version = versions[0], versions[-1]
    except (ValueError, ssl.SSLError) as e:
        raise TlsConfigError(f"{prefix}ssl.enabled.protocols={','.join(enabled)} cannot be enabled: {e}") from None
    ctx.options |= ssl.OP_NO_COMPRESSION
    suites = tuple(ssl_values.get("ssl.cipher.suites") or ())
    if suites:
        try:
            ctx.set_ciphers(":".join(suites))
        except ssl.SSLError:
            raise TlsConfigError(f"{prefix}ssl.cipher.suites={','.join(suites)}: no cipher suite OpenSSL knows by "
                                 "these names (OpenSSL's are expected: ECDHE-RSA-AES256-GCM-SHA384...)") from None
    return ctx


def _read(path: str, key: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise TlsConfigError(f"Failed to load SSL store {path} ({key}): {e.strerror or e}") from None


# the first four bytes of a Java key store file: JKS, JCEKS (a PKCS12 one begins with a DER SEQUENCE)
_JAVA_MAGIC = {b"\xfe\xed\xfe\xed": "JKS", b"\xce\xce\xce\xce": "JCEKS"}
_JAVA_TYPES = ("JKS", "JCEKS", "PKCS12")  # KeyStore.getInstance types kactor reads (PEM is read apart)
# OpenSSL's refusals of a certificate for its security level (SSL_CTX_use_certificate / ssl_security_cert)
_TOO_WEAK = ("CA_MD_TOO_WEAK", "EE_KEY_TOO_SMALL", "CA_KEY_TOO_SMALL")


def _store_format(data: bytes, kind: str) -> str:
    """The format of a JKS, JCEKS or PKCS12 store's bytes. Java 9 and later read a file of either format under
    either type (keystore.type.compat), so a Kafka user's PKCS12 file behind the default ``ssl.keystore.type=JKS``
    works, as in Kafka 2.6.3 on a current JVM; the file's content decides."""
    return _JAVA_MAGIC.get(data[:4], "PKCS12" if kind in _JAVA_TYPES else kind)


def _jks(data: bytes, password: str | None, location: str, kind: str, key: str) -> Any:
    """A JKS or JCEKS store read with pyjks (Java's own format, not readable by OpenSSL or ``cryptography``); its
    integrity is checked with ``password`` when there is one, as KeyStore.load does."""
    import jks  # only for a Java key store

    try:
        return jks.KeyStore.loads(data, password, try_decrypt_keys=False)
    except jks.KeystoreSignatureException:
        raise TlsConfigError(f"Failed to load SSL {kind} {location} of type JKS ({key}): Keystore was tagged as "
                             "tampered with, or password was incorrect") from None
    except (jks.util.BadKeystoreFormatException, jks.util.UnsupportedKeystoreVersionException,
            jks.util.DuplicateAliasException) as e:
        raise TlsConfigError(f"Failed to load SSL {kind} {location} of type JKS ({key}): {e}") from None


def _key_material(location: str, kind: str, password: str, key_password: str | None,
                  prefix: str) -> tuple[Any, x509.Certificate, list[x509.Certificate]]:
    """DefaultSslEngineFactory.createKeystore + the key manager's key: (private key, certificate, the rest of its
    chain) of a PKCS12, JKS or JCEKS key store. A Java store's key is decrypted with ``ssl.key.password``, else the
    store's password (Kafka's SecurityStore.keyPassword); with several key entries, the first alias's."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    key = f"{prefix}ssl.keystore.location"
    data = _read(location, key)
    store = _store_format(data, kind)
    if store == "PKCS12":
        try:
            private_key, cert, chain = pkcs12.load_key_and_certificates(data, password.encode())
        except ValueError as e:
            raise TlsConfigError(f"Failed to load SSL keystore {location} of type {kind} ({key}): {e}") from None
        if private_key is None or cert is None:
            raise TlsConfigError(f"Failed to load SSL keystore {location} of type {kind} ({key}): it holds no "
                                 "private key with its certificate")
        return private_key, cert, list(chain)
    import jks

    entries = _jks(data, password, location, "keystore", key).private_keys
    if not entries:
        raise TlsConfigError(f"Failed to load SSL keystore {location} of type {store} ({key}): it holds no private "
                             "key entry (keytool -genkeypair or -importkeystore makes one)")
    alias = sorted(entries)[0]
    entry = entries[alias]
    try:
        entry.decrypt(key_password or password)
    except jks.util.DecryptionFailureException:
        raise TlsConfigError(f"Failed to load SSL keystore {location} of type {store} ({key}): Cannot recover key "
                             f"{alias!r}: {prefix}ssl.key.password (or, without it, {prefix}ssl.keystore.password) "
                             "is not its password") from None
    try:
        private_key = serialization.load_der_private_key(entry.pkey_pkcs8, None)
        certs = [x509.load_der_x509_certificate(der) for _, der in entry.cert_chain]
    except ValueError as e:
        raise TlsConfigError(f"Failed to load SSL keystore {location} of type {store} ({key}): {e}") from None
    if not certs:
        raise TlsConfigError(f"Failed to load SSL keystore {location} of type {store} ({key}): the key {alias!r} "
                             "has no certificate")
    return private_key, certs[0], certs[1:]


def _too_weak(e: ssl.SSLError, location: str, certs: list[x509.Certificate], level: int, key: str,
              prefix: str) -> TlsConfigError:
    """One line for OpenSSL's refusal of a certificate a Java broker accepts (a chain signed with SHA-1, a small
    RSA key): which certificate, why, and the setting that lets this listener's context take it."""
    weak = next((c for c in certs if c.signature_hash_algorithm is not None
                 and c.signature_hash_algorithm.name in ("sha1", "md5") and c.issuer != c.subject), None)
    if e.reason == "CA_MD_TOO_WEAK" and weak is not None:
        what = (f"the certificate {weak.subject.rfc4514_string()} is signed with "
                f"{weak.signature_hash_algorithm.name.upper().replace('SHA1', 'SHA-1')}")  # type: ignore[union-attr]
        needed = 0  # OpenSSL 3 counts SHA-1 signatures as below security level 1
    else:
        what = "a certificate of its chain has a key too small"
        needed = 1
    return TlsConfigError(
        f"Failed to load SSL keystore {location} ({key}): {what}, which OpenSSL refuses at security level {level} "
        f"({e.reason}; Java accepts it). Issue the certificate again (SHA-256, a 2048-bit RSA or an EC key), or "
        f"lower OpenSSL's security level for these TLS settings only: {prefix}ssl.cipher.suites=DEFAULT:@SECLEVEL="
        f"{needed}")


def _load_keystore(ctx: ssl.SSLContext, ssl_values: Mapping[str, Any], prefix: str) -> None:
    """DefaultSslEngineFactory.createKeystore + the key manager: the server's key and certificate chain."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    location = str(ssl_values["ssl.keystore.location"])
    kind = str(ssl_values.get("ssl.keystore.type") or "JKS").upper()
    password = _password(ssl_values.get("ssl.keystore.password"))
    key_password = _password(ssl_values.get("ssl.key.password"))
    key = f"{prefix}ssl.keystore.location"
    if kind == "PEM":
        if password is not None:
            raise TlsConfigError(f"{prefix}ssl.keystore.password: SSL key store password cannot be specified with "
                                 "PEM format, only key password may be specified")
        data = _read(location, key)  # a clear error for a missing file before OpenSSL's
        try:
            ctx.load_cert_chain(location, password=key_password or None)
        except ssl.SSLError as e:
            if e.reason in _TOO_WEAK:
                certs = x509.load_pem_x509_certificates(data) if b"CERTIFICATE" in data else []
                raise _too_weak(e, location, certs, ctx.security_level, key, prefix) from None
            raise TlsConfigError(f"Failed to load SSL keystore {location} of type PEM ({key}): {e}") from None
        except ValueError as e:
            raise TlsConfigError(f"Failed to load SSL keystore {location} of type PEM ({key}): {e}") from None
        return
    if kind not in _JAVA_TYPES:
        raise TlsConfigError(f"{prefix}ssl.keystore.type={kind}: kactor reads JKS, JCEKS, PKCS12 and PEM key stores")
    if password is None:
        raise TlsConfigError(f"{prefix}ssl.keystore.password: SSL key store is specified, but key store password "
                             "is not specified.")
    private_key, cert, chain = _key_material(location, kind, password, key_password, prefix)
    # load_cert_chain reads files only: the key goes through a private temporary file, encrypted with a one-off
    # password, and is deleted at once
    one_off = secrets.token_bytes(32)
    pem = private_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.BestAvailableEncryption(one_off))
    pem += b"".join(c.public_bytes(serialization.Encoding.PEM) for c in (cert, *chain))
    fd, path = tempfile.mkstemp(prefix="kactor-keystore-", suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
        ctx.load_cert_chain(path, password=one_off)
    except ssl.SSLError as e:
        if e.reason in _TOO_WEAK:
            raise _too_weak(e, location, [cert, *chain], ctx.security_level, key, prefix) from None
        raise TlsConfigError(f"Failed to load SSL keystore {location} of type {kind} ({key}): {e}") from None
    finally:
        os.unlink(path)


def _trusted_certificates(location: str, kind: str, password: str | None, prefix: str) -> list[x509.Certificate]:
    """DefaultSslEngineFactory.createTruststore of a PKCS12, JKS or JCEKS store: its certificates, as Java's
    TrustStoreUtil takes them (each trusted certificate entry and each key entry's own certificate). Without a
    password a Java store is read without its integrity check, as KeyStore.load(stream, null) does."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import pkcs12

    key = f"{prefix}ssl.truststore.location"
    data = _read(location, key)
    store = _store_format(data, kind)
    if store == "PKCS12":
        try:
            certs = pkcs12.load_pkcs12(data, password.encode() if password is not None else None)
        except ValueError as e:
            raise TlsConfigError(f"Failed to load SSL truststore {location} of type {kind} ({key}): {e}") from None
        return [c.certificate for c in certs.additional_certs] + ([certs.cert.certificate] if certs.cert else [])
    java = _jks(data, password, location, "truststore", key)
    ders = [e.cert for e in java.certs.values()] + [e.cert_chain[0][1] for e in java.private_keys.values()
                                                      if e.cert_chain]
    try:
        return [x509.load_der_x509_certificate(der) for der in ders]
    except ValueError as e:
        raise TlsConfigError(f"Failed to load SSL truststore {location} of type {store} ({key}): {e}") from None


def _load_truststore(ctx: ssl.SSLContext, ssl_values: Mapping[str, Any], prefix: str) -> bool:
    """DefaultSslEngineFactory.createTruststore: the CA certificates peers' certificates are checked against; False
    when none is configured."""
    location = ssl_values.get("ssl.truststore.location")
    password = _password(ssl_values.get("ssl.truststore.password"))
    if not location:
        if password is not None:
            raise TlsConfigError(f"{prefix}ssl.truststore.password: SSL trust store is not specified, but trust "
                                 "store password is specified.")
        return False
    location = str(location)
    kind = str(ssl_values.get("ssl.truststore.type") or "JKS").upper()
    key = f"{prefix}ssl.truststore.location"
    if kind == "PEM":
        data = _read(location, key)
        if password is not None:
            raise TlsConfigError(f"{prefix}ssl.truststore.password: SSL trust store password cannot be specified "
                                 "for PEM format.")
        try:
            ctx.load_verify_locations(cadata=data.decode("ascii"))
        except (ssl.SSLError, ValueError, UnicodeDecodeError) as e:
            raise TlsConfigError(f"Failed to load SSL truststore {location} of type PEM ({key}): {e}") from None
        return True
    if kind not in _JAVA_TYPES:
        raise TlsConfigError(f"{prefix}ssl.truststore.type={kind}: kactor reads JKS, JCEKS, PKCS12 and PEM trust "
                             "stores")
    from cryptography.hazmat.primitives import serialization

    found = _trusted_certificates(location, kind, password, prefix)
    if not found:
        raise TlsConfigError(f"Failed to load SSL truststore {location} of type {kind} ({key}): no certificate in it")
    ctx.load_verify_locations(cadata="".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in found))
    return True


def principal_of(sock: ssl.SSLSocket) -> str:
    """DefaultKafkaPrincipalBuilder for SSL with ssl.principal.mapping.rules=DEFAULT: ``User:`` and the peer
    certificate's subject DN (RFC 2253, as X500Principal.getName); ANONYMOUS without a certificate."""
    der = sock.getpeercert(binary_form=True)
    if not der:
        return ANONYMOUS
    from cryptography import x509

    return "User:" + x509.load_der_x509_certificate(der).subject.rfc4514_string()
