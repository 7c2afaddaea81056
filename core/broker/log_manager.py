"""kafka.log.LogManager: the logs of one broker over its log dirs (core/broker/log.py holds one partition's `Log`).

* loading (LogManager.loadLogs): every ``<topic>-<partition>`` dir of a live log dir is opened as a Log with its
  high watermark, recovery point and log start offset from the dir's checkpoints (core/broker/checkpoints.py);
  ``-future`` dirs (a move under way) become future logs; ``*-delete`` dirs left by a crash are removed;
* the clean-shutdown marker ``.kafka_cleanshutdown`` in a log dir, written on close and read at load, spares the
  logs it names their recovery (kactor lists the partition dirs it vouches for, see `_write_clean_shutdown`);
* deleting a partition renames its directory to ``<topic>-<partition>.<uuid>-delete`` (Log.logDeleteDirName) and then
  removes it;
* offline dirs: any I/O failure, or a log dir that is missing / not a directory, raises `KafkaStorageError` and marks
  the dir offline (`LogDirFailureChannel.maybeAddOfflineLogDir`); the ReplicaManager later takes the dir's partitions
  offline. A LogManager built with ``defer_io_errors=True`` (the broker's PartitionActors) takes a dir offline only
  when a recorded input says so (the log-dir probe's ``LogDirFailure``), so a trace replays the same decisions on
  healthy scratch dirs; other failed writes are remembered in ``deferred_io_failures`` (core/broker/log.py's
  docstring has the rest);
* the recovery-point and log-start-offset checkpoints, the flusher and retention (LogManager's scheduled tasks, run
  by the ReplicaManager), and the future logs of AlterReplicaLogDirs (LogManager.futureLogs / preferredLogDirs).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence

from core.broker.checkpoints import (
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    LazyOffsetCheckpoints,
    atomic_write,
    read_offset_checkpoint,
    write_offset_checkpoint,
)
from core.broker.kafka_configs import KAFKA_CONFIGS
from core.broker.kafka_storage_error import KafkaStorageError
from core.broker.log import (
    CLEAN_SHUTDOWN_FILE,
    DELETE_DIR_SUFFIX,
    AppendFaults,
    Log,
    log_delete_dir_name,
    log_future_dir_name,
    parse_log_dir_name,
    partition_dir_name,
)
from core.broker.log_config import LogConfig
from core.broker.producer_state import PRODUCER_ID_EXPIRATION_MS
from core.disk import OS_DISK, Disk
from messages.common import TopicPartition

# ServerLogConfigs.LOG_INITIAL_TASK_DELAY_MS_CONFIG (Kafka 3.9; 2.6's LogManager.InitialTaskDelayMs, a fixed 30000)
LOG_INITIAL_TASK_DELAY_MS = "log.initial.task.delay.ms"
LOG_INITIAL_TASK_DELAY_MS_DEFAULT = 30000


def log_initial_task_delay_ms(broker_props: Mapping[str, str]) -> int:
    """KafkaConfig.logInitialTaskDelayMs (Kafka 3.9): the ``initialTaskDelayMs`` LogManager.startup schedules
    kafka-log-retention, kafka-log-flusher, kafka-recovery-point-checkpoint and kafka-log-start-offset-checkpoint
    with, from the broker's log.* properties; parsed and validated as Kafka does (a LONG, at least 0)."""
    text = broker_props.get(LOG_INITIAL_TASK_DELAY_MS)
    if text is None:
        return LOG_INITIAL_TASK_DELAY_MS_DEFAULT
    return int(KAFKA_CONFIGS[LOG_INITIAL_TASK_DELAY_MS].parse(text))


def _read_checkpoint_or_empty(path: str, disk: Disk = OS_DISK) -> dict[TopicPartition, int]:
    """A recovery-point or log-start-offset checkpoint; an unreadable one as empty (a full recovery, start at the
    first segment)."""
    try:
        return read_offset_checkpoint(path, disk)
    except KafkaStorageError:
        return {}


