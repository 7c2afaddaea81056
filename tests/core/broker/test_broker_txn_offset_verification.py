"""KIP-890 part 1's second half on the ``__consumer_offsets`` leader (Kafka 3.7, KAFKA-15449): the group coordinator's
TxnOffsetCommit first asks the leader to verify the producer's transaction (ReplicaManager
.maybeStartTransactionVerificationForPartition: a ``verify_only`` produce), then appends naming that verification's
token (appendForGroup's verificationGuards); a transactional batch of the coordinator that would open a transaction
here is appended only with the guard of a verification still current (UnifiedLog.analyzeAndValidateProducerState's
check, 3.7 for origin Coordinator too)."""

from __future__ import annotations

from typing import Any

from core.broker.replica_manager import ReplicaManager
from core.coordinator.group.message_formats import (
    OffsetAndMetadata,
    offset_commit_key,
    offset_commit_value,
    records_batch,
)
from messages.common import Errors, TopicPartition
from messages.replication import ProducePartition, ProduceRequest, ProduceResponse
from messages.txn_markers import TxnMarkerEntry, WriteTxnMarkersRequest
from tests.core.broker.test_broker_txn_verification import COORDINATOR, EPOCH, PID, T0, TXN_ID, TXN_PARTITIONS
from tests.core.broker.test_broker_txn_verification import produce as run_produce
from tests.support.broker import drive, lai_request, lai_state, make_rm, um_request, um_state

OFFSETS = TopicPartition("__consumer_offsets", 3)


def leader(tmp_path: Any, enabled: bool = True) -> ReplicaManager:
    rm = make_rm(tmp_path, transaction_partition_verification_enable=enabled)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(OFFSETS, 0, 0, (0,), (0,), is_new=True)]), T0))
    drive(rm.handle_update_metadata(um_request([
        um_state(TopicPartition("__transaction_state", p), COORDINATOR, (COORDINATOR,), (COORDINATOR,))
        for p in range(TXN_PARTITIONS)]), T0))
    return rm


def batch(offset: int = 5) -> bytes:
    """The transactional batch GroupMetadataManager.storeOffsets writes for the producer (base sequence 0)."""
    return records_batch([(offset_commit_key("g", TopicPartition("t", 0)),
                           offset_commit_value(OffsetAndMetadata(offset, -1, "", int(T0))))], int(T0), PID, EPOCH)


def verify(rm: ReplicaManager, token: int, answer: tuple[Errors, dict] | None = None, tp: TopicPartition = OFFSETS
           ) -> tuple[Errors, int]:
    """The coordinator's verify-only request; its partition's error and how many times the coordinator was asked."""
    request = ProduceRequest(-1, 5000, (ProducePartition(tp, records_batch([], int(T0), PID, EPOCH)),), TXN_ID,
                             coordinator=True, verify_only=True, verification_token=token)
    response, asks = run_produce(rm, request, answer)
    assert isinstance(response, ProduceResponse)
    if asks:
        (ask,) = asks
        assert (ask.transactional_id, ask.producer_id, ask.producer_epoch, ask.partitions) == (
            TXN_ID, PID, EPOCH, (tp,))
    return response.partitions[0].error, len(asks)


def append(rm: ReplicaManager, token: int, offset: int = 5) -> Errors:
    request = ProduceRequest(1, 5000, (ProducePartition(OFFSETS, batch(offset)),), TXN_ID, coordinator=True,
                             verification_token=token)
    response, asks = run_produce(rm, request)
    assert asks == []  # the append itself never asks
    return response.partitions[0].error


def log_end(rm: ReplicaManager) -> int:
    p = rm.online_partition(OFFSETS)
    assert p is not None and p.log is not None
    return p.log.log_end_offset


def marker(rm: ReplicaManager, commit: bool) -> None:
    drive(rm.handle_write_txn_markers(WriteTxnMarkersRequest((TxnMarkerEntry(PID, EPOCH, commit, 0, (OFFSETS,)),)),
                                      T0, "coordinator"))


