"""KIP-890 part 1 on the partition leader (Kafka 3.6's ReplicaManager.appendRecords): a transactional batch that would
open a transaction here is appended only once the transactional id's coordinator has verified that the partition is
in the producer's transaction; else the produce answers 3.6's errors and appends nothing."""

from __future__ import annotations

from typing import Any

from core.broker.replica_manager import ReplicaManager
from core.coordinator.transaction.verification import VerifyPartitionsInTxn, transaction_coordinator_partition
from core.effects import Respond
from messages.common import Errors, TopicPartition
from messages.replication import ProducePartition, ProduceRequest, ProduceResponse
from messages.topic import TRANSACTION_STATE_TOPIC_NAME
from messages.txn_markers import TxnMarkerEntry, WriteTxnMarkersRequest
from protocol.records import Record, build_batch
from tests.support.broker import drive, lai_request, lai_state, make_rm, um_request, um_state

TP = TopicPartition("foo", 0)
T0 = 1_000_000.0
TXN_ID = "tx-1"
PID, EPOCH = 7, 2
COORDINATOR = 2  # the broker leading tx-1's __transaction_state partition
TXN_PARTITIONS = 4


def leader(tmp_path: Any, enabled: bool = True, with_txn_topic: bool = True) -> ReplicaManager:
    rm = make_rm(tmp_path, transaction_partition_verification_enable=enabled)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 0, (0,), (0,), is_new=True)]), T0))
    if with_txn_topic:
        drive(rm.handle_update_metadata(um_request([
            um_state(TopicPartition(TRANSACTION_STATE_TOPIC_NAME, p), COORDINATOR, (COORDINATOR,), (COORDINATOR,))
            for p in range(TXN_PARTITIONS)]), T0))
    return rm


def txn_produce(seq: int = 0, txn_id: str | None = TXN_ID) -> ProduceRequest:
    records = build_batch([Record(0, 0, None, b"v")], first_timestamp=int(T0), producer_id=PID,
                          producer_epoch=EPOCH, base_sequence=seq, attributes=0x10)
    return ProduceRequest(1, 30000, (ProducePartition(TP, records),), transactional_id=txn_id)


def produce(rm: ReplicaManager, request: ProduceRequest, answer: tuple[Errors, dict] | None = None
            ) -> tuple[ProduceResponse, list[VerifyPartitionsInTxn]]:
    """Run handle_produce, answering its verification asks with ``answer`` (the coordinator's reply)."""
    asks: list[VerifyPartitionsInTxn] = []
    proc = rm.handle_produce(request, T0, "producer")
    value: Any = None
    try:
        while True:
            effect = proc.send(value)
            value = None
            if isinstance(effect, VerifyPartitionsInTxn):
                asks.append(effect)
                assert answer is not None, "verification asked unexpectedly"
                value = answer
            else:
                assert isinstance(effect, Respond), effect
    except StopIteration as stop:
        return stop.value, asks


def log_end(rm: ReplicaManager) -> int:
    p = rm.online_partition(TP)
    assert p is not None and p.log is not None
    return p.log.log_end_offset


def test_a_partition_never_added_to_the_transaction_is_refused_with_invalid_txn_state(tmp_path):
    rm = leader(tmp_path)
    response, asks = produce(rm, txn_produce(), (Errors.NONE, {TP: Errors.INVALID_TXN_STATE}))
    (ask,) = asks
    assert (ask.broker.id, ask.transactional_id, ask.producer_id, ask.producer_epoch, ask.partitions) == (
        COORDINATOR, TXN_ID, PID, EPOCH, (TP,))
    assert transaction_coordinator_partition(TXN_ID, TXN_PARTITIONS) in range(TXN_PARTITIONS)
    (p,) = response.partitions
    assert (p.error, p.error_message, p.base_offset) == (Errors.INVALID_TXN_STATE,
                                                         "Partition was not added to the transaction", -1)
    assert log_end(rm) == 0  # nothing appended: no transaction left open for ever


def test_a_verified_partition_is_appended_and_the_open_transaction_needs_no_second_verification(tmp_path):
    rm = leader(tmp_path)
    response, asks = produce(rm, txn_produce(0), (Errors.NONE, {}))
    assert len(asks) == 1 and response.partitions[0].error == Errors.NONE and log_end(rm) == 1
    response, asks = produce(rm, txn_produce(1))  # the transaction is open here: appended without asking
    assert asks == [] and response.partitions[0].error == Errors.NONE and log_end(rm) == 2
    # the coordinator aborts it (its marker): the producer's next transaction here is verified again
    drive(rm.handle_write_txn_markers(WriteTxnMarkersRequest((TxnMarkerEntry(PID, EPOCH, False, 0, (TP,)),)), T0,
                                      "coordinator"))
    response, asks = produce(rm, txn_produce(2), (Errors.NONE, {TP: Errors.INVALID_TXN_STATE}))
    assert len(asks) == 1 and response.partitions[0].error == Errors.INVALID_TXN_STATE


