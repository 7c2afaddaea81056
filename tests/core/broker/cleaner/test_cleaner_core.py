"""The log cleaner's core (core/broker/cleaner/): Kafka 2.6's SkimpyOffsetMap, Cleaner and LogCleanerManager over a
real Log on disk — the newest record per key survives, tombstones go after delete.retention.ms, the active segment is
never cleaned, a full offset map cleans part of the dirty section, producers' last batches stay, the checkpoint file
is Kafka's, and an interrupted swap is completed on the next open."""

from __future__ import annotations

import os

import attrs
import pytest
from freezegun import freeze_time

from core.broker.checkpoints import CLEANER_OFFSET_CHECKPOINT
from core.broker.cleaner.cleaner import clean_log
from core.broker.cleaner.manager import (
    cleanable_offsets,
    grab_filthiest_compacted_log,
    plan_cleaning,
    read_cleaner_checkpoint,
    write_cleaner_checkpoint,
)
from core.broker.cleaner.offset_map import BYTES_PER_ENTRY, OffsetMapFullError, SkimpyOffsetMap
from core.broker.cleaner.swap import apply_cleaning
from core.broker.log import Log
from core.broker.log_config import LogConfig
from messages.common import TopicPartition
from messages.log_cleaner import LogCleaned
from protocol.records import Record, build_batch, iter_batches

TP = TopicPartition("compacted", 0)
T0 = 1_700_000_000_000
DAY = 86_400_000


def compact_config(**kw) -> LogConfig:
    kw.setdefault("segment_bytes", 1024)
    return LogConfig(cleanup_policy="compact", **kw)


def keyed(pairs: list[tuple[str, str | None]], ts: int = T0, pid: int = -1, epoch: int = -1, seq: int = -1) -> bytes:
    return build_batch([Record(i, 0, k.encode(), None if v is None else v.encode()) for i, (k, v) in enumerate(pairs)],
                       first_timestamp=ts, producer_id=pid, producer_epoch=epoch, base_sequence=seq)


def read_all(log: Log) -> list[tuple[int, bytes | None, bytes | None]]:
    out, offset = [], log.log_start_offset
    while offset < log.log_end_offset:
        data = log.read(offset, 1 << 20)
        if not data:
            break
        for b in iter_batches(data):
            out += [(b.base_offset + r.offset_delta, r.key, r.value) for r in b.records()]
            offset = b.next_offset
    return out


def latest_per_key(log: Log) -> dict[bytes, bytes | None]:
    result: dict[bytes, bytes | None] = {}
    for _offset, key, value in read_all(log):
        result[key] = value  # type: ignore[index]
    return result


def clean(log: Log, memory: int = 1 << 20, now: int = T0, checkpoints: dict | None = None) -> int | None:
    """One pass of a cleaner thread: choose, plan, clean, swap; the checkpoint's new first dirty offset (None if the
    log was not chosen)."""
    checkpoints = {} if checkpoints is None else checkpoints
    chosen = grab_filthiest_compacted_log({TP: log}, checkpoints, (), now).chosen
    if chosen is None:
        return None
    plan = plan_cleaning(chosen, memory, 0.9)
    result = clean_log(log.segments, plan, log.config.index_interval_bytes)
    assert apply_cleaning(log, LogCleaned(plan, result.groups, result.end_offset), clean_here=False)
    checkpoints[TP] = result.end_offset
    return result.end_offset


def fill(log: Log, rounds: int, keys: int = 10, now: int = T0) -> dict[bytes, bytes | None]:
    """``rounds`` overwrites of ``keys`` keys, every 7th write a tombstone; the expected newest value per key."""
    expected: dict[bytes, bytes | None] = {}
    for r in range(rounds):
        pairs: list[tuple[str, str | None]] = []
        for k in range(keys):
            value = None if (r * keys + k) % 7 == 0 else f"v{r}-{k}"
            pairs.append((f"k{k}", value))
            expected[f"k{k}".encode()] = None if value is None else value.encode()
        log.append_as_leader(keyed(pairs, ts=now), leader_epoch=0, now_ms=now)
    log.update_high_watermark(log.log_end_offset)
    return expected


# ------------------------------------------------------------------------------------------------------ offset map


def test_offset_map_keeps_the_latest_offset_per_key_within_its_slots():
    m = SkimpyOffsetMap(10 * BYTES_PER_ENTRY)
    assert m.slots == 10
    for i in range(30):
        m.put(f"k{i % 5}".encode(), i)  # a key present keeps its slot
    assert [m.get(f"k{i}".encode()) for i in range(5)] == [25, 26, 27, 28, 29]
    assert (m.size, m.latest_offset, m.get(b"missing")) == (5, 29, -1)
    for i in range(5, 10):
        m.put(f"k{i}".encode(), 100 + i)
    assert m.size == 10 and m.utilization == 1.0
    with pytest.raises(OffsetMapFullError):
        m.put(b"one-too-many", 200)
    m.clear()
    assert (m.size, m.latest_offset, m.get(b"k0")) == (0, -1, -1)


