"""zookeeper.set.acl=true on a real cluster (issue #29): three brokers log in to ZooKeeper with the digest
kactor.zookeeper.digest and create every znode with Kafka's ZkData.defaultAcls, as do the tools given the same login
(KACTOR_ZOOKEEPER_DIGEST). After topics (CreateTopics from librdkafka, and the ZooKeeper tool), configs (a broker's,
the cluster default, a topic's, a SCRAM user's), ACLs, records produced and consumed by a consumer group: no znode
kactor created can be changed by a client without the login (setData, create under it, delete it: NoAuth on every
one, walking the whole tree), the same client with the brokers' digest can, everything but the credentials is still
readable by anyone, and a tool without the login is refused with ZooKeeper's NoAuth."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cluster_helpers import DEFAULT_WAIT_S, TEST_SESSION_TIMEOUT_MS, Cluster, running
from kafka_clients_helpers import bootstrap, closing_producer, read_partition
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError, NoNodeError

from kactor.cluster import LocalCluster
from kactor.kafka_clients import client_config
from tests.support.kazoo_clients import kazoo_client

REPO = Path(__file__).resolve().parents[2]
DIGEST = "kactor-brokers:zk-s3cret"
OVERRIDES = (f"zookeeper.session.timeout.ms={TEST_SESSION_TIMEOUT_MS}", "controlled.shutdown.retry.backoff.ms=200",
             "offsets.topic.num.partitions=3", "group.initial.rebalance.delay.ms=0",
             "zookeeper.set.acl=true", f"kactor.zookeeper.digest={DIGEST}",
             # the brokers create the ACL stores at start-up; plaintext clients are super users
             "authorizer.class.name=kafka.security.authorizer.AclAuthorizer", "super.users=User:ANONYMOUS")
SENSITIVE = ("/config/users", "/config/brokers")  # ZkData.SensitiveRootPaths kactor writes under


def kactor(*args: str, digest: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("KACTOR_ZOOKEEPER_DIGEST", None)
    if digest is not None:
        env["KACTOR_ZOOKEEPER_DIGEST"] = digest
    return subprocess.run([sys.executable, "-m", "kactor", *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120)


def walk(zk: KazooClient, path: str = "/") -> Iterator[str]:
    for child in sorted(zk.get_children(path)):
        node = f"{path.rstrip('/')}/{child}"
        yield node
        yield from walk(zk, node)


@pytest.fixture
def secure_cluster(zk_chroot: str, tmp_path: Path, cluster_trace_root: Path) -> Iterator[Cluster]:
    """Three brokers on a chroot of their own (``<test chroot>/kafka``) that they create, so that every znode of the
    tree, the chroot too, is one kactor created."""
    lc = LocalCluster(3, zookeeper=f"{zk_chroot}/kafka", base_dir=str(tmp_path / "cluster"),
                      trace_dir=str(cluster_trace_root / "zookeeper-acl"), overrides=list(OVERRIDES))
    with running(lc, concurrent=False) as c:
        yield c


def test_every_znode_is_writable_by_the_brokers_identity_only(secure_cluster: Cluster, zk_chroot: str) -> None:
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    c = secure_cluster
    connect = c.connect_string
    servers = bootstrap(c)
    # a topic through the brokers (CreateTopics), one through the ZooKeeper tool with the brokers' login
    admin = AdminClient(client_config(servers, "acl-admin"))
    admin.create_topics([NewTopic("by-broker", 3, 3)])["by-broker"].result(timeout=DEFAULT_WAIT_S)
    r = kactor("topics", "--zookeeper", connect, "--create", "--topic", "by-tool", "--partitions", "2",
               "--replication-factor", "3", "--config", "retention.ms=86400000", digest=DIGEST)
    assert r.returncode == 0, r.stderr
    # without the login, the tool may read but not write
    refused = kactor("topics", "--zookeeper", connect, "--create", "--topic", "by-stranger", "--partitions", "1",
                     "--replication-factor", "1")
    assert refused.returncode == 1 and "NoAuthError" in refused.stderr, refused.stderr
    listed = kactor("topics", "--zookeeper", connect, "--list")
    assert listed.returncode == 0 and {"by-broker", "by-tool"} <= set(listed.stdout.split()), listed.stderr
    # configs: a SCRAM user through ZooKeeper (sensitive), a broker's and the cluster default through a broker
    r = kactor("configs", "--zookeeper", connect, "--entity-type", "users", "--entity-name", "alice", "--alter",
               "--add-config", "SCRAM-SHA-256=[password=alice-secret]", digest=DIGEST)
    assert r.returncode == 0, r.stderr
    for target in (["--entity-default"], ["--entity-name", "1"]):
        r = kactor("configs", "--bootstrap-server", servers, "--entity-type", "brokers", *target, "--alter",
                   "--add-config", "log.retention.ms=3600000")
        assert r.returncode == 0, r.stderr
    r = kactor("acls", "--authorizer-properties", f"zookeeper.connect={connect}", "--add", "--allow-principal",
               "User:alice", "--operation", "Read", "--topic", "by-broker", digest=DIGEST)
    assert r.returncode == 0, r.stderr
    # records produced and consumed by a group (its commits create __consumer_offsets)
    with closing_producer(Producer(client_config(servers, "acl-producer", {"acks": "all"}))) as producer:
        for i in range(30):
            producer.produce("by-broker", f"v{i}".encode(), partition=i % 3)
        assert producer.flush(DEFAULT_WAIT_S) == 0
    consumer = Consumer(client_config(servers, "acl-consumer", {"group.id": "acl-group", "auto.offset.reset":
                                                                "earliest", "enable.auto.commit": False}))
    try:
        consumer.subscribe(["by-broker"])
        got: list[str] = []
        while len(got) < 30:
            msgs = consumer.consume(30, timeout=DEFAULT_WAIT_S)
            assert msgs, f"consumed {len(got)} of 30 records"
            got += [m.value().decode() for m in msgs if m.error() is None]
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    assert sorted(got, key=lambda v: int(v[1:])) == [f"v{i}" for i in range(30)]
    assert [v for _, v in read_partition(servers, "by-broker", 1)] == [f"v{i}" for i in range(1, 30, 3)]

    chroot = f"{zk_chroot}/kafka"
    with kazoo_client(zk_chroot) as outside, kazoo_client(chroot) as stranger, \
            kazoo_client(chroot, auth_data=[("digest", DIGEST)]) as brokers:
        nodes = list(walk(brokers))
        for expected in ("/brokers/ids/0", "/brokers/topics/by-tool/partitions/1/state", "/config/topics/by-tool",
                         "/brokers/topics/__consumer_offsets", "/config/users/alice", "/config/brokers/<default>",
                         "/config/brokers/1", "/kafka-acl/Topic/by-broker", "/controller", "/cluster/id",
                         "/latest_producer_id_block", "/kafka-acl-extended/prefixed/Topic"):
            assert expected in nodes, expected
        assert any(n.startswith("/config/changes/config_change_") for n in nodes)
        assert any(n.startswith("/kafka-acl-changes/acl_changes_") for n in nodes)
        # the chroot the brokers created, then every znode under it
        with pytest.raises(NoAuthError):
            outside.set("/kafka", b"x")
        with pytest.raises(NoAuthError):
            outside.create("/kafka/intruder", b"")
        for node in nodes:
            data, _ = brokers.get(node)
            with pytest.raises(NoAuthError):  # ZooKeeper checks DELETE on the parent, which is the brokers' too
                stranger.delete(node)
            if node == "/consumers":
                continue  # below
            with pytest.raises(NoAuthError):
                stranger.set(node, b"tampered")
            with pytest.raises(NoAuthError):
                stranger.create(f"{node}/intruder", b"")
            if not node.startswith(SENSITIVE):
                assert stranger.get(node)[0] == data, node  # world-readable
        assert brokers.get_children("/brokers/topics") == stranger.get_children("/brokers/topics")
        # /consumers is Kafka's one open path (old consumers write under it)
        stranger.create("/consumers/old-consumer", b"")
        stranger.delete("/consumers/old-consumer")
        # credentials and broker configs are not world-readable
        for node in ("/config/users/alice", "/config/brokers/1", "/config/brokers", "/config/users"):
            with pytest.raises(NoAuthError):
                stranger.get(node)
        scram = json.loads(brokers.get("/config/users/alice")[0])
        assert list(scram["config"]) == ["SCRAM-SHA-256"]
        # the brokers' identity may change what the stranger may not (znodes whose version nobody fences on: a
        # rewrite of /controller_epoch or a partition state would disturb the cluster under test)
        for node in ("/cluster/id", "/config/topics/by-tool", "/config/users/alice", "/config/brokers/<default>",
                     "/kafka-acl/Topic/by-broker", "/brokers/topics/by-tool"):
            data, stat = brokers.get(node)
            assert brokers.set(node, data, version=stat.version).version == stat.version + 1
        brokers.create("/config/changes/probe", b"")
        brokers.delete("/config/changes/probe")
        with pytest.raises(NoNodeError):
            stranger.get("/config/changes/probe")
    # the brokers themselves were never refused: their every write and read went through with their login
    for b in sorted(c.lc.procs):
        with open(c.lc.logs[b], encoding="utf-8", errors="replace") as f:
            text = f.read()
        assert "NOAUTH" not in text and "NoAuth" not in text, f"broker {b} was refused by ZooKeeper"
