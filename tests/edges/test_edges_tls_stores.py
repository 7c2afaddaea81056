"""Key and trust stores as Kafka 2.6.3 reads them (edges/net/tls_context.py): Java's JKS, Kafka's default
``ssl.keystore.type`` / ``ssl.truststore.type``, made here by the JDK's own keytool, with its store and key
passwords (``ssl.keystore.password``, ``ssl.key.password``, ``ssl.truststore.password``) and Java's answers to wrong
ones; and a certificate signed with SHA-1 (KafkaJS's test certificates are), which Java accepts and OpenSSL's
default security level refuses: one line naming the setting that takes it, and that setting taking it for the one
context it is set on."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from edges.net.tls_context import TlsConfigError, client_context, server_context
from kactor import pki as kpki
from tests.support.tls_certs import STORE_PASSWORD, Pki, make_pki

KEY_PASSWORD = "jks-key-password"
PROTOCOLS = {"ssl.protocol": "TLSv1.3", "ssl.enabled.protocols": ("TLSv1.2", "TLSv1.3")}


def keytool(*args: str) -> None:
    tool = shutil.which("keytool")
    if tool is None:
        pytest.fail("keytool (the JDK's, which ZooKeeper's Java brings) is needed to make Java key stores")
    subprocess.run([tool, *args], check=True, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def jks_stores(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """(key store, trust store) as a Kafka user makes them with keytool: the broker's key and chain in a JKS store
    whose key has a password of its own, and the CA's certificate in a JKS trust store."""
    folder = tmp_path_factory.mktemp("jks")
    keystore, truststore = str(folder / "kafka.server.keystore.jks"), str(folder / "kafka.server.truststore.jks")
    keytool("-importkeystore", "-srckeystore", pki.server.p12, "-srcstoretype", "PKCS12", "-srcstorepass",
            STORE_PASSWORD, "-destkeystore", keystore, "-deststoretype", "JKS", "-deststorepass", STORE_PASSWORD,
            "-destkeypass", KEY_PASSWORD, "-srcalias", "server", "-destalias", "localhost", "-noprompt")
    keytool("-importcert", "-alias", "CARoot", "-file", pki.ca_pem, "-keystore", truststore, "-storetype", "JKS",
            "-storepass", STORE_PASSWORD, "-noprompt")
    with open(keystore, "rb") as f:
        assert f.read(4) == b"\xfe\xed\xfe\xed"  # Java's JKS, not PKCS12
    return keystore, truststore


def jks_values(stores: tuple[str, str], **more: Any) -> dict[str, Any]:
    """Kafka's settings for the JKS stores, their types left to the default (JKS)."""
    return {**PROTOCOLS, "ssl.keystore.location": stores[0], "ssl.keystore.password": STORE_PASSWORD,
            "ssl.key.password": KEY_PASSWORD, "ssl.truststore.location": stores[1],
            "ssl.truststore.password": STORE_PASSWORD, **more}


def handshake(server: ssl.SSLContext, client: ssl.SSLContext, host: str = "localhost") -> ssl.SSLSocket:
    """A TLS handshake over a loopback connection between the two contexts; the client's socket."""
    listener = socket.create_server(("127.0.0.1", 0))
    errors: list[BaseException] = []

    def serve() -> None:
        conn, _ = listener.accept()
        try:
            with server.wrap_socket(conn, server_side=True) as tls:
                tls.recv(1)
        except (OSError, ssl.SSLError) as e:
            errors.append(e)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        sock = client.wrap_socket(socket.create_connection(listener.getsockname(), timeout=10), server_hostname=host)
        sock.sendall(b"x")
        thread.join(10)
        assert errors == []
        return sock
    finally:
        listener.close()


def test_a_broker_context_from_keytools_jks_stores(pki: Pki, jks_stores: tuple[str, str]) -> None:
    """The server's key from the JKS key store (decrypted with ssl.key.password), the peers' CA from the JKS trust
    store: a client trusting the CA completes the handshake, with the client certificate MTLS asks for; the
    inter-broker client context reads the same stores."""
    server = server_context(jks_values(jks_stores, **{"ssl.client.auth": "required"}))
    client = ssl.create_default_context(cafile=pki.ca_pem)
    client.load_cert_chain(pki.client.cert, pki.client.key)
    sock = handshake(server, client)
    assert x509.load_der_x509_certificate(sock.getpeercert(binary_form=True)).subject.rfc4514_string() == \
        pki.server.dn
    sock.close()
    handshake(server_context(jks_values(jks_stores)), client_context(jks_values(jks_stores))).close()


def test_java_answers_for_wrong_passwords(jks_stores: tuple[str, str]) -> None:
    with pytest.raises(TlsConfigError) as e:
        server_context(jks_values(jks_stores, **{"ssl.keystore.password": "guess"}))
    assert str(e.value) == (f"Failed to load SSL keystore {jks_stores[0]} of type JKS (ssl.keystore.location): "
                            "Keystore was tagged as tampered with, or password was incorrect")
    # without ssl.key.password the store's password is tried on the key, whose own password differs
    with pytest.raises(TlsConfigError, match="Cannot recover key 'localhost': ssl.key.password"):
        server_context(jks_values(jks_stores, **{"ssl.key.password": None}))
    with pytest.raises(TlsConfigError, match="truststore .* Keystore was tagged as tampered with"):
        server_context(jks_values(jks_stores, **{"ssl.truststore.password": "guess", "ssl.client.auth": "required"}))
    # a trust store without its password is read without the integrity check, as KeyStore.load(stream, null)
    assert server_context(jks_values(jks_stores, **{"ssl.truststore.password": None, "ssl.client.auth": "required"}))


