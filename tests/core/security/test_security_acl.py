"""AclAuthorizer's decision (core.security.acl.authorize), rule by rule, from Kafka 2.6.3's AclAuthorizerTest: DENY over
ALLOW, hosts, the wildcard resource, principal and host, prefixed patterns, the implied operations, super users and
allow.everyone.if.no.acl.found; and the filters the tools and the Describe/DeleteAcls APIs match with."""

from __future__ import annotations

import pytest

from core.security.acl import (
    ACL_OPERATIONS,
    WILDCARD_HOST,
    WILDCARD_PRINCIPAL_STRING,
    WILDCARD_RESOURCE,
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclOperation,
    AclPermissionType,
    KafkaPrincipal,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
    authorize,
    in_cache_order,
    parse_kafka_principal,
    parse_super_users,
    supported_operations,
    validate_acl_binding,
)

ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
Op = AclOperation
TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED
ALICE = KafkaPrincipal("User", "alice")
RESOURCE = ResourcePattern(TOPIC, "foo-topic", LITERAL)
WILDCARD = ResourcePattern(TOPIC, WILDCARD_RESOURCE, LITERAL)
PREFIX = ResourcePattern(TOPIC, "foo-", PREFIXED)
CLUSTER_RESOURCE = ResourcePattern(CLUSTER, "kafka-cluster", LITERAL)


def ace(principal: KafkaPrincipal | str, operation: AclOperation, permission: AclPermissionType = ALLOW,
        host: str = WILDCARD_HOST) -> AccessControlEntry:
    return AccessControlEntry(str(principal), host, operation, permission)


def allowed(principal: KafkaPrincipal, host: str, operation: AclOperation, acls: dict, resource: ResourcePattern =
            RESOURCE, **kwargs) -> bool:
    return authorize(principal, host, operation, resource, acls, **kwargs)


def test_topic_acls_by_user_host_and_operation() -> None:
    """testTopicAcl."""
    user1, user2, user3 = ALICE, KafkaPrincipal("User", "rob"), KafkaPrincipal("User", "batman")
    host1, host2 = "192.168.1.1", "192.168.1.2"
    acls = {RESOURCE: [ace(user1, Op.READ, host=host1), ace(user1, Op.READ, host=host2),
                       ace(user1, Op.READ, DENY, host=host1), ace(user1, Op.WRITE, host=host1),
                       ace(user1, Op.DESCRIBE), ace(user2, Op.READ), ace(user3, Op.WRITE)]}
    assert allowed(user1, host2, Op.READ, acls)
    assert not allowed(user1, host1, Op.READ, acls)  # the deny on host1
    assert allowed(user1, host1, Op.WRITE, acls)
    assert not allowed(user1, host2, Op.WRITE, acls)
    assert allowed(user1, host1, Op.DESCRIBE, acls) and allowed(user1, host2, Op.DESCRIBE, acls)
    assert not allowed(user1, host1, Op.ALTER, acls) and not allowed(user1, host2, Op.ALTER, acls)
    # READ and WRITE imply DESCRIBE
    assert allowed(user2, host1, Op.DESCRIBE, acls) and allowed(user3, host1, Op.DESCRIBE, acls)
    assert allowed(user2, host1, Op.READ, acls) and allowed(user3, host1, Op.WRITE, acls)


def test_deny_takes_precedence_over_allow() -> None:
    """testDenyTakesPrecedence: an ALLOW ALL for User:* and a DENY ALL for the user from its host."""
    host = "192.168.2.1"
    acls = {RESOURCE: [ace(WILDCARD_PRINCIPAL_STRING, Op.ALL), ace(ALICE, Op.ALL, DENY, host=host)]}
    assert not allowed(ALICE, host, Op.READ, acls)
    assert allowed(ALICE, "192.168.2.2", Op.READ, acls)  # the deny names one host only


def test_allow_all_acl_allows_anyone_from_anywhere() -> None:
    """testAllowAllAccess."""
    acls = {RESOURCE: [ace(WILDCARD_PRINCIPAL_STRING, Op.ALL)]}
    assert allowed(KafkaPrincipal("User", "random"), "192.0.4.4", Op.READ, acls)


def test_wildcard_principal_is_user_star_only() -> None:
    acls = {RESOURCE: [ace("Group:*", Op.READ)]}
    assert not allowed(ALICE, "10.0.0.1", Op.READ, acls)
    assert not allowed(KafkaPrincipal("Group", "g"), "10.0.0.1", Op.READ, acls)  # Group:* is not a wildcard
    assert allowed(KafkaPrincipal("Group", "*"), "10.0.0.1", Op.READ, acls)


