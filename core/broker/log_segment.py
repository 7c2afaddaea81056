"""kafka.log.LogSegment: one ``%020d.log`` file of record batches exactly as Kafka writes them, with its ``.index``
and ``.timeindex`` (core/broker/offset_index.py) and its ``.txnindex`` of aborted transactions
(core/broker/transaction_index.py).

Batches are read from the file with ``os.pread``; the segment keeps only scalars in memory (size, next offset, max
timestamp) plus, while active, its index entries. Batch framing (baseOffset, batchLength, lastOffsetDelta at their
fixed places in the v2 header) is read here without building a `RecordBatch`; whole batches are checked with
protocol/records.py.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Callable, Iterator
from typing import Any

from crc32c import crc32c

from core.broker.offset_index import CorruptIndexError, OffsetIndex, TimeIndex
from core.broker.producer_state import REPLICATION, ProducerBatch, ProducerStateManager
from core.broker.transaction_index import AbortedTxn, TransactionIndex, TxnIndexSearchResult
from core.broker.transaction_index import CorruptIndexError as CorruptTxnIndexError
from core.disk import OS_DISK, Disk
from protocol.errors import ProtocolError
from protocol.records import (
    HEADER_SIZE,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_BIT,
    RecordBatch,
    batch_end_txn_marker,
    read_batch_header,
)

LOG_FILE_SUFFIX = ".log"
INDEX_FILE_SUFFIX = OffsetIndex.SUFFIX
TIME_INDEX_FILE_SUFFIX = TimeIndex.SUFFIX
DELETED_FILE_SUFFIX = ".deleted"
NO_TIMESTAMP = -1  # RecordBatch.NO_TIMESTAMP

# Fixed places in a v2 batch header (DefaultRecordBatch): what framing, indexing and the search need.
_FRAME = struct.Struct(">qiiB")  # baseOffset, batchLength, partitionLeaderEpoch, magic
_CRC_AT, _ATTRIBUTES_AT, _LAST_OFFSET_DELTA_AT, _MAX_TIMESTAMP_AT = 17, 21, 23, 35
_I32 = struct.Struct(">i")
_CHUNK = 65536  # a walk over the batches reads the .log this much at a time
_APPENDS_KEPT = 4  # the appends a segment remembers for translate_offset
_I64 = struct.Struct(">q")
_H16 = struct.Struct(">h")
_U32 = struct.Struct(">I")

# A batch's frame: (position in the segment, base offset, last offset, size in bytes)
Frame = tuple[int, int, int, int]


def file_name(base_offset: int, suffix: str) -> str:
    """Log.filenamePrefixFromOffset: the offset zero-padded to 20 digits."""
    return f"{base_offset:020d}{suffix}"


def frame_at(header: bytes | bytearray | memoryview, pos: int, position: int) -> Frame | None:
    """The frame of the batch whose header starts at ``header[pos:]``, or None if fewer than a v2 header's bytes
    remain or its length cannot be a batch."""
    if len(header) - pos < HEADER_SIZE:
        return None
    base, length, _epoch, _magic = _FRAME.unpack_from(header, pos)
    if length < HEADER_SIZE - LOG_OVERHEAD:
        return None
    last = base + _I32.unpack_from(header, pos + _LAST_OFFSET_DELTA_AT)[0]
    return position, base, last, LOG_OVERHEAD + length


def frames_in(data: bytes | bytearray | memoryview) -> Iterator[Frame]:
    """The whole batches in ``data`` (positions relative to it); stops at the first incomplete one. (`frame_at`
    inlined: a fetch's offset translation walks up to an index interval of batches, a tenth of a sim seed's log
    reads; tests/core/broker/test_log_segment.py holds it to frame_at's answers.)"""
    pos, n = 0, len(data)
    min_length = HEADER_SIZE - LOG_OVERHEAD
    unpack_frame, unpack_i32 = _FRAME.unpack_from, _I32.unpack_from
    while n - pos >= HEADER_SIZE:
        base, length, _epoch, _magic = unpack_frame(data, pos)
        size = LOG_OVERHEAD + length
        if length < min_length or pos + size > n:
            return
        yield pos, base, base + unpack_i32(data, pos + _LAST_OFFSET_DELTA_AT)[0], size
        pos += size


def set_log_append_time(buf: bytearray, pos: int, size: int, now_ms: int) -> None:
    """DefaultRecordBatch.setMaxTimestamp(LOG_APPEND_TIME, now): the timestamp type bit and maxTimestamp are
    covered by the CRC, so it is recomputed (Kafka does the same)."""
    attributes = _H16.unpack_from(buf, pos + _ATTRIBUTES_AT)[0] | TIMESTAMP_TYPE_BIT
    _H16.pack_into(buf, pos + _ATTRIBUTES_AT, attributes)
    _I64.pack_into(buf, pos + _MAX_TIMESTAMP_AT, now_ms)
    _U32.pack_into(buf, pos + _CRC_AT, crc32c(memoryview(buf)[pos + _ATTRIBUTES_AT:pos + size]))


def fsync_file(path: str, disk: Disk = OS_DISK) -> None:
    """FileChannel.force / MappedByteBuffer.force of one file: its written bytes reach the disk. A file that does
    not exist (an index with no entry yet) has nothing to force."""
    with contextlib.suppress(FileNotFoundError):
        disk.fsync_path(path)


def crc_valid(batch: RecordBatch) -> bool:
    """DefaultRecordBatch.isValid: the CRC-32C over attributes..end (what LogSegment.recover checks per batch)."""
    return crc32c(memoryview(batch.raw)[_ATTRIBUTES_AT:]) == batch.crc


class LogSegment:
    """kafka.log.LogSegment. ``next_offset`` and the timestamps are kept here; the Log decides when to roll."""

    __slots__ = ("dir", "disk", "base_offset", "index_interval_bytes", "offset_index", "time_index", "txn_index",
                 "created_ms", "size", "next_offset", "max_timestamp", "offset_of_max_timestamp", "_rolling_timestamp",
                 "_bytes_since_last_index_entry", "active", "_log_path", "_appended")

    def __init__(self, directory: str, base_offset: int, index_interval_bytes: int, created_ms: int | None,
                 disk: Disk = OS_DISK) -> None:
        self.dir = directory
        self.disk = disk
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.offset_index = OffsetIndex(directory, base_offset, disk)
        self.time_index = TimeIndex(directory, base_offset, disk)
        self.txn_index = TransactionIndex(directory, base_offset, disk)
        self.created_ms = created_ms
        self.size = 0
        self.next_offset = base_offset
        self.max_timestamp = NO_TIMESTAMP  # maxTimestampSoFar
        self.offset_of_max_timestamp = base_offset
        self._rolling_timestamp: int | None = None  # the first batch's max timestamp (rollingBasedTimestamp)
        self._bytes_since_last_index_entry = 0
        self.active = False
        self._log_path: str | None = None  # built at its first use: a broker may hold tens of thousands of segments
        # (base offset, position) of the first batch of each of the last appends, newest last: where translate_offset
        # may start its walk instead of at the index entry (a fetch mostly asks for what was appended lately)
        self._appended: list[tuple[int, int]] = []

    # ------------------------------------------------------------------------------------------------- files

    @property
    def log_path(self) -> str:
        # every read opens the file by it: built once, not at each read
        path = self._log_path
        if path is None:
            path = self._log_path = os.path.join(self.dir, file_name(self.base_offset, LOG_FILE_SUFFIX))
        return path

    def create(self, fresh_dir: bool = False) -> None:
        """A new empty segment (Log.roll): truncates whatever files of this name a crash left. Its index files
        appear with their first entry (or when it becomes inactive): a broker creating thousands of empty logs at
        once (a LeaderAndIsr) writes one file each, not three."""
        self.disk.write_file(self.log_path, b"")
        if not fresh_dir:
            for path in (self.offset_index.path, self.time_index.path, self.txn_index.path):
                with contextlib.suppress(FileNotFoundError):
                    self.disk.unlink(path)
        self.offset_index.init_empty()
        self.time_index.init_empty()
        self.active = True

    def is_empty_without_indexes(self, names: set[str]) -> bool:
        """An empty active segment with no index files (what a new log is): nothing to recover, it is ready. A
        ``.txnindex`` beside an empty ``.log`` (a power loss kept the index's append, not the log's) is recovered
        away like any other index."""
        if (os.path.basename(self.offset_index.path) in names or os.path.basename(self.time_index.path) in names
                or os.path.basename(self.txn_index.path) in names or self.disk.getsize(self.log_path)):
            return False
        self.offset_index.init_empty()
        self.time_index.init_empty()
        return True

    def load_trusted(self, next_offset: int,
                     producer_state_at: Callable[[int], ProducerStateManager] | None = None) -> None:
        """Open a segment before the recovery point: its size from the file, its max timestamp from the time
        index (what Kafka reads lazily). A txnindex failing its sanity check is rebuilt with the rest as
        Log.recoverSegment does: recovered on the producers' state at the segment's base offset
        (``producer_state_at``). Offset and time indexes missing or failing theirs are rebuilt alone: the txnindex
        of a segment below the recovery point was forced with it, and a cleaned segment's (a completed swap drops
        its other indexes) is the cleaner's, which a replay of the cleaned batches could not give again."""
        self.size = self.disk.getsize(self.log_path)
        self.next_offset = next_offset
        self.txn_index.load()
        try:
            self.txn_index.sanity_check(next_offset)
        except CorruptTxnIndexError:
            self._recover_on(producer_state_at)
            return
        if not (self.disk.exists(self.offset_index.path) and self.disk.exists(self.time_index.path)):
            self.recover(None)
            return
        try:
            self.offset_index.load(in_memory=False)
            self.time_index.load(in_memory=False)
            self.offset_index.check(next_offset, self.size)
            self.time_index.check(next_offset)
        except CorruptIndexError:
            self.recover(None)
            return
        last = self.time_index.last_entry()
        if last is not None:
            self.max_timestamp, self.offset_of_max_timestamp = last[0], self.base_offset + last[1]

    def load_clean(self, producer_state_at: Callable[[int], ProducerStateManager] | None = None) -> None:
        """Open the active segment of a log that was shut down cleanly (Kafka's loadSegments without recoverLog):
        its size from the file, its next offset and max timestamp read from its last index entries on
        (LogSegment.readNextOffset). Indexes failing their sanity check (a txnindex entry at or past the next
        offset too), or a tail that is not whole batches, are rebuilt by a recovery after all (Log.recoverSegment,
        on the producers' state at the segment's base offset: ``producer_state_at``)."""
        self.size = self.disk.getsize(self.log_path)
        self.txn_index.load()
        try:
            for index in (self.offset_index, self.time_index):
                if self.disk.exists(index.path):
                    index.load(in_memory=False)
                else:
                    index.init_empty()
            last_index = self.offset_index.last_entry()
            position = last_index[1] if last_index is not None else 0
            next_offset = self.base_offset if last_index is None else self.base_offset + last_index[0] + 1
            last_time = self.time_index.last_entry()
            if last_time is not None:
                self.max_timestamp, self.offset_of_max_timestamp = last_time[0], self.base_offset + last_time[1]
            end = position
            for (pos, _base, last, size), header in self.headers(position):
                next_offset, end = last + 1, pos + size
                timestamp = _I64.unpack_from(header, _MAX_TIMESTAMP_AT)[0]
                if timestamp > self.max_timestamp:
                    self.max_timestamp, self.offset_of_max_timestamp = timestamp, last
            if end != self.size:
                raise CorruptIndexError(f"{self.log_path} does not end with a whole batch")
            self.next_offset = next_offset
            self.offset_index.check(next_offset, self.size)
            self.time_index.check(next_offset)
            self.txn_index.sanity_check(next_offset)
        except (CorruptIndexError, CorruptTxnIndexError):
            self._recover_on(producer_state_at)

    def _recover_on(self, producer_state_at: Callable[[int], ProducerStateManager] | None) -> None:
        """Log.recoverSegment for a segment loaded without recovery whose indexes failed their check."""
        self.recover(producer_state_at(self.base_offset) if producer_state_at is not None else None)

    def flush(self) -> None:
        """LogSegment.flush: the file and both indexes forced to disk (the active segment's in-memory index
        entries written first)."""
        self.offset_index.flush()
        self.time_index.flush()
        for path in (self.log_path, self.offset_index.path, self.time_index.path):
            fsync_file(path, self.disk)
        self.txn_index.flush()

    def make_active(self) -> None:
        """The segment becomes the log's active one (after loading, or a truncation back into it)."""
        self.active = True
        self.offset_index.make_active()
        self.time_index.make_active()
        last = self.offset_index.last_entry()
        indexed_position = last[1] if last is not None else 0
        self._bytes_since_last_index_entry = max(0, self.size - indexed_position)

    def become_inactive(self) -> None:
        """LogSegment.onBecomeInactiveSegment: a last time-index entry for the max timestamp; memory released."""
        if self.max_timestamp >= 0:
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
        for path in (self.offset_index.path, self.time_index.path):
            self.disk.append_file(path, b"")  # an inactive segment always has both (a missing one is rebuilt on load)
        self.offset_index.make_inactive()
        self.time_index.make_inactive()
        self.active = False

    def close(self) -> None:
        """The active segment's index entries go to their files (no descriptor stays open between operations: a
        broker may host more logs than its file limit)."""
        self.offset_index.flush()
        self.time_index.flush()

    def delete(self) -> None:
        """LogSegment.deleteIfExists (Kafka renames to ``.deleted`` and unlinks after file.delete.delay.ms; the
        files go at once here)."""
        with contextlib.suppress(FileNotFoundError):
            self.disk.unlink(self.log_path)
        self.offset_index.delete()
        self.time_index.delete()
        self.txn_index.delete()

    # ------------------------------------------------------------------------------------------------ append

    def append(self, data: bytes | bytearray, largest_offset: int, largest_timestamp: int,
               offset_of_largest_timestamp: int) -> None:
        """LogSegment.append: one write of the validated batches; an index entry every index.interval.bytes.
        On a failed write the file is cut back to its old size and OSError propagates."""
        position = self.size
        # opened per append, by path: a log dir that has gone away (moved, unmounted) must fail the append, as the
        # broker's dir probe and the acknowledged-records guarantee expect, not write on through an old descriptor
        disk = self.disk
        fd = disk.open(self.log_path, os.O_WRONLY | os.O_APPEND)
        try:
            written = 0
            view = memoryview(data)
            while written < len(data):
                written += disk.write(fd, view[written:])
        except OSError:
            with contextlib.suppress(OSError):
                disk.ftruncate(fd, position)  # a torn write would be read back after our next append
            raise
        finally:
            disk.close(fd)
        if self.size == 0 and self._rolling_timestamp is None:
            self._rolling_timestamp = largest_timestamp
        if len(data) >= LOG_OVERHEAD:
            appended = self._appended
            if len(appended) >= _APPENDS_KEPT:
                del appended[0]
            appended.append((_I64.unpack_from(data)[0], position))
        self.size += len(data)
        self.next_offset = largest_offset + 1
        if largest_timestamp > self.max_timestamp:
            self.max_timestamp, self.offset_of_max_timestamp = largest_timestamp, offset_of_largest_timestamp
        if self._bytes_since_last_index_entry > self.index_interval_bytes:
            self.offset_index.append(largest_offset, position)
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
            self._bytes_since_last_index_entry = 0
        self._bytes_since_last_index_entry += len(data)

    def time_waited_for_roll(self, now_ms: int, message_timestamp: int) -> int:
        """LogSegment.timeWaitedForRoll: against the first batch's timestamp when it has one, else creation."""
        if self._rolling_timestamp is None and self.size > 0:
            frame = self.read(0, HEADER_SIZE)
            self._rolling_timestamp = _I64.unpack_from(frame, _MAX_TIMESTAMP_AT)[0] if len(frame) == HEADER_SIZE \
                else NO_TIMESTAMP
        if self._rolling_timestamp is not None and self._rolling_timestamp >= 0:
            return message_timestamp - self._rolling_timestamp
        return now_ms - (self.created_ms if self.created_ms is not None else now_ms)

    # ------------------------------------------------------------------------------------------------- reads

    def read(self, position: int, size: int) -> bytes:
        """``size`` bytes (fewer at the end) from ``position`` of the .log file."""
        if size <= 0:
            return b""
        disk = self.disk
        fd = disk.open(self.log_path, os.O_RDONLY)
        try:
            return disk.pread(fd, size, position)
        finally:
            disk.close(fd)

    def frames(self, start_position: int = 0, end_position: int | None = None) -> Iterator[Frame]:
        """The batch frames from ``start_position``; stops at a frame that does not fit before ``end_position``
        (default: the segment's size)."""
        return self._walk(start_position, end_position, False)  # type: ignore[no-any-return]

    def headers(self, start_position: int = 0, end_position: int | None = None
                ) -> Iterator[tuple[Frame, memoryview]]:
        """Each batch's frame and its v2 header bytes, reading the file 64 KiB at a time."""
        return self._walk(start_position, end_position, True)  # type: ignore[no-any-return]

    def _walk(self, start_position: int, end_position: int | None, views: bool) -> Iterator[Any]:
        """`frames` (``views`` False: no header views, which most callers do not want) and `headers`."""
        end = self.size if end_position is None else end_position
        pos = start_position
        while pos < end:
            data = self.read(pos, min(_CHUNK, end - pos))
            chunk = memoryview(data) if views else data
            consumed = 0
            for rel, base, last, size in frames_in(chunk):
                frame = (pos + rel, base, last, size)
                yield (frame, chunk[rel:rel + HEADER_SIZE]) if views else frame
                consumed = rel + size
            if consumed == 0:
                found = frame_at(chunk, 0, pos)  # a batch bigger than the chunk
                if found is None or pos + found[3] > end:
                    return
                yield (found, chunk[:HEADER_SIZE]) if views else found
                consumed = found[3]
            pos += consumed

    def translate_offset(self, offset: int, start_position: int = 0) -> Frame | None:
        """LogSegment.translateOffset: the frame of the first batch whose last offset is ≥ ``offset``, searching
        from the index entry below it."""
        return self.locate(offset, start_position)[0]

    def locate(self, offset: int, start_position: int = 0) -> tuple[Frame | None, int, bytes]:
        """`translate_offset`'s frame, with the position and the bytes of the last chunk the search read (b"" if
        none): a read that starts at the frame takes its bytes from them when they hold it all (Log.read), instead
        of reading the segment again."""
        # `frames` inlined (every consumer fetch and follower fetch translates its offset, walking up to an index
        # interval of batches): the same reads, chunk by chunk, and the first frame `frames` would give whose last
        # offset is ≥ ``offset``; tests/core/broker/test_log_segment.py holds it to the walk over `frames`
        _, position = self.offset_index.lookup(offset)
        pos = max(position, start_position)
        end = self.size
        min_length = HEADER_SIZE - LOG_OVERHEAD
        unpack_frame, unpack_i32 = _FRAME.unpack_from, _I32.unpack_from
        data: bytes | None = None
        # A recent append's first batch at or below ``offset`` and past the index entry's: every batch before it ends
        # below its base offset, so below ``offset``, and the walk from the entry would pass them all. It starts
        # there instead, once the batch read there has the base offset noted (else the hints are dropped and the walk
        # is the plain one); tests/core/broker/test_log_segment.py holds it to the walk from the index entry. (A
        # ``start_position`` past the entry, maybe inside a batch, is walked from as it is.)
        for base, at in reversed(self._appended) if start_position <= position else ():
            if base <= offset:
                if pos < at < end:
                    data = self.read(at, min(_CHUNK, end - at))
                    if len(data) >= LOG_OVERHEAD and _I64.unpack_from(data)[0] == base:
                        pos = at
                    else:
                        self._appended = []
                        data = None
                break
        while pos < end:
            if data is None:
                data = self.read(pos, min(_CHUNK, end - pos))
            n = len(data)
            rel = 0
            while n - rel >= HEADER_SIZE:  # frames_in
                base, length, _epoch, _magic = unpack_frame(data, rel)
                size = LOG_OVERHEAD + length
                if length < min_length or rel + size > n:
                    break
                last = base + unpack_i32(data, rel + _LAST_OFFSET_DELTA_AT)[0]
                if last >= offset:
                    return (pos + rel, base, last, size), pos, data
                rel += size
            if rel == 0:
                found = frame_at(data, 0, pos)  # a batch bigger than the chunk
                if found is None or pos + found[3] > end:
                    return None, pos, data
                if found[2] >= offset:
                    return found, pos, data
                rel = found[3]
            pos += rel
            data = None
        return None, pos, b""

    def read_cached(self, position: int, size: int, chunk_position: int, chunk: bytes) -> bytes:
        """`read`, from ``chunk`` (the segment's bytes from ``chunk_position``, read by `locate` since the last
        append) when it holds them all."""
        at = position - chunk_position
        if at >= 0 and size > 0 and at + size <= len(chunk):
            return chunk[at:at + size]
        return self.read(position, size)

    def find_offset_by_timestamp(self, timestamp: int, starting_offset: int) -> tuple[int, int, int] | None:
        """LogSegment.findOffsetByTimestamp: (offset, timestamp, partitionLeaderEpoch) of the first record at or
        after ``starting_offset`` whose timestamp is ≥ ``timestamp``, in the first batch whose max timestamp is."""
        _, indexed_offset = self.time_index.lookup(timestamp)
        start = self.translate_offset(max(indexed_offset, starting_offset))
        if start is None:
            return None
        for position, _base, _last, size in self.frames(start[0]):
            head = self.read(position, HEADER_SIZE)
            if _I64.unpack_from(head, _MAX_TIMESTAMP_AT)[0] < timestamp:
                continue
            batch = read_batch_header(self.read(position, size))
            log_append = bool(batch.attributes & TIMESTAMP_TYPE_BIT)
            for record in batch.records():
                offset = batch.base_offset + record.offset_delta
                ts = batch.max_timestamp if log_append else batch.first_timestamp + record.timestamp_delta
                if ts >= timestamp and offset >= starting_offset:
                    return offset, ts, batch.partition_leader_epoch
        return None

    def largest_timestamp(self) -> int:
        """LogSegment.largestTimestamp: the max timestamp, or if none the segment's creation time on the broker's
        injected clock when known (a replay then decides retention as the recorded run did), else the file's
        modification time as Kafka."""
        if self.max_timestamp >= 0:
            return self.max_timestamp
        if self.created_ms is not None:
            return self.created_ms
        try:
            return int(self.disk.getmtime(self.log_path) * 1000)
        except OSError:
            return NO_TIMESTAMP

    # --------------------------------------------------------------------------------------- recovery, truncation

    def recover(self, producer_state: ProducerStateManager | None,
                on_batch: Callable[[RecordBatch], None] | None = None) -> int:
        """LogSegment.recover(producerStateManager, leaderEpochCache): re-read every batch, check its frame, CRC,
        offset order and (a control batch) its marker, cut the file after the last valid batch, and rebuild the
        offset, time AND transaction indexes. Each valid batch of a producer updates ``producer_state``
        (LogSegment.updateProducerState), and every transaction an ABORT marker completes gets its txnindex entry
        with the last stable offset it leaves (updateTxnIndex) before completeTxn, as an append did; so the txnindex
        holds exactly the aborted transactions of the surviving batches, never a marker the tail lost.
        ``on_batch`` sees each valid batch (the leader-epoch cache). Without a producer state (a cleaned segment
        swapped in, whose transactions may begin in segments before it) the txnindex keeps the entries whose
        marker survived. Returns the number of bytes truncated."""
        self._appended = []  # its batches re-read: the appends' places are forgotten
        file_size = self.disk.getsize(self.log_path)
        index_entries: list[tuple[int, int]] = []
        time_entries: list[tuple[int, int]] = []
        aborted: list[AbortedTxn] = []
        self.max_timestamp, self.offset_of_max_timestamp = NO_TIMESTAMP, self.base_offset
        self._rolling_timestamp = None
        next_offset = self.base_offset
        valid = 0
        since_index = 0
        with self.disk.reader(self.log_path) as f:
            while True:
                head = f.read(HEADER_SIZE)
                frame = frame_at(head, 0, valid)
                if frame is None or valid + frame[3] > file_size:
                    break
                try:
                    batch = read_batch_header(head + f.read(frame[3] - HEADER_SIZE))
                    # a marker that cannot be read ends the valid bytes (Kafka's InvalidRecordException)
                    producer_batch = producer_batch_of(batch) if batch.producer_id >= 0 else None
                except ProtocolError:
                    break
                if not crc_valid(batch) or batch.base_offset < next_offset or batch.last_offset < batch.base_offset:
                    break
                if since_index > self.index_interval_bytes:
                    index_entries.append((batch.last_offset - self.base_offset, valid))
                    if self.max_timestamp >= 0 and (not time_entries or self.max_timestamp > time_entries[-1][0]):
                        time_entries.append((self.max_timestamp, self.offset_of_max_timestamp - self.base_offset))
                    since_index = 0
                since_index += frame[3]
                if self._rolling_timestamp is None:
                    self._rolling_timestamp = batch.max_timestamp
                if batch.max_timestamp > self.max_timestamp:
                    self.max_timestamp, self.offset_of_max_timestamp = batch.max_timestamp, batch.last_offset
                if on_batch is not None:
                    on_batch(batch)
                if producer_batch is not None and producer_state is not None:
                    infos = producer_state.prepare((producer_batch,), REPLICATION)
                    producer_state.update(infos)
                    for txn in infos.completed:
                        if txn.is_aborted:
                            aborted.append(AbortedTxn(txn.producer_id, txn.first_offset, txn.last_offset,
                                                      producer_state.last_stable_offset(txn)))
                        producer_state.complete_txn(txn)
                next_offset = batch.next_offset
                valid += frame[3]
        truncated = file_size - valid
        if truncated:
            self.disk.truncate(self.log_path, valid)
        self.size = valid
        self.next_offset = next_offset
        self._bytes_since_last_index_entry = since_index
        self.offset_index.reset(index_entries)
        self.time_index.reset(time_entries)
        if producer_state is not None:
            self.txn_index.reset(aborted)  # txnIndex.reset() and an updateTxnIndex per aborted transaction
        else:
            self.txn_index.load()
            self.txn_index.truncate_to(next_offset)
        return truncated

    def truncate_to(self, offset: int) -> int:
        """LogSegment.truncateTo: drop the batch holding ``offset`` and everything after; returns the new next
        offset (the base offset of the first dropped batch)."""
        frame = self.translate_offset(offset)
        if frame is None:
            return self.next_offset
        position, base = frame[0], frame[1]
        had_timestamp = self.max_timestamp >= 0
        self._appended = []  # the next appends land where dropped batches were
        self.disk.truncate(self.log_path, position)
        self.offset_index.truncate_to(base)
        self.time_index.truncate_to(base)
        self.size = position
        self.next_offset = base if position > 0 else self.base_offset
        last = self.time_index.last_entry()
        if last is not None:
            self.max_timestamp, self.offset_of_max_timestamp = last[0], self.base_offset + last[1]
        else:
            self.max_timestamp, self.offset_of_max_timestamp = NO_TIMESTAMP, self.base_offset
        if had_timestamp:
            self._load_largest_timestamp()
        if position == 0:
            self._rolling_timestamp = None
        last_index = self.offset_index.last_entry()
        self._bytes_since_last_index_entry = position - (last_index[1] if last_index else 0)
        self.txn_index.truncate_to(self.next_offset)
        return self.next_offset

    # ------------------------------------------------------------------------------------------- transactions

    def update_txn_index(self, aborted: AbortedTxn) -> None:
        """LogSegment.updateTxnIndex for an aborted transaction whose marker is in this segment."""
        self.txn_index.append(aborted)

    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int) -> TxnIndexSearchResult:
        """LogSegment.collectAbortedTxns."""
        return self.txn_index.collect_aborted_txns(fetch_offset, upper_bound_offset)

    def _load_largest_timestamp(self) -> None:
        """LogSegment.loadLargestTimestamp: the batches after the last time-index entry may hold a later timestamp
        (an entry is written every index.interval.bytes only). Without this scan a truncated segment of small
        batches kept no timestamp, and retention judged it by its creation time: a follower that truncated to the
        high watermark could delete the records below it (found by `kactor sim --seeds 7 --steps 20`)."""
        start = self.offset_index.lookup(self.offset_of_max_timestamp)[1]
        for (_pos, _base, last_offset, _size), header in self.headers(start, self.size):
            timestamp = _I64.unpack_from(header, _MAX_TIMESTAMP_AT)[0]
            if timestamp > self.max_timestamp:
                self.max_timestamp, self.offset_of_max_timestamp = timestamp, last_offset

    def __repr__(self) -> str:
        return f"LogSegment(base={self.base_offset}, size={self.size}, next={self.next_offset})"


