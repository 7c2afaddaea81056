"""The in-memory ZooKeeper model used by the controller-core tests answers like the real executor."""

from __future__ import annotations

from fake_zk import FakeZooKeeper

from messages.zk import (
    BADVERSION,
    CONTROLLER_MOVED,
    NODEEXISTS,
    NONODE,
    NOTEMPTY,
    OK,
    RUNTIMEINCONSISTENCY,
    Check,
    Create,
    Delete,
    GetChildren,
    GetData,
    Multi,
    SetData,
    ZkBatch,
)


def test_codes_and_versions() -> None:
    zk = FakeZooKeeper()
    r = zk(ZkBatch((Create("/a/b", "x"), Create("/a"), Create("/a/b", "x"), Create("/a/b", "y"),
                    SetData("/a/b", "z", 1), SetData("/a/b", "z", 0), GetData("/a/b"), GetData("/nope"),
                    Delete("/a"), GetChildren("/a"))))
    assert [x.code for x in r] == [NONODE, OK, OK, NODEEXISTS, BADVERSION, OK, OK, NONODE, NOTEMPTY, OK]
    assert r[6].data == "z" and r[6].stat.version == 1 and r[9].children == ("b",)
    assert zk(ZkBatch((Create("/s/q-", sequential=True, make_parents=True),
                       Create("/s/q-", sequential=True))))[1].path == "/s/q-0000000001"


def test_fencing_and_multi_atomicity() -> None:
    zk = FakeZooKeeper()
    zk.setup_controller_epoch(3, 2)
    r = zk(ZkBatch((GetData("/controller_epoch"), Create("/x")), fence_version=1))
    assert [x.code for x in r] == [OK, CONTROLLER_MOVED] and not zk.exists("/x")
    r = zk(ZkBatch((Create("/x"),), fence_version=2))
    assert r[0].code == OK
    [m] = zk(ZkBatch((Multi((Create("/y"), Check("/x", 5), Create("/z"))),)))
    assert m.code == BADVERSION and [x.code for x in m.results] == [OK, BADVERSION, RUNTIMEINCONSISTENCY]
    assert not zk.exists("/y")
