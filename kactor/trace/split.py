"""Replay one broker process's trace split into units smaller than the process, each checked exactly on its own.

`kactor trace replay --jobs N` used to hand out whole broker chains (`replay_many`), so the largest broker's trace
bounded the wall time. Here a chain is cut by actor: a *unit* replays some of the process's actors, is fed every
message they received from outside the unit (from the trace), and checks every message they sent, byte for byte,
against the recorded line. The units of a broker are:

- the partition shards (``partition-<i>``), in groups (2 × the processes, `plan_chain`): a shard owns its partitions'
  logs (LogManager with ``owns``), and its only state is its ReplicaManager;
- the replica manager (``replica-manager``), which splits requests over the shards and merges their answers;
- the rest (controller, its channels, coordinators, ``zk``, ``metrics``, ...), small in every recording;
- ``net`` and ``timer`` belong to every unit: in a replay they have no edge, so their handlers do nothing and keep no
  state (actors/network_actor.py, actors/timer_actor.py), and a message to them is delivered in its sender's unit.

Why a unit alone reproduces what the whole process does (docs/trace-format.md, "A broker cut by actor"):

- **Order.** simpleSystemBase delivers one FIFO, so seq order is delivery order, and every message an actor sends while
  handling seq ``c`` carries ``cause: c`` and is queued behind the earlier causes' messages: the ``k``-th message
  sent while handling ``c`` is the ``k``-th recorded line whose cause is ``c`` (an ActorFailed, recorded at once as
  ``c + 1``, aside). A unit gives each message its actors send that seq, compares it with that line there and then,
  and delivers the ones for its own actors in seq order, merged with the fed lines, which carry their recorded seq,
  ts and cause: its actors see exactly the messages, seqs and instants they saw in the process. A message sent
  beyond the recorded ones is compared with the line the whole replay would compare it with (the seq after every
  line its cause's place in the FIFO comes after); fewer messages than recorded is the first missing line.
- **State.** Actors share nothing but messages, except what is listed here. Disk: each shard reads only its own
  partitions' dirs and its own entries of the dir-wide checkpoints and clean-shutdown marker, so a chain is split
  only while the shard count is the same in every incarnation, and never when a header's ``disk`` changes files
  byte by byte (a simulated power loss cuts the shared checkpoint files at offsets the whole broker wrote). Actor
  names: `has_actor`/`address` of a child another unit creates (a shard outside the replica manager's unit, a channel
  outside the controller's) cannot be answered, and make the chain unsplittable.
- **Bytes.** A line that is not an input holds bytes over 64 as their summary (messages/codec/summary.py). The replica
  manager may be fed summaries: it only splits requests and merges answers (core/api/*.py ``split``/``merge``), and a
  summary encodes back to the same text. A shard's ShardRequest is fed with the produced bytes themselves, found by
  size and CRC-32C among the same file's inputs (the produce request that brought them). Any other fed line with a
  summary (a coordinator reading its log, LocalReply) makes the chain unsplittable.

Whatever a unit cannot replay alone (`UnsplittableError`, found when planning or while replaying) makes its chain
replay whole, as `replay_chain` does; the result is then the same as without the split, only slower.
"""

from __future__ import annotations

import base64
import collections
import gc
import heapq
import itertools
import json
import logging
import os
import re
import shutil
import time
from collections.abc import Callable
from typing import Any

import attrs

from actors import names
from actors.clock import ManualClock
from actors.edge_slots import Edges
from actors.runtime import Runtime
from edges.log_dirs import RecordedLogDirs
from kactor.trace.inline_system import InlineActorSystem
from kactor.trace.reader import Record, TraceError, bytes_file, ensure_registered
from kactor.trace.replay import (
    _FIELDS,
    _GC_YOUNG,
    _NAMING_PATHS,
    Divergence,
    ReplayResult,
    _as_record,
    _parse,
    _read_lines,
    _recorded_append_failures,
    _rewrite_input,
    _scratch_dir,
    _seq_of,
    _unmap,
    in_forks,
    replay_chain,
)
from messages.codec import CodecError, encode_record_bytes, from_json

log = logging.getLogger("kactor.trace")

REST = "rest"  # the unit of every actor that is neither a shard nor the replica manager
SINKS = frozenset((names.NET, names.TIMER))  # no edge in a replay: nothing done, nothing kept
_LINE = re.compile(rb'\{"seq":\d+,"ts":[^,]+,"sender":"([^"\\]*(?:\\.[^"\\]*)*)",'
                   rb'"receiver":"([^"\\]*(?:\\.[^"\\]*)*)","type":"([^"\\]*)"')
_REC = b'"@rec"'
_BIN_REF = re.compile(rb'\{"@bin":\{"offset":(\d+),"size":(\d+)\}\}')
_B64 = re.compile(rb'\{"@b64":"([A-Za-z0-9+/]*={0,2})"\}')
_INF = float("inf")


