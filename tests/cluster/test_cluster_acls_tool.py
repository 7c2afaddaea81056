"""``kactor acls`` (kafka-acls.sh 2.6 with --authorizer-properties zookeeper.connect=...) and ``kactor configs
--zookeeper`` for SCRAM users, against a real ZooKeeper (no broker): the exact znode paths and bytes Kafka 2.6.3's
AclAuthorizer and ConfigCommand write, the change notifications, ACLs written by hand read back, and the output."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

from kazoo.client import KazooClient

from core.security import scram
from core.security.scram import ScramMechanism

REPO = Path(__file__).resolve().parents[2]
TOPIC_ORDERS = "ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)"


def kactor(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "kactor", *args], cwd=REPO, env=env, capture_output=True, text=True,
                          input=stdin, timeout=120)


def acls(zk_chroot: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return kactor("acls", "--authorizer-properties", f"zookeeper.connect={zk_chroot}", *args, stdin=stdin)


def children(zk: KazooClient, path: str) -> dict[str, bytes]:
    return {c: zk.get(f"{path}/{c}")[0] for c in sorted(zk.get_children(path))}


def test_add_writes_kafkas_znodes_and_notifications(zk_chroot: str, zk: KazooClient) -> None:
    r = acls(zk_chroot, "--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "orders")
    assert r.returncode == 0, r.stderr
    line = "\t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)"
    assert r.stdout == (f"Adding ACLs for resource `{TOPIC_ORDERS}`: \n {line} \n\n"
                        f"Current ACLs for resource `{TOPIC_ORDERS}`: \n {line} \n\n")
    assert r.stderr == ""
    assert zk.get("/kafka-acl/Topic/orders")[0] == (
        b'{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}')
    assert children(zk, "/kafka-acl-changes") == {"acl_changes_0000000000": b"TOPIC:orders"}
    # createAclPaths: every store and resource type, no data
    for path in ("/kafka-acl/Group", "/kafka-acl/Cluster", "/kafka-acl/TransactionalId", "/kafka-acl/DelegationToken",
                 "/kafka-acl-extended", "/kafka-acl-extended/prefixed/Topic", "/kafka-acl-extended-changes"):
        assert zk.get(path)[0] in (None, b""), path

    r = acls(zk_chroot, "--add", "--deny-principal", "User:eve", "--deny-host", "10.0.0.9", "--operation", "Read",
             "--group", "app-", "--resource-pattern-type", "prefixed")
    assert r.returncode == 0, r.stderr
    assert zk.get("/kafka-acl-extended/prefixed/Group/app-")[0] == (
        b'{"version":1,"acls":[{"principal":"User:eve","permissionType":"Deny","operation":"Read",'
        b'"host":"10.0.0.9"}]}')
    assert children(zk, "/kafka-acl-extended-changes") == {
        "acl_changes_0000000000": b'{"version":1,"resourceType":"GROUP","name":"app-","patternType":"PREFIXED"}'}
    assert len(children(zk, "/kafka-acl-changes")) == 1


def test_producer_and_consumer_shortcuts(zk_chroot: str, zk: KazooClient) -> None:
    r = acls(zk_chroot, "--add", "--producer", "--consumer", "--allow-principal", "User:app", "--topic", "orders",
             "--group", "g", "--transactional-id", "tx-1", "--idempotent")
    assert r.returncode == 0, r.stderr

    def ops(path: str) -> list[str]:
        return [(a["principal"], a["operation"], a["permissionType"], a["host"])
                for a in json.loads(zk.get(path)[0])["acls"]]
    assert ops("/kafka-acl/Topic/orders") == [("User:app", op, "Allow", "*")
                                              for op in ("Read", "Describe", "Write", "Create")]
    assert ops("/kafka-acl/Group/g") == [("User:app", "Read", "Allow", "*")]
    assert ops("/kafka-acl/TransactionalId/tx-1") == [("User:app", op, "Allow", "*") for op in ("Write", "Describe")]
    assert ops("/kafka-acl/Cluster/kafka-cluster") == [("User:app", "IdempotentWrite", "Allow", "*")]
    assert sorted(children(zk, "/kafka-acl-changes").values()) == [
        b"CLUSTER:kafka-cluster", b"GROUP:g", b"TOPIC:orders", b"TRANSACTIONAL_ID:tx-1"]


def test_acls_written_by_hand_are_listed_and_removed(zk_chroot: str, zk: KazooClient) -> None:
    # what an operator (or Kafka itself) may have written: spaces, another key order
    zk.create("/kafka-acl/Topic/orders", b'{"version": 1, "acls": [ {"host":"*", "permissionType": "Allow", '
              b'"operation": "Write", "principal": "User:bob"}, {"host":"*","permissionType":"Allow",'
              b'"operation":"Read","principal":"User:alice"}]}', makepath=True)
    r = acls(zk_chroot, "--list", "--topic", "orders")
    assert r.returncode == 0, r.stderr
    assert r.stdout == (f"Current ACLs for resource `{TOPIC_ORDERS}`: \n"
                        " \t(principal=User:bob, host=*, operation=WRITE, permissionType=ALLOW)\n"
                        "\t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW) \n\n")
    r = acls(zk_chroot, "--list", "--principal", "User:alice")
    assert r.stdout == (f"ACLs for principal `User:alice`\nCurrent ACLs for resource `{TOPIC_ORDERS}`: \n"
                        " \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW) \n\n")

    # declined at the prompt: nothing changes
    before = zk.get("/kafka-acl/Topic/orders")
    r = acls(zk_chroot, "--remove", "--topic", "orders", stdin="n\n")
    assert r.returncode == 0 and r.stdout.startswith(
        f"Are you sure you want to delete all ACLs for resource filter `{TOPIC_ORDERS}`? (y/n)\n")
    assert zk.get("/kafka-acl/Topic/orders") == before

    r = acls(zk_chroot, "--remove", "--allow-principal", "User:bob", "--operation", "Write", "--topic", "orders",
             "--force")
    assert r.returncode == 0, r.stderr
    assert zk.get("/kafka-acl/Topic/orders")[0] == (
        b'{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}')
    assert zk.get("/kafka-acl/Topic/orders")[1].version == before[1].version + 1
    assert children(zk, "/kafka-acl-changes") == {"acl_changes_0000000000": b"TOPIC:orders"}

    r = acls(zk_chroot, "--remove", "--topic", "orders", stdin="y\n")
    assert r.returncode == 0, r.stderr
    assert not zk.exists("/kafka-acl/Topic/orders")
    assert list(children(zk, "/kafka-acl-changes").values()) == [b"TOPIC:orders", b"TOPIC:orders"]
    r = acls(zk_chroot, "--list")
    assert (r.returncode, r.stdout) == (0, "")


def test_refusals_leave_zookeeper_unchanged(zk_chroot: str, zk: KazooClient) -> None:
    r = acls(zk_chroot, "--add", "--allow-principal", "User:a", "--topic", "a/b")
    assert r.returncode == 0  # Kafka 2.6 reports the refused binding and goes on
    assert "Error while adding ACLs: Failed to create ACL\nCaused by: ACL binding contains invalid resource name: a/b" \
        in r.stdout
    assert zk.get_children("/kafka-acl/Topic") == [] and zk.get_children("/kafka-acl-changes") == []
    r = acls(zk_chroot, "--add", "--topic", "t")
    assert r.returncode == 2 and "You must specify one of: --allow-principal, --deny-principal" in r.stderr


def test_scram_credentials_through_configs(zk_chroot: str, zk: KazooClient) -> None:
    user = ["configs", "--zookeeper", zk_chroot, "--entity-type", "users", "--entity-name", "alice"]
    r = kactor(*user, "--alter", "--add-config",
               "SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-secret]")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Completed updating config for entity: user-principal 'alice'.\n"
    stored = json.loads(zk.get("/config/users/alice")[0])
    assert list(stored) == ["version", "config"] and stored["version"] == 1
    assert sorted(stored["config"]) == ["SCRAM-SHA-256", "SCRAM-SHA-512"]
    for name, iterations in (("SCRAM-SHA-256", 8192), ("SCRAM-SHA-512", 4096)):
        text = stored["config"][name]
        cred = scram.credential_from_string(text)
        assert text == scram.credential_to_string(cred) and cred.iterations == iterations
        mechanism = ScramMechanism.for_mechanism_name(name)
        assert mechanism is not None
        assert scram.generate_credential(mechanism, "alice-secret", iterations, cred.salt) == cred
        assert base64.b64decode(text.split(",")[0][len("salt="):]) == cred.salt
    assert children(zk, "/config/changes") == {
        "config_change_0000000000": b'{"version":2,"entity_path":"users/alice"}'}

    r = kactor(*user, "--describe")
    assert r.returncode == 0, r.stderr
    assert r.stdout == (f"Configs for user-principal 'alice' are SCRAM-SHA-256={stored['config']['SCRAM-SHA-256']},"
                        f"SCRAM-SHA-512={stored['config']['SCRAM-SHA-512']}\n")

    # every user: one with only <user, client-id> quotas (an empty /config/users/<user>) is left out, as Kafka does
    zk.create("/config/users/bob/clients/app", b'{"version":1,"config":{"producer_byte_rate":"1024"}}',
              makepath=True)
    r = kactor("configs", "--zookeeper", zk_chroot, "--entity-type", "users", "--describe")
    assert (r.returncode, r.stdout.splitlines()) == (0, [f"Configs for user-principal 'alice' are "
                                                         f"SCRAM-SHA-256={stored['config']['SCRAM-SHA-256']},"
                                                         f"SCRAM-SHA-512={stored['config']['SCRAM-SHA-512']}"])

    r = kactor(*user, "--alter", "--delete-config", "SCRAM-SHA-256")
    assert r.returncode == 0, r.stderr
    assert json.loads(zk.get("/config/users/alice")[0])["config"] == {"SCRAM-SHA-512":
                                                                     stored["config"]["SCRAM-SHA-512"]}
    assert len(children(zk, "/config/changes")) == 2

    before = zk.get("/config/users/alice")
    r = kactor(*user, "--alter", "--add-config", "SCRAM-SHA-256=[iterations=1000,password=x]")
    assert r.returncode == 1
    assert r.stderr == ("kactor configs: Iterations 1000 is less than the minimum 4096 required for "
                        "SCRAM_SHA_256\n")
    r = kactor(*user, "--alter", "--add-config", "SCRAM-SHA-256=[pass=x]")
    assert (r.returncode, r.stderr) == (1, "kactor configs: Invalid credential property SCRAM_SHA_256=pass=x\n")
    assert zk.get("/config/users/alice") == before and len(children(zk, "/config/changes")) == 2


def test_match_lists_and_removes_every_pattern_that_applies(zk_chroot: str, zk: KazooClient) -> None:
    for extra in (["--topic", "orders"], ["--topic", "ord", "--resource-pattern-type", "prefixed"],
                  ["--topic", "*"], ["--topic", "other"]):
        r = acls(zk_chroot, "--add", "--allow-principal", "User:a", "--operation", "Describe", *extra)
        assert r.returncode == 0, r.stderr
    r = acls(zk_chroot, "--list", "--topic", "orders", "--resource-pattern-type", "match")
    assert r.returncode == 0, r.stderr
    assert [line.split("`")[1] for line in r.stdout.splitlines() if line.startswith("Current")] == [
        TOPIC_ORDERS, "ResourcePattern(resourceType=TOPIC, name=*, patternType=LITERAL)",
        "ResourcePattern(resourceType=TOPIC, name=ord, patternType=PREFIXED)"]
    r = acls(zk_chroot, "--remove", "--topic", "orders", "--resource-pattern-type", "match", "--force")
    assert (r.returncode, r.stdout) == (0, ""), r.stderr
    assert zk.get_children("/kafka-acl/Topic") == ["other"]
    assert zk.get_children("/kafka-acl-extended/prefixed/Topic") == []
    assert len(zk.get_children("/kafka-acl-changes")) == 3 + 2  # three adds, two removals
    assert len(zk.get_children("/kafka-acl-extended-changes")) == 2
