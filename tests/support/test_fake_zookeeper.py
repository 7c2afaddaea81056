"""The in-memory ZooKeeper model of the core's unit tests answers like the real executor, watches included."""

from __future__ import annotations

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
    Exists,
    GetChildren,
    GetData,
    Multi,
    SetData,
    ZkBatch,
    ZkWatchEvent,
)
from tests.support.fake_zookeeper import FakeZooKeeper


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
    # the op before the failing one was rolled back (kazoo's RolledBackError): the executor reports
    # RUNTIMEINCONSISTENCY for it, as for the ops after
    assert m.code == BADVERSION
    assert [x.code for x in m.results] == [RUNTIMEINCONSISTENCY, BADVERSION, RUNTIMEINCONSISTENCY]
    assert not zk.exists("/y")


def test_a_watch_fires_once_for_the_session_that_armed_it() -> None:
    zk = FakeZooKeeper(session_id=1)
    zk.create("/brokers/ids")
    zk(ZkBatch((GetChildren("/brokers/ids", watch=True), Exists("/controller", watch=True))))
    zk.session_id = 2
    zk(ZkBatch((GetData("/brokers/ids", watch=True), GetData("/missing", watch=True))))  # no data watch on a NONODE
    zk.create("/brokers/ids/1", "b1")
    zk.create("/controller", "c")
    zk.set("/brokers/ids", "x")
    zk.create("/brokers/ids/2", "b2")  # the child watch was one-shot
    assert zk.fired == [(1, ZkWatchEvent("/brokers/ids", "CHILD")), (1, ZkWatchEvent("/controller", "CREATED")),
                        (2, ZkWatchEvent("/brokers/ids", "CHANGED"))]


def test_a_recursive_delete_fires_the_watches_beneath_it() -> None:
    zk = FakeZooKeeper()
    zk.create("/t/p/0", "s")
    zk(ZkBatch((GetData("/t/p/0", watch=True), GetChildren("/t/p", watch=True), GetChildren("/", watch=True))))
    zk(ZkBatch((Delete("/t", recursive=True),)))
    assert zk.fired == [(1, ZkWatchEvent("/t/p/0", "DELETED")), (1, ZkWatchEvent("/t/p", "CHILD")),
                        (1, ZkWatchEvent("/", "CHILD"))]
    assert not zk.exists("/t/p/0") and zk.children("/") == []


def test_forced_codes_answer_once_per_path_and_sequential_paths() -> None:
    zk = FakeZooKeeper().create_top_level_paths()
    zk.force["/isr_change_notification/isr_change_"] = "CONNECTIONLOSS"
    create = Create("/isr_change_notification/isr_change_", "d", sequential=True)
    first, second = zk(ZkBatch((create, create)))
    assert (first.code, second.code) == ("CONNECTIONLOSS", OK)
    assert second.path == "/isr_change_notification/isr_change_0000000000"
    assert zk.create("/isr_change_notification/isr_change_", "e", sequential=True) == (
        "/isr_change_notification/isr_change_0000000001")
    assert zk.children("/isr_change_notification") == ["isr_change_0000000000", "isr_change_0000000001"]
    assert len(zk.batches) == 1  # the test's own create is not a batch a procedure sent


def test_ctime_comes_from_the_clock_when_given() -> None:
    now = [1_000.0]
    zk = FakeZooKeeper(clock=lambda: now[0])
    zk.create("/a")
    now[0] = 2_500.0
    zk.create("/b")
    ra, rb = zk(ZkBatch((Exists("/a"), Exists("/b"))))
    assert (ra.stat.ctime, rb.stat.ctime) == (1_000, 2_500)
    assert FakeZooKeeper().nodes["/"].ctime == 0
