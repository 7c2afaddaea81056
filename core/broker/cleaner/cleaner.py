"""kafka.log.Cleaner: clean one log's cleanable section into ``.cleaned`` segments.

``clean_log`` is Cleaner.doClean for a `CleaningPlan`: build the offset map (key → latest offset) over the dirty
section [first dirty, first uncleanable) until the map is full (load factor), group the segments below the map's end
by size (groupSegmentsBySize) and recopy each group into one ``<base>.log.cleaned`` segment with its indexes
(cleanSegments / cleanInto), keeping a record only if no later offset of its key is in the map, and a tombstone only
while its segment was last modified after the delete horizon. Records of aborted transactions go, and transaction
markers once their transaction's batches are gone and their segment is past the delete horizon
(core/broker/cleaner/transactions.py, CleanedTransactionMetadata). Every batch keeps its producer id, epoch, base
sequence and last offset; the last batch of each active producer is kept even when it has no record left (an empty
batch, MemoryRecords' RETAIN_EMPTY), so a producer's state survives the cleaning. The segments are swapped into the
log elsewhere (core/broker/cleaner/swap.py, in the shard that owns the log).

Reads only files of non-active segments, which nothing but a truncation or a deletion changes, and ``.txnindex``
entries of later segments overlapping them (the active one's may grow meanwhile, but only with transactions begun
at or after the first uncleanable offset, which the cleaning never reads); the swap checks that the log still holds
exactly the segments read (their fingerprints) before using the result.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence

import attrs

from core.broker.cleaner.offset_map import SkimpyOffsetMap
from core.broker.cleaner.transactions import AbortedTransactions, CleanedTransactionMetadata
from core.broker.log import CLEANED_FILE_SUFFIX
from core.broker.log_segment import LOG_FILE_SUFFIX, LogSegment, file_name
from core.broker.offset_index import OffsetIndex, TimeIndex
from core.disk import OS_DISK, Disk
from messages.log_cleaner import CleaningPlan, SegmentFingerprint
from protocol import compression
from protocol.errors import CorruptRecordError
from protocol.primitives import read_uvarint
from protocol.records import (
    CONTROL_BIT,
    HEADER_SIZE,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_BIT,
    TRANSACTIONAL_BIT,
    Record,
    RecordBatch,
    build_batch,
    read_batch_header,
    read_records,
)

READ_CHUNK_BYTES = 256 * 1024  # log.cleaner.io.buffer.size 512 KiB / 1 thread / 2 (a read and a write buffer)
INT_MAX = 2**31 - 1


class CleaningAbortedError(Exception):
    """kafka.common.LogCleaningAbortedException: the cleaning stops, its ``.cleaned`` files are dropped."""


@attrs.define
class CleanerStats:
    """kafka.log.CleanerStats (times from ``clock``, seconds)."""

    clock: Callable[[], float] = time.monotonic
    start: float = 0.0
    map_done: float = 0.0
    end: float = 0.0
    bytes_read: int = 0
    bytes_written: int = 0
    map_bytes_read: int = 0
    map_messages_read: int = 0
    messages_read: int = 0
    messages_written: int = 0
    invalid_messages_read: int = 0
    buffer_utilization: float = 0.0

    def __attrs_post_init__(self) -> None:
        self.start = self.clock()

    @property
    def elapsed_secs(self) -> float:
        return max(0.0, self.end - self.start)

@attrs.frozen
class CleanResult:
    """What Cleaner.clean returns (the first offset not cleaned) and the groups it wrote, each replaced by one cleaned
    segment named after the group's first base offset."""

    end_offset: int
    groups: tuple[tuple[int, ...], ...]
    stats: CleanerStats


# ------------------------------------------------------------------------------------------------ segment files


class _CleanedOffsetIndex(OffsetIndex):
    __slots__ = ()
    SUFFIX = OffsetIndex.SUFFIX + CLEANED_FILE_SUFFIX


class _CleanedTimeIndex(TimeIndex):
    __slots__ = ()
    SUFFIX = TimeIndex.SUFFIX + CLEANED_FILE_SUFFIX


