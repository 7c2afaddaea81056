"""AclAuthorizer enforced on a real cluster (issue #29): two brokers with ``authorizer.class.name`` set serve an
MTLS listener (``ssl.client.auth=required``: each client's principal is its certificate's DN) beside the PLAINTEXT
inter-broker listener, whose principal is ``User:ANONYMOUS`` — a super user here, so replication and the
controller's requests pass, as a deployment with a PLAINTEXT inter-broker listener must configure it. A client
without ACLs sees no topic and cannot produce (TOPIC_AUTHORIZATION_FAILED); ``kactor acls --producer`` lets it
produce, ``--consumer --group`` lets another client consume in a group (another group is refused); a super user's
certificate needs no ACL, and only it may create topics, delete them and describe their configs; an ACL written by hand
in ZooKeeper, with its change notification, takes effect."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import Cluster
from kafka_clients_helpers import closing_producer

from tests.support.tls_certs import KEY_PASSWORD, Identity, Pki, make_pki

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
DEADLINE_S = 60.0


def overrides(pki: Pki) -> tuple[str, ...]:
    return ("listeners=PLAINTEXT://127.0.0.1:0,MTLS://127.0.0.1:0",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,MTLS:SSL",
            "inter.broker.listener.name=PLAINTEXT",
            "offsets.topic.num.partitions=1", "offsets.topic.replication.factor=2",
            "group.initial.rebalance.delay.ms=0", "auto.leader.rebalance.enable=false",
            "ssl.keystore.type=PEM", f"ssl.keystore.location={pki.server.pem}", "ssl.keystore.password=",
            f"ssl.key.password={KEY_PASSWORD}", "ssl.truststore.type=PEM", f"ssl.truststore.location={pki.ca_pem}",
            "ssl.client.auth=required",
            "authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
            f"super.users=User:ANONYMOUS;User:{pki.server.dn}")


def mtls(c: Cluster, pki: Pki, who: Identity, **more: Any) -> dict[str, Any]:
    reg = c.json("/brokers/ids/0")
    port = next(int(ep.rsplit(":", 1)[1]) for ep in reg["endpoints"] if ep.startswith("MTLS://"))
    return {"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": "SSL", "ssl.ca.location": pki.ca_pem,
            "ssl.certificate.location": who.cert, "ssl.key.location": who.key, "socket.timeout.ms": 10000, **more}


def acls(c: Cluster, *args: str) -> None:
    r = subprocess.run([sys.executable, "-m", "kactor", "acls", "--authorizer-properties",
                        f"zookeeper.connect={c.connect_string}", "--add", *args], cwd=REPO, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def produce_errors(config: dict[str, Any], topic: str, values: list[str]) -> list[int]:
    """The error code of each record's delivery (0 delivered)."""
    from confluent_kafka import Producer

    codes: list[int] = []
    with closing_producer(Producer({**config, "acks": "all", "message.timeout.ms": 15000})) as p:
        for v in values:
            p.produce(topic, v.encode(), partition=0,
                      on_delivery=lambda e, m: codes.append(e.code() if e else 0))
        p.flush(60)
    return codes


def topics_seen(config: dict[str, Any]) -> set[str]:
    from confluent_kafka.admin import AdminClient

    return set(AdminClient(config).list_topics(timeout=20).topics)


