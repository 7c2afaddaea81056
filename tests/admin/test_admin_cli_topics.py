"""``kactor topics`` against the real ZooKeeper (in the test's process as ``python -m kactor`` runs it; its entry
point as a subprocess too): znodes written byte-for-byte as Kafka 2.6's
TopicCommand/AdminZkClient writes them, Kafka's messages, and every refusal leaving ZooKeeper unchanged."""

from __future__ import annotations

import json
import time

import pytest
from admin_helpers import one_line, register_broker, run_cli, snapshot, write_state
from kazoo.client import KazooClient

from tests.support.kazoo_clients import kazoo_client

TOPIC_V2_ORDERS = b'{"version":2,"partitions":{"0":[1,2],"1":[2,3],"2":[3,1]},"adding_replicas":{},' \
                  b'"removing_replicas":{}}'


def test_create_writes_config_then_topic_znode(kactor, zk: KazooClient, brokers) -> None:
    r = kactor("topics", "--create", "--topic", "orders", "--partitions", "3", "--replication-factor", "2",
               "--config", "retention.ms=1000", "--config", "cleanup.policy=compact", "--start-index", "0")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Created topic orders.\n"
    assert zk.get("/brokers/topics/orders")[0] == TOPIC_V2_ORDERS
    assert json.loads(zk.get("/config/topics/orders")[0]) == {
        "version": 1, "config": {"retention.ms": "1000", "cleanup.policy": "compact"}}
    assert zk.get("/config/topics/orders")[0].startswith(b'{"version":1,"config":{')
    assert not zk.exists("/config/changes") or zk.get_children("/config/changes") == []  # create: no notification


def test_create_random_placement_is_valid(kactor, zk: KazooClient, brokers) -> None:
    r = kactor("topics", "--create", "--topic", "rand", "--partitions", "6", "--replication-factor", "3")
    assert r.returncode == 0, r.stderr
    parts = json.loads(zk.get("/brokers/topics/rand")[0])["partitions"]
    assert sorted(parts, key=int) == [str(p) for p in range(6)]
    assert all(sorted(r) == [1, 2, 3] for r in parts.values())
    assert sorted(r[0] for r in parts.values()) == [1, 1, 2, 2, 3, 3]


def test_create_with_replica_assignment(kactor, zk: KazooClient, brokers) -> None:
    r = kactor("topics", "--create", "--topic", "manual", "--replica-assignment", "3:1, 1:2")
    assert r.returncode == 0, r.stderr
    assert zk.get("/brokers/topics/manual")[0] == (b'{"version":2,"partitions":{"0":[3,1],"1":[1,2]},'
                                                    b'"adding_replicas":{},"removing_replicas":{}}')
    assert zk.get("/config/topics/manual")[0] == b'{"version":1,"config":{}}'


def test_create_if_not_exists_and_collision_warning(kactor, zk: KazooClient, brokers) -> None:
    assert kactor("topics", "--create", "--topic", "a.b", "--partitions", "1", "--replication-factor", "1"
                  ).returncode == 0
    before = snapshot(zk)
    r = kactor("topics", "--create", "--topic", "a.b", "--partitions", "1", "--replication-factor", "1",
               "--if-not-exists")
    assert r.returncode == 0 and "Created" not in r.stdout and r.stderr == ""
    assert "WARNING: Due to limitations in metric names" in r.stdout
    assert snapshot(zk) == before


