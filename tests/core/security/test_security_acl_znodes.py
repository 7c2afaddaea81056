"""The ACL znodes' paths and bytes as Kafka 2.6.3 writes them (ZkData's ZkAclStore / ResourceZNode /
LiteralAclChangeStore / ExtendedAclChangeStore, LiteralAclStoreTest and ExtendedAclStoreTest)."""

from __future__ import annotations

import pytest

from core.security import acl_znodes
from core.security.acl import (
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from protocol.zk import paths
from protocol.zk.znodes import ZnodeDecodeError

LITERAL = ResourcePattern(ResourceType.TOPIC, "some-topic", PatternType.LITERAL)
PREFIXED = ResourcePattern(ResourceType.TOPIC, "some-topic", PatternType.PREFIXED)
READ = AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW)
DENY_WRITE = AccessControlEntry("User:bob", "10.0.0.1", AclOperation.IDEMPOTENT_WRITE, AclPermissionType.DENY)


def test_paths() -> None:
    assert acl_znodes.resource_path(LITERAL) == "/kafka-acl/Topic/some-topic"
    assert acl_znodes.resource_path(PREFIXED) == "/kafka-acl-extended/prefixed/Topic/some-topic"
    assert acl_znodes.resource_path(ResourcePattern(ResourceType.TRANSACTIONAL_ID, "tx", PatternType.LITERAL)) == \
        "/kafka-acl/TransactionalId/tx"
    assert acl_znodes.resource_path(ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL)) == \
        "/kafka-acl/Cluster/kafka-cluster"
    assert acl_znodes.resource_type_path(PatternType.PREFIXED, ResourceType.DELEGATION_TOKEN) == \
        "/kafka-acl-extended/prefixed/DelegationToken"
    assert acl_znodes.change_create_path(PatternType.LITERAL) == "/kafka-acl-changes/acl_changes_"
    assert acl_znodes.change_create_path(PatternType.PREFIXED) == "/kafka-acl-extended-changes/acl_changes_"
    assert paths.ZkAclStore.acl_path("LITERAL") == "/kafka-acl"


def test_resource_znode_bytes() -> None:
    assert acl_znodes.encode_acls([READ]) == (
        '{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}')
    assert acl_znodes.encode_acls([READ, DENY_WRITE]) == (
        '{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"},'
        '{"principal":"User:bob","permissionType":"Deny","operation":"IdempotentWrite","host":"10.0.0.1"}]}')
    assert acl_znodes.encode_acls([AccessControlEntry("User:zoë", "*", AclOperation.DESCRIBE_CONFIGS,
                                                      AclPermissionType.ALLOW)]).encode() == (
        '{"version":1,"acls":[{"principal":"User:zoë","permissionType":"Allow","operation":"DescribeConfigs",'
        '"host":"*"}]}').encode()


def test_resource_znode_decodes_what_kafka_reads() -> None:
    # Kafka's own doc example: spaces, another key order
    text = ('{"version": 1, "acls": [ { "host":"host1", "permissionType": "Deny","operation": "Read",'
            '"principal": "User:alice"}, {"host":"*","permissionType":"Allow","operation":"Read",'
            '"principal":"User:alice"}]}')
    assert acl_znodes.decode_acls(text, "/p") == (
        AccessControlEntry("User:alice", "host1", AclOperation.READ, AclPermissionType.DENY), READ)
    assert acl_znodes.decode_acls(acl_znodes.encode_acls([READ, DENY_WRITE, READ]), "/p") == (READ, DENY_WRITE)
    assert acl_znodes.decode_acls(None, "/p") == () and acl_znodes.decode_acls("", "/p") == ()
    assert acl_znodes.decode_acls("{not json", "/p") == ()  # Json.parseBytes → None → no ACL
    odd = '{"version":1,"acls":[{"principal":"User:a","permissionType":"Sometimes","operation":"Fly","host":"*"}]}'
    assert acl_znodes.decode_acls(odd, "/p") == (
        AccessControlEntry("User:a", "*", AclOperation.UNKNOWN, AclPermissionType.UNKNOWN),)


@pytest.mark.parametrize(("text", "reason"), [
    ('{"version":2,"acls":[]}', "requirement failed"),
    ('{"acls":[]}', "requirement failed"),
    ('{"version":1}', "no 'acls' array"),
    ('{"version":1,"acls":[{"principal":"User:a","permissionType":"Allow","operation":"Read"}]}', "no 'host'"),
    ('{"version":1,"acls":[{"principal":"alice","permissionType":"Allow","operation":"Read","host":"*"}]}',
     "expected a string in format principalType:principalName"),
])
def test_resource_znode_refusals(text: str, reason: str) -> None:
    with pytest.raises(ZnodeDecodeError, match=reason) as e:
        acl_znodes.decode_acls(text, "/kafka-acl/Topic/t")
    assert e.value.path == "/kafka-acl/Topic/t"


def test_change_notifications() -> None:
    assert acl_znodes.encode_acl_change(LITERAL) == "TOPIC:some-topic"
    assert acl_znodes.encode_acl_change(ResourcePattern(ResourceType.TRANSACTIONAL_ID, "t:x", PatternType.LITERAL)) \
        == "TRANSACTIONAL_ID:t:x"
    assert acl_znodes.encode_acl_change(PREFIXED) == \
        '{"version":1,"resourceType":"TOPIC","name":"some-topic","patternType":"PREFIXED"}'
    assert acl_znodes.decode_literal_acl_change(acl_znodes.encode_acl_change(LITERAL)) == LITERAL
    assert acl_znodes.decode_extended_acl_change(acl_znodes.encode_acl_change(PREFIXED)) == PREFIXED
    # shouldDecodeResourceUsingTwoPartLogic
    group = ResourcePattern(ResourceType.GROUP, "PREFIXED:this, including the PREFIXED part, is a valid two part "
                            "group name", PatternType.LITERAL)
    assert acl_znodes.decode_literal_acl_change(f"GROUP:{group.name}") == group
    with pytest.raises(ZnodeDecodeError, match="expected a string in format ResourceType:ResourceName"):
        acl_znodes.decode_literal_acl_change("TOPIC")
    with pytest.raises(ZnodeDecodeError, match="unsupported version: 2"):
        acl_znodes.decode_extended_acl_change(
            '{"version":2,"resourceType":"TOPIC","name":"a","patternType":"PREFIXED"}')
    with pytest.raises(ZnodeDecodeError, match="Failed to parse ACL change event"):
        acl_znodes.decode_extended_acl_change("TOPIC:a")
