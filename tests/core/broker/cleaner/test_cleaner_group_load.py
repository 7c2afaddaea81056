"""The group coordinator's load of a compacted ``__consumer_offsets`` partition (GroupMetadataManager
.doLoadGroupsAndOffsets over a log the cleaner has rewritten, with gaps in its offsets): each group's newest offsets,
an offset deleted by a tombstone stays deleted while the tombstone is kept and after the cleaner has removed it with
the values it deleted."""

from __future__ import annotations

import os
from typing import Any

from core.broker.log import Log
from core.broker.log_config import LogConfig
from core.coordinator.coordinator_loader import LogRead, LogStart
from core.coordinator.group.group_metadata_manager import GroupMetadataManager, ReadLog, ReadLogStart
from core.coordinator.group.message_formats import (
    OffsetAndMetadata,
    offset_commit_key,
    offset_commit_value,
    records_batch,
)
from messages.common import Errors, TopicPartition
from tests.core.broker.cleaner.test_cleaner_core import DAY, T0, _set_modified, _tombstones, read_all
from tests.core.broker.cleaner.test_cleaner_core import clean as clean_tp

OFFSETS = TopicPartition("__consumer_offsets", 0)
A, B = TopicPartition("input", 0), TopicPartition("input", 1)


def _load(log: Log) -> dict[str, dict[TopicPartition, int]]:
    manager = GroupMetadataManager(0, 1, 5000, 4096, lambda: T0)
    proc = manager.load_groups_and_offsets(0)
    effect: Any = next(proc)
    try:
        while True:
            if isinstance(effect, ReadLogStart):
                effect = proc.send(LogStart(Errors.NONE, log.log_start_offset))
            elif isinstance(effect, ReadLog):
                effect = proc.send(LogRead(Errors.NONE, log.read(effect.offset, 1 << 20), log.log_start_offset,
                                           log.log_end_offset, log.high_watermark))
            else:
                raise AssertionError(f"unexpected effect {effect}")
    except StopIteration as done:
        groups = done.value
    return {g.group_id: {tp: om.offset for tp, om in g.offsets.items()} for g in groups}


def _commit(log: Log, group: str, tp: TopicPartition, offset: int | None) -> None:
    value = None if offset is None else offset_commit_value(OffsetAndMetadata(offset, commit_timestamp=T0))
    log.append_as_leader(records_batch([(offset_commit_key(group, tp), value)], T0), 0, T0)
    log.update_high_watermark(log.log_end_offset)


def test_a_compacted_offsets_partition_loads_the_newest_offsets_and_honours_tombstones(tmp_path, monkeypatch):
    import tests.core.broker.cleaner.test_cleaner_core as core_tests

    monkeypatch.setattr(core_tests, "TP", OFFSETS)  # the helpers' partition
    config = LogConfig(cleanup_policy="compact", segment_bytes=1024, delete_retention_ms=DAY,
                       min_cleanable_dirty_ratio=0.01)
    log = Log(str(tmp_path), OFFSETS, config=config)
    for i in range(200):
        _commit(log, "g", A, i)
        if i < 50:
            _commit(log, "g", B, 1000 + i)
    _commit(log, "g", B, None)  # OffsetDelete / expiry: B's offset is gone
    for i in range(60):
        _commit(log, "other", A, i)
    expected = {"g": {A: 199}, "other": {A: 59}}
    assert _load(log) == expected
    checkpoints: dict = {}
    clean_tp(log, checkpoints=checkpoints)
    assert len(read_all(log)) < 40 and len(_tombstones(log)) == 1  # the tombstone stays a while
    assert _load(log) == expected
    # a day and more later, with newer commits cleaned since: the tombstone goes, and nothing of B comes back
    _set_modified(log, T0 - 2 * DAY, T0 - 2 * DAY)
    for i in range(60, 120):
        _commit(log, "other", A, i)
    _set_modified(log, T0 - 2 * DAY, T0)
    clean_tp(log, checkpoints=checkpoints)
    for i in range(120, 180):
        _commit(log, "other", A, i)
    _set_modified(log, T0 - 2 * DAY, T0)
    clean_tp(log, checkpoints=checkpoints)
    assert _tombstones(log) == []
    assert not [r for r in read_all(log) if r[1] == offset_commit_key("g", B)]
    assert _load(log) == {"g": {A: 199}, "other": {A: 179}}
    assert not [n for n in os.listdir(log.dir) if n.endswith((".cleaned", ".swap"))]
