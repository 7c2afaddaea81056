"""A Jepsen-style checker of transactions (issue #40): Elle's view of a Kafka partition as a list of appends, judged
against what the transactional producers did.

Pure: it takes a `History` — every transaction as its producer saw it (the values it wrote to each partition in
order, the consumer-group offsets it committed, its outcome: committed when EndTxn(commit) was acknowledged, aborted
when EndTxn(abort) was or the transaction was abandoned before a commit was asked, unknown when a commit went out
unanswered), the logs a read_committed and a read_uncommitted reader read (offset and value), how far the
read_committed reader got, the group offsets OffsetFetch showed, and the last stable offset / high watermark of
every read_committed answer — and returns the anomalies, each naming the transactions involved:

- ``aborted read``: a value of an aborted transaction in the read_committed log;
- ``lost write``: no value of a committed transaction visible to read_committed, though the reader read past where
  they are (or read to the end and the read_uncommitted log has them not either);
- ``torn transaction``: a committed (or unknown) transaction partly visible, or a value of one appearing after a
  value of a later transaction of the same producer in a partition (it landed inside that transaction's span: a
  delayed produce, Jepsen's Bufstream finding);
- ``duplicate``: one value at two offsets of a log (either reader's);
- ``order broken``: two values of one transaction in a partition in the other order than written;
- ``offsets not atomic``: a group offset visible that an aborted transaction committed, or one whose transaction's
  output is not visible, or, at the end, an offset older than the last committed transaction's;
- ``stalled reader``: a partition's last stable offset held below its high watermark for longer than the bound
  (transaction.timeout.ms and the coordinator's abort interval: an open transaction the coordinator cannot end, a
  hanging transaction).

An anomaly whose transaction had an EndTxn of an earlier transaction of its producer land inside it, under the
same producer id and epoch (``History.strays``), is marked ``known``: KIP-890 part 1 (the leaders' verification)
cannot close it, as the coordinator cannot tell that EndTxn from the transaction's own; part 2's epoch bump per
transaction (Kafka 4.0, with new clients) does. A 2.6 client cannot, so it is named with its seed rather than
failing it. So is one about values of partitions whose sole ISR member lost power during the run
(``History.power_losses``): Kafka acknowledges without fsync, so such a partition may lose what was committed and read
(the simulator's other checks allow the same, `Sim.lost_to_power`); on those partitions the readers' last read of an
offset counts, as the log that survived.

`table` renders them as a short table a person reads.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Sequence

import attrs

from messages.topic import GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME

COMMITTED, ABORTED, UNKNOWN = "committed", "aborted", "unknown"

ABORTED_READ = "aborted read"
LOST_WRITE = "lost write"
TORN = "torn transaction"
DUPLICATE = "duplicate"
ORDER = "order broken"
OFFSETS = "offsets not atomic"
STALL = "stalled reader"
KINDS = (ABORTED_READ, LOST_WRITE, TORN, DUPLICATE, ORDER, OFFSETS, STALL)
# the coordinators' logs as the History names partitions (the simulated cluster has one partition of each)
TXN_LOG, OFFSETS_LOG = f"{TRANSACTION_STATE_TOPIC_NAME}-0", f"{GROUP_METADATA_TOPIC_NAME}-0"


@attrs.frozen(slots=True)
class TxnWrites:
    """One transaction as its producer saw it: ``writes`` (partition, value) in the order written, ``offsets``
    (group key, offset) committed in it (TxnOffsetCommit), its ``outcome``."""

    producer: str
    number: int
    writes: tuple[tuple[str, str], ...]
    outcome: str
    offsets: tuple[tuple[str, int], ...] = ()

    @property
    def name(self) -> str:
        return f"{self.producer}:T{self.number}"


@attrs.frozen(slots=True)
class Entry:
    """A record a reader read: its partition, offset and value."""

    partition: str
    offset: int
    value: str


@attrs.frozen(slots=True)
class StableSample:
    """A read_committed Fetch answer's last stable offset and high watermark for a partition, at ``at_ms``;
    ``healthy_since_ms``: since when the cluster had been whole then (every broker serving, no link faulty; None: it
    was not), as a broker outage or a cut link holds the markers back for as long as it lasts."""

    at_ms: float
    partition: str
    last_stable_offset: int
    high_watermark: int
    healthy_since_ms: float | None = float("-inf")


@attrs.frozen(slots=True)
class OffsetRead:
    """A group offset OffsetFetch answered (``final``: read after the run ended, everything settled)."""

    key: str
    offset: int
    final: bool = False


@attrs.frozen(slots=True)
class StrayEndTxn:
    """An EndTxn of an earlier transaction (``of``) that reached the coordinator at ``at_ms`` while transaction
    ``into`` of the same producer ran under the same producer id and epoch."""

    of: str  # "p0:T3's EndTxn"
    into: str
    at_ms: float


@attrs.frozen(slots=True)
class History:
    """What a seed's transactional workload did and read. ``positions``: the read_committed reader's position per
    partition at the end; ``complete``: the partitions it read to their end (its position at the last stable offset,
    which was the high watermark); ``stall_bound_ms``: how long a last stable offset may stay below the high
    watermark."""

    txns: tuple[TxnWrites, ...]
    committed: tuple[Entry, ...]
    uncommitted: tuple[Entry, ...]
    positions: dict[str, int] = attrs.field(factory=dict)
    complete: frozenset[str] = frozenset()
    offset_reads: tuple[OffsetRead, ...] = ()
    samples: tuple[StableSample, ...] = ()
    stall_bound_ms: float = float("inf")
    # group keys whose offset no OffsetFetch (require_stable) answered at the end, with its last answer: offsets
    # pending for ever in a transaction nothing ends
    unsettled: tuple[tuple[str, str], ...] = ()
    strays: tuple[StrayEndTxn, ...] = ()
    # (partition, what happened): partitions whose sole ISR member lost power (or came back on a new disk)
    power_losses: tuple[tuple[str, str], ...] = ()


@attrs.frozen(slots=True)
class Anomaly:
    kind: str
    where: str  # partition@offset, a partition or a group key
    txns: tuple[str, ...]  # "p0:T3 (aborted)"
    detail: str
    known: str = ""  # why a 2.6 client cannot be kept from it ("": it is a defect)
    # the partitions whose values it is about (missing, misplaced or misread), for the power-loss exemption
    partitions: tuple[str, ...] = attrs.field(default=(), eq=False, repr=False)

    def __str__(self) -> str:
        return f"{self.kind}: {self.where}: {self.detail} [{', '.join(self.txns)}]" + (
            f" (known: {self.known})" if self.known else "")


def _label(t: TxnWrites) -> str:
    return f"{t.name} ({t.outcome})"


def _view(entries: Iterable[Entry], last_for: frozenset[str] = frozenset()) -> dict[str, list[Entry]]:
    """Each partition's entries by offset, an offset read twice kept once (a reader reading it again): the first
    read, or on a partition of ``last_for`` (its log lost records to a power loss and reused their offsets) the
    last."""
    by: dict[str, dict[int, Entry]] = defaultdict(dict)
    for e in entries:
        if e.partition in last_for:
            by[e.partition][e.offset] = e
        else:
            by[e.partition].setdefault(e.offset, e)
    return {p: [offsets[o] for o in sorted(offsets)] for p, offsets in sorted(by.items())}


def check(history: History) -> list[Anomaly]:
    """Every anomaly of ``history``, in the order of KINDS, each kind's by partition and offset."""
    writer: dict[str, tuple[TxnWrites, int]] = {}
    for t in history.txns:
        for i, (_, v) in enumerate(t.writes):
            writer[v] = (t, i)
    lost = frozenset(p for p, _ in history.power_losses)
    rc, ru = _view(history.committed, lost), _view(history.uncommitted, lost)
    rc_at = {e.value: e for entries in rc.values() for e in entries}
    ru_at = {e.value: e for entries in ru.values() for e in entries}
    out: list[Anomaly] = []
    # aborted reads
    for entries in rc.values():
        for e in entries:
            w = writer.get(e.value)
            if w is not None and w[0].outcome == ABORTED:
                out.append(Anomaly(ABORTED_READ, f"{e.partition}@{e.offset}", (_label(w[0]),),
                                   f"{e.value} of an aborted transaction read by read_committed", partitions=(
                                       e.partition,)))
    # lost writes and partly visible transactions
    missing_of: dict[str, list[str]] = {}
    for t in history.txns:
        if t.outcome == ABORTED:
            continue
        seen = [v for _, v in t.writes if v in rc_at]
        gone = [(p, v) for p, v in t.writes if v not in rc_at and _judgeable(history, p, v, ru_at)]
        missing = [f"{p}:{v}" for p, v in gone]
        missing_of[t.name] = missing
        if not missing:
            continue
        where = tuple(sorted({p for p, _ in gone}))
        if not seen and t.outcome == COMMITTED:
            out.append(Anomaly(LOST_WRITE, ",".join(sorted({p for p, _ in t.writes})), (_label(t),),
                               f"none of its {len(t.writes)} values visible to read_committed: "
                               f"{', '.join(missing)}", partitions=where))
        elif seen:
            out.append(Anomaly(TORN, ",".join(sorted({p for p, _ in t.writes})), (_label(t),),
                               f"partly visible to read_committed: {', '.join(seen)} read, "
                               f"{', '.join(missing)} not", partitions=where))
    # a value inside a later transaction's span of the same producer; two of one transaction out of order
    for p, entries in rc.items():
        latest: dict[str, TxnWrites] = {}
        for e in entries:
            w = writer.get(e.value)
            if w is None or w[0].outcome == ABORTED:
                continue
            t = w[0]
            hi = latest.get(t.producer)
            if hi is not None and hi.number > t.number:
                out.append(Anomaly(TORN, f"{p}@{e.offset}", (_label(t), _label(hi)),
                                   f"{e.value} of {t.name} read by read_committed after {hi.name}'s values: inside "
                                   f"a later transaction's span", partitions=(p,)))
            elif hi is None or t.number > hi.number:
                latest[t.producer] = t
    for view_name, view in (("read_committed", rc), ("read_uncommitted", ru)):
        for p, entries in view.items():
            per_txn: dict[str, list[tuple[int, Entry]]] = defaultdict(list)
            counts: dict[str, list[int]] = defaultdict(list)
            for e in entries:
                counts[e.value].append(e.offset)
                w = writer.get(e.value)
                if w is not None:
                    per_txn[w[0].name].append((w[1], e))
            for seq in per_txn.values():
                for (i0, e0), (i1, e1) in itertools.pairwise(seq):
                    if i1 < i0:
                        t = writer[e1.value][0]
                        out.append(Anomaly(ORDER, f"{p}@{e0.offset}", (_label(t),),
                                           f"{e1.value} written before {e0.value} but read after it by "
                                           f"{view_name}", partitions=(p,)))
            for v, offsets in counts.items():
                if len(offsets) > 1:
                    w = writer.get(v)
                    out.append(Anomaly(DUPLICATE, f"{p}@{offsets[0]}", (_label(w[0]),) if w else (),
                                       f"{v} at offsets {', '.join(map(str, offsets))} ({view_name})",
                                       partitions=(p,)))
    out += _offsets(history, missing_of)
    out += _stalls(history, ru)
    order = {k: i for i, k in enumerate(KINDS)}
    return [_known(a, history.strays, dict(history.power_losses))
            for a in sorted(_dedupe(out), key=lambda a: order[a.kind])]


