"""The log cleaner's one input into a broker's partition shards: a cleaning to swap in.

The cleaner (``edges/log_cleaner.py``, Kafka's CleanerThread) cleans on its own thread into ``.cleaned`` files; the
segments are replaced in the shard that hosts the log, in turn with its appends, reads and truncations (Kafka's
``Log.replaceSegments`` under the log's lock). The message carries everything the cleaning decided from outside
the log's bytes (file times, the producers' state, the configs of the moment), so a replay cleans the same bytes
into the same segments at the same point.
"""

from __future__ import annotations

from messages.common import TopicPartition
from messages.registry import message


@message
class SegmentFingerprint:
    """A segment as the cleaner read it: base offset, size, its last batch's header (hex: offsets, leader epoch and
    CRC, so a segment truncated and written again differs) and its last-modified time (LogSegment.lastModified)."""

    base_offset: int
    size: int
    last_header: str
    last_modified_ms: int


@message
class CleaningPlan:
    """Kafka's LogToClean and the Cleaner's inputs: the dirty section [first_dirty_offset,
    first_uncleanable_offset) the offset map is built from, the map's bytes and load factor, the delete horizon
    (tombstones of segments last modified at or before it go), the group limits (segment.bytes,
    segment.index.bytes), the last offsets of the active producers' last batches (kept, even emptied) and every
    segment the cleaning reads."""

    topic_partition: TopicPartition
    first_dirty_offset: int
    first_uncleanable_offset: int
    map_memory: int
    load_factor: float
    delete_horizon_ms: int
    segment_bytes: int
    segment_index_bytes: int
    producer_last_offsets: tuple[int, ...]
    segments: tuple[SegmentFingerprint, ...]


@message
class LogCleaned:
    """The cleaner has written the cleaned segments of ``plan`` (``groups``: the base offsets of each group of old
    segments, each replaced by one cleaned segment named after its first) up to ``end_offset``; the shard swaps
    them in if the log still holds exactly the segments the plan read (else it discards them, Kafka's abort)."""

    plan: CleaningPlan
    groups: tuple[tuple[int, ...], ...]
    end_offset: int
