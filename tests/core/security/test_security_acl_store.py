"""AclAuthorizer's ZooKeeper side (core.security.acl_store) on sim.zookeeper's model: the paths createAclPaths makes,
loadCache, additive creates, deletes by filter (the last entry removes the znode), conditional writes that retry on a
lost race, and a change notification per changed resource — not for a write that changed nothing."""

from __future__ import annotations

import pytest

from core.effects import run_sync
from core.security import acl_znodes
from core.security.acl import (
    ANY_BINDING,
    ANY_ENTRY,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from core.security.acl_store import AclUpdateError, VersionedAcls, ZkAclAuthorizer, load_acls
from core.security.acl_znodes import acl_paths
from messages.zk import NODEEXISTS, Create, ZkBatch, ZkOpResult
from tests.support.fake_zookeeper import FakeZooKeeper

TOPIC = ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL)
PREFIX = ResourcePattern(ResourceType.TOPIC, "ord", PatternType.PREFIXED)
WILDCARD = ResourcePattern(ResourceType.TOPIC, "*", PatternType.LITERAL)
READ = AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW)
WRITE = AccessControlEntry("User:alice", "*", AclOperation.WRITE, AclPermissionType.ALLOW)
DENY_READ = AccessControlEntry("User:bob", "10.0.0.1", AclOperation.READ, AclPermissionType.DENY)


def loaded(zk: FakeZooKeeper) -> ZkAclAuthorizer:
    authorizer = ZkAclAuthorizer()
    run_sync(authorizer.load(), zk)
    return authorizer


def changes(zk: FakeZooKeeper, parent: str = "/kafka-acl-changes") -> dict[str, str | None]:
    return {c: zk.get(f"{parent}/{c}") for c in zk.children(parent)}


def test_load_creates_the_acl_paths() -> None:
    zk = FakeZooKeeper()
    loaded(zk)
    for p in ("/kafka-acl/Topic", "/kafka-acl/Group", "/kafka-acl/Cluster", "/kafka-acl/TransactionalId",
              "/kafka-acl/DelegationToken", "/kafka-acl-extended/prefixed/Topic",
              "/kafka-acl-extended/prefixed/DelegationToken", "/kafka-acl-changes", "/kafka-acl-extended-changes"):
        assert zk.exists(p) and zk.get(p) is None, p
    assert len(acl_paths()) == 15 and zk.get("/kafka-acl-extended") is None
    loaded(zk)  # again: existing paths are kept


def test_create_writes_the_znode_and_a_literal_change_notification() -> None:
    zk = FakeZooKeeper()
    authorizer = loaded(zk)
    assert run_sync(authorizer.create_acls([AclBinding(TOPIC, READ), AclBinding(TOPIC, WRITE)]), zk) == [None, None]
    assert zk.get("/kafka-acl/Topic/orders") == acl_znodes.encode_acls([READ, WRITE])
    assert zk.version("/kafka-acl/Topic/orders") == 0
    assert changes(zk) == {"acl_changes_0000000000": "TOPIC:orders"}
    # additive, new entries after the current ones, a duplicate ignored; a conditional set at version 0
    assert run_sync(authorizer.create_acls([AclBinding(TOPIC, WRITE), AclBinding(TOPIC, DENY_READ)]), zk) == \
        [None, None]
    assert zk.get("/kafka-acl/Topic/orders") == acl_znodes.encode_acls([READ, WRITE, DENY_READ])
    assert authorizer.cache[TOPIC] == VersionedAcls((READ, WRITE, DENY_READ), 1)
    assert list(changes(zk)) == ["acl_changes_0000000000", "acl_changes_0000000001"]
    # nothing new: the znode is rewritten (Kafka's conditional set) but no notification
    run_sync(authorizer.create_acls([AclBinding(TOPIC, READ)]), zk)
    assert zk.version("/kafka-acl/Topic/orders") == 2 and len(changes(zk)) == 2


