"""Port of Kafka 2.6's LeaderEpochFileCacheTest (core/src/test/scala/unit/kafka/server/epoch/), plus the
``leader-epoch-checkpoint`` staying exact across truncations and restarts of the Log that owns the cache."""

from __future__ import annotations

import os

import pytest

from core.broker.checkpoints import LEADER_EPOCH_CHECKPOINT
from core.broker.leader_epoch_cache import (
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    InMemoryLeaderEpochCheckpoint,
    LeaderEpochFileCache,
    decode_leader_epoch_checkpoint,
    encode_leader_epoch_checkpoint,
)
from core.broker.log import Log
from kactor.records import read_values, values_batch
from messages.common import TopicPartition

UNDEFINED = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


class Fixture:
    """The test's ``logEndOffset`` variable and a cache reading it, over an in-memory checkpoint."""

    def __init__(self) -> None:
        self.log_end_offset = 0
        self.checkpoint = InMemoryLeaderEpochCheckpoint()
        self.cache = LeaderEpochFileCache(lambda: self.log_end_offset, self.checkpoint)


@pytest.fixture
def f() -> Fixture:
    return Fixture()


def test_shouldAddEpochAndMessageOffsetToCache(f):
    f.cache.assign(2, 10)
    f.log_end_offset = 11
    assert f.cache.latest_epoch == 2
    assert f.cache.epoch_entries == ((2, 10),)
    assert f.cache.end_offset_for(2) == (2, f.log_end_offset)


def test_shouldReturnLogEndOffsetIfLatestEpochRequested(f):
    for epoch, offset in ((2, 5), (3, 6), (4, 7)):
        f.cache.assign(epoch, offset)
    f.log_end_offset = 8
    assert f.cache.end_offset_for(4) == (4, f.log_end_offset)


def test_shouldReturnUndefinedOffsetIfUndefinedEpochRequested(f):
    f.cache.assign(2, 5)
    f.cache.assign(3, 6)
    assert f.cache.end_offset_for(UNDEFINED_EPOCH) == UNDEFINED


def test_shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned(f):
    f.log_end_offset = 9
    f.cache.assign(2, f.log_end_offset)
    f.cache.assign(2, 10)
    assert f.cache.epoch_entries == ((2, 9),)


def test_shouldEnforceMonotonicallyIncreasingStartOffsets(f):
    f.cache.assign(2, 9)
    f.log_end_offset = 10
    assert f.cache.end_offset_for(2) == (2, 10)
    f.cache.assign(3, 9)  # a later epoch at the same offset replaces it
    f.log_end_offset = 10
    assert f.cache.epoch_entries == ((3, 9),)
    assert f.cache.end_offset_for(2) == (2, 9)  # below every known epoch: the first epoch's start


def test_shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned(f):
    f.cache.assign(2, 6)
    f.cache.assign(2, 7)
    assert f.cache.epoch_entries == ((2, 6),)


def test_shouldReturnUnsupportedIfNoEpochRecorded(f):
    assert f.cache.end_offset_for(0) == UNDEFINED


def test_shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested(f):
    f.log_end_offset = 73
    assert f.cache.end_offset_for(UNDEFINED_EPOCH) == UNDEFINED


def test_shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch(f):
    f.cache.assign(5, 11)
    f.cache.assign(6, 12)
    f.cache.assign(7, 13)
    assert f.cache.end_offset_for(4) == (4, 11)


def test_shouldTruncateIfMatchingEpochButEarlierStartingOffset(f):
    f.cache.assign(5, 11)
    f.cache.assign(6, 12)
    f.cache.assign(7, 13)
    f.cache.assign(7, 12)  # epoch 7 again, earlier: monotonicity removes 6 and the old 7
    assert f.cache.epoch_entries == ((5, 11), (7, 12))


def test_shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch(f):
    for epoch, offset in ((1, 5), (1, 6), (1, 7)):
        f.cache.assign(epoch, offset)
    for epoch, offset in ((2, 8), (2, 9), (2, 10)):
        f.cache.assign(epoch, offset)
    f.log_end_offset = 11
    assert f.cache.end_offset_for(1) == (1, 8)
    assert f.cache.end_offset_for(2) == (2, 11)


def test_shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested(f):
    f.cache.assign(0, 10)
    f.cache.assign(2, 13)
    f.cache.assign(4, 17)
    assert f.cache.end_offset_for(0) == (0, 13)
    assert f.cache.end_offset_for(1) == (0, 13)
    assert f.cache.end_offset_for(2) == (2, 17)
    assert f.cache.end_offset_for(3) == (2, 17)


def test_shouldNotUpdateEpochAndStartOffsetIfItDidNotChange(f):
    f.cache.assign(2, 6)
    writes = f.checkpoint.writes
    f.cache.assign(2, 7)
    assert f.cache.epoch_entries == ((2, 6),) and f.checkpoint.writes == writes


