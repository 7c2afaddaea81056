"""TxnOffsetCommit at the group coordinator (Kafka 2.6.3's GroupCoordinator.handleTxnCommitOffsets and
GroupMetadataManager's transactional offsets): the offsets are written as a transactional batch of the producer,
stay pending (invisible to OffsetFetch) until the transaction's marker, become committed on COMMIT and go on ABORT
(handleTxnCompletion); a load replays the markers it finds in the log and keeps pending what none completed."""

from __future__ import annotations

from freezegun import freeze_time

from core.coordinator.group.message_formats import OffsetAndMetadata
from messages.common import Errors, TopicPartition
from messages.group import (
    GroupCoordinatorConfig,
    OffsetCommitPartition,
    OffsetCommitPartitionResponse,
    OffsetCommitRequest,
    OffsetFetchRequest,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
from protocol.records import CONTROL_BIT, TRANSACTIONAL_BIT, Record, assign_offsets, build_batch, iter_batches
from tests.core.coordinator.group.test_group_coordinator import GROUP, T0, T1, Harness

PID, EPOCH = 42, 3


def _commit(h: Harness, *offsets: tuple[TopicPartition, int], pid: int = PID, generation: int = -1,
            member: str = "") -> TxnOffsetCommitResponse:
    return h.answer(h.request(TxnOffsetCommitRequest("tx", GROUP, pid, EPOCH, tuple(
        OffsetCommitPartition(tp, o) for tp, o in offsets), generation, member)))


def _fetched(h: Harness) -> dict[TopicPartition, int]:
    r = h.answer(h.request(OffsetFetchRequest(GROUP, None)))
    return {p.tp: p.offset for p in r.partitions}


def _marker(h: Harness, pid: int, commit: bool) -> None:
    """A COMMIT / ABORT control batch as the partition leader writes it (key: version 0, type; value: version 0,
    coordinator epoch)."""
    batch = bytearray(build_batch([Record(0, 0, b"\x00\x00\x00" + (b"\x01" if commit else b"\x00"),
                                          b"\x00\x00\x00\x00\x00\x05")],
                                  producer_id=pid, producer_epoch=EPOCH,
                                  attributes=CONTROL_BIT | TRANSACTIONAL_BIT))
    assign_offsets(batch, 0, h.leo(h.partition))
    h.log.setdefault(h.partition, bytearray()).extend(batch)


def test_offsets_committed_in_a_transaction_are_pending_until_the_commit_marker():
    with freeze_time("2026-11-25 12:00:00"):
        h = Harness()
        h.elect()
        assert _commit(h, (T0, 10), (T1, 20)) == TxnOffsetCommitResponse((
            OffsetCommitPartitionResponse(T0, Errors.NONE), OffsetCommitPartitionResponse(T1, Errors.NONE)))
        (batch,) = list(iter_batches(bytes(h.log[h.partition])))
        assert (batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.is_transactional) == (
            PID, EPOCH, 0, True)
        assert _fetched(h) == {}  # not committed yet
        assert h.group().has_pending_offset_commits_for_topic_partition(T0)
        assert h.gc.manager.open_groups_for_producer == {PID: {GROUP}}
        # a marker of another partition, or of another producer, changes nothing
        h.run(h.gc.handle_txn_completion(PID, {h.partition + 1}, True))
        h.run(h.gc.handle_txn_completion(7, {h.partition}, True))
        assert _fetched(h) == {}
        h.run(h.gc.handle_txn_completion(PID, {h.partition}, True))
        assert _fetched(h) == {T0: 10, T1: 20}
        assert h.group().pending_transactional_offset_commits == {}
        assert h.gc.manager.open_groups_for_producer == {}


def test_an_abort_marker_drops_the_pending_offsets():
    with freeze_time("2026-11-25 12:00:00"):
        h = Harness()
        h.elect()
        h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 5),)))
        _commit(h, (T0, 10))
        h.run(h.gc.handle_txn_completion(PID, {h.partition}, False))
        assert _fetched(h) == {T0: 5}