def test_prefixed_acls_go_to_the_extended_store() -> None:
    zk = FakeZooKeeper()
    authorizer = loaded(zk)
    run_sync(authorizer.create_acls([AclBinding(PREFIX, READ)]), zk)
    assert zk.get("/kafka-acl-extended/prefixed/Topic/ord") == acl_znodes.encode_acls([READ])
    assert changes(zk, "/kafka-acl-extended-changes") == {
        "acl_changes_0000000000": '{"version":1,"resourceType":"TOPIC","name":"ord","patternType":"PREFIXED"}'}
    assert changes(zk) == {}


def test_refused_bindings_leave_zookeeper_alone() -> None:
    zk = FakeZooKeeper()
    authorizer = loaded(zk)
    bad = ResourcePattern(ResourceType.GROUP, "a/b", PatternType.LITERAL)
    results = run_sync(authorizer.create_acls([AclBinding(bad, READ), AclBinding(TOPIC, READ)]), zk)
    assert isinstance(results[0], ValueError) and results[1] is None
    assert zk.children("/kafka-acl/Group") == [] and zk.children("/kafka-acl/Topic") == ["orders"]


def test_load_reads_every_store_and_skips_unknown_types() -> None:
    zk = FakeZooKeeper()
    run_sync(loaded(zk).create_acls([AclBinding(TOPIC, READ), AclBinding(PREFIX, WRITE),
                                     AclBinding(WILDCARD, DENY_READ)]), zk)
    zk.create("/kafka-acl/Widget/w", acl_znodes.encode_acls([READ]))
    zk.create("/kafka-acl/Group/empty", None)
    assert run_sync(load_acls(), zk) == {TOPIC: VersionedAcls((READ,), 0), PREFIX: VersionedAcls((WRITE,), 0),
                                         WILDCARD: VersionedAcls((DENY_READ,), 0)}
    authorizer = loaded(zk)
    # the cache's order: names descending within a resource and pattern type ("orders" before "*")
    assert authorizer.acls(ANY_BINDING) == [AclBinding(TOPIC, READ), AclBinding(WILDCARD, DENY_READ),
                                            AclBinding(PREFIX, WRITE)]
    match = AclBindingFilter(ResourcePatternFilter(ResourceType.TOPIC, "orders", PatternType.MATCH), ANY_ENTRY)
    assert [b.pattern for b in authorizer.acls(match)] == [TOPIC, WILDCARD, PREFIX]
    literal = AclBindingFilter(TOPIC.to_filter(), ANY_ENTRY)
    assert authorizer.acls(literal) == [AclBinding(TOPIC, READ)]


def test_delete_by_entry_then_the_last_entry_deletes_the_znode() -> None:
    zk = FakeZooKeeper()
    authorizer = loaded(zk)
    run_sync(authorizer.create_acls([AclBinding(TOPIC, READ), AclBinding(TOPIC, WRITE)]), zk)
    removed = run_sync(authorizer.delete_acls([AclBindingFilter(TOPIC.to_filter(), READ.to_filter())]), zk)
    assert [d.binding for d in removed[0]] == [AclBinding(TOPIC, READ)] and removed[0][0].error is None
    assert zk.get("/kafka-acl/Topic/orders") == acl_znodes.encode_acls([WRITE])
    removed = run_sync(authorizer.delete_acls([AclBindingFilter(TOPIC.to_filter(), ANY_ENTRY)]), zk)
    assert [d.binding for d in removed[0]] == [AclBinding(TOPIC, WRITE)]
    assert not zk.exists("/kafka-acl/Topic/orders") and TOPIC not in authorizer.cache
    assert list(changes(zk).values()) == ["TOPIC:orders"] * 3