def test_principals_compare_by_type_and_name() -> None:
    """testAllowAccessWithCustomPrincipal: any principal with the same type and name."""
    acls = {RESOURCE: [ace(ALICE, Op.READ, DENY, host="192.168.1.1"), ace(ALICE, Op.READ, host="192.168.1.2")]}
    custom = KafkaPrincipal("User", "alice")
    assert allowed(custom, "192.168.1.2", Op.READ, acls)
    assert not allowed(custom, "192.168.1.1", Op.READ, acls)
    assert not allowed(KafkaPrincipal("Service", "alice"), "192.168.1.2", Op.READ, acls)


def test_super_users_bypass_every_acl() -> None:
    """testSuperUserHasAccess: a DENY ALL for User:* does not stop a super user; ``super.users`` is split at ';'."""
    supers = parse_super_users("User:superuser1; User:superuser2")
    assert supers == {KafkaPrincipal("User", "superuser1"), KafkaPrincipal("User", "superuser2")}
    acls = {RESOURCE: [ace(WILDCARD_PRINCIPAL_STRING, Op.ALL, DENY)]}
    for name in ("superuser1", "superuser2"):
        assert allowed(KafkaPrincipal("User", name), "192.0.4.4", Op.READ, acls, super_users=supers)
    assert not allowed(ALICE, "192.0.4.4", Op.READ, acls, super_users=supers)
    assert allowed(KafkaPrincipal("User", "superuser1"), "192.0.4.4", Op.READ, {}, super_users=supers)
    assert parse_super_users("") == frozenset() and parse_super_users(None) == frozenset()


def test_wildcard_resource_acls_apply_to_every_name() -> None:
    """testWildCardAcls: fail closed with no ACL; a wildcard READ allows; a wildcard DENY WRITE beats a literal
    ALLOW WRITE."""
    host = "192.168.3.1"
    assert not allowed(ALICE, host, Op.READ, {})
    acls = {WILDCARD: [ace(ALICE, Op.READ, host=host)]}
    assert allowed(ALICE, host, Op.READ, acls)
    acls[RESOURCE] = [ace(ALICE, Op.WRITE, host=host)]
    assert allowed(ALICE, host, Op.WRITE, acls)
    acls[WILDCARD] = [*acls[WILDCARD], ace(ALICE, Op.WRITE, DENY, host=host)]
    assert not allowed(ALICE, host, Op.WRITE, acls)


def test_empty_resource_name_only_through_the_wildcard() -> None:
    """testAuthorizeWithEmptyResourceName."""
    group = ResourcePattern(GROUP, "", LITERAL)
    assert not allowed(ALICE, "h", Op.READ, {}, resource=group)
    acls = {ResourcePattern(GROUP, WILDCARD_RESOURCE, LITERAL): [ace(WILDCARD_PRINCIPAL_STRING, Op.READ)]}
    assert allowed(ALICE, "h", Op.READ, acls, resource=group)


def test_no_acl_found_and_the_allow_everyone_override() -> None:
    """testNoAclFound / testNoAclFoundOverride: the override applies only when NO ACL applies to the resource."""
    assert not allowed(ALICE, "h", Op.READ, {})
    assert allowed(ALICE, "h", Op.READ, {}, allow_everyone_if_no_acl_found=True)
    other = {ResourcePattern(TOPIC, "other", LITERAL): [ace(ALICE, Op.READ)]}
    assert allowed(ALICE, "h", Op.READ, other, allow_everyone_if_no_acl_found=True)
    some = {RESOURCE: [ace(KafkaPrincipal("User", "bob"), Op.READ)]}
    assert not allowed(ALICE, "h", Op.READ, some, allow_everyone_if_no_acl_found=True)


@pytest.mark.parametrize(("parent", "implied"), [
    (Op.ALL, set(ACL_OPERATIONS) - {Op.ALL}),
    (Op.READ, {Op.DESCRIBE}), (Op.WRITE, {Op.DESCRIBE}), (Op.DELETE, {Op.DESCRIBE}), (Op.ALTER, {Op.DESCRIBE}),
    (Op.ALTER_CONFIGS, {Op.DESCRIBE_CONFIGS}),
    (Op.DESCRIBE, set()), (Op.CREATE, set()), (Op.IDEMPOTENT_WRITE, set()), (Op.CLUSTER_ACTION, set()),
])
def test_implications_of_allow(parent: AclOperation, implied: set[AclOperation]) -> None:
    """testAclInheritance's testImplicationsOfAllow (on the cluster resource)."""
    acls = {CLUSTER_RESOURCE: [ace(ALICE, parent)]}
    for op in ACL_OPERATIONS:
        expected = op in implied or op == parent
        assert allowed(ALICE, "192.168.3.1", op, acls, resource=CLUSTER_RESOURCE) == expected, op


