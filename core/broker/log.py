"""The broker's local log: `kafka.log.Log` (and what only Log uses: its companion object's file and dir names,
LogAppendInfo, swap completion at load), Kafka's on-disk layout of record batches, recovery and deletion of one
partition. The logs of a broker are kept by `LogManager` (core/broker/log_manager.py); the checkpoint files are
core/broker/checkpoints.py's.

* a partition's log lives in ``<log.dir>/<topic>-<partition>/`` as segments ``%020d.log`` (Kafka v2 record batches,
  concatenated exactly as Kafka writes them), ``.index`` and ``.timeindex`` (core/broker/log_segment.py,
  core/broker/offset_index.py), rolled at segment.bytes / segment.ms and deleted by retention.ms / retention.bytes
  (LogConfig, core/broker/log_config.py). Reads come from the files (``os.pread``); the log holds no record bytes,
  only per-segment scalars and the active segment's index, so memory does not grow with the data kept. Recovery on
  open re-reads every batch from the recovery point, checks its CRC and truncates a torn or corrupt tail; the
  recovery point moves only past data forced to disk (a rolled segment, flush.messages, flush.ms, shutdown), and a
  clean shutdown's ``.kafka_cleanshutdown`` marker spares the next open any recovery;
* ``leader-epoch-checkpoint`` in the partition directory (`LeaderEpochFileCache`, written through
  core/broker/checkpoints.py's LeaderEpochCheckpointFile); producers' state (core/broker/producer_state.py:
  idempotence, open transactions, the first unstable and last stable offsets) is loaded on open from the latest
  ``%020d.snapshot`` and the batches after it; each segment's ``.txnindex`` lists the transactions aborted in it
  (core/broker/transaction_index.py), written as ABORT markers are appended, rebuilt when a segment is recovered,
  read by READ_COMMITTED fetches;
* deleting a partition renames its directory to ``<topic>-<partition>.<uuid>-delete`` (the topic cut so the name
  fits 255 bytes) and then removes it;
* any I/O failure, or a log dir that is missing / not a directory, raises `KafkaStorageError` and marks the dir offline
  (`LogDirFailureChannel.maybeAddOfflineLogDir`); the ReplicaManager later takes the dir's partitions offline.
  A LogManager built with ``defer_io_errors=True`` (the broker's PartitionActors) takes a dir offline only when a
  recorded input says so (the log-dir probe's ``LogDirFailure``), so a trace replays the same decisions on healthy
  scratch dirs; other failed writes (checkpoints, truncation) are remembered in ``deferred_io_failures`` and the
  operation goes on in memory. An **append** that fails is never carried on in memory: it raises
  KafkaStorageError (the producer gets KAFKA_STORAGE_ERROR, a follower does not advance), as Kafka's does — a record
  the leader acknowledged from memory alone was lost when the broker restarted on its disk (kactor chaos seed 39).
  The file system's answer then decides something, so it is recorded: `AppendFaults.failed` tells the broker, which
  records the (dir, message) pair as an input (``LogAppendFailed``), and a replay makes the same appends fail
  (`AppendFaults.injected`). A read that fails (Log.read, a fetch's aborted transactions: KAFKA_STORAGE_ERROR for
  the partition) is the file system's decision too, recorded and injected the same way (the same input: the dir
  failed while that message was handled).
* invalid batches are refused with Kafka's errors as `ApiError` (CORRUPT_MESSAGE, INVALID_RECORD,
  UNSUPPORTED_COMPRESSION_TYPE, MESSAGE_TOO_LARGE, OFFSET_OUT_OF_RANGE, the idempotent producer's), checked with
  protocol/records.py.

This module, log_manager.py and checkpoints.py are the only ones of the broker core that touch the file system
(Kafka appends on its request threads too).
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import os
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

import attrs

from core.broker.api_error import ApiError
from core.broker.checkpoints import LEADER_EPOCH_CHECKPOINT, LeaderEpochCheckpointFile
from core.broker.kafka_storage_error import KafkaStorageError
from core.broker.leader_epoch_cache import UNDEFINED_EPOCH_OFFSET, EpochEntry, LeaderEpochFileCache
from core.broker.log_config import LOG_APPEND_TIME, LogConfig
from core.broker.log_segment import (
    DELETED_FILE_SUFFIX,
    INDEX_FILE_SUFFIX,
    LOG_FILE_SUFFIX,
    NO_TIMESTAMP,
    TIME_INDEX_FILE_SUFFIX,
    Frame,
    LogSegment,
    batch_attributes,
    crc_valid,
    file_name,
    frame_at,
    frames_in,
    fsync_file,
    producer_batch_of,
    producer_fields,
    set_log_append_time,
)
from core.broker.producer_state import (
    CLIENT,
    PRODUCER_ID_EXPIRATION_MS,
    REPLICATION,
    SNAPSHOT_FILE_SUFFIX,
    CorruptSnapshotError,
    ProducerAppendInfos,
    ProducerBatch,
    ProducerStateManager,
    decode_snapshot,
    encode_snapshot,
    snapshot_file_name,
)
from core.broker.transaction_index import TXN_INDEX_FILE_SUFFIX, AbortedTxn
from core.disk import OS_DISK, Disk
from messages.common import Errors, TopicPartition
from protocol.errors import ProtocolError
from protocol.records import (
    CONTROL_BIT,
    HEADER_SIZE,
    TRANSACTIONAL_BIT,
    RecordBatch,
    assign_offsets,
    check_batch,
    iter_batches,
    read_batch_header,
)

CLEANED_FILE_SUFFIX = ".cleaned"  # Log.CleanedFileSuffix: a segment the log cleaner is writing
SWAP_FILE_SUFFIX = ".swap"  # Log.SwapFileSuffix: a cleaned segment being swapped in
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"  # Log.CleanShutdownFile
DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"  # Log.FutureDirSuffix: a replica being moved to this dir (AlterReplicaLogDirs)

UNKNOWN_OFFSET = -1  # kafka.log.Log.UnknownOffset


class AppendFaults(Protocol):
    """The file system's answer to an append or a read, as an input of the broker (see the module docstring)."""

    def injected(self, log_dir: str) -> bool:
        """True in a replay where the recorded run's append to (or read of) ``log_dir`` failed at this point."""
        ...

    def failed(self, log_dir: str) -> None:
        """An append to (or a read of) ``log_dir`` failed (a live broker records it for the replay)."""
        ...