class UnsplittableError(Exception):
    """This chain cannot be replayed in units (the reason says why); it is replayed whole."""


def unit_key(name: str) -> str:
    """The unit an actor belongs to (a sink belongs to all: see the module's docstring)."""
    if name.startswith(names.SHARD_PREFIX) or name == names.REPLICA_MANAGER:
        return name
    return REST


def _text(raw: bytes) -> str:
    return raw.decode() if b"\\" not in raw else json.loads(b'"' + raw + b'"')


@attrs.define(slots=True, eq=False)
class _Scan:
    """One trace file as a unit needs it: every line's sender, receiver and cause read from its fixed key order, the
    recorded messages each cause sent (their seqs), and the unit each line is sent from and fed to."""

    path: str
    header: dict[str, Any]
    texts: list[bytes]
    flags: list[bytes]
    span: float
    senders: list[str]
    receivers: list[str]
    causes: list[int | None]
    from_key: list[str | None]  # the unit that sends line i (None: an input)
    to_key: list[str | None]  # the unit fed line i if another sent it (None: a sink's, delivered where it is sent)
    children: dict[int, list[int]]  # cause → seqs of the messages its handler sent, in order
    direct: dict[int, list[int]]  # cause → seqs of what its handler recorded at once (ActorFailed)
    upto: list[int]  # upto[c]: the largest seq of a non-input line whose cause is c or less (0: none)
    marked: dict[bytes, frozenset[int]]  # a text → the lines holding it (summaries, the recorded log dirs)
    work: dict[str, int]  # unit key → lines it compares or is fed (the scheduler's size)
    shards: int | None = None  # the ReplicaManagerInit's shard count (None: none in this file)
    log_dirs: tuple[str, ...] = ()
    refused: frozenset[tuple[int, int]] | None = None  # _recorded_append_failures, once per file
    by_size: dict[int, list[tuple[Any, ...]]] | None = None  # the inputs' bytes over 64, by size (`_bytes_of`)
    resolved: dict[tuple[int, int], Any] = attrs.Factory(dict)  # (size, crc32c) → the JSON of those bytes
    _joined: tuple[bytes, list[int]] | None = None  # the lines as one text, and where each starts

    def after(self, cause: int) -> int:
        """The seq a message queued behind everything ``cause``'s handler sent takes in the process's FIFO."""
        return 1 + max(cause, self.upto[min(cause, len(self.upto) - 1)])

    def lines_with(self, text: bytes) -> frozenset[int]:
        """The indices of the lines holding ``text``, found in the file's bytes at once (few lines hold it)."""
        found = self.marked.get(text)
        if found is None:
            import bisect

            if self._joined is None:
                self._joined = (b"".join(self.texts), list(itertools.accumulate(map(len, self.texts), initial=0)))
            data, starts = self._joined
            hits = set()
            at = data.find(text)
            while at >= 0:
                hits.add(bisect.bisect_right(starts, at) - 1)
                at = data.find(text, at + 1)
            found = self.marked[text] = frozenset(hits)
        return found


def scan(path: str, until: int | None = None) -> _Scan:
    """Read ``path`` (up to seq ``until``) and index it for the units; `UnsplittableError` when a rule of the module's
    docstring rules the file out."""
    header, texts, flags, span = _read_lines(path)
    if until is not None:
        texts, flags = texts[:max(0, until)], flags[:max(0, until)]
    if header.get("disk") is not None:
        raise UnsplittableError(f"{path}: its header's disk changes the log dir's shared files byte by byte")
    n = len(texts)
    matches = list(map(_LINE.match, texts))
    if None in matches:
        raise UnsplittableError(f"{path}:{matches.index(None) + 2}: a line not in the writer's key order")
    # seq i + 1 on line i is what the writer writes; a file that breaks it diverges where it does, split or not
    if n and (_seq_of(texts[0]) != 1 or _seq_of(texts[-1]) != n):
        raise UnsplittableError(f"{path}: seqs not 1, 2, 3, ... in file order")
    groups = [m.groups() for m in matches]
    text_of = {raw: _text(raw) for raw in {raw for g in groups for raw in g[:2]}}  # a name's bytes → its str
    senders = [text_of[g[0]] for g in groups]
    receivers = [text_of[g[1]] for g in groups]
    causes = [None if t.endswith(b"null}\n") else int(t[t.rindex(b":") + 1:-2]) for t in texts]
    key_of = {name: unit_key(name) for name in text_of.values()}
    from_key = [None if f else key_of[x] for f, x in zip(flags, senders, strict=True)]
    # an input to a sink is fed to the rest; a message to a sink is delivered in its sender's unit
    to_key = [(REST if f else None) if r in SINKS else key_of[r] for f, r in zip(flags, receivers, strict=True)]
    children: dict[int, list[int]] = {}
    direct: dict[int, list[int]] = {}
    top = [0] * (n + 2)
    for i in itertools.compress(range(n), (not f for f in flags)):
        cause, sender = causes[i], senders[i]
        if cause is None:
            raise UnsplittableError(f"{path}:{i + 2}: {sender} sent a message outside any handler")
        if sender in SINKS:
            raise UnsplittableError(f"{path}:{i + 2}: {sender} sent a message (it has no edge in a replay)")
        top[cause] = i + 1  # seqs grow: the last one seen is the largest
        if sender == receivers[i] and groups[i][2] == b"ActorFailed":
            direct.setdefault(cause, []).append(i + 1)
        else:
            children.setdefault(cause, []).append(i + 1)
    for c in range(1, len(top)):
        if top[c] < top[c - 1]:
            top[c] = top[c - 1]
    work = collections.Counter(k for k in from_key if k is not None)
    work.update(k for k, f in zip(to_key, from_key, strict=True) if k is not None and k != f)
    s = _Scan(path, header, texts, flags, span, senders, receivers, causes, from_key, to_key, children, direct, top,
              {}, dict(work))
    for i in s.lines_with(_REC):
        receiver, key = receivers[i], to_key[i]
        if from_key[i] is not None and key is not None and key != from_key[i] and not (
                receiver == names.REPLICA_MANAGER or (key != REST and groups[i][2] == b"ShardRequest")):
            raise UnsplittableError(f"{path}:{i + 2}: {receiver} would be fed summarised bytes "
                                    f"({groups[i][2].decode()})")
    rm_init = next((i for i in s.lines_with(b'"type":"ReplicaManagerInit"') if flags[i]), None)
    if rm_init is not None:
        ensure_registered()
        init = from_json(_parse(path, texts[rm_init], rm_init + 2)["payload"])
        s.shards, s.log_dirs = max(1, init.partition_actors), tuple(init.log_dirs)
    return s


