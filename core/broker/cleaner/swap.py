"""The swap of a cleaning into its log, in the partition shard that owns the log (Kafka's Log.replaceSegments under
the log's lock, and LogCleanerManager's abort on truncation).

The shard runs one thing at a time, so between `apply_cleaning`'s check and the last rename nothing reads, appends
to, truncates or deletes the log: the shard's turn is the lock, held for the swap alone (the cleaning itself ran on
the cleaner's thread). The cleaning is used only if the log still holds exactly the segments it read (each one's
base offset, size and last batch header; a truncation, a retention deletion or a rewrite since then changes one of
them), else its ``.cleaned`` files are dropped, as Kafka drops an aborted cleaning's.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from core.broker.cleaner.cleaner import CleaningAbortedError, clean_log, delete_cleaned, same_segment
from core.broker.kafka_storage_error import KafkaStorageError
from core.broker.log import Log
from messages.log_cleaner import LogCleaned

if TYPE_CHECKING:
    from core.broker.replica_manager import ReplicaManager

log = logging.getLogger("kactor.log_cleaner")


def matches(target: Log, msg: LogCleaned) -> bool:
    """The log's non-active segments below the plan's uncleanable offset are exactly those the plan read."""
    plan = msg.plan
    current = [s for s in target.segments if s.base_offset < plan.first_uncleanable_offset and not s.active]
    return (len(current) == len(plan.segments)
            and all(same_segment(s, fp) for s, fp in zip(current, plan.segments, strict=True)))


def apply_cleaning(target: Log | None, msg: LogCleaned, clean_here: bool) -> bool:
    """Swap the cleaned segments of ``msg`` into ``target`` (Log.replaceSegments, one group at a time); returns
    whether it did. ``clean_here``: no cleaner wrote the files (a replay), so the cleaning is carried out now from
    the plan, on the same bytes, into the same segments. A KafkaStorageError from the swap propagates."""
    if target is None:
        return False
    if not matches(target, msg):
        log.info("Cleaning of %s aborted: its segments changed while it was cleaned", msg.plan.topic_partition)
        _drop(target, msg)
        return False
    if clean_here:
        try:
            result = clean_log(target.segments, msg.plan, target.config.index_interval_bytes)
        except (CleaningAbortedError, OSError) as e:
            log.warning("Cleaning of %s could not be redone: %s", msg.plan.topic_partition, e)
            _drop(target, msg)
            return False
        if (result.groups, result.end_offset) != (msg.groups, msg.end_offset):
            log.error("Cleaning of %s gave groups %s up to %d, not %s up to %d", msg.plan.topic_partition,
                      result.groups, result.end_offset, msg.groups, msg.end_offset)
            _drop(target, msg)
            return False
    for group in msg.groups:
        target.replace_segments(group[0], group)
    return True


def _drop(target: Log, msg: LogCleaned) -> None:
    for group in msg.groups:
        try:
            delete_cleaned(target.dir, group[0])
        except OSError:
            pass


def swap_cleaned(rm: ReplicaManager, msg: LogCleaned, clean_here: bool) -> bool:
    """A shard's turn for a LogCleaned: `apply_cleaning` on the partition's current log; a storage error is the
    shard's like any other (deferred to the log-dir probe, or the dir taken offline)."""
    lm = rm.log_manager
    target = lm.get_log(msg.plan.topic_partition)
    if target is None or target.parent_dir in lm.offline_dirs:
        return False
    try:
        return apply_cleaning(target, msg, clean_here)
    except KafkaStorageError as e:
        if not lm.defer(e):
            rm._note_storage_error(e)
        return False