def test_acls_decide_who_produces_consumes_and_sees_topics(start_cluster: Any, tmp_path: Path) -> None:
    from confluent_kafka import Consumer, KafkaError

    pki = make_pki(tmp_path / "pki")
    c = start_cluster(2, overrides=overrides(pki))
    c.create_topic("t", assignment={0: [0, 1]})
    c.wait_partition("t", 0, lambda s: sorted(s["isr"]) == [0, 1], what="t-0 ISR of 2 (ANONYMOUS is a super user)")
    alice, bob, root = (mtls(c, pki, who) for who in (pki.client, pki.bob, pki.server))

    # no ACL: nothing visible, nothing written
    assert topics_seen(alice) == set()
    assert produce_errors(alice, "t", ["denied"]) == [KafkaError.TOPIC_AUTHORIZATION_FAILED]
    # a super user needs no ACL
    assert "t" in topics_seen(root)
    assert produce_errors(root, "t", ["root-0"]) == [0]

    acls(c, "--allow-principal", f"User:{pki.client.dn}", "--producer", "--topic", "t")
    deadline = time.monotonic() + DEADLINE_S
    while produce_errors(alice, "t", ["alice-0"]) != [0]:  # the brokers take the ACL from its change notification
        assert time.monotonic() < deadline, "alice never allowed to produce"
        time.sleep(0.5)
    assert produce_errors(alice, "t", ["alice-1", "alice-2"]) == [0, 0]  # acks=all: the follower replicates
    assert topics_seen(alice) == {"t"}
    assert topics_seen(bob) == set()

    acls(c, "--allow-principal", f"User:{pki.bob.dn}", "--consumer", "--group", "g", "--topic", "t")
    deadline = time.monotonic() + DEADLINE_S
    while "t" not in topics_seen(bob):
        assert time.monotonic() < deadline, "bob never allowed to describe t"
        time.sleep(0.5)
    consumer = Consumer({**bob, "group.id": "g", "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        consumer.subscribe(["t"])
        got: list[str] = []
        deadline = time.monotonic() + DEADLINE_S
        while len(got) < 4 and time.monotonic() < deadline:
            for msg in consumer.consume(num_messages=10, timeout=0.5):
                if msg.error() is None:
                    got.append(msg.value().decode())
        assert got == ["root-0", "alice-0", "alice-1", "alice-2"]
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    # another group is not bob's: librdkafka reports the coordinator's GROUP_AUTHORIZATION_FAILED
    other = Consumer({**bob, "group.id": "h", "auto.offset.reset": "earliest"})
    try:
        other.subscribe(["t"])
        errors: list[int] = []
        deadline = time.monotonic() + DEADLINE_S
        while not errors and time.monotonic() < deadline:
            errors += [m.error().code() for m in other.consume(num_messages=10, timeout=0.5) if m.error()]
        assert errors and errors[0] == KafkaError.GROUP_AUTHORIZATION_FAILED, errors
    finally:
        other.close()
    # bob may read but not write
    assert produce_errors(bob, "t", ["bob"]) == [KafkaError.TOPIC_AUTHORIZATION_FAILED]
    # CreateTopics / DeleteTopics: CREATE and DELETE, which only the super user has
    from confluent_kafka.admin import AdminClient, NewTopic

    for config, expected in ((alice, KafkaError.TOPIC_AUTHORIZATION_FAILED), (root, KafkaError.NO_ERROR)):
        admin = AdminClient(config)
        error = admin.create_topics([NewTopic("made", 1, 2)], operation_timeout=30)["made"].exception(timeout=60)
        assert (error.args[0].code() if error else KafkaError.NO_ERROR) == expected, error
    from confluent_kafka.admin import ConfigResource

    configs = ConfigResource(ConfigResource.Type.TOPIC, "t")
    admin = AdminClient(alice)
    error = admin.describe_configs([configs])[configs].exception(timeout=60)
    assert error.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    admin = AdminClient(root)
    assert admin.describe_configs([configs])[configs].result(timeout=60)["cleanup.policy"].value == "delete"
    admin = AdminClient(alice)
    error = admin.delete_topics(["t"], operation_timeout=30)["t"].exception(timeout=60)
    assert error.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert list(c.json("/brokers/topics/made")["partitions"]) == ["0"] and c.zk.exists("/brokers/topics/t")
    st = c.partition_state("t", 0)
    assert sorted(st["isr"]) == [0, 1]

    # an ACL written by hand in ZooKeeper, as an operator (or kafka-acls.sh) writes it — the resource's znode, then a
    # change notification naming it — takes effect on both brokers: bob may now write
    node = "/kafka-acl/Topic/t"
    stored = json.loads(c.zk.get(node)[0])
    stored["acls"].append({"principal": f"User:{pki.bob.dn}", "permissionType": "Allow", "operation": "Write",
                           "host": "*"})
    c.zk.set(node, json.dumps(stored, separators=(",", ":")).encode())
    c.zk.create("/kafka-acl-changes/acl_changes_", b"Topic:t", sequence=True)
    deadline = time.monotonic() + DEADLINE_S
    while produce_errors(bob, "t", ["bob-0"]) != [0]:
        assert time.monotonic() < deadline, "the hand-written ACL never took effect"
        time.sleep(0.5)