def _known(anomaly: Anomaly, strays: Sequence[StrayEndTxn], power_losses: dict[str, str]) -> Anomaly:
    """``anomaly`` marked known when an EndTxn of an earlier transaction landed inside its (first) transaction, or
    when every partition it is about lost records to a sole ISR member's power loss."""
    if anomaly.partitions and all(p in power_losses for p in anomaly.partitions):
        return attrs.evolve(anomaly, known="power loss: " + "; ".join(
            f"{p}: {power_losses[p]}" for p in anomaly.partitions) + " (Kafka acknowledges without fsync)")
    # the coordinators' own logs: a lost transaction log takes any guarantee, a lost offsets log the group offsets
    for log, kinds in ((TXN_LOG, KINDS), (OFFSETS_LOG, (OFFSETS,))):
        if anomaly.kind in kinds and log in power_losses:
            return attrs.evolve(anomaly, known=f"power loss: {log}: {power_losses[log]} (Kafka acknowledges "
                                               f"without fsync)")
    if not anomaly.txns:
        return anomaly
    subject = anomaly.txns[0].split(" ", 1)[0]
    for s in strays:
        if s.into == subject:
            return attrs.evolve(anomaly, known=f"KIP-890 part 2: {s.of} landed in {s.into} at "
                                               f"{s.at_ms / 1000:.1f} s under the same producer id and epoch")
    return anomaly