def test_a_failed_append_forgets_the_pending_offsets_and_answers_the_error():
    with freeze_time("2026-11-25 12:00:00"):
        h = Harness()
        h.elect()
        h.append_error = Errors.NOT_ENOUGH_REPLICAS
        assert {p.error for p in _commit(h, (T0, 10)).partitions} == {Errors.COORDINATOR_NOT_AVAILABLE}
        assert h.group().pending_transactional_offset_commits == {}
        assert h.gc.manager.open_groups_for_producer == {}  # removeProducerGroup
        h.append_error = Errors.NONE
        h.run(h.gc.handle_txn_completion(PID, {h.partition}, True))
        assert _fetched(h) == {}


def test_txn_offset_commit_errors():
    with freeze_time("2026-11-25 12:00:00"):
        h = Harness()
        assert {p.error for p in _commit(h, (T0, 1)).partitions} == {Errors.NOT_COORDINATOR}
        h.elect()
        assert {p.error for p in _commit(h, (T0, 1), member="nobody").partitions} == {Errors.UNKNOWN_MEMBER_ID}
        assert {p.error for p in _commit(h, (T0, 1), generation=3).partitions} == {Errors.ILLEGAL_GENERATION}
        assert h.log.get(h.partition) is None


def test_a_load_completes_pending_offsets_with_the_markers_in_the_log():
    with freeze_time("2026-11-25 12:00:00"):
        h = Harness()
        h.elect()
        _commit(h, (T0, 10), pid=1)  # committed by its marker below
        _commit(h, (T1, 20), pid=2)  # aborted
        _commit(h, (T1, 30), pid=3)  # no marker yet: pending after the load
        _marker(h, 1, commit=True)
        _marker(h, 2, commit=False)
        loaded = Harness(log=h.log)
        loaded.elect()
        assert _fetched(loaded) == {T0: 10}
        group = loaded.group()
        # pending, with the offset of the batch it was appended in (the third)
        assert group.pending_transactional_offset_commits == {3: {T1: (2, OffsetAndMetadata(
            30, -1, "", group.offsets[T0].commit_timestamp))}}
        assert loaded.gc.manager.open_groups_for_producer == {3: {GROUP}}
        loaded.run(loaded.gc.handle_txn_completion(3, {loaded.partition}, True))
        assert _fetched(loaded) == {T0: 10, T1: 30}
        # the partition moves away: the producer no longer has the group open here
        _commit(loaded, (T0, 50), pid=4)
        loaded.run(loaded.gc.on_resignation(loaded.partition))
        assert loaded.gc.manager.open_groups_for_producer == {}


def test_a_stable_fetch_of_a_partition_with_pending_offsets_is_unstable_offset_commit():
    """GroupMetadataManager.getOffsets with requireStable (KIP-447): UNSTABLE_OFFSET_COMMIT (offset -1, no
    metadata) for a partition a transaction has offsets pending for, until its marker; the others as committed."""
    with freeze_time("2026-11-25 12:00:00"):
        h = Harness()
        h.elect()
        h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 5), OffsetCommitPartition(T1, 6))))
        _commit(h, (T0, 10))

        def stable() -> list[tuple[TopicPartition, int, str | None, Errors]]:
            r = h.answer(h.request(OffsetFetchRequest(GROUP, (T0, T1), require_stable=True)))
            return [(p.tp, p.offset, p.metadata, p.error) for p in r.partitions]

        assert stable() == [(T0, -1, "", Errors.UNSTABLE_OFFSET_COMMIT), (T1, 6, "", Errors.NONE)]
        assert _fetched(h) == {T0: 5, T1: 6}  # without require_stable: the committed one
        h.run(h.gc.handle_txn_completion(PID, {h.partition}, True))
        assert stable() == [(T0, 10, "", Errors.NONE), (T1, 6, "", Errors.NONE)]