def test_shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked(f):
    f.log_end_offset = 100
    f.cache.assign(2, 100)
    assert f.cache.end_offset_for(3) == UNDEFINED


def test_shouldSupportEpochsThatDoNotStartFromZero(f):
    f.cache.assign(2, 6)
    f.log_end_offset = 7
    assert f.cache.end_offset_for(2) == (2, 7)
    assert f.cache.epoch_entries == ((2, 6),)


def test_shouldPersistEpochsBetweenInstances(tmp_path):
    log = Log(str(tmp_path), TopicPartition("t", 0))
    log.assign_epoch_start_offset(2, 0)
    again = Log(str(tmp_path), TopicPartition("t", 0))  # no records: an entry at the log end is not kept (load)
    assert again.leader_epoch_entries == ()
    log.append_as_leader(values_batch(["a"]), 2, 0)
    assert Log(str(tmp_path), TopicPartition("t", 0)).leader_epoch_entries == ((2, 0),)
    checkpoint = InMemoryLeaderEpochCheckpoint()
    LeaderEpochFileCache(lambda: 7, checkpoint).assign(2, 6)
    assert LeaderEpochFileCache(lambda: 7, checkpoint).epoch_entries == ((2, 6),)


def test_shouldEnforceMonotonicallyIncreasingEpochs(f):
    f.cache.assign(1, 5)
    f.log_end_offset = 6
    f.cache.assign(2, 6)
    f.log_end_offset = 7
    f.cache.assign(1, 7)  # an epoch in the past at a later offset: later epochs are removed
    f.log_end_offset = 8
    assert f.cache.latest_epoch == 1
    assert f.cache.end_offset_for(1) == (1, 8)
    assert f.cache.end_offset_for(2) == UNDEFINED
    assert f.cache.epoch_entries == ((1, 7),)


def test_shouldEnforceOffsetsIncreaseMonotonically(f):
    f.cache.assign(2, 6)
    f.log_end_offset = 7
    f.cache.assign(3, 5)
    assert f.cache.epoch_entries == ((3, 5),)


def test_shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes(f):
    f.cache.assign(0, 0)
    f.log_end_offset = 1
    f.cache.assign(1, 1)
    f.log_end_offset = 2
    f.cache.assign(2, 2)
    f.log_end_offset = 3
    assert f.cache.latest_epoch == 2
    assert f.cache.end_offset_for(0) == (0, 1)
    assert f.cache.end_offset_for(1) == (1, 2)
    assert f.cache.end_offset_for(2) == (2, 3)


def test_shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages(f):
    for epoch, offsets in ((0, (0, 1, 2)), (1, (3, 4, 5)), (2, (6, 7, 8))):
        for offset in offsets:
            f.cache.assign(epoch, offset)
            f.log_end_offset = offset + 1
    assert f.cache.epoch_entries == ((0, 0), (1, 3), (2, 6))
    assert f.cache.end_offset_for(0) == (0, 3)
    assert f.cache.end_offset_for(1) == (1, 6)
    assert f.cache.end_offset_for(2) == (2, 9)


def _three(f: Fixture) -> None:
    f.cache.assign(2, 6)
    f.cache.assign(3, 8)
    f.cache.assign(4, 11)


def test_shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries(f):
    _three(f)
    f.cache.truncate_from_end(8)
    assert f.cache.epoch_entries == ((2, 6),)


def test_shouldPreserveResetOffsetOnClearEarliestIfOneExists(f):
    _three(f)
    f.cache.truncate_from_start(8)
    assert f.cache.epoch_entries == ((3, 8), (4, 11))


def test_shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs(f):
    _three(f)
    f.cache.truncate_from_start(9)
    assert f.cache.epoch_entries == ((3, 9), (4, 11))


def test_shouldNotClearAnythingIfOffsetToEarly(f):
    _three(f)
    f.cache.truncate_from_start(1)
    assert f.cache.epoch_entries == ((2, 6), (3, 8), (4, 11))


def test_shouldNotClearAnythingIfOffsetToFirstOffset(f):
    _three(f)
    f.cache.truncate_from_start(6)
    assert f.cache.epoch_entries == ((2, 6), (3, 8), (4, 11))


def test_shouldRetainLatestEpochOnClearAllEarliest(f):
    _three(f)
    f.cache.truncate_from_start(11)
    assert f.cache.epoch_entries == ((4, 11),)


def test_shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest(f):
    _three(f)
    f.cache.truncate_from_start(9)
    assert f.cache.epoch_entries == ((3, 9), (4, 11))


def test_shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest2(f):
    _three(f)
    f.cache.truncate_from_start(7)
    assert f.cache.epoch_entries == ((2, 7), (3, 8), (4, 11))


def test_shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset(f):
    _three(f)
    f.cache.truncate_from_start(15)
    assert f.cache.epoch_entries == ((4, 15),)


def test_shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest(f):
    _three(f)
    f.cache.truncate_from_end(9)
    assert f.cache.epoch_entries == ((2, 6), (3, 8))


