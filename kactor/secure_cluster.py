"""What ``kactor cluster --security PROTOCOL`` sets up for a secured local cluster: a CA made for it, a broker
certificate for the hosts it serves, an admin user with a fresh password, the brokers' properties (one listener of
that security protocol, which is also the inter-broker listener) and the client properties a user hands to Kafka's
tools (``--command-config``) and librdkafka (``-X``).

Kafka 2.6's own names throughout: ``listener.security.protocol.map``, ``ssl.keystore.*`` / ``ssl.truststore.*`` as
PKCS12 (2.6 reads no PEM stores: KIP-651 is 2.7's), ``sasl.enabled.mechanisms``,
``listener.name.<l>.plain.sasl.jaas.config`` with PlainLoginModule's ``user_<name>`` entries, and the client side's
``sasl.jaas.config``. SASL is PLAIN, between the brokers too (a SCRAM user lives in ZooKeeper, which the brokers
would need before they could talk to each other); ``kactor configs --entity-type users --add-config
'SCRAM-SHA-512=[password=...]'`` adds SCRAM users, which the listener accepts as well.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import attrs

PROTOCOLS = ("plaintext", "ssl", "sasl_plaintext", "sasl_ssl")  # kactor cluster --security choices, Kafka's names
LISTENER = "SECURE"  # the one listener's name when it is not PLAINTEXT
ADMIN = "admin"
MECHANISMS = "PLAIN,SCRAM-SHA-512"


@attrs.frozen
class SecureLayout:
    """A secured cluster's files and settings: ``protocol`` in Kafka's spelling (SASL_SSL), the brokers'
    ``overrides`` (less ``listeners``, which LocalCluster writes per broker with ``listener_name``), the client
    properties file (Java's names) and the librdkafka one, and the librdkafka settings of the admin user."""

    protocol: str
    listener_name: str
    overrides: tuple[str, ...]
    client_properties: str
    librdkafka_properties: str
    librdkafka: dict[str, str]


def _write_private(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o600)


def make_layout(protocol: str, folder: Path, hosts: list[str]) -> SecureLayout:
    """The layout for ``protocol`` (one of PROTOCOLS but plaintext) with its certificates and passwords written
    under ``folder`` (created, readable by its owner only); ``hosts`` are the names the brokers' certificate is
    valid for."""
    from kactor.pki import host_names, issue, make_ca  # cryptography, only for a secured cluster

    if protocol not in PROTOCOLS[1:]:
        raise ValueError(f"--security must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
    kafka_protocol = protocol.upper()
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    store_password = secrets.token_urlsafe(18)
    admin_password = secrets.token_urlsafe(18)
    listener = LISTENER.lower()
    overrides = [f"listener.security.protocol.map={LISTENER}:{kafka_protocol}",
                 f"inter.broker.listener.name={LISTENER}"]
    client: dict[str, str] = {"security.protocol": kafka_protocol}
    librdkafka: dict[str, str] = {"security.protocol": kafka_protocol}
    if "ssl" in protocol:
        ca = make_ca(folder, "kactor cluster CA", store_password)
        broker = issue(folder, "broker", "kactor broker", ca, store_password, store_password, host_names(hosts))
        overrides += ["ssl.keystore.type=PKCS12", f"ssl.keystore.location={broker.p12}",
                      f"ssl.keystore.password={store_password}", "ssl.truststore.type=PKCS12",
                      f"ssl.truststore.location={ca.p12}", f"ssl.truststore.password={store_password}"]
        client.update({"ssl.truststore.type": "PKCS12", "ssl.truststore.location": ca.p12,
                       "ssl.truststore.password": store_password})
        librdkafka["ssl.ca.location"] = ca.pem
    if protocol.startswith("sasl"):
        jaas = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
                f'username="{ADMIN}" password="{admin_password}" user_{ADMIN}="{admin_password}";')
        overrides += [f"listener.name.{listener}.sasl.enabled.mechanisms={MECHANISMS}",
                      "sasl.mechanism.inter.broker.protocol=PLAIN",
                      f"listener.name.{listener}.plain.sasl.jaas.config={jaas}",
                      f"listener.name.{listener}.scram-sha-512.sasl.jaas.config="
                      "org.apache.kafka.common.security.scram.ScramLoginModule required;"]
        client.update({"sasl.mechanism": "PLAIN", "sasl.jaas.config": (
            "org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="{ADMIN}" password="{admin_password}";')})
        librdkafka.update({"sasl.mechanism": "PLAIN", "sasl.username": ADMIN, "sasl.password": admin_password})
    properties = folder / "client.properties"
    _write_private(properties, "".join(f"{k}={v}\n" for k, v in client.items()))
    rdkafka = folder / "librdkafka.properties"
    _write_private(rdkafka, "".join(f"{k}={v}\n" for k, v in librdkafka.items()))
    return SecureLayout(kafka_protocol, LISTENER, tuple(overrides), str(properties), str(rdkafka), librdkafka)
