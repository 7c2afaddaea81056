"""A broker's AclAuthorizer cache (core.security.acl_listener) on the ZooKeeper model: loaded at start-up, kept
current by the change notifications of both stores (a resource re-read, a resource whose ACLs are gone dropped),
sent whole as AuthorizerChanged, old notifications purged."""

from __future__ import annotations

from core.effects import Reconfigure, run_sync
from core.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from core.security.acl_listener import AclChangeListener
from core.security.acl_store import ZkAclAuthorizer
from core.security.authorizer import Authorizer
from messages.security import AuthorizerChanged
from tests.support.fake_zookeeper import FakeZooKeeper

ORDERS = ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL)
LOGS = ResourcePattern(ResourceType.TOPIC, "logs-", PatternType.PREFIXED)
ALICE_WRITE = AccessControlEntry("User:alice", "*", AclOperation.WRITE, AclPermissionType.ALLOW)


def _states(proc, zk: FakeZooKeeper) -> list[AuthorizerChanged]:
    out: list[AuthorizerChanged] = []
    run_sync(proc, zk, sink=lambda e: out.append(e.change) if isinstance(e, Reconfigure) else None)
    return out


def _tool(zk: FakeZooKeeper) -> ZkAclAuthorizer:
    """What `kactor acls` drives: another AclAuthorizer writing the znodes and notifications."""
    tool = ZkAclAuthorizer()
    run_sync(tool.load(), zk)
    return tool


def test_loaded_then_followed_through_both_change_stores():
    zk = FakeZooKeeper()
    tool = _tool(zk)
    run_sync(tool.create_acls([AclBinding(ORDERS, ALICE_WRITE)]), zk)
    now = [0.0]
    listener = AclChangeListener("User:admin", False, lambda: now[0])
    (first,) = _states(listener.startup(), zk)
    assert first.super_users == "User:admin" and first.loaded
    alice = Authorizer.from_message(first).for_request("User:alice", "127.0.0.1")
    assert alice.allows(AclOperation.WRITE, ResourceType.TOPIC, "orders")
    assert not alice.allows(AclOperation.WRITE, ResourceType.TOPIC, "logs-app")
    assert _states(listener.process_notifications(), zk) == []  # nothing new: no state sent

    run_sync(tool.create_acls([AclBinding(LOGS, ALICE_WRITE)]), zk)  # a prefixed ACL: the extended store
    run_sync(tool.delete_acls([AclBindingFilter(ORDERS.to_filter(), ALICE_WRITE.to_filter())]), zk)
    (second,) = _states(listener.process_notifications(), zk)
    alice = Authorizer.from_message(second).for_request("User:alice", "127.0.0.1")
    assert alice.allows(AclOperation.WRITE, ResourceType.TOPIC, "logs-app")
    assert not alice.allows(AclOperation.WRITE, ResourceType.TOPIC, "orders")  # its znode is gone
    assert len(second.acls) == 1

    # 15 minutes on, the next run purges what it has seen (ZkNodeChangeNotificationListener)
    assert zk.children("/kafka-acl-changes") and zk.children("/kafka-acl-extended-changes")
    now[0] = 10**12
    _states(listener.process_notifications(), zk)
    assert zk.children("/kafka-acl-changes") == [] and zk.children("/kafka-acl-extended-changes") == []
