"""sim.zookeeper beyond what the differential test drives: connection loss, expiry, the ZkExecutor's view of a
ZkBatch (fence, recursive delete, parent creation, broker registration) and Java's HashSet order."""

from __future__ import annotations

from messages.zk import (
    CONNECTIONLOSS,
    CONTROLLER_MOVED,
    ERROR,
    NODEEXISTS,
    NONODE,
    OK,
    RUNTIMEINCONSISTENCY,
    SESSIONEXPIRED,
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
    ZkSessionEvent,
    ZkWatchEvent,
)
from sim.zookeeper import ROLLEDBACK, ZooKeeperModel, java_hash_set_order, java_string_hash


def test_java_string_hash_and_hash_set_order() -> None:
    """Values printed by Java 17: "/brokers/ids/1".hashCode(), and a HashSet's clone's iteration order."""
    assert java_string_hash("abc") == 96354
    assert java_string_hash("/brokers/ids/1") == -1212880842 & 0xFFFFFFFF
    inserted = ["/s/e1", "/s/a/e2", "/s/q-0000000003", "/s/x", "/s/e4"]
    in_set = java_hash_set_order(inserted, 16)
    assert java_hash_set_order(in_set, 8) == ["/s/e4", "/s/x", "/s/a/e2", "/s/e1", "/s/q-0000000003"]


def test_a_disconnected_session_fails_with_connectionloss_and_gets_its_watches_on_reconnection() -> None:
    now = [0]
    zk = ZooKeeperModel(clock_ms=lambda: now[0])
    a, b = zk.open_session(timeout_ms=4000), zk.open_session()
    assert zk.request(a, Create("/n", "x")).code == OK
    assert zk.request(a, GetData("/n", watch=True)).code == OK
    zk.disconnect(a)
    assert zk.request(a, GetData("/n")).code == CONNECTIONLOSS
    assert zk.request(b, SetData("/n", "y")).code == OK
    assert zk.events(a) == [ZkSessionEvent("SUSPENDED", a)]  # the watch event waits for the connection
    now[0] = 3000
    zk.tick()
    zk.reconnect(a)
    assert zk.events(a) == [ZkSessionEvent("CONNECTED", a), ZkWatchEvent("/n", "CHANGED")]
    assert zk.request(a, GetData("/n")).data == "y"


def test_a_silenced_client_keeps_its_connection_until_its_session_expires_and_learns_of_it_on_waking() -> None:
    """A paused process (SIGSTOP) stops heartbeating but its connection stays up: the server answers what it sent and
    sends it watch events (they wait in its socket) until the session expires; then the connection is closed, which
    the client learns only when it runs again: SUSPENDED, then EXPIRED on reconnecting, after what it had been sent
    (kazoo reads its socket before it finds the connection closed)."""
    now = [0]
    zk = ZooKeeperModel(clock_ms=lambda: now[0])
    a, b = zk.open_session(timeout_ms=4000), zk.open_session()
    assert zk.request(a, Create("/e", ephemeral=True)).code == OK
    assert zk.request(a, Create("/n", "x")).code == OK
    assert zk.request(a, GetData("/n", watch=True)).code == OK
    assert zk.request(b, Exists("/e", watch=True)).code == OK
    zk.silence(a)
    assert zk.request(a, GetData("/n")).data == "x"  # a request it had sent: answered, the connection is up
    now[0] = 2000
    assert zk.request(b, SetData("/n", "y")).code == OK
    now[0] = 4000
    zk.tick()
    assert zk.request(b, Exists("/e")).code == OK  # not beyond its timeout yet
    now[0] = 4001
    zk.tick()
    assert zk.request(b, Exists("/e")).code == NONODE
    assert zk.events(b) == [ZkWatchEvent("/e", "DELETED")]
    assert zk.events(a) == [ZkWatchEvent("/n", "CHANGED")]  # sent before the expiry: not lost
    assert zk.wake(a) is False
    assert zk.events(a) == [ZkSessionEvent("SUSPENDED", a), ZkSessionEvent("EXPIRED", a)]


def test_a_silenced_client_woken_within_its_session_notices_nothing() -> None:
    now = [0]
    zk = ZooKeeperModel(clock_ms=lambda: now[0])
    a = zk.open_session(timeout_ms=4000)
    assert zk.request(a, Create("/e", ephemeral=True)).code == OK
    zk.silence(a)
    now[0] = 3000
    assert zk.wake(a) is True
    now[0] = 6000
    zk.tick()  # heartbeating again: 6 s after it went silent, the session lives
    assert zk.request(a, Exists("/e")).code == OK and zk.events(a) == []


def test_a_session_disconnected_beyond_its_timeout_expires_and_its_ephemerals_go() -> None:
    now = [0]
    zk = ZooKeeperModel(clock_ms=lambda: now[0])
    a, b = zk.open_session(timeout_ms=4000), zk.open_session()
    assert zk.request(a, Create("/e", ephemeral=True)).code == OK
    assert zk.request(b, Exists("/e", watch=True)).code == OK
    assert zk.request(a, GetChildren("/", watch=True)).code == OK
    zk.disconnect(a)
    now[0] = 4001
    zk.tick()
    assert zk.request(a, GetData("/e")).code == SESSIONEXPIRED
    assert zk.request(b, Exists("/e")).code == NONODE
    assert zk.events(b) == [ZkWatchEvent("/e", "DELETED")]
    # its own watches went with it: no CHILD for the deletion of its ephemeral
    assert zk.events(a) == [ZkSessionEvent("SUSPENDED", a), ZkSessionEvent("EXPIRED", a)]
    renewed = zk.renew_session(a)
    assert zk.events(renewed) == [ZkSessionEvent("REESTABLISHED", renewed)]


