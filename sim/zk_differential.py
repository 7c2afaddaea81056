"""The ZooKeeper model's differential test: the same seeded random request sequences on sim.zookeeper and on a real
ZooKeeper server (through kazoo, as the ZkExecutor talks to it) must give the same results and watch events.

A sequence: 2-3 sessions, 30 requests over a small path space (creates of every mode, sets / deletes with the
right, a wrong and no version, multis that succeed and fail, reads that arm watches, a session closed). Compared:
each reply's code, data, created path, children (sorted), Stat (version, cversion, aversion, dataLength,
numChildren, the ephemeral owner as a session index, czxid/mzxid/pzxid as their rank among the sequence's zxids),
each multi's per-op results, and every session's watch events in the order kazoo delivered them. The model sees the
sequence's subtree as its root ("/").

    python -m sim.zk_differential --sequences 1000 [--seed 0] [--steps 30] [--jobs 4] [--zookeeper HOST:PORT]

starts a real ZooKeeper (zk_bridge.server.EmbeddedZooKeeper) unless one is given, and exits non-zero on the first
disagreement, printing the seed, the sequence and both sides.
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import attrs
from kazoo.client import KazooClient
from kazoo.exceptions import (
    BadArgumentsError,
    BadVersionError,
    ConnectionClosedError,
    NoChildrenForEphemeralsError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    RolledBackError,
    RuntimeInconsistency,
    SessionExpiredError,
)
from kazoo.protocol.states import Callback, EventType, WatchedEvent, ZnodeStat

from messages.zk import (
    BADVERSION,
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
    SetData,
    ZkWatchEvent,
)
from sim.zookeeper import BADARGUMENTS, NOCHILDRENFOREPHEMERALS, ROLLEDBACK, Reply, Stat, ZooKeeperModel

PATHS = ("/a", "/b", "/a/x", "/a/y", "/b/x", "/a/x/z", "/c/d")
NAMES = ("a", "b", "x", "e1", "e2", "e3", "e4")
SEQUENTIAL = ("/a/q-", "/q-", "/b/x/q-")
DATA = (None, "", "d", "data-2")
KINDS = {EventType.CREATED: "CREATED", EventType.DELETED: "DELETED", EventType.CHANGED: "CHANGED",
         EventType.CHILD: "CHILD"}
CLOSE = "close"


@attrs.frozen
class Step:
    session: int
    op: Any  # a messages.zk op, or CLOSE


@attrs.frozen
class Outcome:
    replies: tuple[Reply, ...]
    events: tuple[tuple[ZkWatchEvent, ...], ...]  # per session
    owners: dict[int, int]  # session id -> session index


# -- generation (driven by the model, so "the right version" is known) -----------------------------------------------
def generate(seed: int, steps: int = 30, chroot: str = "") -> tuple[list[Step], Outcome]:
    """A random sequence and the model's outcome of it."""
    rng = random.Random(seed)
    zk = ZooKeeperModel(chroot=chroot)
    n_sessions = rng.choice((2, 3))
    sids = [zk.open_session() for _ in range(n_sessions)]
    closed: set[int] = set()
    sequence: list[Step] = []
    replies: list[Reply] = []

    def some_path() -> str:
        """Mostly an existing node (reads and writes that succeed, watches that fire)."""
        existing = sorted(zk.nodes)
        roll = rng.random()
        if roll < 0.1:
            return "/"
        if roll < 0.75 and len(existing) > 1:
            return rng.choice(existing[1:])
        return new_path()

    def new_path() -> str:
        """Mostly a child of an existing node: creates that succeed, parents with children."""
        if rng.random() < 0.8:
            parent = rng.choice(sorted(zk.nodes))
            return f"{parent.rstrip('/')}/{rng.choice(NAMES)}"
        return rng.choice(PATHS)

    def version_for(path: str) -> int:
        node = zk.nodes.get(path)
        right = node.version if node is not None else 0
        return rng.choice((-1, right, right, right + 1))

    def write() -> Any:
        roll = rng.random()
        if roll < 0.45:
            sequential = rng.random() < 0.25
            path = rng.choice(SEQUENTIAL) if sequential else new_path()
            return Create(path, rng.choice(DATA), ephemeral=rng.random() < 0.4, sequential=sequential)
        if roll < 0.7:
            path = some_path()
            return SetData(path, rng.choice(DATA) or "v", version_for(path))
        if roll < 0.9:
            path = some_path()
            if path == "/":  # the sequence's root is a plain node on the server
                path = new_path()
            return Delete(path, version_for(path))
        path = some_path()
        return Check(path, version_for(path))

    for _ in range(steps):
        live = [i for i in range(n_sessions) if i not in closed]
        i = rng.choice(live)
        roll = rng.random()
        if roll < 0.04 and len(live) > 1:
            sequence.append(Step(i, CLOSE))
            zk.close_session(sids[i])
            closed.add(i)
            continue
        if roll < 0.35:
            kind = rng.choice((GetData, GetChildren, Exists))
            op: Any = kind(some_path(), watch=rng.random() < 0.8)
        elif roll < 0.5:
            op = Multi(tuple(write() for _ in range(rng.randint(1, 4))))
        else:
            op = write()
            if isinstance(op, Check):
                op = Multi((op,))
            elif isinstance(op, Create) and rng.random() < 0.1:
                op = attrs.evolve(op, make_parents=True)
        sequence.append(Step(i, op))
        replies.append(zk.request(sids[i], op))
    # the end: the session owning most ephemerals closes (ZooKeeper deletes them in its HashSet order)
    live = [i for i in range(n_sessions) if i not in closed]
    if len(live) > 1:
        i = max(live, key=lambda j: (len(zk.sessions[sids[j]].ephemerals), j))
        for j in live:  # the others watch its ephemerals: the order of their deletion shows
            for path in sorted(zk.sessions[sids[i]].ephemerals) if j != i else ():
                sequence.append(Step(j, Exists(path, watch=True)))
                replies.append(zk.request(sids[j], sequence[-1].op))
        sequence.append(Step(i, CLOSE))
        zk.close_session(sids[i])
    events = tuple(tuple(e for e in zk.events(sid) if isinstance(e, ZkWatchEvent)) for sid in sids)
    return sequence, Outcome(tuple(replies), events, {sid: i for i, sid in enumerate(sids)})


