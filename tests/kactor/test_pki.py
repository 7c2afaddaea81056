"""kactor.pki: the CA and the certificates it signs load as Python's ssl (the brokers' TLS) and OpenSSL
(librdkafka) load them, and a TLS handshake over them verifies the host names given."""

from __future__ import annotations

import ipaddress
import socket
import ssl
import threading
from pathlib import Path

from cryptography import x509

from kactor.pki import host_names, issue, make_ca


def test_host_names_are_ip_addresses_or_dns_names() -> None:
    assert host_names(["127.0.0.1", "::1", "broker-0.example"]) == [
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.IPAddress(ipaddress.ip_address("::1")),
        x509.DNSName("broker-0.example")]


def test_a_handshake_over_the_issued_certificate_verifies_its_host(tmp_path: Path) -> None:
    ca = make_ca(tmp_path, "test CA", "store-pw")
    server = issue(tmp_path, "broker", "broker", ca, "store-pw", "key-pw", host_names(["127.0.0.1"]))
    assert server.dn == "CN=broker,O=kactor"
    assert (tmp_path / "broker.key.pem").stat().st_mode & 0o077 == 0  # a private key readable by its owner only
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(server.pem, password="key-pw")
    client_ctx = ssl.create_default_context(cafile=ca.pem)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

        def serve() -> None:
            conn, _ = listener.accept()
            with server_ctx.wrap_socket(conn, server_side=True) as tls:
                tls.sendall(tls.recv(5))

        t = threading.Thread(target=serve)
        t.start()
        with socket.create_connection(("127.0.0.1", port)) as raw, \
                client_ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            tls.sendall(b"hello")
            assert tls.recv(5) == b"hello"
            assert tls.getpeercert()["subject"] == ((("organizationName", "kactor"),), (("commonName", "broker"),))
        t.join(10)