@attrs.frozen
class Unit:
    """Some actors of one broker's chain (``keys``: `unit_key`s), or the whole chain (``keys`` empty)."""

    chain: tuple[str, ...]
    keys: frozenset[str]
    work: int

    @property
    def label(self) -> str:
        name = os.path.basename(self.chain[0]).removesuffix(".jsonl")
        return f"{name}:{'+'.join(sorted(self.keys)) if self.keys else 'whole'}"


_SCANS: dict[tuple[str, int | None], _Scan] = {}  # read once by the planner; forked workers inherit them


def _scan_of(path: str, until: int | None) -> _Scan:
    key = (path, until)
    s = _SCANS.get(key)
    if s is None:
        # without the collector: the scan's lists hold no cycle, and a full collection over the set-up's objects
        # (prepare) took more instructions than the scan itself (cachegrind, bench.replay_speed's broker-0)
        enabled = gc.isenabled()
        gc.disable()
        try:
            s = _SCANS[key] = scan(path, until)
        finally:
            if enabled:
                gc.enable()
    return s


SPLIT_COST = 1.4
"""CPU of a chain replayed in units over the same chain replayed whole (bench.replay_speed's recording: 1.3-1.45x
in instructions and CPU time, docs/performance-log.md): a unit decodes what the others send it (the replica manager's
ShardRequests, the shards' ShardReplys), where the whole replay only encodes them, and the chain is scanned first.
On two cores a cut therefore pays only for a chain of more than about 60 % of the work."""
WORTH = 0.85
"""A cut is made only if the estimated wall time falls below this share of the time without it: the estimate leaves
out the plan's scan in this process and each process's own warm-up, and sizes in bytes are a rough measure of work."""


def _makespan(sizes: list[float], split: set[int], jobs: int) -> float:
    """The wall time (in size units) of replaying chains of ``sizes`` on ``jobs`` processes, the largest whole chain
    first, those in ``split`` cut into units small enough to fill the processes evenly, at SPLIT_COST times their
    size."""
    loads = [0.0] * jobs
    for size in sorted((s for i, s in enumerate(sizes) if i not in split), reverse=True):
        loads[loads.index(min(loads))] += size
    loads.sort()
    filler = SPLIT_COST * sum(sizes[i] for i in split)
    level = loads[0]
    for k in range(1, jobs + 1):  # raise the k lowest loads together until they meet the next one
        top = loads[k] if k < jobs else float("inf")
        if filler <= (top - level) * k:
            level += filler / k
            break
        filler -= (top - level) * k
        level = top
    return max(level, loads[-1])


def chains_to_split(sizes: list[float], jobs: int) -> set[int]:
    """Which chains to cut into units: greedily the one that shortens the estimated wall time most, while it does to
    below WORTH of it (cutting costs CPU: SPLIT_COST). Many chains already balance: more than 64 are never cut."""
    split: set[int] = set()
    if jobs <= 1 or len(sizes) > 64:
        return split
    best = _makespan(sizes, split, jobs)
    while True:
        tries = [(_makespan(sizes, split | {i}, jobs), i) for i in range(len(sizes)) if i not in split]
        if not tries:
            return split
        m, i = min(tries)
        if m >= best * WORTH:
            return split
        best = m
        split.add(i)


