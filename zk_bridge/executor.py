"""ZkExecutor: runs a `ZkBatch` against ZooKeeper with kazoo, pipelined, and never blocks the caller.

This is the I/O half of Kafka's ``KafkaZkClient`` / ``ZooKeeperClient``: ``handleRequests`` pipelines a batch of
async requests and waits for them all; here the waiting is a callback instead, so the actor that asked never blocks.

Threads: ``submit`` returns at once. kazoo's connection thread sends the requests, its completion thread runs our
result callbacks, its callback thread runs watch callbacks, and session listeners run on the connection thread. Work
that needs kazoo's *synchronous* calls (recursive delete, parent creation) goes to a small thread pool of our own:
running it on a kazoo thread would stall (or deadlock) the very thread that must deliver its results.
"""

from __future__ import annotations

import ipaddress
import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from kazoo.client import KazooClient, TransactionRequest
from kazoo.exceptions import (
    AuthFailedError,
    BadVersionError,
    ConnectionClosedError,
    ConnectionLoss,
    NoAuthError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    RolledBackError,
    RuntimeInconsistency,
    SessionExpiredError,
    UnimplementedError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import EventType, KazooState, KeeperState, WatchedEvent, ZnodeStat
from kazoo.retry import KazooRetry
from kazoo.security import ACL, Id

from messages.zk import (
    BADVERSION,
    CONNECTIONLOSS,
    CONTROLLER_MOVED,
    ERROR,
    NOAUTH,
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
from zk_bridge.multi_read import multi_read_async
from zk_bridge.session import SessionState, on_connection_state

if TYPE_CHECKING:
    from core.security.jaas import ZkSaslLogin

log = logging.getLogger("kactor.zk")

BatchCallback = Callable[[tuple[ZkOpResult, ...]], None]
_Done = Callable[[ZkOpResult], None]

# ZkWatchEvent kinds, from kazoo's EventType.
WATCH_KINDS = {EventType.CREATED: "CREATED", EventType.DELETED: "DELETED", EventType.CHANGED: "CHANGED",
               EventType.CHILD: "CHILD"}


# Fenced writes of one ZkBatch sent per ZooKeeper transaction (see ZkExecutor._run_chunk). ZooKeeper's default
# jute.maxbuffer (1 MB) bounds a request; 64 partition-state writes are about 10 KB.
FENCED_CHUNK = 64
# Unfenced conditional setData ops of one ZkBatch sent per transaction: a leader's ISR updates (Kafka 2.6's
# conditionalUpdatePath, one per partition), FENCED_CHUNK of them per multi for the same reason as fenced writes.
SET_CHUNK = FENCED_CHUNK
# Watch-less reads of one ZkBatch sent per multiRead (zk_bridge/multi_read.py): 256 state znodes are about 40 KB
# of answer, far below jute.maxbuffer (rates: "async reads/s" vs "kazoo reads/s" in `kactor bench zk-bridge`).
READ_CHUNK = 256
# The op types a fenced multi may carry (ZkExecutor._chunkable).
_CHUNKABLE = (SetData, Delete, Create)


class ZooKeeperUnreachable(ConnectionError):  # noqa: N818 - the name others import
    """No ZooKeeper session could be established; the message is one line saying where and what to do."""


# -- result mapping --------------------------------------------------------------------------------------------------
def result_code(exc: BaseException) -> str:
    """Map a kazoo exception to a result code of messages.zk (KeeperException.Code names)."""
    if isinstance(exc, NoNodeError):
        return NONODE
    if isinstance(exc, NodeExistsError):
        return NODEEXISTS
    if isinstance(exc, BadVersionError):
        return BADVERSION
    if isinstance(exc, NotEmptyError):
        return NOTEMPTY
    if isinstance(exc, NoAuthError):
        return NOAUTH
    if isinstance(exc, ConnectionLoss):
        return CONNECTIONLOSS
    if isinstance(exc, SessionExpiredError | ConnectionClosedError):
        # A closed client has no session either: the caller must treat both as "session gone".
        return SESSIONEXPIRED
    if isinstance(exc, RolledBackError | RuntimeInconsistency):
        # The op itself was fine but its transaction failed elsewhere: nothing was applied.
        return RUNTIMEINCONSISTENCY
    return ERROR


def to_zstat(stat: ZnodeStat | None) -> ZStat | None:
    if stat is None:
        return None
    return ZStat(version=stat.version, czxid=stat.czxid, ephemeral_owner=stat.ephemeralOwner,
                 ctime=stat.ctime, num_children=stat.numChildren)


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8")


def _bytes(data: str | None) -> bytes | None:
    return None if data is None else data.encode("utf-8")


def _op_result(op: Any, value: Any) -> ZkOpResult:
    """One transaction slot's outcome (kazoo puts exceptions *in* the commit() list, it does not raise)."""
    if isinstance(value, BaseException):
        return ZkOpResult(result_code(value))
    if isinstance(op, Create):
        return ZkOpResult(OK, path=value)
    if isinstance(op, SetData):
        return ZkOpResult(OK, stat=to_zstat(value))
    return ZkOpResult(OK)


def kazoo_acls(acls: Sequence[paths.ZnodeAcl]) -> list[ACL]:
    """protocol.zk.paths' (perms, scheme, id) ACL entries as kazoo's."""
    return [ACL(perms, Id(scheme, ident)) for perms, scheme, ident in acls]


# The default ACL of a secure session (connect(set_acl=True)): what kazoo's own creates (a chroot, a recipe) get,
# and the mark ZkExecutor reads to create every znode with ZkData.defaultAcls.
SECURE_DEFAULT_ACL = kazoo_acls(paths.default_acls(True, "/"))


def is_secure(client: KazooClient) -> bool:
    """KafkaZkClient.isSecure of a session: connect(set_acl=True) opened it (its default ACL is SECURE_DEFAULT_ACL).
    A client made without it creates open znodes, as before zookeeper.set.acl existed."""
    return client.default_acl == SECURE_DEFAULT_ACL


def _first_failure(results: Sequence[ZkOpResult]) -> str:
    """A failed multi's code: the failing op's own code, not the rolled-back / inconsistent bystanders'."""
    codes = [r.code for r in results if r.code != OK]
    specific = [c for c in codes if c != RUNTIMEINCONSISTENCY]
    return (specific or codes or [OK])[0]


class _Gather:
    """Collects the results of one batch; calls the callback once, when the last result is in."""

    def __init__(self, n: int, callback: BatchCallback) -> None:
        self.results: list[ZkOpResult | None] = [None] * n
        self.remaining = n
        self.callback = callback
        self.lock = threading.Lock()

    def slot(self, i: int) -> _Done:
        def done(result: ZkOpResult) -> None:
            with self.lock:
                if self.results[i] is not None:  # a result arrives once; guard against a double completion
                    return
                self.results[i] = result
                self.remaining -= 1
                last = self.remaining == 0
            if last:
                self.fire()
        return done

    def put_many(self, indices: Sequence[int], results: Sequence[ZkOpResult]) -> None:
        """The results of a whole chunk at once (one lock, no closure per op); each slot is still filled once."""
        with self.lock:
            filled = 0
            slots = self.results
            for i, result in zip(indices, results, strict=True):
                if slots[i] is None:
                    slots[i] = result
                    filled += 1
            self.remaining -= filled
            last = filled > 0 and self.remaining == 0
        if last:
            self.fire()

    def fire(self) -> None:
        try:
            self.callback(tuple(r for r in self.results if r is not None))
        except Exception:  # noqa: BLE001 - a broken callback must not kill kazoo's completion thread
            log.exception("ZK batch callback failed")


class ZkExecutor:
    """Runs ZkBatches on a started KazooClient; reports watches and session changes through two hooks.

    ``on_watch(ZkWatchEvent)`` and ``on_session(ZkSessionEvent)`` are called from kazoo's threads: they must only
    hand the event over (e.g. Runtime.inject), never block.
    """

    def __init__(self, client: KazooClient, workers: int = 2) -> None:
        self.client = client
        self._secure = is_secure(client)
        self.on_watch: Callable[[ZkWatchEvent], None] = lambda event: None
        self.on_session: Callable[[ZkSessionEvent], None] = lambda event: None
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="zk-executor")
        self._closed = False
        self._connected = client.connected
        self._expired = False
        self._session = SessionState(connected=client.connected, session_id=self.session_id)
        self._retry: list[Callable[[], None]] = []
        # Every session id this client has had: a registration owned by an *earlier* one of ours is stale (KAFKA-7165).
        self._sessions: set[int] = set()
        self._note_session()
        # One callable for every watch: kazoo keeps watchers in a set per path, so re-arming a path many times before
        # it fires registers it once, and ZooKeeper's one notification becomes one event.
        self._watch_fn = self._on_kazoo_watch
        self._last_watch_event: WatchedEvent | None = None
        # The watches we armed, (path, "data" | "child") → what the arming read saw: (czxid, mzxid or pzxid), or
        # None for an exists-watch on a missing node. kazoo forgets every watch on a connection loss (it does not
        # re-send them as the Java client does), so after a reconnection within the same session we re-arm them
        # and report what changed meanwhile. This is the client's own bookkeeping (the Java client's ZKWatchManager),
        # not a routing table: who gets a fired watch is actors/zk_bridge_actor.WATCHERS, and which controller event
        # it becomes is core/controller/zk_watches.py.
        self._armed: dict[tuple[str, str], tuple[int, int] | None] = {}
        self._multi_read_ok = True
        client.add_listener(self._on_state)

    # -- public ---------------------------------------------------------------------------------------------------
    @property
    def session_id(self) -> int:
        cid = self.client.client_id
        return int(cid[0]) if cid else 0

    def submit(self, batch: ZkBatch, callback: BatchCallback) -> None:
        """KafkaZkClient.retryRequestsUntilConnected(requests) without the wait: issue every op now, pipelined,
        and call ``callback(results)`` (one ZkOpResult per op, in order) once all are in."""
        ops = tuple(batch.ops)
        gather = _Gather(len(ops), callback)
        if not ops:
            self._pool.submit(gather.fire)
            return
        fence = batch.fence_version
        if len({getattr(op, "path", None) for op in ops}) < len(ops):
            # Two ops on one path must keep their pipelined order, which a chunk's fallback could invert.
            for i, op in enumerate(ops):
                self._run(op, fence, gather.slot(i))
            return
        # Consecutive watch-less reads go as multiReads, consecutive fenced writes and consecutive unfenced setData
        # as multis; a chunk is sent before any op that follows it, so ZooKeeper still sees the ops in the batch's
        # order. A chunk is the ops' indices in the batch: its results go into the gather together.
        chunk: list[int] = []
        kind = ""
        limit = 0
        for i, op in enumerate(ops):
            op_kind = self._kind(op, fence)
            if chunk and (op_kind != kind or len(chunk) == limit):
                self._send_chunk(kind, ops, chunk, fence, gather)
                chunk = []
            if op_kind:
                if op_kind != kind:
                    kind = op_kind
                    limit = READ_CHUNK if kind == "read" else FENCED_CHUNK if kind == "write" else SET_CHUNK
                chunk.append(i)
            else:
                self._run(op, fence, gather.slot(i))
        if chunk:
            self._send_chunk(kind, ops, chunk, fence, gather)

    def _kind(self, op: Any, fence: int) -> str:
        """How ``op`` travels: "read" (in a multiRead), "write" (in a fenced multi), "set" (in an unfenced multi of
        setData), or "" (alone)."""
        if isinstance(op, GetData):
            return "read" if self._multi_read_ok and not op.watch else ""
        if fence >= 0:
            return "write" if self._chunkable(op) else ""
        return "set" if isinstance(op, SetData) else ""

    def _send_chunk(self, kind: str, ops: Sequence[Any], chunk: list[int], fence: int, gather: _Gather) -> None:
        if len(chunk) == 1:
            i = chunk[0]
            self._run(ops[i], fence, gather.slot(i))
        elif kind == "read":
            self._run_read_chunk(ops, chunk, fence, gather)
        else:
            self._run_chunk(ops, chunk, fence, gather)

    def close(self) -> None:
        """Stop listening; ops waiting for a reconnection are failed with SESSIONEXPIRED. The client is not ours."""
        with self._lock:
            self._closed = True
            pending, self._retry = self._retry, []
        self.client.remove_listener(self._on_state)
        for resend in pending:
            resend()
        self._pool.shutdown(wait=False)

    # -- fenced writes, many per transaction -----------------------------------------------------------------------
    @staticmethod
    def _chunkable(op: Any) -> bool:
        if type(op) is SetData:  # the controller's state writes: most of what comes here
            return True
        return (isinstance(op, _CHUNKABLE) and not getattr(op, "recursive", False)
                and not getattr(op, "make_parents", False))

    def _run_chunk(self, ops: Sequence[Any], chunk: list[int], fence: int, gather: _Gather) -> None:
        """Up to FENCED_CHUNK fenced writes as ONE multi [check(/controller_epoch), op1, op2, ...] instead of one multi
        per op: ZooKeeper then logs (and fsyncs) one transaction, and kazoo serialises one request, for the chunk.
        A single op, or a chunk whose transaction failed on one op, falls back to one multi per op, so each op still
        gets its own result exactly as if it had been sent alone (the failing op fails again, the others succeed).
        Measured by `kactor bench zk-bridge`: about 10× the write rate of one transaction per op.

        With ``fence`` < 0 the same is done for up to SET_CHUNK unfenced setData ops (a leader's ISR updates): ONE
        multi [setData1, setData2, ...] without the epoch check. A multi is all or nothing, so if one op's expected
        version is stale (BADVERSION) or its node is gone (NONODE) nothing of the chunk was applied, and each op is
        sent again on its own — a plain conditional setData, Kafka 2.6's conditionalUpdatePath — so a stale
        partition never blocks the others and every op gets exactly the result (new stat, or the failure) it would
        have got alone."""
        fenced = fence >= 0
        t = self.client.transaction()
        if fenced:
            t.check(paths.ControllerEpochZNode, fence)
        for i in chunk:
            self._add(t, ops[i])

        def committed(ar: Any) -> None:
            try:
                values = ar.get_nowait()
            except Exception as e:  # noqa: BLE001 - the whole request failed (connection, session)
                code = result_code(e)
                if code == CONNECTIONLOSS and not self._closed:
                    for i in chunk:  # each op re-sent on its own once reconnected, as _run does
                        done = gather.slot(i)
                        self._retry_when_connected(lambda op=ops[i], done=done: self._run(op, fence, done), done)
                else:
                    gather.put_many(chunk, [ZkOpResult(code)] * len(chunk))
                return
            if fenced:
                failed = self._check_failed(values[0])
                if failed is not None:  # another controller: every op is fenced off
                    gather.put_many(chunk, [failed] * len(chunk))
                    return
                values = values[1:]
            if not any(isinstance(v, BaseException) for v in values):
                gather.put_many(chunk, [_op_result(ops[i], v) for i, v in zip(chunk, values, strict=True)])
                return
            for i in chunk:  # one op failed and the rest rolled back: each on its own
                self._run(ops[i], fence, gather.slot(i))

        t.commit_async().rawlink(committed)

    # -- watch-less reads, many per request --------------------------------------------------------------------------
    def _run_read_chunk(self, ops: Sequence[Any], chunk: list[int], fence: int, gather: _Gather) -> None:
        """Up to READ_CHUNK getData ops as ONE multiRead (zk_bridge/multi_read.py): each op still gets its own
        result (data and stat, or NONODE). If the request fails as a whole each op is sent on its own, which also
        handles a lost connection (resent once reconnected); a server without multiRead (before 3.6) is asked the
        old way from then on."""

        def answered(ar: Any) -> None:
            try:
                values = ar.get_nowait()
            except Exception as e:  # noqa: BLE001 - the whole request failed
                if isinstance(e, UnimplementedError):
                    log.warning("ZooKeeper does not implement multiRead (3.6+): reading one znode per request")
                    self._multi_read_ok = False
                for i in chunk:
                    self._run(ops[i], fence, gather.slot(i))
                return
            gather.put_many(chunk, [ZkOpResult(result_code(v)) if isinstance(v, BaseException) else
                                    ZkOpResult(OK, data=_text(v[0]), stat=to_zstat(v[1])) for v in values])

        try:
            multi_read_async(self.client, [ops[i].path for i in chunk]).rawlink(answered)
        except Exception as e:  # noqa: BLE001 - e.g. the client is closed: each op reports it the usual way
            log.debug("multiRead not sent: %s", e)
            for i in chunk:
                self._run(ops[i], fence, gather.slot(i))

    # -- one op ---------------------------------------------------------------------------------------------------
    def _run(self, op: Any, fence: int, done: _Done) -> None:
        def finish(result: ZkOpResult) -> None:
            # KafkaZkClient re-queues requests that saw CONNECTIONLOSS and resends them once reconnected.
            if result.code == CONNECTIONLOSS and not self._closed:
                self._retry_when_connected(lambda: self._run(op, fence, done), done)
            else:
                done(result)

        try:
            self._dispatch(op, fence, finish)
        except Exception as e:  # noqa: BLE001 - bad arguments (kazoo raises TypeError/ValueError synchronously)
            log.warning("ZK op %r failed before it was sent: %s", op, e)
            finish(ZkOpResult(result_code(e)))

    def _dispatch(self, op: Any, fence: int, finish: _Done) -> None:
        fenced = fence >= 0
        if isinstance(op, GetData):
            def got(v: Any) -> ZkOpResult:
                self._armed_by(op, "data", (v[1].czxid, v[1].mzxid))
                return ZkOpResult(OK, data=_text(v[0]), stat=to_zstat(v[1]))
            self._link(self.client.get_async(op.path, watch=self._watch(op)), got, finish)
        elif isinstance(op, Exists):
            def exists(st: Any) -> ZkOpResult:
                self._armed_by(op, "data", (st.czxid, st.mzxid) if st is not None else None)
                return ZkOpResult(OK, stat=to_zstat(st)) if st is not None else ZkOpResult(NONODE)
            self._link(self.client.exists_async(op.path, watch=self._watch(op)), exists, finish)
        elif isinstance(op, GetChildren):
            def children(v: Any) -> ZkOpResult:
                self._armed_by(op, "child", (v[1].czxid, v[1].pzxid))
                return ZkOpResult(OK, children=tuple(sorted(v[0])), stat=to_zstat(v[1]))
            self._link(self.client.get_children_async(op.path, watch=self._watch(op), include_data=True),
                       children, finish)
        elif isinstance(op, RegisterBroker):
            self._register_broker(op, finish)
        elif isinstance(op, Delete) and op.recursive:
            self._pool.submit(self._in_pool, lambda: self._delete_recursive(op.path, fence), finish)
        elif isinstance(op, Create) and op.make_parents and (fenced or self._secure):
            # Parents are structural and, as in Kafka's createRecursive, not fenced; the node itself is.
            self._pool.submit(self._in_pool, lambda: self._create_parents_then_fenced(op, fence), finish)
        elif isinstance(op, Multi):
            self._multi(op, fence, finish)
        elif isinstance(op, Create | SetData | Delete | Check) and (fenced or isinstance(op, Check)):
            self._fenced(op, fence, finish)
        elif isinstance(op, Create):
            self._link(self.client.create_async(op.path, _bytes(op.data), acl=self._acl(op.path),
                                                ephemeral=op.ephemeral, sequence=op.sequential,
                                                makepath=op.make_parents, include_data=True),
                       lambda v: ZkOpResult(OK, path=v[0], stat=to_zstat(v[1])), finish)
        elif isinstance(op, SetData):
            self._link(self.client.set_async(op.path, op.data.encode("utf-8"), op.version),
                       lambda st: ZkOpResult(OK, stat=to_zstat(st)), finish)
        elif isinstance(op, Delete):
            self._link(self.client.delete_async(op.path, op.version), lambda _: ZkOpResult(OK), finish)
        else:
            raise TypeError(f"not a ZooKeeper op: {type(op).__name__}")

    def _watch(self, op: GetData | Exists | GetChildren) -> Callable[[WatchedEvent], None] | None:
        return self._watch_fn if op.watch else None

    def _armed_by(self, op: GetData | Exists | GetChildren, family: str,
                  snapshot: tuple[int, int] | None) -> None:
        if op.watch:
            with self._lock:
                self._armed[(op.path, family)] = snapshot

    @staticmethod
    def _link(async_result: Any, on_value: Callable[[Any], ZkOpResult], finish: _Done) -> None:
        def completed(ar: Any) -> None:
            try:
                value = ar.get_nowait()
            except Exception as e:  # noqa: BLE001 - kazoo reports every failure as an exception
                finish(ZkOpResult(result_code(e)))
                return
            try:
                result = on_value(value)
            except Exception:  # noqa: BLE001
                log.exception("could not convert a ZooKeeper result")
                result = ZkOpResult(ERROR)
            finish(result)

        async_result.rawlink(completed)

    def _in_pool(self, work: Callable[[], ZkOpResult], finish: _Done) -> None:
        try:
            result = work()
        except Exception as e:  # noqa: BLE001
            if result_code(e) == ERROR:
                log.exception("ZK worker op failed")
            result = ZkOpResult(result_code(e))
        finish(result)

    # -- transactions ---------------------------------------------------------------------------------------------
    def _add(self, t: TransactionRequest, op: Any) -> None:
        if isinstance(op, Create):
            if op.make_parents:
                raise ValueError(f"make_parents is not possible inside a transaction ({op.path})")
            # kazoo's transaction create wants bytes; ZooKeeper's "null data" becomes empty data.
            t.create(op.path, _bytes(op.data) or b"", acl=self._acl(op.path), ephemeral=op.ephemeral,
                     sequence=op.sequential)
        elif isinstance(op, SetData):
            t.set_data(op.path, op.data.encode("utf-8"), op.version)
        elif isinstance(op, Delete):
            if op.recursive:
                raise ValueError(f"a recursive delete is not possible inside a transaction ({op.path})")
            t.delete(op.path, op.version)
        elif isinstance(op, Check):
            t.check(op.path, op.version)
        else:
            raise TypeError(f"{type(op).__name__} cannot be part of a ZooKeeper transaction")

    @staticmethod
    def _check_failed(value: Any) -> ZkOpResult | None:
        """The epoch check's outcome: BADVERSION means another controller bumped /controller_epoch."""
        # RolledBackError: the check itself passed; the transaction failed on the op it guards.
        if not isinstance(value, BaseException) or isinstance(value, RolledBackError):
            return None
        if isinstance(value, BadVersionError):
            return ZkOpResult(CONTROLLER_MOVED)
        return ZkOpResult(result_code(value))

    def _fenced(self, op: Any, fence: int, finish: _Done) -> None:
        """KafkaZkClient's wrapRequestWithControllerEpochCheck: multi [check(/controller_epoch, v), op]."""
        t = self.client.transaction()
        if fence >= 0:
            t.check(paths.ControllerEpochZNode, fence)
        self._add(t, op)

        def convert(values: list[Any]) -> ZkOpResult:
            if fence >= 0:
                failed = self._check_failed(values[0])
                if failed is not None:
                    return failed
                values = values[1:]
            return _op_result(op, values[0])

        self._link(t.commit_async(), convert, finish)

    def _multi(self, op: Multi, fence: int, finish: _Done) -> None:
        """An atomic transaction; ``results`` has one ZkOpResult per inner op (the fence check is not shown)."""
        t = self.client.transaction()
        if fence >= 0:
            t.check(paths.ControllerEpochZNode, fence)
        for inner in op.ops:
            self._add(t, inner)

        def convert(values: list[Any]) -> ZkOpResult:
            if fence >= 0:
                failed = self._check_failed(values[0])
                if failed is not None:
                    return ZkOpResult(failed.code, results=tuple(ZkOpResult(RUNTIMEINCONSISTENCY) for _ in op.ops))
                values = values[1:]
            results = tuple(_op_result(inner, v) for inner, v in zip(op.ops, values, strict=True))
            return ZkOpResult(_first_failure(results), results=results)

        self._link(t.commit_async(), convert, finish)

    # -- ops that need synchronous kazoo calls (run in our pool) ----------------------------------------------------
    def _delete_one(self, path: str, fence: int) -> str:
        if fence < 0:
            try:
                self.client.delete(path)
            except NoNodeError:
                return NONODE
            return OK
        t = self.client.transaction()
        t.check(paths.ControllerEpochZNode, fence)
        t.delete(path)
        values = t.commit()
        failed = self._check_failed(values[0])
        if failed is not None:
            return failed.code
        return OK if not isinstance(values[1], BaseException) else result_code(values[1])

    def _delete_recursive(self, path: str, fence: int) -> ZkOpResult:
        """KafkaZkClient.deleteRecursive, pipelined: NONODE if ``path`` is absent; else the tree is read one level at
        a time (each level's getChildren pipelined), then deleted deepest level first, FENCED_CHUNK nodes per
        transaction [check(/controller_epoch, fence), delete, ...], every transaction in flight at once (ZooKeeper
        applies one session's requests in order, so children go before their parents). A failed fence is reported
        (CONTROLLER_MOVED); a transaction that failed for another reason (a node already gone, NONODE; a child created
        meanwhile, NOTEMPTY) was not applied at all, and its nodes are deleted one by one by _delete_recursive_slow.
        Instead of about four blocking round trips per partition, one per tree level and one for all deletes."""
        try:
            children = self.client.get_children(path)
        except NoNodeError:
            return ZkOpResult(NONODE)
        base = path.rstrip("/")
        levels: list[list[str]] = [[path]]
        frontier = [f"{base}/{c}" for c in children]
        while frontier:
            levels.append(frontier)
            pending = [(p, self.client.get_children_async(p)) for p in frontier]
            frontier = []
            for p, ar in pending:
                try:
                    frontier += [f"{p}/{c}" for c in ar.get()]
                except NoNodeError:  # deleted meanwhile: its own delete fails below and is retried one by one
                    pass
        order = [p for level in reversed(levels) for p in level]
        chunks = [order[i:i + FENCED_CHUNK] for i in range(0, len(order), FENCED_CHUNK)]
        commits = []
        for chunk in chunks:
            t = self.client.transaction()
            if fence >= 0:
                t.check(paths.ControllerEpochZNode, fence)
            for p in chunk:
                t.delete(p)
            commits.append(t.commit_async())
        retry: list[str] = []
        for chunk, ar in zip(chunks, commits, strict=True):
            values = ar.get()
            if fence >= 0:
                failed = self._check_failed(values[0])
                if failed is not None:
                    return failed
                values = values[1:]
            if any(isinstance(v, BaseException) for v in values):
                retry += chunk
        for p in retry:  # deepest first, as sent
            sub = self._delete_recursive_slow(p, fence)
            if sub.code not in (OK, NONODE):
                return sub
        return ZkOpResult(OK)

    def _delete_recursive_slow(self, path: str, fence: int) -> ZkOpResult:
        """KafkaZkClient.deleteRecursive, one blocking round trip per node: children first (each delete fenced), then
        the node; NONODE if absent."""
        try:
            children = self.client.get_children(path)
        except NoNodeError:
            return ZkOpResult(NONODE)
        for child in children:
            sub = self._delete_recursive_slow(f"{path.rstrip('/')}/{child}", fence)
            if sub.code not in (OK, NONODE):
                return sub
        code = self._delete_one(path, fence)
        # A concurrent delete of the node itself is fine: the goal (node gone) is reached.
        return ZkOpResult(OK if code == NONODE else code)

    def _acl(self, path: str) -> list[ACL] | None:
        """ZkData.defaultAcls of ``path`` for a secure session; None (kazoo's default: open) otherwise, so that an
        insecure session sends exactly what it sent before zookeeper.set.acl was applied."""
        return kazoo_acls(paths.default_acls(True, path)) if self._secure else None

    def _ensure_path(self, path: str) -> None:
        """ZooKeeperClient's createRecursive of ``path`` and its ancestors, kept if they exist. A secure session
        creates each one with its own defaultAcls, as Kafka's createRecursive does (kazoo's ensure_path would give
        every ancestor the leaf's ACL)."""
        if not self._secure:
            self.client.ensure_path(path)
            return
        parts = [p for p in path.split("/") if p]
        for i in range(1, len(parts) + 1):
            node = "/" + "/".join(parts[:i])
            if self.client.exists(node) is None:
                try:
                    self.client.create(node, acl=self._acl(node))
                except NodeExistsError:
                    pass

    def _create_parents_then_fenced(self, op: Create, fence: int) -> ZkOpResult:
        """A make_parents create: its parents (not fenced), then the node itself (fenced unless ``fence`` < 0)."""
        parent = paths.parent(op.path)
        if parent != "/":
            self._ensure_path(parent)
        if fence < 0:
            created, stat = self.client.create(op.path, _bytes(op.data), acl=self._acl(op.path),
                                               ephemeral=op.ephemeral, sequence=op.sequential, include_data=True)
            return ZkOpResult(OK, path=created, stat=to_zstat(stat))
        t = self.client.transaction()
        t.check(paths.ControllerEpochZNode, fence)
        self._add(t, Create(op.path, op.data, op.ephemeral, op.sequential))
        values = t.commit()
        failed = self._check_failed(values[0])
        return failed if failed is not None else _op_result(op, values[1])

    # -- broker registration --------------------------------------------------------------------------------------
    def _register_broker(self, op: RegisterBroker, finish: _Done, attempts: int = 3) -> None:
        """KafkaZkClient.registerBroker → checkedEphemeralCreate (KAFKA-7165): multi {create ephemeral, setData v0};
        on NODEEXISTS read the owner: our current session → reuse; an earlier session of ours → delete and retry;
        another session → NODEEXISTS. The result's stat.czxid is the broker epoch."""
        t = self.client.transaction()
        t.create(op.path, b"", acl=self._acl(op.path), ephemeral=True)
        t.set_data(op.path, op.data.encode("utf-8"), 0)

        def created(values: list[Any]) -> None:
            first, second = values[0], values[1]
            if not isinstance(first, BaseException) and not isinstance(second, BaseException):
                finish(ZkOpResult(OK, path=op.path, stat=to_zstat(second)))
            elif isinstance(first, NodeExistsError):
                self._link(self.client.get_async(op.path), lambda v: v, after_exists)  # type: ignore[arg-type]
            else:
                bad = first if isinstance(first, BaseException) else second
                finish(ZkOpResult(result_code(bad)))

        def after_exists(value: Any) -> None:
            if isinstance(value, ZkOpResult):  # the read failed
                if value.code == NONODE and attempts > 0:  # it went away meanwhile: create again
                    self._register_broker(op, finish, attempts - 1)
                else:
                    finish(value)
                return
            data, stat = value
            owner = stat.ephemeralOwner
            if owner == self.session_id:
                finish(ZkOpResult(OK, path=op.path, data=_text(data), stat=to_zstat(stat)))
            elif owner in self._sessions and attempts > 0:
                self._link(self.client.delete_async(op.path, stat.version), lambda _: ZkOpResult(OK),
                           lambda r: self._register_broker(op, finish, attempts - 1)
                           if r.code in (OK, NONODE) else finish(r))
            else:
                log.error("broker registration %s exists, owned by session 0x%x (ours is 0x%x)",
                          op.path, owner, self.session_id)
                finish(ZkOpResult(NODEEXISTS))

        def on_commit(ar: Any) -> None:
            try:
                created(ar.get_nowait())
            except Exception as e:  # noqa: BLE001
                finish(ZkOpResult(result_code(e)))

        t.commit_async().rawlink(on_commit)

    # -- retries on connection loss -------------------------------------------------------------------------------
    def _retry_when_connected(self, resend: Callable[[], None], done: _Done) -> None:
        with self._lock:
            if self._closed or self._expired:
                now: Callable[[], None] | None = lambda: done(ZkOpResult(SESSIONEXPIRED))  # noqa: E731
            elif self._connected:
                now = resend
            else:
                # Kept until the state listener sees CONNECTED; if the session expires first, it fails instead.
                self._retry.append(lambda: self._resend_or_fail(resend, done))
                now = None
        if now is not None:
            self._pool.submit(now)

    def _resend_or_fail(self, resend: Callable[[], None], done: _Done) -> None:
        if self._closed or self._expired:
            done(ZkOpResult(SESSIONEXPIRED))
        else:
            resend()

    # -- watches and session --------------------------------------------------------------------------------------
    def _on_kazoo_watch(self, event: WatchedEvent) -> None:
        # kazoo calls each watcher of a path with the same event object (a DELETED reaches data and child watchers
        # alike); ZooKeeper sent one notification, so report one.
        if event is self._last_watch_event:
            return
        self._last_watch_event = event
        kind = WATCH_KINDS.get(event.type)
        if kind is None or event.path is None:
            # EventType.NONE: kazoo dropped its watchers on a connection loss; _rearm restores them.
            return
        with self._lock:
            families = {"CHILD": ("child",), "DELETED": ("data", "child")}.get(kind, ("data",))
            for family in families:
                self._armed.pop((event.path, family), None)
        self._emit_watch(event.path, kind)

    def _emit_watch(self, path: str, kind: str) -> None:
        try:
            self.on_watch(ZkWatchEvent(path, kind))
        except Exception:  # noqa: BLE001
            log.exception("on_watch hook failed")

    def _rearm(self) -> None:
        """After a reconnection in the same session: arm every watch again and report what changed while kazoo
        had none (the Java client would have re-sent them with SetWatches and ZooKeeper would have fired them)."""
        with self._lock:
            armed = dict(self._armed)
        for (path, family), before in armed.items():
            if family == "data":
                self.client.exists_async(path, watch=self._watch_fn).rawlink(
                    lambda ar, p=path, b=before: self._rearmed_data(p, b, ar))
            else:
                self.client.get_children_async(path, watch=self._watch_fn, include_data=True).rawlink(
                    lambda ar, p=path, b=before: self._rearmed_child(p, b, ar))

    def _rearmed_data(self, path: str, before: tuple[int, int] | None, ar: Any) -> None:
        try:
            stat = ar.get_nowait()
        except Exception:  # noqa: BLE001 - lost again: the next reconnection re-arms it
            return
        now = (stat.czxid, stat.mzxid) if stat is not None else None
        with self._lock:
            self._armed[(path, "data")] = now
        if before == now:
            return
        if before is None:
            self._emit_watch(path, "CREATED")
        elif now is None or now[0] != before[0]:
            self._emit_watch(path, "DELETED")  # gone, or deleted and re-created meanwhile
        else:
            self._emit_watch(path, "CHANGED")

    def _rearmed_child(self, path: str, before: tuple[int, int] | None, ar: Any) -> None:
        try:
            _, stat = ar.get_nowait()
        except NoNodeError:
            with self._lock:
                self._armed.pop((path, "child"), None)
            self._emit_watch(path, "DELETED")
            return
        except Exception:  # noqa: BLE001
            return
        now = (stat.czxid, stat.pzxid)
        with self._lock:
            self._armed[(path, "child")] = now
        if before is not None and now[0] != before[0]:
            self._emit_watch(path, "DELETED")
        elif before != now:
            self._emit_watch(path, "CHILD")

    def _note_session(self) -> None:
        sid = self.session_id
        if sid:
            self._sessions.add(sid)

    def _on_state(self, state: str) -> None:
        """kazoo's connection listener (runs on kazoo's connection thread: hand over, never block). The decision is
        zk_bridge/session.py's (Kafka's ZooKeeperClientWatcher); here it is applied."""
        if self._closed:
            return
        pending: list[Callable[[], None]] = []
        with self._lock:
            step = on_connection_state(self._session, str(state), self.session_id, self.client._stopped.is_set())
            self._session = step.state
            self._connected, self._expired = step.state.connected, step.state.expired
            if step.state.connected:
                self._note_session()
            if step.fail:
                self._armed.clear()  # a new session starts with no watches; subscribers re-read on REESTABLISHED
            if step.rearm:
                pending.append(self._rearm)
            if step.resend or step.fail:
                # Each waiting op re-sends itself, or (the session expired) fails with SESSIONEXPIRED.
                pending, self._retry = pending + self._retry, []
            event = None if step.event is None else ZkSessionEvent(step.event, step.state.session_id)
        for job in pending:
            self._pool.submit(job)
        if event is not None:
            try:
                self.on_session(event)
            except Exception:  # noqa: BLE001
                log.exception("on_session hook failed")


# -- connecting ------------------------------------------------------------------------------------------------------
def split_connect_string(connect_string: str) -> tuple[str, str]:
    """``h1:p1,h2:p2/chroot`` → (``h1:p1,h2:p2``, ``/chroot``); the chroot is '' when absent."""
    hosts, sep, chroot = connect_string.partition("/")
    return hosts, (f"/{chroot}".rstrip("/") if sep else "")


def _check_loopback(hosts: str) -> None:
    for hp in hosts.split(","):
        host = hp.strip().rsplit(":", 1)[0].strip("[]")
        if host == "localhost":
            continue
        try:
            if ipaddress.ip_address(host).is_loopback:
                continue
        except ValueError:
            pass
        raise ZooKeeperUnreachable(f"ZooKeeper address {hp!r} is not a loopback address (only 127.0.0.1 is "
                                  "allowed unless remote ZooKeeper servers are explicitly allowed)")


# kazoo's default reconnection backoff doubles up to an hour: after a few seconds without a serving ZooKeeper (an
# ensemble electing a leader, a restart) its next attempt can come later than the session timeout, and a session
# that was still alive expires. Java's ClientCnxn (Kafka's client) waits a random 0-1 s before each new attempt;
# so does this policy (0.1 s doubling, never more than 1 s, jittered), retrying forever as Kafka does.
RECONNECT_MAX_DELAY_S = 1.0
# how a session that found no server within zookeeper.connection.timeout.ms is reported (a broker's last line then):
# LocalCluster tells by it a broker that gave up on a ZooKeeper slow to start from one that failed
UNREACHABLE = "cannot reach ZooKeeper at"


def reconnect_policy() -> KazooRetry:
    """How a client re-connects after losing its server: forever, at most RECONNECT_MAX_DELAY_S apart."""
    return KazooRetry(max_tries=-1, delay=0.1, backoff=2, max_delay=RECONNECT_MAX_DELAY_S)


def session_options(digest: str | None, set_acl: bool, sasl: ZkSaslLogin | None = None) -> dict[str, Any]:
    """KazooClient's arguments for ZooKeeper security (KafkaServer.initZkClient's isSecure): ``sasl`` (Kafka's way: a
    JAAS ``Client`` section's DigestLoginModule, core.security.jaas) logs the session in with SASL DIGEST-MD5, its
    identity ``sasl:<username>``; ``digest`` (``user:password``, kactor's addition) adds ZooKeeper's digest identity.
    Both given, the session has both identities, so CREATOR_ALL_ACL gives both every right to what it creates, and it
    can still write the znodes an earlier digest-only run created. ``set_acl`` makes it create every znode with
    ZkData.defaultAcls (`is_secure`). Neither login: no arguments, an open session as before."""
    options: dict[str, Any] = {}
    if sasl is not None:
        options["sasl_options"] = sasl.kazoo_sasl_options()
    if digest:
        options["auth_data"] = [("digest", digest)]
    if set_acl:
        if not digest and sasl is None:
            raise ValueError("zookeeper.set.acl needs credentials: a znode created for no identity is nobody's")
        options["default_acl"] = SECURE_DEFAULT_ACL
    return options


def start_session(client: KazooClient, timeout_s: float, sasl: bool) -> None:
    """``client.start``, then the outcome of its SASL login (ZooKeeperClient.waitUntilConnected's AuthFailed check).

    kazoo reports the session connected before its SASL exchange, so one round trip after it says whether ZooKeeper
    took the login. A refused login may also close the session before ``start`` looks at it, and ``start`` then
    calls that a time-out: the session's states are watched, so that a refusal is always AuthFailedError.
    """
    refused = threading.Event()

    def watch(_state: KazooState) -> None:
        # kazoo sets client_state before it calls the listeners
        if client.client_state == KeeperState.AUTH_FAILED:
            refused.set()

    client.add_listener(watch)
    try:
        client.start(timeout=timeout_s)
        if sasl:
            client.exists("/")
    except KazooTimeoutError:
        if refused.is_set():
            raise AuthFailedError("Auth failed while waiting for connection") from None
        raise
    finally:
        client.remove_listener(watch)


def _start(hosts: str, timeout_s: float, connect_timeout_s: float, what: str,
           security: dict[str, Any] | None = None) -> KazooClient:
    client = KazooClient(hosts=hosts, timeout=timeout_s, connection_retry=reconnect_policy(), **(security or {}))
    try:
        start_session(client, connect_timeout_s, sasl=bool(security and "sasl_options" in security))
    except KazooTimeoutError:
        # kazoo keeps retrying in the background after a failed start(): stop it, or its thread lingers.
        client.stop()
        client.close()
        raise ZooKeeperUnreachable(
            f"{UNREACHABLE} {what} within {connect_timeout_s:g}s: is it running? "
            "(start one with `kactor zookeeper`)") from None
    except AuthFailedError:
        client.stop()
        client.close()
        user = security["sasl_options"]["username"] if security else ""
        raise ZooKeeperUnreachable(
            f"ZooKeeper at {what} refused the SASL login of {user!r} (Auth failed either before or while waiting "
            "for connection): check the JAAS Client section's username and password against the ZooKeeper "
            "server's, and that the server runs SASLAuthenticationProvider") from None
    return client


def connect(connect_string: str, session_timeout_ms: int = 18000, connect_timeout_s: float = 10.0,
            allow_remote: bool = False, digest: str | None = None, set_acl: bool = False,
            sasl: ZkSaslLogin | None = None) -> KazooClient:
    """Open a session (KafkaZkClient.apply + ZooKeeperClient.waitUntilConnected), creating a missing chroot first,
    as Kafka's broker does at startup. Loopback addresses only unless the user configured otherwise
    (``allow_remote``: a ZooKeeper ensemble on other machines). Default session timeout is Kafka 2.6's 18 s.
    ``digest``, ``sasl`` and ``set_acl``: `session_options` (a secure session creates its chroot with defaultAcls
    too, as KafkaServer.createChrootIfNecessary does)."""
    hosts, chroot = split_connect_string(connect_string)
    if not allow_remote:
        _check_loopback(hosts)
    timeout_s = session_timeout_ms / 1000.0
    security = session_options(digest, set_acl, sasl)
    if chroot:
        root = _start(hosts, timeout_s, connect_timeout_s, connect_string, security)
        try:
            root.ensure_path(chroot)
        finally:
            root.stop()
            root.close()
    return _start(connect_string, timeout_s, connect_timeout_s, connect_string, security)