def sha1_signed(cert: x509.Certificate, issuer_key: rsa.RSAPrivateKey) -> x509.Certificate:
    """``cert`` (signed sha256WithRSAEncryption) signed again with sha1WithRSAEncryption, as keytool -sigalg
    SHA1withRSA and older OpenSSL made them; ``cryptography`` no longer signs with SHA-1, so the DER is rewritten:
    the two algorithm identifiers differ in the OID's last byte only, and an RSA signature keeps its length."""
    sha256_rsa, sha1_rsa = bytes.fromhex("2a864886f70d01010b"), bytes.fromhex("2a864886f70d010105")
    der = cert.public_bytes(serialization.Encoding.DER)
    tbs = cert.tbs_certificate_bytes.replace(sha256_rsa, sha1_rsa)
    signature = issuer_key.sign(tbs, padding.PKCS1v15(), hashes.SHA1())
    assert len(signature) == len(cert.signature)
    der = der.replace(cert.tbs_certificate_bytes, tbs).replace(sha256_rsa, sha1_rsa).replace(cert.signature,
                                                                                               signature)
    return x509.load_der_x509_certificate(der)


@pytest.fixture(scope="module")
def sha1_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, str]:
    """(PKCS12 key store, PEM key store, CA PEM) of a broker certificate its CA signed with SHA-1."""
    folder = tmp_path_factory.mktemp("sha1")
    ca_key, key = rsa.generate_private_key(65537, 2048), rsa.generate_private_key(65537, 2048)
    ca_name, name = kpki.name("SHA-1 CA"), kpki.name("localhost")
    ca = kpki.certificate(ca_name, ca_key, ca_name, ca_key, ca=True)  # type: ignore[arg-type]
    cert = sha1_signed(kpki.certificate(name, key, ca_name, ca_key, ca=False,  # type: ignore[arg-type]
                                        sans=kpki.host_names(["localhost"])), ca_key)
    assert cert.signature_hash_algorithm is not None and cert.signature_hash_algorithm.name == "sha1"
    p12 = folder / "sha1.p12"
    p12.write_bytes(serialization.pkcs12.serialize_key_and_certificates(
        b"broker", key, cert, [ca], serialization.BestAvailableEncryption(STORE_PASSWORD.encode())))
    pem = folder / "sha1.pem"
    pem.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()) + cert.public_bytes(serialization.Encoding.PEM))
    ca_pem = folder / "sha1-ca.pem"
    ca_pem.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    return str(p12), str(pem), str(ca_pem)


def test_a_sha1_signed_certificate_is_refused_with_the_setting_that_takes_it(sha1_store: tuple[str, str, str]
                                                                            ) -> None:
    p12, pem, _ = sha1_store
    for values, location in (({"ssl.keystore.location": p12, "ssl.keystore.password": STORE_PASSWORD}, p12),
                             ({"ssl.keystore.type": "PEM", "ssl.keystore.location": pem}, pem)):
        with pytest.raises(TlsConfigError) as e:
            server_context({**PROTOCOLS, **values}, "listener.name.ssl.")
        level = ssl.create_default_context().security_level
        assert str(e.value) == (
            f"Failed to load SSL keystore {location} (listener.name.ssl.ssl.keystore.location): the certificate "
            f"CN=localhost,O=kactor is signed with SHA-1, which OpenSSL refuses at security level {level} "
            "(CA_MD_TOO_WEAK; Java accepts it). Issue the certificate again (SHA-256, a 2048-bit RSA or an EC key), "
            "or lower OpenSSL's security level for these TLS settings only: "
            "listener.name.ssl.ssl.cipher.suites=DEFAULT:@SECLEVEL=0")


def test_the_setting_takes_a_sha1_signed_certificate_for_its_context_only(sha1_store: tuple[str, str, str]) -> None:
    p12, _, ca_pem = sha1_store
    lowered = {**PROTOCOLS, "ssl.cipher.suites": ("DEFAULT:@SECLEVEL=0",)}
    server = server_context({**lowered, "ssl.keystore.location": p12, "ssl.keystore.password": STORE_PASSWORD})
    assert server.security_level == 0
    # a peer checking the SHA-1 signature needs the same: the inter-broker client context of that listener...
    client = client_context({**lowered, "ssl.truststore.type": "PEM", "ssl.truststore.location": ca_pem})
    assert handshake(server, client).version() is not None
    # ...while a context without it keeps OpenSSL's level and refuses the chain
    strict = client_context({**PROTOCOLS, "ssl.truststore.type": "PEM", "ssl.truststore.location": ca_pem})
    assert strict.security_level > 0
    with pytest.raises(ssl.SSLError, match="CERTIFICATE_VERIFY_FAILED"):
        handshake(server, strict)