def plan_chain(chain: list[str], until: int | None = None, groups: int = 0) -> list[Unit]:
    """The units of one broker's chain (`until` applies to its last file): the rest, the replica manager, and its
    shards in ``groups`` units (0: one each); or the whole chain as one unit, with the reason logged at debug level,
    when it cannot be split. A unit's ``work`` is its share of the chain's bytes, by the lines it compares or is fed,
    times SPLIT_COST: comparable with a whole chain's bytes."""
    size = sum(os.path.getsize(p) for p in chain)
    try:
        scans = [_scan_of(p, until if i == len(chain) - 1 else None) for i, p in enumerate(chain)]
        shapes = {(s.shards, len(s.log_dirs)) for s in scans if s.shards is not None}
        if len(shapes) > 1:
            raise UnsplittableError(f"{chain[0]}: the shard count or the number of log dirs changes between "
                                    "incarnations")
    except UnsplittableError as e:
        log.debug("replayed whole: %s", e)
        return [Unit(tuple(chain), frozenset(), size)]
    work: dict[str, int] = {}
    for s in scans:
        for k, w in s.work.items():
            work[k] = work.get(k, 0) + w
    if not work:  # no record at all: nothing to cut
        return [Unit(tuple(chain), frozenset(), size)]
    total = sum(work.values())
    shards = sorted((k for k in work if k.startswith(names.SHARD_PREFIX)), key=lambda k: -work[k])
    bins: list[list[str]] = [[k] for k in work if k not in shards]
    n = len(shards) if groups <= 0 else min(groups, len(shards))
    if n:
        shard_bins: list[list[str]] = [[] for _ in range(n)]
        for k in shards:  # the largest first, each to the lightest group
            min(shard_bins, key=lambda b: sum(work[x] for x in b)).append(k)
        bins += shard_bins
    units = [Unit(tuple(chain), frozenset(b), int(SPLIT_COST * size * sum(work[k] for k in b) / total))
             for b in bins]
    return sorted(units, key=lambda u: -u.work)


def plan(paths: list[str], until: int | None = None, jobs: int = 1, split: str = "auto") -> list[Unit]:
    """The units replaying ``paths`` on ``jobs`` processes, the largest first. ``split``: ``auto`` cuts the chains
    `chains_to_split` picks, ``actors`` every chain, ``brokers`` none (each chain one unit, as `replay_many`)."""
    from kactor.trace.reader import broker_chains

    chains = broker_chains(paths)
    sizes = [float(sum(os.path.getsize(p) for p in c)) for c in chains]
    cut = set(range(len(chains))) if split == "actors" else set() if split == "brokers" else \
        chains_to_split(sizes, jobs)
    units: list[Unit] = []
    for i, chain in enumerate(chains):
        units += plan_chain(chain, until, groups=2 * jobs) if i in cut else \
            [Unit(tuple(chain), frozenset(), int(sizes[i]))]
    return sorted(units, key=lambda u: -u.work)