@pytest.mark.parametrize(("args", "message"), [
    (["--topic", "orders", "--partitions", "1", "--replication-factor", "1"], "Topic 'orders' already exists."),
    (["--topic", "big", "--partitions", "3", "--replication-factor", "4"],
     "Replication factor: 4 larger than available brokers: 3."),
    (["--topic", "zero", "--partitions", "0", "--replication-factor", "1"],
     "Number of partitions must be larger than 0."),
    (["--topic", "bad name", "--partitions", "1", "--replication-factor", "1"],
     'Topic name "bad name" is illegal, it contains a character other than ASCII alphanumerics'),
    (["--topic", "..", "--partitions", "1", "--replication-factor", "1"], 'Topic name cannot be "." or ".."'),
    (["--topic", "x" * 250, "--partitions", "1", "--replication-factor", "1"], "can't be longer than 249"),
    (["--topic", "dup", "--replica-assignment", "1:1,2:3"],
     "Partition replica lists may not contain duplicate entries: 1"),
    (["--topic", "incons", "--replica-assignment", "1:2,3"], "Partition 1 has different replication factor"),
    (["--topic", "cfg", "--partitions", "1", "--replication-factor", "1", "--config", "retention.ms"],
     'all configs to be added must be in the format "key=val"'),
    (["--topic", "cfg", "--partitions", "1", "--replication-factor", "1", "--config", "nope=1"],
     "Unknown topic config name: nope"),
    (["--topic", "cfg", "--partitions", "1", "--replication-factor", "1", "--config", "retention.ms=x"],
     "Invalid value x for configuration retention.ms: Not a number of type LONG"),
    (["--topic", "orders_x", "--partitions", "1", "--replication-factor", "1"], None),  # control: works
    (["--topic", "orders.x", "--partitions", "1", "--replication-factor", "1"],
     "Topic 'orders.x' collides with existing topics: orders_x"),
])
def test_create_refusals_leave_zookeeper_unchanged(kactor, zk: KazooClient, brokers, args, message) -> None:
    assert kactor("topics", "--create", "--topic", "orders", "--partitions", "1", "--replication-factor", "1"
                  ).returncode == 0
    if message is None:
        assert kactor("topics", "--create", *args).returncode == 0
        return
    if "orders.x" in args:
        assert kactor("topics", "--create", "--topic", "orders_x", "--partitions", "1", "--replication-factor",
                      "1").returncode == 0
    before = snapshot(zk)
    r = kactor("topics", "--create", *args)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert message in one_line(r.stderr)
    assert one_line(r.stderr).startswith("kactor topics: ")
    assert snapshot(zk) == before


def test_create_with_no_broker(kactor, zk: KazooClient) -> None:
    before = snapshot(zk)
    r = kactor("topics", "--create", "--topic", "t", "--partitions", "1", "--replication-factor", "1")
    assert r.returncode == 1 and "Replication factor: 1 larger than available brokers: 0." in r.stderr
    assert snapshot(zk) == before


@pytest.mark.parametrize("args", [
    [],
    ["--create", "--list"],
    ["--create", "--partitions", "1", "--replication-factor", "1"],
    ["--create", "--topic", "t", "--partitions", "1"],
    ["--create", "--topic", "t", "--replica-assignment", "1", "--partitions", "1"],
    ["--create", "--topic", "t", "--partitions", "x", "--replication-factor", "1"],
    ["--list", "--partitions", "3"],
    ["--delete"],
    ["--alter", "--topic", "t"],
    ["--describe", "--under-replicated-partitions", "--unavailable-partitions"],
    ["--create", "--topic", "t", "--partitions", "1", "--replication-factor", "1", "--delete-config", "x"],
])
def test_usage_errors_exit_2_with_one_line(kactor, zk: KazooClient, args) -> None:
    before = snapshot(zk)
    r = kactor("topics", *args)
    assert r.returncode == 2
    assert one_line(r.stderr).startswith("kactor topics: error: ")
    assert snapshot(zk) == before


def test_missing_zookeeper_option_is_a_usage_error() -> None:
    r = run_cli("topics", "--list")
    assert r.returncode == 2 and "--zookeeper" in one_line(r.stderr)


def test_unreachable_zookeeper_is_one_line() -> None:
    t0 = time.monotonic()
    r = run_cli("topics", "--zookeeper", "127.0.0.1:1/x", "--list", "--connect-timeout", "1")
    assert r.returncode == 1
    assert one_line(r.stderr) == ("kactor topics: Timed out waiting for connection to ZooKeeper at 127.0.0.1:1/x "
                                  "after 1 s")
    assert time.monotonic() - t0 < 10


