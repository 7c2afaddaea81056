"""kafka.log.LogCleanerManager's decisions: which compacted log to clean next and which part of it.

``cleanable_offsets`` (the dirty section's bounds: from the ``cleaner-offset-checkpoint`` entry, reset to the log
start when it is out of range, up to the first of: the active segment, the log's last stable offset, the first
segment within min.compaction.lag.ms of now), ``max_compaction_delay`` (max.compaction.lag.ms forcing a clean),
``grab_filthiest_compacted_log`` (the log with the highest dirty ratio above min.cleanable.dirty.ratio, or one
past its max compaction lag) and ``plan_cleaning`` (the CleaningPlan the Cleaner carries out). The checkpoint file
is Kafka's (`cleaner-offset-checkpoint` in each log dir: version 0, count, ``topic partition offset`` lines),
written with the log's checkpoint code.

These functions read a live Log from the cleaner's thread: only its scalars, a copy of its segment list, and files
of non-active segments, never anything the shard changes in place.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

import attrs

from core.broker.checkpoints import CLEANER_OFFSET_CHECKPOINT, read_offset_checkpoint, write_offset_checkpoint
from core.broker.cleaner.cleaner import fingerprint, last_modified_ms, segments_in
from core.broker.log import Log
from core.broker.log_segment import LogSegment
from messages.common import TopicPartition
from messages.log_cleaner import CleaningPlan

_MAX_TIMESTAMP_AT = 35


@attrs.frozen
class OffsetsToClean:
    """LogCleanerManager.OffsetsToClean."""

    first_dirty_offset: int
    first_uncleanable_dirty_offset: int
    force_update_checkpoint: bool = False


@attrs.frozen
class LogToClean:
    """kafka.log.LogToClean: a log, its dirty section, and its clean / cleanable bytes."""

    topic_partition: TopicPartition
    log: Log = attrs.field(eq=False, repr=False)
    first_dirty_offset: int
    first_uncleanable_offset: int
    clean_bytes: int
    cleanable_bytes: int
    need_compaction_now: bool

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float:
        return self.cleanable_bytes / self.total_bytes if self.total_bytes else 0.0


def _non_active_from(segments: Sequence[LogSegment], start: int) -> list[LogSegment]:
    """Log.nonActiveLogSegmentsFrom."""
    return segments_in(segments, start, segments[-1].base_offset) if segments else []


def _first_batch_timestamp(segment: LogSegment) -> int:
    """LogSegment.getFirstBatchTimestamp: the first batch's max timestamp (Long.MaxValue for an empty segment)."""
    head = segment.read(0, _MAX_TIMESTAMP_AT + 8)
    if len(head) < _MAX_TIMESTAMP_AT + 8:
        return 2**63 - 1
    return int.from_bytes(head[_MAX_TIMESTAMP_AT:_MAX_TIMESTAMP_AT + 8], "big", signed=True)


def cleanable_offsets(log: Log, segments: Sequence[LogSegment], last_clean_offset: int | None,
                      now_ms: int) -> OffsetsToClean:
    """LogCleanerManager.cleanableOffsets. Kafka bounds the section by the first unstable offset; kactor by the last
    stable offset (the high watermark until transactions come), which never lies above it."""
    log_start = log.log_start_offset
    checkpointed = log_start if last_clean_offset is None else last_clean_offset
    if checkpointed < log_start or checkpointed > log.log_end_offset:
        first_dirty, force = log_start, True
    else:
        first_dirty, force = checkpointed, False
    bounds = [log.last_stable_offset, segments[-1].base_offset]
    min_lag = max(log.config.min_compaction_lag_ms, 0)
    if min_lag > 0:
        for segment in _non_active_from(segments, first_dirty):
            if segment.largest_timestamp() > now_ms - min_lag:
                bounds.append(segment.base_offset)
                break
    return OffsetsToClean(first_dirty, max(first_dirty, min(bounds)), force)


def max_compaction_delay(log: Log, segments: Sequence[LogSegment], first_dirty_offset: int, now_ms: int) -> int:
    """LogCleanerManager.maxCompactionDelay: how long past max.compaction.lag.ms the oldest dirty non-active
    segment's first batch is (0 if none is)."""
    stamps = [t for t in (_first_batch_timestamp(s) for s in _non_active_from(segments, first_dirty_offset)) if t > 0]
    earliest = min(stamps, default=2**63 - 1)
    clean_until = now_ms - max(log.config.max_compaction_lag_ms, 0)
    return clean_until - earliest if earliest < clean_until else 0


def calculate_cleanable_bytes(segments: Sequence[LogSegment], first_dirty_offset: int,
                              uncleanable_offset: int) -> tuple[int, int]:
    """LogCleanerManager.calculateCleanableBytes: (the base of the first uncleanable segment, the bytes of the
    segments from the first dirty offset up to it)."""
    after = _non_active_from(segments, uncleanable_offset)
    first_uncleanable = after[0].base_offset if after else segments[-1].base_offset
    cleanable = segments_in(segments, min(first_dirty_offset, first_uncleanable), first_uncleanable)
    return first_uncleanable, sum(s.size for s in cleanable)