def _judgeable(history: History, partition: str, value: str, ru_at: dict[str, Entry]) -> bool:
    """Whether read_committed's not having ``value`` means it is not there: its reader read past the value's offset
    (as read_uncommitted saw it), or read the partition to its end and read_uncommitted has it not either. A value
    beyond a stalled reader's position is the stall's, not a loss."""
    e = ru_at.get(value)
    if e is not None:
        return e.offset < history.positions.get(partition, 0)
    return partition in history.complete


def _offsets(history: History, missing_of: dict[str, list[str]]) -> list[Anomaly]:
    """Offsets committed in a transaction become visible with its output and only then (KIP-98's
    consume-transform-produce): each offset OffsetFetch showed is a committed (or unknown) transaction's, whose
    output read_committed sees whole; at the end, it is at least the last committed one's."""
    by_offset: dict[tuple[str, int], TxnWrites] = {}
    last: dict[str, TxnWrites] = {}
    for t in history.txns:
        for key, off in t.offsets:
            by_offset[(key, off)] = t
            if t.outcome == COMMITTED:
                prev = last.get(key)
                if prev is None or (prev.producer, prev.number) < (t.producer, t.number):
                    last[key] = t
    out: list[Anomaly] = [Anomaly(OFFSETS, key, (), f"no stable offset at the end: OffsetFetch(require_stable) last "
                                                    f"answered {error}")
                          for key, error in history.unsettled]
    for r in dict.fromkeys(history.offset_reads):
        if r.offset < 0:
            t0 = last.get(r.key)
            if r.final and t0 is not None:
                out.append(Anomaly(OFFSETS, r.key, (_label(t0),), f"no offset committed at the end, though "
                                                                  f"{t0.name} committed one with its output"))
            continue
        t = by_offset.get((r.key, r.offset))
        if t is None:
            out.append(Anomaly(OFFSETS, r.key, (), f"offset {r.offset} visible, committed by no transaction"))
        elif t.outcome == ABORTED:
            out.append(Anomaly(OFFSETS, r.key, (_label(t),), f"offset {r.offset} of an aborted transaction visible"))
        elif missing_of.get(t.name):
            out.append(Anomaly(OFFSETS, r.key, (_label(t),),
                               f"offset {r.offset} visible, its output not: {', '.join(missing_of[t.name])}",
                               partitions=tuple(sorted({m.split(":", 1)[0] for m in missing_of[t.name]}))))
        elif r.final:
            t0 = last.get(r.key)
            if t0 is not None and (t.producer, t.number) < (t0.producer, t0.number):
                out.append(Anomaly(OFFSETS, r.key, (_label(t), _label(t0)),
                                   f"offset {r.offset} of {t.name} at the end, though {t0.name} committed its "
                                   f"offsets with its output"))
    return out