# --------------------------------------------------------------------------------------------------------- cleaning


def test_many_overwrites_and_tombstones_leave_the_newest_value_per_key_and_the_active_segment_untouched(tmp_path):
    log = Log(str(tmp_path), TP, config=compact_config())
    expected = fill(log, 60)
    before = read_all(log)
    active = log.segments[-1]
    active_records = [r for r in before if r[0] >= active.base_offset]
    size_before = log.size
    end = clean(log)
    assert end == active.base_offset  # everything but the active segment was dirty and fitted the map
    assert latest_per_key(log) == expected
    after = read_all(log)
    # below the active segment each key appears once (its newest record, tombstones still kept: no clean section
    # existed, so the delete horizon is 0)
    cleaned_keys = [k for o, k, _ in after if o < active.base_offset]
    assert len(cleaned_keys) == len(set(cleaned_keys))
    assert [r for r in after if r[0] >= active.base_offset] == active_records
    assert log.segments[-1] is active and log.size < size_before / 3
    # offsets are kept (with gaps), the log end and start unchanged
    assert all(b in before for b in after) and log.log_end_offset == before[-1][0] + 1


def _tombstones(log: Log) -> list[tuple[int, bytes | None]]:
    return [(o, k) for o, k, v in read_all(log) if v is None]


def _filler(log: Log, tag: str, n: int = 8) -> None:
    for i in range(n):
        log.append_as_leader(keyed([(f"{tag}{i}-{j}", "x" * 20) for j in range(8)]), leader_epoch=0, now_ms=T0)
    log.update_high_watermark(log.log_end_offset)


def _set_modified(log: Log, with_tombstones: int, others: int) -> None:
    """Every non-active segment's last-modified time: ``with_tombstones`` for those holding a tombstone."""
    for segment in log.segments[:-1]:
        data = segment.read(0, segment.size)
        tombstone = any(r.value is None for b in iter_batches(data) for r in b.records())
        os.utime(segment.log_path, ((with_tombstones if tombstone else others) / 1000,) * 2)


def test_tombstones_go_once_delete_retention_ms_has_passed_since_their_segment_was_cleaned(tmp_path):
    log = Log(str(tmp_path), TP, config=compact_config(delete_retention_ms=DAY, min_cleanable_dirty_ratio=0.01))
    log.append_as_leader(keyed([(f"k{i}", "v") for i in range(10)]), leader_epoch=0, now_ms=T0)
    log.append_as_leader(keyed([(f"k{i}", None) for i in range(5)]), leader_epoch=0, now_ms=T0)
    _filler(log, "a")
    checkpoints: dict = {}
    clean(log, checkpoints=checkpoints)  # no clean section yet: the delete horizon is 0, every tombstone stays
    assert sorted(k for _, k in _tombstones(log)) == [f"k{i}".encode() for i in range(5)]
    assert latest_per_key(log)[b"k7"] == b"v" and b"k2" not in {k for _, k, v in read_all(log) if v is not None}
    # two days later: everything so far was last modified two days ago, new data arrives
    _set_modified(log, T0 - 2 * DAY, T0 - 2 * DAY)
    _filler(log, "b")
    _set_modified(log, T0 - 2 * DAY, T0 - 2 * DAY)
    clean(log, checkpoints=checkpoints)  # the horizon is the last clean segment's time less a day: three days ago
    assert len(_tombstones(log)) == 5
    # the clean section's newest segment now dates from today: tombstones in segments older than a day go
    _filler(log, "c")
    _set_modified(log, T0 - 2 * DAY, T0)
    clean(log, checkpoints=checkpoints)
    assert _tombstones(log) == []
    assert {k: v for k, v in latest_per_key(log).items() if k.startswith(b"k")} == {
        f"k{i}".encode(): b"v" for i in range(5, 10)}


def test_a_full_offset_map_cleans_part_of_the_dirty_section_and_the_next_passes_the_rest(tmp_path):
    log = Log(str(tmp_path), TP, config=compact_config(min_cleanable_dirty_ratio=0.0))
    expected = fill(log, 40, keys=30)
    active_base = log.segments[-1].base_offset
    memory = 20 * BYTES_PER_ENTRY  # 18 keys at load factor 0.9: fewer than the dirty section's 30
    checkpoints: dict = {}
    end = clean(log, memory=memory, checkpoints=checkpoints)
    assert end is not None and end < active_base
    assert latest_per_key(log) == expected
    passes = 1
    while checkpoints[TP] < active_base and passes < 200:
        assert clean(log, memory=memory, checkpoints=checkpoints) is not None
        passes += 1
    assert checkpoints[TP] == active_base and passes > 1
    assert latest_per_key(log) == expected