def test_list_marks_deletion_filters_and_excludes_internal(kactor, zk: KazooClient, brokers) -> None:
    for t in ("zeta", "alpha", "__consumer_offsets", "audit-1"):
        assert kactor("topics", "--create", "--topic", t, "--partitions", "1", "--replication-factor", "1"
                      ).returncode == 0
    assert kactor("topics", "--delete", "--topic", "zeta").returncode == 0
    assert kactor("topics", "--list").stdout.splitlines() == [
        "__consumer_offsets", "alpha", "audit-1", "zeta - marked for deletion"]
    assert kactor("topics", "--list", "--exclude-internal").stdout.splitlines() == [
        "alpha", "audit-1", "zeta - marked for deletion"]
    assert kactor("topics", "--list", "--topic", "a.*").stdout.splitlines() == ["alpha", "audit-1"]
    assert kactor("topics", "--list", "--topic", "alpha,zeta").stdout.splitlines() == [
        "alpha", "zeta - marked for deletion"]


def test_list_empty_cluster(kactor) -> None:
    r = kactor("topics", "--list")
    assert r.returncode == 0 and r.stdout == ""


def test_delete_marks_topic_and_refuses_twice(kactor, zk: KazooClient, brokers) -> None:
    assert kactor("topics", "--create", "--topic", "t", "--partitions", "1", "--replication-factor", "1"
                  ).returncode == 0
    r = kactor("topics", "--delete", "--topic", "t")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["Topic t is marked for deletion.",
                                     "Note: This will have no impact if delete.topic.enable is not set to true."]
    data, _ = zk.get("/admin/delete_topics/t")
    assert data in (b"", None)
    before = snapshot(zk)
    r = kactor("topics", "--delete", "--topic", "t")
    # Kafka 2.6's TopicCommand prints the line and exits 0 (NodeExistsException is caught)
    assert (r.returncode, r.stdout, r.stderr) == (0, "Topic t is already marked for deletion.\n", "")
    assert snapshot(zk) == before


@pytest.mark.parametrize(("topic", "message"), [
    ("nope", "Topic 'nope' does not exist as expected"),
    ("__consumer_offsets", "Topic __consumer_offsets is a kafka internal topic and is not allowed to be marked"),
])
def test_delete_refusals(kactor, zk: KazooClient, brokers, topic, message) -> None:
    assert kactor("topics", "--create", "--topic", "__consumer_offsets", "--partitions", "1",
                  "--replication-factor", "1").returncode == 0
    before = snapshot(zk)
    r = kactor("topics", "--delete", "--topic", topic)
    assert r.returncode == 1 and message in one_line(r.stderr)
    assert snapshot(zk) == before
    assert kactor("topics", "--delete", "--topic", "nope", "--if-exists").returncode == 0


def test_alter_adds_partitions_like_kafka(kactor, zk: KazooClient, brokers) -> None:
    assert kactor("topics", "--create", "--topic", "orders", "--partitions", "3", "--replication-factor", "2",
                  "--start-index", "0").returncode == 0
    r = kactor("topics", "--alter", "--topic", "orders", "--partitions", "5")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the "
        "messages will be affected", "Adding partitions succeeded!"]
    # AdminZkClient: start index = position of partition 0's first replica, startPartitionId = 3
    assert json.loads(zk.get("/brokers/topics/orders")[0])["partitions"] == {
        "0": [1, 2], "1": [2, 3], "2": [3, 1], "3": [1, 3], "4": [2, 1]}
    r = kactor("topics", "--alter", "--topic", "orders", "--partitions", "7", "--replica-assignment",
               "1:2,2:3,3:1,1:3,2:1,3:2,2:1")
    assert r.returncode == 0, r.stderr
    parts = json.loads(zk.get("/brokers/topics/orders")[0])["partitions"]
    assert parts["5"] == [3, 2] and parts["6"] == [2, 1]