class CleanedSegment(LogSegment):
    """LogCleaner.createNewCleanedSegment: a segment whose three files carry the ``.cleaned`` suffix, written with
    LogSegment's own append (index entries every index.interval.bytes, the time index's max timestamps)."""

    def __init__(self, directory: str, base_offset: int, index_interval_bytes: int, created_ms: int | None,
                 disk: Disk = OS_DISK) -> None:
        super().__init__(directory, base_offset, index_interval_bytes, created_ms, disk)
        self.offset_index = _CleanedOffsetIndex(directory, base_offset, disk)
        self.time_index = _CleanedTimeIndex(directory, base_offset, disk)
        # never the live segment's .txnindex (create() would remove it from under the shard): Log.replace_segments
        # writes the cleaned segment's aborted transactions under this name
        self.txn_index.path += CLEANED_FILE_SUFFIX

    @property
    def log_path(self) -> str:
        return os.path.join(self.dir, file_name(self.base_offset, LOG_FILE_SUFFIX + CLEANED_FILE_SUFFIX))


def last_modified_ms(segment: LogSegment) -> int:
    """LogSegment.lastModified: the ``.log`` file's modification time."""
    return int(segment.disk.getmtime(segment.log_path) * 1000)


def last_batch_header(segment: LogSegment) -> bytes:
    """The header of the segment's last whole batch (b"" if none), found from its last offset index entry."""
    entry = segment.offset_index.last_entry() if not segment.active else None
    position = entry[1] if entry is not None and entry[1] <= segment.size else 0
    last = b""
    for _frame, header in segment.headers(position):
        last = header
    return bytes(last)


def fingerprint(segment: LogSegment) -> SegmentFingerprint:
    return SegmentFingerprint(segment.base_offset, segment.size, last_batch_header(segment).hex(),
                              last_modified_ms(segment))


def same_segment(segment: LogSegment, expected: SegmentFingerprint) -> bool:
    """The segment holds what the cleaner read: same base, size and last batch header (a truncation and a rewrite
    differ in the last batch's offsets, epoch or CRC)."""
    return (segment.base_offset == expected.base_offset and segment.size == expected.size and not segment.active
            and last_batch_header(segment).hex() == expected.last_header)


def batches(segment: LogSegment, check_done: Callable[[], None], start_position: int = 0,
            chunk_bytes: int = READ_CHUNK_BYTES) -> Iterator[tuple[list[RecordBatch], int]]:
    """The segment's whole batches, a read chunk at a time: (the chunk's batches, its bytes). A batch larger than a
    chunk is read whole (Cleaner.growBuffers). A short or corrupt file aborts the cleaning."""
    position, end = start_position, segment.size
    while position < end:
        check_done()
        data = segment.read(position, min(chunk_bytes, end - position))
        out: list[RecordBatch] = []
        pos = 0
        while len(data) - pos >= HEADER_SIZE:
            size = LOG_OVERHEAD + int.from_bytes(data[pos + 8:pos + 12], "big", signed=True)
            if size < HEADER_SIZE or len(data) - pos < size:
                break
            out.append(read_batch_header(data, pos))
            pos += size
        if not out:
            head = segment.read(position, HEADER_SIZE)
            if len(head) < HEADER_SIZE:
                raise CleaningAbortedError(f"{segment.log_path} ends inside a batch at {position}")
            size = LOG_OVERHEAD + int.from_bytes(head[8:12], "big", signed=True)
            if size < HEADER_SIZE or position + size > end:
                raise CleaningAbortedError(f"{segment.log_path}: a batch of {size} bytes at {position} overruns it")
            out.append(read_batch_header(segment.read(position, size)))
            pos = size
        yield out, pos
        position += pos


# (offset delta, key, has a value) of each record of a batch, read without building Record values: the cleaner
# reads every record twice (the map, the recopy) and keeps few of them, so it parses only what it decides on
Scanned = tuple[int, bytes | None, bool]


def scan_records(batch: RecordBatch) -> list[Scanned]:
    """The (offset delta, key, has a value) of every record of ``batch`` (decompressed); CorruptRecordError when
    they do not add up to its records count."""
    body = compression.decompress(batch.compression, batch.raw[HEADER_SIZE:])
    out: list[Scanned] = []
    pos, n = 0, len(body)
    try:
        for _ in range(batch.records_count):
            # the varints inline for their one-byte form (nearly every length, offset delta and key size)
            raw = body[pos]
            p = pos + 1
            if raw >= 0x80:
                raw, p = read_uvarint(body, pos)
            end = p + ((raw >> 1) ^ -(raw & 1))
            p += 1  # attributes
            while body[p] >= 0x80:  # timestamp delta (a varlong, skipped)
                p += 1
            p += 1
            raw = body[p]
            p += 1
            if raw >= 0x80:
                raw, p = read_uvarint(body, p - 1)
            offset_delta = (raw >> 1) ^ -(raw & 1)
            raw = body[p]
            p += 1
            if raw >= 0x80:
                raw, p = read_uvarint(body, p - 1)
            if raw & 1:
                key = None
            else:
                key = body[p:p + (raw >> 1)]
                p += raw >> 1
            out.append((offset_delta, key, not body[p] & 1))
            if end <= pos or end > n:
                raise CorruptRecordError(f"record {len(out) - 1} of {batch.records_count} overruns its batch")
            pos = end
    except IndexError:
        raise CorruptRecordError(f"a record of {batch.records_count} runs past the end of the batch") from None
    if pos != n:
        raise CorruptRecordError(f"{n - pos} bytes after the batch's {batch.records_count} records")
    return out