class _UnitRuntime(Runtime):
    """A Runtime that knows each actor's name from its address (a sent message names its receiver in the trace) and
    refuses to answer for a child another unit creates."""

    def __init__(self, state: _UnitReplay, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.state = state
        self.name_of: dict[Any, str] = {}

    def spawn(self, actor_class: type, name: str) -> Any:
        addr = super().spawn(actor_class, name)
        self.name_of[addr.ref] = name
        return addr

    def register(self, name: str, addr: Any) -> None:
        super().register(name, addr)
        self.name_of[addr.ref] = name

    def _unknown(self, name: str) -> bool:
        if name in self._addresses or self.state.member(name):
            return False
        for prefix, creator in names.CHILD_CREATORS:
            if name.startswith(prefix) and not self.state.member(creator):
                self.state.refuse(f"{name} is created by {creator}, outside the unit")
                return True
        return False

    def address(self, name: str) -> Any:
        addr = self._addresses.get(name)
        if addr is not None:
            return addr
        self._unknown(name)
        return super().address(name)

    def has_actor(self, name: str) -> bool:
        if name in self._addresses:
            return True
        self._unknown(name)
        return super().has_actor(name)


class _UnitSystem(InlineActorSystem):
    """InlineActorSystem whose queue is the unit's (`_UnitReplay.append`): sends go through it, in seq order."""

    def __init__(self, state: _UnitReplay) -> None:
        super().__init__()
        self._queue = state  # type: ignore[assignment]
        self.state = state

    def tell(self, to: Any, msg: Any) -> None:
        """Runtime.spawn's ActorInit, outside any delivery: handled at once, as simpleSystemBase's tell does."""
        if not self.state.closed:
            self._run_one(to.ref, msg, self._external, 0)

    def shutdown(self) -> None:
        self.state.heap.clear()


class _UnitReplay:
    """One unit replaying one trace file (see the module's docstring)."""

    def __init__(self, s: _Scan, keys: frozenset[str], scratch: str, check: bool,
                 tamper: Callable[[Record, Any], Any] | None) -> None:
        self.s = s
        self.keys = keys
        self.scratch = scratch
        self.check = check
        self.tamper = tamper
        self.n = len(s.texts)
        version = s.header.get("trace_version")
        self.encode: Callable[..., bytes] = encode_record_bytes if version not in (1, 2) else \
            (lambda *a: encode_record_bytes(*a, summarise=False))
        self.heap: list[tuple[Any, ...]] = []
        self.counter = itertools.count()
        self.posted: dict[int, int] = {}
        self.matched = bytearray(self.n)
        self.compared = 0
        self.divergence: Divergence | None = None
        self.limit: float = _INF  # after a divergence at seq D: only what comes before D is still delivered
        self.error: BaseException | None = None
        self.refused: str | None = None
        self.closed = False
        self.cause: int | None = None  # the seq being delivered (None: a lifecycle message, or none)
        self.position = 0  # the seq the message being delivered comes before (lifecycle messages)
        self.paths: dict[bytes, bytes] = {}  # scratch log-dir path → recorded one, JSON-escaped (as _Check's)
        self.dirs_seen: dict[str, str] = {}
        self.fed_paths: list[tuple[bytes, bytes]] = []  # recorded → scratch, for fed lines that name a log dir
        self.path_lines: frozenset[int] = frozenset()  # the lines that name one
        if s.log_dirs:
            dirs = tuple(f"{scratch}/log-dir-{i}" for i in range(len(s.log_dirs)))
            pairs = {}
            for d, o in zip(dirs, s.log_dirs, strict=True):
                for form in (o, os.path.abspath(o)):
                    pairs[json.dumps(form)[1:-1].encode()] = json.dumps(d)[1:-1].encode()
            self.fed_paths = sorted(pairs.items(), key=lambda kv: -len(kv[0]))
            self.path_lines = frozenset().union(*(s.lines_with(recorded) for recorded in pairs))
            # as _rewrite_input maps them for the replica manager: a produced line naming a scratch dir is compared
            # with the recorded dir in its place
            self.paths = {json.dumps(d)[1:-1].encode(): json.dumps(o)[1:-1].encode()
                          for d, o in zip(dirs, s.log_dirs, strict=True)}
        self.rec_lines = s.lines_with(_REC)
        self.inputs = 0
        self.members: dict[str, bool] = {}
        self.rt = _UnitRuntime(self, str(s.header.get("process", "replay")),
                               clock=ManualClock(float(s.header.get("started_ms", 0))),
                               actor_system=_UnitSystem(self))
        self.clock: ManualClock = self.rt.clock  # type: ignore[assignment]
        self.rt.observer = self.observe

    # -- membership --------------------------------------------------------------------------------------------------
    def member(self, name: str) -> bool:
        found = self.members.get(name)
        if found is None:
            found = self.members[name] = name in SINKS or unit_key(name) in self.keys
        return found

    def refuse(self, reason: str) -> None:
        if self.refused is None:
            self.refused = reason

    # -- the comparison ----------------------------------------------------------------------------------------------
    def _compare(self, seq: int, ts: float, sender: str, receiver: str, body: Any, cause: int | None) -> bool:
        """The line the whole replay would write at ``seq`` against the recorded one (as _Check.observe)."""
        if not self.check:
            return True
        expected = self.s.texts[seq - 1]
        try:
            actual = self.encode(seq, ts, sender, receiver, body, cause)
            if actual != expected and self.paths:
                actual = _unmap(actual, self.paths)
            if actual == expected:
                self.matched[seq - 1] = 1
                self.compared += 1
                return True
            exp = _parse(self.s.path, expected, seq + 1)
            act = json.loads(actual)
            field = next((f for f in _FIELDS if exp.get(f) != act.get(f)), "encoding")
            self._diverged(Divergence(seq, field, exp, act))
        except Exception as e:  # noqa: BLE001 - raised by the replay, outside the actors
            if self.error is None:
                self.error = e
            self.limit = -1
        return False

    def _diverged(self, d: Divergence) -> None:
        if self.divergence is None or d.seq < self.divergence.seq:
            self.divergence = d
        self.limit = min(self.limit, d.seq)

    def _missing(self, seq: int) -> None:
        if self.check:
            exp = _parse(self.s.path, self.s.texts[seq - 1], seq + 1)
            self._diverged(Divergence(seq, "missing", exp, None))

    def observe(self, seq: int, ts: float, sender: str, receiver: str, body: Any, cause: int | None) -> None:
        """The runtime's record hook: only what an actor recorded at once (ActorFailed) is compared here; a sent
        message was compared when it was sent, and a fed line is another unit's (or an input)."""
        if seq <= self.n and not self.matched[seq - 1] and seq != self.cause and self.member(sender):
            self._compare(seq, ts, sender, receiver, body, cause)

    # -- the queue ---------------------------------------------------------------------------------------------------
    def append(self, item: tuple[Any, Any, Any, int]) -> None:
        """What an actor sends (thespian's ``actor_send``, the system's lifecycle messages and retries)."""
        if self.closed:
            return
        to, msg, sender, attempts = item
        if attempts:
            self.refuse("a handler raised into the actor system (a retry)")
            return
        if msg.__class__ is not tuple:
            # a lifecycle message (ActorInit of a child, ActorExitRequest): behind what is queued, before the next
            # message sent
            cause = self.cause
            if cause is None:
                at = self.position
            else:
                k, ch = self.posted.get(cause, 0), self.s.children.get(cause, ())
                at = ch[k] if k < len(ch) else self.s.after(cause)
            heapq.heappush(self.heap, (at, -1, next(self.counter), to, msg, sender, self.clock.now_ms()))
            return
        body, from_name, cause = msg
        if cause is None or cause != self.cause:
            self.refuse(f"{from_name} sent {type(body).__name__} outside its handler")
            return
        to_name = self.rt.name_of.get(to)
        if to_name is None:
            self.refuse(f"{from_name} sent {type(body).__name__} to an actor with no name")
            return
        k = self.posted.get(cause, 0)
        self.posted[cause] = k + 1
        ch = self.s.children.get(cause, ())
        ts = self.clock.now_ms()
        if k >= len(ch):  # more than was recorded: compared with the line the whole replay would compare it with
            at = self.s.after(cause)
            if at <= self.n:
                self._compare(at, ts, from_name, to_name, body, cause)
            return
        seq = ch[k]
        if self._compare(seq, ts, from_name, to_name, body, cause) and self.member(to_name):
            heapq.heappush(self.heap, (seq, 0, next(self.counter), to, msg, sender, ts))

    # -- delivery ----------------------------------------------------------------------------------------------------
    def _deliver(self, ref: Any, msg: Any, sender: Any, seq: int, ts: float) -> None:
        inst = ref.instance
        if inst is None:
            self.refuse(f"seq {seq} is for an actor that has stopped")
            return
        self.clock.set(ts)
        self.rt.seq = seq - 1
        self.cause = seq
        try:
            inst._receive(msg, sender.address)
        except Exception:  # noqa: BLE001 - thespian would retry it
            self.refuse(f"the handler of seq {seq} raised into the actor system")
        self.cause = None
        ch = self.s.children.get(seq)
        if ch is not None and self.posted.get(seq, 0) < len(ch):
            self._missing(ch[self.posted.get(seq, 0)])
        if self.s.direct:
            for d in self.s.direct.get(seq, ()):
                if not self.matched[d - 1]:
                    self._missing(d)

    def _lifecycle(self, at: int, ref: Any, msg: Any, sender: Any, ts: float) -> None:
        self.clock.set(ts)
        self.position = at
        self.system._run_one(ref, msg, sender, 0)

    @property
    def system(self) -> _UnitSystem:
        return self.rt.asys  # type: ignore[no-any-return]

    def _feed(self, i: int) -> None:
        """Deliver line ``i`` as the whole replay delivered it: an input (tampered, log dirs rewritten) or what an
        actor of another unit sent (log dirs rewritten, a shard's produced bytes found again)."""
        s = self.s
        text = s.texts[i]
        seq = i + 1
        external = bool(s.flags[i])
        if not external and i in self.path_lines:
            for recorded, scratch in self.fed_paths:
                if recorded in text:
                    text = text.replace(recorded, scratch)
        d = _parse(s.path, text, i + 2)
        payload = d.get("payload")
        if not external and i in self.rec_lines and s.receivers[i] != names.REPLICA_MANAGER:
            payload = self._resolve(payload)
        try:
            body = from_json(payload)
        except CodecError as e:
            raise TraceError(f"{s.path}:{i + 2}: {e}") from None
        except KeyError:
            raise TraceError(f"{s.path}:{i + 2}: corrupt trace line (KeyError: 'payload')") from None
        if external:
            if body.__class__ in _NAMING_PATHS:
                body = _rewrite_input(body, self.scratch, self.paths, self.dirs_seen)
            if self.tamper is not None:
                body = self.tamper(_as_record(d, i + 2), body)
        receiver = s.receivers[i]
        addr = self.rt._addresses.get(receiver)
        if addr is None:
            if not (receiver.startswith(names.SHARD_PREFIX) and type(body).__name__ == "ShardInit"):
                self.refuse(f"seq {seq} is for {receiver}, which this unit did not create")
                return
            # created by the replica manager, which sends it ShardInit at once (its on_start sends nothing)
            from actors.partition_actor import PartitionActor
            from messages.runtime import ActorInit

            addr = self.system._new_actor(self.system._system, PartitionActor, None)
            self.rt.register(receiver, addr)
            self.system._run_one(addr.ref, ActorInit(receiver, self.rt.key), self.system._external, 0)
        elif not external and type(body).__name__ == "ShardInit":
            self.refuse(f"seq {seq}: a second ShardInit for {receiver}")
            return
        self._deliver(addr.ref, (body, s.senders[i], s.causes[i]), self.system._external, seq, float(d["ts"]))

    def _resolve(self, payload: Any) -> Any:
        """``payload`` with each summary replaced by the bytes it summarises, as they came in (an input's)."""
        if payload.__class__ is dict:
            inner = payload.get("@rec")
            if inner is not None and len(payload) == 1:
                return self._bytes_of(inner)
            return {k: self._resolve(v) for k, v in payload.items()}
        if payload.__class__ is list:
            return [self._resolve(v) for v in payload]
        return payload

    def _bytes_of(self, summary: dict[str, Any]) -> Any:
        from crc32c import crc32c

        from messages.codec import rawbytes

        s = self.s
        if s.by_size is None:
            # every bytes value over 64 of this file's inputs, by size: where a produced batch came in
            by_size: dict[int, list[tuple[Any, ...]]] = {}
            for i in itertools.compress(range(self.n), s.flags):
                text = s.texts[i]
                if b'"@b' not in text:
                    continue
                for m in _BIN_REF.finditer(text):
                    by_size.setdefault(int(m.group(2)), []).append(("bin", int(m.group(1)), int(m.group(2))))
                for m in _B64.finditer(text):
                    raw = m.group(1)
                    size = len(raw) * 3 // 4 - raw.count(b"=")
                    if size > 64:
                        by_size.setdefault(size, []).append(("b64", raw))
            s.by_size = by_size
        key = (summary.get("size"), summary.get("crc32c"))
        found = s.resolved.get(key)  # type: ignore[arg-type]
        if found is None:
            for cand in s.by_size.get(key[0], ()):  # type: ignore[arg-type]
                if cand[0] == "bin":
                    ref = rawbytes.raw_json(cand[1], cand[2])
                    data = rawbytes.raw_from_json(ref)
                else:
                    ref = {"@b64": cand[1].decode()}
                    data = base64.b64decode(cand[1])
                if crc32c(data) == key[1]:
                    found = s.resolved[key] = ref  # type: ignore[index]
                    break
        if found is None:
            self.refuse(f"{s.path}: summarised bytes ({summary}) not among its inputs")
            return {"@b64": ""}
        return found

    def run(self) -> None:
        """Deliver the fed lines and what the unit's actors send, in seq order, up to the first divergence."""
        s, keys = self.s, self.keys
        # what another unit sends the unit's actors, and their inputs (a line between two of them is sent here)
        fed = [i for i, (to, by) in enumerate(zip(s.to_key, s.from_key, strict=True)) if to in keys and by not in keys]
        self.inputs = sum(1 for i in fed if s.flags[i])
        heap = self.heap
        j = 0
        while True:
            nxt = fed[j] + 1 if j < len(fed) else _INF
            if heap and (heap[0][0] < nxt or (heap[0][0] == nxt and heap[0][1] < 0)):
                at, sub, _, ref, msg, sender, ts = heapq.heappop(heap)
                if at >= self.limit:
                    break
                if sub < 0:
                    self._lifecycle(at, ref, msg, sender, ts)
                else:
                    self._deliver(ref, msg, sender, at, ts)
            elif nxt < self.limit:
                self._feed(fed[j])
                j += 1
            else:
                break
            if self.refused is not None:
                raise UnsplittableError(f"{self.s.path}: {self.refused}")
        if self.error is not None:
            raise self.error
        if self.check and self.divergence is None and self.limit == _INF:
            owned = sum(1 for by in s.from_key if by in keys)
            if self.compared < owned:  # a line of this unit's actors that no replayed message took
                first = next(i for i, by in enumerate(s.from_key) if by in keys and not self.matched[i])
                self._missing(first + 1)


def replay_unit(unit: Unit, check: bool = True, until: int | None = None,
                tamper: Callable[[Record, Any], Any] | None = None) -> list[ReplayResult]:
    """Replay one unit over its chain, each file in order on one scratch folder; one result per file, whose
    ``compared`` counts the lines this unit compared and the inputs it was fed."""
    if not unit.keys:
        return replay_chain(list(unit.chain), until=until, check=check)
    from actors.broker import spawn_broker_actors

    ensure_registered()
    scratch = _scratch_dir()
    results = []
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], _GC_YOUNG), *thresholds[1:])
    try:
        for i, path in enumerate(unit.chain):
            t0 = time.perf_counter()
            s = _scan_of(path, until if i == len(unit.chain) - 1 else None)
            u = _UnitReplay(s, unit.keys, scratch, check, tamper)
            result = ReplayResult(path, recorded_span_ms=s.span)
            from edges.trace_writer import code_digest

            result.code_changed = s.header.get("code") not in (None, code_digest())
            with bytes_file(path):
                try:
                    if s.refused is None:
                        s.refused = _recorded_append_failures(path, s.texts, s.flags, None)
                    if s.refused:
                        u.rt.edges = Edges(log_dirs=RecordedLogDirs(s.refused))
                    spawn_broker_actors(u.rt)
                    u.run()
                finally:
                    u.closed = True
                    u.rt.shutdown()
            inputs = u.inputs
            result.delivered = inputs
            result.divergence = u.divergence
            result.compared = u.compared + inputs if check else 0
            result.wall_s = time.perf_counter() - t0
            results.append(result)
    finally:
        gc.set_threshold(*thresholds)
        shutil.rmtree(scratch, ignore_errors=True)
    return results


