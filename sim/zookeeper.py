"""A model of one ZooKeeper 3.8 server as kazoo clients see it, for the simulator (issue #28) and the unit tests.

Two layers:

- ``request(session, op)``: ZooKeeper's own semantics for one client request (an op of messages/zk.py without the
  executor's extras), answered with a `Reply` holding the full Stat; this is what the differential test
  (tests/sim/test_zookeeper_differential.py, ``python -m sim.zk_differential``) checks against the real server.
- ``execute(session, batch)``: a `ZkBatch` answered as zk_bridge/executor.py's ZkExecutor answers it over kazoo
  (the controller-epoch fence, recursive delete, parent creation, Kafka's checked broker registration), as
  `ZkOpResult`s.

What ZooKeeper does, and the model with it (the real server is the reference; each point was checked by the
differential test):

- one global zxid counter; every write request takes one, failed ones too (an error txn), a multi one for all its ops;
  a node's czxid = mzxid = pzxid on creation, mzxid on setData, pzxid on a child created or deleted;
- cversion counts child creations AND deletions, but a sequential node's 10-digit suffix counts the parent's child
  creations only (so after a delete the suffix is below cversion);
- a failed multi applies nothing and reports: the ops before the failing one "rolled back" (kazoo's RolledBackError,
  ``ROLLEDBACK``), the failing one its error, the ones after RUNTIMEINCONSISTENCY;
- watches are one-shot, per session (one event for a session however often it armed the path): exists arms a data
  watch whether or not the node exists, getData only on an existing node, getChildren a child watch; a delete sends
  NodeDeleted to the node's data watchers, then to its child watchers not already told, then NodeChildrenChanged to
  the parent's; a create sends NodeCreated then the parent's NodeChildrenChanged; a multi fires in op order;
- closing or expiring a session deletes its ephemerals in one txn, in the order Java's HashSet iterates the cloned set
  of their (server-side, chrooted) paths, each firing as a delete does, and drops the session's watches.

Connection loss (kazoo's SUSPENDED): requests fail with CONNECTIONLOSS; watches that fire meanwhile are delivered on
reconnection (what the executor's re-arming reports), unless the session expires first (``tick`` expires a session
disconnected for longer than its timeout), which queues ZkSessionEvent EXPIRED for it.

A stopped client process (SIGSTOP, ``silence``) is not a lost connection: the server goes on answering what it had
sent and sending it watch events (they wait in its socket) until its session expires for want of heartbeats and the
server closes the connection; the client learns that only when it runs again (``wake``: SUSPENDED, then EXPIRED).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from messages.zk import (
    BADVERSION,
    CONNECTIONLOSS,
    CONTROLLER_MOVED,
    ERROR,
    NODEEXISTS,
    NONODE,
    NOTEMPTY,
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
    ZkOpResult,
    ZkSessionEvent,
    ZkWatchEvent,
    ZStat,
)
from protocol.zk import paths

# Codes ZooKeeper/kazoo report that messages/zk.py does not name: the executor reports them as ERROR (its
# result_code) and as RUNTIMEINCONSISTENCY (a rolled-back op of a failed multi).
NOCHILDRENFOREPHEMERALS = "NOCHILDRENFOREPHEMERALS"
BADARGUMENTS = "BADARGUMENTS"
ROLLEDBACK = "ROLLEDBACK"

CREATED, DELETED, CHANGED, CHILD = "CREATED", "DELETED", "CHANGED", "CHILD"
OPEN, CLOSED, EXPIRED = "OPEN", "CLOSED", "EXPIRED"
_WRITES = (Create, SetData, Delete, Check)


@attrs.frozen
class Stat:
    """ZooKeeper's Stat, all fields (kazoo's ZnodeStat)."""

    czxid: int
    mzxid: int
    ctime: int
    mtime: int
    version: int
    cversion: int
    aversion: int
    ephemeral_owner: int
    data_length: int
    num_children: int
    pzxid: int

    def zstat(self) -> ZStat:
        return ZStat(self.version, self.czxid, self.ephemeral_owner, self.ctime, self.num_children)


@attrs.frozen
class Reply:
    """One request's answer as kazoo gives it: a code (OK or the KeeperException's), and what the call returns."""

    code: str
    data: str | None = None
    stat: Stat | None = None
    children: tuple[str, ...] | None = None
    path: str | None = None
    results: tuple[Reply, ...] | None = None


@attrs.define
class Node:
    data: str | None
    czxid: int
    ctime: int
    ephemeral_owner: int
    mzxid: int = 0
    mtime: int = 0
    pzxid: int = 0
    version: int = 0
    cversion: int = 0
    creations: int = 0  # the sequential suffix: the parent's child creations so far
    children: set[str] = attrs.field(factory=set)

    def stat(self) -> Stat:
        data_length = 0 if self.data is None else len(self.data.encode("utf-8"))
        return Stat(self.czxid, self.mzxid, self.ctime, self.mtime, self.version, self.cversion, 0,
                    self.ephemeral_owner, data_length, len(self.children), self.pzxid)


@attrs.define
class Session:
    """A client session: its id, timeout, connection, the ephemerals it owns (in creation order: the server's HashSet
    order is derived from it) and the events waiting for the client to take (``ZooKeeperModel.events``)."""

    session_id: int
    timeout_ms: int
    state: str = OPEN
    connected: bool = True
    disconnected_at: int = 0
    ephemerals: list[str] = attrs.field(factory=list)
    most_ephemerals: int = 0  # a HashMap's table never shrinks: the largest size sets its capacity
    earlier: tuple[int, ...] = ()  # the same client's earlier sessions (Kafka's KAFKA-7165 check)
    events: list[Any] = attrs.field(factory=list)
    held: list[ZkWatchEvent] = attrs.field(factory=list)  # fired while disconnected
    silent_since: int | None = None  # the client stopped heartbeating with its connection up (its process paused)


class _Failed(Exception):  # noqa: N818 - internal control flow, not an error of the model
    def __init__(self, code: str) -> None:
        self.code = code


def java_string_hash(s: str) -> int:
    """java.lang.String.hashCode (UTF-16 code units, 32-bit wrap-around)."""
    h = 0
    for unit in s.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h


def java_hash_set_order(items: Iterable[str], capacity: int) -> list[str]:
    """The iteration order of a java.util.HashSet of ``capacity`` buckets holding ``items`` inserted in that order:
    by bucket ((h ^ h >>> 16) & (capacity - 1)), insertion order within a bucket (resizes keep it)."""
    def bucket(s: str) -> int:
        h = java_string_hash(s)
        return (h ^ (h >> 16)) & (capacity - 1)
    return sorted(items, key=bucket)


def _table_size_for(n: int) -> int:
    size = 1
    while size < n:
        size *= 2
    return size


class ZooKeeperModel:
    """One ZooKeeper server's data tree, sessions and watches. ``clock_ms`` gives ctime/mtime and session expiry;
    ``chroot`` is where the clients' paths live on the server (it orders a closing session's ephemerals)."""

    def __init__(self, clock_ms: Callable[[], int] | None = None, chroot: str = "",
                 first_session_id: int = 0x100) -> None:
        self.zxid = 0
        self.clock_ms = clock_ms if clock_ms is not None else (lambda: 0)
        self.chroot = chroot.rstrip("/")
        self.nodes: dict[str, Node] = {"/": Node(None, 0, 0, 0)}
        self.sessions: dict[int, Session] = {}
        self._next_session = first_session_id
        self.data_watches: dict[str, set[int]] = {}
        self.child_watches: dict[str, set[int]] = {}
        # a multi's undo log: the nodes and sessions' ephemerals as they were before its first change to them
        self._journal: dict[str, Node | None] | None = None
        self._session_journal: dict[int, tuple[list[str], int]] | None = None
        # told of every watch event as ZooKeeper fires it (a trace of all sessions' events in one order)
        self.on_watch_event: Callable[[int, ZkWatchEvent], None] | None = None
        # set whenever an event is handed to a session: the simulator, which looks for events after every input,
        # looks no further while it is unset (sim/runtime.py's pump_zk_events clears it)
        self.told = False

    # -- sessions ---------------------------------------------------------------------------------------------------
    def open_session(self, timeout_ms: int = 18000, earlier: tuple[int, ...] = (), session_id: int = 0) -> int:
        """A new session (createSession is a txn: it takes a zxid); returns its id (``session_id`` if given)."""
        sid = session_id or self._next_session
        if sid in self.sessions:
            raise ValueError(f"session {sid:#x} exists")
        self._next_session = max(self._next_session, sid + 1)
        self.zxid += 1
        self.sessions[sid] = Session(sid, timeout_ms, earlier=earlier)
        return sid

    def renew_session(self, sid: int) -> int:
        """The same client's new session after ``sid`` expired (Kafka's reinitialize): REESTABLISHED for it."""
        old = self.sessions[sid]
        new = self.open_session(old.timeout_ms, old.earlier + (sid,))
        self._tell(self.sessions[new], ZkSessionEvent("REESTABLISHED", new))
        return new

    def close_session(self, sid: int) -> None:
        """The client closes its session: its ephemerals go (one txn) and its watches with it."""
        self._end_session(sid, CLOSED)

    def expire_session(self, sid: int) -> None:
        """The server expires the session; the client hears EXPIRED (kazoo's LOST)."""
        if self.sessions[sid].state == OPEN:
            self._end_session(sid, EXPIRED)
            self._tell(self.sessions[sid], ZkSessionEvent("EXPIRED", sid))

    def disconnect(self, sid: int) -> None:
        """The connection is lost (kazoo's SUSPENDED); the session lives on for its timeout."""
        s = self.sessions[sid]
        if s.state == OPEN and s.connected:
            s.connected = False
            s.disconnected_at = self.clock_ms()
            self._tell(s, ZkSessionEvent("SUSPENDED", sid))

    def reconnect(self, sid: int) -> None:
        """Connected again within the session: CONNECTED, then the watch events it missed, in order."""
        s = self.sessions[sid]
        if s.state == OPEN and not s.connected:
            s.connected = True
            self._tell(s, ZkSessionEvent("CONNECTED", sid), *s.held)
            s.held.clear()

    def silence(self, sid: int) -> None:
        """The client's process stops (SIGSTOP, a long GC pause): no more heartbeats, but its TCP connection stays
        up, so the server keeps answering the requests it already sent and sending it watch events (they wait in the
        client's socket buffer: ``events`` as usual) until the session expires; then the server closes the connection,
        and the client learns it only when it runs again (``wake``)."""
        s = self.sessions[sid]
        if s.state == OPEN and s.connected and s.silent_since is None:
            s.silent_since = self.clock_ms()

    def wake(self, sid: int) -> bool:
        """The silenced client runs again. Its session alive: heartbeats resume, nothing to report (kazoo never saw
        the connection go). Expired meanwhile: kazoo reads what the server sent before closing (already in
        ``events``), finds the connection closed (SUSPENDED), reconnects and is told the session expired (LOST: EXPIRED)
        — queued now, after the rest. Returns whether the session is still alive."""
        s = self.sessions[sid]
        s.silent_since = None
        if s.state == OPEN:
            return True
        if s.state == EXPIRED:
            self._tell(s, ZkSessionEvent("SUSPENDED", sid), ZkSessionEvent("EXPIRED", sid))
        return False

    def tick(self) -> None:
        """Expire every session disconnected, or silent, for longer than its timeout (the server's SessionTracker)."""
        now = self.clock_ms()
        for s in list(self.sessions.values()):
            if s.state != OPEN:
                continue
            if not s.connected and now - s.disconnected_at > s.timeout_ms:
                self.expire_session(s.session_id)
            elif s.silent_since is not None and now - s.silent_since > s.timeout_ms:
                # the server closes the connection: the silent client cannot be told (it hears it on ``wake``)
                self._end_session(s.session_id, EXPIRED)

    def _tell(self, s: Session, *events: Any) -> None:
        """Hand ``events`` to the session's client, in order (``told`` marks that there are some to take)."""
        s.events.extend(events)
        self.told = True

    def events(self, sid: int) -> list[Any]:
        """Take the events delivered to the session so far (ZkWatchEvent / ZkSessionEvent, in delivery order)."""
        s = self.sessions[sid]
        out, s.events = s.events, []
        return out

    def _end_session(self, sid: int, state: str) -> None:
        s = self.sessions[sid]
        if s.state != OPEN:
            return
        s.state = state
        s.held.clear()
        for table in (self.data_watches, self.child_watches):
            for watchers in table.values():
                watchers.discard(sid)
        if s.ephemerals:
            # PrepRequestProcessor's closeSession: the ephemerals, a clone of the session's HashSet, in one txn.
            capacity = max(16, _table_size_for(int(s.most_ephemerals / 0.75) + 1))
            server = java_hash_set_order([self.chroot + p for p in s.ephemerals], capacity)
            clone = java_hash_set_order(server, _table_size_for(int(len(server) / 0.75 + 1.0)))
            zxid = self._next_zxid()
            for full in clone:
                self._delete_node(full[len(self.chroot):], zxid)
        else:
            self.zxid += 1  # closeSession is a txn all the same

    def _session(self, sid: int) -> Session:
        s = self.sessions[sid]
        if s.state != OPEN:
            raise _Failed(SESSIONEXPIRED)
        if not s.connected:
            raise _Failed(CONNECTIONLOSS)
        return s

    # -- ZooKeeper requests -----------------------------------------------------------------------------------------
    def request(self, sid: int, op: Any) -> Reply:
        """One client request with ZooKeeper's semantics: a read (its watch armed as the server arms it), a write,
        or a Multi (atomic). Create.make_parents is kazoo's makepath (each missing parent created with empty data
        first, one request each); Delete.recursive is not a ZooKeeper request (see ``execute``)."""
        try:
            self._session(sid)
            if isinstance(op, GetData | GetChildren | Exists):
                return self._read(sid, op)
            if isinstance(op, Multi):
                return self._multi(sid, op.ops)
            if isinstance(op, Create) and op.make_parents:
                for parent in self._missing_parents(op.path):
                    self._write(sid, Create(parent, ""))
            return self._write(sid, op)
        except _Failed as f:
            return Reply(f.code)

    def _read(self, sid: int, op: GetData | GetChildren | Exists) -> Reply:
        node = self.nodes.get(op.path)
        if op.watch and (isinstance(op, Exists) or node is not None):
            table = self.child_watches if isinstance(op, GetChildren) else self.data_watches
            table.setdefault(op.path, set()).add(sid)
        if node is None:
            return Reply(NONODE)
        if isinstance(op, GetData):
            return Reply(OK, data=node.data, stat=node.stat())
        if isinstance(op, GetChildren):
            return Reply(OK, children=tuple(sorted(node.children)), stat=node.stat())
        return Reply(OK, stat=node.stat())

    def _write(self, sid: int, op: Any) -> Reply:
        """A single write request: a txn (its zxid taken even if it fails), then its watches."""
        zxid = self._next_zxid()
        fired: list[tuple[str, str]] = []
        reply = self._apply(sid, op, zxid, fired)
        self._deliver(fired)
        return reply

    def _multi(self, sid: int, ops: tuple) -> Reply:
        zxid = self._next_zxid()
        # Applied on the tree and undone on failure: ZooKeeper's PrepRequestProcessor validates each op against the
        # changes of the ones before it, and a failed multi applies nothing.
        self._journal, self._session_journal = {}, {}
        fired: list[tuple[str, str]] = []
        results: list[Reply] = []
        for i, op in enumerate(ops):
            try:
                if not isinstance(op, _WRITES) or getattr(op, "make_parents", False) or getattr(op, "recursive", False):
                    raise _Failed(BADARGUMENTS)
                if isinstance(op, Create) and op.data is None:
                    op = attrs.evolve(op, data="")  # kazoo's transaction cannot send null data: the executor sends b""
                reply = self._apply(sid, op, zxid, fired)
                # a multi's create answers its path only (kazoo's transaction: a string, no Stat)
                results.append(attrs.evolve(reply, stat=None) if isinstance(op, Create) else reply)
            except _Failed as f:
                self._undo()
                inner = [Reply(ROLLEDBACK)] * i + [Reply(f.code)] + [Reply(RUNTIMEINCONSISTENCY)] * (len(ops) - i - 1)
                return Reply(f.code, results=tuple(inner))
        self._journal = self._session_journal = None
        self._deliver(fired)
        return Reply(OK, results=tuple(results))

    def _touch(self, *touched: str) -> None:
        """Keep a node's state before a multi's op first changes it (None: it did not exist)."""
        if self._journal is not None:
            for path in touched:
                if path not in self._journal:
                    node = self.nodes.get(path)
                    self._journal[path] = None if node is None else attrs.evolve(node, children=set(node.children))

    def _touch_session(self, session: Session) -> None:
        if self._session_journal is not None and session.session_id not in self._session_journal:
            self._session_journal[session.session_id] = (list(session.ephemerals), session.most_ephemerals)

    def _undo(self) -> None:
        assert self._journal is not None and self._session_journal is not None
        for path, node in self._journal.items():
            if node is None:
                self.nodes.pop(path, None)
            else:
                self.nodes[path] = node
        for sid, (ephemerals, most) in self._session_journal.items():
            self.sessions[sid].ephemerals, self.sessions[sid].most_ephemerals = ephemerals, most
        self._journal = self._session_journal = None

    def _apply(self, sid: int, op: Any, zxid: int, fired: list[tuple[str, str]]) -> Reply:
        if isinstance(op, Create):
            return self._create(sid, op, zxid, fired)
        if isinstance(op, SetData):
            self._versioned(op.path, op.version)
            self._touch(op.path)
            node = self.nodes[op.path]
            node.data = op.data
            node.version += 1
            node.mzxid = zxid
            node.mtime = self.clock_ms()
            fired.append((op.path, CHANGED))
            return Reply(OK, stat=node.stat())
        if isinstance(op, Delete):
            if op.recursive:
                raise _Failed(BADARGUMENTS)
            node = self._versioned(op.path, op.version)
            if op.path == "/":
                raise _Failed(BADARGUMENTS)
            if node.children:
                raise _Failed(NOTEMPTY)
            self._delete_node(op.path, zxid, fired)
            return Reply(OK)
        if isinstance(op, Check):
            self._versioned(op.path, op.version)
            return Reply(OK)
        raise TypeError(f"not a ZooKeeper write: {op!r}")

    def _versioned(self, path: str, version: int) -> Node:
        node = self.nodes.get(path)
        if node is None:
            raise _Failed(NONODE)
        if version != -1 and node.version != version:
            raise _Failed(BADVERSION)
        return node

    def _create(self, sid: int, op: Create, zxid: int, fired: list[tuple[str, str]]) -> Reply:
        parent_path = paths.parent(op.path)
        parent = self.nodes.get(parent_path)
        if parent is None:
            raise _Failed(NONODE)
        if parent.ephemeral_owner:
            raise _Failed(NOCHILDRENFOREPHEMERALS)
        path = f"{op.path}{parent.creations:010d}" if op.sequential else op.path
        if path in self.nodes:
            raise _Failed(NODEEXISTS)
        self._touch(path, parent_path)
        parent = self.nodes[parent_path]
        now = self.clock_ms()
        node = Node(op.data, zxid, now, sid if op.ephemeral else 0, mzxid=zxid, mtime=now, pzxid=zxid)
        self.nodes[path] = node
        parent.children.add(path.rsplit("/", 1)[1])
        parent.cversion += 1
        parent.creations += 1
        parent.pzxid = zxid
        if op.ephemeral:
            s = self.sessions[sid]
            self._touch_session(s)
            s.ephemerals.append(path)
            s.most_ephemerals = max(s.most_ephemerals, len(s.ephemerals))
        fired += [(path, CREATED), (parent_path, CHILD)]
        return Reply(OK, path=path, stat=node.stat())

    def _delete_node(self, path: str, zxid: int, fired: list[tuple[str, str]] | None = None) -> None:
        parent_path = paths.parent(path)
        self._touch(path, parent_path)
        node = self.nodes.pop(path)
        parent = self.nodes[parent_path]
        parent.children.discard(path.rsplit("/", 1)[1])
        parent.cversion += 1
        parent.pzxid = max(parent.pzxid, zxid)
        if node.ephemeral_owner:
            owner = self.sessions.get(node.ephemeral_owner)
            if owner is not None and path in owner.ephemerals:
                self._touch_session(owner)
                owner.ephemerals.remove(path)
        events = [(path, DELETED), (parent_path, CHILD)]
        if fired is None:
            self._deliver(events)
        else:
            fired += events

    def _deliver(self, fired: list[tuple[str, str]]) -> None:
        """DataTree's triggerWatch, in the order the txn's changes were applied."""
        for path, kind in fired:
            if kind == DELETED:
                told = self.data_watches.pop(path, set())
                targets = sorted(told) + sorted(self.child_watches.pop(path, set()) - told)
            elif kind == CHILD:
                targets = sorted(self.child_watches.pop(path, set()))
            else:
                targets = sorted(self.data_watches.pop(path, set()))
            for sid in targets:
                s = self.sessions[sid]
                event = ZkWatchEvent(path, kind)
                if s.connected:
                    self._tell(s, event)
                else:
                    s.held.append(event)
                if self.on_watch_event is not None:
                    self.on_watch_event(sid, event)

    def _next_zxid(self) -> int:
        self.zxid += 1
        return self.zxid

    def _missing_parents(self, path: str) -> list[str]:
        missing = []
        p = paths.parent(path)
        while p not in self.nodes:
            missing.append(p)
            p = paths.parent(p)
        return list(reversed(missing))

    # -- the ZkBridgeActor's executor ------------------------------------------------------------------------------
    def execute(self, sid: int, batch: ZkBatch) -> tuple[ZkOpResult, ...]:
        """A ZkBatch as zk_bridge/executor.py's ZkExecutor answers it (one ZkOpResult per op, in order)."""
        return tuple(self._execute(sid, op, batch.fence_version) for op in batch.ops)

    def _execute(self, sid: int, op: Any, fence: int) -> ZkOpResult:
        if isinstance(op, GetData | GetChildren | Exists):
            r = self.request(sid, op)
            if r.code != OK:
                return ZkOpResult(_executor_code(r.code))
            return ZkOpResult(OK, data=r.data, stat=r.stat.zstat() if r.stat else None, children=r.children)
        if isinstance(op, RegisterBroker):
            return self._register_broker(sid, op)
        if isinstance(op, Delete) and op.recursive:
            return self._delete_recursive(sid, op.path, fence)
        if isinstance(op, Multi):
            return self._executed_multi(sid, op.ops, fence)
        if isinstance(op, Create) and op.make_parents and fence >= 0:
            # Parents are structural and, as in Kafka's createRecursive, not fenced; the node itself is.
            for parent in self._missing_parents(op.path):
                if parent != "/":
                    self.request(sid, Create(parent, ""))
            return self._execute(sid, Create(op.path, op.data, op.ephemeral, op.sequential), fence)
        if fence >= 0 or isinstance(op, Check):
            # KafkaZkClient.wrapRequestWithControllerEpochCheck: multi [check(/controller_epoch, v), op]
            m = self._executed_multi(sid, (op,), fence)
            assert m.results is not None
            inner = m.results[0]
            return inner if inner.code in (OK, m.code) else ZkOpResult(m.code)
        r = self.request(sid, op)
        if r.code != OK:
            return ZkOpResult(_executor_code(r.code))
        return ZkOpResult(OK, path=r.path, stat=r.stat.zstat() if r.stat else None)

    def _executed_multi(self, sid: int, ops: tuple, fence: int) -> ZkOpResult:
        """ZkExecutor._multi: the fence check first if any; a failed check is CONTROLLER_MOVED (BADVERSION) or its
        own code, every inner op RUNTIMEINCONSISTENCY."""
        fenced = fence >= 0
        full = ((Check(paths.ControllerEpochZNode, fence),) if fenced else ()) + ops
        r = self.request(sid, Multi(full))
        if r.results is None:
            return ZkOpResult(_executor_code(r.code), results=tuple(ZkOpResult(_executor_code(r.code))
                                                                     for _ in ops))
        replies = r.results
        if fenced:
            check = replies[0]
            if check.code not in (OK, ROLLEDBACK):
                code = CONTROLLER_MOVED if check.code == BADVERSION else _executor_code(check.code)
                return ZkOpResult(code, results=tuple(ZkOpResult(RUNTIMEINCONSISTENCY) for _ in ops))
            replies = replies[1:]
        results = []
        for inner, reply in zip(ops, replies, strict=True):
            if reply.code != OK:
                results.append(ZkOpResult(_executor_code(reply.code)))
            elif isinstance(inner, Create):
                results.append(ZkOpResult(OK, path=reply.path))
            elif isinstance(inner, SetData):
                results.append(ZkOpResult(OK, stat=reply.stat.zstat() if reply.stat else None))
            else:
                results.append(ZkOpResult(OK))
        codes = [x.code for x in results if x.code != OK]
        specific = [c for c in codes if c != RUNTIMEINCONSISTENCY]
        return ZkOpResult((specific or codes or [OK])[0], results=tuple(results))

    def _delete_recursive(self, sid: int, path: str, fence: int) -> ZkOpResult:
        """KafkaZkClient.deleteRecursive: NONODE if absent; else the deepest nodes first, each delete fenced."""
        if path not in self.nodes:
            return ZkOpResult(NONODE)
        order: list[str] = []
        level = [path]
        while level:
            order = level + order
            level = [f"{p.rstrip('/')}/{c}" for p in level for c in sorted(self.nodes[p].children)]
        for p in order:
            r = self._execute(sid, Delete(p), fence)
            if r.code not in (OK, NONODE):
                return ZkOpResult(r.code)
        return ZkOpResult(OK)

    def _register_broker(self, sid: int, op: RegisterBroker, attempts: int = 3) -> ZkOpResult:
        """KafkaZkClient.registerBroker → checkedEphemeralCreate (KAFKA-7165), as ZkExecutor._register_broker."""
        r = self.request(sid, Multi((Create(op.path, "", ephemeral=True), SetData(op.path, op.data, 0))))
        if r.code == OK:
            assert r.results is not None
            stat = r.results[1].stat
            return ZkOpResult(OK, path=op.path, stat=stat.zstat() if stat else None)
        if r.code != NODEEXISTS:
            return ZkOpResult(_executor_code(r.code))
        got = self.request(sid, GetData(op.path))
        if got.code != OK:
            if got.code == NONODE and attempts > 0:
                return self._register_broker(sid, op, attempts - 1)
            return ZkOpResult(_executor_code(got.code))
        assert got.stat is not None
        owner = got.stat.ephemeral_owner
        if owner == sid:
            return ZkOpResult(OK, path=op.path, data=got.data, stat=got.stat.zstat())
        if owner in self.sessions[sid].earlier and attempts > 0:
            deleted = self.request(sid, Delete(op.path, got.stat.version))
            if deleted.code not in (OK, NONODE):
                return ZkOpResult(_executor_code(deleted.code))
            return self._register_broker(sid, op, attempts - 1)
        return ZkOpResult(NODEEXISTS)


def _executor_code(code: str) -> str:
    """zk_bridge.executor.result_code's view of a ZooKeeper code."""
    if code == ROLLEDBACK:
        return RUNTIMEINCONSISTENCY
    if code in (NOCHILDRENFOREPHEMERALS, BADARGUMENTS):
        return ERROR
    return code
