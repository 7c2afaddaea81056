"""Certificates for secured local clusters, made with ``cryptography``: a CA, certificates it signs (a broker's
with the hosts it serves as subject alternative names, a client's), written as PEM files and PKCS12 stores — what
Kafka's SSL listeners (``ssl.keystore.*`` / ``ssl.truststore.*``) and librdkafka's ``ssl.*`` read.

Kafka ships no such tool (its docs make the stores with keytool and openssl); kactor's benchmarks, the secured
``kactor`` commands and the tests need one, and keep it here only. Keys are P-256 ECDSA, certificates SHA-256 signed.
"""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

import attrs
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID


def name(cn: str, org: str = "kactor") -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, org), x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def certificate(subject: x509.Name, key: ec.EllipticCurvePrivateKey, issuer: x509.Name,
                issuer_key: ec.EllipticCurvePrivateKey, *, ca: bool, sans: list[x509.GeneralName] | None = None,
                days: int = 2) -> x509.Certificate:
    """One certificate of ``subject``'s key signed by ``issuer_key``, valid from an hour ago for ``days``."""
    now = datetime.datetime.now(datetime.UTC)
    b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
         .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
         .not_valid_after(now + datetime.timedelta(days=days))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if sans:
        b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return b.sign(issuer_key, hashes.SHA256())


def host_names(hosts: list[str]) -> list[x509.GeneralName]:
    """Subject alternative names for ``hosts``: an IP address as an IPAddress name, anything else as a DNSName."""
    out: list[x509.GeneralName] = []
    for h in hosts:
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            out.append(x509.DNSName(h))
    return out


@attrs.frozen
class CertificateAuthority:
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey
    pem: str  # its certificate as a PEM trust store
    p12: str  # its certificate as a PKCS12 trust store (password: the one it was made with)


@attrs.frozen
class Identity:
    """A private key and its certificate chain as files: ``pem`` (the key encrypted with the key password, then the
    chain), ``cert`` / ``key`` apart (the key unencrypted: what librdkafka's ssl.key.location takes), and ``p12`` (a
    PKCS12 key store, the store password)."""

    dn: str
    pem: str
    cert: str
    key: str
    p12: str


def make_ca(folder: Path, cn: str, store_password: str, org: str = "kactor", stem: str = "ca") -> CertificateAuthority:
    """A self-signed CA, its certificate written as ``<stem>.pem`` and ``<stem>.p12`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = certificate(name(cn, org), key, name(cn, org), key, ca=True)
    pem = folder / f"{stem}.pem"
    pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    p12 = folder / f"{stem}.p12"
    p12.write_bytes(pkcs12.serialize_java_truststore(
        [pkcs12.PKCS12Certificate(cert, b"ca")], serialization.BestAvailableEncryption(store_password.encode())))
    return CertificateAuthority(cert, key, str(pem), str(p12))


def issue(folder: Path, stem: str, cn: str, ca: CertificateAuthority, store_password: str, key_password: str,
          sans: list[x509.GeneralName] | None = None, org: str = "kactor") -> Identity:
    """A new key and its certificate signed by ``ca``, written as ``<stem>.pem``, ``.cert.pem``, ``.key.pem`` and
    ``.p12`` in ``folder``."""
    key = ec.generate_private_key(ec.SECP256R1())
    cert = certificate(name(cn, org), key, ca.cert.subject, ca.key, ca=False, sans=sans)
    chain = cert.public_bytes(serialization.Encoding.PEM) + ca.cert.public_bytes(serialization.Encoding.PEM)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.BestAvailableEncryption(key_password.encode())) + chain
    plain = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption())
    p12 = pkcs12.serialize_key_and_certificates(stem.encode(), key, cert, [ca.cert],
                                                serialization.BestAvailableEncryption(store_password.encode()))
    paths = {}
    for suffix, data in (("pem", pem), ("cert.pem", chain), ("key.pem", plain), ("p12", p12)):
        path = folder / f"{stem}.{suffix}"
        path.write_bytes(data)
        path.chmod(0o600)
        paths[suffix] = str(path)
    return Identity(cert.subject.rfc4514_string(), paths["pem"], paths["cert.pem"], paths["key.pem"], paths["p12"])