def _check_dir(log_dir: str, disk: Disk = OS_DISK) -> None:
    if not disk.isdir(log_dir):
        raise KafkaStorageError(f"log dir {log_dir} is not available", log_dir)


def _read_clean_shutdown(log_dir: str, names: Sequence[str] | None, disk: Disk = OS_DISK) -> set[str]:
    """The partition dirs the clean-shutdown marker vouches for: those it lists, or (an empty marker, Kafka's) every
    partition dir in ``names``; none without a marker."""
    path = os.path.join(log_dir, CLEAN_SHUTDOWN_FILE)
    try:
        listed = {line.strip() for line in disk.read_file(path).decode("utf-8").splitlines() if line.strip()}
    except FileNotFoundError:
        return set()
    if listed or names is None:
        return listed
    return {n for n in names if not n.endswith(DELETE_DIR_SUFFIX) and disk.isdir(os.path.join(log_dir, n))}


def _write_clean_shutdown(log_dir: str, names: Sequence[str], disk: Disk = OS_DISK) -> None:
    """The marker with ``names`` (written like a checkpoint), or none when there are none: kactor never writes an
    empty marker, which would vouch for every log of the dir, those of a shard that did not shut down too."""
    path = os.path.join(log_dir, CLEAN_SHUTDOWN_FILE)
    if not names:
        with contextlib.suppress(FileNotFoundError):
            disk.unlink(path)
        return
    atomic_write(path, "".join(f"{n}\n" for n in names), disk)


