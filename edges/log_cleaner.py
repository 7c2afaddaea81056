"""LogCleanerEdge: Kafka's LogCleaner — ``log.cleaner.threads`` CleanerThreads of a broker process, off the actors'
thread.

Each thread does what Kafka's CleanerThread.doWork does: choose the filthiest compacted log of the broker
(core.broker.cleaner.manager), clean it into ``.cleaned`` segments (core.broker.cleaner.cleaner, its I/O held to
``log.cleaner.io.max.bytes.per.second`` by one throttler shared by the threads, Kafka's Throttler), then hand the
swap to the partition shard that hosts the log, as a `LogCleaned` input (the shard swaps between two of its own
operations, so produce and fetch never wait for a cleaning, only for the renames of a swap), wait for its answer
and move the log's ``cleaner-offset-checkpoint`` entry; with nothing to clean it sleeps ``log.cleaner.backoff.ms``.

The threads read the logs the shards register (`register_shard`): a log's scalars, a copy of its segment list and
files of its non-active segments. A log that fails to clean for another reason than a change under it is marked
uncleanable (LogCleanerManager.markPartitionUncleanable) and left alone until the broker restarts.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from actors import names
from core.broker.cleaner.cleaner import CleanerStats, CleaningAbortedError, clean_log, delete_cleaned
from core.broker.cleaner.config import CleanerConfig
from core.broker.cleaner.manager import (
    grab_filthiest_compacted_log,
    plan_cleaning,
    read_cleaner_checkpoint,
    write_cleaner_checkpoint,
)
from core.broker.cleaner.offset_map import SkimpyOffsetMap
from core.broker.kafka_storage_error import KafkaStorageError
from core.broker.log_manager import LogManager
from messages.common import TopicPartition
from messages.log_cleaner import LogCleaned

log = logging.getLogger("kactor.log_cleaner")

SWAP_WAIT_S = 120.0  # how long a thread waits for the shard to swap (a shard stopped meanwhile never answers)


class Injector(Protocol):
    def inject(self, to: str, body: Any, sender: str, cause: int | None = None) -> None: ...


class Throttler:
    """kafka.utils.Throttler (checkIntervalMs 300, throttleDown): sleeps a thread long enough that the bytes it
    and the others observed stay at ``rate`` per second."""

    def __init__(self, rate: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep, check_interval_s: float = 0.3) -> None:
        self.rate = rate
        self._clock, self._sleep, self._interval = clock, sleep, check_interval_s
        self._lock = threading.Lock()
        self._period_start = clock()
        self._observed = 0.0

    def __call__(self, observed: int) -> None:
        """Throttler.maybeThrottle."""
        with self._lock:
            self._observed += observed
            now = self._clock()
            elapsed = now - self._period_start
            if elapsed < self._interval or self._observed <= 0:
                return
            sleep_s = 0.0
            if self._observed / elapsed > self.rate:
                sleep_s = self._observed / self.rate - elapsed
            self._period_start, self._observed = now, 0.0
        if sleep_s > 0:
            self._sleep(sleep_s)
            with self._lock:
                self._period_start = self._clock()


class LogCleanerEdge:
    """The broker's log cleaner threads (LogCleaner + LogCleanerManager's shared state)."""

    def __init__(self, runtime: Injector, config: CleanerConfig, log_dirs: tuple[str, ...],
                 clock: Callable[[], float] = time.time) -> None:
        self.runtime = runtime
        self.config = config
        self.log_dirs = tuple(os.path.abspath(d) for d in log_dirs)
        self.clock = clock
        self.throttler = Throttler(config.max_io_bytes_per_second)
        self._lock = threading.RLock()
        self._shards: dict[str, LogManager] = {}
        self._checkpoints: dict[str, dict[TopicPartition, int]] = {}
        self._in_progress: set[TopicPartition] = set()
        self._uncleanable: dict[str, set[TopicPartition]] = {}
        self._swaps: dict[TopicPartition, tuple[threading.Event, list[bool]]] = {}
        self._closed = threading.Event()
        self.last_stats: dict[int, CleanerStats] = {}
        self.dirtiest_ratio = 0.0
        self.max_compaction_delay_ms = 0
        self.cleanings = 0
        self._threads = [threading.Thread(target=self._run, args=(i,), name=f"kafka-log-cleaner-thread-{i}",
                                          daemon=True) for i in range(config.num_threads)]

    # ------------------------------------------------------------------------------------- from the driver thread

    def register_shard(self, shard: str, log_manager: LogManager) -> None:
        """A partition shard hosts the logs of ``log_manager`` (read, never changed, from the cleaner threads)."""
        with self._lock:
            self._shards[shard] = log_manager

    def swapped(self, tp: TopicPartition, ok: bool) -> None:
        """The shard's answer to a LogCleaned: whether the cleaning was swapped in."""
        with self._lock:
            waiting = self._swaps.get(tp)
        if waiting is not None:
            waiting[1].append(ok)
            waiting[0].set()

    # ----------------------------------------------------------------------------------------------- lifecycle

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def close(self, timeout_s: float | None = 5.0) -> None:
        """LogCleaner.shutdown; idempotent."""
        self._closed.set()
        for waiting, _ in list(self._swaps.values()):
            waiting.set()
        for thread in self._threads:
            if thread.is_alive() and thread is not threading.current_thread() and timeout_s is not None:
                thread.join(timeout_s)

    def _check_done(self) -> None:
        """CleanerThread.checkDone: a broker stopping aborts the cleaning under way."""
        if self._closed.is_set():
            raise CleaningAbortedError("the log cleaner is shutting down")

    # ---------------------------------------------------------------------------------------------- the threads

    def _run(self, thread_id: int) -> None:
        """CleanerThread.doWork."""
        while not self._closed.is_set():
            try:
                cleaned = self.clean_filthiest_log(thread_id)
            except Exception:  # noqa: BLE001 - a cleaner thread never dies of one log
                log.exception("log cleaner thread %d failed", thread_id)
                cleaned = False
            if not cleaned:
                self._closed.wait(self.config.backoff_ms / 1000)

    def _all_logs(self) -> dict[TopicPartition, tuple[str, Any]]:
        with self._lock:
            shards = dict(self._shards)
        return {tp: (shard, lg) for shard, lm in shards.items() for tp, lg in lm.all_logs.items()}

    def _checkpoint_of(self, log_dir: str) -> dict[TopicPartition, int]:
        """The dir's checkpoint, read once (the threads keep it; they are its only writers)."""
        offsets = self._checkpoints.get(log_dir)
        if offsets is None:
            try:
                offsets = read_cleaner_checkpoint(log_dir)
            except KafkaStorageError as e:
                log.error("Failed to access checkpoint file in dir %s: %s", log_dir, e)
                offsets = {}
            self._checkpoints[log_dir] = offsets
        return offsets

    def _update_checkpoint(self, log_dir: str, updates: dict[TopicPartition, int],
                           live: set[TopicPartition]) -> None:
        """LogCleanerManager.updateCheckpoints: the dir's entries for logs that still exist, with ``updates``."""
        offsets = {tp: o for tp, o in self._checkpoint_of(log_dir).items() if tp in live}
        offsets.update(updates)
        self._checkpoints[log_dir] = offsets
        try:
            write_cleaner_checkpoint(log_dir, offsets)
        except KafkaStorageError as e:
            log.error("Failed to write the cleaner checkpoint in dir %s: %s", log_dir, e)

    def clean_filthiest_log(self, thread_id: int) -> bool:
        """CleanerThread.cleanFilthiestLog: one log cleaned and swapped in; False when none needed it."""
        logs = self._all_logs()
        now_ms = int(self.clock() * 1000)
        with self._lock:
            checkpoints: dict[TopicPartition, int] = {}
            for d in self.log_dirs:
                checkpoints.update(self._checkpoint_of(d))
            skip = set(self._in_progress).union(*self._uncleanable.values())
            found = grab_filthiest_compacted_log({tp: lg for tp, (_, lg) in logs.items()}, checkpoints, skip, now_ms)
            self.dirtiest_ratio = found.dirtiest_ratio
            self.max_compaction_delay_ms = found.max_compaction_delay_ms
            for tp, offset in found.checkpoint_resets.items():
                self._update_checkpoint(logs[tp][1].parent_dir, {tp: offset}, set(logs))
            chosen = found.chosen
            if chosen is None:
                return False
            self._in_progress.add(chosen.topic_partition)
        tp = chosen.topic_partition
        shard, target = logs[tp]
        groups: tuple[tuple[int, ...], ...] = ()
        try:
            plan = plan_cleaning(chosen, self.config.map_memory, self.config.dedupe_buffer_load_factor)
            result = clean_log(target.segments, plan, target.config.index_interval_bytes,
                               SkimpyOffsetMap(plan.map_memory), throttle=self.throttler,
                               check_done=self._check_done, chunk_bytes=self.config.read_chunk_bytes)
            groups = result.groups
            msg = LogCleaned(plan, result.groups, result.end_offset)
            # from here on the shard owns the cleaned files: it swaps them in or drops them, whenever it gets to the
            # message (a load drops any it never got to)
            groups = ()
            ok = self._swap(shard, msg)
            if ok:
                live = set(self._all_logs())
                with self._lock:
                    self._update_checkpoint(target.parent_dir, {tp: result.end_offset}, live)
                    self.last_stats[thread_id] = result.stats
                    self.cleanings += 1
                self._log_stats(thread_id, tp, chosen.first_dirty_offset, result.end_offset, result.stats)
            return True
        except (CleaningAbortedError, FileNotFoundError) as e:
            # a log deleted, moved or truncated under the cleaning, or the broker stopping: let it go
            log.info("Cleaning of %s aborted: %s", tp, e)
            self._drop(target.dir, groups)
            return False
        except Exception as e:  # noqa: BLE001 - LogCleaningException: the partition is left alone from now on
            log.warning("Unexpected exception thrown when cleaning log %s. Marking its partition (%s) as "
                        "uncleanable: %s", target.dir, tp, e, exc_info=True)
            with self._lock:
                self._uncleanable.setdefault(target.parent_dir, set()).add(tp)
            self._drop(target.dir, groups)
            return False
        finally:
            with self._lock:
                self._in_progress.discard(tp)

    def _swap(self, shard: str, msg: LogCleaned) -> bool:
        """Hand the swap to the shard hosting the log and wait for its answer."""
        tp = msg.plan.topic_partition
        done = threading.Event()
        answer: list[bool] = []
        with self._lock:
            self._swaps[tp] = (done, answer)
        try:
            self.runtime.inject(shard, msg, names.EDGE_LOG_CLEANER)
            deadline = time.monotonic() + SWAP_WAIT_S
            while not done.wait(0.5):
                self._check_done()
                if time.monotonic() > deadline:
                    raise CleaningAbortedError(f"the swap of {tp} was not answered")
            self._check_done()
            return bool(answer and answer[0])
        finally:
            with self._lock:
                self._swaps.pop(tp, None)

    @staticmethod
    def _drop(directory: str, groups: tuple[tuple[int, ...], ...]) -> None:
        for group in groups:
            try:
                delete_cleaned(directory, group[0])
            except OSError:
                pass

    @staticmethod
    def _log_stats(thread_id: int, tp: TopicPartition, start: int, end: int, stats: CleanerStats) -> None:
        """CleanerThread.recordStats' summary."""
        mb = stats.bytes_read / (1024 * 1024)
        secs = max(stats.elapsed_secs, 1e-9)
        log.info("Log cleaner thread %d cleaned log %s-%d (dirty section = [%d, %d]): %.1f MB of log processed in "
                 "%.1f seconds (%.1f MB/sec); buffer utilization %.1f%%; %.1f%% size reduction (%.1f%% fewer "
                 "messages)", thread_id, tp.topic, tp.partition, start, end, mb, stats.elapsed_secs, mb / secs,
                 100 * stats.buffer_utilization,
                 100 * (1 - stats.bytes_written / stats.bytes_read) if stats.bytes_read else 0.0,
                 100 * (1 - stats.messages_written / stats.messages_read) if stats.messages_read else 0.0)

    # ------------------------------------------------------------------------------------------------- metrics

    def gauges(self) -> dict[str, dict[str, float]]:
        """kafka.log:type=LogCleaner and type=LogCleanerManager gauges, by MBean type and Kafka's names."""
        with self._lock:
            stats = list(self.last_stats.values())
            uncleanable = {d: len(self._uncleanable.get(d, ())) for d in self.log_dirs}
        read = sum(s.bytes_read for s in stats)
        written = sum(s.bytes_written for s in stats)
        return {
            "LogCleaner": {
                "max-buffer-utilization-percent": int(max((s.buffer_utilization for s in stats), default=0.0) * 100),
                "cleaner-recopy-percent": int(100 * written / max(read, 1)),
                "max-clean-time-secs": int(max((s.elapsed_secs for s in stats), default=0.0)),
                "max-compaction-delay-secs": self.max_compaction_delay_ms // 1000,
                "DeadThreadCount": sum(1 for t in self._threads if not t.is_alive() and not self._closed.is_set()
                                       and t.ident is not None),
            },
            "LogCleanerManager": {
                "max-dirty-percent": int(100 * self.dirtiest_ratio),
                "uncleanable-partitions-count": sum(uncleanable.values()),
            },
        }