def test_shouldClearAllEntries(f):
    _three(f)
    f.cache.clear_and_flush()
    assert f.cache.epoch_entries == () and f.checkpoint.entries == []


def test_shouldNotResetEpochHistoryHeadIfUndefinedPassed(f):
    _three(f)
    f.cache.truncate_from_end(UNDEFINED_EPOCH_OFFSET)
    assert f.cache.epoch_entries == ((2, 6), (3, 8), (4, 11))


def test_shouldNotResetEpochHistoryTailIfUndefinedPassed(f):
    _three(f)
    f.cache.truncate_from_start(UNDEFINED_EPOCH_OFFSET)
    assert f.cache.epoch_entries == ((2, 6), (3, 8), (4, 11))


def test_shouldFetchLatestEpochOfEmptyCache(f):
    assert f.cache.latest_epoch is None


def test_shouldFetchEndOffsetOfEmptyCache(f):
    assert f.cache.end_offset_for(7) == UNDEFINED


def test_shouldClearEarliestOnEmptyCache(f):
    f.cache.truncate_from_start(7)
    assert f.cache.epoch_entries == () and f.checkpoint.writes == 0


def test_shouldClearLatestOnEmptyCache(f):
    f.cache.truncate_from_end(7)
    assert f.cache.epoch_entries == () and f.checkpoint.writes == 0


def test_every_change_is_written_through_to_the_checkpoint(f):
    _three(f)
    assert f.checkpoint.entries == [(2, 6), (3, 8), (4, 11)]
    f.cache.truncate_from_end(9)
    assert f.checkpoint.entries == [(2, 6), (3, 8)]
    f.cache.truncate_from_start(7)
    assert f.checkpoint.entries == [(2, 7), (3, 8)]


# ---------------------------------------------------------------------------------- the checkpoint file of a Log


TP = TopicPartition("t", 0)


def _file(log: Log) -> str:
    with open(os.path.join(log.dir, LEADER_EPOCH_CHECKPOINT), encoding="utf-8") as fh:
        return fh.read()


def test_checkpoint_format_round_trips():
    text = encode_leader_epoch_checkpoint([(0, 0), (3, 17)])
    assert text == "0\n2\n0 0\n3 17\n"
    assert decode_leader_epoch_checkpoint(text) == [(0, 0), (3, 17)]
    with pytest.raises(ValueError):
        decode_leader_epoch_checkpoint("1\n0\n")
    with pytest.raises(ValueError):
        decode_leader_epoch_checkpoint("0\n2\n0 0\n")


def test_checkpoint_stays_exact_across_truncations_and_restarts(tmp_path):
    """The file always equals the cache, after leader appends, follower appends carrying the leader's epochs,
    truncations and reloads."""
    log = Log(str(tmp_path), TP)
    log.append_as_leader(values_batch(["a", "b"]), 0, 0)
    log.append_as_follower(values_batch(["c", "d"], base_offset=2, leader_epoch=2)
                           + values_batch(["e"], base_offset=4, leader_epoch=5))
    assert log.leader_epoch_entries == ((0, 0), (2, 2), (5, 4))
    assert _file(log) == "0\n3\n0 0\n2 2\n5 4\n"
    log.truncate_to(4)
    assert log.leader_epoch_entries == ((0, 0), (2, 2)) and _file(log) == "0\n2\n0 0\n2 2\n"
    log.append_as_leader(values_batch(["f"]), 7, 0)
    again = Log(str(tmp_path), TP)
    assert again.leader_epoch_entries == ((0, 0), (2, 2), (7, 4)) and _file(again) == "0\n3\n0 0\n2 2\n7 4\n"
    assert read_values(again.read(0, 1 << 20)) == ("a", "b", "c", "d", "f")
    assert again.end_offset_for_epoch(2) == (4, 2) and again.end_offset_for_epoch(7) == (5, 7)


def test_stale_checkpoint_is_rebuilt_from_the_records_on_load(tmp_path):
    """A checkpoint a crash left behind (the in-place write is not fsynced) is rebuilt from the epochs the records
    carry (recoverSegment's assign per batch) and rewritten; a torn segment tail takes its epoch with it."""
    log = Log(str(tmp_path), TP)
    log.append_as_leader(values_batch(["a"]), 1, 0)
    log.append_as_leader(values_batch(["b"]), 3, 0)
    with open(os.path.join(log.dir, LEADER_EPOCH_CHECKPOINT), "w", encoding="utf-8") as fh:
        fh.write("0\n1\n1 0\n")  # lost the (3, 1) entry
    with open(log.segments[-1].log_path, "ab") as fh:
        fh.write(values_batch(["torn"], base_offset=2, leader_epoch=9)[:40])  # a torn batch of epoch 9
    again = Log(str(tmp_path), TP)
    assert again.log_end_offset == 2
    assert again.leader_epoch_entries == ((1, 0), (3, 1))
    assert _file(again) == "0\n2\n1 0\n3 1\n"