@pytest.mark.parametrize(("parent", "denied"), [
    (Op.ALL, set(ACL_OPERATIONS)), (Op.DESCRIBE, set()), (Op.DESCRIBE_CONFIGS, set()), (Op.READ, set()),
])
def test_implications_of_deny(parent: AclOperation, denied: set[AclOperation]) -> None:
    """testImplicationsOfDeny: a DENY denies the operation it names (ALL: every one) and nothing it would imply."""
    acls = {CLUSTER_RESOURCE: [ace(ALICE, parent, DENY), ace(ALICE, Op.ALL)]}
    for op in ACL_OPERATIONS:
        expected_denied = op in denied or op == parent
        assert allowed(ALICE, "192.168.3.1", op, acls, resource=CLUSTER_RESOURCE) != expected_denied, op


def test_prefixed_acls_apply_to_names_with_that_prefix() -> None:
    """testAccessAllowedIfAllowAclExistsOnPrefixedResource / testAuthorizeWithPrefixedResource: many other prefixed
    and literal patterns around it change nothing."""
    deny = ace(ALICE, Op.READ, DENY)
    acls = {ResourcePattern(TOPIC, n, t): [deny] for n, t in [
        ("a_other", LITERAL), ("a_other", PREFIXED), ("foo-a1b2", PREFIXED), ("foo-c3d4-zzz", PREFIXED),
        ("fooo-x", PREFIXED), ("fo-x", PREFIXED), ("fop-x", PREFIXED), ("fon-x", PREFIXED), ("fon-", PREFIXED),
        ("z_other", PREFIXED), ("z_other", LITERAL)]}
    acls[PREFIX] = [ace(ALICE, Op.READ)]
    assert allowed(ALICE, "h", Op.READ, acls)  # foo-topic starts with foo-
    assert not allowed(ALICE, "h", Op.READ, acls, resource=ResourcePattern(TOPIC, "fon-1", LITERAL))
    assert not allowed(ALICE, "h", Op.READ, acls, resource=ResourcePattern(TOPIC, "fo", LITERAL))
    # the same prefix on another resource type does not apply
    assert not allowed(ALICE, "h", Op.READ, acls, resource=ResourcePattern(GROUP, "foo-topic", LITERAL))


def test_single_character_names() -> None:
    """testSingleCharacterResourceAcls."""
    acls = {ResourcePattern(TOPIC, "f", LITERAL): [ace(ALICE, Op.READ)]}
    assert allowed(ALICE, "h", Op.READ, acls, resource=ResourcePattern(TOPIC, "f", LITERAL))
    assert not allowed(ALICE, "h", Op.READ, acls, resource=ResourcePattern(TOPIC, "foo", LITERAL))
    acls[ResourcePattern(TOPIC, "_", PREFIXED)] = [ace(ALICE, Op.READ)]
    assert allowed(ALICE, "h", Op.READ, acls, resource=ResourcePattern(TOPIC, "_foo", LITERAL))
    assert allowed(ALICE, "h", Op.READ, acls, resource=ResourcePattern(TOPIC, "_", LITERAL))
    assert not allowed(ALICE, "h", Op.READ, acls, resource=ResourcePattern(TOPIC, "foo_", LITERAL))


def test_authorize_refuses_a_pattern_that_is_not_literal() -> None:
    """testAuthorizeThrowsOnNonLiteralResource."""
    with pytest.raises(ValueError, match="Only literal resources are supported. Got: PREFIXED"):
        authorize(ALICE, "h", Op.READ, PREFIX, {})