def _complete_interrupted_swaps(directory: str, names: Iterable[str], disk: Disk = OS_DISK) -> list[str]:
    """Log.removeTempFilesAndCollectSwapFiles + completeSwapOperations: a ``<base>.log.swap`` left by a crash in the
    middle of a swap is a whole cleaned segment (written, flushed, then renamed from ``.cleaned``), so the swap is
    completed: the segments it replaces (those starting in [base, its next offset)) go, it becomes ``<base>.log``
    and its indexes are rebuilt by the load (index ``.swap`` files are dropped). ``.cleaned`` files (a cleaning that
    had not reached its swap) are dropped by the caller. Returns the dir's names afterwards."""
    names = list(names)
    swaps = sorted(n for n in names if n.endswith(LOG_FILE_SUFFIX + SWAP_FILE_SUFFIX) and n[:20].isdigit()
                   and len(n) == 20 + len(LOG_FILE_SUFFIX + SWAP_FILE_SUFFIX))
    if not swaps:
        return names
    for name in swaps:
        base = int(name[:20])
        path = os.path.join(directory, name)
        next_offset = base
        position, size = 0, disk.getsize(path)
        fd = disk.open(path, os.O_RDONLY)
        try:
            while True:
                frame = frame_at(disk.pread(fd, HEADER_SIZE, position), 0, position)
                if frame is None or position + frame[3] > size:
                    break
                next_offset, position = frame[2] + 1, position + frame[3]
        finally:
            disk.close(fd)
        for other in names:
            if other.endswith(LOG_FILE_SUFFIX) and len(other) == 20 + len(LOG_FILE_SUFFIX) and other[:20].isdigit():
                old = int(other[:20])
                if base < old < next_offset:
                    for suffix in (LOG_FILE_SUFFIX, INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX):
                        with contextlib.suppress(FileNotFoundError):
                            disk.unlink(os.path.join(directory, file_name(old, suffix)))
        for suffix in (INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX):
            with contextlib.suppress(FileNotFoundError):
                disk.unlink(os.path.join(directory, file_name(base, suffix)))
        # the cleaned segment's aborted transactions (those of every segment it replaces) take the first one's place
        txn_swap = os.path.join(directory, file_name(base, TXN_INDEX_FILE_SUFFIX) + SWAP_FILE_SUFFIX)
        if disk.exists(txn_swap):
            disk.replace(txn_swap, os.path.join(directory, file_name(base, TXN_INDEX_FILE_SUFFIX)))
        disk.replace(path, os.path.join(directory, file_name(base, LOG_FILE_SUFFIX)))
    return disk.listdir(directory)


def log_delete_dir_name(tp: TopicPartition) -> str:
    """Log.logDeleteDirName (2.3+, KAFKA-4893): ``<topic>-<partition>.<uuid>-delete``, the topic cut short so that
    the name fits a file name's 255 bytes (a topic name may have 249 characters)."""
    suffix = f"-{tp.partition}.{uuid.uuid4().hex}{DELETE_DIR_SUFFIX}"
    return tp.topic[:max(0, min(len(tp.topic), 255 - len(suffix)))] + suffix


def log_future_dir_name(tp: TopicPartition) -> str:
    """Log.logFutureDirName: ``<topic>-<partition>.<uuid>-future`` (ReplicaManager.alterReplicaLogDirs refuses a
    partition whose name would not fit 255 bytes)."""
    return f"{tp.topic}-{tp.partition}.{uuid.uuid4().hex}{FUTURE_DIR_SUFFIX}"


def parse_log_dir_name(name: str) -> tuple[TopicPartition, bool]:
    """Log.parseTopicPartitionName: (partition, is_future) of a log's dir name; ValueError for any other name."""
    if name.endswith(FUTURE_DIR_SUFFIX):
        stem, dot, unique = name[:-len(FUTURE_DIR_SUFFIX)].rpartition(".")
        if not dot or not unique:
            raise ValueError(f"not a future log dir: {name!r}")
        return TopicPartition.parse(stem), True
    return TopicPartition.parse(name), False


def partition_dir_name(tp: TopicPartition) -> str:
    return f"{tp.topic}-{tp.partition}"


# ------------------------------------------------------------------------------------------------------------------ Log


@attrs.frozen
class LogAppendInfo:
    """kafka.log.LogAppendInfo: what an append wrote (or, for a duplicate idempotent batch, what it had written)."""

    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    log_append_time: int
    num_records: int
    shallow_count: int
    valid_bytes: int
    last_leader_epoch: int


class OffsetsOutOfOrderError(ApiError):
    """Kafka's OffsetsOutOfOrderException / UnexpectedAppendOffsetException: a follower's batches that do not
    follow the log end offset or each other (no error code of its own in Kafka: UNKNOWN_SERVER_ERROR)."""

    def __init__(self, message: str) -> None:
        super().__init__(Errors.UNKNOWN_SERVER_ERROR, message)


_INT_MAX = 2**31 - 1


def _api_error(e: ProtocolError) -> ApiError:
    """A record-batch ProtocolError as the ApiError Kafka answers (its code is Kafka's: CORRUPT_MESSAGE,
    INVALID_RECORD, UNSUPPORTED_COMPRESSION_TYPE)."""
    try:
        error = Errors(e.error_code)
    except ValueError:
        error = Errors.CORRUPT_MESSAGE
    if error == Errors.INVALID_REQUEST:
        error = Errors.CORRUPT_MESSAGE
    return ApiError(error, str(e))


def _scan_dir(directory: str, names: Iterable[str], disk: Disk = OS_DISK) -> tuple[list[int], list[int], set[str]]:
    """A partition dir's (segment base offsets, producer snapshot offsets, file names), each list sorted; leftovers
    of segment deletions and swaps go."""
    bases, snapshots, kept = [], [], set()
    names = _complete_interrupted_swaps(directory, names, disk)
    for name in names:
        stem, dot, suffix = name.partition(".")
        if suffix in ("deleted", "cleaned", "swap") or suffix.endswith(
                (DELETED_FILE_SUFFIX, CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)):
            with contextlib.suppress(OSError):
                disk.unlink(os.path.join(directory, name))
            continue
        kept.add(name)
        if dot and len(stem) == 20 and stem.isdigit():
            if suffix == "log":
                bases.append(int(stem))
            elif dot + suffix == SNAPSHOT_FILE_SUFFIX:
                snapshots.append(int(stem))
    return sorted(bases), sorted(snapshots), kept


