"""ZkExecutor against the real ZooKeeper: pipelining, result codes, fencing, watches, broker registration, sessions."""

from __future__ import annotations

import queue
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient
from zk_test_helpers import DEADLINE_S, Recorder, wait_for

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
    RegisterBroker,
    SetData,
    ZkBatch,
    ZkOpResult,
    ZkWatchEvent,
)
from tests.support.kazoo_clients import kazoo_client
from zk_bridge.executor import FENCED_CHUNK, READ_CHUNK, ZkExecutor, ZooKeeperUnreachable, connect
from zk_bridge.server import free_port


@pytest.fixture
def ex(zk: KazooClient) -> Iterator[ZkExecutor]:
    executor = ZkExecutor(zk)
    yield executor
    executor.close()


def run(ex: ZkExecutor, *ops: Any, fence: int = -1) -> tuple[ZkOpResult, ...]:
    box: queue.Queue = queue.Queue()
    caller = threading.current_thread()
    # the answer comes from the executor's thread, never the caller's (a wall-clock bound on submit here failed at
    # 0.6 s on a busy machine: a timing, not a behaviour)
    ex.submit(ZkBatch(tuple(ops), fence), lambda results: box.put((results, threading.current_thread())))
    results, thread = box.get(timeout=DEADLINE_S)
    assert thread is not caller
    assert len(results) == len(ops)
    return results


def test_pipelined_creates_gets_and_sets(ex: ZkExecutor, zk: KazooClient) -> None:
    n = 200
    created = run(ex, *(Create(f"/p/n{i}", f"v{i}", make_parents=True) for i in range(n)))
    assert all(r.code == OK for r in created)
    assert created[7].path == "/p/n7" and created[7].stat.version == 0
    got = run(ex, *(GetData(f"/p/n{i}") for i in range(n)))
    assert [r.data for r in got] == [f"v{i}" for i in range(n)]
    assert got[0].stat.czxid == zk.exists("/p/n0").czxid
    sets = run(ex, *(SetData(f"/p/n{i}", "w", version=0) for i in range(n)))
    assert all(r.code == OK and r.stat.version == 1 for r in sets)
    kids = run(ex, GetChildren("/p"), Exists("/p/n3"), Exists("/nope"), GetData("/nope"))
    assert kids[0].children == tuple(sorted(f"n{i}" for i in range(n)))
    assert kids[0].stat.num_children == n
    assert kids[1].code == OK and kids[1].stat.version == 1
    assert kids[2].code == NONODE and kids[3].code == NONODE


def test_empty_batch_and_error_codes(ex: ZkExecutor, zk: KazooClient) -> None:
    assert run(ex) == ()
    zk.create("/a/b", b"x", makepath=True)
    r = run(ex, SetData("/a/b", "y", version=5), Create("/a/b", "z"), Delete("/a"), Delete("/zz"),
            Create("/q/r", "no parent"), Check("/a/b", 3), Check("/a/b", 0))
    assert [x.code for x in r] == [BADVERSION, NODEEXISTS, NOTEMPTY, NONODE, NONODE, BADVERSION, OK]
    assert zk.get("/a/b")[0] == b"x"


def test_null_data_and_recursive_delete(ex: ZkExecutor, zk: KazooClient) -> None:
    assert run(ex, Create("/admin/delete_topics/t", None, make_parents=True))[0].code == OK
    assert run(ex, GetData("/admin/delete_topics/t"))[0].data in (None, "")
    for i in range(30):
        zk.create(f"/brokers/topics/t/partitions/{i}/state", b"{}", makepath=True)
    r = run(ex, Delete("/brokers/topics/t", recursive=True), Delete("/absent", recursive=True))
    assert [x.code for x in r] == [OK, NONODE]
    assert zk.exists("/brokers/topics/t") is None


def _tree(zk: KazooClient, root: str, fan_out: int = 10) -> list[str]:
    """root, fan_out children, fan_out² grandchildren: 111 nodes over 3 levels for 10 (more than one FENCED_CHUNK)."""
    nodes = [root]
    for i in range(fan_out):
        nodes.append(f"{root}/a{i}")
        nodes.extend(f"{root}/a{i}/b{j}" for j in range(fan_out))
    for n in nodes:
        zk.create(n, b"{}", makepath=True)
    return nodes