@attrs.frozen
class UnitTime:
    """What one unit took (the bench's largest-unit share): its wall time and its process's CPU time meanwhile."""

    label: str
    work: int
    wall_s: float
    cpu_s: float


def _run_unit(unit: Unit, check: bool, until: int | None,
              tamper: Callable[[Record, Any], Any] | None) -> tuple[str, Any]:
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        results = replay_unit(unit, check=check, until=until, tamper=tamper)
    except UnsplittableError as e:
        log.debug("replayed whole: %s", e)
        return "unsplittable", str(e)
    return "ok", (results, UnitTime(unit.label, unit.work, time.perf_counter() - t0, time.process_time() - c0))


def _combine(parts: list[ReplayResult], scanned: _Scan) -> ReplayResult:
    """One file's result from its units': the first divergence by seq; every line before it was compared by the
    unit that owns it (a unit stops only after its own first divergence)."""
    r = ReplayResult(scanned.path, recorded_span_ms=parts[0].recorded_span_ms)
    r.code_changed = any(p.code_changed for p in parts)
    r.delivered = sum(p.delivered for p in parts)
    r.wall_s = sum(p.wall_s for p in parts)
    diverged = [p.divergence for p in parts if p.divergence is not None]
    if diverged:
        r.divergence = min(diverged, key=lambda d: d.seq)
        r.compared = r.divergence.seq - 1
        # as the whole replay counts them: it feeds no input after the one whose consequences diverged
        r.delivered = sum(1 for f in scanned.flags[:r.divergence.seq - 1] if f)
    else:
        r.compared = sum(p.compared for p in parts)
    return r


