"""A minimal Kafka-like local log: one append-only segment per partition, offset checkpoints, deletion, recovery.

Mirrors the parts of `kafka.log.Log` / `kafka.log.LogManager` / `kafka.server.checkpoints.OffsetCheckpointFile` that the
replication protocol needs:

* a partition's log lives in ``<log.dir>/<topic>-<partition>/``; records are appended to ``00000000000000000000.log``
  one JSON line per record (``[offset, leader_epoch, value]``); recovery re-reads the file and truncates a torn tail;
* ``leader-epoch-checkpoint`` in the partition directory (`LeaderEpochFileCache`): version ``0``, count, then
  ``epoch start_offset`` lines;
* ``replication-offset-checkpoint`` (high watermarks, written by the ReplicaManager),
  ``recovery-point-offset-checkpoint`` and ``log-start-offset-checkpoint`` per log dir, exactly in Kafka's format:
  line 1 version ``0``, line 2 the count, then
  ``topic partition offset`` lines; written to ``<file>.tmp`` then renamed, as Kafka does;
* deleting a partition renames its directory to ``<topic>-<partition>.<uuid>-delete`` and then removes it;
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
  (`AppendFaults.injected`). Records are kept in memory too, so reads never touch the disk.

This is the only module of the broker core that touches the file system (Kafka appends on its request threads too).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Protocol

from core.broker.leader_epoch_cache import (
    UNDEFINED_EPOCH_OFFSET,
    EpochEntry,
    LeaderEpochFileCache,
    decode_leader_epoch_checkpoint,
    encode_leader_epoch_checkpoint,
)
from messages.common import TopicPartition

SEGMENT_FILE = "00000000000000000000.log"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
DELETE_DIR_SUFFIX = "-delete"
CHECKPOINT_VERSION = 0

UNKNOWN_OFFSET = -1  # kafka.log.Log.UnknownOffset


class KafkaStorageError(Exception):
    """org.apache.kafka.common.errors.KafkaStorageException: a log dir is unusable (maps to KAFKA_STORAGE_ERROR)."""

    def __init__(self, message: str, log_dir: str | None = None) -> None:
        super().__init__(message)
        self.log_dir = log_dir


class AppendFaults(Protocol):
    """The file system's answer to an append, as an input of the broker (see the module docstring)."""

    def injected(self, log_dir: str) -> bool:
        """True in a replay where the recorded run's append to ``log_dir`` failed at this point."""
        ...

    def failed(self, log_dir: str) -> None:
        """An append to ``log_dir`` failed (a live broker records it for the replay)."""
        ...


# ---------------------------------------------------------------------------------------------------- checkpoints


def write_offset_checkpoint(path: str, offsets: Mapping[TopicPartition, int]) -> None:
    """CheckpointFile.write: ``0``, count, then ``topic partition offset`` lines; tmp file + fsync + atomic rename."""
    lines = [str(CHECKPOINT_VERSION), str(len(offsets))]
    # sorted on a plain tuple key: comparing attrs TopicPartitions is ~10x slower, and this runs over every partition
    lines += [f"{tp.topic} {tp.partition} {off}"
              for tp, off in sorted(offsets.items(), key=lambda kv: (kv[0].topic, kv[0].partition))]
    _atomic_write(path, "\n".join(lines) + "\n")