def test_of_a_transactional_and_a_plain_commit_the_later_append_wins():
    """CommitRecordMetadataAndOffset.olderThan: a COMMIT completes a transaction's offset only if no commit of the
    partition was appended after it (here a plain OffsetCommit while the transaction was open); an offset the
    transaction appended after a plain commit does replace it. A load of the same log decides the same."""
    with freeze_time("2026-11-25 12:00:00"):
        h = Harness()
        h.elect()
        _commit(h, (T0, 10), (T1, 11))  # batch 0, pending
        h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 5),)))  # batch 1: committed at once
        assert _fetched(h) == {T0: 5}
        h.run(h.gc.handle_txn_completion(PID, {h.partition}, True))
        assert _fetched(h) == {T0: 5, T1: 11}  # T0's plain commit is the later append
        h.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T1, 6),)))  # batch 2
        _commit(h, (T1, 12))  # batch 3
        h.run(h.gc.handle_txn_completion(PID, {h.partition}, True))
        assert _fetched(h) == {T0: 5, T1: 12}

        # the same log loaded, its markers written where the completions happened above
        replay = Harness()
        replay.elect()
        _commit(replay, (T0, 10), (T1, 11))
        replay.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T0, 5),)))
        _marker(replay, PID, commit=True)
        replay.request(OffsetCommitRequest(GROUP, (OffsetCommitPartition(T1, 6),)))
        _commit(replay, (T1, 12))
        _marker(replay, PID, commit=True)
        loaded = Harness(log=replay.log)
        loaded.elect()
        assert _fetched(loaded) == {T0: 5, T1: 12}


def test_a_group_with_only_pending_offsets_outlives_the_expiration_check():
    """cleanupGroupMetadata turns an Empty group without offsets Dead; GroupMetadata.hasOffsets counts a
    transaction's pending ones, so the group a TxnOffsetCommit created is still there when the COMMIT comes."""
    with freeze_time("2026-11-25 12:00:00") as frozen:
        h = Harness(GroupCoordinatorConfig(offsets_topic_num_partitions=4, offsets_retention_check_interval_ms=1000))
        h.elect()
        _commit(h, (T0, 10))
        h.advance(frozen, 3000)  # three expiration checks
        assert h.group() is not None and h.group().state.value == "Empty"
        h.run(h.gc.handle_txn_completion(PID, {h.partition}, True))
        assert _fetched(h) == {T0: 10}


def test_a_second_copy_of_a_txn_offset_commit_failing_keeps_the_offset_appended_first():
    """Beyond 2.6.3 (`kactor sim --txn-check` seed 180): the client's retry of a TxnOffsetCommit was appended; the
    first copy, delayed past its timeout, lands while the transaction is still open here and its append times out.
    Kafka forgets the partition's pending offset then, and the commit marker commits the output without it; here
    the offset appended first stays pending and is committed."""
    with freeze_time("2026-11-25 12:00:00"):
        h = Harness()
        h.elect()
        _commit(h, (T0, 10))
        h.append_error = Errors.REQUEST_TIMED_OUT
        assert {p.error for p in _commit(h, (T0, 10)).partitions} == {Errors.REQUEST_TIMED_OUT}
        assert h.group().has_pending_offset_commits_for_topic_partition(T0)
        assert h.gc.manager.open_groups_for_producer == {PID: {GROUP}}
        h.run(h.gc.handle_txn_completion(PID, {h.partition}, True))
        assert _fetched(h) == {T0: 10}
        assert h.group().replaced_txn_offset_commits == {}


def test_a_commit_marker_before_a_second_copys_append_is_answered_commits_the_offset_appended_first():
    """The same second copy still unacknowledged when the COMMIT marker comes (Kafka throws there; 2.6.3 would
    commit nothing of the partition): the offset appended first is committed, and the late answer changes nothing."""
    from core.coordinator.group.group_metadata import GroupMetadata, GroupState

    group = GroupMetadata(GROUP, GroupState.EMPTY, 0)
    om = OffsetAndMetadata(10, -1, "", 0)
    group.prepare_txn_offset_commit(PID, {T0: om})
    group.on_txn_offset_commit_append(PID, T0, 7, om)
    group.prepare_txn_offset_commit(PID, {T0: om})  # the delayed copy, its append in flight
    group.complete_pending_txn_offset_commit(PID, is_commit=True)
    assert group.offsets == {T0: om} and group.offset_batches == {T0: 7}
    group.fail_pending_txn_offset_commit(PID, T0, om)
    assert group.offsets == {T0: om} and group.pending_transactional_offset_commits == {}


