"""The invariants `kactor sim` checks after every step, on the brokers' real state and ZooKeeper's.

- one leader per partition per leader epoch (every broker that ever led an epoch, over the whole run);
- leader epochs in ZooKeeper never go back; leader ∈ ISR ⊆ replicas there (no unclean election: the leader is -1
  when none of the ISR is alive);
- every acknowledged record at its offset, with its value, on every ISR replica that is up, below its high
  watermark;
- the consumer group's (sim/groups.py's GroupChecks): stable once the cluster is healthy, no acknowledged commit
  lost, no UNKNOWN_SERVER_ERROR, the static member never fenced, stable at the end;
- an acks=all produce answered within HEALTHY_BOUND_MS when the ISR can satisfy it: sent once every broker had been
  serving, with no link cut, for HEALTHY_SETTLE_MS, and the cluster still so while it waits;
- an acks=all produce answered within its request timeout (+ ANSWER_SLACK_MS): the DelayedProduce expires by then;
- and answered once it is committed: a produce whose record has been below its leader's high watermark for a step
  (ANSWER_SLACK_MS) is no longer waiting (Kafka completes the DelayedProduces of a partition whenever its high
  watermark moves: a produce left parked after a LeaderAndIsr shrank the ISR is a defect), and at the end none
  committed is waiting at all. A time bound below the
  timeout would not do: with the controller cut off from a leader, the leader alone removes a follower it cannot
  reach, after replica.lag.time.max.ms (30 s), so a produce can legitimately wait out its timeout (seed 228);
- a controlled shutdown the controller acknowledged leaves the stopping broker leading no partition in ZooKeeper
  (KafkaServer.controlledShutdown succeeds only once no partition it leads remains);
- no answer is UNKNOWN_SERVER_ERROR;
- a follower whose truncation has completed (fetching) holds no leader-epoch entry at or past its log end (unless
  its log is empty: retention moves the last entry to the log start offset): Kafka's
  Log.truncateTo trims the epoch cache from the log end even when it truncates nothing (2.6.3, KAFKA-10706), so an
  epoch the replica started as leader without writing a record is gone once it follows; kept, it is the state in
  which a follower asks OffsetsForLeaderEpoch with that epoch for ever;
- a controller's ZooKeeper write takes effect only while its epoch is current: a write the active controller of
  epoch E asked for that succeeds while /controller_epoch holds a later one (a zombie's: its session expired under a
  pause, another broker elected) is a violation (`Sim.check_controller_write`; Kafka's
  wrapRequestWithControllerEpochCheck refuses it with ControllerMovedException);
- the transactions' (on the seeds with them): sim/transactions.py's `TxnChecks`, called from the Checker;
- at the end (every broker up, every link healed, the cluster quiet): every acknowledged record on the leader, and
  every replica back in its partition's ISR (a follower rejoins the ISR once healed: one that stops fetching for
  good, e.g. asking OffsetsForLeaderEpoch again and again, stays out).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from actors import names
from core.broker.shards import shard_of
from messages.common import TopicPartition
from protocol.errors import ProtocolError
from protocol.records import LOG_OVERHEAD, iter_batches, read_batch_header
from sim.client import PRODUCE_TIMEOUT_MS, SimClient, zk_partition_leader, zk_partition_state
from sim.clients import FATAL, Clients, Read
from sim.disk import SimDisk
from sim.groups import GroupChecks
from sim.runtime import START_MS, Sim
from sim.transactions import Transactions, TxnChecks

HEALTHY_SETTLE_MS = 2000.0
ANSWER_SLACK_MS = 1000.0
HEALTHY_BOUND_MS = 1000.0  # twice replica.fetch.wait.max.ms: an append wakes the followers' parked fetches at once


def hosted_partition(sim: Sim, broker_id: int, tp: TopicPartition) -> Any:
    """The online Partition ``tp`` of a live broker (its shard's replica manager), or None."""
    broker = sim.brokers[broker_id]
    rt = broker.rt
    if rt is None:
        return None
    count = broker.shard_count  # counted once per incarnation: its shards are spawned with it
    if count is None or count[0] != broker.incarnation:
        count = broker.shard_count = (broker.incarnation,
                                      sum(1 for n in rt.instances if n.startswith(names.SHARD_PREFIX)))
    if not count[1]:
        return None
    shard = rt.instances.get(names.shard(shard_of(tp, count[1])))
    rm = getattr(shard, "rm", None)
    return rm.online_partition(tp) if rm is not None else None


Parsed = tuple[int, tuple[tuple[int, "str | None"], ...]]  # a batch's last offset, (offset, value) of its records
_LENGTH = struct.Struct(">i")


def _parse(batch: Any) -> Parsed:
    # a control record (a transaction marker: sim/transactions.py) has no producer's value: None, as a tombstone
    control = batch.is_control
    return batch.last_offset, tuple((batch.base_offset + r.offset_delta,
                                     None if r.value is None or control else r.value.decode("utf-8", "replace"))
                                    for r in batch.records())


def _batches(data: bytes, cache: dict[bytes, Parsed] | None) -> Iterator[Parsed]:
    """Every batch of a read, parsed; with ``cache`` (raw batch bytes -> parsed) a batch read before is not parsed
    again: the same bytes parse the same, so the answer is the plain path's (tests/sim/test_sim_speed.py)."""
    if cache is None:
        for batch in iter_batches(data):
            yield _parse(batch)
        return
    pos, end = 0, len(data)
    while pos < end:
        if end - pos >= LOG_OVERHEAD:
            size = LOG_OVERHEAD + _LENGTH.unpack_from(data, pos + 8)[0]
            hit = cache.get(data[pos:pos + size]) if size > LOG_OVERHEAD else None
            if hit is not None:
                pos += size
                yield hit
                continue
        batch = read_batch_header(data, pos)  # validates, and raises as iter_batches would
        parsed = cache[batch.raw] = _parse(batch)
        pos += len(batch.raw)
        yield parsed


class _Scan:
    """`values_below_hw`'s fast path over a log's segments (their whole files, in order), kept with where it stopped so
    that the Checker's next read of that log, once it only grew, goes on from there (a step's check rereads every ISR
    replica; re-parsing each whole log at every step was most of `_below_hw`'s time). Going on gives what reading
    from the start would give when every record read so far came at a higher offset than the one before
    (``ordered``: then the old values, the records kept above the old high watermark and the new ones are in the order
    a read from the start puts them) and every segment was read (``complete``). tests/sim/test_sim_speed.py holds
    both ways to the plain path."""

    __slots__ = ("log", "start", "hw", "segments", "values", "tail", "next_start", "last_offset", "ordered",
                 "complete")

    def __init__(self, log: Any, start: int, hw: int, segments: tuple[bytes, ...], values: dict[int, str | None],
                 tail: list[tuple[int, str | None]], next_start: int, last_offset: int) -> None:
        self.log = log
        self.start = start  # the log start offset
        self.hw = hw
        self.segments = segments
        self.values = values  # below ``hw``
        self.tail = tail  # the records read at or above ``hw``, in order
        self.next_start = next_start  # where the next batch must end at or after to be read (``read``'s ``start``)
        self.last_offset = last_offset  # the last record's offset (-1: none yet)
        self.ordered = True
        self.complete = True

    @classmethod
    def from_start(cls, log: Any, start: int, hw: int, segments: tuple[bytes, ...],
                   cache: dict[bytes, Parsed]) -> _Scan:
        """``segments`` (the log's files' bytes) read from the log start offset ``start`` to ``hw``."""
        scan = cls(log, start, hw, segments, {}, [], start, -1)
        scan.read(0, 0, cache)
        return scan

    def read_on(self, hw: int, segments: tuple[bytes, ...], cache: dict[bytes, Parsed]) -> _Scan | None:
        """A new scan of the grown ``segments`` up to ``hw``, going on from this one's end; None when it cannot: not
        every record came in order or not every segment was read, ``hw`` is lower, or ``segments`` are not this
        scan's appended to. The new scan takes this one's values over and adds to them (copying them at every step
        made the checks quadratic in a log's length): this one is done with."""
        if not (self.ordered and self.complete and hw >= self.hw and _grew(self.segments, segments)):
            return None
        scan = _Scan(self.log, self.start, hw, segments, self.values, [], self.next_start, self.last_offset)
        for offset, value in self.tail:  # above the old high watermark: below the new one now?
            if offset < hw:
                scan.values[offset] = value
            else:
                scan.tail.append((offset, value))
        scan.read(len(self.segments) - 1, len(self.segments[-1]), cache)
        return scan

    def read(self, first: int, pos: int, cache: dict[bytes, Parsed]) -> None:
        """Read on from byte ``pos`` of segment ``first`` (0, 0: the whole log)."""
        values, tail, hw, segments = self.values, self.tail, self.hw, self.segments
        start, prev, ordered = self.next_start, self.last_offset, self.ordered
        for i in range(first, len(segments)):
            if (i > first or pos == 0) and start >= hw:
                self.complete = False  # a segment left unread: no going on from here
                break
            data = segments[i][pos:] if i == first and pos else segments[i]
            for last, records in _batches(data, cache):
                if last < start:  # below the log start offset (as Log.read, from the batch holding it on)
                    continue
                for offset, value in records:
                    if offset <= prev:
                        ordered = False
                    prev = offset
                    if offset < hw:
                        values[offset] = value
                    else:
                        tail.append((offset, value))
                start = last + 1
        self.next_start, self.last_offset, self.ordered = start, prev, ordered


def _file_bytes(segment: Any) -> bytes:
    """``segment.read(0, segment.size)``: the segment's file as a disk inspector reads it, straight from its SimDisk's
    inode when nothing can fail there (no failed dir, the file there), else through the read itself (its open, pread
    and close were most of a check's reading of an unchanged log); the same bytes either way."""
    size, disk = segment.size, segment.disk
    if size > 0 and type(disk) is SimDisk and not disk.failed:
        inode = disk.files.get(segment.log_path)
        if inode is not None:
            data = inode.data
            return bytes(data) if size >= len(data) else bytes(data[:size])
    return segment.read(0, size)  # type: ignore[no-any-return]


def _grew(old: tuple[bytes, ...], new: tuple[bytes, ...]) -> bool:
    """``new`` segments are ``old`` ones appended to: the same bytes, the last one extended, perhaps more after."""
    k = len(old)
    return 0 < k <= len(new) and new[k - 1].startswith(old[k - 1]) and all(new[i] == old[i] for i in range(k - 1))


def values_below_hw(log: Any, cache: dict[bytes, Parsed] | None = None,
                    end: int | None = None) -> dict[int, str | None]:
    """Every record's value by offset, from the log start offset to the high watermark (or ``end``). With ``cache``,
    each segment's file is read whole (`LogSegment.read`), as a disk inspector would, and each distinct batch parsed
    once; without, through `Log.read` from the log start offset (the plain path: the same values, and a tenth of a
    seed's time went into its offset translations)."""
    start, hw = log.log_start_offset, log.high_watermark if end is None else end
    if cache is not None:
        return _Scan.from_start(log, start, hw, tuple(segment.read(0, segment.size) for segment in log.segments),
                                cache).values
    out: dict[int, str | None] = {}
    while start < hw:
        # no max_offset: a read stops before the batch holding it, and a batch may straddle the high watermark
        data = log.read(start, 1 << 20)
        before = start
        for last, records in _batches(data, cache):
            for offset, value in records:
                if offset < hw:
                    out[offset] = value
            start = max(start, last + 1)
        if start == before:  # nothing (more) below the high watermark
            break
    return out


def value_at(log: Any, offset: int) -> str | None:
    if offset < log.log_start_offset or offset >= log.log_end_offset:
        return None
    for batch in iter_batches(log.read(offset, 1 << 16)):
        for r in batch.records():
            if batch.base_offset + r.offset_delta == offset:
                return None if r.value is None else r.value.decode("utf-8", "replace")
    return None


def duplicates(values: dict[int, str | None]) -> dict[str, list[int]]:
    """The values found at more than one offset (each producer's values are unique: one is a duplicate)."""
    if len(set(values.values())) == len(values):
        return {}
    where: dict[str, list[int]] = {}
    for offset, value in sorted(values.items()):
        if value is not None:
            where.setdefault(value, []).append(offset)
    return {v: offsets for v, offsets in where.items() if len(offsets) > 1}


class ClientChecks:
    """The invariants on sim/clients.py's clients (a step's are cheap: they look at what is new since the last).

    - no record value twice in a partition (an ISR replica's log below its high watermark each step, the leader's
      whole log at the end): every producer's values are unique, so one found twice is a duplicate, such as an
      idempotent producer's re-sent batch appended again;
    - ISR replicas identical up to the high watermark: any two ISR members hold the same value at every offset below
      both their high watermarks;
    - a consumer never reads an offset at or above the high watermark its answer carried, nor one offset with two
      values over the run (across leader changes), nor gets OFFSET_OUT_OF_RANGE (no unclean election, no retention:
      its position never passes a leader's log end);
    - no answer to any client is UNKNOWN_SERVER_ERROR, and none to the idempotent producer refuses a batch as out
      of order, of an unknown producer id or of a stale epoch (no unclean election, no retention, one batch in
      flight: the leader, whichever it is, knows every sequence acknowledged before, so a re-sent batch is either
      new or a duplicate answered with its first offsets);
    - at the end: every record a consumer read is in the leader's log at its offset (a consumer sees only committed
      data, which nothing takes back); an acks=1 record acknowledged at an offset is, if it survived at all, at that
      offset (acks=1 records may be lost, but never moved); no idempotent batch is left unacknowledged.

    Except where Kafka itself loses records: a partition whose sole ISR member lost power or started on a new disk
    (`Sim.lost_to_power`) may lose what was read of it, and its producers' and consumers' answers after that may be
    OUT_OF_ORDER_SEQUENCE_NUMBER or OFFSET_OUT_OF_RANGE (`Sim.lost_any_to_power`: such an answer does not name its
    partition here).
    """

    def __init__(self, clients: Clients) -> None:
        self.clients = clients
        self.sim = clients.sim
        self.first_read: dict[tuple[TopicPartition, int], Read] = {}
        self._reads_seen = 0
        self._answers_seen: dict[int, int] = {}  # per answer list, how many were looked at
        self.found: list[str] = []  # what the reads showed (kept: a step's check reports everything found so far)

    def check_replicas(self, name: str, replicas: dict[int, tuple[int, dict[int, str | None]]]) -> list[str]:
        """``replicas``: each ISR replica's (high watermark, values below it) of one partition."""
        out = []
        for b, (_, values) in sorted(replicas.items()):
            for value, offsets in duplicates(values).items():
                out.append(f"{name}: {value!r} at offsets {offsets} of ISR replica b{b}: a duplicate")
        ordered = sorted(replicas.items())
        for i, (a, (hw_a, values_a)) in enumerate(ordered):
            for b, (hw_b, values_b) in ordered[i + 1:]:
                # one holding every (offset, value) of the other (ISR replicas mostly do: the one with the lower HW
                # holds a prefix of the other's) has no offset where the two differ: no need to go through them
                if values_a.items() <= values_b.items() or values_b.items() <= values_a.items():
                    continue
                for offset in range(min(hw_a, hw_b)):
                    if offset in values_a and offset in values_b and values_a[offset] != values_b[offset]:
                        out.append(f"{name}: offset {offset} is {values_a[offset]!r} on b{a} (HW {hw_a}) but "
                                   f"{values_b[offset]!r} on b{b} (HW {hw_b}): ISR replicas differ below the HW")
                        break
        return out

    def check(self) -> list[str]:
        reads = self.clients.consumer.reads
        for r in reads[self._reads_seen:]:
            name = f"{r.tp.topic}-{r.tp.partition}"
            if r.offset >= r.high_watermark:
                self.found.append(f"{name}: consumer read {r.value!r} at offset {r.offset} from b{r.leader}, at or "
                                  f"above the high watermark {r.high_watermark} of that answer")
            first = self.first_read.setdefault((r.tp, r.offset), r)
            if first.value != r.value and self.sim.lost_to_power(r.tp, first.read_ms) is None:
                self.found.append(f"{name}: consumer read offset {r.offset} as {first.value!r} from b{first.leader} "
                                  f"at {first.read_ms:.0f} ms, then as {r.value!r} from b{r.leader} at "
                                  f"{r.read_ms:.0f} ms")
        self._reads_seen = len(reads)
        for i, answers in enumerate(self.clients.answer_lists()):
            for what, about, error in answers[self._answers_seen.get(i, 0):]:
                if error == "UNKNOWN_SERVER_ERROR" or (
                        (error in FATAL or (what == "Fetch" and error == "OFFSET_OUT_OF_RANGE"))
                        and not self.sim.lost_any_to_power()):
                    self.found.append(f"{what} {about!r} answered {error}")
            self._answers_seen[i] = len(answers)
        return list(self.found)

    def check_final(self, logs: dict[TopicPartition, tuple[int, dict[int, str | None]]]) -> list[str]:
        """``logs``: each partition's leader and its whole log, by offset."""
        out = []
        for tp, (leader, values) in sorted(logs.items()):
            for value, offsets in duplicates(values).items():
                out.append(f"{tp.topic}-{tp.partition}: {value!r} at offsets {offsets} of leader b{leader}'s log at "
                           f"the end: a duplicate")
        for (tp, offset), r in sorted(self.first_read.items(), key=lambda kv: (kv[0][0], kv[0][1])):
            leader, values = logs.get(tp, (-1, {}))
            found = values.get(offset)
            if found != r.value and self.sim.lost_to_power(tp, r.read_ms) is None:
                out.append(f"{tp.topic}-{tp.partition}: consumer read {r.value!r} at offset {offset} from "
                           f"b{r.leader} at {r.read_ms:.0f} ms, leader b{leader} has {found!r} there at the end")
        where = {tp: {v: o for o, v in values.items()} for tp, (_, values) in logs.items()}
        for ack in self.clients.acks1.acks:
            moved = where.get(ack.tp, {}).get(ack.value)
            if moved is not None and moved != ack.offset:
                out.append(f"{ack.tp.topic}-{ack.tp.partition}: acks=1 record {ack.value!r} acknowledged at offset "
                           f"{ack.offset} is at offset {moved} at the end")
        for batch in self.clients.idempotent.in_flight.values():
            out.append(f"{batch.tp.topic}-{batch.tp.partition}: idempotent batch {batch.value!r} (sequence "
                       f"{batch.sequence}, {batch.attempts} tries) still unacknowledged at the end")
        return out


class AdminChecks(Protocol):
    """sim/admin_ops.py's AdminOps, as the Checker calls it (that module reads replicas with this one's helpers)."""

    def check(self) -> list[str]: ...
    def check_final(self) -> list[str]: ...
    def settled(self) -> bool: ...
    def live_partitions(self) -> list[TopicPartition]: ...


class RejoinChecks(Protocol):
    """sim/admin_ops.py's IsrRejoin, as the Checker calls it."""

    def check(self, partitions: list[TopicPartition]) -> list[str]: ...


class HostileInvariants(Protocol):
    """sim/hostile.py's HostileChecks, as the Checker calls it."""

    client: Any

    def check(self) -> list[str]: ...
    def check_final(self) -> list[str]: ...


class LoadInvariants(Protocol):
    """sim/coordinator_loads.py's LoadChecks, as the Checker calls it."""

    def check(self) -> list[str]: ...
    def check_final(self) -> list[str]: ...
    def settled(self) -> bool: ...


class Checker:
    """Keeps what the invariants need across steps (who led which epoch, the last epoch seen in ZooKeeper)."""

    def __init__(self, sim: Sim, client: SimClient, partitions: list[TopicPartition],
                 assignment: dict[TopicPartition, tuple[int, ...]], fast: bool = True,
                 clients: Clients | None = None, txns: Transactions | None = None,
                 groups: GroupChecks | None = None, admin: AdminChecks | None = None,
                 rejoin: RejoinChecks | None = None, hostile: HostileInvariants | None = None,
                 loads: LoadInvariants | None = None) -> None:
        self.sim = sim
        self.hostile = hostile  # sim/hostile.py's: Kafka's answers to a hostile client, none of it in internal logs
        self.loads = loads  # sim/coordinator_loads.py's: every coordinator load complete
        self.groups = groups  # the consumer group's invariants (sim/groups.py)
        self.admin = admin  # sim/admin_ops.py's AdminOps: its deletions and reassignment complete
        self.rejoin = rejoin  # sim/admin_ops.py's IsrRejoin: a follower that can rejoins the ISR within a bound
        self.client = client
        self.clients = ClientChecks(clients) if clients is not None else None
        self.txns = TxnChecks(txns, partitions) if txns is not None else None
        self.partitions = partitions
        self.assignment = assignment
        self.epoch_leaders: dict[tuple[TopicPartition, int], int] = {}
        self.zk_epochs: dict[TopicPartition, int] = {}
        self.stop_violations: list[str] = []
        self.committed_at: dict[str, float] = {}  # an outstanding produce's value -> when first seen committed
        sim.on_stopped = self._stopped
        # every batch the checks have parsed, by its bytes (None: parse every read, the plain path)
        self.batches: dict[bytes, Parsed] | None = {} if fast else None
        # each log's last values below its high watermark, with what they were read from (`_below_hw`)
        self._scans: dict[int, _Scan] = {}
        # every ack so far by partition, per ack list (`_acked_by_partition`), and how far into each list it is
        self._acks_by_tp: tuple[dict[TopicPartition, list[Any]], ...] = tuple({} for _ in self._ack_lists())
        self._acks_grouped = [0] * len(self._acks_by_tp)
        # (ISR replica, partition, ack list) -> (scan, acks, above) of the last check that found every one of those
        # acks in that scan's values or at or above its high watermark (a scan is replaced when the high watermark
        # moves), ``above`` the indexes of those at or above it
        self._verified: dict[tuple[int, TopicPartition, int], tuple[_Scan, int, tuple[int, ...]]] = {}
        self._shard_names: dict[int, tuple[int, list[str]]] = {}  # broker -> (incarnation, its shards' names)
        # the plain producer's answers looked at so far (`check`), and what they showed
        self._latencies_seen = self._answers_seen = 0
        self._slow_answers: list[str] = []
        self._unknown_errors: list[str] = []

    def _below_hw(self, log: Any) -> dict[int, str | None]:
        """`values_below_hw` of ``log``. On the fast path: its last answer again while its segments' bytes, its log
        start offset and its high watermark are what that answer was read from (the same bytes parse the same: a
        step's check rereads every ISR replica, and most did not change since the last step); and when the log only
        grew (the same log start, its old bytes a prefix of its new ones, the high watermark not lower), the read goes
        on from where the last one stopped instead of starting over (`_Scan`), adding to the last answer's dict. The
        answer is shared, not to be changed, and holds until the next read of ``log``."""
        if self.batches is None:
            return values_below_hw(log)
        start, hw = log.log_start_offset, log.high_watermark
        segments = tuple(map(_file_bytes, log.segments))
        last = self._scans.get(id(log))
        scan = None
        if last is not None and last.log is log and last.start == start:
            if last.hw == hw and last.segments == segments:
                return last.values
            scan = last.read_on(hw, segments, self.batches)
        if scan is None:
            scan = _Scan.from_start(log, start, hw, segments, self.batches)  # the bytes just read, not read again
        self._scans[id(log)] = scan
        return scan.values

    def _stopped(self, broker_id: int, msg: Any) -> None:
        if not msg.controlled:
            return
        for tp in self.partitions:
            state = zk_partition_state(self.sim, tp)
            if state is not None and state.leader == broker_id:
                self.stop_violations.append(
                    f"{tp.topic}-{tp.partition}: b{broker_id}'s controlled shutdown succeeded at "
                    f"{self.sim.now - START_MS:.0f} ms but it still leads (ISR {list(state.isr)})")

    def check(self) -> list[str]:
        sim = self.sim
        out = self.stop_violations + sim.zombie_writes + sim.stale_applied
        acked = self._acked_by_partition()
        for tp in self.partitions:
            name = f"{tp.topic}-{tp.partition}"
            hosted = {b: hosted_partition(sim, b, tp) for b in sim.brokers}  # nothing runs during a check
            for b, p in hosted.items():
                if p is not None and p.is_leader:
                    first = self.epoch_leaders.setdefault((tp, p.leader_epoch), b)
                    if first != b:
                        out.append(f"{name}: leader epoch {p.leader_epoch} led by b{first} and b{b}")
            state = zk_partition_state(sim, tp)
            if state is None:
                continue
            epoch, leader, isr = state.leader_epoch, state.leader, list(state.isr)
            if epoch < self.zk_epochs.get(tp, -1):
                out.append(f"{name}: leader epoch went back from {self.zk_epochs[tp]} to {epoch}")
            self.zk_epochs[tp] = epoch
            if leader >= 0 and leader not in isr:
                out.append(f"{name}: leader b{leader} not in ISR {isr}")
            if not set(isr) <= set(self.assignment[tp]):
                out.append(f"{name}: ISR {isr} not within replicas {list(self.assignment[tp])}")
            acks = [group.get(tp, ()) for group in acked]
            replicas: dict[int, tuple[int, dict[int, str | None]]] = {}
            for b in isr:
                p = hosted[b] if b in hosted else hosted_partition(sim, b, tp)
                if p is None or p.log is None or not (any(acks) or self.clients):
                    continue
                try:
                    values = self._below_hw(p.log)
                except ProtocolError as e:  # a torn batch its recovery kept (a power loss: sim/disk.py)
                    out.append(f"{name}: ISR replica b{b} holds a corrupt batch below its HW: {e}")
                    continue
                except OSError:  # its log dir failed (sim/disk.py): unreadable, to Kafka too, until the broker halts
                    continue
                hw = p.log.high_watermark
                replicas[b] = (hw, values)
                # the scan the values are (fast path): while it is the log's scan, its values are what they were
                scan = self._scans.get(id(p.log)) if self.batches is not None else None
                for i, group in enumerate(acks):
                    key = (b, tp, i)
                    verified = self._verified.get(key)
                    # after a check that found every ack below its scan's high watermark in that scan, only the acks
                    # since and those it found at or above that watermark, while the values below it are that scan's:
                    # the same scan (its values and watermark do not change while it is the log's: `_below_hw`), or
                    # one that read on from it in order (`_Scan.read_on` shares its dict and only adds above it) --
                    # those found would be found again. Else every ack.
                    if (scan is not None and verified is not None and verified[0].values is scan.values
                            and (verified[0] is scan or scan.ordered)):
                        todo: Iterable[int] = [*verified[2], *range(verified[1], len(group))]
                    else:
                        todo = range(len(group))
                    clean = True
                    above: list[int] = []  # the acks at or above the high watermark: looked up at the next check
                    for j in todo:
                        ack = group[j]
                        if ack.offset >= hw:
                            above.append(j)
                            continue
                        found = values.get(ack.offset)
                        if found != ack.value:
                            clean = False
                            if sim.lost_to_power(tp, ack.answered_ms) is None:
                                out.append(f"{name}: acknowledged {ack.value!r} at offset {ack.offset}, ISR replica "
                                           f"b{b} has {found!r} (its HW {hw})")
                    if clean and scan is not None:
                        self._verified[key] = (scan, len(group), tuple(above))
            if self.clients is not None:
                out += self.clients.check_replicas(name, replicas)
        if self.clients is not None:
            out += self.clients.check()
        if self.txns is not None:
            out += self.txns.check(lambda b, tp: hosted_partition(sim, b, tp))
        if self.groups is not None:
            out += self.groups.check()
        for o in self.client.outstanding.values():
            # from when the leader could read it: a paused leader reads it at its resume (seed 277)
            if sim.now - o.sent_ms - sim.paused_ms(o.leader, o.sent_ms) > PRODUCE_TIMEOUT_MS + ANSWER_SLACK_MS:
                out.append(f"produce {o.value!r} to b{o.leader} unanswered after {sim.now - o.sent_ms:.0f} ms")
        out += self._committed_but_waiting()
        # the answers' findings depend on the answer alone: each looked at once, the findings so far reported again
        latencies = self.client.latencies
        for took, healthy_since, sent, value, error in latencies[self._latencies_seen:]:
            if healthy_since is not None and sent - healthy_since >= HEALTHY_SETTLE_MS and took > HEALTHY_BOUND_MS:
                self._slow_answers.append(f"produce {value!r} answered {error} after {took:.0f} ms with the cluster "
                                          f"healthy")
        self._latencies_seen = len(latencies)
        out += self._slow_answers
        for o in self.client.outstanding.values():
            since = o.healthy_since_ms
            if (since is not None and sim.last_fault_ms - START_MS == since and o.sent_ms - START_MS - since
                    >= HEALTHY_SETTLE_MS and sim.now - o.sent_ms > HEALTHY_BOUND_MS):
                out.append(f"produce {o.value!r} unanswered after {sim.now - o.sent_ms:.0f} ms with the cluster "
                           f"healthy")
        answers = self.client.answers
        for tp, value, error in answers[self._answers_seen:]:
            if error == "UNKNOWN_SERVER_ERROR":
                self._unknown_errors.append(f"{tp.topic}-{tp.partition}: produce {value!r} answered "
                                            f"UNKNOWN_SERVER_ERROR")
        self._answers_seen = len(answers)
        out += self._unknown_errors
        out += self._epoch_entries_past_the_log_end()
        if self.admin is not None:
            out += self.admin.check()
        if self.rejoin is not None:
            out += self.rejoin.check(self.partitions + (self.admin.live_partitions() if self.admin is not None else []))
        if self.hostile is not None:
            out += self.hostile.check()
        if self.loads is not None:
            out += self.loads.check()
        return out

    def _epoch_entries_past_the_log_end(self, ordered: bool = False) -> list[str]:
        """Every live broker's fetching followers whose epoch cache ends at or past their log end, in the order of
        the shards' names and then of the partitions. That order is only needed for a finding: the look at every
        step goes in the dicts' order, and goes again ``ordered`` once it finds one."""
        out = []
        for b, broker in self.sim.brokers.items():
            rt = broker.rt
            if rt is None or broker.paused:
                continue
            if ordered:
                shards = [actor for name, actor in sorted(rt.instances.items())
                          if name.startswith(names.SHARD_PREFIX)]
            else:
                # the shards' names, looked for once per incarnation (its shards are spawned with it)
                named = self._shard_names.get(b)
                if named is None or named[0] != broker.incarnation:
                    named = self._shard_names[b] = (broker.incarnation, [
                        name for name in rt.instances if name.startswith(names.SHARD_PREFIX)])
                shards = [rt.instances.get(name) for name in named[1]]
            for actor in shards:
                rm = getattr(actor, "rm", None)
                if rm is None:
                    continue
                states = rm.replica_fetcher_manager.fetch_states.items()
                for tp, state in sorted(states) if ordered else states:
                    p = rm.online_partition(tp)
                    log = None if p is None or p.is_leader or not state.is_ready_for_fetch else p.log
                    entries = () if log is None else log.leader_epoch_entries
                    # an empty log (retention deleted all of it) keeps its last epoch at the log start offset
                    # (LeaderEpochFileCache.truncateFromStart): not an epoch led without writing
                    if entries and entries[-1][1] >= log.log_end_offset > log.log_start_offset:
                        if not ordered:
                            return self._epoch_entries_past_the_log_end(ordered=True)
                        out.append(f"{tp.topic}-{tp.partition}: follower b{b} fetches from b{state.leader_id} with "
                                   f"leader epoch {entries[-1][0]} starting at its log end {log.log_end_offset} in "
                                   f"its epoch cache (an epoch it led without writing, not trimmed)")
        return out

    def _acked_by_partition(self) -> tuple[dict[TopicPartition, list[Any]], ...]:
        """Every record acknowledged with acks=all (`_acked`), grouped by partition, one group per ack list (the
        plain producer's, then the idempotent one's), each in the list's order. The lists only grow: each step groups
        only the acks it has not grouped yet."""
        for i, acks in enumerate(self._ack_lists()):
            group = self._acks_by_tp[i]
            for a in acks[self._acks_grouped[i]:]:
                group.setdefault(a.tp, []).append(a)
            self._acks_grouped[i] = len(acks)
        return self._acks_by_tp

    def _ack_lists(self) -> tuple[list[Any], ...]:
        """The lists of records acknowledged with acks=all: the plain producer's, and the idempotent one's."""
        if self.clients is None:
            return (self.client.acks,)
        return self.client.acks, self.clients.clients.idempotent.acks

    def _acked(self) -> list[Any]:
        """Every record acknowledged with acks=all: the plain producer's and the idempotent one's."""
        return [a for acks in self._ack_lists() for a in acks]

    def _final_logs(self, known: dict[TopicPartition, dict[int, str | None]]
                    ) -> dict[TopicPartition, tuple[int, dict[int, str | None]]]:
        """Each partition's leader and its whole log (to its end), by offset (-1 and nothing without a leader)."""
        out: dict[TopicPartition, tuple[int, dict[int, str | None]]] = {}
        for tp in self.partitions:
            leader = zk_partition_leader(self.sim, tp)
            p = hosted_partition(self.sim, leader, tp) if leader >= 0 else None
            if p is None or p.log is None:
                out[tp] = (-1, {})
            elif tp in known:
                out[tp] = (leader, known[tp])
            else:
                try:
                    out[tp] = (leader, values_below_hw(p.log, self.batches, end=p.log.log_end_offset))
                except (OSError, ProtocolError):  # a failed log dir, a torn batch: check_final reports what is wrong
                    out[tp] = (leader, {})
        return out

    def _committed_but_waiting(self, final: bool = False) -> list[str]:
        """Outstanding produces whose record has been below the high watermark of the leader they were sent to for
        ANSWER_SLACK_MS (seen at two checks), or at all at the end (the cluster quiet for SETTLE_MS by then)."""
        sim, out = self.sim, []
        waiting = [o for o in self.client.outstanding.values() if sim.now - o.sent_ms > ANSWER_SLACK_MS]
        for key in [k for k in self.committed_at if k not in self.client.outstanding]:
            del self.committed_at[key]
        for tp in {o.tp for o in waiting}:
            by_leader: dict[int, set[str]] = {}
            for o in waiting:
                if o.tp == tp:
                    by_leader.setdefault(o.leader, set()).add(o.value)
            for leader, values in sorted(by_leader.items()):
                p = hosted_partition(sim, leader, tp)
                if p is None or p.log is None or not p.is_leader:
                    continue
                try:
                    below = self._below_hw(p.log)
                except (OSError, ProtocolError):  # a failed log dir, a torn batch: check() reports what is wrong
                    continue
                committed = {v: offset for offset, v in below.items() if v in values}
                for value, offset in sorted(committed.items(), key=lambda kv: kv[1]):
                    since = self.committed_at.setdefault(value, sim.now)
                    if final or sim.now - since >= ANSWER_SLACK_MS:
                        out.append(f"{tp.topic}-{tp.partition}: produce {value!r} at offset {offset} below leader "
                                   f"b{leader}'s high watermark {p.log.high_watermark} since "
                                   f"{since - START_MS:.0f} ms, still unanswered")
        return out

    def settled(self) -> bool:
        """The cluster as the final checks want it, so the settling can end early: every broker serving, every
        partition's ISR in ZooKeeper all its replicas, its leader there hosting it as leader at ZooKeeper's epoch,
        each internal partition loaded by its leader's coordinator, and no produce waiting for an answer (a parked one
        keeps the settling going to its end: the final check then names it)."""
        sim = self.sim
        if self.client.outstanding or not all(b.serving and not b.paused for b in sim.brokers.values()):
            return False
        if self.clients is not None and self.clients.clients.waiting():
            return False
        if self.txns is not None and not self.txns.txns.producer.idle():
            return False
        if self.groups is not None and self.groups.group.stable() is not None:
            return False
        if self.admin is not None and not self.admin.settled():
            return False
        if self.hostile is not None and not self.hostile.client.idle():
            return False
        if self.loads is not None and not self.loads.settled():
            return False
        for tp in self.partitions:
            state = zk_partition_state(sim, tp)
            if state is None or sorted(state.isr) != sorted(self.assignment[tp]) or state.leader < 0:
                return False
            p = hosted_partition(sim, state.leader, tp)
            if p is None or not p.is_leader or p.leader_epoch != state.leader_epoch:
                return False
        return True

    def check_final(self, read_to_end: bool = True) -> list[str]:
        """Nothing acknowledged is lost: with every broker up and every link healed, the leader has it all.
        ``read_to_end``: whether the read_committed consumer read every partition to its end (sim/transactions.py)."""
        out = self.check()
        if self.txns is not None:
            out += self.txns.check_final(lambda b, tp: hosted_partition(self.sim, b, tp),
                                         {tp: zk_partition_leader(self.sim, tp) for tp in self.partitions},
                                         read_to_end)
        out += [v for v in self._committed_but_waiting(final=True) if v not in out]
        # fast path: each leader's log read once to its end (the batches mostly parsed already), where value_at
        # reads and translates from each acknowledged offset (a twentieth of a seed); the same value either way
        leader_values: dict[TopicPartition, dict[int, str | None]] = {}
        for ack in self._acked():
            leader = zk_partition_leader(self.sim, ack.tp)
            p = hosted_partition(self.sim, leader, ack.tp) if leader >= 0 else None
            if p is None or p.log is None:
                found = None
            elif self.batches is None or ack.offset < p.log.log_start_offset:
                found = value_at(p.log, ack.offset)
            else:
                if ack.tp not in leader_values:
                    try:
                        leader_values[ack.tp] = values_below_hw(p.log, self.batches, end=p.log.log_end_offset)
                    except ProtocolError as e:  # a torn batch its recovery kept (a power loss: sim/disk.py)
                        out.append(f"{ack.tp.topic}-{ack.tp.partition}: leader b{leader} holds a corrupt batch: {e}")
                        leader_values[ack.tp] = {}
                    except OSError:  # its log dir failed: nothing can be read of it
                        leader_values[ack.tp] = {}
                found = leader_values[ack.tp].get(ack.offset)
            if found != ack.value and self.sim.lost_to_power(ack.tp, ack.answered_ms) is None:
                out.append(f"{ack.tp.topic}-{ack.tp.partition}: acknowledged {ack.value!r} at offset {ack.offset}, "
                           f"leader b{leader} has {found!r}")
        if self.clients is not None:
            out += self.clients.check_final(self._final_logs(leader_values))
        if self.groups is not None:
            out += self.groups.check_final()
        for tp in self.partitions:
            state = zk_partition_state(self.sim, tp)
            isr = [] if state is None else sorted(state.isr)
            if isr != sorted(self.assignment[tp]):
                out.append(f"{tp.topic}-{tp.partition}: ISR {isr} at the end, not every replica "
                           f"{sorted(self.assignment[tp])}")
        if self.admin is not None:
            out += self.admin.check_final()
        if self.hostile is not None:
            out += self.hostile.check_final()
        if self.loads is not None:
            out += [v for v in self.loads.check_final() if v not in out]
        return out
