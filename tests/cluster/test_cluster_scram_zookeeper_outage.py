"""SCRAM through a ZooKeeper outage (issue #39): Kafka 2.6.3's SASL SCRAM server reads the broker's CredentialCache,
which the config change notifications keep, never ZooKeeper, so clients and SCRAM inter-broker links keep connecting
while ZooKeeper is down. Two brokers whose inter-broker listener is SASL_PLAINTEXT with SCRAM-SHA-512 (the brokers'
own user in /config/users, as `kactor configs` stores it) and ``connections.max.reauth.ms`` of 2 s there, so the
follower's connection expires and is made again, with a new SCRAM login, during the outage. With the ZooKeeper
server killed: a SCRAM client connects and produces with acks=all, which completes only as the follower fetches, and
the follower's high watermark follows in its checkpoint. Before, each login read /config/users/<user> from
ZooKeeper and failed while it was away."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import TEST_SESSION_TIMEOUT_MS, Cluster
from kazoo.client import KazooClient

from core.broker.checkpoints import REPLICATION_OFFSET_CHECKPOINT, read_offset_checkpoint
from core.security.scram import ScramMechanism, scram_credential_config
from kactor.cluster import LocalCluster
from messages.common import TopicPartition
from protocol.zk import znodes
from tests.support.kazoo_clients import kazoo_client
from zk_bridge.server import EmbeddedZooKeeper

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

SCRAM_JAAS = ('org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" '
              'password="broker-secret";')
OVERRIDES = (f"zookeeper.session.timeout.ms={TEST_SESSION_TIMEOUT_MS}", "controlled.shutdown.retry.backoff.ms=200",
             "listeners=PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
             "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT",
             "inter.broker.listener.name=INTERNAL", "auto.leader.rebalance.enable=false",
             "sasl.enabled.mechanisms=SCRAM-SHA-512", "sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512",
             f"listener.name.internal.scram-sha-512.sasl.jaas.config={SCRAM_JAAS}",
             "listener.name.internal.connections.max.reauth.ms=2000",
             "replica.high.watermark.checkpoint.interval.ms=200")
TOPIC = "through-the-outage"


def add_scram_user(zk: KazooClient, user: str, password: str) -> None:
    """What ``kactor configs --alter --entity-type users --add-config 'SCRAM-SHA-512=[password=...]'`` stores (the
    brokers are not started yet, so no change notification is needed)."""
    config = {"SCRAM-SHA-512": scram_credential_config(ScramMechanism.SCRAM_SHA_512, f"password={password}")}
    zk.create(f"/config/users/{user}", znodes.encode_config_entity(config).encode(), makepath=True)


@pytest.fixture
def zookeeper() -> Iterator[EmbeddedZooKeeper]:
    """A ZooKeeper of this test's own, to be killed and restarted (the session's serves every other test)."""
    server = EmbeddedZooKeeper(tick_ms=200).start(timeout=60)
    try:
        yield server
    finally:
        server.stop()


def internal_port(c: Cluster, broker: int) -> int:
    reg = c.json(f"/brokers/ids/{broker}")
    return next(int(ep.rsplit(":", 1)[1]) for ep in reg["endpoints"] if ep.startswith("INTERNAL://"))


def produce_all(config: dict[str, Any], values: list[str]) -> list[Any]:
    """acks=all, one record at a time: the delivery errors (none when every record was acknowledged)."""
    from confluent_kafka import Producer
    from kafka_clients_helpers import closing_producer

    errors: list[Any] = []
    with closing_producer(Producer({**config, "acks": "all", "message.timeout.ms": 20000})) as p:
        for v in values:
            p.produce(TOPIC, v.encode(), partition=0, on_delivery=lambda e, m: errors.append(e) if e else None)
            p.flush(25)
            if errors:  # not acknowledged in 20 s (message.timeout.ms): no point in waiting for the rest
                break
            time.sleep(0.1)
        assert p.flush(25) == 0
    return errors


def test_scram_logins_and_a_scram_follower_carry_on_while_zookeeper_is_down(zookeeper: EmbeddedZooKeeper,
                                                                              tmp_path: Path) -> None:
    with kazoo_client(zookeeper.connect_string) as zk:
        add_scram_user(zk, "broker", "broker-secret")
        add_scram_user(zk, "bob", "bob-secret")
    c = Cluster(LocalCluster(2, zookeeper=zookeeper.connect_string, base_dir=str(tmp_path / "cluster"),
                             overrides=list(OVERRIDES)))
    try:
        c.start()
        c.create_topic(TOPIC, replication_factor=2)
        state = c.wait_partition(TOPIC, 0, lambda s: sorted(s["isr"]) == [0, 1], what="both replicas in the ISR")
        leader = state["leader"]
        follower = 1 - leader
        bob = {"bootstrap.servers": f"127.0.0.1:{internal_port(c, leader)}", "security.protocol": "SASL_PLAINTEXT",
               "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "bob", "sasl.password": "bob-secret"}
        assert produce_all(bob, ["before"]) == []
        leader_log = Path(c.lc.logs[leader])
        expired_before = leader_log.read_text(errors="replace").count("Disconnecting expired channel")

        zookeeper.kill(signal.SIGKILL)
        try:
            # a new SCRAM client (its first login) and, for 6 s, three of the follower's session lifetimes: each
            # expiry closes its connection and the follower logs in again
            values = [f"r{i}" for i in range(30)]
            started = time.monotonic()
            assert produce_all(bob, values) == []
            assert time.monotonic() - started > 2.5
            follower_hw = os.path.join(c.log_dir(follower), REPLICATION_OFFSET_CHECKPOINT)
            c.wait(lambda: read_offset_checkpoint(follower_hw).get(TopicPartition(TOPIC, 0)) == 1 + len(values), 30,
                   "the follower's high watermark at the last record")
            logged = leader_log.read_text(errors="replace")
            assert logged.count("Disconnecting expired channel") > expired_before, logged[-3000:]
            assert "User:broker" in logged.split("Disconnecting expired channel")[-1].splitlines()[0]
            assert "Failed authentication" not in logged and "SASL authentication of" not in logged
        finally:
            zookeeper.restart()
    finally:
        c.stop(concurrent=True)