class LogManager:
    """kafka.log.LogManager: the logs of one broker over its log dirs, offline dirs, deletion and checkpoints."""

    def __init__(self, log_dirs: Iterable[str], owns: Callable[[TopicPartition], bool] | None = None,
                 defer_io_errors: bool = False, append_faults: AppendFaults | None = None,
                 disk: Disk = OS_DISK, max_pid_expiration_ms: int = PRODUCER_ID_EXPIRATION_MS) -> None:
        self.disk = disk  # the file system every log of this manager is on (a live broker: OS_DISK)
        # LogManager.maxPidExpirationMs (config.transactionalIdExpirationMs): how long every log of this manager
        # remembers an idle producer
        self.max_pid_expiration_ms = max_pid_expiration_ms
        # ``owns``: the partitions this manager hosts when a broker's partitions are sharded over several
        # PartitionActors (each shard loads only its own logs and leaves the others' in place).
        self.owns = owns
        self.log_dirs: tuple[str, ...] = tuple(os.path.abspath(d) for d in log_dirs)
        self.offline_dirs: set[str] = set()
        # defer_io_errors: failures are remembered here (for the log-dir probe), never acted upon directly
        self.defer_io_errors = defer_io_errors
        self.deferred_io_failures: set[str] = set()
        self.append_faults = append_faults
        # the LogConfig a new or loaded log starts with: ``config_for(topic)`` when set (the ReplicaManager's
        # LogConfigs.for_topic), else ``default_config``; LogConfigs replaces a log's config when its topic's changes
        self.default_config: LogConfig | None = None
        self.config_for: Callable[[str], LogConfig] | None = None
        self._logs: dict[TopicPartition, Log] = {}
        # LogManager.futureLogs: the replicas being moved to another dir, by partition (at most one each)
        self._future_logs: dict[TopicPartition, Log] = {}
        # whether any replica is moving between log dirs (`future_logs` without its copy), kept wherever
        # _future_logs changes: asked after every step of a PartitionActor, where a property is a Python call
        self.has_future_logs = False
        # LogManager.preferredLogDirs: where AlterReplicaLogDirs asked a partition to live; its log (or future log) is
        # created there, and the preference is then forgotten
        self.preferred_log_dirs: dict[TopicPartition, str] = {}
        for d in self.log_dirs:
            try:
                disk.makedirs(d, exist_ok=True)
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

    def _new_log(self, log_dir: str, tp: TopicPartition, high_watermark: int, recovery_point: int = 0,
                 log_start_offset: int = 0, clean_shutdown: bool = False, dir_name: str | None = None) -> Log:
        config = self.config_for(tp.topic) if self.config_for is not None else self.default_config
        return Log(log_dir, tp, high_watermark, self.defer if self.defer_io_errors else None, self.append_faults,
                   config=config, recovery_point=recovery_point, log_start_offset=log_start_offset,
                   clean_shutdown=clean_shutdown, dir_name=dir_name, disk=self.disk,
                   max_producer_id_expiration_ms=self.max_pid_expiration_ms)

    # --------------------------------------------------------------------------------------------------- startup

    def load_logs(self) -> None:
        """LogManager.loadLogs: open every ``<topic>-<partition>`` dir; finish deletions of ``*-delete`` dirs.

        The dir's clean-shutdown marker (``.kafka_cleanshutdown``) spares the logs it names their recovery; it is
        then removed (the names of logs this manager does not own stay in it), before anything is appended."""
        for d in self.live_log_dirs:
            try:
                disk = self.disk
                hws = read_offset_checkpoint(os.path.join(d, REPLICATION_OFFSET_CHECKPOINT), disk)
                names = sorted(disk.listdir(d))
                recovery_points = _read_checkpoint_or_empty(os.path.join(d, RECOVERY_POINT_CHECKPOINT), disk)
                start_offsets = _read_checkpoint_or_empty(os.path.join(d, LOG_START_OFFSET_CHECKPOINT), disk)
                clean = _read_clean_shutdown(d, names, disk)
            except (KafkaStorageError, OSError) as e:
                if not self.defer(KafkaStorageError(str(e), d)):
                    self.offline_dirs.add(d)
                continue
            for name in names:
                path = os.path.join(d, name)
                if not self.disk.isdir(path):
                    continue
                if name.endswith(DELETE_DIR_SUFFIX):
                    if self.owns is None:
                        self.disk.rmtree(path)
                    continue
                try:
                    tp, future = parse_log_dir_name(name)
                except ValueError:
                    continue
                if self.owns is not None and not self.owns(tp):
                    continue
                try:
                    # LogManager.loadLog: a ``-future`` dir is a move that was under way; its copy resumes once the
                    # partition is hosted again (ReplicaManager.becomeLeaderOrFollower)
                    log = self._new_log(d, tp, 0 if future else hws.get(tp, 0),
                                        0 if future else recovery_points.get(tp, 0),
                                        0 if future else start_offsets.get(tp, 0), name in clean,
                                        dir_name=name if future else None)
                    (self._future_logs if future else self._logs)[tp] = log
                    self.has_future_logs = bool(self._future_logs)
                except KafkaStorageError:
                    self.offline_dirs.add(d)
            if clean:
                # what another shard (or a later start) still has to load stays marked; what no longer exists goes
                others = sorted(n for n in clean if n in names and self.owns is not None
                                and not self.owns(parse_log_dir_name(n)[0]))
                try:
                    _write_clean_shutdown(d, others, self.disk)
                except OSError as e:
                    if not self.defer(KafkaStorageError(str(e), d)):
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
        for tp in [tp for tp, log in self._future_logs.items() if log.parent_dir == log_dir]:
            del self._future_logs[tp]
        self.has_future_logs = bool(self._future_logs)
        return gone

    # ----------------------------------------------------------------------------------------------------- logs

    def get_log(self, tp: TopicPartition, is_future: bool = False) -> Log | None:
        return (self._future_logs if is_future else self._logs).get(tp)

    @property
    def all_logs(self) -> dict[TopicPartition, Log]:
        return dict(self._logs)

    @property
    def future_logs(self) -> dict[TopicPartition, Log]:
        return dict(self._future_logs)

    def maybe_update_preferred_log_dir(self, tp: TopicPartition, log_dir: str) -> None:
        """LogManager.maybeUpdatePreferredLogDir: remembered unless the partition's current or future log is already
        in ``log_dir``; the next creation of its log (or future log) lands there and forgets it."""
        if all(lg is None or lg.parent_dir != log_dir for lg in (self._logs.get(tp), self._future_logs.get(tp))):
            self.preferred_log_dirs[tp] = log_dir

    def create_future_log(self, tp: TopicPartition, log_dir: str) -> Log:
        """LogManager.getOrCreateLog(isFuture = true): an empty ``<tp>.<uuid>-future`` log in ``log_dir`` (never the
        current log's dir); KafkaStorageError while any dir is offline (the replica might exist there too)."""
        current = self._logs.get(tp)
        if current is None or current.parent_dir == log_dir or tp in self._future_logs:
            raise ValueError(f"Can not create the future log for {tp} in {log_dir}")
        if self.offline_dirs:
            raise KafkaStorageError(f"Can not create log for {tp} because log directories "
                                    f"{','.join(sorted(self.offline_dirs))} are offline")
        if not self.is_log_dir_online(log_dir):
            raise KafkaStorageError(f"log dir {log_dir} is offline", log_dir)
        try:
            _check_dir(log_dir, self.disk)
            log = self._new_log(log_dir, tp, 0, dir_name=log_future_dir_name(tp))
        except KafkaStorageError as e:
            e.log_dir = log_dir
            raise
        self._future_logs[tp] = log
        self.has_future_logs = True
        self.preferred_log_dirs.pop(tp, None)
        return log

    def remove_future_log(self, tp: TopicPartition) -> bool:
        """Partition.removeFutureLocalReplica → LogManager.asyncDelete(tp, isFuture = true): the move is abandoned,
        its ``-future`` dir deleted. Returns whether there was one."""
        log = self._future_logs.pop(tp, None)
        self.has_future_logs = bool(self._future_logs)
        if log is None:
            return False
        self._remove_log_dir(log)
        return True

    def _remove_log_dir(self, log: Log) -> None:
        """Close ``log``, rename its dir to Kafka's ``-delete`` name and remove it."""
        with contextlib.suppress(KafkaStorageError):
            log.close()
        log._deleted = True
        target = os.path.join(log.parent_dir, log_delete_dir_name(log.topic_partition))
        try:
            self.disk.rename(log.dir, target)
        except OSError as e:
            error = KafkaStorageError(f"error deleting log {log.dir}: {e}", log.parent_dir)
            if not self.defer(error):
                raise error from None
            return
        self.disk.rmtree(target)

    def replace_current_with_future_log(self, tp: TopicPartition) -> Log:
        """LogManager.replaceCurrentWithFutureLog, once the future log has caught up with the current one (same
        log end; the caller holds the partition, as Partition.maybeReplaceCurrentWithFutureReplica holds its lock):
        the future dir takes the partition's own name, the current dir is renamed to ``-delete`` and removed, and
        both dirs' checkpoints are written. The high watermark, log start offset and any leader epoch the copy could
        not bring (one begun with no batch yet) are carried over; the producers' state was rebuilt from the copied
        batches and survives the rename through its snapshot. Returns the partition's log from now on."""
        source = self._logs[tp]
        future = self._future_logs[tp]
        if future.log_end_offset != source.log_end_offset:
            raise ValueError(f"the future log of {tp} is at {future.log_end_offset}, not {source.log_end_offset}")
        future.update_high_watermark(source.high_watermark)
        if source.log_start_offset > future.log_start_offset:
            future.maybe_increment_log_start_offset(source.log_start_offset)
        future.close()  # flushed, producers snapshotted: the reopened log recovers nothing
        dest = os.path.join(future.parent_dir, partition_dir_name(tp))
        try:
            self.disk.rename(future.dir, dest)
            log = self._new_log(future.parent_dir, tp, source.high_watermark, future.log_end_offset,
                                future.log_start_offset, clean_shutdown=True)
        except OSError as e:
            raise KafkaStorageError(f"error renaming {future.dir} to {dest}: {e}", future.parent_dir) from None
        # after the reopen, whose load drops an epoch starting at the log end (truncateFromEnd)
        latest = log.latest_epoch
        for epoch, start in source.leader_epoch_entries:
            if latest is None or epoch > latest:
                log.assign_epoch_start_offset(epoch, start)
        future._deleted = True
        del self._future_logs[tp]
        self.has_future_logs = bool(self._future_logs)
        self._logs[tp] = log
        self._remove_log_dir(source)
        for d in (source.parent_dir, log.parent_dir):
            if d not in self.offline_dirs:
                self.checkpoint_log_offsets(d)
        return log

    def get_or_create_log(self, tp: TopicPartition, is_new: bool = False,
                          high_watermark_checkpoints: Mapping[str, Mapping[TopicPartition, int]] | None = None) -> Log:
        """LogManager.getOrCreateLog: a missing log is created in its preferred dir (AlterReplicaLogDirs asked for one
        before the partition was hosted), else in the live dir with the fewest logs — unless some dir is offline and
        ``is_new`` is false (the replica may have lived there: KafkaStorageException)."""
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
        preferred = self.preferred_log_dirs.get(tp)
        log_dir = preferred if preferred in live else min(live, key=lambda d: (counts[d], live.index(d)))
        try:
            if not self.defer_io_errors:
                _check_dir(log_dir, self.disk)
            hw = 0
            if high_watermark_checkpoints is not None:
                hw = high_watermark_checkpoints.get(log_dir, {}).get(tp, 0)
            log = self._new_log(log_dir, tp, hw)
        except KafkaStorageError as e:
            e.log_dir = log_dir
            self.mark_dir_offline(log_dir)
            raise
        self._logs[tp] = log
        self.preferred_log_dirs.pop(tp, None)  # satisfied
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
            if tp in self._future_logs:
                with contextlib.suppress(KafkaStorageError):
                    self.remove_future_log(tp)
            self.preferred_log_dirs.pop(tp, None)
            log = self._logs.pop(tp, None)
            if log is None:
                continue
            existed.add(tp)
            log._deleted = True
            if log.parent_dir in self.offline_dirs:
                errors[tp] = KafkaStorageError(f"log dir {log.parent_dir} is offline", log.parent_dir)
                continue
            target = os.path.join(log.parent_dir, log_delete_dir_name(tp))
            try:
                _check_dir(log.parent_dir, self.disk)
                self.disk.rename(log.dir, target)
            except (KafkaStorageError, OSError) as e:
                error = e if isinstance(e, KafkaStorageError) else KafkaStorageError(
                    f"error deleting log {log.dir}: {e}", log.parent_dir)
                if not self.defer(error):
                    self.mark_dir_offline(log.parent_dir)
                    errors[tp] = error
                continue
            self.disk.rmtree(target)
            if log.parent_dir not in dirs:
                dirs.append(log.parent_dir)
        for d in dirs:
            if d not in self.offline_dirs:
                with contextlib.suppress(KafkaStorageError):
                    self.checkpoint_log_offsets(d)
        return existed, errors

    # ----------------------------------------------------------------------------------------------- checkpoints

    def checkpoint_log_offsets(self, log_dir: str | None = None) -> None:
        """checkpointRecoveryOffsetsAndCleanSnapshot + checkpointLogStartOffsets for one dir (or all live dirs)."""
        self.checkpoint_recovery_offsets(log_dir)
        self.checkpoint_log_start_offsets(log_dir)

    def checkpoint_recovery_offsets(self, log_dir: str | None = None) -> None:
        """LogManager.checkpointLogRecoveryOffsets ("kafka-recovery-point-checkpoint", every
        log.flush.offset.checkpoint.interval.ms): each log's recovery point, which only moves past flushed data."""
        for d in ([log_dir] if log_dir else self.live_log_dirs):
            self._write_checkpoint(d, RECOVERY_POINT_CHECKPOINT,
                                   {tp: lg.recovery_point for tp, lg in self._logs.items() if lg.parent_dir == d})

    def checkpoint_log_start_offsets(self, log_dir: str | None = None) -> None:
        """LogManager.checkpointLogStartOffsets ("kafka-log-start-offset-checkpoint", every
        log.flush.start.offset.checkpoint.interval.ms)."""
        for d in ([log_dir] if log_dir else self.live_log_dirs):
            self._write_checkpoint(d, LOG_START_OFFSET_CHECKPOINT,
                                   {tp: lg.log_start_offset for tp, lg in self._logs.items()
                                    if lg.parent_dir == d and lg.log_start_offset > 0})

    def _write_checkpoint(self, log_dir: str, name: str, offsets: dict[TopicPartition, int]) -> None:
        """One dir's checkpoint; sharded, the other shards' entries are kept (all shards run on one thread)."""
        path = os.path.join(log_dir, name)
        if self.owns is not None:
            owns = self.owns
            others = _read_checkpoint_or_empty(path, self.disk)
            offsets = {**{tp: o for tp, o in others.items() if not owns(tp)}, **offsets}
        write_offset_checkpoint(path, offsets, self.disk)

    def flush_dirty_logs(self, now_ms: int) -> None:
        """LogManager.flushDirtyLogs ("kafka-log-flusher", every log.flush.scheduler.interval.ms): a log whose last
        flush is flush.ms or longer ago is flushed."""
        for log in list(self._logs.values()):
            if log.parent_dir in self.offline_dirs:
                continue
            try:
                log.maybe_flush_by_time(now_ms)
            except KafkaStorageError as e:
                if not self.defer(e):
                    self.mark_dir_offline(log.parent_dir)

    def cleanup_logs(self, now_ms: int) -> int:
        """LogManager.cleanupLogs (every log.retention.check.interval.ms): delete_old_segments of every log, then the
        checkpoints of the dirs whose logs' start moved; returns the number of segments deleted."""
        deleted = 0
        moved: list[str] = []
        for log in list(self._logs.values()):
            n = log.delete_old_segments(now_ms)
            if n:
                deleted += n
                if log.parent_dir not in moved:
                    moved.append(log.parent_dir)
        # Kafka checkpoints log start offsets on a timer (log.flush.start.offset.checkpoint.interval.ms); here a dir
        # whose log starts moved is checkpointed at once, so a restart reads them
        for d in moved:
            try:
                self.checkpoint_log_offsets(d)
            except KafkaStorageError as e:
                if not self.defer(e):
                    self.mark_dir_offline(d)
        return deleted

    def close(self) -> None:
        """LogManager.shutdown: every log flushed and closed; then, per live dir, the recovery points (now the log
        ends) and log start offsets checkpointed and the clean-shutdown marker written, so the next start recovers
        nothing. The marker lists the logs closed here (a sharded broker's shards each add theirs; Kafka's is
        empty and means every log of the dir); a dir where something failed gets no marker entry."""
        failed: set[str] = set(self.offline_dirs)
        for log in [*self._logs.values(), *self._future_logs.values()]:
            try:
                log.close()
            except KafkaStorageError:
                failed.add(log.parent_dir)
            if log.parent_dir in self.deferred_io_failures:
                failed.add(log.parent_dir)
        for d in self.log_dirs:
            if d in failed:
                continue
            try:
                self.checkpoint_log_offsets(d)
                names = [os.path.basename(lg.dir) for lg in [*self._logs.values(), *self._future_logs.values()]
                         if lg.parent_dir == d]
                if self.owns is not None:
                    names += _read_clean_shutdown(d, None, self.disk)
                _write_clean_shutdown(d, sorted(set(names)), self.disk)
            except (KafkaStorageError, OSError) as e:
                log_error = e if isinstance(e, KafkaStorageError) else KafkaStorageError(str(e), d)
                if not self.defer(log_error):
                    self.mark_dir_offline(d)

    def read_high_watermark_checkpoints(self) -> LazyOffsetCheckpoints:
        """LazyOffsetCheckpoints over the live dirs' ``replication-offset-checkpoint`` files: a dir's file is read
        only when a log is created there. Read eagerly, a broker parsed its whole checkpoint (10,000 entries) for
        every LeaderAndIsr, even one only changing leaders of logs it already had."""
        return LazyOffsetCheckpoints(self.live_log_dirs, self.disk)
