"""zookeeper.set.acl: ZkData.defaultAcls per path (pure), and a secure ZkExecutor session creating every znode with it
on the real ZooKeeper (every kind of create: plain, with parents, fenced, in a multi, sequential, the broker's
registration), while an insecure session creates exactly what it did before (open ACLs)."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.security import ACL, OPEN_ACL_UNSAFE, Id, make_digest_acl_credential
from zk_test_helpers import DEADLINE_S

from messages.zk import NOAUTH, OK, Create, Multi, RegisterBroker, SetData, ZkBatch, ZkOpResult
from protocol.zk import paths
from tests.support.kazoo_clients import kazoo_client
from zk_bridge.executor import ZkExecutor, connect, is_secure, session_options

DIGEST = "kactor:s3cret"
DIGEST_ID = make_digest_acl_credential("kactor", "s3cret")  # "kactor:<base64 sha1>", what ZooKeeper stores
OWNER_ALL = ACL(31, Id("digest", DIGEST_ID))
WORLD_READ = ACL(1, Id("world", "anyone"))


# -- ZkData.defaultAcls, per path -------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/brokers/ids", "/brokers/ids/0", "/brokers/topics/t/partitions/0/state",
                                  "/controller", "/controller_epoch", "/admin/delete_topics/t", "/config/topics/t",
                                  "/config/changes/config_change_0000000001", "/config/clients/c", "/config",
                                  "/kafka-acl/Topic/t", "/kafka-acl-changes/acl_changes_0000000000",
                                  "/isr_change_notification/isr_change_0000000000", "/cluster/id",
                                  "/latest_producer_id_block", "/consumers/g"])
def test_a_secure_znode_is_its_creators_and_world_readable(path: str) -> None:
    assert paths.default_acls(True, path) == ((31, "auth", ""), (1, "world", "anyone"))
    assert not paths.sensitive_path(path)


@pytest.mark.parametrize("path", ["/config/users", "/config/users/alice", "/config/users/alice/clients/c",
                                  "/config/brokers", "/config/brokers/0", "/config/brokers/<default>",
                                  "/delegation_token/tokens", "/delegation_token/tokens/t1"])
def test_a_sensitive_znode_is_its_creators_alone(path: str) -> None:
    assert paths.sensitive_path(path)
    assert paths.default_acls(True, path) == ((31, "auth", ""),)


def test_the_old_consumers_path_stays_open_and_an_insecure_client_creates_open_znodes() -> None:
    """ZkData.defaultAcls: /consumers itself is open (old consumers write under it), its children are not."""
    assert paths.default_acls(True, "/consumers") == paths.OPEN_ACL_UNSAFE == ((31, "world", "anyone"),)
    for path in ("/brokers/ids/0", "/config/users/alice", "/consumers"):
        assert paths.default_acls(False, path) == paths.OPEN_ACL_UNSAFE


def test_a_secure_session_needs_a_login() -> None:
    assert session_options(None, False) == {}
    assert session_options(DIGEST, False) == {"auth_data": [("digest", DIGEST)]}
    assert set(session_options(DIGEST, True)) == {"auth_data", "default_acl"}
    with pytest.raises(ValueError, match="needs credentials"):
        session_options(None, True)
    assert is_secure(KazooClient(hosts="127.0.0.1:1", **session_options(DIGEST, True)))
    assert not is_secure(KazooClient(hosts="127.0.0.1:1", **session_options(DIGEST, False)))
    assert not is_secure(KazooClient(hosts="127.0.0.1:1"))


# -- on the real ZooKeeper -------------------------------------------------------------------------------------------
@pytest.fixture
def secure(zk_chroot: str) -> Iterator[ZkExecutor]:
    client = connect(zk_chroot, 4000, 10, digest=DIGEST, set_acl=True)
    executor = ZkExecutor(client)
    yield executor
    executor.close()
    client.stop()
    client.close()


def run(ex: ZkExecutor, *ops: Any, fence: int = -1) -> tuple[ZkOpResult, ...]:
    box: queue.Queue = queue.Queue()
    ex.submit(ZkBatch(tuple(ops), fence), box.put)
    results = box.get(timeout=DEADLINE_S)
    assert len(results) == len(ops)
    return results


def walk(zk: KazooClient, path: str = "/") -> Iterator[str]:
    for child in sorted(zk.get_children(path)):
        node = f"{path.rstrip('/')}/{child}"
        yield node
        yield from walk(zk, node)


def test_a_secure_session_creates_every_znode_writable_by_its_identity_only(secure: ZkExecutor, zk_chroot: str
                                                                            ) -> None:
    (epoch,) = run(secure, Create(paths.ControllerEpochZNode, "1"))
    assert epoch.code == OK
    results = run(secure,
                  Create("/brokers/topics/t", "{}", make_parents=True),  # parents and node, unfenced
                  Create("/config/users/alice/clients/c", "{}", make_parents=True),  # sensitive parents
                  Create("/isr_change_notification/isr_change_", "{}", make_parents=True, sequential=True),
                  Multi((Create("/admin", None), Create("/admin/delete_topics", None))),
                  Create("/brokers/ids", None, make_parents=True))
    assert [r.code for r in results] == [OK] * 5
    (registered,) = run(secure, RegisterBroker("/brokers/ids/0", '{"version":4}'))
    assert registered.code == OK
    fenced = run(secure, Create("/brokers/topics/t/partitions", None),
                 Create("/config/brokers/0", "{}", make_parents=True), fence=0)
    assert [r.code for r in fenced] == [OK, OK]
    with kazoo_client(zk_chroot) as anonymous, kazoo_client(zk_chroot, auth_data=[("digest", DIGEST)]) as owner:
        created = list(walk(owner))
        assert {"/brokers", "/brokers/ids/0", "/brokers/topics/t/partitions", "/config/users/alice/clients/c",
                "/config/brokers/0", "/admin/delete_topics", "/controller_epoch"} <= set(created)
        for node in created:
            sensitive = node.startswith(("/config/users", "/config/brokers"))
            acls, _ = owner.get_acls(node)
            assert acls == ([OWNER_ALL] if sensitive else [OWNER_ALL, WORLD_READ]), node
            with pytest.raises(NoAuthError):
                anonymous.set(node, b"x")
            with pytest.raises(NoAuthError):
                anonymous.create(f"{node}/intruder")
            if sensitive:
                with pytest.raises(NoAuthError):
                    anonymous.get(node)
            else:
                assert anonymous.get(node)[0] == owner.get(node)[0]
            owner.set(node, owner.get(node)[0])  # the brokers' identity may
        with pytest.raises(NoAuthError):
            anonymous.delete("/brokers/ids/0")
    # a write the ACL refuses is NOAUTH, not a generic error
    with kazoo_client(zk_chroot) as anonymous:
        stranger = ZkExecutor(anonymous)
        try:
            (r,) = run(stranger, SetData("/brokers/topics/t", "{}", -1))
            assert r.code == NOAUTH
        finally:
            stranger.close()


def test_an_insecure_session_creates_open_znodes_even_when_authenticated(zk_chroot: str) -> None:
    """zookeeper.set.acl=false (the default) is unchanged: open ACLs, with or without a digest login."""
    for digest in (None, DIGEST):
        client = connect(zk_chroot, 4000, 10, digest=digest, set_acl=False)
        executor = ZkExecutor(client)
        try:
            base = f"/open-{'auth' if digest else 'anon'}"
            (first,) = run(executor, Create(f"{base}/a/b", "x", make_parents=True))
            results = run(executor, Multi((Create(f"{base}/m", None),)), RegisterBroker(f"{base}/r", "{}"))
            assert [r.code for r in (first, *results)] == [OK] * 3
            for node in (base, f"{base}/a", f"{base}/a/b", f"{base}/m", f"{base}/r"):
                assert client.get_acls(node)[0] == OPEN_ACL_UNSAFE, node
        finally:
            executor.close()
            client.stop()
            client.close()


def test_a_secure_session_creates_its_chroot_with_default_acls(zk_chroot: str) -> None:
    """KafkaServer.createChrootIfNecessary on a secure client: the chroot is the brokers' too."""
    client = connect(f"{zk_chroot}/kafka", 4000, 10, digest=DIGEST, set_acl=True)
    client.stop()
    client.close()
    with kazoo_client(zk_chroot) as anonymous, kazoo_client(zk_chroot, auth_data=[("digest", DIGEST)]) as owner:
        assert owner.get_acls("/kafka")[0] == [OWNER_ALL, WORLD_READ]
        with pytest.raises(NoAuthError):
            anonymous.create("/kafka/brokers")
