"""Test certificates (kactor.pki makes them): a CA, a broker certificate for 127.0.0.1 / localhost and client
certificates, written as PEM files and PKCS12 stores for SSL listeners' tests."""

from __future__ import annotations

from pathlib import Path

import attrs

from kactor.pki import CertificateAuthority, Identity, host_names, issue, make_ca

STORE_PASSWORD = "test-store-password"
KEY_PASSWORD = "test-key-password"
ORG = "kactor tests"

__all__ = ["KEY_PASSWORD", "STORE_PASSWORD", "Identity", "Pki", "make_pki"]


@attrs.frozen
class Pki:
    ca_pem: str  # the CA certificate (a PEM trust store)
    ca_p12: str  # the CA certificate in a PKCS12 trust store (STORE_PASSWORD)
    server: Identity
    client: Identity
    stranger: Identity  # a client certificate of another CA
    bob: Identity  # a second client certificate of the CA (another principal)


def make_pki(folder: Path) -> Pki:
    """A CA, a server certificate with SAN 127.0.0.1 and localhost, a client certificate of that CA and one of
    another CA, under ``folder``."""
    ca = make_ca(folder, "kactor test CA", STORE_PASSWORD, ORG)
    other = make_ca(folder, "another CA", STORE_PASSWORD, ORG, stem="other-ca")

    def make(stem: str, cn: str, by: CertificateAuthority = ca, sans: list[str] | None = None) -> Identity:
        return issue(folder, stem, cn, by, STORE_PASSWORD, KEY_PASSWORD, host_names(sans) if sans else None, ORG)

    return Pki(ca.pem, ca.p12, make("server", "broker", sans=["127.0.0.1", "localhost"]), make("client", "alice"),
               make("stranger", "mallory", other), make("bob", "bob"))
