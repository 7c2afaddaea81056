"""Idempotent producers' state of one partition: Kafka 2.6's ``ProducerStateManager`` / ``ProducerAppendInfo`` /
``ProducerStateEntry``, reduced to what non-transactional idempotence needs.

Per producer id: its epoch and the metadata of its last 5 batches (first/last sequence, first/last offset). A client
batch that repeats one of them is a duplicate (the log answers with the original offsets and appends nothing); a
sequence that does not follow the last one is OUT_OF_ORDER_SEQUENCE_NUMBER; an older epoch INVALID_PRODUCER_EPOCH
(2.6's ProducerFencedException). A producer the partition knows no epoch of (its batches went with retention, or
it expired) may continue at any sequence (KIP-360: 2.5 and later never answer UNKNOWN_PRODUCER_ID). Replicated
batches (a follower's appends, recovery) update the state without these checks.
The state is rebuilt when the log is opened or truncated from the latest ``%020d.snapshot`` file at or below the log
end (Kafka's format, written when a segment rolls and when the log is closed) plus the batches after it.
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Iterable

import attrs
from crc32c import crc32c

from core.broker.api_error import ApiError
from messages.common import Errors

NUM_BATCHES_TO_RETAIN = 5  # ProducerStateEntry.NumBatchesToRetain
PRODUCER_ID_EXPIRATION_MS = 7 * 24 * 60 * 60 * 1000  # transactional.id.expiration.ms
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
INT_MAX = 2**31 - 1


def increment_sequence(sequence: int, increment: int) -> int:
    """DefaultRecordBatch.incrementSequence: sequences wrap from Int.MaxValue to 0."""
    if sequence > INT_MAX - increment:
        return increment - (INT_MAX - sequence) - 1
    return sequence + increment


def in_sequence(last_seq: int, next_seq: int) -> bool:
    """ProducerAppendInfo.inSequence."""
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT_MAX)


@attrs.frozen(slots=True)
class BatchMetadata:
    """kafka.log.BatchMetadata."""

    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


@attrs.frozen(slots=True)
class ProducerBatch:
    """What the state needs of one record batch (its header fields and where the log put it)."""

    producer_id: int
    producer_epoch: int
    base_sequence: int
    last_offset_delta: int
    base_offset: int
    max_timestamp: int

    @property
    def last_seq(self) -> int:
        return increment_sequence(self.base_sequence, self.last_offset_delta)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta


class ProducerStateEntry:
    """kafka.log.ProducerStateEntry: a producer's epoch and its last batches."""

    __slots__ = ("producer_id", "producer_epoch", "batches")

    def __init__(self, producer_id: int, producer_epoch: int = NO_PRODUCER_EPOCH,
                 batches: Iterable[BatchMetadata] = ()) -> None:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.batches: deque[BatchMetadata] = deque(batches, maxlen=NUM_BATCHES_TO_RETAIN)

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def last_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else -1

    def add_batch(self, epoch: int, metadata: BatchMetadata) -> None:
        """ProducerStateEntry.addBatch: a new epoch forgets the old epoch's batches."""
        if epoch != self.producer_epoch:
            self.batches.clear()
            self.producer_epoch = epoch
        self.batches.append(metadata)

    def find_duplicate_batch(self, batch: ProducerBatch) -> BatchMetadata | None:
        """ProducerStateEntry.findDuplicateBatch: same epoch and exactly the same sequence range."""
        if batch.producer_epoch != self.producer_epoch:
            return None
        last_seq = batch.last_seq
        for metadata in self.batches:
            if metadata.first_seq == batch.base_sequence and metadata.last_seq == last_seq:
                return metadata
        return None

    def copy(self) -> ProducerStateEntry:
        return ProducerStateEntry(self.producer_id, self.producer_epoch, self.batches)