def log_to_clean(tp: TopicPartition, log: Log, segments: Sequence[LogSegment], offsets: OffsetsToClean,
                 need_compaction_now: bool) -> LogToClean:
    clean_bytes = sum(s.size for s in segments_in(segments, -1, offsets.first_dirty_offset))
    first_uncleanable, cleanable = calculate_cleanable_bytes(segments, offsets.first_dirty_offset,
                                                             offsets.first_uncleanable_dirty_offset)
    return LogToClean(tp, log, offsets.first_dirty_offset, first_uncleanable, clean_bytes, cleanable,
                      need_compaction_now)


@attrs.frozen
class Filthiest:
    """grabFilthiestCompactedLog's answer: the log to clean (or None), the dirtiest ratio seen (max-dirty-percent),
    and the checkpoint entries to reset (offsets found out of range)."""

    chosen: LogToClean | None
    dirtiest_ratio: float
    checkpoint_resets: dict[TopicPartition, int]
    max_compaction_delay_ms: int = 0


def grab_filthiest_compacted_log(logs: Mapping[TopicPartition, Log], checkpoints: Mapping[TopicPartition, int],
                                 skip: Iterable[TopicPartition], now_ms: int) -> Filthiest:
    """LogCleanerManager.grabFilthiestCompactedLog over the compacted logs not in ``skip`` (in progress or
    uncleanable): the dirtiest whose ratio exceeds its min.cleanable.dirty.ratio, or that must be compacted now
    (max.compaction.lag.ms) and has cleanable bytes."""
    skipped = set(skip)
    dirty: list[LogToClean] = []
    resets: dict[TopicPartition, int] = {}
    max_delay = 0
    # the compacted logs are picked before sorting: a broker with 10,000 logs, none compacted, sorted them all every
    # log.cleaner.backoff.ms (5 % of its idle CPU, performance-log.md "Idle CPU again")
    compacted = [(tp, log) for tp, log in logs.items() if log.config.compact and tp not in skipped]
    for tp, log in sorted(compacted, key=lambda kv: (kv[0].topic, kv[0].partition)):
        segments = log.segments
        if not segments:
            continue
        offsets = cleanable_offsets(log, segments, checkpoints.get(tp), now_ms)
        if offsets.force_update_checkpoint:
            resets[tp] = offsets.first_dirty_offset
        delay = max_compaction_delay(log, segments, offsets.first_dirty_offset, now_ms)
        max_delay = max(max_delay, delay)
        ltc = log_to_clean(tp, log, segments, offsets, delay > 0)
        if ltc.total_bytes > 0:
            dirty.append(ltc)
    dirtiest = max((ltc.cleanable_ratio for ltc in dirty), default=0.0)
    cleanable = [ltc for ltc in dirty
                 if (ltc.need_compaction_now and ltc.cleanable_bytes > 0)
                 or ltc.cleanable_ratio > ltc.log.config.min_cleanable_dirty_ratio]
    chosen = max(cleanable, key=lambda ltc: ltc.cleanable_ratio, default=None)
    return Filthiest(chosen, dirtiest, resets, max_delay)


def plan_cleaning(ltc: LogToClean, map_memory: int, load_factor: float) -> CleaningPlan:
    """Cleaner.clean's inputs for ``ltc``: the delete horizon (the last clean segment's last-modified time less
    delete.retention.ms; 0 with no clean segment), every non-active segment below the first uncleanable offset with
    its fingerprint, and the last offsets of the active producers (lastRecordsOfActiveProducers)."""
    log = ltc.log
    segments = [s for s in log.segments if s.base_offset < ltc.first_uncleanable_offset and not s.active]
    clean = segments_in(segments, 0, ltc.first_dirty_offset)
    horizon = last_modified_ms(clean[-1]) - log.config.delete_retention_ms if clean else 0
    producers = dict(log.producer_state.producers)
    last_offsets = tuple(sorted(o for o in (e.last_offset for e in producers.values()) if o >= 0))
    return CleaningPlan(ltc.topic_partition, ltc.first_dirty_offset, ltc.first_uncleanable_offset, map_memory,
                        load_factor, horizon, log.config.segment_bytes, log.config.segment_index_bytes,
                        last_offsets, tuple(fingerprint(s) for s in segments))


# ------------------------------------------------------------------------------------------------ checkpoints


def read_cleaner_checkpoint(log_dir: str) -> dict[TopicPartition, int]:
    """A log dir's ``cleaner-offset-checkpoint`` (missing: empty; unreadable: KafkaStorageError)."""
    return read_offset_checkpoint(os.path.join(log_dir, CLEANER_OFFSET_CHECKPOINT))


def write_cleaner_checkpoint(log_dir: str, offsets: Mapping[TopicPartition, int]) -> None:
    """LogCleanerManager.updateCheckpoints' write (tmp file, fsync, rename)."""
    write_offset_checkpoint(os.path.join(log_dir, CLEANER_OFFSET_CHECKPOINT), offsets)
