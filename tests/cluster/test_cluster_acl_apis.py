"""CreateAcls / DescribeAcls / DeleteAcls on a real cluster with AclAuthorizer on (issue #29): two brokers serve a
SASL_PLAINTEXT listener (PLAIN: admin, alice, bob) beside the PLAINTEXT inter-broker listener, whose
``User:ANONYMOUS`` is a super user (as a deployment with a PLAINTEXT inter-broker listener must configure it), and
``User:admin`` is one. confluent-kafka's AdminClient round-trips the three APIs; an ACL created through broker 0
decides what alice sees through broker 1; the znode it leaves is byte for byte the one ``kactor acls`` writes through
ZooKeeper; bob, without ALTER / DESCRIBE on the Cluster, is refused with CLUSTER_AUTHORIZATION_FAILED; and
``kactor acls --bootstrap-server --command-config`` adds, lists and removes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import Cluster, run_kactor

from edges.net.blocking_client import BlockingClient

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
DEADLINE_S = 60.0
PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";')
OVERRIDES = ("listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
             "inter.broker.listener.name=PLAINTEXT", "auto.leader.rebalance.enable=false",
             "listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN",
             f"listener.name.sasl_plaintext.plain.sasl.jaas.config={PLAIN_JAAS}",
             "authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
             "super.users=User:ANONYMOUS;User:admin")


def sasl_port(c: Cluster, broker: int) -> int:
    reg = c.json(f"/brokers/ids/{broker}")
    return next(int(ep.rsplit(":", 1)[1]) for ep in reg["endpoints"] if ep.startswith("SASL_PLAINTEXT://"))


def client(c: Cluster, broker: int, user: str) -> dict[str, Any]:
    return {"bootstrap.servers": f"127.0.0.1:{sasl_port(c, broker)}", "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN", "sasl.username": user, "sasl.password": f"{user}-secret",
            "socket.timeout.ms": 10000}


WIRE_ANY = {"resource_type_filter": 1, "resource_name_filter": None, "principal_filter": None, "host_filter": None,
            "operation": 1, "permission_type": 1}
WIRE_CREATION = {"resource_type": 2, "resource_name": "bobs", "resource_pattern_type": 3, "principal": "User:bob",
                 "host": "*", "operation": 2, "permission_type": 3}


@contextmanager
def sasl_session(c: Cluster, broker: int, user: str) -> Iterator[BlockingClient]:
    """A raw connection authenticated with SASL/PLAIN (SaslHandshake v1, SaslAuthenticate v1)."""
    with BlockingClient("127.0.0.1", sasl_port(c, broker)) as raw:
        assert raw.request_raw(17, 1, {"mechanism": "PLAIN"})["error_code"] == 0
        token = f"\x00{user}\x00{user}-secret".encode()
        assert raw.request_raw(36, 1, {"auth_bytes": token})["error_code"] == 0
        yield raw


def test_the_acl_apis_on_a_cluster_with_the_authorizer(start_cluster: Any, tmp_path: Path) -> None:
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
        ResourceType,
    )

    c = start_cluster(2, overrides=OVERRIDES)
    c.create_topic("t", replication_factor=2)
    c.wait_partition("t", 0, lambda s: len(s["isr"]) == 2, what="t-0 ISR of 2")
    admin = AdminClient(client(c, 0, "admin"))

    def topics_alice_sees() -> set[str]:
        return set(AdminClient(client(c, 1, "alice")).list_topics(timeout=20).topics)

    # -- a created ACL takes effect on the other broker: alice sees "t" through broker 1 once DESCRIBE is allowed
    assert "t" not in topics_alice_sees()
    read_t = AclBinding(ResourceType.TOPIC, "t", ResourcePatternType.LITERAL, "User:alice", "*",
                        AclOperation.DESCRIBE, AclPermissionType.ALLOW)
    prefixed = AclBinding(ResourceType.GROUP, "app-", ResourcePatternType.PREFIXED, "User:alice", "*",
                          AclOperation.READ, AclPermissionType.ALLOW)
    created = admin.create_acls([read_t, prefixed])
    assert [f.result(timeout=30) for f in created.values()] == [None, None]
    c.wait(lambda: "t" in topics_alice_sees(), timeout=DEADLINE_S, what="alice allowed to describe t on broker 1")
    deny = AclBinding(ResourceType.TOPIC, "t", ResourcePatternType.LITERAL, "User:alice", "*",
                      AclOperation.DESCRIBE, AclPermissionType.DENY)
    assert admin.create_acls([deny])[deny].result(timeout=30) is None
    c.wait(lambda: "t" not in topics_alice_sees(), timeout=DEADLINE_S, what="alice denied t on broker 1")

    # -- DescribeAcls: every ACL, then a MATCH filter
    everything = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                                  AclPermissionType.ANY)
    assert sorted(map(str, admin.describe_acls(everything).result(timeout=30))) == sorted(map(str, [
        read_t, prefixed, deny]))
    match = AclBindingFilter(ResourceType.GROUP, "app-1", ResourcePatternType.MATCH, None, None, AclOperation.ANY,
                             AclPermissionType.ANY)
    assert admin.describe_acls(match).result(timeout=30) == [prefixed]
    assert c.json("/kafka-acl-extended/prefixed/Group/app-") == {"version": 1, "acls": [
        {"principal": "User:alice", "permissionType": "Allow", "operation": "Read", "host": "*"}]}

    # -- DeleteAcls: the deny goes, alice sees t again through broker 1
    deny_filter = AclBindingFilter(ResourceType.TOPIC, "t", ResourcePatternType.LITERAL, "User:alice", None,
                                   AclOperation.ANY, AclPermissionType.DENY)
    deleted = admin.delete_acls([deny_filter])
    assert deleted[deny_filter].result(timeout=30) == [deny]
    c.wait(lambda: "t" in topics_alice_sees(), timeout=DEADLINE_S, what="alice allowed t again on broker 1")

    # -- the znode CreateAcls writes is the one kactor acls writes through ZooKeeper, byte for byte
    carol = [AclBinding(ResourceType.TOPIC, "same", ResourcePatternType.LITERAL, "User:carol", "*", op,
                        AclPermissionType.ALLOW) for op in (AclOperation.READ, AclOperation.WRITE)]
    for b in carol:  # one at a time: the znode's order is the order of the writes
        assert admin.create_acls([b])[b].result(timeout=30) is None
    over_the_wire, _ = c.zk.get("/kafka-acl/Topic/same")
    carol_filter = AclBindingFilter(ResourceType.TOPIC, "same", ResourcePatternType.LITERAL, None, None,
                                    AclOperation.ANY, AclPermissionType.ANY)
    assert sorted(map(str, admin.delete_acls([carol_filter])[carol_filter].result(timeout=30))) == \
        sorted(map(str, carol))
    assert c.zk.exists("/kafka-acl/Topic/same") is None
    run_kactor("acls", "--authorizer-properties", f"zookeeper.connect={c.connect_string}", "--add",
               "--allow-principal", "User:carol", "--operation", "Read", "--operation", "Write", "--topic", "same")
    through_zookeeper, _ = c.zk.get("/kafka-acl/Topic/same")
    assert over_the_wire == through_zookeeper == (
        b'{"version":1,"acls":[{"principal":"User:carol","permissionType":"Allow","operation":"Read","host":"*"},'
        b'{"principal":"User:carol","permissionType":"Allow","operation":"Write","host":"*"}]}')

    # -- bob has no ALTER / DESCRIBE on the Cluster: CLUSTER_AUTHORIZATION_FAILED, nothing written
    bob = AdminClient(client(c, 1, "bob"))
    bob_acl = AclBinding(ResourceType.TOPIC, "bobs", ResourcePatternType.LITERAL, "User:bob", "*",
                         AclOperation.ALL, AclPermissionType.ALLOW)
    for call in (lambda: bob.create_acls([bob_acl])[bob_acl].result(timeout=30),
                 lambda: bob.delete_acls([everything])[everything].result(timeout=30)):
        with pytest.raises(KafkaException) as refused:
            call()
        assert refused.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    # librdkafka drops DescribeAcls' error code (an empty listing): the answers themselves, over bob's SASL session
    not_authorized = "Request of session Session(User:bob,/127.0.0.1) is not authorized."
    with sasl_session(c, 1, "bob") as raw:
        assert raw.request_raw(29, 2, {**WIRE_ANY, "pattern_type_filter": 1}) == {
            "throttle_time_ms": 0, "error_code": 31, "error_message": not_authorized, "resources": []}
        assert raw.request_raw(30, 2, {"creations": [WIRE_CREATION]}) == {
            "throttle_time_ms": 0, "results": [{"error_code": 31, "error_message": not_authorized}]}
        assert raw.request_raw(31, 1, {"filters": [WIRE_ANY]}) == {"throttle_time_ms": 0, "filter_results": [
            {"error_code": 31, "error_message": not_authorized, "matching_acls": []}]}
    assert c.zk.exists("/kafka-acl/Topic/bobs") is None
    assert bob.describe_acls(everything).result(timeout=30) == []
    # the admin over the same raw session: the answer's exact contents, at v0 (literal patterns only)
    with sasl_session(c, 0, "admin") as raw:
        assert raw.request_raw(29, 0, {**WIRE_ANY, "resource_type_filter": 2}) == {
            "throttle_time_ms": 0, "error_code": 0, "error_message": None, "resources": [
                {"resource_type": 2, "resource_name": "t", "acls": [
                    {"principal": "User:alice", "host": "*", "operation": 8, "permission_type": 3}]},
                {"resource_type": 2, "resource_name": "same", "acls": [
                    {"principal": "User:carol", "host": "*", "operation": 3, "permission_type": 3},
                    {"principal": "User:carol", "host": "*", "operation": 4, "permission_type": 3}]}]}

    # -- kactor acls --bootstrap-server: the admin's SASL settings from --command-config
    config = tmp_path / "admin.properties"
    config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                      "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                      'username="admin" password="admin-secret";\n')
    tool = ("acls", "--bootstrap-server", f"127.0.0.1:{sasl_port(c, 1)}", "--command-config", str(config))
    added = run_kactor(*tool, "--add", "--allow-principal", "User:dave", "--operation", "Read", "--topic", "tool")
    block = ("Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=tool, patternType=LITERAL)`: \n"
             " \t(principal=User:dave, host=*, operation=READ, permissionType=ALLOW) \n")
    assert added.stdout == (
        "Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=tool, patternType=LITERAL)`: \n"
        " \t(principal=User:dave, host=*, operation=READ, permissionType=ALLOW) \n\n" + block + "\n")
    assert c.json("/kafka-acl/Topic/tool") == {"version": 1, "acls": [
        {"principal": "User:dave", "permissionType": "Allow", "operation": "Read", "host": "*"}]}
    assert run_kactor(*tool, "--list", "--topic", "tool").stdout == block + "\n"
    listed = run_kactor(*tool, "--list").stdout
    assert block in listed and "name=app-, patternType=PREFIXED" in listed and "User:carol" in listed
    removed = run_kactor(*tool, "--remove", "--force", "--topic", "tool")
    assert removed.stdout == ""
    assert c.zk.exists("/kafka-acl/Topic/tool") is None
    # bob's settings: the tool fails as AclCommand does, one line, exit 1
    bob_config = tmp_path / "bob.properties"
    bob_config.write_text(config.read_text().replace("admin", "bob"))
    refused_tool = run_kactor("acls", "--bootstrap-server", f"127.0.0.1:{sasl_port(c, 0)}", "--command-config",
                              str(bob_config), "--add", "--allow-principal", "User:bob", "--topic", "bobs",
                              check=False)
    assert refused_tool.returncode == 1
    assert refused_tool.stderr.startswith("kactor acls: Error while executing ACL command: "
                                          "org.apache.kafka.common.errors.ClusterAuthorizationException: "), \
        refused_tool.stderr
    assert c.live_brokers() == [0, 1]