def replay_split(paths: list[str], until: int | None = None, check: bool = True, jobs: int = 1,
                 split: str = "auto", tamper: Callable[[Record, Any], Any] | None = None,
                 times: list[UnitTime] | None = None) -> list[ReplayResult]:
    """Replay the traces at ``paths`` as the units `plan` makes, ``jobs`` at a time, the largest first; results in
    ``paths`` order, as `replay_many`'s, without runtimes. ``times`` gets each unit's label, size and wall time."""
    from kactor.trace.replay import prepare

    prepare()  # once, before the fork
    from edges.trace_writer import code_digest

    units = plan(paths, until, jobs, split)
    for p in paths:
        s = _SCANS.get((p, None)) or _SCANS.get((p, until))
        if s is not None and s.header.get("code") not in (None, code_digest()):
            log.warning("%s: recorded by other code (digest %s, this checkout %s): a divergence may be that change",
                        p, s.header.get("code"), code_digest())
    answers = in_forks(units, jobs, lambda u: _run_unit(u, check, until, tamper))
    whole = {u.chain for u, (status, _) in zip(units, answers, strict=True) if status != "ok"}
    done: dict[str, ReplayResult] = {}  # a chain replayed whole: its files' results as they are
    parts: dict[str, list[ReplayResult]] = {}
    for u, (status, value) in zip(units, answers, strict=True):
        if status == "ok" and u.chain not in whole:
            results, took = value
            for r in results:
                if u.keys:
                    parts.setdefault(r.path, []).append(r)
                else:
                    done[r.path] = r
            if times is not None:
                times.append(took)
    if whole:  # a unit found it could not replay alone: its chain again, whole
        redo = [Unit(c, frozenset(), sum(os.path.getsize(p) for p in c)) for c in sorted(whole)]
        for _status, value in in_forks(redo, jobs, lambda u: _run_unit(u, check, until, tamper)):
            results, took = value
            done.update((r.path, r) for r in results)
            if times is not None:
                times.append(took)
    last = {u.chain[-1] for u in units}
    results = [done[p] if p in done else _combine(parts[p], _scan_of(p, until if p in last else None))
               for p in paths]
    for p in paths:  # the files' lines are not kept past the replay
        _SCANS.pop((p, None), None)
        _SCANS.pop((p, until), None)
    return results


__all__ = ["REST", "SINKS", "SPLIT_COST", "Unit", "UnitTime", "UnsplittableError", "chains_to_split", "plan",
           "plan_chain", "replay_split", "replay_unit", "scan", "unit_key"]
