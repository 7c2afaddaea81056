"""KIP-890 part 1's second half at the group coordinator (Kafka 3.7, KAFKA-15449:
GroupCoordinator.handleTxnCommitOffsets → ReplicaManager.maybeStartTransactionVerificationForPartition →
postVerificationCallback): a TxnOffsetCommit's transaction is verified before anything of it is looked at, prepared
or appended; a failed verification answers GroupMetadataManager.maybeConvertOffsetCommitError of its error and
leaves the group as it was."""

from __future__ import annotations

import pytest
from freezegun import freeze_time

from core.coordinator.group.group_metadata_manager import maybe_convert_offset_commit_error
from core.coordinator.transaction.verification import coordinator_verification_error
from messages.common import Errors, TopicPartition
from messages.group import OffsetFetchRequest
from protocol.records import iter_batches
from tests.core.coordinator.group.test_group_coordinator import GROUP, T0, Harness
from tests.core.coordinator.group.test_group_txn_offsets import EPOCH, PID, _commit


def _stable(h: Harness) -> dict[TopicPartition, tuple[int, Errors]]:
    r = h.answer(h.request(OffsetFetchRequest(GROUP, (T0,), require_stable=True)))
    return {p.tp: (p.offset, p.error) for p in r.partitions}


def test_a_stray_txn_offset_commit_after_its_transaction_ended_is_refused_and_appends_nothing():
    """Seed 9's stray: the transaction coordinator answers INVALID_TXN_STATE (the group's partition is in no ongoing
    transaction of the producer); 2.6.3 appended it and kept it pending for a marker no one writes, so
    OffsetFetch(require_stable) answered UNSTABLE_OFFSET_COMMIT for ever."""
    with freeze_time("2026-11-25 12:00:00"):
        h = Harness()
        h.elect()
        h.verify_error = Errors.INVALID_TXN_STATE
        assert {p.error for p in _commit(h, (T0, 10)).partitions} == {Errors.INVALID_TXN_STATE}
        (verification,) = h.verifications
        assert (verification.partition, verification.transactional_id) == (h.partition, "tx")
        (header,) = iter_batches(verification.records)
        assert (header.producer_id, header.producer_epoch, header.is_transactional) == (PID, EPOCH, True)
        assert h.appends == [] and h.log.get(h.partition) is None
        assert h.group().pending_transactional_offset_commits == {}
        assert h.gc.manager.open_groups_for_producer == {}
        assert _stable(h) == {T0: (-1, Errors.NONE)}  # stable: nothing waits for a marker


def test_a_commit_in_an_ongoing_transaction_is_appended_naming_its_verification():
    with freeze_time("2026-11-25 12:00:00"):
        h = Harness()
        h.elect()
        assert {p.error for p in _commit(h, (T0, 10)).partitions} == {Errors.NONE}
        (verification,) = h.verifications
        (append,) = h.appends
        assert (append.transactional_id, append.verification_token) == ("tx", verification.token)
        (batch,) = iter_batches(bytes(h.log[h.partition]))
        assert (batch.producer_id, batch.is_transactional) == (PID, True)
        assert _stable(h) == {T0: (-1, Errors.UNSTABLE_OFFSET_COMMIT)}
        h.run(h.gc.handle_txn_completion(PID, {h.partition}, True))
        assert _stable(h) == {T0: (10, Errors.NONE)}
        _commit(h, (T0, 11))
        assert len({v.token for v in h.verifications}) == 2  # each commit its own token


