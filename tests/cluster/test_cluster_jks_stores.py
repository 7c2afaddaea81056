"""A broker on Kafka-style JKS stores (issue #39): ``ssl.keystore.type`` and ``ssl.truststore.type`` left to Kafka's
default, JKS, with a key store and a trust store made by the JDK's keytool as Kafka's documentation makes them (the
key with a password of its own, ``ssl.key.password``). Its one listener is SSL and the inter-broker listener, so the
broker's own connections (the controller's channel to itself) read the JKS trust store too; librdkafka produces and
consumes over it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from kafka_clients_helpers import closing_producer

from tests.support.tls_certs import STORE_PASSWORD, make_pki

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

KEY_PASSWORD = "jks-key-password"


def keytool(*args: str) -> None:
    tool = shutil.which("keytool")
    if tool is None:
        pytest.fail("keytool (the JDK's, which ZooKeeper's Java brings) is needed to make Java key stores")
    subprocess.run([tool, *args], check=True, capture_output=True, timeout=120)


def test_a_broker_serves_tls_from_jks_stores(start_cluster: Any, tmp_path: Path) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition

    pki = make_pki(tmp_path / "pki")
    keystore, truststore = str(tmp_path / "kafka.server.keystore.jks"), str(tmp_path / "kafka.server.truststore.jks")
    keytool("-importkeystore", "-srckeystore", pki.server.p12, "-srcstoretype", "PKCS12", "-srcstorepass",
            STORE_PASSWORD, "-destkeystore", keystore, "-deststoretype", "JKS", "-deststorepass", STORE_PASSWORD,
            "-destkeypass", KEY_PASSWORD, "-noprompt")
    keytool("-importcert", "-alias", "CARoot", "-file", pki.ca_pem, "-keystore", truststore, "-storetype", "JKS",
            "-storepass", STORE_PASSWORD, "-noprompt")
    c = start_cluster(1, overrides=(
        "listeners=SSL://127.0.0.1:0", "inter.broker.listener.name=SSL", "offsets.topic.num.partitions=1",
        f"ssl.keystore.location={keystore}", f"ssl.keystore.password={STORE_PASSWORD}",
        f"ssl.key.password={KEY_PASSWORD}", f"ssl.truststore.location={truststore}",
        f"ssl.truststore.password={STORE_PASSWORD}"))
    assert c.json("/brokers/ids/0")["endpoints"][0].startswith("SSL://")
    port = int(c.json("/brokers/ids/0")["endpoints"][0].rsplit(":", 1)[1])
    c.create_topic("jks", replication_factor=1)
    c.wait_partition("jks", 0, lambda s: s["leader"] == 0, what="jks-0 led")  # the controller's SSL channel works
    config = {"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": "SSL", "ssl.ca.location": pki.ca_pem}
    errors: list[Any] = []
    with closing_producer(Producer({**config, "acks": "all", "message.timeout.ms": 30000})) as p:
        for i in range(5):
            p.produce("jks", f"v{i}".encode(), partition=0, on_delivery=lambda e, m: errors.append(e) if e else None)
        assert p.flush(60) == 0 and errors == []
    consumer = Consumer({**config, "group.id": "jks-readers", "auto.offset.reset": "earliest"})
    try:
        consumer.assign([TopicPartition("jks", 0, 0)])
        got: list[str] = []
        for _ in range(120):
            got += [m.value().decode() for m in consumer.consume(num_messages=5, timeout=0.5) if m.error() is None]
            if len(got) >= 5:
                break
        assert got == [f"v{i}" for i in range(5)]
    finally:
        consumer.close()