@pytest.mark.parametrize(("args", "message"), [
    (["--partitions", "3"], "The number of partitions for a topic can only be increased. Topic orders currently "
                            "has 3 partitions, 3 would not be an increase."),
    (["--partitions", "2"], "The number of partitions for a topic can only be increased. Topic orders currently "
                            "has 3 partitions, 2 would not be an increase."),
    (["--partitions", "4", "--replica-assignment", "1:2,2:3,3:1,1:9"],
     "Some brokers specified for partition id 3 are not available"),
    (["--partitions", "4", "--replica-assignment", "1:2,2:3,3:1,1"],
     "Partition 3 has different replication factor"),
    (["--partitions", "4", "--config", "retention.ms=-5"], "Value must be at least -1"),
    (["--config", "retention.ms=1", "--partitions", "2"], "can only be increased"),
    (["--delete-config", "nope"], "Unknown topic config name: nope"),
])
def test_alter_refusals_leave_zookeeper_unchanged(kactor, zk: KazooClient, brokers, args, message) -> None:
    assert kactor("topics", "--create", "--topic", "orders", "--partitions", "3", "--replication-factor", "2"
                  ).returncode == 0
    before = snapshot(zk)
    r = kactor("topics", "--alter", "--topic", "orders", *args)
    assert r.returncode == 1, r.stdout
    assert message in one_line(r.stderr)
    assert snapshot(zk) == before


def test_alter_unknown_topic(kactor, zk: KazooClient, brokers) -> None:
    r = kactor("topics", "--alter", "--topic", "nope", "--partitions", "3")
    assert r.returncode == 1 and one_line(r.stderr) == "kactor topics: Topic 'nope' does not exist as expected"


def test_alter_config_writes_change_notification(kactor, zk: KazooClient, brokers) -> None:
    assert kactor("topics", "--create", "--topic", "t", "--partitions", "1", "--replication-factor", "1",
                  "--config", "retention.ms=5").returncode == 0
    r = kactor("topics", "--alter", "--topic", "t", "--config", "cleanup.policy=compact",
               "--delete-config", "retention.ms")
    assert r.returncode == 0, r.stderr
    assert "Updated config for topic t." in r.stdout
    assert zk.get("/config/topics/t")[0] == b'{"version":1,"config":{"cleanup.policy":"compact"}}'
    changes = zk.get_children("/config/changes")
    assert changes == ["config_change_0000000000"]
    assert zk.get("/config/changes/config_change_0000000000")[0] == b'{"version":2,"entity_path":"topics/t"}'


def _describe_setup(kactor, zk: KazooClient) -> None:
    assert kactor("topics", "--create", "--topic", "orders", "--partitions", "3", "--replication-factor", "2",
                  "--config", "retention.ms=1000", "--start-index", "0").returncode == 0
    write_state(zk, "orders", 0, 1, [1, 2], leader_epoch=2)  # healthy
    write_state(zk, "orders", 1, 2, [2])                     # under-replicated
    write_state(zk, "orders", 2, -1, [3])                    # offline: no leader


def test_describe_like_kafka(kactor, zk: KazooClient, brokers) -> None:
    _describe_setup(kactor, zk)
    r = kactor("topics", "--describe", "--topic", "orders")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "Topic: orders\tPartitionCount: 3\tReplicationFactor: 2\tConfigs: retention.ms=1000",
        "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2",
        "\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2",
        "\tTopic: orders\tPartition: 2\tLeader: none\tReplicas: 3,1\tIsr: 3",
    ]
    assert kactor("topics", "--describe", "--under-replicated-partitions").stdout.splitlines() == [
        "\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2",
        "\tTopic: orders\tPartition: 2\tLeader: none\tReplicas: 3,1\tIsr: 3"]
    assert kactor("topics", "--describe", "--unavailable-partitions").stdout.splitlines() == [
        "\tTopic: orders\tPartition: 2\tLeader: none\tReplicas: 3,1\tIsr: 3"]
    zk.delete("/brokers/ids/2")  # broker 2 dies: its partition is unavailable too
    assert kactor("topics", "--describe", "--unavailable-partitions").stdout.splitlines() == [
        "\tTopic: orders\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2",
        "\tTopic: orders\tPartition: 2\tLeader: none\tReplicas: 3,1\tIsr: 3"]
    assert kactor("topics", "--describe", "--topics-with-overrides").stdout.splitlines() == [
        "Topic: orders\tPartitionCount: 3\tReplicationFactor: 2\tConfigs: retention.ms=1000"]