def test_a_failed_multi_applies_nothing_and_reports_as_kazoo_does() -> None:
    zk = ZooKeeperModel()
    s = zk.open_session()
    zk.request(s, Create("/x"))
    before = zk.request(s, GetData("/")).stat
    r = zk.request(s, Multi((Create("/y"), Check("/x", 5), Create("/z"))))
    assert r.code == "BADVERSION"
    assert [x.code for x in r.results] == [ROLLEDBACK, "BADVERSION", RUNTIMEINCONSISTENCY]
    after = zk.request(s, GetData("/")).stat
    assert (after.cversion, after.num_children) == (before.cversion, before.num_children)
    assert zk.request(s, Exists("/y")).code == NONODE


def test_execute_fences_writes_on_the_controller_epoch_as_the_executor_does() -> None:
    zk = ZooKeeperModel()
    s = zk.open_session()
    zk.request(s, Create("/controller_epoch", "1"))
    zk.request(s, SetData("/controller_epoch", "2"))  # version 1
    r = zk.execute(s, ZkBatch((GetData("/controller_epoch"), Create("/x", "d"), SetData("/nope", "d")),
                              fence_version=0))
    assert [x.code for x in r] == [OK, CONTROLLER_MOVED, CONTROLLER_MOVED]
    r = zk.execute(s, ZkBatch((Create("/x", "d"), SetData("/nope", "d"), Multi((Create("/y"), Create("/x")))),
                              fence_version=1))
    assert [x.code for x in r] == [OK, NONODE, NODEEXISTS]
    assert r[0].path == "/x" and r[0].stat is None  # a fenced create answers its path only
    assert [x.code for x in r[2].results] == [RUNTIMEINCONSISTENCY, NODEEXISTS]
    # a missing /controller_epoch fails the check with NONODE, as the executor reports it
    zk.request(s, Delete("/controller_epoch"))
    assert zk.execute(s, ZkBatch((Create("/z"),), fence_version=1))[0].code == NONODE


def test_execute_recursive_delete_parent_creation_and_ephemeral_parents() -> None:
    zk = ZooKeeperModel()
    s = zk.open_session()
    r = zk.execute(s, ZkBatch((Create("/t/p/0", "s", make_parents=True), Create("/e", ephemeral=True),
                               Create("/e/c"))))
    assert [x.code for x in r] == [OK, OK, ERROR]  # NoChildrenForEphemerals is ERROR to the executor
    assert zk.request(s, GetData("/t")).data == ""  # kazoo's ensure_path creates parents with empty data
    zk.request(s, GetData("/t/p/0", watch=True))
    zk.request(s, GetChildren("/", watch=True))
    assert [x.code for x in zk.execute(s, ZkBatch((Delete("/t", recursive=True), Delete("/t", recursive=True))))] \
        == [OK, NONODE]
    assert zk.events(s) == [ZkWatchEvent("/t/p/0", "DELETED"), ZkWatchEvent("/", "CHILD")]


def test_register_broker_is_kafkas_checked_ephemeral_create() -> None:
    zk = ZooKeeperModel()
    first = zk.open_session()
    other = zk.open_session()
    zk.request(first, Create("/brokers/ids", make_parents=True))
    [r] = zk.execute(first, ZkBatch((RegisterBroker("/brokers/ids/1", "b1"),)))
    epoch = r.stat.czxid
    assert r.code == OK and zk.request(first, GetData("/brokers/ids/1")).data == "b1"
    assert zk.execute(first, ZkBatch((RegisterBroker("/brokers/ids/1", "b1"),)))[0].stat.czxid == epoch
    assert zk.execute(other, ZkBatch((RegisterBroker("/brokers/ids/1", "b1"),)))[0].code == NODEEXISTS
    # the same client's next session takes over a registration left by its earlier one (KAFKA-7165)
    zk.disconnect(first)
    renewed = zk.renew_session(first)
    [r] = zk.execute(renewed, ZkBatch((RegisterBroker("/brokers/ids/1", "b1"),)))
    assert r.code == OK and r.stat.ephemeral_owner == renewed and r.stat.czxid > epoch


def test_the_model_imports_only_the_vocabulary() -> None:
    """The model runs inside the simulator's one process: no kazoo, no I/O, only messages/ and ZooKeeper's paths."""
    import ast
    import sys
    from pathlib import Path

    import sim.zookeeper

    tree = ast.parse(Path(sim.zookeeper.__file__).read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    ours = {m for m in imported if m.split(".")[0] not in sys.stdlib_module_names and m != "attrs"}
    assert ours <= {"messages.zk", "protocol.zk", "protocol.zk.paths", "protocol.zk.znodes"}, ours