# ------------------------------------------------------------------------------------------------- offset map


def build_offset_map(segments: Sequence[LogSegment], start: int, end: int, offset_map: SkimpyOffsetMap,
                     load_factor: float, stats: CleanerStats, aborted: AbortedTransactions | None = None,
                     throttle: Callable[[int], None] = lambda n: None,
                     check_done: Callable[[], None] = lambda: None, chunk_bytes: int = READ_CHUNK_BYTES) -> bool:
    """Cleaner.buildOffsetMap: every keyed record of the segments overlapping [start, end) at or after ``start``,
    until the map holds slots × load factor keys (then True: the segment being read is mapped only partly, and the
    map's latest offset says how far). Batches of aborted transactions (the ``.txnindex`` entries overlapping the
    section) are not mapped."""
    offset_map.clear()
    aborted = aborted if aborted is not None else AbortedTransactions(segments)
    txn = CleanedTransactionMetadata(aborted.collect(start, end))
    dirty = segments_in(segments, start, end)
    max_desired = int(offset_map.slots * load_factor)
    for i, segment in enumerate(dirty):
        next_start = dirty[i + 1].base_offset if i + 1 < len(dirty) else end
        for chunk, size in batches(segment, check_done, chunk_bytes=chunk_bytes):
            throttle(size)
            for batch in chunk:
                if batch.is_control:
                    txn.on_control_batch_read(batch)
                    stats.map_messages_read += 1
                elif txn.on_batch_read(batch):
                    stats.map_messages_read += batch.records_count
                else:
                    base = batch.base_offset
                    for offset_delta, key, _has_value in scan_records(batch):
                        if key is not None and base + offset_delta >= start:
                            if offset_map.size >= max_desired:
                                return True
                            offset_map.put(key, base + offset_delta)
                        stats.map_messages_read += 1
                if batch.last_offset >= start:
                    offset_map.update_latest_offset(batch.last_offset)
            stats.map_bytes_read += size
        # offsets with no batch at the end of the segment (an earlier cleaning removed them) count as mapped
        offset_map.update_latest_offset(next_start - 1)
    return False


def segments_in(segments: Sequence[LogSegment], start: int, end: int) -> list[LogSegment]:
    """Log.logSegments(from, to): the segment holding ``start`` (the last one beginning at or before it) and those
    after it beginning before ``end``."""
    if start >= end:
        return []
    out = []
    for i, segment in enumerate(segments):
        if segment.base_offset >= end:
            break
        if i + 1 < len(segments) and segments[i + 1].base_offset <= start:
            continue
        out.append(segment)
    return out


# ------------------------------------------------------------------------------------------------ grouping


def group_segments_by_size(segments: Sequence[LogSegment], max_size: int, max_index_size: int,
                           first_uncleanable_offset: int) -> list[list[LogSegment]]:
    """Cleaner.groupSegmentsBySize: consecutive segments whose log bytes stay within ``max_size`` (segment.bytes),
    each index's bytes within ``max_index_size`` (segment.index.bytes), and whose offsets fit one segment's relative
    offsets (Int.MaxValue)."""
    grouped: list[list[LogSegment]] = []
    rest = list(segments)
    while rest:
        group = [rest.pop(0)]
        log_size = group[0].size
        index_size = group[0].offset_index.entries * 8
        time_index_size = group[0].time_index.entries * 12
        while rest:
            nxt = rest[0]
            last_offset = rest[1].base_offset - 1 if len(rest) > 1 else first_uncleanable_offset - 1
            if not (log_size + nxt.size <= max_size
                    and index_size + nxt.offset_index.entries * 8 <= max_index_size
                    and time_index_size + nxt.time_index.entries * 12 <= max_index_size
                    and last_offset - group[-1].base_offset <= INT_MAX):
                break
            group.append(rest.pop(0))
            log_size += nxt.size
            index_size += nxt.offset_index.entries * 8
            time_index_size += nxt.time_index.entries * 12
        grouped.append(group)
    return grouped