def _count_transactions(zk: KazooClient, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    sent: list[int] = []
    transaction = zk.transaction

    def counted() -> Any:
        sent.append(1)
        return transaction()

    monkeypatch.setattr(zk, "transaction", counted)
    return sent


def test_recursive_delete_of_a_big_tree_is_pipelined(ex: ZkExecutor, zk: KazooClient,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree of 111 nodes over 3 levels goes in ceil(111 / FENCED_CHUNK) fenced transactions, deepest level first."""
    zk.create("/controller_epoch", b"1")
    zk.set("/controller_epoch", b"2")  # epoch zkVersion 1
    nodes = _tree(zk, "/brokers/topics/big")
    assert len(nodes) > FENCED_CHUNK
    _tree(zk, "/brokers/topics/other", 2)
    sent = _count_transactions(zk, monkeypatch)
    assert run(ex, Delete("/brokers/topics/big", recursive=True), fence=1)[0].code == OK
    assert len(sent) == -(-len(nodes) // FENCED_CHUNK)
    assert zk.exists("/brokers/topics/big") is None
    assert zk.exists("/brokers/topics/other/a1/b1") is not None  # a sibling tree is left alone
    # unfenced, too
    _tree(zk, "/u", 9)
    assert run(ex, Delete("/u", recursive=True))[0].code == OK and zk.exists("/u") is None


def test_recursive_delete_stale_fence_deletes_nothing(ex: ZkExecutor, zk: KazooClient) -> None:
    zk.create("/controller_epoch", b"1")
    zk.set("/controller_epoch", b"2")  # another controller: zkVersion 1, the fence below is 0
    nodes = _tree(zk, "/brokers/topics/t")
    assert run(ex, Delete("/brokers/topics/t", recursive=True), fence=0)[0].code == CONTROLLER_MOVED
    assert all(zk.exists(n) is not None for n in nodes)


def test_recursive_delete_of_a_missing_root(ex: ZkExecutor, zk: KazooClient) -> None:
    zk.create("/controller_epoch", b"1")
    r = run(ex, Delete("/brokers/topics/none", recursive=True), Delete("/none", recursive=True), fence=0)
    assert [x.code for x in r] == [NONODE, NONODE]
    assert run(ex, Delete("/none", recursive=True))[0].code == NONODE


class _Children:
    """A getChildren answer with one child added (a node deleted since) or one left out (created since)."""

    def __init__(self, answer: Any, add: str = "", leave_out: str = "") -> None:
        self.answer, self.add, self.leave_out = answer, add, leave_out

    def get(self) -> list[str]:
        children = [c for c in self.answer.get() if c != self.leave_out]
        return [*children, self.add] if self.add else children


@pytest.mark.parametrize("race", ["gone", "created"])
def test_recursive_delete_falls_back_one_by_one(ex: ZkExecutor, zk: KazooClient, monkeypatch: pytest.MonkeyPatch,
                                                race: str) -> None:
    """A transaction that fails for another reason than the fence was not applied at all: a node listed but already
    gone (NONODE) or a child the listing missed (created meanwhile: its parent's delete fails NOTEMPTY). Its nodes are
    then deleted one by one; the whole tree still goes."""
    zk.create("/controller_epoch", b"1")
    _tree(zk, "/t")
    listing = zk.get_children_async

    lied: list[str] = []

    def raced(path: str, *args: Any, **kwargs: Any) -> Any:  # kazoo's get_children asks this too: lie only once
        answer = listing(path, *args, **kwargs)
        if path != "/t/a3" or lied:
            return answer
        lied.append(path)
        return _Children(answer, add="ghost") if race == "gone" else _Children(answer, leave_out="b5")

    slow: list[str] = []
    one_by_one = ex._delete_recursive_slow

    def spied(path: str, fence: int) -> ZkOpResult:
        slow.append(path)
        return one_by_one(path, fence)

    monkeypatch.setattr(zk, "get_children_async", raced)
    monkeypatch.setattr(ex, "_delete_recursive_slow", spied)
    assert run(ex, Delete("/t", recursive=True), fence=0)[0].code == OK
    assert zk.exists("/t") is None
    assert "/t/a3" in slow and "/t" in slow


def test_sequential_create_names(ex: ZkExecutor, zk: KazooClient) -> None:
    zk.ensure_path("/isr_change_notification")
    r = run(ex, *(Create("/isr_change_notification/isr_change_", "{}", sequential=True) for _ in range(3)))
    assert [x.path for x in r] == [f"/isr_change_notification/isr_change_000000000{i}" for i in range(3)]
    assert zk.get_children("/isr_change_notification") == [
        f"isr_change_000000000{i}" for i in range(3)] or sorted(zk.get_children("/isr_change_notification")) == [
        f"isr_change_000000000{i}" for i in range(3)]


def test_multi(ex: ZkExecutor, zk: KazooClient) -> None:
    ok = run(ex, Multi((Create("/m", "1"), Create("/m/c", "2"), SetData("/m", "3", 0))))[0]
    assert ok.code == OK and [r.code for r in ok.results] == [OK, OK, OK]
    assert ok.results[1].path == "/m/c" and ok.results[2].stat.version == 1
    bad = run(ex, Multi((Create("/m2", "1"), SetData("/m", "x", 0), Create("/m3", "1"))))[0]
    assert bad.code == BADVERSION
    assert [r.code for r in bad.results] == [RUNTIMEINCONSISTENCY, BADVERSION, RUNTIMEINCONSISTENCY]
    assert zk.exists("/m2") is None and zk.exists("/m3") is None


def test_fenced_ops(ex: ZkExecutor, zk: KazooClient) -> None:
    zk.create("/controller_epoch", b"1")
    zk.set("/controller_epoch", b"2")  # epoch zkVersion 1
    zk.create("/s", b"0")
    fenced = run(ex, Create("/f", "x"), SetData("/s", "1", 0), SetData("/s", "2", 7), Create("/s", "dup"),
                 Create("/deep/er/node", "y", make_parents=True), fence=1)
    assert [r.code for r in fenced] == [OK, OK, BADVERSION, NODEEXISTS, OK]
    assert fenced[0].path == "/f" and fenced[1].stat.version == 1
    assert zk.get("/deep/er/node")[0] == b"y"
    multi = run(ex, Multi((SetData("/s", "m", 1), Create("/f2", "z"))), fence=1)[0]
    assert multi.code == OK and len(multi.results) == 2

    zk.set("/controller_epoch", b"3")  # another controller was elected: zkVersion 2
    moved = run(ex, Create("/g", "x"), SetData("/s", "9", 2), Delete("/f"), Delete("/deep", recursive=True),
                Create("/new/parent/node", "y", make_parents=True),
                Multi((SetData("/s", "m", 2), Create("/f3", "z"))), fence=1)
    assert [r.code for r in moved] == [CONTROLLER_MOVED] * 6
    # nothing was applied
    assert zk.exists("/g") is None and zk.get("/s")[0] == b"m" and zk.exists("/f") is not None
    assert zk.exists("/deep/er/node") is not None and zk.exists("/new/parent/node") is None
    assert zk.exists("/f3") is None
    # reads are never fenced
    assert run(ex, GetData("/s"), fence=1)[0].code == OK


def test_fenced_writes_in_chunks_keep_per_op_results(ex: ZkExecutor, zk: KazooClient) -> None:
    """More fenced writes than one chunk (FENCED_CHUNK) go as a few multis; a failing op still fails alone and its
    chunk-mates are applied, exactly as if each had been sent on its own."""
    zk.create("/controller_epoch", b"1")
    n = 2 * FENCED_CHUNK + 22
    for i in range(n):
        zk.create(f"/p/{i}", b"0", makepath=True)
    ops = [SetData(f"/p/{i}", f"v{i}", 7 if i == 70 else 0) for i in range(n)]
    ops[140] = SetData("/p/missing", "x", 0)
    results = run(ex, *ops, fence=0)
    codes = [r.code for r in results]
    assert codes[70] == BADVERSION and codes[140] == NONODE
    assert codes[:70] + codes[71:140] + codes[141:] == [OK] * (n - 2)
    assert zk.get("/p/0")[0] == b"v0" and zk.get("/p/69")[1].version == 1 and zk.get("/p/70")[0] == b"0"
    assert results[1].stat.version == 1

    zk.set("/controller_epoch", b"2")  # another controller: every op of every chunk is fenced off, none applied
    moved = run(ex, *[SetData(f"/p/{i}", "late", 1) for i in range(n)], fence=0)
    assert {r.code for r in moved} == {CONTROLLER_MOVED}
    assert all(zk.get(f"/p/{i}")[0] != b"late" for i in range(n))


def test_reads_in_multireads_keep_per_op_results_and_batch_order(ex: ZkExecutor, zk: KazooClient) -> None:
    """More watch-less reads than one multiRead (READ_CHUNK) each get their own result, a missing node fails only
    itself, and a write between reads is ordered as in the batch (a read after it sees its value)."""
    n = READ_CHUNK + 44
    for i in range(n):
        zk.create(f"/r/{i}", f"v{i}".encode(), makepath=True)
    zk.create("/r/null", None)
    reads = [GetData(f"/r/{i}") for i in range(n)]
    reads[7] = GetData("/r/missing")
    results = run(ex, *reads[:100], SetData("/r/3", "new", 0), GetData("/r/3"), GetData("/r/null"), *reads[100:])
    codes = [r.code for r in results]
    assert codes[7] == NONODE and codes.count(OK) == n + 2
    assert [r.data for r in results[:3]] == ["v0", "v1", "v2"] and results[3].data == "v3"  # read before the write
    assert results[100].stat.version == 1 and (results[101].data, results[101].stat.version) == ("new", 1)
    assert results[102].code == OK and results[102].data is None
    assert [r.data for r in results[103:]] == [f"v{i}" for i in range(100, n)]
    assert results[-1].stat.czxid == zk.get(f"/r/{n - 1}")[1].czxid


def test_multi_read_wire_format(zk: KazooClient) -> None:
    """zk_bridge.multi_read against the real server: data and stat as kazoo's get gives them, NoNodeError in place,
    paths relative to the chroot."""
    from kazoo.exceptions import NoNodeError

    from zk_bridge.multi_read import multi_read_async

    zk.create("/m/a", b"x", makepath=True)
    zk.create("/m/b", b"")
    got = multi_read_async(zk, ["/m/a", "/m/nope", "/m/b"]).get(timeout=DEADLINE_S)
    assert got[0] == zk.get("/m/a") and got[2] == zk.get("/m/b")
    assert isinstance(got[1], NoNodeError)


def _watch_events(rec: Recorder, n: int) -> list[ZkWatchEvent]:
    wait_for(lambda: len(rec.watches) >= n, what=f"{n} watch events")
    return list(rec.watches)


def _quiet(zk: KazooClient) -> None:
    """A round trip through the session: any watch notification sent before it has been dispatched by now."""
    zk.sync("/")
    zk.exists("/")


def test_one_shot_watches(ex: ZkExecutor, zk: KazooClient) -> None:
    rec = Recorder(ex)
    zk.create("/w/d", b"0", makepath=True)
    # data watch re-armed many times before it fires: one event per firing
    for _ in range(5):
        assert run(ex, GetData("/w/d", watch=True), Exists("/w/d", watch=True))[0].code == OK
    zk.set("/w/d", b"1")
    assert _watch_events(rec, 1) == [ZkWatchEvent("/w/d", "CHANGED")]
    zk.set("/w/d", b"2")  # not re-armed: no event
    # child watch
    run(ex, GetChildren("/w", watch=True), GetChildren("/w", watch=True))
    zk.create("/w/e", b"")
    assert _watch_events(rec, 2)[1] == ZkWatchEvent("/w", "CHILD")
    zk.create("/w/f", b"")  # not re-armed
    # exists on a missing node arms a watch → CREATED
    assert run(ex, Exists("/w/later", watch=True))[0].code == NONODE
    zk.create("/w/later", b"")
    assert _watch_events(rec, 3)[2] == ZkWatchEvent("/w/later", "CREATED")
    # data + child watch on one node, then delete: one DELETED
    run(ex, GetData("/w/later", watch=True), GetChildren("/w/later", watch=True))
    zk.delete("/w/later")
    assert _watch_events(rec, 4)[3] == ZkWatchEvent("/w/later", "DELETED")
    _quiet(zk)
    wait_for(lambda: zk.exists("/w/later") is None)
    assert len(rec.watches) == 4, rec.watches


def test_watch_after_firing_rearms(ex: ZkExecutor, zk: KazooClient) -> None:
    rec = Recorder(ex)
    zk.create("/r", b"0")
    for i in range(1, 4):
        run(ex, GetData("/r", watch=True))
        zk.set("/r", str(i).encode())
        _watch_events(rec, i)
    _quiet(zk)
    assert rec.watches == [ZkWatchEvent("/r", "CHANGED")] * 3


def test_register_broker(ex: ZkExecutor, zk: KazooClient, zk_chroot: str) -> None:
    zk.ensure_path("/brokers/ids")
    r = run(ex, RegisterBroker("/brokers/ids/1", '{"version":4}'))[0]
    assert r.code == OK
    stat = zk.exists("/brokers/ids/1")
    assert r.stat.czxid == stat.czxid and stat.ephemeralOwner == zk.client_id[0]
    assert zk.get("/brokers/ids/1")[0] == b'{"version":4}'
    # the same session registering again reuses its node (and its epoch)
    again = run(ex, RegisterBroker("/brokers/ids/1", '{"version":4}'))[0]
    assert again.code == OK and again.stat.czxid == stat.czxid
    # another session cannot take it
    with kazoo_client(zk_chroot) as other:
        ex2 = ZkExecutor(other)
        try:
            assert run(ex2, RegisterBroker("/brokers/ids/1", "{}"))[0].code == NODEEXISTS
            assert run(ex2, RegisterBroker("/brokers/ids/2", "{}"))[0].code == OK
        finally:
            ex2.close()
    wait_for(lambda: zk.exists("/brokers/ids/2") is None, what="other session's ephemeral to vanish")


def expire_session(zk: KazooClient, hosts: str) -> None:
    """Clone the session and close the clone: the server expires the session for real (ecosystem notes §3 A)."""
    with kazoo_client(hosts, client_id=zk.client_id):
        pass


def test_session_expiry_then_reestablished(ex: ZkExecutor, zk: KazooClient, zk_chroot: str) -> None:
    rec = Recorder(ex)
    zk.ensure_path("/brokers/ids")
    first = run(ex, RegisterBroker("/brokers/ids/1", "{}"))[0]
    old_session = zk.client_id[0]
    expire_session(zk, zk_chroot)
    wait_for(lambda: "REESTABLISHED" in rec.states(), what="REESTABLISHED")
    states = rec.states()
    assert states.index("EXPIRED") < states.index("REESTABLISHED")
    new = rec.sessions[states.index("REESTABLISHED")].session_id
    assert new and new != old_session == first.stat.ephemeral_owner
    assert zk.exists("/brokers/ids/1") is None  # the ephemeral went with the session
    # registering again gives a new epoch
    second = run(ex, RegisterBroker("/brokers/ids/1", "{}"))[0]
    assert second.code == OK and second.stat.czxid > first.stat.czxid


def test_connection_loss_is_retried_not_surfaced(ex: ZkExecutor, zk: KazooClient) -> None:
    rec = Recorder(ex)
    zk.create("/cl", b"0")
    # Drop the TCP connection under kazoo: the session survives, in-flight ops see CONNECTIONLOSS and are resent.
    box: queue.Queue = queue.Queue()
    ex.submit(ZkBatch(tuple(GetData("/cl") for _ in range(300))), box.put)
    zk._connection._socket.shutdown(2)
    results = box.get(timeout=DEADLINE_S)
    assert all(r.code == OK and r.data == "0" for r in results)
    wait_for(lambda: "CONNECTED" in rec.states(), what="reconnect")
    assert "EXPIRED" not in rec.states()


def test_client_stop_is_not_an_expiry(zk_chroot: str) -> None:
    client = connect(zk_chroot, 4000, 10)
    executor = ZkExecutor(client)
    rec = Recorder(executor)
    client.stop()
    client.close()
    executor.close()
    assert "EXPIRED" not in rec.states()


def test_connect_creates_chroot(zk_server: Any, zk_chroot: str) -> None:
    chrooted = f"{zk_chroot}/nested/root"
    client = connect(chrooted, 4000, 10)
    try:
        client.create("/x", b"1")
    finally:
        client.stop()
        client.close()
    root = connect(zk_server.connect_string, 4000, 10)
    try:
        assert root.get(chrooted.split("/", 1)[1].join(["/", ""]) + "/x")[0] == b"1"
    finally:
        root.stop()
        root.close()


def test_connect_unreachable_and_non_loopback() -> None:
    port = free_port()
    t0 = time.monotonic()
    with pytest.raises(ZooKeeperUnreachable, match=f"127.0.0.1:{port}"):
        connect(f"127.0.0.1:{port}", 4000, 0.5)
    assert time.monotonic() - t0 < 5
    with pytest.raises(ZooKeeperUnreachable, match="loopback"):
        connect("192.0.2.1:2181", 4000, 0.5)


def test_connect_to_remote_servers_only_when_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A remote ensemble is refused unless explicitly allowed; allowed, connect goes on to open the session (the
    session start is replaced here: nothing may talk off-machine in a test)."""
    started: list[tuple[str, float]] = []
    monkeypatch.setattr("zk_bridge.executor._start",
                        lambda hosts, timeout_s, connect_timeout_s, what, security=None:
                        started.append((hosts, timeout_s)))
    with pytest.raises(ZooKeeperUnreachable, match="'zk2.example.net:2181' is not a loopback address"):
        connect("127.0.0.1:2181,zk2.example.net:2181", 6000, 0.5)
    assert started == []
    connect("zk1.example.net:2181,zk2.example.net:2181", 6000, 0.5, allow_remote=True)
    assert started == [("zk1.example.net:2181,zk2.example.net:2181", 6.0)]


def _drop_connection(zk: KazooClient, rec: Recorder) -> None:
    """Cut the TCP connection under kazoo (the session survives) and wait until it is back."""
    n = rec.states().count("CONNECTED")
    zk._connection._socket.shutdown(socket.SHUT_RDWR)
    wait_for(lambda: rec.states().count("CONNECTED") > n, what="reconnection")


def test_watches_survive_a_connection_loss(ex: ZkExecutor, zk: KazooClient, zk_chroot: str) -> None:
    rec = Recorder(ex)
    zk.create("/v/d", b"0", makepath=True)
    run(ex, GetData("/v/d", watch=True), GetChildren("/v", watch=True), Exists("/v/missing", watch=True),
        Exists("/gone", watch=True))
    zk.create("/gone", b"")  # fired before the loss: not re-armed after it
    wait_for(lambda: rec.watches, what="CREATED of /gone")
    assert rec.watches == [ZkWatchEvent("/gone", "CREATED")]
    rec.watches.clear()
    _drop_connection(zk, rec)
    assert "SUSPENDED" in rec.states() and "EXPIRED" not in rec.states()
    # changes after the reconnection fire the re-armed watches, once each
    zk.set("/v/d", b"1")
    zk.create("/v/missing", b"")
    zk.delete("/gone")
    events = _watch_events(rec, 3)
    _quiet(zk)
    assert sorted(events, key=lambda e: e.path) == [
        ZkWatchEvent("/v", "CHILD"), ZkWatchEvent("/v/d", "CHANGED"), ZkWatchEvent("/v/missing", "CREATED")]
    assert len(rec.watches) == 3


def test_change_while_disconnected_is_reported_after_reconnection(ex: ZkExecutor, zk: KazooClient,
                                                                  zk_chroot: str) -> None:
    rec = Recorder(ex)
    zk.create("/u", b"0")
    run(ex, GetData("/u", watch=True))
    with kazoo_client(zk_chroot) as other:
        zk._connection._socket.shutdown(socket.SHUT_RDWR)
        other.set("/u", b"1")  # before or after kazoo reconnects: exactly one CHANGED either way
        wait_for(lambda: rec.watches, what="CHANGED of /u")
        _quiet(zk)
        assert rec.watches == [ZkWatchEvent("/u", "CHANGED")]