def test_the_older_copy_failing_after_the_retry_was_prepared_keeps_the_retry():
    """Seed 417's order: the delayed first copy is prepared and its append is slow; the retry is prepared; the first
    copy's append then times out, and the retry's is acknowledged. Kafka's failPendingTxnOffsetCommit drops the
    retry's pending offset there (the latest of the partition), so the marker commits none; here it stays."""
    from core.coordinator.group.group_metadata import GroupMetadata, GroupState

    group = GroupMetadata(GROUP, GroupState.EMPTY, 0)
    first, retry = OffsetAndMetadata(10, -1, "", 100), OffsetAndMetadata(10, -1, "", 200)
    group.prepare_txn_offset_commit(PID, {T0: first})
    group.prepare_txn_offset_commit(PID, {T0: retry})
    group.fail_pending_txn_offset_commit(PID, T0, first)
    assert group.has_pending_offset_commits_for_topic_partition(T0)
    group.on_txn_offset_commit_append(PID, T0, 9, retry)
    group.complete_pending_txn_offset_commit(PID, is_commit=True)
    assert group.offsets == {T0: retry} and group.offset_batches == {T0: 9}
    assert group.replaced_txn_offset_commits == {}
    # the first copy's append acknowledged after the retry's: the later batch counts
    group.prepare_txn_offset_commit(PID, {T1: first})
    group.prepare_txn_offset_commit(PID, {T1: retry})
    group.on_txn_offset_commit_append(PID, T1, 12, retry)
    group.on_txn_offset_commit_append(PID, T1, 13, first)
    group.complete_pending_txn_offset_commit(PID, is_commit=True)
    assert group.offsets[T1] == first and group.offset_batches[T1] == 13
    # both failing: nothing pending, nothing committed, nothing kept
    group.prepare_txn_offset_commit(PID, {T1: OffsetAndMetadata(20, -1, "", 300)})
    group.prepare_txn_offset_commit(PID, {T1: OffsetAndMetadata(20, -1, "", 400)})
    group.fail_pending_txn_offset_commit(PID, T1, OffsetAndMetadata(20, -1, "", 400))
    group.fail_pending_txn_offset_commit(PID, T1, OffsetAndMetadata(20, -1, "", 300))
    assert group.pending_transactional_offset_commits == {} and group.replaced_txn_offset_commits == {}


def test_a_marker_appended_while_the_load_waits_for_its_high_watermark_is_read_on():
    """A COMMIT marker written while the load waits for the high watermark (`await_committed`) finds no group to
    complete (handleTxnCompletion: the partition is still loading); the load sees the log end moved and reads on, so
    the marker completes the pending offsets it read (sim seed 839: they stayed pending)."""
    with freeze_time("2026-11-25 12:00:00"):
        h = Harness()
        h.elect()
        _commit(h, (T0, 10), pid=1)
        loaded = Harness(log=h.log)
        loaded.high_watermark[loaded.partition] = 0  # the commit not replicated yet
        loaded.elect()
        assert len(loaded.awaiting) == 1
        _marker(loaded, 1, commit=True)
        loaded.run(loaded.gc.handle_txn_completion(1, {loaded.partition}, True))
        assert loaded.gc.manager.loading_partitions  # the marker completed nothing: nothing is loaded yet
        loaded.replicate(loaded.partition)
        assert _fetched(loaded) == {T0: 10}
        assert loaded.group().pending_transactional_offset_commits == {}
        assert loaded.gc.manager.open_groups_for_producer == {}