def test_a_stray_commit_fails_verification_and_its_append_is_refused(tmp_path):
    rm = leader(tmp_path)
    assert verify(rm, 1, (Errors.NONE, {OFFSETS: Errors.INVALID_TXN_STATE})) == (Errors.INVALID_TXN_STATE, 1)
    # an append anyway (no verified guard): refused, nothing written
    assert append(rm, 1) == Errors.INVALID_TXN_STATE
    assert append(rm, 0) == Errors.INVALID_TXN_STATE
    assert log_end(rm) == 0


def test_a_verified_commit_is_appended_and_opens_the_transaction_here(tmp_path):
    rm = leader(tmp_path)
    assert verify(rm, 1, (Errors.NONE, {})) == (Errors.NONE, 1)
    assert append(rm, 1) == Errors.NONE and log_end(rm) == 1
    p = rm.online_partition(OFFSETS)
    assert p is not None and p.log is not None and p.log.producer_state.has_ongoing_transaction(PID)
    # the transaction is open here: the next commit of it is verified without asking
    assert verify(rm, 2) == (Errors.NONE, 0)
    assert append(rm, 2, offset=6) == Errors.NONE and log_end(rm) == 2
    # once the marker ends it, a late commit of it is refused
    marker(rm, commit=True)
    end = log_end(rm)
    assert verify(rm, 3, (Errors.NONE, {OFFSETS: Errors.INVALID_TXN_STATE})) == (Errors.INVALID_TXN_STATE, 1)
    assert append(rm, 3, offset=7) == Errors.INVALID_TXN_STATE and log_end(rm) == end


def test_a_marker_between_verification_and_append_voids_the_verification(tmp_path):
    """KAFKA-14884's race on the coordinator's path: verified while the transaction was ongoing, the transaction then
    ends (its marker clears the producer's verification entry) and another verification begins; the first append
    brings back a guard that is no longer current and is refused."""
    rm = leader(tmp_path)
    assert verify(rm, 1, (Errors.NONE, {})) == (Errors.NONE, 1)
    marker(rm, commit=False)
    end = log_end(rm)
    assert verify(rm, 2, (Errors.NONE, {})) == (Errors.NONE, 1)
    assert append(rm, 1) == Errors.INVALID_TXN_STATE and log_end(rm) == end
    assert append(rm, 2) == Errors.NONE and log_end(rm) == end + 1


def test_the_coordinators_errors_as_the_group_coordinator_gets_them(tmp_path):
    """ReplicaManager.maybeStartTransactionVerificationForPartitions' invokeCallback (3.7): the coordinator's retriable
    errors NOT_ENOUGH_REPLICAS, anything else — NETWORK_EXCEPTION too, mapped by the group coordinator (KAFKA-16386)
    — as it is."""
    rm = leader(tmp_path)
    for error, expected in ((Errors.CONCURRENT_TRANSACTIONS, Errors.NOT_ENOUGH_REPLICAS),
                            (Errors.NOT_COORDINATOR, Errors.NOT_ENOUGH_REPLICAS),
                            (Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.NOT_ENOUGH_REPLICAS),
                            (Errors.NETWORK_EXCEPTION, Errors.NETWORK_EXCEPTION),
                            (Errors.INVALID_PRODUCER_ID_MAPPING, Errors.INVALID_PRODUCER_ID_MAPPING),
                            (Errors.INVALID_PRODUCER_EPOCH, Errors.INVALID_PRODUCER_EPOCH)):
        assert verify(rm, 1, (error, {})) == (expected, 1)
    assert log_end(rm) == 0


def test_a_partition_not_led_here_answers_its_own_error_without_asking(tmp_path):
    rm = leader(tmp_path)
    assert verify(rm, 1, tp=TopicPartition("__consumer_offsets", 4)) == (Errors.UNKNOWN_TOPIC_OR_PARTITION, 0)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(OFFSETS, 1, 1, (0, 1), (0, 1))]), T0))
    assert verify(rm, 2) == (Errors.NOT_LEADER_OR_FOLLOWER, 0)


def test_with_verification_off_nothing_is_asked_and_the_commit_is_appended_as_in_2_6(tmp_path):
    rm = leader(tmp_path, enabled=False)
    assert verify(rm, 1) == (Errors.NONE, 0)
    assert append(rm, 1) == Errors.NONE and log_end(rm) == 1
