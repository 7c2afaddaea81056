"""``kactor configs`` against the real ZooKeeper (run in the test's process as ``python -m kactor`` runs it, its
entry point also as a subprocess): the znodes Kafka 2.6's ConfigCommand
(``kafka-configs.sh --zookeeper``) writes — /config/<type>/<name> and the /config/changes/config_change_<seq>
notification — byte for byte, its output lines, and its refusals leaving ZooKeeper unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from admin_helpers import REPO, one_line, snapshot
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError

from tests.support.kazoo_clients import kazoo_client


def _topic(kactor, name: str = "orders") -> None:
    r = kactor("topics", "--create", "--topic", name, "--partitions", "1", "--replication-factor", "1")
    assert r.returncode == 0, r.stderr


def _notifications(zk: KazooClient) -> dict[str, bytes]:
    return {c: zk.get(f"/config/changes/{c}")[0] for c in sorted(zk.get_children("/config/changes"))}


def test_alter_topic_writes_config_and_change_notification(kactor, zk: KazooClient, brokers) -> None:
    _topic(kactor)
    r = kactor("configs", "--entity-type", "topics", "--entity-name", "orders", "--alter",
               "--add-config", "min.insync.replicas=2,cleanup.policy=[compact,delete], retention.ms = 1000")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Completed updating config for entity: topic 'orders'.\n"
    assert zk.get("/config/topics/orders")[0] == (
        b'{"version":1,"config":{"min.insync.replicas":"2","cleanup.policy":"compact,delete",'
        b'"retention.ms":"1000"}}')
    assert _notifications(zk) == {"config_change_0000000000": b'{"version":2,"entity_path":"topics/orders"}'}

    r = kactor("configs", "--entity-type", "topics", "--entity-name", "orders", "--alter",
               "--delete-config", "retention.ms,cleanup.policy", "--add-config", "min.insync.replicas=3")
    assert r.returncode == 0, r.stderr
    assert zk.get("/config/topics/orders")[0] == b'{"version":1,"config":{"min.insync.replicas":"3"}}'
    assert list(_notifications(zk)) == ["config_change_0000000000", "config_change_0000000001"]
    assert _notifications(zk)["config_change_0000000001"] == b'{"version":2,"entity_path":"topics/orders"}'

    r = kactor("configs", "--entity-type", "topics", "--entity-name", "orders", "--describe")
    assert r.returncode == 0 and r.stdout == "Configs for topic 'orders' are min.insync.replicas=3\n"


def test_describe_every_topic_and_the_topic_shortcut(kactor, zk: KazooClient, brokers) -> None:
    _topic(kactor, "a")
    _topic(kactor, "b")
    assert kactor("configs", "--topic", "b", "--alter", "--add-config", "unclean.leader.election.enable=true"
                  ).returncode == 0
    r = kactor("configs", "--entity-type", "topics", "--describe")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("Configs for topic 'a' are \n"
                        "Configs for topic 'b' are unclean.leader.election.enable=true\n")


@pytest.mark.parametrize(("args", "message"), [
    (["--entity-name", "nope", "--add-config", "min.insync.replicas=2"], 'Topic "nope" does not exist.'),
    (["--entity-name", "orders", "--add-config", "min.insync.replica=2"],
     "Unknown topic config name: min.insync.replica"),
    (["--entity-name", "orders", "--add-config", "min.insync.replicas=0"],
     "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"),
    (["--entity-name", "orders", "--add-config", "unclean.leader.election.enable=yes"],
     "Invalid value yes for configuration unclean.leader.election.enable: Expected value to be either true or "
     "false"),
    (["--entity-name", "orders", "--add-config", "min.insync.replicas"],
     'requirement failed: Invalid entity config: all configs to be added must be in the format "key=val".'),
    (["--entity-name", "orders", "--delete-config", "retention.ms,segment.ms"], "Invalid config(s): retention.ms,"
                                                                                 "segment.ms"),
    (["--entity-name", "bad/name", "--add-config", "retention.ms=1"],
     'Topic name "bad/name" is illegal, it contains a character other than ASCII alphanumerics, '
     "'.', '_' and '-'"),
])
def test_alter_topic_refusals_leave_zookeeper_unchanged(kactor, zk: KazooClient, brokers, args, message) -> None:
    _topic(kactor)
    before = snapshot(zk)
    r = kactor("configs", "--entity-type", "topics", "--alter", *args)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert one_line(r.stderr) == f"kactor configs: {message}"
    assert snapshot(zk) == before


def test_broker_configs_through_zookeeper_only_while_the_broker_is_down(kactor, zk: KazooClient, brokers) -> None:
    """ConfigCommand (2.6): dynamic broker configs other than the replication quotas may be written through
    ZooKeeper only for a broker that is not running, and the cluster default only with no broker running."""
    before = snapshot(zk)
    r = kactor("configs", "--entity-type", "brokers", "--entity-name", "1", "--alter",
               "--add-config", "min.insync.replicas=2")
    assert r.returncode == 1
    assert one_line(r.stderr) == (
        "kactor configs: requirement failed: --bootstrap-server option must be specified to update broker configs "
        "Set(min.insync.replicas). when broker 1 is running. Broker configuration updates using ZooKeeper are "
        "supported for bootstrapping before brokers are started to enable encrypted password configs to be stored "
        "in ZooKeeper.")
    r = kactor("configs", "--entity-type", "brokers", "--entity-default", "--alter",
               "--add-config", "unclean.leader.election.enable=true")
    assert r.returncode == 1 and "for default cluster if any broker is running" in r.stderr
    assert snapshot(zk) == before

    # the replication quotas may be written while the broker runs
    r = kactor("configs", "--broker", "1", "--alter", "--add-config", "leader.replication.throttled.rate=1000")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Completed updating config for entity: brokers '1'.\n"
    assert zk.get("/config/brokers/1")[0] == b'{"version":1,"config":{"leader.replication.throttled.rate":"1000"}}'
    assert _notifications(zk) == {"config_change_0000000000": b'{"version":2,"entity_path":"brokers/1"}'}

    # broker 4 is not running: any dynamic broker config may be written for it
    r = kactor("configs", "--entity-type", "brokers", "--entity-name", "4", "--alter",
               "--add-config", "min.insync.replicas=2,unclean.leader.election.enable=true")
    assert r.returncode == 0, r.stderr
    assert zk.get("/config/brokers/4")[0] == (
        b'{"version":1,"config":{"min.insync.replicas":"2","unclean.leader.election.enable":"true"}}')
    assert _notifications(zk)["config_change_0000000001"] == b'{"version":2,"entity_path":"brokers/4"}'

    r = kactor("configs", "--entity-type", "brokers", "--describe")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("Configs for brokers '1' are leader.replication.throttled.rate=1000\n"
                        "Configs for brokers '4' are min.insync.replicas=2,unclean.leader.election.enable=true\n")


def test_cluster_default_broker_config_with_no_broker_running(kactor, zk: KazooClient) -> None:
    r = kactor("configs", "--entity-type", "brokers", "--entity-default", "--alter",
               "--add-config", "unclean.leader.election.enable=true")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Completed updating config for entity: default brokers.\n"
    assert zk.get("/config/brokers/<default>")[0] == (
        b'{"version":1,"config":{"unclean.leader.election.enable":"true"}}')
    assert _notifications(zk) == {"config_change_0000000000": b'{"version":2,"entity_path":"brokers/<default>"}'}
    r = kactor("configs", "--broker-defaults", "--describe")
    assert r.stdout == "Configs for default brokers are unclean.leader.election.enable=true\n"


@pytest.mark.parametrize(("args", "message"), [
    (["--entity-name", "4", "--add-config", "broker.id=5"], "Cannot update these configs dynamically: Set(broker.id)"),
    (["--entity-default", "--add-config", "listeners=PLAINTEXT://127.0.0.1:9"],
     "Cannot update these configs at default cluster level, broker id must be specified: Set(listeners)"),
    (["--entity-name", "4", "--add-config", "ssl.keystore.location=/k"],
     "These security configs can be dynamically updated only per-listener using the listener prefix: "
     "Set(ssl.keystore.location)"),
    (["--entity-name", "4", "--add-config", "min.insync.replicas=x"],
     "Invalid value x for configuration min.insync.replicas: Not a number of type INT"),
    (["--entity-name", "4", "--delete-config", "min.insync.replicas"], "Invalid config(s): min.insync.replicas"),
])
def test_broker_config_refusals(kactor, zk: KazooClient, args, message) -> None:
    before = snapshot(zk)
    r = kactor("configs", "--entity-type", "brokers", "--alter", *args)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert one_line(r.stderr) == f"kactor configs: {message}"
    assert snapshot(zk) == before


@pytest.mark.parametrize(("args", "message", "code"), [
    (["--entity-type", "topics", "--entity-name", "t"], "Command must include exactly one action", 2),
    (["--entity-type", "clients", "--describe"],
     "Invalid entity type clients, the entity type must be one of topics,users,brokers with the --zookeeper "
     "argument", 1),
    (["--describe"], "At least one entity type must be specified", 1),
    (["--entity-type", "topics", "--entity-type", "brokers", "--describe"],
     "Only 'users' and 'clients' entity types may be specified together", 1),
    (["--entity-type", "brokers", "--entity-name", "b1", "--describe"],
     "The entity name for brokers must be a valid integer broker id, but it is: b1", 1),
    (["--entity-type", "topics", "--alter", "--add-config", "a=b"],
     "an entity name must be specified with --alter of topics", 1),
    (["--entity-type", "brokers", "--alter", "--add-config", "a=b"],
     "an entity-name or default entity must be specified with --alter of users, clients or brokers", 1),
    (["--entity-type", "topics", "--entity-name", "t", "--alter"],
     "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter", 1),
    (["--entity-name", "t", "--topic", "t", "--describe"],
     "--entity-{type,name,default} should not be used in conjunction with specific entity flags", 1),
    (["--entity-type", "topics", "--describe", "--add-config", "a=b"],
     "option --add-config can't be used with --describe", 2),
])
def test_argument_errors(kactor, zk: KazooClient, args, message, code) -> None:
    before = snapshot(zk)
    r = kactor("configs", *args)
    assert r.returncode == code, (r.stdout, r.stderr)
    assert message in one_line(r.stderr)
    assert snapshot(zk) == before


def test_a_scram_user_before_the_first_broker_creates_the_chroot_with_the_brokers_login(zk_chroot: str) -> None:
    """Kafka's docs create the inter-broker SCRAM user before any broker starts; with a chroot no broker has created
    yet, the tool creates it (as a broker would) and, given the brokers' ZooKeeper login, makes the chroot and the
    credentials theirs: a client without the login may not read the credentials nor write the chroot."""
    fresh = f"{zk_chroot}/kafka"  # its parent exists, it does not
    env = dict(os.environ, PYTHONPATH=str(REPO), KACTOR_ZOOKEEPER_DIGEST="kafka:zk-secret")
    r = subprocess.run([sys.executable, "-m", "kactor", "configs", "--zookeeper", fresh, "--alter", "--entity-type",
                        "users", "--entity-name", "kafka", "--add-config", "SCRAM-SHA-512=[password=broker-secret]"],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "Completed updating config for entity: user-principal 'kafka'."
    with kazoo_client(zk_chroot) as outside, kazoo_client(fresh, auth_data=[("digest", "kafka:zk-secret")]) as owner:
        stored = json.loads(owner.get("/config/users/kafka")[0])
        assert set(stored["config"]) == {"SCRAM-SHA-512"}
        assert stored["config"]["SCRAM-SHA-512"].startswith("salt=")
        with pytest.raises(NoAuthError):
            outside.get("/kafka/config/users/kafka")
        with pytest.raises(NoAuthError):
            outside.create("/kafka/intruder", b"")
        owner.create("/brokers", b"")  # what the first broker will do