_PRODUCER = struct.Struct(">qhi")  # producerId, producerEpoch, baseSequence
_PRODUCER_AT = 43


def producer_fields(header: bytes | memoryview) -> tuple[int, int, int, int]:
    """(producerId, producerEpoch, baseSequence, maxTimestamp) of a v2 batch header."""
    pid, epoch, seq = _PRODUCER.unpack_from(header, _PRODUCER_AT)
    return pid, epoch, seq, _I64.unpack_from(header, _MAX_TIMESTAMP_AT)[0]


def producer_batch_of(batch: RecordBatch, base_offset: int | None = None,
                      max_timestamp: int | None = None) -> ProducerBatch:
    """What the producers' state needs of ``batch`` (at ``base_offset`` when the log assigns it), a control batch's
    EndTransactionMarker read from its record (ProtocolError for a malformed one)."""
    return ProducerBatch(batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.last_offset_delta,
                         batch.base_offset if base_offset is None else base_offset,
                         batch.max_timestamp if max_timestamp is None else max_timestamp, batch.is_transactional,
                         batch.is_control, batch_end_txn_marker(batch) if batch.is_control else None)


def batch_attributes(header: bytes | memoryview) -> int:
    """The attributes of a v2 batch header (codec, timestamp type, transactional and control bits)."""
    return _H16.unpack_from(header, _ATTRIBUTES_AT)[0]