def test_describe_marked_for_deletion_and_reassigning(kactor, zk: KazooClient, brokers) -> None:
    zk.create("/brokers/topics/moving", b'{"version":2,"partitions":{"0":[3,1,2]},"adding_replicas":{"0":[3]},'
                                        b'"removing_replicas":{"0":[2]}}', makepath=True)
    write_state(zk, "moving", 0, 1, [1, 2])
    zk.create("/admin/delete_topics/moving", b"", makepath=True)
    assert kactor("topics", "--describe").stdout.splitlines() == [
        "Topic: moving\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: \tMarkedForDeletion: true",
        "\tTopic: moving\tPartition: 0\tLeader: 1\tReplicas: 3,1,2\tIsr: 1,2\tAdding Replicas: 3"
        "\tRemoving Replicas: 2\tMarkedForDeletion: true"]


def test_describe_unknown_topic(kactor, zk: KazooClient, brokers) -> None:
    r = kactor("topics", "--describe", "--topic", "nope")
    assert r.returncode == 1 and one_line(r.stderr) == "kactor topics: Topic 'nope' does not exist as expected"
    r = kactor("topics", "--describe", "--topic", "nope", "--if-exists")
    assert r.returncode == 0 and r.stdout == ""


def test_chroot_is_honoured(kactor, zk: KazooClient, zk_chroot: str, brokers, zk_server) -> None:
    assert kactor("topics", "--create", "--topic", "t", "--partitions", "1", "--replication-factor", "1"
                  ).returncode == 0
    with kazoo_client(zk_server.connect_string) as root:
        chroot = zk_chroot[zk_chroot.index("/"):]
        assert root.exists(f"{chroot}/brokers/topics/t")
        assert not root.exists("/brokers/topics/t")


def test_rack_aware_placement_and_mixed_racks(kactor, zk: KazooClient) -> None:
    for b, rack in ((0, "rack1"), (1, "rack3"), (2, "rack3"), (3, "rack2"), (4, "rack2"), (5, "rack1")):
        register_broker(zk, b, rack)
    assert kactor("topics", "--create", "--topic", "r", "--partitions", "7", "--replication-factor", "3",
                  "--start-index", "0").returncode == 0
    assert json.loads(zk.get("/brokers/topics/r")[0])["partitions"] == {
        "0": [0, 3, 1], "1": [3, 1, 5], "2": [1, 5, 4], "3": [5, 4, 2], "4": [4, 2, 0], "5": [2, 0, 3],
        "6": [0, 4, 2]}
    register_broker(zk, 6)
    before = snapshot(zk)
    r = kactor("topics", "--create", "--topic", "s", "--partitions", "1", "--replication-factor", "1")
    assert r.returncode == 1 and "Not all brokers have rack information" in r.stderr
    assert snapshot(zk) == before
    assert kactor("topics", "--create", "--topic", "s", "--partitions", "1", "--replication-factor", "1",
                  "--disable-rack-aware").returncode == 0


@pytest.mark.parametrize(("args", "message"), [
    ((), "exactly one of --zookeeper and --bootstrap-server is required"),
    (("--zookeeper", "127.0.0.1:1", "--bootstrap-server", "127.0.0.1:2"),
     "exactly one of --zookeeper and --bootstrap-server is required"),
    (("--bootstrap-server", "127.0.0.1:2", "--alter", "--partitions", "2", "--config", "retention.ms=1"),
     "can't be used with --alter and --bootstrap-server"),
    (("--bootstrap-server", "nohost", "--list"), "--bootstrap-server: 'nohost' is not host:port"),
])
def test_bootstrap_server_usage_errors(args: tuple[str, ...], message: str) -> None:
    action = () if any(a in args for a in ("--list", "--alter")) else ("--list",)
    r = run_cli("topics", *args, *action, "--topic", "t")
    assert r.returncode == 2 and message in r.stderr, r.stderr