class ProducerStateManager:
    """kafka.log.ProducerStateManager (no transactions, no snapshots)."""

    def __init__(self) -> None:
        self.producers: dict[int, ProducerStateEntry] = {}

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        return self.producers.get(producer_id)

    def find_duplicate(self, batch: ProducerBatch) -> BatchMetadata | None:
        """Log.analyzeAndValidateProducerState's duplicate check for a client batch."""
        entry = self.producers.get(batch.producer_id)
        return entry.find_duplicate_batch(batch) if entry is not None else None

    def prepare(self, batches: Iterable[ProducerBatch], from_client: bool) -> dict[int, ProducerStateEntry]:
        """ProducerAppendInfo.append for each batch (offsets already assigned): the producers' updated entries,
        not yet applied. A client batch is checked (ApiError with OUT_OF_ORDER_SEQUENCE_NUMBER or
        INVALID_PRODUCER_EPOCH)."""
        updated: dict[int, ProducerStateEntry] = {}
        for batch in batches:
            pid = batch.producer_id
            current = self.producers.get(pid)
            entry = updated.get(pid)
            if entry is None:
                # ProducerAppendInfo's updatedEntry: the current epoch, none of its batches yet
                entry = updated[pid] = ProducerStateEntry(
                    pid, current.producer_epoch if current is not None else NO_PRODUCER_EPOCH)
            if from_client:
                self._check(batch, current, entry)
            entry.add_batch(batch.producer_epoch, BatchMetadata(batch.base_sequence, batch.last_seq, batch.base_offset,
                                                                batch.last_offset, batch.max_timestamp))
        return updated

    @staticmethod
    def _check(batch: ProducerBatch, current: ProducerStateEntry | None, updated: ProducerStateEntry) -> None:
        """ProducerAppendInfo.checkProducerEpoch + checkSequence (client appends), as in 2.6.3."""
        epoch, first_seq = batch.producer_epoch, batch.base_sequence
        if epoch < updated.producer_epoch:
            raise ApiError(Errors.INVALID_PRODUCER_EPOCH,
                           f"Producer's epoch at offset {batch.base_offset} is {epoch}, which is smaller than the "
                           f"last seen epoch {updated.producer_epoch}")
        if epoch != updated.producer_epoch:
            # a new epoch starts at sequence 0, unless the partition knows no epoch of the producer (KIP-360, 2.5+):
            # its state went with retention, DeleteRecords or expiry, and the producer just continues
            if first_seq != 0 and updated.producer_epoch != NO_PRODUCER_EPOCH:
                raise ApiError(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER,
                               f"Invalid sequence number for new epoch of producer {batch.producer_id} at offset "
                               f"{batch.base_offset}: {epoch} (request epoch), {first_seq} (seq. number), "
                               f"{updated.producer_epoch} (current producer epoch)")
            return
        if updated.batches:
            current_last_seq = updated.last_seq
        elif current is not None and epoch == current.producer_epoch:
            current_last_seq = current.last_seq
        else:
            current_last_seq = NO_SEQUENCE
        # "If there is no current producer epoch (possibly because all producer records have been deleted due to
        # retention or the DeleteRecords API) accept writes with any sequence number"
        current_epoch = current.producer_epoch if current is not None else NO_PRODUCER_EPOCH
        if current_epoch != NO_PRODUCER_EPOCH and not in_sequence(current_last_seq, first_seq):
            raise ApiError(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER,
                           f"Out of order sequence number for producerId {batch.producer_id}: {first_seq} "
                           f"(incoming seq. number), {current_last_seq} (current end sequence number)")

    def update(self, updated: dict[int, ProducerStateEntry]) -> None:
        """ProducerStateManager.update / ProducerStateEntry.update: apply prepared entries."""
        for pid, entry in updated.items():
            current = self.producers.get(pid)
            if current is None:
                self.producers[pid] = entry
                continue
            for metadata in entry.batches:
                current.add_batch(entry.producer_epoch, metadata)
            current.producer_epoch = entry.producer_epoch

    def load_snapshot(self, entries: Iterable[ProducerStateEntry]) -> None:
        self.producers = {e.producer_id: e for e in entries}

    def load_batch(self, batch: ProducerBatch) -> None:
        """A batch re-read from the log (loadProducersFromLog): no checks."""
        self.update(self.prepare((batch,), from_client=False))

    def truncate_head(self, log_start_offset: int) -> None:
        """ProducerStateManager.truncateHead: producers whose last batch is below the new log start are forgotten."""
        self.producers = {pid: e for pid, e in self.producers.items() if e.last_offset >= log_start_offset}

    def remove_expired_producers(self, now_ms: int, expiration_ms: int = PRODUCER_ID_EXPIRATION_MS) -> None:
        """ProducerStateManager.removeExpiredProducers: producers whose last batch's timestamp is older than
        ``expiration_ms`` (transactional.id.expiration.ms) are forgotten, so the state does not grow with every
        producer that ever wrote."""
        self.producers = {pid: e for pid, e in self.producers.items()
                          if not e.batches or now_ms - e.batches[-1].timestamp < expiration_ms}

    def truncation_affects(self, offset: int) -> bool:
        """Whether truncating the log at ``offset`` removes a batch some producer's state remembers."""
        return any(entry.last_offset >= offset for entry in self.producers.values())

    def truncate(self) -> None:
        """ProducerStateManager.truncate: forget everything (the log reloads it)."""
        self.producers.clear()