def test_the_coordinators_retriable_errors_are_not_enough_replicas(tmp_path):
    rm = leader(tmp_path)
    # NETWORK_EXCEPTION: a send that failed or timed out (KAFKA-16386, Kafka 3.7.1/3.8; 3.6.0 answered it as it was)
    for error in (Errors.NOT_COORDINATOR, Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.CONCURRENT_TRANSACTIONS,
                  Errors.NETWORK_EXCEPTION):
        response, _ = produce(rm, txn_produce(), (error, {}))
        (p,) = response.partitions
        assert p.error == Errors.NOT_ENOUGH_REPLICAS
        assert p.error_message == ("Unable to verify the partition has been added to the transaction. "
                                   f"Underlying error: {error.name}")
    assert log_end(rm) == 0


def test_no_transaction_state_topic_is_coordinator_not_available_without_asking(tmp_path):
    rm = leader(tmp_path, with_txn_topic=False)
    response, asks = produce(rm, txn_produce())
    assert asks == [] and response.partitions[0].error == Errors.NOT_ENOUGH_REPLICAS
    assert response.partitions[0].error_message.endswith("Underlying error: COORDINATOR_NOT_AVAILABLE")


def test_with_verification_off_the_never_added_partition_is_appended_as_in_2_6(tmp_path):
    """transaction.partition.verification.enable=false: 2.6's hole — the batch opens a transaction no coordinator
    will end."""
    rm = leader(tmp_path, enabled=False)
    response, asks = produce(rm, txn_produce())
    assert asks == [] and response.partitions[0].error == Errors.NONE and log_end(rm) == 1
    p = rm.online_partition(TP)
    assert p is not None and p.log is not None and p.log.producer_state.has_ongoing_transaction(PID)


def test_every_shard_caches_the_transaction_state_leaders_so_any_leader_can_verify():
    """update_metadata.split: each shard gets its own partitions and all of __transaction_state's (their leaders are
    where a shard's verification goes); DescribeMetadataCache still answers each partition once."""
    from core.api import update_metadata
    from core.broker.shards import shard_of

    txn = [um_state(TopicPartition(TRANSACTION_STATE_TOPIC_NAME, p), 1, (1,), (1,)) for p in range(TXN_PARTITIONS)]
    data = [um_state(TopicPartition("foo", p), 0, (0,), (0,)) for p in range(8)]
    parts = update_metadata.split(um_request(txn + data), 4)
    for i, part in parts.items():
        tps = {st.topic_partition for st in part.partition_states}
        assert {st.topic_partition for st in txn} <= tps
        assert {st.topic_partition for st in data if shard_of(st.topic_partition, 4) == i} == tps - {
            st.topic_partition for st in txn}


def test_the_next_transaction_on_a_partition_is_verified_at_its_own_sequence_not_its_epoch(tmp_path):
    """The verification entry keeps the batch's sequence and epoch in their places: a second transaction whose first
    sequence (3) is above the producer's epoch (2) is appended once verified (the entry once took the epoch as its
    lowest sequence, and librdkafka's second transaction on a partition got OUT_OF_ORDER_SEQUENCE_NUMBER)."""
    rm = leader(tmp_path)
    first = build_batch([Record(i, 0, None, b"v") for i in range(3)], first_timestamp=int(T0), producer_id=PID,
                        producer_epoch=EPOCH, base_sequence=0, attributes=0x10)
    response, asks = produce(rm, ProduceRequest(-1, 30000, (ProducePartition(TP, first),), transactional_id=TXN_ID),
                             (Errors.NONE, {}))
    assert (len(asks), response.partitions[0].error, log_end(rm)) == (1, Errors.NONE, 3)
    drive(rm.handle_write_txn_markers(WriteTxnMarkersRequest((TxnMarkerEntry(PID, EPOCH, True, 0, (TP,)),)), T0,
                                      "coordinator"))
    response, asks = produce(rm, txn_produce(3), (Errors.NONE, {}))
    assert (len(asks), response.partitions[0].error, log_end(rm)) == (1, Errors.NONE, 5)


def test_a_follower_answers_not_leader_not_the_verification_error(tmp_path):
    """Partition.appendRecordsToLeader refuses a replica that does not lead before UnifiedLog checks the batch: a
    transactional produce sent to a follower (the client's metadata is stale) is NOT_LEADER_OR_FOLLOWER, which the
    client retries at the new leader, not INVALID_TXN_STATE, which ends its transaction (kactor sim seeds 485 and 488:
    the hostile client's produce reached a broker the partition had just moved away from)."""
    rm = make_rm(tmp_path, transaction_partition_verification_enable=True)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 1, 0, (1, 0), (1, 0), is_new=True)]), T0))
    drive(rm.handle_update_metadata(um_request([
        um_state(TopicPartition(TRANSACTION_STATE_TOPIC_NAME, p), COORDINATOR, (COORDINATOR,), (COORDINATOR,))
        for p in range(TXN_PARTITIONS)]), T0))
    response, asks = produce(rm, txn_produce())
    (p,) = response.partitions
    assert (p.error, p.base_offset, asks) == (Errors.NOT_LEADER_OR_FOLLOWER, -1, [])
    assert log_end(rm) == 0