class Log:
    """kafka.log.Log for one partition: segments of record batches on disk (core/broker/log_segment.py), the
    leader-epoch cache and the idempotent producers' state. ``high_watermark`` is kept in memory and checkpointed
    by the ReplicaManager; ``config`` (a LogConfig) may be replaced at any time (Log.updateConfig)."""

    def __init__(self, parent_dir: str, topic_partition: TopicPartition, high_watermark: int = 0,
                 defer: Callable[[KafkaStorageError], bool] | None = None,
                 append_faults: AppendFaults | None = None, *, config: LogConfig | None = None,
                 recovery_point: int = 0, log_start_offset: int = 0, now_ms: int | None = None,
                 clean_shutdown: bool = False, dir_name: str | None = None, disk: Disk = OS_DISK,
                 max_producer_id_expiration_ms: int = PRODUCER_ID_EXPIRATION_MS) -> None:
        self.parent_dir = parent_dir
        self.max_producer_id_expiration_ms = max_producer_id_expiration_ms  # Log.maxProducerIdExpirationMs
        self.disk = disk
        self.topic_partition = topic_partition
        # dir_name: a future log's ``<topic>-<partition>.<uuid>-future`` (else the partition's own name)
        self.dir = os.path.join(parent_dir, dir_name or partition_dir_name(topic_partition))
        self.config = config if config is not None else LogConfig()
        self.log_start_offset = log_start_offset
        self._defer = defer  # LogManager.defer: True = the failure was remembered, carry on in memory
        self._append_faults = append_faults
        self._segments: list[LogSegment] = []
        self._bases: list[int] = []
        # plain attributes, not properties over private ones: read on every fetch, produce and idle check, many
        # times a step (a property is a Python call each time); only this class sets them
        self.log_end_offset = 0
        self._now_ms = now_ms or 0  # the latest time the log was told (a follower's append may not tell it)
        self.high_watermark = 0
        self._deleted = False
        self.producer_state = ProducerStateManager()
        self._recovery_point = 0
        # Log.lastFlushedTime: the log's creation (when the log first learns the time), then every flush
        self._last_flush_ms: int | None = now_ms
        self._load(recovery_point, now_ms, clean_shutdown)
        self.update_high_watermark(high_watermark)

    # -------------------------------------------------------------------------------------------- load and recovery

    def _io_failed(self, error: KafkaStorageError) -> None:
        """Raise ``error`` unless the LogManager defers I/O failures (then the caller carries on in memory)."""
        if self._defer is None or not self._defer(error):
            raise error

    def _load(self, recovery_point: int, now_ms: int | None, clean_shutdown: bool = False) -> None:
        """Log.loadSegments + recoverLog: segments wholly before the recovery point are trusted (their indexes
        sanity-checked, rebuilt if corrupt); from the segment holding the recovery point on, every batch is re-read
        and CRC-checked, a torn or corrupt tail truncated and the segments after it deleted — unless the log was
        shut down cleanly (its dir's clean-shutdown marker names it): then nothing is recovered, as in Kafka. The
        recovery point is then the log end. Recovered batches
        re-assign their epochs in the leader-epoch cache, which then ends at the log end (truncateFromEnd) and
        starts at the log start; the producers' state is loaded from the latest snapshot and the batches after it.
        A load that fails leaves an empty log whose segment file does not exist, so every later append fails
        (KafkaStorageError) instead of being carried on in memory."""
        checkpoint = LeaderEpochCheckpointFile(os.path.join(self.dir, LEADER_EPOCH_CHECKPOINT), self.parent_dir,
                                               self._io_failed, self.disk)
        try:
            try:
                self.disk.mkdir(self.dir)
                fresh = True  # a new log (thousands at once on a LeaderAndIsr): nothing to read
            except FileExistsError:
                fresh = False
            except FileNotFoundError:
                self.disk.makedirs(self.dir, exist_ok=True)
                fresh = True
            bases, snapshots, names = _scan_dir(self.dir, () if fresh else self.disk.listdir(self.dir), self.disk)
        except OSError as e:
            self.leader_epoch_cache = LeaderEpochFileCache(lambda: self.log_end_offset, checkpoint, [])
            self._load_failed(e, now_ms)
            return
        checkpointed = [] if fresh else checkpoint.read()
        recovered: list[EpochEntry] = []  # the (epoch, first offset) runs of the recovered batches

        def recovered_batch(batch: RecordBatch) -> None:
            epoch = batch.partition_leader_epoch
            if epoch >= 0 and (not recovered or recovered[-1][0] != epoch):
                recovered.append((epoch, batch.base_offset))

        def state_at(base_offset: int) -> ProducerStateManager:
            """Log.recoverSegment's rebuildProducerState(segment.baseOffset): the producers' state a segment loaded
            without recovery is recovered on when its indexes fail their check."""
            return self._producer_state_at(base_offset, snapshots)

        # LogSegment.recover's producer state, rebuilt up to the first recovered segment and carried on through the
        # later ones: each rebuilds its txnindex from the aborted transactions its markers complete
        recovery_state: ProducerStateManager | None = None
        try:
            interval = self.config.index_interval_bytes
            for i, base in enumerate(bases):
                segment = LogSegment(self.dir, base, interval, now_ms, self.disk)
                next_base = bases[i + 1] if i + 1 < len(bases) else None
                self._segments.append(segment)
                if next_base is not None and (clean_shutdown or next_base <= recovery_point):
                    segment.load_trusted(next_base, state_at)
                    continue
                if next_base is None and segment.is_empty_without_indexes(names):
                    break
                if clean_shutdown:
                    segment.load_clean(state_at)
                    break
                if recovery_state is None:
                    recovery_state = state_at(segment.base_offset)
                truncated = segment.recover(recovery_state, recovered_batch)
                if truncated:
                    for later in bases[i + 1:]:
                        LogSegment(self.dir, later, interval, now_ms, self.disk).delete()
                    break
            if not self._segments:
                segment = LogSegment(self.dir, self.log_start_offset, interval, now_ms, self.disk)
                segment.create(fresh)
                self._segments.append(segment)
            self._bases = [seg.base_offset for seg in self._segments]
            active = self._segments[-1]
            active.make_active()
            self.log_end_offset = max(active.next_offset, active.base_offset)
            if snapshots or self.log_end_offset > self._segments[0].base_offset:
                self._rebuild_producer_state(snapshots)
        except OSError as e:
            self.leader_epoch_cache = LeaderEpochFileCache(lambda: self.log_end_offset, checkpoint, [])
            self._load_failed(e, now_ms)
            return
        self.log_start_offset = max(self.log_start_offset, self._segments[0].base_offset)
        self._recovery_point = self.log_end_offset  # recoverLog: activeSegment.readNextOffset
        entries = _loaded_epochs(checkpointed, recovered, self.log_start_offset, self.log_end_offset)
        self.leader_epoch_cache = LeaderEpochFileCache(lambda: self.log_end_offset, checkpoint, entries)
        if entries != checkpointed:
            checkpoint.write(entries)

    def _load_failed(self, error: OSError, now_ms: int | None) -> None:
        for seg in self._segments:
            seg.close()
        placeholder = LogSegment(self.dir, self.log_start_offset, self.config.index_interval_bytes, now_ms, self.disk)
        placeholder.offset_index.init_empty()
        placeholder.time_index.init_empty()
        self._segments, self._bases, self.log_end_offset = [placeholder], [self.log_start_offset], self.log_start_offset
        self._recovery_point = self.log_end_offset
        self.producer_state.truncate()
        self._io_failed(KafkaStorageError(f"error loading log {self.dir}: {error}", self.parent_dir))

    def _snapshot_offsets(self) -> list[int]:
        return sorted(int(name[:20]) for name in self.disk.listdir(self.dir)
                      if name.endswith(SNAPSHOT_FILE_SUFFIX) and len(name) == 20 + len(SNAPSHOT_FILE_SUFFIX)
                      and name[:20].isdigit())

    def _delete_snapshots(self, predicate: Callable[[int], bool]) -> None:
        for offset in self._snapshot_offsets():
            if predicate(offset):
                with contextlib.suppress(FileNotFoundError):
                    self.disk.unlink(os.path.join(self.dir, snapshot_file_name(offset)))

    def _take_snapshot(self) -> None:
        """ProducerStateManager.takeSnapshot at the log end (on roll and close), if any producer is known."""
        if not self.producer_state.producers:
            return
        path = os.path.join(self.dir, snapshot_file_name(self.log_end_offset))
        self.disk.write_file(path + ".tmp", encode_snapshot(self.producer_state.producers.values()))
        self.disk.replace(path + ".tmp", path)

    def _rebuild_producer_state(self, snapshot_offsets: list[int] | None = None) -> None:
        """Log.loadProducerState: snapshots beyond the log end go; the latest readable one at or below it is loaded
        (a corrupt one is deleted and the next tried), then the batches after it are replayed (headers only, and a
        control batch's marker); transactions their markers completed below the high watermark are stable."""
        offsets = self._snapshot_offsets() if snapshot_offsets is None else snapshot_offsets
        for offset in offsets:
            if offset > self.log_end_offset:
                with contextlib.suppress(FileNotFoundError):
                    self.disk.unlink(os.path.join(self.dir, snapshot_file_name(offset)))
        leo = self.log_end_offset
        self.producer_state = self._producer_state_at(leo, [o for o in offsets if o <= leo])
        self.producer_state.on_high_watermark_updated(self.high_watermark)

    def _producer_state_at(self, end: int, snapshot_offsets: list[int]) -> ProducerStateManager:
        """The producers' state after the batches below ``end``: the latest readable snapshot at or below ``end``
        (a corrupt one is deleted and the next tried), then the loaded segments' batches from it up to ``end``."""
        state = ProducerStateManager()
        start = self._segments[0].base_offset if self._segments else 0
        for offset in reversed([o for o in snapshot_offsets if o <= end]):
            path = os.path.join(self.dir, snapshot_file_name(offset))
            try:
                state.load_snapshot(decode_snapshot(self.disk.read_file(path)))
                start = offset
                break
            except FileNotFoundError:
                continue
            except CorruptSnapshotError:
                self.disk.unlink(path)
        for segment in self._segments:
            if segment.next_offset <= start or segment.base_offset >= end:
                continue
            position = 0
            if start > segment.base_offset:
                frame = segment.translate_offset(start)
                if frame is None:
                    continue
                position = frame[0]
            for (pos, base, last, size), header in segment.headers(position):
                if base >= end:
                    break
                fields = producer_fields(header)
                if fields[0] < 0 or base < start:
                    continue
                attributes = batch_attributes(header)
                if attributes & CONTROL_BIT:
                    batch = producer_batch_of(read_batch_header(segment.read(pos, size)))
                else:
                    batch = ProducerBatch(fields[0], fields[1], fields[2], last - base, base, fields[3],
                                          bool(attributes & TRANSACTIONAL_BIT))
                state.load_batch(batch)
        return state

    # ------------------------------------------------------------------------------------------------------ offsets

    def update_high_watermark(self, hw: int) -> int:
        """Log.updateHighWatermark: clamp to [logStartOffset, logEndOffset] and set (may go down, e.g. truncation)."""
        self.high_watermark = max(self.log_start_offset, min(hw, self.log_end_offset))
        self.producer_state.on_high_watermark_updated(self.high_watermark)
        return self.high_watermark

    def maybe_increment_high_watermark(self, hw: int) -> bool:
        """Log.maybeIncrementHighWatermark: only moves forward; the new value may not exceed the log end offset."""
        if hw > self.log_end_offset:
            raise ValueError(f"high watermark {hw} beyond log end offset {self.log_end_offset} "
                             f"of {self.topic_partition}")
        if hw > self.high_watermark:
            self.high_watermark = hw
            self.producer_state.on_high_watermark_updated(hw)
            return True
        return False

    @property
    def recovery_point(self) -> int:
        """Log.recoveryPoint: everything below it is on disk (fsynced by `flush`), so a load trusts the segments
        wholly below it and recovers the rest."""
        return self._recovery_point

    @property
    def unflushed_messages(self) -> int:
        """Log.unflushedMessages: logEndOffset - recoveryPoint."""
        return self.log_end_offset - self._recovery_point

    def flush(self, offset: int | None = None) -> None:
        """Log.flush(offset): force the segments holding offsets from the recovery point up to ``offset`` (default:
        the log end) to disk; the recovery point moves to ``offset``."""
        self._ensure_live()
        offset = self.log_end_offset if offset is None else offset
        if offset <= self._recovery_point:
            return
        try:
            for segment in self._segments:
                if segment.next_offset > self._recovery_point and segment.base_offset < offset:
                    segment.flush()
            fsync_file(os.path.join(self.dir, LEADER_EPOCH_CHECKPOINT), self.disk)
        except OSError as e:
            self._io_failed(KafkaStorageError(f"error flushing {self.dir}: {e}", self.parent_dir))
            return
        self._recovery_point = offset
        self._last_flush_ms = self._now_ms

    def maybe_flush_by_time(self, now_ms: int) -> bool:
        """LogManager.flushDirtyLogs for this log: flushed if its last flush is flush.ms or longer ago. Returns
        whether it was due."""
        self._now_ms = max(self._now_ms, now_ms)
        if self._last_flush_ms is None:
            self._last_flush_ms = now_ms
        if now_ms - self._last_flush_ms < self.config.flush_ms:
            return False
        self.flush()
        return True

    @property
    def first_unstable_offset(self) -> int | None:
        """Log.firstUnstableOffset (maybeIncrementFirstUnstableOffset): the first offset of the earliest open or
        not yet replicated transaction, not below the log start; None when there is none."""
        first = self.producer_state.first_unstable_offset
        return None if first is None else max(first, self.log_start_offset)

    @property
    def last_stable_offset(self) -> int:
        """Log.lastStableOffset: the first unstable offset when it is below the high watermark, else the high
        watermark — what a READ_COMMITTED consumer may read up to."""
        ps = self.producer_state
        if not ps.ongoing_txns and not ps.unreplicated_txns:
            # the common case, asked for every partition of every idle fetch round (ReplicaManager._idle): 12 % of
            # an idle broker's CPU with 10,000 replicas went to the general path below (py-spy, 2026-11-26)
            return self.high_watermark
        first = self.first_unstable_offset
        return first if first is not None and first < self.high_watermark else self.high_watermark

    def collect_aborted_transactions(self, start_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        """Log.collectAbortedTransactions: the aborted transactions overlapping [start_offset, upper_bound_offset),
        from the txnindex of the segment holding ``start_offset`` on, until an entry's last stable offset reaches
        the bound."""
        out: list[AbortedTxn] = []
        i = max(0, bisect.bisect_right(self._bases, start_offset) - 1)
        faults = self._append_faults
        try:
            if faults is not None and faults.injected(self.parent_dir):
                raise OSError(errno.EIO, "the recorded run's read failed here")
            for segment in self._segments[i:]:
                result = segment.collect_aborted_txns(start_offset, upper_bound_offset)
                out.extend(result.aborted)
                if result.is_complete:
                    break
        except OSError as e:
            if faults is not None:  # recorded, as Log.read's failure (the module doc)
                faults.failed(self.parent_dir)
            raise KafkaStorageError(f"error reading {self.dir}: {e}", self.parent_dir) from e
        return out

    def maybe_increment_log_start_offset(self, offset: int) -> bool:
        """Log.maybeIncrementLogStartOffset (a follower following the leader's log start, DeleteRecords): the log
        start only moves forward, up to the high watermark; segments wholly below it go with the next
        delete_old_segments. Returns whether it moved. OFFSET_OUT_OF_RANGE beyond the high watermark."""
        self._ensure_live()
        if offset > self.high_watermark:
            raise ApiError(Errors.OFFSET_OUT_OF_RANGE, f"Cannot increment the log start offset to {offset} of "
                                                       f"{self.topic_partition} beyond the high watermark "
                                                       f"{self.high_watermark}")
        if offset <= self.log_start_offset:
            return False
        self.log_start_offset = offset
        self.leader_epoch_cache.truncate_from_start(offset)
        self.producer_state.truncate_head(offset)
        return True

    @property
    def size(self) -> int:
        """Log.size: the bytes of all segments."""
        return sum(seg.size for seg in self._segments)

    @property
    def segments(self) -> tuple[LogSegment, ...]:
        return tuple(self._segments)

    # ------------------------------------------------------------------------------------------------------ append

    def append_as_leader(self, records: bytes, leader_epoch: int, now_ms: int, origin: str = CLIENT
                         ) -> LogAppendInfo:
        """Log.appendAsLeader: validate (LogValidator, in place), assign offsets from the log end and
        ``leader_epoch`` as every batch's partitionLeaderEpoch, check producers' epochs and (a client's) sequences
        (a duplicate batch is answered with its original offsets and not appended), write, and update the epoch
        cache, the producers' state and the txnindex. ``origin``: producer_state.CLIENT (a Produce) or COORDINATOR
        (WriteTxnMarkers' control batches, which only a coordinator may write)."""
        return self._append(records, leader_epoch, now_ms, origin)

    def append_as_follower(self, records: bytes, now_ms: int | None = None) -> LogAppendInfo:
        """Log.appendAsFollower: batches with the leader's offsets and epochs (CRC-checked only); each batch's
        partitionLeaderEpoch goes into the epoch cache. A batch below the log end, or out of order, is refused
        (OffsetsOutOfOrderError)."""
        return self._append(records, None, self._now_ms if now_ms is None else now_ms, REPLICATION)

    def _append(self, records: bytes, leader_epoch: int | None, now_ms: int, origin: str) -> LogAppendInfo:
        """Log.append: analyzeAndValidateRecords, validation/offsets, producer state, maybeRoll, segment append."""
        self._ensure_live()
        self._now_ms = max(self._now_ms, now_ms)
        if self._last_flush_ms is None:
            self._last_flush_ms = now_ms
        as_leader = leader_epoch is not None
        config = self.config
        batches: list[RecordBatch] = []
        try:
            for batch in iter_batches(records):
                if len(batch.raw) > config.max_message_bytes:
                    raise ApiError(Errors.MESSAGE_TOO_LARGE,
                                   f"The batch size {len(batch.raw)} exceeds max.message.bytes "
                                   f"{config.max_message_bytes} of {self.topic_partition}")
                if as_leader:
                    check_batch(batch)
                    if origin == CLIENT:
                        _validate_client_batch(batch)
                elif not crc_valid(batch):
                    raise ApiError(Errors.CORRUPT_MESSAGE, f"record batch at offset {batch.base_offset} of "
                                                           f"{self.topic_partition} fails its CRC")
                batches.append(batch)
        except ProtocolError as e:
            raise _api_error(e) from None
        if not batches:
            return LogAppendInfo(-1, -1, NO_TIMESTAMP, -1, NO_TIMESTAMP, 0, 0, 0, -1)
        if as_leader and len(batches) > 1:
            raise ApiError(Errors.INVALID_RECORD, "Compressed outer record has more than one batch")
        if origin == CLIENT:
            for batch in batches:
                if batch.producer_id >= 0:
                    duplicate = self.producer_state.find_duplicate(_producer_batch(
                        batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.last_offset_delta, 0,
                        batch.max_timestamp))
                    if duplicate is not None:
                        # analyzeAndValidateProducerState: appendInfo.logAppendTime = duplicate.timestamp
                        return LogAppendInfo(duplicate.first_offset, duplicate.last_offset, duplicate.timestamp,
                                             duplicate.last_offset, duplicate.timestamp, batch.records_count, 1, 0,
                                             batch.partition_leader_epoch)
        buf = bytearray(records) if as_leader else records
        log_append_time = now_ms if as_leader and config.message_timestamp_type == LOG_APPEND_TIME else NO_TIMESTAMP
        position = 0
        offset = self.log_end_offset
        max_timestamp, offset_of_max = NO_TIMESTAMP, -1
        producer_batches = []
        epochs = []
        for batch in batches:
            size = len(batch.raw)
            if as_leader:
                base = offset
                offset = assign_offsets(buf, position, base, leader_epoch)  # type: ignore[arg-type]
                if log_append_time != NO_TIMESTAMP:
                    set_log_append_time(buf, position, size, now_ms)  # type: ignore[arg-type]
                batch_max_ts = log_append_time if log_append_time != NO_TIMESTAMP else batch.max_timestamp
                epoch = leader_epoch
            else:
                base = batch.base_offset
                if base < offset:
                    raise OffsetsOutOfOrderError(
                        f"batch at offset {base} of {self.topic_partition} is below the expected offset {offset}")
                offset = batch.next_offset
                batch_max_ts = batch.max_timestamp
                epoch = batch.partition_leader_epoch
            if batch_max_ts > max_timestamp:
                max_timestamp, offset_of_max = batch_max_ts, offset - 1
            epochs.append((epoch, base))
            if batch.producer_id >= 0:
                try:
                    producer_batches.append(producer_batch_of(batch, base, batch_max_ts))
                except ProtocolError as e:
                    raise _api_error(e) from None
            position += size
        first_offset = epochs[0][1]
        last_offset = offset - 1
        updates = self.producer_state.prepare(producer_batches, origin) if producer_batches else None
        faults = self._append_faults
        try:
            segment = self._maybe_roll(len(buf), first_offset, last_offset, max_timestamp, now_ms)
            if faults is not None and faults.injected(self.parent_dir):
                raise OSError(errno.EIO, "the recorded run's append failed here")
            segment.append(buf, last_offset, max_timestamp, offset_of_max)
        except OSError as e:
            # never carried on in memory: what the leader acknowledges must be in the segment (see the module doc)
            if faults is not None:
                faults.failed(self.parent_dir)
            # the caller (ReplicaManager's produce and fetcher paths) defers it or takes the dir offline
            raise KafkaStorageError(f"error appending to {self.dir}: {e}", self.parent_dir) from None
        self.log_end_offset = offset
        cache = self.leader_epoch_cache
        for epoch, base in epochs:
            if epoch is not None and epoch >= 0:
                cache.assign(epoch, base)
        if updates:
            self._update_producers(segment, updates)
        if self.unflushed_messages >= config.flush_messages:  # Log.append: flush.messages
            self.flush()
        return LogAppendInfo(first_offset, last_offset, max_timestamp, offset_of_max, log_append_time,
                             sum(b.records_count for b in batches), len(batches), len(buf),
                             epochs[-1][0] if epochs[-1][0] is not None else -1)

    def _update_producers(self, segment: LogSegment, updates: ProducerAppendInfos) -> None:
        """Log.append after the write: the producers' entries applied, then each completed transaction's
        ``.txnindex`` entry (an aborted one, with the last stable offset it leaves) before it stops being ongoing.
        A txnindex that cannot be written fails like a checkpoint (the batches are in the segment already)."""
        state = self.producer_state
        state.update(updates)
        failure: OSError | None = None
        for txn in updates.completed:
            if txn.is_aborted:
                try:
                    segment.update_txn_index(AbortedTxn(txn.producer_id, txn.first_offset, txn.last_offset,
                                                        state.last_stable_offset(txn)))
                except OSError as e:
                    failure = e
            state.complete_txn(txn)
        if failure is not None:
            self._io_failed(KafkaStorageError(f"error writing the transaction index of {self.dir}: {failure}",
                                              self.parent_dir))

    def _maybe_roll(self, size: int, first_offset: int, last_offset: int, max_timestamp: int,
                    now_ms: int) -> LogSegment:
        """Log.maybeRoll / LogSegment.shouldRoll: a new segment when this append would overflow segment.bytes, the
        segment is older than segment.ms, its index is full, or the offsets would not fit its relative index."""
        segment = self._segments[-1]
        if segment.created_ms is None:  # opened without a clock: its age counts from its first append
            segment.created_ms = now_ms
        config = self.config
        if not (segment.size > config.segment_bytes - size
                or (segment.size > 0 and segment.time_waited_for_roll(now_ms, max_timestamp) > config.segment_ms)
                or segment.offset_index.entries >= config.segment_index_bytes // 8
                or segment.time_index.entries >= config.segment_index_bytes // 12
                or last_offset - segment.base_offset > _INT_MAX):
            return segment
        return self._roll(max(first_offset, self.log_end_offset), now_ms)

    def _roll(self, new_base: int, now_ms: int) -> LogSegment:
        """Log.roll: the active segment becomes inactive (final time-index entry, memory released)."""
        old = self._segments[-1]
        if old.size == 0 and old.base_offset == new_base:
            return old
        old.become_inactive()
        if old.size == 0:
            old.delete()
            self._segments.pop()
            self._bases.pop()
        segment = LogSegment(self.dir, new_base, self.config.index_interval_bytes, now_ms, self.disk)
        segment.create()
        self._segments.append(segment)
        self._bases.append(new_base)
        self._take_snapshot()
        # Log.roll: scheduler.schedule("flush-log", () => flush(newOffset)): the rolled segment goes to disk and the
        # recovery point moves past it (synchronously here)
        self.flush(new_base)
        return segment

    # -------------------------------------------------------------------------------------------------------- read

    def read(self, start_offset: int, max_bytes: int, max_offset: int | None = None,
             min_one_message: bool = True) -> bytes:
        """Log.read: whole batches from the one holding ``start_offset``, from one segment, stopping before the batch
        holding ``max_offset`` (the high watermark for consumers) and at ``max_bytes`` — but at least one batch when
        ``min_one_message``. OFFSET_OUT_OF_RANGE outside [log_start_offset, log_end_offset]."""
        self._ensure_live()
        leo = self.log_end_offset
        if start_offset < self.log_start_offset or start_offset > leo:
            raise ApiError(Errors.OFFSET_OUT_OF_RANGE,
                           f"Received request for offset {start_offset} for partition {self.topic_partition}, but "
                           f"we only have log segments in the range {self.log_start_offset} to {leo}.")
        limit = leo if max_offset is None else min(max_offset, leo)
        if start_offset >= limit:
            return b""
        i = max(0, bisect.bisect_right(self._bases, start_offset) - 1)
        faults = self._append_faults
        try:
            if faults is not None and faults.injected(self.parent_dir):
                raise OSError(errno.EIO, "the recorded run's read failed here")
            while i < len(self._segments):
                segment = self._segments[i]
                frame, chunk_position, chunk = segment.locate(start_offset)
                if frame is not None:
                    return self._read_from(segment, frame, limit, max_bytes, min_one_message, chunk_position, chunk)
                i += 1
        except OSError as e:
            # the answer (KAFKA_STORAGE_ERROR) depends on the file system's: recorded as an append's is (module doc)
            if faults is not None:
                faults.failed(self.parent_dir)
            # Log.read's maybeHandleIOException: the reader answers KAFKA_STORAGE_ERROR for this partition only
            raise KafkaStorageError(f"error reading {self.dir}: {e}", self.parent_dir) from e
        return b""

    @staticmethod
    def _read_from(segment: LogSegment, first: Frame, limit: int, max_bytes: int, min_one_message: bool,
                   chunk_position: int = 0, chunk: bytes = b"") -> bytes:
        """The read from ``first`` on; ``chunk``: what the search for ``first`` read (LogSegment.locate), the bytes
        taken from it when it holds them (one read of the segment a fetch instead of two)."""
        start = first[0]
        if first[2] >= limit:
            return b""
        if first[3] > max_bytes:
            return segment.read_cached(start, first[3], chunk_position, chunk) if min_one_message else b""
        data = segment.read_cached(start, min(max_bytes, segment.size - start), chunk_position, chunk)
        end = 0
        for _pos, _base, last, size in frames_in(data):
            if last >= limit:
                break
            end += size
        return data[:end] if end < len(data) else data

    # ------------------------------------------------------------------------------------------------- truncation

    def truncate_to(self, offset: int) -> bool:
        """Log.truncateTo: drop the batches holding ``offset`` and beyond (a batch is never cut: the log end is then
        that batch's base offset); returns whether anything was truncated.

        At or past the log end nothing is truncated but the epoch cache still is, from the log end (2.6.3,
        KAFKA-10706): an epoch this replica assigned as leader without writing a record would otherwise stay the
        last entry, and a follower asking OffsetsForLeaderEpoch with it truncates to its own log end (a no-op) and
        asks again with the same epoch for ever."""
        self._ensure_live()
        if offset >= self.log_end_offset:
            self.leader_epoch_cache.truncate_from_end(self.log_end_offset)
            return False
        if offset < self.log_start_offset:
            self.truncate_fully_and_start_at(offset)
            return True
        try:
            while len(self._segments) > 1 and self._segments[-1].base_offset > offset:
                self._segments.pop().delete()
                self._bases.pop()
            active = self._segments[-1]
            if not active.active:
                active.make_active()
            self.log_end_offset = active.truncate_to(offset)
        except OSError as e:
            self._io_failed(KafkaStorageError(f"error truncating {self.dir}: {e}", self.parent_dir))
            self.log_end_offset = min(self.log_end_offset, offset)
        if self.high_watermark > self.log_end_offset:
            self.high_watermark = self.log_end_offset
        self._recovery_point = min(self._recovery_point, self.log_end_offset)
        self.leader_epoch_cache.truncate_from_end(self.log_end_offset)
        try:
            leo = self.log_end_offset
            if self.producer_state.truncation_affects(leo) or self._snapshot_offsets()[-1:] > [leo]:
                self._rebuild_producer_state()
        except OSError as e:
            self._io_failed(KafkaStorageError(f"error truncating {self.dir}: {e}", self.parent_dir))
        return True

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Log.truncateFullyAndStartAt: every segment goes; an empty one starts at ``offset``, which becomes the log
        start offset, log end offset and high watermark; the epoch cache and producer state are cleared."""
        self._ensure_live()
        try:
            for segment in self._segments:
                segment.delete()
            self._delete_snapshots(lambda _offset: True)
            segment = LogSegment(self.dir, offset, self.config.index_interval_bytes, self._now_ms, self.disk)
            segment.create()
        except OSError as e:
            self._io_failed(KafkaStorageError(f"error truncating {self.dir}: {e}", self.parent_dir))
            segment = LogSegment(self.dir, offset, self.config.index_interval_bytes, self._now_ms, self.disk)
        self._segments, self._bases = [segment], [offset]
        self.log_end_offset = self.log_start_offset = self.high_watermark = self._recovery_point = offset
        self.leader_epoch_cache.clear_and_flush()
        self.producer_state.truncate()

    # -------------------------------------------------------------------------------------------------- retention

    def delete_old_segments(self, now_ms: int) -> int:
        """Log.deleteOldSegments (cleanup.policy=delete): the oldest segments past retention.ms, then those beyond
        retention.bytes, then those wholly below the log start offset — never a segment reaching past the high
        watermark, nor the empty active one. The log start offset moves to the first remaining segment. Returns
        the number of segments deleted."""
        self._ensure_live()
        self._now_ms = max(self._now_ms, now_ms)
        # Kafka: every producer.id.expiration.check.interval.ms
        self.producer_state.remove_expired_producers(now_ms, self.max_producer_id_expiration_ms)
        config = self.config
        if not config.delete:
            return self._delete_segments(lambda seg, nxt: nxt is not None and nxt.base_offset <= self.log_start_offset)
        deleted = 0
        if config.retention_ms >= 0:
            deleted += self._delete_segments(lambda seg, nxt: now_ms - seg.largest_timestamp() > config.retention_ms)
        if config.retention_bytes >= 0:
            excess = [self.size - config.retention_bytes]

            def over_size(seg: LogSegment, nxt: LogSegment | None) -> bool:
                if excess[0] - seg.size >= 0:
                    excess[0] -= seg.size
                    return True
                return False

            deleted += self._delete_segments(over_size)
        deleted += self._delete_segments(lambda seg, nxt: nxt is not None and nxt.base_offset <= self.log_start_offset)
        return deleted

    def _delete_segments(self, predicate: Callable[[LogSegment, LogSegment | None], bool]) -> int:
        """Log.deletableSegments + deleteSegments."""
        count = 0
        for i, segment in enumerate(self._segments):
            nxt = self._segments[i + 1] if i + 1 < len(self._segments) else None
            upper = nxt.base_offset if nxt is not None else self.log_end_offset
            if self.high_watermark < upper or not predicate(segment, nxt) or (nxt is None and segment.size == 0):
                break
            count += 1
        if not count:
            return 0
        try:
            if count == len(self._segments):
                self._roll(self.log_end_offset, self._now_ms)
            for segment in self._segments[:count]:
                segment.delete()
        except OSError as e:
            self._io_failed(KafkaStorageError(f"error deleting segments of {self.dir}: {e}", self.parent_dir))
        del self._segments[:count]
        del self._bases[:count]
        new_start = self._segments[0].base_offset
        if new_start > self.log_start_offset:
            self.log_start_offset = new_start
            self.leader_epoch_cache.truncate_from_start(new_start)
            self.producer_state.truncate_head(new_start)
        with contextlib.suppress(OSError):
            latest = self._snapshot_offsets()[-1:]
            self._delete_snapshots(lambda offset: offset < new_start and [offset] != latest)
        return count

    # ------------------------------------------------------------------------------------------- the log cleaner

    def replace_segments(self, new_base: int, old_bases: Sequence[int]) -> None:
        """Log.replaceSegments for one cleaned segment: its ``<new_base>.*.cleaned`` files become ``.swap``, the
        consecutive segments at ``old_bases`` (never the active one) go, the ``.swap`` files take the segment names
        and the new segment takes the old ones' place. A crash at any point leaves either the old segments, or a
        ``.log.swap`` that the next load completes (`_complete_interrupted_swaps`). The caller (the shard owning the
        log, so nothing reads or appends meanwhile) has checked that the old segments are what was cleaned."""
        self._ensure_live()
        first = bisect.bisect_left(self._bases, old_bases[0])
        n = len(old_bases)
        if (self._bases[first:first + n] != list(old_bases) or first + n >= len(self._segments)
                or new_base != old_bases[0]):
            raise ValueError(f"{self.topic_partition}: segments {list(old_bases)} cannot be replaced")
        old = self._segments[first:first + n]
        names = [(file_name(new_base, s), s) for s in (LOG_FILE_SUFFIX, INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX)]
        # the cleaner wrote the cleaned segment's .txnindex (the aborted transactions whose markers it kept with
        # batches of theirs: CleanedTransactionMetadata), if it has any entry; an empty one replaces an old one, so
        # that a crash's completed swap never leaves the first old segment's entries under the new segment
        txn_name = file_name(new_base, TXN_INDEX_FILE_SUFFIX)
        txn_cleaned = os.path.join(self.dir, txn_name + CLEANED_FILE_SUFFIX)
        try:
            if old[0].txn_index.size and not self.disk.exists(txn_cleaned):
                self.disk.write_file(txn_cleaned, b"")
            if self.disk.exists(txn_cleaned):
                # first, so that it is in place before the log: a .txnindex.swap without a .log.swap is dropped
                names.insert(0, (txn_name, TXN_INDEX_FILE_SUFFIX))
            for name, _ in names:
                self.disk.replace(os.path.join(self.dir, name + CLEANED_FILE_SUFFIX),
                           os.path.join(self.dir, name + SWAP_FILE_SUFFIX))
            for segment in old:
                segment.delete()
            for name, _ in names:
                self.disk.replace(os.path.join(self.dir, name + SWAP_FILE_SUFFIX), os.path.join(self.dir, name))
            segment = LogSegment(self.dir, new_base, self.config.index_interval_bytes, old[0].created_ms, self.disk)
            segment.load_trusted(self._segments[first + n].base_offset)
        except OSError as e:
            raise KafkaStorageError(f"error swapping cleaned segment {new_base} into {self.dir}: {e}",
                                    self.parent_dir) from None
        self._segments[first:first + n] = [segment]
        self._bases[first:first + n] = [new_base]

    # -------------------------------------------------------------------------------------------------- timestamps

    def fetch_offset_by_timestamp(self, timestamp: int) -> tuple[int, int, int] | None:
        """Log.fetchOffsetByTimestamp: (offset, timestamp, leader epoch) for ListOffsets. LATEST (-1): the log end
        offset with the latest epoch; EARLIEST (-2): the log start offset with the epoch of the first entry if it
        starts there; else the first record at or after the log start whose timestamp is ≥ ``timestamp`` (None if
        none). Timestamps of LATEST/EARLIEST answers are -1; an unknown epoch is -1."""
        self._ensure_live()
        if timestamp == LATEST_TIMESTAMP:
            latest = self.leader_epoch_cache.latest_epoch
            return self.log_end_offset, NO_TIMESTAMP, latest if latest is not None else -1
        if timestamp == EARLIEST_TIMESTAMP:
            earliest = self.leader_epoch_cache.earliest_entry
            epoch = earliest[0] if earliest is not None and earliest[1] <= self.log_start_offset else -1
            return self.log_start_offset, NO_TIMESTAMP, epoch
        for segment in self._segments:
            if segment.largest_timestamp() >= timestamp and segment.size > 0:
                found = segment.find_offset_by_timestamp(timestamp, self.log_start_offset)
                if found is not None:
                    return found
        return None

    # ----------------------------------------------------------------------------------------------- leader epochs

    @property
    def leader_epoch_entries(self) -> tuple[EpochEntry, ...]:
        return self.leader_epoch_cache.epoch_entries

    @property
    def latest_epoch(self) -> int | None:
        """Log.latestEpoch."""
        return self.leader_epoch_cache.latest_epoch

    def assign_epoch_start_offset(self, epoch: int, start_offset: int) -> None:
        """Log.maybeAssignEpochStartOffset → LeaderEpochFileCache.assign."""
        self.leader_epoch_cache.assign(epoch, start_offset)

    def end_offset_for_epoch(self, leader_epoch: int) -> tuple[int, int] | None:
        """Log.endOffsetForEpoch: (end offset, epoch) of the largest epoch ≤ ``leader_epoch``, None if unknown."""
        epoch, offset = self.leader_epoch_cache.end_offset_for(leader_epoch)
        return None if offset == UNDEFINED_EPOCH_OFFSET else (offset, epoch)

    # ------------------------------------------------------------------------------------------------------ misc

    def close(self) -> None:
        """LogManager.shutdown's ``log.flush(); log.close()``: everything forced to disk (the recovery point is the
        log end), then a producer-state snapshot at the log end (the next open replays nothing)."""
        if self._deleted:
            return
        self.flush()
        for segment in self._segments:
            segment.close()
        try:
            self._take_snapshot()
        except OSError as e:
            self._io_failed(KafkaStorageError(f"error writing a producer snapshot of {self.dir}: {e}",
                                              self.parent_dir))

    @property
    def is_future(self) -> bool:
        """Log.isFuture: the ``-future`` log of a replica moving to this dir."""
        return self.dir.endswith(FUTURE_DIR_SUFFIX)

    def _ensure_live(self) -> None:
        if self._deleted:
            raise KafkaStorageError(f"log {self.dir} has been deleted", self.parent_dir)

    def __repr__(self) -> str:
        return (f"Log({self.topic_partition}, dir={self.parent_dir}, leo={self.log_end_offset}, "
                f"hw={self.high_watermark})")


LATEST_TIMESTAMP = -1  # ListOffsetRequest.LATEST_TIMESTAMP
EARLIEST_TIMESTAMP = -2  # ListOffsetRequest.EARLIEST_TIMESTAMP


def _loaded_epochs(checkpointed: Sequence[EpochEntry], recovered: Sequence[EpochEntry], log_start: int,
                   log_end: int) -> list[EpochEntry]:
    """The leader-epoch cache a load leaves: the checkpointed entries, then LeaderEpochFileCache.assign of each
    recovered batch's epoch, truncateFromEnd(log end) and truncateFromStart(log start) — computed in one go, so the
    checkpoint is written once and only if it changes (re-assigning the epochs of an active segment the checkpoint
    already holds would otherwise warn of a non-monotonic update and rewrite it twice on every open)."""
    entries = list(checkpointed)
    for epoch, start in recovered:
        if entries and entries[-1][0] == epoch and start >= entries[-1][1]:
            continue
        entries = [(e, o) for e, o in entries if e < epoch and o < start] + [(epoch, start)]
    entries = [(e, o) for e, o in entries if o < log_end]
    before = [(e, o) for e, o in entries if o <= log_start]
    if before:
        entries = [(before[-1][0], log_start)] + [(e, o) for e, o in entries if o > log_start]
    return entries


def _producer_batch(producer_id: int, producer_epoch: int, base_sequence: int, last_offset_delta: int,
                    base_offset: int, max_timestamp: int) -> ProducerBatch:
    return ProducerBatch(producer_id, producer_epoch, base_sequence, last_offset_delta, base_offset, max_timestamp)


def _validate_client_batch(batch: RecordBatch) -> None:
    """LogValidator.validateBatch for a client's v2 batch (INVALID_RECORD)."""
    count = batch.last_offset_delta + 1
    if count <= 0 or batch.records_count <= 0 or count != batch.records_count:
        raise ApiError(Errors.INVALID_RECORD, f"Inconsistent batch offset range [{batch.base_offset}, "
                                              f"{batch.last_offset}] and count of records {batch.records_count}")
    if batch.is_control:
        raise ApiError(Errors.INVALID_RECORD, "Clients are not allowed to write control records")
    if batch.producer_id >= 0 and batch.base_sequence < 0:
        raise ApiError(Errors.INVALID_RECORD, f"Invalid sequence number {batch.base_sequence} in record batch "
                                              f"with producerId {batch.producer_id}")