# ------------------------------------------------------------------------------------------------------- snapshots

SNAPSHOT_FILE_SUFFIX = ".snapshot"
PRODUCER_SNAPSHOT_VERSION = 1
# ProducerSnapshotEntrySchema: producer_id int64, epoch int16, last_sequence int32, last_offset int64, offset_delta
# int32, timestamp int64, coordinator_epoch int32, current_txn_first_offset int64
_SNAPSHOT_ENTRY = struct.Struct(">qhiqiqiq")
_SNAPSHOT_HEAD = struct.Struct(">hIi")  # version, crc (of what follows it), entry count


class CorruptSnapshotError(Exception):
    """Kafka's CorruptSnapshotException: the snapshot is ignored (deleted) and the log re-read instead."""


def snapshot_file_name(offset: int) -> str:
    """ProducerStateManager's ``%020d.snapshot``, named for the log end offset it was taken at."""
    return f"{offset:020d}{SNAPSHOT_FILE_SUFFIX}"


def encode_snapshot(producers: Iterable[ProducerStateEntry]) -> bytes:
    """ProducerStateManager.writeSnapshot: each producer's epoch and LAST batch (Kafka keeps only that one), the
    CRC-32C over the entries array."""
    entries = [e for e in producers if e.batches]
    body = bytearray(struct.pack(">i", len(entries)))
    for e in entries:
        last = e.batches[-1]
        body += _SNAPSHOT_ENTRY.pack(e.producer_id, e.producer_epoch, last.last_seq, last.last_offset,
                                     last.last_offset - last.first_offset, last.timestamp, -1, -1)
    return struct.pack(">hI", PRODUCER_SNAPSHOT_VERSION, crc32c(bytes(body))) + bytes(body)


def decode_snapshot(data: bytes) -> list[ProducerStateEntry]:
    """ProducerStateManager.readSnapshot; CorruptSnapshotError on a wrong version, CRC or length."""
    if len(data) < _SNAPSHOT_HEAD.size:
        raise CorruptSnapshotError(f"snapshot of {len(data)} bytes")
    version, crc, count = _SNAPSHOT_HEAD.unpack_from(data)
    if version != PRODUCER_SNAPSHOT_VERSION:
        raise CorruptSnapshotError(f"snapshot version {version}")
    if crc32c(data[6:]) != crc:
        raise CorruptSnapshotError("snapshot CRC mismatch")
    if count < 0 or len(data) != _SNAPSHOT_HEAD.size + count * _SNAPSHOT_ENTRY.size:
        raise CorruptSnapshotError(f"snapshot of {len(data)} bytes for {count} entries")
    out = []
    for pid, epoch, last_seq, last_offset, delta, ts, _coordinator, _txn in _SNAPSHOT_ENTRY.iter_unpack(
            data[_SNAPSHOT_HEAD.size:]):
        first_seq = last_seq - delta if last_seq >= delta else INT_MAX - (delta - last_seq) + 1
        out.append(ProducerStateEntry(pid, epoch, (BatchMetadata(first_seq, last_seq, last_offset - delta,
                                                                 last_offset, ts),)))
    return out