def read_offset_checkpoint(path: str) -> dict[TopicPartition, int]:
    """CheckpointFile.read; a missing file is empty, a malformed one raises KafkaStorageError (Kafka: IOException)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise KafkaStorageError(f"error reading {path}: {e}", os.path.dirname(path)) from e
    try:
        if int(lines[0]) != CHECKPOINT_VERSION:
            raise ValueError(f"unrecognised version {lines[0]}")
        count = int(lines[1])
        result: dict[TopicPartition, int] = {}
        for line in lines[2:2 + count]:
            topic, part, off = line.split(" ")
            result[TopicPartition(topic, int(part))] = int(off)
        if len(result) != count:
            raise ValueError(f"expected {count} entries, found {len(result)}")
        return result
    except (ValueError, IndexError) as e:
        raise KafkaStorageError(f"malformed checkpoint {path}: {e}", os.path.dirname(path)) from e


def _atomic_write(path: str, text: str) -> None:
    tmp = path + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        raise KafkaStorageError(f"error writing {path}: {e}", os.path.dirname(path)) from e


class LazyOffsetCheckpoints(Mapping[str, Mapping[TopicPartition, int]]):
    """Kafka's LazyOffsetCheckpoints: log dir → its replication-offset-checkpoint, each read on first use (an
    unreadable one as empty, as Kafka does for a missing file)."""

    def __init__(self, log_dirs: list[str]) -> None:
        self._dirs = list(log_dirs)
        self._read: dict[str, dict[TopicPartition, int]] = {}

    def __getitem__(self, log_dir: str) -> Mapping[TopicPartition, int]:
        if log_dir not in self._dirs:
            raise KeyError(log_dir)
        offsets = self._read.get(log_dir)
        if offsets is None:
            try:
                offsets = read_offset_checkpoint(os.path.join(log_dir, REPLICATION_OFFSET_CHECKPOINT))
            except KafkaStorageError:
                offsets = {}
            self._read[log_dir] = offsets
        return offsets

    def __iter__(self) -> Iterator[str]:
        return iter(self._dirs)

    def __len__(self) -> int:
        return len(self._dirs)


def _overwrite(path: str, text: str) -> None:
    """A leader-epoch checkpoint, written over the old one in place: not fsynced and not renamed, unlike Kafka's
    LeaderEpochCheckpointFile. A broker made leader of thousands of partitions at once (a controlled shutdown of its
    peer) writes one file each, on the driver thread its controller shares; with ZooKeeper fsyncing on the same disk
    a synced write took ~1 ms, a rename ~0.2-0.5 ms and an in-place write ~0.03 ms (py-spy of a controlled shutdown;
    ``python -m bench.checkpoint_write``). Safe to read whatever a crash leaves: the file states its entry count, so
    stale bytes after a shorter rewrite (killed before the truncate) are ignored, and an unreadable file reads as no
    epochs (only a more conservative truncation on recovery)."""
    data = text.encode()
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            os.pwrite(fd, data, 0)
            os.ftruncate(fd, len(data))
        finally:
            os.close(fd)
    except OSError as e:
        raise KafkaStorageError(f"error writing {path}: {e}", os.path.dirname(path)) from e


class LeaderEpochCheckpointFile:
    """kafka.server.checkpoints.LeaderEpochCheckpointFile: ``leader-epoch-checkpoint`` in the partition dir, written
    with `_overwrite`; an unreadable file reads as no epochs. A failed write goes to ``on_error`` (the Log's: raise,
    or remember it when I/O errors are deferred)."""

    def __init__(self, path: str, log_dir: str, on_error: Callable[[KafkaStorageError], None]) -> None:
        self.path = path
        self.log_dir = log_dir
        self._on_error = on_error

    def read(self) -> list[EpochEntry]:
        try:
            with open(self.path, encoding="utf-8") as f:
                return decode_leader_epoch_checkpoint(f.read())
        except (OSError, ValueError, IndexError):
            return []

    def write(self, entries: Iterable[EpochEntry]) -> None:
        try:
            _overwrite(self.path, encode_leader_epoch_checkpoint(entries))
        except KafkaStorageError as e:
            e.log_dir = self.log_dir
            self._on_error(e)


def _check_dir(log_dir: str) -> None:
    if not os.path.isdir(log_dir):
        raise KafkaStorageError(f"log dir {log_dir} is not available", log_dir)


def partition_dir_name(tp: TopicPartition) -> str:
    return f"{tp.topic}-{tp.partition}"


# ------------------------------------------------------------------------------------------------------------------ Log


class Log:
    """kafka.log.Log for one partition, with a single segment and the leader-epoch cache.

    Offsets start at 0 (no retention, so the log start offset stays 0). ``high_watermark`` is kept in memory and
    checkpointed by the ReplicaManager.
    """

    def __init__(self, parent_dir: str, topic_partition: TopicPartition, high_watermark: int = 0,
                 defer: Callable[[KafkaStorageError], bool] | None = None,
                 append_faults: AppendFaults | None = None) -> None:
        self.parent_dir = parent_dir
        self.topic_partition = topic_partition
        self.dir = os.path.join(parent_dir, partition_dir_name(topic_partition))
        self.log_start_offset = 0
        self._defer = defer  # LogManager.defer: True = the failure was remembered, carry on in memory
        self._append_faults = append_faults
        self._positions: list[int] = []  # byte position of each record in the segment, index = offset
        self._values: list[str] = []  # the records themselves (reads are served from memory)
        self._size = 0
        self._high_watermark = 0
        self._deleted = False
        self._recover()
        self.update_high_watermark(high_watermark)

    # -------------------------------------------------------------------------------------------- load and recovery

    @property
    def segment_path(self) -> str:
        return os.path.join(self.dir, SEGMENT_FILE)

    def _io_failed(self, error: KafkaStorageError) -> None:
        """Raise ``error`` unless the LogManager defers I/O failures (then the caller carries on in memory)."""
        if self._defer is None or not self._defer(error):
            raise error

    def _recover(self) -> None:
        """Log.loadSegments / recoverSegment: keep the longest valid prefix of records, truncate a torn tail, and
        rebuild the leader-epoch cache from the records' epochs (what recoverSegment's ``leaderEpochCache.assign``
        per batch does for an unflushed segment; kactor has one segment and no recovery point for it). The cache
        therefore ends at the log end, like Kafka's ``truncateFromEnd(logEndOffset)`` after loading, and a
        checkpoint a crash left stale is rewritten."""
        derived: list[EpochEntry] = []
        try:
            os.makedirs(self.dir, exist_ok=True)
            with open(self.segment_path, "a+b") as f:
                f.seek(0)
                data = f.read()
                pos = 0
                valid_end = 0
                while pos < len(data):
                    nl = data.find(b"\n", pos)
                    if nl < 0:
                        break
                    try:
                        offset, epoch, value = json.loads(data[pos:nl])
                    except (ValueError, TypeError):
                        break
                    if offset != len(self._positions):
                        break
                    if isinstance(epoch, int) and epoch >= 0 and (not derived or derived[-1][0] != epoch):
                        # LeaderEpochFileCache.assign's monotonicity: a lower epoch replaces the later entries
                        derived = [(e, o) for e, o in derived if e < epoch and o < offset]
                        derived.append((epoch, offset))
                    self._positions.append(pos)
                    self._values.append(value)
                    pos = nl + 1
                    valid_end = pos
                if valid_end != len(data):
                    f.truncate(valid_end)
                self._size = valid_end
        except OSError as e:
            self._positions, self._values, self._size, derived = [], [], 0, []
            self._io_failed(KafkaStorageError(f"error loading log {self.dir}: {e}", self.parent_dir))
        checkpoint = LeaderEpochCheckpointFile(os.path.join(self.dir, LEADER_EPOCH_CHECKPOINT), self.parent_dir,
                                               self._io_failed)
        self.leader_epoch_cache = LeaderEpochFileCache(lambda: self.log_end_offset, checkpoint, derived)
        if not self._deleted and checkpoint.read() != derived:
            checkpoint.write(derived)

    # ------------------------------------------------------------------------------------------------------ offsets

    @property
    def log_end_offset(self) -> int:
        return self.log_start_offset + len(self._positions)

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    def update_high_watermark(self, hw: int) -> int:
        """Log.updateHighWatermark: clamp to [logStartOffset, logEndOffset] and set (may go down, e.g. truncation)."""
        self._high_watermark = max(self.log_start_offset, min(hw, self.log_end_offset))
        return self._high_watermark

    def maybe_increment_high_watermark(self, hw: int) -> bool:
        """Log.maybeIncrementHighWatermark: only moves forward; the new value may not exceed the log end offset."""
        if hw > self.log_end_offset:
            raise ValueError(f"high watermark {hw} beyond log end offset {self.log_end_offset} "
                             f"of {self.topic_partition}")
        if hw > self._high_watermark:
            self._high_watermark = hw
            return True
        return False

    # ---------------------------------------------------------------------------------------------- append and read

    def append(self, records: Iterable[str], leader_epoch: int) -> tuple[int, int]:
        """Log.appendAsLeader: append ``records`` in ``leader_epoch``; return (first offset, last offset)."""
        records = list(records)
        return self.append_batches(records, ((leader_epoch, self.log_end_offset),))

    def append_batches(self, records: Sequence[str], batches: Sequence[EpochEntry]) -> tuple[int, int]:
        """Log.appendAsFollower: append ``records`` whose epochs are given as (partitionLeaderEpoch, baseOffset)
        runs, as the leader's record batches carry them; each run assigns its epoch in the leader-epoch cache
        (Log.append → maybeAssignEpochStartOffset per batch). Returns (first offset, last offset)."""
        self._ensure_live()
        base = self.log_end_offset
        if not records:
            return base, base - 1
        bounds = [max(o, base) for _, o in batches[1:]] + [base + len(records)]
        chunks = []
        positions = []
        pos = self._size
        i = 0
        for (epoch, _), end in zip(batches, bounds, strict=True):
            for offset in range(base + i, end):
                line = (json.dumps([offset, epoch, records[offset - base]], separators=(",", ":")) + "\n").encode()
                positions.append(pos)
                pos += len(line)
                chunks.append(line)
            i = end - base
        faults = self._append_faults
        try:
            if faults is not None and faults.injected(self.parent_dir):
                raise OSError(errno.EIO, "the recorded run's append failed here")
            with open(self.segment_path, "ab") as f:
                f.write(b"".join(chunks))
        except OSError as e:
            # never carried on in memory: what the leader acknowledges must be in the segment (see the module doc)
            with contextlib.suppress(OSError):
                os.truncate(self.segment_path, self._size)  # a torn write would be read back after our next append
            if faults is not None:
                faults.failed(self.parent_dir)
            # the caller (ReplicaManager's produce and fetcher paths) defers it or takes the dir offline
            raise KafkaStorageError(f"error appending to {self.dir}: {e}", self.parent_dir) from None
        self._positions.extend(positions)
        self._values.extend(records)
        self._size = pos
        cache = self.leader_epoch_cache
        for (epoch, start), end in zip(batches, bounds, strict=True):
            start = max(start, base)
            if start < end:
                cache.assign(epoch, start)
        return base, base + len(chunks) - 1

    def read(self, start_offset: int, max_records: int, max_offset: int | None = None) -> tuple[str, ...]:
        """Log.read: records from ``start_offset`` (at most ``max_records``; not at or beyond ``max_offset``)."""
        self._ensure_live()
        end = self.log_end_offset if max_offset is None else min(max_offset, self.log_end_offset)
        end = min(end, start_offset + max_records)
        if start_offset < self.log_start_offset or start_offset >= end:
            return ()
        return tuple(self._values[start_offset - self.log_start_offset:end - self.log_start_offset])

    # The string read under the name it keeps while the log moves to record-batch bytes (issue #20): ``read`` becomes
    # Log.read(start_offset, max_bytes, ...) -> bytes; callers of the string form move here first.
    read_legacy = read

    def truncate_to(self, offset: int) -> bool:
        """Log.truncateTo: drop records at and beyond ``offset``; returns whether anything was truncated."""
        self._ensure_live()
        if offset >= self.log_end_offset:
            return False
        offset = max(offset, self.log_start_offset)
        new_size = self._positions[offset - self.log_start_offset]
        try:
            with open(self.segment_path, "r+b") as f:
                f.truncate(new_size)
        except OSError as e:
            self._io_failed(KafkaStorageError(f"error truncating {self.dir}: {e}", self.parent_dir))
        del self._positions[offset - self.log_start_offset:]
        del self._values[offset - self.log_start_offset:]
        self._size = new_size
        if self._high_watermark > offset:
            self._high_watermark = offset
        self.leader_epoch_cache.truncate_from_end(offset)
        return True

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

    def epochs_of(self, start_offset: int, count: int) -> tuple[EpochEntry, ...]:
        """The (partitionLeaderEpoch, baseOffset) runs of ``count`` records from ``start_offset`` (what the
        record batches of a fetch response carry)."""
        return self.leader_epoch_cache.epochs_between(start_offset, start_offset + count)

    # ------------------------------------------------------------------------------------------------------ misc

    def _ensure_live(self) -> None:
        if self._deleted:
            raise KafkaStorageError(f"log {self.dir} has been deleted", self.parent_dir)

    def __repr__(self) -> str:
        return (f"Log({self.topic_partition}, dir={self.parent_dir}, leo={self.log_end_offset}, "
                f"hw={self.high_watermark})")


# ----------------------------------------------------------------------------------------------------------- LogManager


class LogManager:
    """kafka.log.LogManager: the logs of one broker over its log dirs, offline dirs, deletion and checkpoints."""

    def __init__(self, log_dirs: Iterable[str], owns: Callable[[TopicPartition], bool] | None = None,
                 defer_io_errors: bool = False, append_faults: AppendFaults | None = None) -> None:
        # ``owns``: the partitions this manager hosts when a broker's partitions are sharded over several
        # PartitionActors (each shard loads only its own logs and leaves the others' in place).
        self.owns = owns
        self.log_dirs: tuple[str, ...] = tuple(os.path.abspath(d) for d in log_dirs)
        self.offline_dirs: set[str] = set()
        # defer_io_errors: failures are remembered here (for the log-dir probe), never acted upon directly
        self.defer_io_errors = defer_io_errors
        self.deferred_io_failures: set[str] = set()
        self.append_faults = append_faults
        self._logs: dict[TopicPartition, Log] = {}
        for d in self.log_dirs:
            try:
                os.makedirs(d, exist_ok=True)
            except OSError as e:
                if not self.defer(KafkaStorageError(str(e), d)):
                    self.offline_dirs.add(d)
        self.load_logs()

    def defer(self, error: KafkaStorageError) -> bool:
        """True if I/O failures are deferred: ``error``'s dir is remembered and the caller carries on in memory."""
        if not self.defer_io_errors:
            return False
        if error.log_dir is not None:
            self.deferred_io_failures.add(error.log_dir)
        return True

    def _new_log(self, log_dir: str, tp: TopicPartition, high_watermark: int) -> Log:
        return Log(log_dir, tp, high_watermark, self.defer if self.defer_io_errors else None, self.append_faults)

    # --------------------------------------------------------------------------------------------------- startup

    def load_logs(self) -> None:
        """LogManager.loadLogs: open every ``<topic>-<partition>`` dir; finish deletions of ``*-delete`` dirs."""
        for d in self.live_log_dirs:
            try:
                hws = read_offset_checkpoint(os.path.join(d, REPLICATION_OFFSET_CHECKPOINT))
                names = sorted(os.listdir(d))
            except (KafkaStorageError, OSError) as e:
                if not self.defer(KafkaStorageError(str(e), d)):
                    self.offline_dirs.add(d)
                continue
            for name in names:
                path = os.path.join(d, name)
                if not os.path.isdir(path):
                    continue
                if name.endswith(DELETE_DIR_SUFFIX):
                    if self.owns is None:
                        shutil.rmtree(path, ignore_errors=True)
                    continue
                try:
                    tp = TopicPartition.parse(name)
                except ValueError:
                    continue
                if self.owns is not None and not self.owns(tp):
                    continue
                try:
                    self._logs[tp] = self._new_log(d, tp, hws.get(tp, 0))
                except KafkaStorageError:
                    self.offline_dirs.add(d)

    # ----------------------------------------------------------------------------------------------------- dirs

    @property
    def live_log_dirs(self) -> tuple[str, ...]:
        return tuple(d for d in self.log_dirs if d not in self.offline_dirs)

    def is_log_dir_online(self, log_dir: str) -> bool:
        return log_dir in self.log_dirs and log_dir not in self.offline_dirs

    def mark_dir_offline(self, log_dir: str) -> bool:
        """LogDirFailureChannel.maybeAddOfflineLogDir; returns whether the dir was online until now."""
        if log_dir in self.offline_dirs or log_dir not in self.log_dirs:
            return False
        self.offline_dirs.add(log_dir)
        return True

    def handle_log_dir_failure(self, log_dir: str) -> list[TopicPartition]:
        """LogManager.handleLogDirFailure: forget the dir's logs; returns their partitions."""
        self.mark_dir_offline(log_dir)
        gone = [tp for tp, log in self._logs.items() if log.parent_dir == log_dir]
        for tp in gone:
            del self._logs[tp]
        return gone

    # ----------------------------------------------------------------------------------------------------- logs

    def get_log(self, tp: TopicPartition) -> Log | None:
        return self._logs.get(tp)

    @property
    def all_logs(self) -> dict[TopicPartition, Log]:
        return dict(self._logs)

    def get_or_create_log(self, tp: TopicPartition, is_new: bool = False,
                          high_watermark_checkpoints: Mapping[str, Mapping[TopicPartition, int]] | None = None) -> Log:
        """LogManager.getOrCreateLog: a missing log is created in the live dir with the fewest logs — unless some dir
        is offline and ``is_new`` is false (the replica may have lived there: KafkaStorageException)."""
        log = self._logs.get(tp)
        if log is not None:
            return log
        if not is_new and self.offline_dirs:
            raise KafkaStorageError(
                f"Can not create log for {tp} because log directories "
                f"{','.join(sorted(self.offline_dirs))} are offline")
        live = self.live_log_dirs
        if not live:
            raise KafkaStorageError(f"Can not create log for {tp} because all log directories are offline")
        counts = {d: 0 for d in live}
        for lg in self._logs.values():
            if lg.parent_dir in counts:
                counts[lg.parent_dir] += 1
        log_dir = min(live, key=lambda d: (counts[d], live.index(d)))
        try:
            if not self.defer_io_errors:
                _check_dir(log_dir)
            hw = 0
            if high_watermark_checkpoints is not None:
                hw = high_watermark_checkpoints.get(log_dir, {}).get(tp, 0)
            log = self._new_log(log_dir, tp, hw)
        except KafkaStorageError as e:
            e.log_dir = log_dir
            self.mark_dir_offline(log_dir)
            raise
        self._logs[tp] = log
        return log

    def delete_log(self, tp: TopicPartition) -> bool:
        """LogManager.asyncDelete of one log (done synchronously here): rename to ``<tp>.<uuid>-delete``, remove it,
        checkpoint its dir. Returns whether a log existed. A broken dir raises KafkaStorageError (the log is
        forgotten anyway)."""
        existed, errors = self.delete_logs((tp,))
        if tp in errors:
            raise errors[tp]
        return tp in existed

    def delete_logs(self, tps: Iterable[TopicPartition]
                    ) -> tuple[set[TopicPartition], dict[TopicPartition, KafkaStorageError]]:
        """LogManager.asyncDelete(topicPartitions, errorHandler) (Kafka 2.7+; done synchronously here): rename each
        log dir to ``<tp>.<uuid>-delete`` and remove it, then write the recovery-point and log-start-offset
        checkpoints of each dir that lost a log **once**, after all the renames ("Checkpoints are updated once all
        the directories have been renamed"). Kafka 2.6 checkpointed the dir after every single log: with 1,000
        replicas deleted by one StopReplica that rewrote (and fsynced) a 1,000-line file 2,000 times, which was
        most of a broker's deletion time (docs/performance-log.md, topic deletion). The files end up the same.

        Returns (the partitions that had a log, the per-partition storage errors). An error marks the log's dir
        offline unless I/O errors are deferred; the log is forgotten either way.
        """
        existed: set[TopicPartition] = set()
        errors: dict[TopicPartition, KafkaStorageError] = {}
        dirs: list[str] = []
        for tp in tps:
            log = self._logs.pop(tp, None)
            if log is None:
                continue
            existed.add(tp)
            log._deleted = True
            if log.parent_dir in self.offline_dirs:
                errors[tp] = KafkaStorageError(f"log dir {log.parent_dir} is offline", log.parent_dir)
                continue
            target = os.path.join(log.parent_dir,
                                  f"{partition_dir_name(tp)}.{uuid.uuid4().hex}{DELETE_DIR_SUFFIX}")
            try:
                _check_dir(log.parent_dir)
                os.rename(log.dir, target)
            except (KafkaStorageError, OSError) as e:
                error = e if isinstance(e, KafkaStorageError) else KafkaStorageError(
                    f"error deleting log {log.dir}: {e}", log.parent_dir)
                if not self.defer(error):
                    self.mark_dir_offline(log.parent_dir)
                    errors[tp] = error
                continue
            shutil.rmtree(target, ignore_errors=True)
            if log.parent_dir not in dirs:
                dirs.append(log.parent_dir)
        for d in dirs:
            if d not in self.offline_dirs:
                with contextlib.suppress(KafkaStorageError):
                    self.checkpoint_log_offsets(d)
        return existed, errors

    # ----------------------------------------------------------------------------------------------- checkpoints

    def checkpoint_log_offsets(self, log_dir: str | None = None) -> None:
        """checkpointRecoveryOffsetsAndCleanSnapshot + checkpointLogStartOffsets for one dir (or all live dirs).

        Every record is appended before the call returns, so the recovery point is the log end offset.
        """
        for d in ([log_dir] if log_dir else self.live_log_dirs):
            logs = {tp: lg for tp, lg in self._logs.items() if lg.parent_dir == d}
            write_offset_checkpoint(os.path.join(d, RECOVERY_POINT_CHECKPOINT),
                                    {tp: lg.log_end_offset for tp, lg in logs.items()})
            write_offset_checkpoint(os.path.join(d, LOG_START_OFFSET_CHECKPOINT),
                                    {tp: lg.log_start_offset for tp, lg in logs.items() if lg.log_start_offset > 0})

    def read_high_watermark_checkpoints(self) -> LazyOffsetCheckpoints:
        """LazyOffsetCheckpoints over the live dirs' ``replication-offset-checkpoint`` files: a dir's file is read
        only when a log is created there. Read eagerly, a broker parsed its whole checkpoint (10,000 entries) for
        every LeaderAndIsr, even one only changing leaders of logs it already had."""
        return LazyOffsetCheckpoints(self.live_log_dirs)
