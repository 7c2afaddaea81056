"""SSL listeners on a real cluster (issue #29's first slice): two brokers each bind PLAINTEXT (the inter-broker
listener), SSL (no client certificate asked, a PKCS12 key store) and MTLS (an SSL listener with its own
``listener.name.mtls.ssl.*``: a PEM key store and trust store, ``ssl.client.auth=required``). librdkafka produces and
consumes over TLS, Metadata names the SSL endpoints to a client that came in on SSL, a client without a certificate
cannot pass MTLS's handshake while one with it can, and bad peers are closed with a log line while the brokers keep
serving."""

from __future__ import annotations

import socket
import ssl
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import Cluster
from kafka_clients_helpers import closing_producer, kafka_python3_secure, kcat_round_trip

from tests.support.tls_certs import KEY_PASSWORD, STORE_PASSWORD, Pki, make_pki

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def overrides(pki: Pki) -> tuple[str, ...]:
    return ("listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,MTLS://127.0.0.1:0",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL",
            "inter.broker.listener.name=PLAINTEXT",
            "offsets.topic.num.partitions=1", "offsets.topic.replication.factor=2",
            "group.initial.rebalance.delay.ms=0", "auto.leader.rebalance.enable=false",
            "ssl.keystore.type=PKCS12", f"ssl.keystore.location={pki.server.p12}",
            f"ssl.keystore.password={STORE_PASSWORD}",
            "listener.name.mtls.ssl.keystore.type=PEM", f"listener.name.mtls.ssl.keystore.location={pki.server.pem}",
            "listener.name.mtls.ssl.keystore.password=",  # the plain key's password does not apply to a PEM store
            f"listener.name.mtls.ssl.key.password={KEY_PASSWORD}",
            "listener.name.mtls.ssl.truststore.type=PEM", f"listener.name.mtls.ssl.truststore.location={pki.ca_pem}",
            "listener.name.mtls.ssl.client.auth=required")


def ports(c: Cluster, broker: int) -> dict[str, int]:
    reg = c.json(f"/brokers/ids/{broker}")
    assert reg["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL", "MTLS": "SSL"}
    return {ep.split("://")[0]: int(ep.rsplit(":", 1)[1]) for ep in reg["endpoints"]}


def client_config(port: int, pki: Pki, **more: Any) -> dict[str, Any]:
    return {"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": "SSL", "ssl.ca.location": pki.ca_pem,
            "socket.timeout.ms": 10000, **more}


def produce(config: dict[str, Any], topic: str, values: list[str]) -> None:
    from confluent_kafka import Producer

    errors: list[Any] = []
    with closing_producer(Producer({**config, "acks": "all", "message.timeout.ms": 30000})) as p:
        for v in values:
            p.produce(topic, v.encode(), partition=0, on_delivery=lambda e, m: errors.append(e) if e else None)
        assert p.flush(60) == 0 and errors == []


def consume(config: dict[str, Any], topic: str, count: int) -> list[str]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**config, "group.id": "ssl-readers", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        out: list[str] = []
        for _ in range(120):
            for msg in consumer.consume(num_messages=count, timeout=0.5):
                if msg.error() is None:
                    out.append(msg.value().decode())
            if len(out) >= count:
                break
        return out
    finally:
        consumer.close()


