"""Test certificates made with ``cryptography``: a CA, a broker certificate for 127.0.0.1 / localhost and client
certificates, written as PEM files and PKCS12 stores for SSL listeners' tests."""

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

STORE_PASSWORD = "test-store-password"
KEY_PASSWORD = "test-key-password"


def _name(cn: str, org: str = "kactor tests") -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, org), x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _cert(subject: x509.Name, key: ec.EllipticCurvePrivateKey, issuer: x509.Name,
          issuer_key: ec.EllipticCurvePrivateKey, *, ca: bool, sans: list[x509.GeneralName] | None = None
          ) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
         .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
         .not_valid_after(now + datetime.timedelta(days=2))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if sans:
        b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return b.sign(issuer_key, hashes.SHA256())


@attrs.frozen
class Identity:
    """A private key and its certificate chain as files: ``pem`` (encrypted key + chain), ``cert`` / ``key`` apart
    (the key unencrypted: what librdkafka's ssl.key.location takes), and ``p12`` (a PKCS12 store)."""

    dn: str
    pem: str
    cert: str
    key: str
    p12: str


@attrs.frozen
class Pki:
    ca_pem: str  # the CA certificate (a PEM trust store)
    ca_p12: str  # the CA certificate in a PKCS12 trust store (STORE_PASSWORD)
    server: Identity
    client: Identity
    stranger: Identity  # a client certificate of another CA
    bob: Identity  # a second client certificate of the CA (another principal)


def _identity(folder: Path, stem: str, cn: str, ca_cert: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey,
              sans: list[x509.GeneralName] | None = None) -> Identity:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _cert(_name(cn), key, ca_cert.subject, ca_key, ca=False, sans=sans)
    chain = cert.public_bytes(serialization.Encoding.PEM) + ca_cert.public_bytes(serialization.Encoding.PEM)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.BestAvailableEncryption(KEY_PASSWORD.encode())) + chain
    plain = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption())
    p12 = pkcs12.serialize_key_and_certificates(stem.encode(), key, cert, [ca_cert],
                                                serialization.BestAvailableEncryption(STORE_PASSWORD.encode()))
    paths = {}
    for suffix, data in (("pem", pem), ("cert.pem", chain), ("key.pem", plain), ("p12", p12)):
        path = folder / f"{stem}.{suffix}"
        path.write_bytes(data)
        paths[suffix] = str(path)
    return Identity(cert.subject.rfc4514_string(), paths["pem"], paths["cert.pem"], paths["key.pem"], paths["p12"])


def make_pki(folder: Path) -> Pki:
    """A CA, a server certificate with SAN 127.0.0.1 and localhost, a client certificate of that CA and one of
    another CA, under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = _cert(_name("kactor test CA"), ca_key, _name("kactor test CA"), ca_key, ca=True)
    other_key = ec.generate_private_key(ec.SECP256R1())
    other_ca = _cert(_name("another CA"), other_key, _name("another CA"), other_key, ca=True)
    ca_pem = folder / "ca.pem"
    ca_pem.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    ca_p12 = folder / "ca.p12"
    ca_p12.write_bytes(pkcs12.serialize_java_truststore(
        [pkcs12.PKCS12Certificate(ca_cert, b"ca")], serialization.BestAvailableEncryption(STORE_PASSWORD.encode())))
    sans: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    return Pki(str(ca_pem), str(ca_p12),
                   _identity(folder, "server", "broker", ca_cert, ca_key, sans),
                   _identity(folder, "client", "alice", ca_cert, ca_key),
                   _identity(folder, "stranger", "mallory", other_ca, other_key),
                   _identity(folder, "bob", "bob", ca_cert, ca_key))
