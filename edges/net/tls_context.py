"""TLS settings for the broker's SSL listeners and its clients: the server's and the client's ``ssl.SSLContext`` from
``ssl.*`` settings (Kafka's SslFactory / DefaultSslEngineFactory) and the principal of the peer's certificate
(DefaultKafkaPrincipalBuilder with ``ssl.principal.mapping.rules=DEFAULT``). The connections that use them are
edges/net/tls.py's; this module imports nothing of the network edge, so the configuration and the command-line tools
read ``ssl.*`` without loading the wire protocol.

Key stores are PKCS12 (read with ``cryptography``) or PEM (a file holding the private key and the certificate chain,
the key encrypted with ``ssl.key.password`` or not at all — Kafka 2.7's PEM support, KIP-651); trust stores PKCS12
or PEM (CA certificates). Java's JKS is not readable here and is refused with a clear message. ``TlsConfigError``
names the key at fault; the shell turns it into a start-up ConfigError.
"""

from __future__ import annotations

import os
import secrets
import ssl
import tempfile
from collections.abc import Mapping
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

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


def _load_keystore(ctx: ssl.SSLContext, ssl_values: Mapping[str, Any], prefix: str) -> None:
    """DefaultSslEngineFactory.createKeystore + the key manager: the server's key and certificate chain."""
    location = str(ssl_values["ssl.keystore.location"])
    kind = str(ssl_values.get("ssl.keystore.type") or "JKS").upper()
    password = _password(ssl_values.get("ssl.keystore.password"))
    key_password = _password(ssl_values.get("ssl.key.password"))
    key = f"{prefix}ssl.keystore.location"
    if kind == "PEM":
        if password is not None:
            raise TlsConfigError(f"{prefix}ssl.keystore.password: SSL key store password cannot be specified with "
                                 "PEM format, only key password may be specified")
        _read(location, key)  # a clear error for a missing file before OpenSSL's
        try:
            ctx.load_cert_chain(location, password=key_password or None)
        except (ssl.SSLError, ValueError) as e:
            raise TlsConfigError(f"Failed to load SSL keystore {location} of type PEM ({key}): {e}") from None
        return
    if kind != "PKCS12":
        raise TlsConfigError(f"{prefix}ssl.keystore.type={kind}: kactor reads PKCS12 and PEM key stores only "
                             "(keytool -importkeystore -deststoretype PKCS12 converts a JKS one)")
    if password is None:
        raise TlsConfigError(f"{prefix}ssl.keystore.password: SSL key store is specified, but key store password "
                             "is not specified.")
    data = _read(location, key)
    try:
        private_key, cert, chain = pkcs12.load_key_and_certificates(data, password.encode())
    except ValueError as e:
        raise TlsConfigError(f"Failed to load SSL keystore {location} of type PKCS12 ({key}): {e}") from None
    if private_key is None or cert is None:
        raise TlsConfigError(f"Failed to load SSL keystore {location} of type PKCS12 ({key}): it holds no private "
                             "key with its certificate")
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
        raise TlsConfigError(f"Failed to load SSL keystore {location} of type PKCS12 ({key}): {e}") from None
    finally:
        os.unlink(path)


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
    data = _read(location, key)
    if kind == "PEM":
        if password is not None:
            raise TlsConfigError(f"{prefix}ssl.truststore.password: SSL trust store password cannot be specified "
                                 "for PEM format.")
        try:
            ctx.load_verify_locations(cadata=data.decode("ascii"))
        except (ssl.SSLError, ValueError, UnicodeDecodeError) as e:
            raise TlsConfigError(f"Failed to load SSL truststore {location} of type PEM ({key}): {e}") from None
        return True
    if kind != "PKCS12":
        raise TlsConfigError(f"{prefix}ssl.truststore.type={kind}: kactor reads PKCS12 and PEM trust stores only "
                             "(keytool -importkeystore -deststoretype PKCS12 converts a JKS one)")
    try:
        certs = pkcs12.load_pkcs12(data, password.encode() if password is not None else None)
    except ValueError as e:
        raise TlsConfigError(f"Failed to load SSL truststore {location} of type PKCS12 ({key}): {e}") from None
    found = [c.certificate for c in certs.additional_certs] + ([certs.cert.certificate] if certs.cert else [])
    if not found:
        raise TlsConfigError(f"Failed to load SSL truststore {location} of type PKCS12 ({key}): no certificate in it")
    ctx.load_verify_locations(cadata="".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in found))
    return True


def principal_of(sock: ssl.SSLSocket) -> str:
    """DefaultKafkaPrincipalBuilder for SSL with ssl.principal.mapping.rules=DEFAULT: ``User:`` and the peer
    certificate's subject DN (RFC 2253, as X500Principal.getName); ANONYMOUS without a certificate."""
    der = sock.getpeercert(binary_form=True)
    if not der:
        return ANONYMOUS
    return "User:" + x509.load_der_x509_certificate(der).subject.rfc4514_string()