def test_filters_match_as_the_clients_do() -> None:
    literal, prefixed = ResourcePattern(TOPIC, "bar-1", LITERAL), ResourcePattern(TOPIC, "bar-", PREFIXED)
    wildcard = ResourcePattern(TOPIC, "*", LITERAL)
    match = ResourcePatternFilter(ResourceType.ANY, "bar-1", PatternType.MATCH)
    assert [p for p in (literal, prefixed, wildcard, RESOURCE) if match.matches(p)] == [literal, prefixed, wildcard]
    any_type = ResourcePatternFilter(TOPIC, "bar-", PatternType.ANY)
    assert [p for p in (literal, prefixed) if any_type.matches(p)] == [prefixed]
    assert not literal.to_filter().matches(wildcard) and literal.to_filter().matches(literal)
    assert not match.matches_at_most_one and literal.to_filter().matches_at_most_one
    entry = ace(ALICE, Op.READ)
    assert AccessControlEntryFilter(None, None, Op.ANY, AclPermissionType.ANY).matches(entry)
    assert entry.to_filter().matches(entry)
    assert not AccessControlEntryFilter("User:bob", None, Op.ANY, AclPermissionType.ANY).matches(entry)
    assert not AccessControlEntryFilter(None, "10.0.0.1", Op.ANY, AclPermissionType.ANY).matches(entry)
    assert not AccessControlEntryFilter(None, None, Op.WRITE, AclPermissionType.ANY).matches(entry)
    assert not AccessControlEntryFilter(None, None, Op.ANY, DENY).matches(entry)


def test_names_codes_and_text_as_kafka() -> None:
    assert ResourceType.TRANSACTIONAL_ID.pascal_name == "TransactionalId" and ResourceType.TOPIC.code == 2
    assert Op.from_name("IdempotentWrite") is Op.IDEMPOTENT_WRITE
    assert Op.from_name("IDEMPOTENTWRITE") is Op.IDEMPOTENT_WRITE and Op.from_name("read") is Op.READ
    assert Op.from_name("Idempotent_Write") is Op.UNKNOWN and Op.from_name("nope") is Op.UNKNOWN
    assert ResourceType.from_string("transactional_id") is ResourceType.TRANSACTIONAL_ID
    assert AclPermissionType.from_code(3) is ALLOW and AclPermissionType.from_code(9) is AclPermissionType.UNKNOWN
    assert str(ace(ALICE, Op.DESCRIBE_CONFIGS)) == \
        "(principal=User:alice, host=*, operation=DESCRIBE_CONFIGS, permissionType=ALLOW)"
    assert str(PREFIX) == "ResourcePattern(resourceType=TOPIC, name=foo-, patternType=PREFIXED)"
    assert str(ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY)) == \
        "ResourcePattern(resourceType=ANY, name=<any>, patternType=ANY)"
    assert parse_kafka_principal("User:CN=a:b") == KafkaPrincipal("User", "CN=a:b")
    assert parse_kafka_principal("User:") == KafkaPrincipal("User", "")
    for bad in ("alice", "", None):
        with pytest.raises(ValueError, match="expected a string in format principalType:principalName"):
            parse_kafka_principal(bad)
    assert supported_operations(GROUP) == {Op.READ, Op.DESCRIBE, Op.DELETE}
    assert supported_operations(ResourceType.TRANSACTIONAL_ID) == {Op.DESCRIBE, Op.WRITE}


def test_cache_order_is_resource_type_then_pattern_type_then_name_descending() -> None:
    patterns = [ResourcePattern(GROUP, "a", LITERAL), ResourcePattern(TOPIC, "b", PREFIXED),
                ResourcePattern(TOPIC, "a", LITERAL), ResourcePattern(TOPIC, "c", LITERAL)]
    assert in_cache_order(patterns) == [ResourcePattern(TOPIC, "c", LITERAL), ResourcePattern(TOPIC, "a", LITERAL),
                                        ResourcePattern(TOPIC, "b", PREFIXED), ResourcePattern(GROUP, "a", LITERAL)]


@pytest.mark.parametrize(("name", "message"), [
    ("a/b", "ACL binding contains invalid resource name: a/b"),
    ("", "Invalid resource name ''"),
    ("..", "Invalid resource name '..'"),
])
def test_bindings_the_authorizer_refuses(name: str, message: str) -> None:
    """validateAclBinding, and testEmptyAclThrowsException (no znode can be named '')."""
    with pytest.raises(ValueError, match=message):
        validate_acl_binding(AclBinding(ResourcePattern(GROUP, name, LITERAL), ace(ALICE, Op.READ)))
    with pytest.raises(ValueError, match="ACL binding contains unknown elements"):
        validate_acl_binding(AclBinding(RESOURCE, ace(ALICE, Op.UNKNOWN)))


def test_an_empty_prefix_applies_to_the_empty_name_only() -> None:
    """matchingAcls scans its ordered cache from the name down to the name's first character: a PREFIXED "" pattern
    is outside that range for any non-empty name."""
    acls = {ResourcePattern(TOPIC, "", PREFIXED): [ace(ALICE, Op.READ)]}
    assert not allowed(ALICE, "h", Op.READ, acls)
    assert allowed(ALICE, "h", Op.READ, acls, resource=ResourcePattern(TOPIC, "", LITERAL))