def test_a_refused_stray_leaves_the_producers_pending_offsets_of_its_next_transaction_alone():
    """The stray of an ended transaction lands while the producer's next one has the partition's offset pending:
    verified first (3.7), it is refused before GroupMetadata.prepareTxnOffsetCommit could replace that entry, so the
    next transaction's COMMIT marker makes its own offset the group's (kactor sim's seed 55 shape)."""
    with freeze_time("2026-11-25 12:00:00"):
        h = Harness()
        h.elect()
        _commit(h, (T0, 20))  # the next transaction's own commit
        h.verify_error = Errors.INVALID_TXN_STATE
        assert {p.error for p in _commit(h, (T0, 10)).partitions} == {Errors.INVALID_TXN_STATE}  # the stray
        assert len(h.appends) == 1
        h.run(h.gc.handle_txn_completion(PID, {h.partition}, True))
        assert _stable(h) == {T0: (20, Errors.NONE)}


def test_verification_comes_before_the_groups_checks():
    """postVerificationCallback runs doTxnCommitOffsets only once verified: a stray of an unknown member answers the
    verification's error."""
    with freeze_time("2026-11-25 12:00:00"):
        h = Harness()
        h.elect()
        h.verify_error = Errors.INVALID_TXN_STATE
        assert {p.error for p in _commit(h, (T0, 1), member="nobody").partitions} == {Errors.INVALID_TXN_STATE}
        h.verify_error = Errors.NONE
        assert {p.error for p in _commit(h, (T0, 1), member="nobody").partitions} == {Errors.UNKNOWN_MEMBER_ID}
        assert h.appends == []


# the transaction coordinator's (or the leader's own) error -> what the TxnOffsetCommit answers (Kafka 3.7.1)
ANSWERS = {
    Errors.INVALID_TXN_STATE: Errors.INVALID_TXN_STATE,  # the partition is in no ongoing transaction of it
    Errors.INVALID_PRODUCER_ID_MAPPING: Errors.INVALID_PRODUCER_ID_MAPPING,  # the id unknown, or another producer's
    Errors.INVALID_PRODUCER_EPOCH: Errors.INVALID_PRODUCER_EPOCH,  # fenced (3.7's PRODUCER_FENCED)
    Errors.CONCURRENT_TRANSACTIONS: Errors.COORDINATOR_NOT_AVAILABLE,  # the transaction ending: retried
    Errors.COORDINATOR_LOAD_IN_PROGRESS: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.COORDINATOR_NOT_AVAILABLE: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_COORDINATOR: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NETWORK_EXCEPTION: Errors.COORDINATOR_LOAD_IN_PROGRESS,  # KAFKA-16386: the ask failed or timed out
    Errors.NOT_LEADER_OR_FOLLOWER: Errors.NOT_COORDINATOR,  # getPartitionOrException, the offsets partition moved
    Errors.UNKNOWN_TOPIC_OR_PARTITION: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.KAFKA_STORAGE_ERROR: Errors.NOT_COORDINATOR,
}


@pytest.mark.parametrize("coordinator_error", list(ANSWERS), ids=lambda e: e.name)
def test_each_verification_failure_answers_kafka_3_7s_error_and_appends_nothing(coordinator_error):
    with freeze_time("2026-11-25 12:00:00"):
        h = Harness()
        h.elect()
        h.verify_error = coordinator_verification_error(coordinator_error)  # what the leader hands back
        assert {p.error for p in _commit(h, (T0, 10)).partitions} == {ANSWERS[coordinator_error]}
        assert h.appends == [] and h.group().pending_transactional_offset_commits == {}


def test_the_append_side_mapping_is_kafka_3_7_1s():
    assert coordinator_verification_error(Errors.CONCURRENT_TRANSACTIONS) == Errors.NOT_ENOUGH_REPLICAS
    assert coordinator_verification_error(Errors.NETWORK_EXCEPTION) == Errors.NETWORK_EXCEPTION
    assert coordinator_verification_error(Errors.INVALID_TXN_STATE) == Errors.INVALID_TXN_STATE
    assert maybe_convert_offset_commit_error(Errors.NOT_ENOUGH_REPLICAS) == Errors.COORDINATOR_NOT_AVAILABLE
    assert maybe_convert_offset_commit_error(Errors.NETWORK_EXCEPTION) == Errors.COORDINATOR_LOAD_IN_PROGRESS