def test_the_last_batch_of_an_active_producer_is_kept_empty_with_its_sequence(tmp_path):
    log = Log(str(tmp_path), TP, config=compact_config(segment_bytes=300))
    log.append_as_leader(keyed([("a", "1"), ("b", "1")], pid=7, epoch=0, seq=0), leader_epoch=0, now_ms=T0)
    for i in range(6):
        log.append_as_leader(keyed([("a", f"x{i}"), ("b", f"x{i}")]), leader_epoch=0, now_ms=T0)
    log.update_high_watermark(log.log_end_offset)
    clean(log)
    kept = [b for o in (0,) for b in iter_batches(log.read(o, 1 << 20))]
    first = kept[0]
    assert (first.producer_id, first.producer_epoch, first.base_sequence, first.base_offset, first.last_offset,
            first.records_count) == (7, 0, 0, 0, 1, 0)
    assert log.producer_state.producers[7].last_seq == 1
    # the producer's next batch is in sequence after a reopen too
    log.close()
    reopened = Log(str(tmp_path), TP, config=compact_config(segment_bytes=300))
    assert reopened.producer_state.producers[7].last_seq == 1


def test_min_dirty_ratio_chooses_and_max_compaction_lag_forces(tmp_path):
    log = Log(str(tmp_path), TP, config=compact_config(min_cleanable_dirty_ratio=0.99))
    fill(log, 20)
    assert grab_filthiest_compacted_log({TP: log}, {}, (), T0).chosen is not None  # all dirty: ratio 1.0
    clean_to = log.segments[-1].base_offset
    log.append_as_leader(keyed([("k1", "new")] * 30), leader_epoch=0, now_ms=T0)
    log.append_as_leader(keyed([("k2", "new")] * 30), leader_epoch=0, now_ms=T0)
    log.update_high_watermark(log.log_end_offset)
    found = grab_filthiest_compacted_log({TP: log}, {TP: clean_to}, (), T0)
    assert found.chosen is None and 0 < found.dirtiest_ratio < 0.99
    lagging = Log(str(tmp_path / "b"), TP, config=compact_config(min_cleanable_dirty_ratio=0.99,
                                                                 max_compaction_lag_ms=60_000))
    fill(lagging, 20)
    lagging.append_as_leader(keyed([("k1", "new")] * 30), leader_epoch=0, now_ms=T0)
    lagging.update_high_watermark(lagging.log_end_offset)
    mid = lagging.segments[-2].base_offset
    assert grab_filthiest_compacted_log({TP: lagging}, {TP: mid}, (), T0).chosen is None
    with freeze_time("2023-11-14 22:14:00"):  # T0 + 7 minutes > max.compaction.lag.ms
        forced = grab_filthiest_compacted_log({TP: lagging}, {TP: mid}, (), T0 + 7 * 60_000)
    assert forced.chosen is not None and forced.chosen.need_compaction_now
    assert forced.max_compaction_delay_ms == 6 * 60_000


def test_min_compaction_lag_keeps_recent_segments_out_of_the_cleanable_section(tmp_path):
    log = Log(str(tmp_path), TP, config=compact_config(min_compaction_lag_ms=DAY))
    fill(log, 20, now=T0)
    fill(log, 20, now=T0 + DAY)
    recent = next(s.base_offset for s in log.segments if s.max_timestamp >= T0 + DAY)
    assert recent > 0
    offsets = cleanable_offsets(log, log.segments, None, T0 + DAY + 1000)
    assert offsets.first_uncleanable_dirty_offset == recent  # the first segment written within a day of now
    assert offsets.first_dirty_offset == 0 and not offsets.force_update_checkpoint
    beyond = cleanable_offsets(log, log.segments, log.log_end_offset + 10, T0)
    assert (beyond.first_dirty_offset, beyond.force_update_checkpoint) == (0, True)


def test_a_segment_changed_after_the_cleaning_read_it_aborts_the_swap(tmp_path):
    log = Log(str(tmp_path), TP, config=compact_config())
    expected = fill(log, 40)
    chosen = grab_filthiest_compacted_log({TP: log}, {}, (), T0).chosen
    plan = plan_cleaning(chosen, 1 << 20, 0.9)
    result = clean_log(log.segments, plan, log.config.index_interval_bytes)
    log.truncate_to(log.segments[2].base_offset + 1)  # a follower's truncation meanwhile
    before = read_all(log)
    assert not apply_cleaning(log, LogCleaned(plan, result.groups, result.end_offset), clean_here=False)
    assert read_all(log) == before and not [n for n in os.listdir(log.dir) if n.endswith(".cleaned")]
    assert latest_per_key(log) != expected  # (truncated: the point is only that nothing was swapped)