# ------------------------------------------------------------------------------------------------ recopying


def _retained_batch(batch: RecordBatch, records: list[Record]) -> bytes:
    """MemoryRecords.buildRetainedRecordsInto: the kept records in a batch with the original's base offset, last
    offset, producer fields, attributes, leader epoch and compression; timestamps re-based on the first kept one
    (a LogAppendTime batch's records all read as its max timestamp)."""
    log_append = bool(batch.attributes & TIMESTAMP_TYPE_BIT)
    stamps = [batch.max_timestamp if log_append else batch.first_timestamp + r.timestamp_delta for r in records]
    first = stamps[0]
    kept = [attrs.evolve(r, timestamp_delta=ts - first) for r, ts in zip(records, stamps, strict=True)]
    return build_batch(kept, base_offset=batch.base_offset, first_timestamp=first,
                       compression_codec=batch.compression, partition_leader_epoch=batch.partition_leader_epoch,
                       producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
                       base_sequence=batch.base_sequence, attributes=batch.attributes,
                       last_offset_delta=batch.last_offset_delta)


def _empty_batch(batch: RecordBatch) -> bytes:
    """DefaultRecordBatch.writeEmptyHeader: no record, the original's offsets, producer fields, leader epoch and max
    timestamp, uncompressed, first timestamp -1."""
    return build_batch([], base_offset=batch.base_offset, first_timestamp=-1,
                       partition_leader_epoch=batch.partition_leader_epoch, producer_id=batch.producer_id,
                       producer_epoch=batch.producer_epoch, base_sequence=batch.base_sequence,
                       attributes=batch.attributes & (TIMESTAMP_TYPE_BIT | TRANSACTIONAL_BIT | CONTROL_BIT),
                       last_offset_delta=batch.last_offset_delta, max_timestamp=batch.max_timestamp)


def clean_into(source: LogSegment, dest: LogSegment, offset_map: SkimpyOffsetMap, retain_deletes: bool,
               producer_last_offsets: frozenset[int], stats: CleanerStats, txn: CleanedTransactionMetadata,
               throttle: Callable[[int], None] = lambda n: None,
               check_done: Callable[[], None] = lambda: None, chunk_bytes: int = READ_CHUNK_BYTES) -> None:
    """Cleaner.cleanInto: recopy ``source`` into ``dest``, a read chunk at a time. A batch of an aborted
    transaction goes whole, a marker once ``txn`` lets it and its segment is past the delete horizon
    (checkBatchRetention's DELETE); a producer's last batch stays, emptied if it would go (RETAIN_EMPTY); of the
    others only the records `_should_retain` keeps (DELETE_EMPTY)."""
    latest = offset_map.latest_offset
    for chunk, size in batches(source, check_done, chunk_bytes=chunk_bytes):
        throttle(size)
        out: list[bytes] = []
        largest_offset, max_ts, offset_of_max = -1, -1, -1
        for batch in chunk:
            stats.bytes_read += len(batch.raw)
            # checkBatchRetention: markers age out as tombstones do, and only once their transaction's batches are
            # gone; the last batch of an active producer stays (even emptied) for its sequence
            if batch.is_control:
                discard = txn.on_control_batch_read(batch) and not retain_deletes
            else:
                discard = txn.on_batch_read(batch)
            retain_empty = batch.producer_id >= 0 and batch.last_offset in producer_last_offsets
            if discard and not retain_empty:
                continue
            records = [] if discard else scan_records(batch)
            stats.messages_read += len(records)
            kept = [i for i, r in enumerate(records)
                    if _should_retain(r, batch, offset_map, latest, retain_deletes, stats)]
            if kept and len(kept) == len(records):
                data = batch.raw
            elif kept:
                full = read_records(batch)
                data = _retained_batch(batch, [full[i] for i in kept])
            elif retain_empty:
                data = _empty_batch(batch)
            else:
                continue
            stats.messages_written += len(kept)
            stats.bytes_written += len(data)
            out.append(data)
            largest_offset = batch.last_offset
            if batch.max_timestamp > max_ts:
                max_ts, offset_of_max = batch.max_timestamp, batch.last_offset
        if out:
            data = b"".join(out)
            dest.append(data, largest_offset, max_ts, offset_of_max)
            throttle(len(data))