def test_delete_filters_as_kafkas_acls_filter_test() -> None:
    """testAclsFilter's deleteAcls: a MATCH filter removes the literal and prefixed bindings of the name; a filter
    that matched nothing removes nothing (and leaves no znode)."""
    zk = FakeZooKeeper()
    authorizer = loaded(zk)
    r1 = ResourcePattern(ResourceType.TOPIC, "foo-1", PatternType.LITERAL)
    r2 = ResourcePattern(ResourceType.TOPIC, "bar-1", PatternType.LITERAL)
    prefixed = ResourcePattern(ResourceType.TOPIC, "bar-", PatternType.PREFIXED)
    acl1, acl2 = AclBinding(r1, READ), AclBinding(r1, AccessControlEntry("User:alice", "192.168.0.1",
                                                                         AclOperation.WRITE, AclPermissionType.ALLOW))
    acl3 = AclBinding(r2, AccessControlEntry("User:alice", "*", AclOperation.DESCRIBE, AclPermissionType.ALLOW))
    acl4 = AclBinding(prefixed, AccessControlEntry("User:*", "*", AclOperation.READ, AclPermissionType.ALLOW))
    run_sync(authorizer.create_acls([acl1, acl2, acl3, acl4]), zk)
    match = AclBindingFilter(ResourcePatternFilter(ResourceType.ANY, "bar-1", PatternType.MATCH), ANY_ENTRY)
    filters = [match, AclBindingFilter(r1.to_filter(), acl1.entry.to_filter()),
               AclBindingFilter(r2.to_filter(), ANY_ENTRY),
               AclBindingFilter(ResourcePatternFilter(ResourceType.TOPIC, "baz", PatternType.ANY), ANY_ENTRY)]
    removed = run_sync(authorizer.delete_acls(filters), zk)
    assert [{d.binding for d in r} for r in removed] == [{acl3, acl4}, {acl1}, set(), set()]
    assert authorizer.acls(ANY_BINDING) == [acl2]
    assert zk.children("/kafka-acl/Topic") == ["foo-1"] and zk.children("/kafka-acl-extended/prefixed/Topic") == []


def test_a_lost_race_is_retried_on_the_znode_read_again() -> None:
    """Another authorizer wrote the resource after this one loaded: the conditional set fails, the znode is read
    again and the entry added to what is there."""
    zk = FakeZooKeeper()
    mine, theirs = loaded(zk), loaded(zk)
    run_sync(mine.create_acls([AclBinding(TOPIC, READ)]), zk)
    run_sync(theirs.create_acls([AclBinding(TOPIC, WRITE)]), zk)  # its cache had no znode: create fails, re-read
    run_sync(mine.create_acls([AclBinding(TOPIC, DENY_READ)]), zk)  # its cached version is stale
    assert acl_znodes.decode_acls(zk.get("/kafka-acl/Topic/orders"), "") == (READ, WRITE, DENY_READ)
    assert mine.cache[TOPIC] == VersionedAcls((READ, WRITE, DENY_READ), 2)


def test_gives_up_after_max_update_retries() -> None:
    zk = FakeZooKeeper()
    authorizer = loaded(zk)
    authorizer.max_update_retries = 2

    def lose_every_write(batch: ZkBatch) -> tuple[ZkOpResult, ...] | None:
        """Every write of the resource's znode loses a race (a create finds it, a set finds another version)."""
        op = batch.ops[0]
        if isinstance(op, Create) and op.path == "/kafka-acl/Topic/orders":
            return (ZkOpResult(NODEEXISTS),)
        return None
    zk.interceptors.extend([lose_every_write] * 20)
    results = run_sync(authorizer.create_acls([AclBinding(TOPIC, READ)]), zk)
    assert isinstance(results[0], AclUpdateError)
    assert sum(isinstance(b.ops[0], Create) and b.ops[0].path.startswith("/kafka-acl/Topic/") for b in zk.batches) == 3
    assert not zk.exists("/kafka-acl/Topic/orders") and changes(zk) == {}
    assert "Failed to update ACLs for ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL) after " \
           "trying a maximum of 2 times" in str(results[0])


@pytest.mark.parametrize("pattern_type", [PatternType.LITERAL, PatternType.PREFIXED])
def test_an_unchanged_delete_writes_no_notification(pattern_type: PatternType) -> None:
    zk = FakeZooKeeper()
    authorizer = loaded(zk)
    pattern = ResourcePattern(ResourceType.GROUP, "g", pattern_type)
    removed = run_sync(authorizer.delete_acls([AclBindingFilter(pattern.to_filter(), ANY_ENTRY)]), zk)
    assert removed == [[]]
    assert changes(zk) == {} and changes(zk, "/kafka-acl-extended-changes") == {}