def test_a_replay_cleans_again_from_the_plan_into_the_same_segments(tmp_path):
    live = Log(str(tmp_path / "live"), TP, config=compact_config())
    replay = Log(str(tmp_path / "replay"), TP, config=compact_config())
    for log in (live, replay):
        fill(log, 50)
    chosen = grab_filthiest_compacted_log({TP: live}, {}, (), T0).chosen
    plan = plan_cleaning(chosen, 1 << 20, 0.9)
    result = clean_log(live.segments, plan, live.config.index_interval_bytes)
    msg = LogCleaned(plan, result.groups, result.end_offset)
    assert apply_cleaning(live, msg, clean_here=False)
    assert apply_cleaning(replay, msg, clean_here=True)
    assert read_all(live) == read_all(replay)
    assert [(s.base_offset, s.size) for s in live.segments] == [(s.base_offset, s.size) for s in replay.segments]


# ------------------------------------------------------------------------------------------------- files on disk


def test_cleaner_offset_checkpoint_is_kafkas_file(tmp_path):
    offsets = {TopicPartition("__consumer_offsets", 3): 120, TP: 45}
    write_cleaner_checkpoint(str(tmp_path), offsets)
    with open(tmp_path / CLEANER_OFFSET_CHECKPOINT) as f:
        assert f.read() == "0\n2\n__consumer_offsets 3 120\ncompacted 0 45\n"
    assert read_cleaner_checkpoint(str(tmp_path)) == offsets
    assert read_cleaner_checkpoint(str(tmp_path / "missing")) == {}


def _clean_without_swap(log: Log) -> tuple[LogCleaned, list[tuple[int, bytes | None, bytes | None]]]:
    log.config = attrs.evolve(log.config, segment_bytes=1 << 20)  # cleaned groups of several segments
    chosen = grab_filthiest_compacted_log({TP: log}, {}, (), T0).chosen
    plan = plan_cleaning(chosen, 1 << 20, 0.9)
    result = clean_log(log.segments, plan, log.config.index_interval_bytes)
    return LogCleaned(plan, result.groups, result.end_offset), read_all(log)


def test_a_swap_interrupted_after_the_rename_to_swap_is_completed_on_open(tmp_path):
    log = Log(str(tmp_path), TP, config=compact_config())
    expected = fill(log, 40)
    msg, _ = _clean_without_swap(log)
    group = msg.groups[0]
    assert len(group) > 1
    # Log.replaceSegments' first step, then a crash: the cleaned files renamed to .swap, the old segments intact
    for suffix in (".log", ".index", ".timeindex"):
        name = f"{group[0]:020d}{suffix}"
        os.replace(os.path.join(log.dir, name + ".cleaned"), os.path.join(log.dir, name + ".swap"))
    for later in msg.groups[1:]:
        for suffix in (".log", ".index", ".timeindex"):
            os.unlink(os.path.join(log.dir, f"{later[0]:020d}{suffix}.cleaned"))
    reopened = Log(str(tmp_path), TP, config=compact_config())
    assert not [n for n in os.listdir(reopened.dir) if n.endswith((".swap", ".cleaned"))]
    assert [s.base_offset for s in reopened.segments if s.base_offset in group] == [group[0]]
    reopened.update_high_watermark(reopened.log_end_offset)
    assert latest_per_key(reopened) == expected


def test_a_cleaning_interrupted_before_its_swap_leaves_the_old_segments(tmp_path):
    log = Log(str(tmp_path), TP, config=compact_config())
    fill(log, 40)
    _msg, before = _clean_without_swap(log)
    assert [n for n in os.listdir(log.dir) if n.endswith(".cleaned")]
    reopened = Log(str(tmp_path), TP, config=compact_config())
    assert not [n for n in os.listdir(reopened.dir) if n.endswith(".cleaned")]
    reopened.update_high_watermark(reopened.log_end_offset)
    assert read_all(reopened) == before


@pytest.mark.parametrize("codec", [0, 1, 3])
def test_the_cleaners_record_scan_reads_what_read_records_reads(codec):
    from core.broker.cleaner.cleaner import scan_records
    from protocol.records import Header, read_batch_header, read_records

    records = [Record(i * 70, (-1) ** i * i * 10**9, None if i % 5 == 0 else b"k" * (i * 13),
                      None if i % 3 == 0 else b"v" * (i * 29), (Header("h", b"x"),) if i % 4 == 0 else ())
               for i in range(40)]
    batch = read_batch_header(build_batch(records, first_timestamp=T0, compression_codec=codec))
    assert scan_records(batch) == [(r.offset_delta, r.key, r.value is not None) for r in read_records(batch)]