def _should_retain(record: Scanned, batch: RecordBatch, offset_map: SkimpyOffsetMap, latest: int,
                   retain_deletes: bool, stats: CleanerStats) -> bool:
    """Cleaner.shouldRetainRecord: past the map's end, kept; a key's record only if it is the key's latest offset,
    and a tombstone only while deletes are retained; a record without a key is invalid in a compacted log (dropped)."""
    offset_delta, key, has_value = record
    offset = batch.base_offset + offset_delta
    if offset > latest:
        return True
    if key is None:
        stats.invalid_messages_read += 1
        return False
    return offset >= offset_map.get(key) and (has_value or retain_deletes)


def clean_segments(aborted: AbortedTransactions, group: Sequence[LogSegment], plan: CleaningPlan,
                   offset_map: SkimpyOffsetMap, last_modified: dict[int, int], stats: CleanerStats,
                   index_interval_bytes: int, throttle: Callable[[int], None] = lambda n: None,
                   check_done: Callable[[], None] = lambda: None, chunk_bytes: int = READ_CHUNK_BYTES) -> None:
    """Cleaner.cleanSegments: one ``.cleaned`` segment from the group, named after its first segment, flushed, its
    modification time the group's last segment's (so the delete horizon does not move). Each segment is read with
    the transaction state of the aborted transactions overlapping it ([its base, the next one's base or the map's
    end)); the ABORT markers kept with batches of theirs write their transaction to the cleaned ``.txnindex``."""
    first = group[0]
    cleaned = CleanedSegment(first.dir, first.base_offset, index_interval_bytes, first.created_ms, first.disk)
    cleaned.create()
    producers = frozenset(plan.producer_last_offsets)
    try:
        for i, segment in enumerate(group):
            upper = group[i + 1].base_offset if i + 1 < len(group) else offset_map.latest_offset + 1
            txn = CleanedTransactionMetadata(aborted.collect(segment.base_offset, upper), cleaned.txn_index)
            retain_deletes = last_modified[segment.base_offset] > plan.delete_horizon_ms
            clean_into(segment, cleaned, offset_map, retain_deletes, producers, stats, txn, throttle, check_done,
                       chunk_bytes)
        cleaned.become_inactive()
        cleaned.flush()
        modified = last_modified[group[-1].base_offset] / 1000
        cleaned.disk.utime(cleaned.log_path, (modified, modified))
    except BaseException:
        cleaned.delete()
        raise


def clean_log(segments: Sequence[LogSegment], plan: CleaningPlan, index_interval_bytes: int,
              offset_map: SkimpyOffsetMap | None = None,
              throttle: Callable[[int], None] = lambda n: None, check_done: Callable[[], None] = lambda: None,
              clock: Callable[[], float] = time.monotonic, chunk_bytes: int = READ_CHUNK_BYTES) -> CleanResult:
    """Cleaner.doClean of ``plan`` over ``segments`` (the log's, in order; the active one may be among them and is
    never touched). Writes the ``.cleaned`` segments; the caller swaps them in (or deletes them on abort)."""
    stats = CleanerStats(clock)
    offset_map = offset_map if offset_map is not None else SkimpyOffsetMap(plan.map_memory)
    last_modified = {fp.base_offset: fp.last_modified_ms for fp in plan.segments}
    aborted = AbortedTransactions(segments)
    build_offset_map(segments, plan.first_dirty_offset, plan.first_uncleanable_offset, offset_map,
                     plan.load_factor, stats, aborted, throttle, check_done, chunk_bytes)
    end_offset = offset_map.latest_offset + 1
    stats.map_done = clock()
    candidates = [s for s in segments_in(segments, 0, end_offset) if not s.active]
    groups = group_segments_by_size(candidates, plan.segment_bytes, plan.segment_index_bytes,
                                    plan.first_uncleanable_offset)
    written: list[LogSegment] = []
    try:
        for group in groups:
            clean_segments(aborted, group, plan, offset_map, last_modified, stats, index_interval_bytes, throttle,
                           check_done, chunk_bytes)
            written.append(group[0])
    except BaseException:
        for first in written:
            delete_cleaned(first.dir, first.base_offset)
        raise
    stats.buffer_utilization = offset_map.utilization
    stats.end = clock()
    return CleanResult(end_offset, tuple(tuple(s.base_offset for s in g) for g in groups), stats)


def delete_cleaned(directory: str, base_offset: int) -> None:
    """Drop one cleaned segment's files (an aborted cleaning)."""
    CleanedSegment(directory, base_offset, 0, None).delete()