# -- the real server ----------------------------------------------------------------------------------------------
def _code(exc: BaseException) -> str:
    for kind, code in ((NoNodeError, NONODE), (NodeExistsError, NODEEXISTS), (BadVersionError, BADVERSION),
                       (NotEmptyError, NOTEMPTY), (NoChildrenForEphemeralsError, NOCHILDRENFOREPHEMERALS),
                       (RolledBackError, ROLLEDBACK), (RuntimeInconsistency, RUNTIMEINCONSISTENCY),
                       (BadArgumentsError, BADARGUMENTS), (SessionExpiredError, SESSIONEXPIRED),
                       (ConnectionClosedError, SESSIONEXPIRED)):
        if isinstance(exc, kind):
            return code
    return f"ERROR:{type(exc).__name__}"


def _stat(st: ZnodeStat | None) -> Stat | None:
    if st is None:
        return None
    return Stat(st.czxid, st.mzxid, st.ctime, st.mtime, st.version, st.cversion, st.aversion, st.ephemeralOwner,
                st.dataLength, st.numChildren, st.pzxid)


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8")


def _bytes(data: str | None) -> bytes | None:
    return None if data is None else data.encode("utf-8")


class _Session:
    """One kazoo client, recording the watch events it delivers under the current sequence's ``base``."""

    def __init__(self, hosts: str) -> None:
        self.base = ""
        self.events: list[ZkWatchEvent] = []
        self._last: WatchedEvent | None = None
        self.client = KazooClient(hosts=hosts, timeout=10.0)
        self.client.start(timeout=15)
        self.session_id = self.client.client_id[0]
        self.closed = False

    def watch(self, event: WatchedEvent) -> None:
        # kazoo calls a path's data and child watchers with the one event object ZooKeeper sent (a NodeDeleted)
        if event is self._last or event.type not in KINDS or not event.path.startswith(self.base):
            return
        self._last = event
        path = event.path[len(self.base):] or "/"
        self.events.append(ZkWatchEvent(path, KINDS[event.type]))

    def settle(self) -> None:
        """Wait until every event ZooKeeper sent before now has been delivered: a round trip (events precede later
        responses), then a marker through kazoo's callback queue (it runs callbacks in order)."""
        if self.closed:
            return
        self.client.exists("/")
        done = threading.Event()
        self.client.handler.dispatch_callback(Callback("watch", done.set, ()))
        if not done.wait(10):
            raise TimeoutError("kazoo's callback queue did not drain")

    def close(self) -> None:
        if not self.closed:
            self.settle()
            self.closed = True
            self.client.stop()
            self.client.close()


