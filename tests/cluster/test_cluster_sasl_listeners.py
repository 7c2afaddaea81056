"""SASL listeners on a real cluster (issue #29's SASL slice): a broker binds PLAINTEXT (the inter-broker listener),
SASL_PLAINTEXT (PLAIN, the users in its JAAS config) and SASL_SSL (SCRAM-SHA-512, the users `kactor configs
--zookeeper` stores in /config/users). librdkafka produces and consumes over both; a wrong password fails that client
with an authentication error while another client of the same broker keeps working."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import Cluster, run_kactor
from kafka_clients_helpers import closing_producer, kafka_python3_secure, kcat_round_trip

from tests.support.tls_certs import STORE_PASSWORD, Pki, make_pki

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"


def overrides(pki: Pki) -> tuple[str, ...]:
    return ("listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
            "inter.broker.listener.name=PLAINTEXT", "offsets.topic.num.partitions=1",
            "group.initial.rebalance.delay.ms=0",
            "listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN",
            f"listener.name.sasl_plaintext.plain.sasl.jaas.config={PLAIN_JAAS}",
            "listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-512",
            f"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config={SCRAM_JAAS}",
            "ssl.keystore.type=PKCS12", f"ssl.keystore.location={pki.server.p12}",
            f"ssl.keystore.password={STORE_PASSWORD}")


def ports(c: Cluster) -> dict[str, int]:
    reg = c.json("/brokers/ids/0")
    assert reg["listener_security_protocol_map"]["SASL_SSL"] == "SASL_SSL"
    return {ep.split("://")[0]: int(ep.rsplit(":", 1)[1]) for ep in reg["endpoints"]}


def sasl_broker(start_cluster: Any, pki: Pki, topic: str, *more: str) -> tuple[Cluster, dict[str, int]]:
    """One broker with the SASL listeners (bob's SCRAM credential stored) and ``topic`` led by it; its ports."""
    c = start_cluster(1, overrides=(*overrides(pki), *more))
    run_kactor("configs", "--zookeeper", c.connect_string, "--alter", "--entity-type", "users", "--entity-name",
               "bob", "--add-config", "SCRAM-SHA-512=[password=bob-secret]")
    c.create_topic(topic, replication_factor=1)
    c.wait_partition(topic, 0, lambda s: s["leader"] == 0, what=f"{topic}-0 led")
    return c, ports(c)


def plain_config(p: dict[str, int]) -> dict[str, Any]:
    """librdkafka as alice (PLAIN, the JAAS config's user) on the SASL_PLAINTEXT listener."""
    return {"bootstrap.servers": f"127.0.0.1:{p['SASL_PLAINTEXT']}", "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"}


def scram_config(p: dict[str, int], pki: Pki) -> dict[str, Any]:
    """librdkafka as bob (SCRAM-SHA-512, his credential in ZooKeeper) on the SASL_SSL listener."""
    return {"bootstrap.servers": f"127.0.0.1:{p['SASL_SSL']}", "security.protocol": "SASL_SSL",
            "ssl.ca.location": pki.ca_pem, "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "bob",
            "sasl.password": "bob-secret"}


def produce(config: dict[str, Any], topic: str, values: list[str]) -> None:
    from confluent_kafka import Producer

    errors: list[Any] = []
    with closing_producer(Producer({**config, "acks": "all", "message.timeout.ms": 30000})) as p:
        for v in values:
            p.produce(topic, v.encode(), partition=0, on_delivery=lambda e, m: errors.append(e) if e else None)
        assert p.flush(60) == 0 and errors == []


def consume(config: dict[str, Any], topic: str, count: int, group: str) -> list[str]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**config, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        out: list[str] = []
        deadline = time.monotonic() + 60
        while len(out) < count and time.monotonic() < deadline:
            for msg in consumer.consume(num_messages=count, timeout=0.5):
                if msg.error() is None:
                    out.append(msg.value().decode())
        return out
    finally:
        consumer.close()


def log_of(c: Cluster) -> str:
    return Path(c.lc.logs[0]).read_text(errors="replace")


def test_librdkafka_over_sasl_plain_and_scram(start_cluster: Any, tmp_path: Path) -> None:
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient

    pki = make_pki(tmp_path / "pki")
    c, p = sasl_broker(start_cluster, pki, "secure")

    plain = plain_config(p)
    brokers = AdminClient(plain).list_topics(timeout=30).brokers
    assert {b: m.port for b, m in brokers.items()} == {0: p["SASL_PLAINTEXT"]}
    values = [f"p{i}" for i in range(10)]
    produce(plain, "secure", values)

    scram = scram_config(p, pki)
    produce(scram, "secure", ["s0", "s1"])
    assert consume(scram, "secure", 12, "scram-readers") == values + ["s0", "s1"]
    assert consume(plain, "secure", 12, "plain-readers") == values + ["s0", "s1"]

    # a wrong password: that client fails with an authentication error, the broker serves the others on
    for config, message in ((plain, "Authentication failed: Invalid username or password"),
                            (scram, "Authentication failed during authentication due to invalid credentials with "
                                    "SASL mechanism SCRAM-SHA-512")):
        errors: list[Any] = []
        wrong = AdminClient({**config, "sasl.password": "guess", "log_level": 0, "error_cb": errors.append,
                             "reconnect.backoff.ms": 5000, "reconnect.backoff.max.ms": 10000})

        def refused(errors: list[Any] = errors, message: str = message) -> bool:
            return any(e.code() == KafkaError._AUTHENTICATION and message in e.str() for e in errors)

        # each ask for metadata fails (a client that never authenticates waits out its timeout), until librdkafka
        # has reported the broker's answer (SASL_AUTHENTICATION_FAILED and its message) to the error callback
        deadline = time.monotonic() + 30
        while True:
            with pytest.raises(KafkaException):
                wrong.list_topics(timeout=1)
            wrong.poll(0.5)
            if refused() or time.monotonic() > deadline:
                break
        assert refused(), errors
        del wrong
    c.wait(lambda: "Failed authentication with 127.0.0.1:" in log_of(c), what="the failures logged")
    logged = log_of(c)
    assert "(Authentication failed: Invalid username or password)" in logged
    assert ("(Authentication failed during authentication due to invalid credentials with SASL mechanism "
            "SCRAM-SHA-512)") in logged
    produce(plain, "secure", ["after"])
    assert consume(scram, "secure", 13, "scram-after")[-1] == "after"

    # kafka-python 3 (SaslHandshake v1 + SaslAuthenticate, as librdkafka) over SASL_PLAINTEXT: PLAIN, then SCRAM
    # against the ZooKeeper credential; a wrong password fails it
    c.create_topic("kp3", replication_factor=1)
    c.wait_partition("kp3", 0, lambda s: s["leader"] == 0, what="kp3-0 led")
    bootstrap = f"127.0.0.1:{p['SASL_PLAINTEXT']}"
    result, _ = kafka_python3_secure(bootstrap, "SASL_PLAINTEXT", "PLAIN", "alice", "alice-secret", "kp3", "5")
    assert result == {"produced": [0, 1, 2, 3, 4], "consumed": [f"kp3-sasl-{i}" for i in range(5)], "error": None}
    failures = log_of(c).count("(Authentication failed: Invalid username or password)")
    result, logged = kafka_python3_secure(bootstrap, "SASL_PLAINTEXT", "PLAIN", "alice", "guess", "kp3", "1")
    assert result["error"] is not None
    # the broker answered SASL_AUTHENTICATION_FAILED and closed, as 2.6.3 does; kafka-python 3.0.12 logs the
    # answer's message, unless the answer and the close came in one read: its KafkaTCPTransport._read_from_sock then
    # drops the bytes it read with the EOF and logs "socket disconnected" (under load, 2 runs of 3)
    assert log_of(c).count("(Authentication failed: Invalid username or password)") > failures
    assert "Authentication failed: Invalid username or password" in logged or "socket disconnected" in logged, logged
    # ... and over SASL_SSL with SCRAM-SHA-512 (bob's credential in ZooKeeper), the CA's certificate trusted
    c.create_topic("kp3-ssl", replication_factor=1)
    c.wait_partition("kp3-ssl", 0, lambda s: s["leader"] == 0, what="kp3-ssl-0 led")
    result, _ = kafka_python3_secure(f"127.0.0.1:{p['SASL_SSL']}", "SASL_SSL", "SCRAM-SHA-512", "bob", "bob-secret",
                                     "kp3-ssl", "5", pki.ca_pem)
    assert result == {"produced": [0, 1, 2, 3, 4], "consumed": [f"kp3-sasl-{i}" for i in range(5)], "error": None}

    # kcat (librdkafka's command-line client) over both
    c.create_topic("kcat", replication_factor=1)
    c.wait_partition("kcat", 0, lambda s: s["leader"] == 0, what="kcat-0 led")
    assert kcat_round_trip(plain, "kcat", ["k0", "k1"]) == ["k0", "k1"]
    assert kcat_round_trip({k: str(v) for k, v in scram.items()}, "kcat", ["k2"]) == ["k0", "k1", "k2"]
    assert c.live_brokers() == [0]


def test_replication_and_the_controller_over_a_sasl_inter_broker_listener(start_cluster: Any) -> None:
    """inter.broker.listener.name names a SASL_PLAINTEXT listener: the controller's channels and the followers'
    fetchers authenticate with sasl.mechanism.inter.broker.protocol=PLAIN and the listener's JAAS username /
    password before their requests; acks=all produces complete through them and a controlled shutdown reaches the
    controller."""
    c = start_cluster(2, overrides=(
        "listeners=PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT",
        "inter.broker.listener.name=INTERNAL", "auto.leader.rebalance.enable=false",
        "sasl.enabled.mechanisms=PLAIN", "sasl.mechanism.inter.broker.protocol=PLAIN",
        f"listener.name.internal.plain.sasl.jaas.config={PLAIN_JAAS}"))
    p = {}
    for b in (0, 1):
        reg = c.json(f"/brokers/ids/{b}")
        assert reg["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT", "INTERNAL": "SASL_PLAINTEXT"}
        p[b] = {ep.split("://")[0]: int(ep.rsplit(":", 1)[1]) for ep in reg["endpoints"]}
    c.create_topic("replicated", partitions=2, replication_factor=2)
    for part in (0, 1):
        c.wait_partition("replicated", part, lambda s: sorted(s["isr"]) == [0, 1], what=f"replicated-{part} ISR")
    plain = {"bootstrap.servers": f"127.0.0.1:{p[0]['PLAINTEXT']}"}
    values = [f"r{i}" for i in range(10)]
    produce(plain, "replicated", values)  # acks=all: the follower's authenticated fetch completes it
    assert consume({"bootstrap.servers": f"127.0.0.1:{p[1]['PLAINTEXT']}"}, "replicated", 10, "r") == values
    for b in (0, 1):
        logged = Path(c.lc.logs[b]).read_text(errors="replace")
        assert "SASL authentication with" not in logged and "Failed authentication" not in logged
    controller = c.controller_id()
    victim = 1 - controller if controller in (0, 1) else 1
    assert c.stop_broker(victim) == 0
    for part in (0, 1):
        st = c.partition_state("replicated", part)
        assert st is not None and st["leader"] != victim and st["isr"] == [1 - victim], st


def test_librdkafka_reauthenticates_before_its_session_expires(start_cluster: Any, tmp_path: Path) -> None:
    """connections.max.reauth.ms (KIP-368) of 2 s on both SASL listeners: librdkafka's connections re-authenticate
    within their session (the broker logs each one, and closes none as expired) while a producer writes through
    several session lifetimes; every record is acknowledged and read back in order."""
    pki = make_pki(tmp_path / "pki")
    c, p = sasl_broker(start_cluster, pki, "renewed", "connections.max.reauth.ms=2000")
    plain = plain_config(p)
    scram = scram_config(p, pki)
    from confluent_kafka import Producer

    errors: list[Any] = []
    values: list[str] = []
    with closing_producer(Producer({**plain, "acks": "all", "linger.ms": 0})) as producer:
        started = time.monotonic()
        while time.monotonic() - started < 7.0:  # three and a half session lifetimes
            values.append(f"r{len(values)}")
            producer.produce("renewed", values[-1].encode(), partition=0,
                             on_delivery=lambda e, m: errors.append(e) if e else None)
            producer.flush(10)
            time.sleep(0.2)
    assert errors == [] and len(values) >= 20
    assert consume(scram, "renewed", len(values), "renewed-readers") == values
    logged = log_of(c)
    assert logged.count("beginning re-authentication of") >= 3, logged[-3000:]
    assert "Disconnecting expired channel" not in logged
