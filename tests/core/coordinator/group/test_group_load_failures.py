"""The group coordinator's load of a __consumer_offsets partition never installs part of it
(GroupMetadataManager.doLoadGroupsAndOffsets): transaction markers (control batches) are applied as 2.6.3 applies
them, but a record that does not decode or a read that fails leaves the partition loading
(COORDINATOR_LOAD_IN_PROGRESS), logged at ERROR with the partition and offset and counted, until its next election
loads it again. (2.6.3 logs the error and owns the partition with what it read, or nothing.)"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from freezegun import freeze_time

from core.coordinator.coordinator_loader import LogRead, LogStart
from core.coordinator.group.group_metadata_manager import ReadLog, ReadLogStart, partition_for
from core.coordinator.group.message_formats import records_batch
from messages.common import Errors
from messages.group import OffsetCommitPartition, OffsetCommitRequest, OffsetFetchRequest
from protocol.records import (
    CONTROL_ABORT,
    EndTransactionMarker,
    assign_offsets,
    build_end_txn_marker_batch,
    iter_batches,
)
from tests.core.coordinator.group.test_group_coordinator import GROUP, T0, Harness

OFFSETS = "__consumer_offsets"


@pytest.fixture
def frozen():
    with freeze_time("2026-11-25 12:00:00") as f:
        yield f


def _append_raw(h: Harness, batch: bytes) -> int:
    offset = h.leo(h.partition)
    buf = bytearray(batch)
    assign_offsets(buf, 0, offset)
    h.log.setdefault(h.partition, bytearray()).extend(buf)
    return offset


def _fetch(h: Harness, group: str = GROUP) -> Any:
    return h.answer(h.request(OffsetFetchRequest(group, (T0,))))


def _other_group(h: Harness) -> str:
    return next(g for g in (f"x{i}" for i in range(100)) if partition_for(g, 4) == h.partition)


def _log_with_a_bad_record(h: Harness) -> tuple[str, int]:
    """GROUP's offset 42, a record whose key has an unknown version, then another group's offset 7."""
    h.elect()
    h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 42),)))
    bad_at = _append_raw(h, records_batch([(b"\x00\x09\x00\x01g", b"\x00\x00")], 0))
    other = _other_group(h)
    h.request(OffsetCommitRequest(other, (OffsetCommitPartition(T0, 7),)))
    return other, bad_at


def test_a_record_that_does_not_decode_leaves_the_partition_loading(frozen, caplog):
    h = Harness()
    other, bad_at = _log_with_a_bad_record(h)
    h2 = Harness(h.config, h.log)
    with caplog.at_level(logging.ERROR, logger="kactor.coordinator"):
        h2.elect()
    # neither the group before the bad record nor the one after it: no partial cache
    assert _fetch(h2).error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert _fetch(h2, other).error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert h2.answer(h2.join()).error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert h2.gc.manager.groups == {} and h2.partition not in h2.gc.manager.owned_partitions
    assert h2.gc.manager.partition_load_errors == 1
    (error,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert f"{OFFSETS}-{h.partition} at offset {bad_at}" in error.getMessage()
    assert "Unknown group metadata message version: 9" in error.getMessage()


def test_a_partition_whose_load_failed_is_loaded_again_at_its_next_election(frozen):
    h = Harness()
    other, bad_at = _log_with_a_bad_record(h)
    h2 = Harness(h.config, h.log)
    h2.elect()
    assert _fetch(h2).error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    h.log[h.partition] = bytearray(b"".join(b.raw for b in iter_batches(bytes(h.log[h.partition]))
                                            if b.base_offset != bad_at))
    h2.elect()  # the same partition elected again (a new leader epoch): loaded again, not "Already loading"
    assert [(p.offset, p.error) for p in _fetch(h2).partitions] == [(42, Errors.NONE)]
    assert [(p.offset, p.error) for p in _fetch(h2, other).partitions] == [(7, Errors.NONE)]
    assert h2.gc.manager.partition_load_errors == 1


def test_a_failed_load_given_up_by_resignation_is_not_coordinator(frozen):
    h = Harness()
    _log_with_a_bad_record(h)
    h2 = Harness(h.config, h.log)
    h2.elect()
    h2.run(h2.gc.on_resignation(h2.partition))
    assert _fetch(h2).error is Errors.NOT_COORDINATOR
    assert not h2.gc.manager.failed_loads


def test_a_marker_is_applied_not_refused(frozen):
    """doLoadGroupsAndOffsets reads control batches as markers: an ABORT marker of a producer with no offsets
    pending is nothing, and the load goes on."""
    h = Harness()
    h.elect()
    h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 42),)))
    _append_raw(h, build_end_txn_marker_batch(77, 0, EndTransactionMarker(CONTROL_ABORT, 3), 0))
    h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 43),)))
    h2 = Harness(h.config, h.log)
    h2.elect()
    assert [(p.offset, p.error) for p in _fetch(h2).partitions] == [(43, Errors.NONE)]
    assert h2.gc.manager.partition_load_errors == 0


class _FailingReads(Harness):
    def __init__(self, *args: Any, read_error: Errors = Errors.NONE, start_error: Errors = Errors.NONE) -> None:
        self.read_error, self.start_error = read_error, start_error
        super().__init__(*args)

    def _answer(self, proc: Any, effect: Any) -> Any:
        if isinstance(effect, ReadLog) and self.read_error is not Errors.NONE:
            return LogRead(self.read_error)
        if isinstance(effect, ReadLogStart) and self.start_error is not Errors.NONE:
            return LogStart(self.start_error)
        return super()._answer(proc, effect)


def test_a_read_that_fails_leaves_the_partition_loading(frozen):
    h = Harness()
    h.elect()
    h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 42),)))
    for errors in ({"read_error": Errors.KAFKA_STORAGE_ERROR}, {"start_error": Errors.KAFKA_STORAGE_ERROR}):
        h2 = _FailingReads(h.config, h.log, **errors)
        h2.elect()
        assert _fetch(h2).error is Errors.COORDINATOR_LOAD_IN_PROGRESS
        assert h2.gc.manager.partition_load_errors == 1


def test_a_load_answers_only_once_what_it_read_is_committed(frozen):
    """`await_committed` (beyond Kafka): an offset commit the previous coordinator appended but never replicated is
    not served until the high watermark reaches it; if this coordinator dies first, no client saw it."""
    h = Harness()
    h.elect()
    h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 42),)))
    committed_end = h.leo(h.partition)
    h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 43),)))
    h2 = Harness(h.config, h.log)
    h2.high_watermark[h2.partition] = committed_end
    h2.elect()
    assert len(h2.awaiting) == 1
    assert _fetch(h2).error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    h2.replicate(h2.partition)
    assert h2.awaiting == []
    assert [(p.offset, p.error) for p in _fetch(h2).partitions] == [(43, Errors.NONE)]