def closed_by_peer(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def log_of(c: Cluster, broker: int) -> str:
    return Path(c.lc.logs[broker]).read_text(errors="replace")


def test_librdkafka_over_ssl_and_client_certificates(start_cluster: Any, tmp_path: Path) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    pki = make_pki(tmp_path / "pki")
    c = start_cluster(2, overrides=overrides(pki))
    p = {b: ports(c, b) for b in (0, 1)}
    c.create_topic("secure", assignment={0: [0, 1]})
    c.wait_partition("secure", 0, lambda s: sorted(s["isr"]) == [0, 1], what="secure-0 ISR of 2 (over PLAINTEXT)")

    # Metadata over SSL names every broker's SSL endpoint (the listener the client came in on)
    over_ssl = client_config(p[0]["SSL"], pki)
    brokers = AdminClient(over_ssl).list_topics(timeout=30).brokers
    assert {b: (m.host, m.port) for b, m in brokers.items()} == {b: ("127.0.0.1", p[b]["SSL"]) for b in (0, 1)}

    values = [f"v{i}" for i in range(20)]
    produce(over_ssl, "secure", values)
    assert consume(client_config(p[1]["SSL"], pki), "secure", 20) == values

    # MTLS: no certificate, no connection; a certificate of the CA the listener trusts, served
    # (quiet, and slow to retry: it outlives this block until it is collected)
    without = AdminClient(client_config(p[0]["MTLS"], pki, log_level=0, **{"reconnect.backoff.ms": 5000,
                                                                            "reconnect.backoff.max.ms": 10000}))
    with pytest.raises(KafkaException):
        without.list_topics(timeout=5)
    del without
    c.wait(lambda: "Failed authentication with 127.0.0.1:" in log_of(c, 0), what="the handshake failure logged")
    with_cert = client_config(p[0]["MTLS"], pki, **{"ssl.certificate.location": pki.client.cert,
                                                    "ssl.key.location": pki.client.key})
    brokers = AdminClient(with_cert).list_topics(timeout=30).brokers
    assert {b: m.port for b, m in brokers.items()} == {b: p[b]["MTLS"] for b in (0, 1)}
    produce(with_cert, "secure", ["mtls"])

    # kafka-python 3 and kcat over MTLS with the client's certificate
    c.create_topic("clients", assignment={0: [0, 1]})
    c.wait_partition("clients", 0, lambda s: sorted(s["isr"]) == [0, 1], what="clients-0 ISR of 2")
    result, _ = kafka_python3_secure(f"127.0.0.1:{p[0]['MTLS']}", "SSL", "-", "-", "-", "clients", "3", pki.ca_pem,
                                     pki.client.cert, pki.client.key)
    assert result == {"produced": [0, 1, 2], "consumed": ["kp3-sasl-0", "kp3-sasl-1", "kp3-sasl-2"], "error": None}
    kcat_config = {k: str(v) for k, v in with_cert.items()}
    assert kcat_round_trip(kcat_config, "clients", ["k0"]) == ["kp3-sasl-0", "kp3-sasl-1", "kp3-sasl-2", "k0"]

    # plaintext bytes to the SSL port and a TLS handshake to the PLAINTEXT port: each connection closed, logged
    before = log_of(c, 1).count("Failed authentication with")
    with socket.create_connection(("127.0.0.1", p[1]["SSL"]), timeout=10) as s:
        s.sendall(b"\x00\x00\x00\x0e\x00\x12\x00\x03\x00\x00\x00\x01\x00\x04test")  # an ApiVersions v3 request
        assert closed_by_peer(s)
    c.wait(lambda: log_of(c, 1).count("Failed authentication with") > before, what="plaintext to SSL logged")
    client = ssl.create_default_context(cafile=pki.ca_pem)
    with socket.create_connection(("127.0.0.1", p[1]["PLAINTEXT"]), timeout=10) as raw, \
            pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        client.wrap_socket(raw, server_hostname="127.0.0.1")
    c.wait(lambda: "a TLS handshake to the PLAINTEXT listener PLAINTEXT?" in log_of(c, 1),
           what="TLS to PLAINTEXT logged")

    # both brokers still serve, on every listener
    produce(client_config(p[1]["SSL"], pki), "secure", ["after"])
    assert consume(over_ssl, "secure", 22)[-2:] == ["mtls", "after"]
    assert c.live_brokers() == [0, 1]


def _established_to(port: int) -> int:
    """Established TCP connections whose local end is 127.0.0.1:``port`` (the broker's accepted ones)."""
    with open("/proc/net/tcp", encoding="ascii") as f:
        rows = [line.split() for line in f.readlines()[1:]]
    return sum(1 for r in rows if r[3] == "01" and r[1] == f"0100007F:{port:04X}")


def test_replication_and_the_controller_over_an_ssl_inter_broker_listener(start_cluster: Any, tmp_path: Path) -> None:
    """inter.broker.listener.name names an SSL listener that requires client certificates: the controller's
    channels and the followers' fetchers connect to it with TLS, show the broker's certificate and check the peer's
    name (2.6's https default; the certificate names 127.0.0.1); acks=all produces complete through them."""
    pki = make_pki(tmp_path / "pki")
    c = start_cluster(2, overrides=(
        "listeners=PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INTERNAL:SSL", "inter.broker.listener.name=INTERNAL",
        "auto.leader.rebalance.enable=false", "ssl.keystore.type=PKCS12", f"ssl.keystore.location={pki.server.p12}",
        f"ssl.keystore.password={STORE_PASSWORD}", "ssl.truststore.type=PKCS12",
        f"ssl.truststore.location={pki.ca_p12}", f"ssl.truststore.password={STORE_PASSWORD}",
        "ssl.client.auth=required"))
    p = {}
    for b in (0, 1):
        reg = c.json(f"/brokers/ids/{b}")
        assert reg["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT", "INTERNAL": "SSL"}
        p[b] = {ep.split("://")[0]: int(ep.rsplit(":", 1)[1]) for ep in reg["endpoints"]}
    c.create_topic("replicated", assignment={0: [0, 1], 1: [1, 0]})
    for part in (0, 1):
        c.wait_partition("replicated", part, lambda s: sorted(s["isr"]) == [0, 1], what=f"replicated-{part} ISR")
    # each broker leads one partition, so each has the other's fetcher connected to its INTERNAL listener
    for b in (0, 1):
        c.wait(lambda b=b: _established_to(p[b]["INTERNAL"]) >= 1, what=f"connections to broker {b}'s INTERNAL")
    plain = {"bootstrap.servers": f"127.0.0.1:{p[0]['PLAINTEXT']}"}
    values = [f"r{i}" for i in range(10)]
    produce(plain, "replicated", values)  # acks=all: the follower's fetch over TLS completes it
    assert consume({"bootstrap.servers": f"127.0.0.1:{p[1]['PLAINTEXT']}"}, "replicated", 10) == values
    assert all("SSL handshake with" not in log_of(c, b) for b in (0, 1))
    # a controlled shutdown reaches the controller over TLS too: the leadership moves before the broker exits
    controller = c.controller_id()
    victim = 1 - controller if controller in (0, 1) else 1
    assert c.stop_broker(victim) == 0
    st = c.partition_state("replicated", victim)
    assert st is not None and st["leader"] != victim and st["isr"] == [1 - victim], st