def _stalls(history: History, ru: dict[str, list[Entry]]) -> list[Anomaly]:
    """The longest time each partition's last stable offset stayed put below its high watermark while the cluster
    was whole, as read_committed answers showed it; past the bound, a stall naming the transactions whose values sit
    at that offset."""
    writer = {v: t for t in history.txns for _, v in t.writes}
    by_partition: dict[str, list[StableSample]] = defaultdict(list)
    for s in history.samples:
        by_partition[s.partition].append(s)
    out: list[Anomaly] = []
    for p, samples in sorted(by_partition.items()):
        samples.sort(key=lambda s: s.at_ms)
        worst: tuple[float, int, int] | None = None
        since: StableSample | None = None
        for s in samples:
            if s.last_stable_offset >= s.high_watermark:
                since = None
                continue
            if since is None or s.last_stable_offset != since.last_stable_offset:
                since = s
            if s.healthy_since_ms is None:
                continue
            held = s.at_ms - max(since.at_ms, s.healthy_since_ms)
            if worst is None or held > worst[0]:
                worst = (held, s.last_stable_offset, s.high_watermark)
        if worst is None or worst[0] <= history.stall_bound_ms:
            continue
        held, lso, hw = worst
        at = [e for e in ru.get(p, []) if e.offset == lso]
        txns = tuple(_label(writer[e.value]) for e in at if e.value in writer)
        out.append(Anomaly(STALL, f"{p}@{lso}", txns,
                           f"last stable offset {lso} below the high watermark ({hw}) for {held / 1000:.1f} s "
                           f"(bound {history.stall_bound_ms / 1000:.1f} s)"
                           + (f", the cluster whole: {at[0].value} there opened a transaction not ended since" if at
                              else ", the cluster whole"), partitions=(p,)))
    return out


def _dedupe(anomalies: Iterable[Anomaly]) -> list[Anomaly]:
    return list(dict.fromkeys(anomalies))


def table(anomalies: Sequence[Anomaly], head: str = "", rerun: str = "") -> str:
    """The anomalies as a short table: kind, where, transactions, what; then the command that replays the seed."""
    rows = [("kind", "where", "transactions", "what")]
    rows += [(a.kind, a.where, ", ".join(a.txns) or "-", a.detail + (f" (known, {a.known})" if a.known else ""))
             for a in anomalies]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [head] if head else []
    for r in rows:
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r[:3], widths, strict=True)) + "  " + r[3])
    if rerun:
        lines.append(f"  replay: {rerun}")
    return "\n".join(lines)


def counts(anomalies: Iterable[Anomaly]) -> dict[str, int]:
    """How many of each kind (every kind named, zeros too)."""
    n = dict.fromkeys(KINDS, 0)
    for a in anomalies:
        n[a.kind] += 1
    return n


__all__ = ["ABORTED", "ABORTED_READ", "COMMITTED", "DUPLICATE", "KINDS", "LOST_WRITE", "OFFSETS", "ORDER", "STALL",
           "TORN", "UNKNOWN", "Anomaly", "Entry", "History", "OffsetRead", "StableSample", "StrayEndTxn", "TxnWrites",
           "check", "counts", "table"]