class SessionPool:
    """Sessions kept open between sequences (a sequence's subtree is never touched again, so its watches never fire
    later); a session a sequence closes is a new one. About twice as fast as new sessions every time."""

    def __init__(self, hosts: str) -> None:
        self.hosts = hosts
        self._idle: list[_Session] = []
        self._lock = threading.Lock()

    def take(self, n: int, base: str, closing: set[int]) -> list[_Session]:
        """``n`` sessions; those at the indexes in ``closing`` are new: a session closing with ephemerals of earlier
        sequences would have ZooKeeper delete them too, in an order that depends on all of them."""
        reused = n - len(closing)
        with self._lock:
            idle, self._idle = self._idle[:reused], self._idle[reused:]
        idle += [_Session(self.hosts) for _ in range(reused - len(idle))]
        taken = [_Session(self.hosts) if i in closing else idle.pop() for i in range(n)]
        for s in taken:
            s.base, s.events, s._last = base, [], None
        return taken

    def give_back(self, sessions: list[_Session]) -> None:
        with self._lock:
            self._idle += [s for s in sessions if not s.closed]

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for s in idle:
            s.closed = True
            s.client.stop()
            s.client.close()


def run_real(pool: SessionPool, base: str, n_sessions: int, sequence: list[Step]) -> Outcome:
    """Run ``sequence`` with sessions of ``pool`` under ``base``."""
    sessions = pool.take(n_sessions, base, {s.session for s in sequence if s.op == CLOSE})
    try:
        sessions[0].client.create(base, None)  # the model's root holds no data
        replies = [_request(sessions[s.session], s.op) if s.op != CLOSE else sessions[s.session].close()
                   for s in sequence]
        for s in sessions:
            s.settle()
        owners = {s.session_id: i for i, s in enumerate(sessions)}
        return Outcome(tuple(r for r in replies if r is not None), tuple(tuple(s.events) for s in sessions),
                       owners)
    finally:
        pool.give_back(sessions)


def _request(session: _Session, op: Any) -> Reply:
    c, base = session.client, session.base
    watch = session.watch if getattr(op, "watch", False) else None

    def full(path: str) -> str:
        return base + path if path != "/" else base

    def rel(path: str) -> str:
        return path[len(base):] or "/"

    try:
        if isinstance(op, GetData):
            data, st = c.get(full(op.path), watch=watch)
            return Reply(OK, data=_text(data), stat=_stat(st))
        if isinstance(op, GetChildren):
            children, st = c.get_children(full(op.path), watch=watch, include_data=True)
            return Reply(OK, children=tuple(sorted(children)), stat=_stat(st))
        if isinstance(op, Exists):
            st = c.exists(full(op.path), watch=watch)
            return Reply(OK, stat=_stat(st)) if st is not None else Reply(NONODE)
        if isinstance(op, Create):
            path, st = c.create(full(op.path), _bytes(op.data), ephemeral=op.ephemeral, sequence=op.sequential,
                                makepath=op.make_parents, include_data=True)
            return Reply(OK, path=rel(path), stat=_stat(st))
        if isinstance(op, SetData):
            return Reply(OK, stat=_stat(c.set(full(op.path), op.data.encode("utf-8"), op.version)))
        if isinstance(op, Delete):
            c.delete(full(op.path), op.version)
            return Reply(OK)
        if isinstance(op, Multi):
            t = c.transaction()
            for inner in op.ops:
                if isinstance(inner, Create):
                    t.create(full(inner.path), _bytes(inner.data) or b"", ephemeral=inner.ephemeral,
                             sequence=inner.sequential)
                elif isinstance(inner, SetData):
                    t.set_data(full(inner.path), inner.data.encode("utf-8"), inner.version)
                elif isinstance(inner, Delete):
                    t.delete(full(inner.path), inner.version)
                else:
                    t.check(full(inner.path), inner.version)
            values = t.commit()
            results = tuple(_inner(v, rel) for v in values)
            failed = [r.code for r in results if r.code not in (OK, ROLLEDBACK, RUNTIMEINCONSISTENCY)]
            return Reply(failed[0] if failed else OK, results=results)
    except Exception as e:  # noqa: BLE001 - kazoo reports every failure as an exception
        return Reply(_code(e))
    raise TypeError(f"not an op: {op!r}")


def _inner(value: Any, rel: Callable[[str], str]) -> Reply:
    if isinstance(value, BaseException):
        return Reply(_code(value))
    if isinstance(value, str):
        return Reply(OK, path=rel(value))
    if isinstance(value, ZnodeStat):
        return Reply(OK, stat=_stat(value))
    return Reply(OK)


# -- comparison -------------------------------------------------------------------------------------------------------
def normalise(outcome: Outcome) -> tuple:
    """What must agree: zxids as ranks, ephemeral owners as session indexes, ctime/mtime dropped."""
    zxids: set[int] = set()

    def collect(r: Reply) -> None:
        if r.stat is not None:
            zxids.update((r.stat.czxid, r.stat.mzxid, r.stat.pzxid))
        for inner in r.results or ():
            collect(inner)

    for r in outcome.replies:
        collect(r)
    rank = {z: i for i, z in enumerate(sorted(zxids))}

    def norm(r: Reply) -> tuple:
        st = r.stat
        stat = None if st is None else (
            rank[st.czxid], rank[st.mzxid], rank[st.pzxid], st.version, st.cversion, st.aversion,
            outcome.owners.get(st.ephemeral_owner, st.ephemeral_owner), st.data_length, st.num_children)
        return (r.code, r.data, r.path, r.children, stat,
                None if r.results is None else tuple(norm(x) for x in r.results))

    return tuple(norm(r) for r in outcome.replies), outcome.events


def check_sequence(pool: SessionPool, seed: int, steps: int = 30) -> str | None:
    """Run sequence ``seed`` on both; None if they agree, else a report of the first disagreement."""
    base = f"/s{seed}-{uuid.uuid4().hex[:8]}"
    chroot = pool.hosts.partition("/")[2]
    server_base = (f"/{chroot}" if chroot else "") + base
    sequence, expected = generate(seed, steps, chroot=server_base)
    n_sessions = len(expected.events)
    actual = run_real(pool, base, n_sessions, sequence)
    (model_replies, model_events), (real_replies, real_events) = normalise(expected), normalise(actual)
    if model_replies == real_replies and model_events == real_events:
        return None
    lines = [f"seed {seed}: the model and ZooKeeper disagree"]
    for i, (step, m, r) in enumerate(zip([s for s in sequence if s.op != CLOSE], model_replies, real_replies,
                                         strict=True)):
        mark = "  " if m == r else "!!"
        lines.append(f"{mark} {i:2} s{step.session} {step.op}\n      model {m}\n      real  {r}")
    for s in range(n_sessions):
        if model_events[s] != real_events[s]:
            lines.append(f"!! session {s} events\n      model {model_events[s]}\n      real  {real_events[s]}")
    closes = [f"s{s.session} closed after {sum(1 for x in sequence[:k] if x.op != CLOSE)} requests"
              for k, s in enumerate(sequence) if s.op == CLOSE]
    lines += closes
    return "\n".join(lines)


def run(hosts: str, sequences: int, first_seed: int = 0, steps: int = 30, jobs: int = 4,
        say: Callable[[str], None] = print) -> tuple[int, str | None]:
    """Check seeds first_seed .. first_seed+sequences-1, ``jobs`` sequences at a time (each has its own sessions and
    subtree; zxids compare by rank, so the others' txns in between do not matter). Returns (how many agreed, the
    report of the lowest disagreeing seed or None)."""
    agreed = 0
    sessions = SessionPool(hosts)
    try:
        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="zk-differential") as workers:
            for k, report in enumerate(workers.map(lambda seed: check_sequence(sessions, seed, steps),
                                                   range(first_seed, first_seed + sequences))):
                if report is not None:
                    workers.shutdown(wait=True, cancel_futures=True)
                    return agreed, report
                agreed += 1
                if (k + 1) % 100 == 0:
                    say(f"{k + 1} sequences agree")
        return agreed, None
    finally:
        sessions.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.zk_differential", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sequences", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0, help="the first seed")
    parser.add_argument("--steps", type=int, default=30, help="requests per sequence")
    parser.add_argument("--jobs", type=int, default=4, help="sequences run at once")
    parser.add_argument("--zookeeper", help="HOST:PORT of a running server (default: start one)")
    args = parser.parse_args(argv)
    server = None
    hosts = args.zookeeper
    if hosts is None:
        from zk_bridge.server import EmbeddedZooKeeper
        server = EmbeddedZooKeeper(tick_ms=200).start(timeout=60)
        hosts = server.connect_string
    try:
        root = KazooClient(hosts=hosts)
        root.start(timeout=15)
        chroot = f"/zk-differential-{uuid.uuid4().hex[:8]}"
        root.ensure_path(chroot)
        root.stop()
        root.close()
        start = time.monotonic()
        agreed, report = run(hosts + chroot, args.sequences, args.seed, args.steps, args.jobs)
        took = time.monotonic() - start
    finally:
        if server is not None:
            server.stop()
    if report is not None:
        print(report)
        print(f"{agreed} sequences agreed before seed {args.seed + agreed} disagreed ({took:.1f} s)")
        return 1
    print(f"{agreed} sequences (seeds {args.seed}-{args.seed + agreed - 1}, {args.steps} requests each): the model "
          f"and ZooKeeper agree ({took:.1f} s, {1000 * took / max(agreed, 1):.0f} ms a sequence)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
