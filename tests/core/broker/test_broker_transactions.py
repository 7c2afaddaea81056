"""Transactions on the replica manager (Kafka 2.6.3's KafkaApis.handleWriteTxnMarkersRequest →
ReplicaManager.appendRecords with origin Coordinator, fetchMessages at READ_COMMITTED, fetchOffsetForTimestamp):
markers appended on the leader and waited for in the ISR, READ_COMMITTED consumers reading up to the last stable
offset with the aborted transactions, followers keeping the same state, delayed fetches completing as the LSO moves."""

from __future__ import annotations

import attrs

from actors import names
from core.broker.replica_manager import ReplicaManager
from messages.common import Errors, TopicPartition
from messages.replication import (
    AbortedTransaction,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    ListOffsetsPartition,
    ListOffsetsRequest,
    ProducePartition,
    ProduceRequest,
)
from messages.topic import GROUP_METADATA_TOPIC_NAME
from messages.txn_markers import (
    TxnMarkerEntry,
    TxnMarkerPartitionResult,
    TxnMarkersWritten,
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)
from protocol.records import Record, build_batch, iter_batches
from tests.support.broker import broker_zk, drive, emitted, lai_request, lai_state, make_rm

TP0 = TopicPartition("foo", 0)
TP1 = TopicPartition("foo", 1)
OFFSETS0 = TopicPartition(GROUP_METADATA_TOPIC_NAME, 0)
T0 = 1_000_000.0
TRANSACTIONAL = 0x10


def txn_produce(tp: TopicPartition, pid: int, seq: int, n: int = 2, tag: str = "v", epoch: int = 0
                ) -> ProduceRequest:
    records = build_batch([Record(i, 0, None, f"{tag}{i}".encode()) for i in range(n)], first_timestamp=int(T0),
                          producer_id=pid, producer_epoch=epoch, base_sequence=seq, attributes=TRANSACTIONAL)
    return ProduceRequest(-1, 30000, (ProducePartition(tp, records),), transactional_id=f"tx-{pid}")


def leader(tmp_path, replicas=(0, 1), tps=(TP0,)) -> ReplicaManager:
    # 2.6.3's path: no coordinator here to verify with (KIP-890's verification: test_broker_txn_verification.py)
    rm = make_rm(tmp_path, transaction_partition_verification_enable=False)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(tp, 0, 0, replicas, replicas, is_new=True)
                                                for tp in tps]), T0))
    return rm


def follower_fetch(rm, offset, tp=TP0, follower=1, effects=None):
    request = FetchRequest(follower, (FetchPartition(tp, offset, 0, 0),), max_wait_ms=0)
    return drive(rm.handle_fetch(request, T0, f"fetcher-{follower}"), broker_zk(), effects)


def consumer_fetch(rm, offset, isolation_level=1, max_wait_ms=0, min_bytes=0, effects=None):
    request = FetchRequest(-1, (FetchPartition(TP0, offset, -1, -1, 1 << 20),), max_wait_ms=max_wait_ms,
                           min_bytes=min_bytes, isolation_level=isolation_level)
    return drive(rm.handle_fetch(request, T0, "consumer"), broker_zk(), effects)


def markers(*entries: tuple[int, bool, tuple[TopicPartition, ...]], coordinator_epoch: int = 0,
            producer_epoch: int = 0) -> WriteTxnMarkersRequest:
    return WriteTxnMarkersRequest(tuple(TxnMarkerEntry(pid, producer_epoch, commit, coordinator_epoch, tps)
                                        for pid, commit, tps in entries))


def offsets_of(response: FetchResponse) -> list[int]:
    (data,) = response.partitions
    return [b.base_offset + r.offset_delta for b in iter_batches(data.records) for r in b.records()]


def test_write_txn_markers_waits_for_the_isr_then_answers_and_tells_the_group_coordinator(tmp_path):
    rm = leader(tmp_path, tps=(TP0, OFFSETS0))
    effects: list = []
    drive(rm.handle_produce(txn_produce(TP0, 7, 0), T0, "producer"), broker_zk(), effects)
    request = markers((7, True, (TP0, OFFSETS0, TP1)))
    assert drive(rm.handle_write_txn_markers(request, T0, "coordinator"), None, effects) is None  # acks=-1
    assert rm.delayed_txn_markers_count == 1
    # the marker (offset 2 in foo-0, 0 in __consumer_offsets-0) reaches the follower
    follower_fetch(rm, 3, effects=effects)
    assert emitted(effects, "coordinator") == []
    follower_fetch(rm, 1, tp=OFFSETS0, effects=effects)
    written = [e for e in effects if isinstance(e, TxnMarkersWritten)]
    assert written == [TxnMarkersWritten(7, True, (0,))]
    # GroupCoordinator.scheduleHandleTxnCompletion, through the replica manager's front behind the shard's answers
    # (tests/actors/test_replica_manager_actor_txn_markers.py: the front hands it on to the group coordinator)
    assert emitted(effects, names.REPLICA_MANAGER) == written
    (response,) = emitted(effects, "coordinator")
    assert response == WriteTxnMarkersResponse((
        TxnMarkerPartitionResult(7, TP1, Errors.UNKNOWN_TOPIC_OR_PARTITION),  # no log here (getMagic)
        TxnMarkerPartitionResult(7, TP0, Errors.NONE), TxnMarkerPartitionResult(7, OFFSETS0, Errors.NONE)))
    assert effects.index(written[0]) < len(effects) - 1  # told before the answer goes
    log = rm.online_partition(TP0).log
    (marker_batch,) = [b for b in iter_batches(log.read(2, 1 << 20)) if b.is_control]
    assert (marker_batch.base_offset, marker_batch.producer_id, marker_batch.is_transactional) == (2, 7, True)


def test_markers_are_fenced_per_partition_and_a_follower_is_not_leader(tmp_path):
    rm = leader(tmp_path, replicas=(0,))
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP1, 1, 0, (1, 0), (1, 0), is_new=True)]), T0))
    drive(rm.handle_produce(txn_produce(TP0, 7, 0, epoch=2), T0, "producer"))
    first = drive(rm.handle_write_txn_markers(markers((7, False, (TP0,)), coordinator_epoch=3, producer_epoch=2),
                                              T0, "c"))
    assert first == WriteTxnMarkersResponse((TxnMarkerPartitionResult(7, TP0, Errors.NONE),))
    answer = drive(rm.handle_write_txn_markers(
        markers((7, True, (TP0, TP1)), coordinator_epoch=2, producer_epoch=2), T0, "c"))
    assert answer.results == (TxnMarkerPartitionResult(7, TP0, Errors.TRANSACTION_COORDINATOR_FENCED),
                              TxnMarkerPartitionResult(7, TP1, Errors.NOT_LEADER_OR_FOLLOWER))
    old_epoch = drive(rm.handle_write_txn_markers(markers((7, True, (TP0,)), coordinator_epoch=3,
                                                          producer_epoch=1), T0, "c"))
    assert old_epoch.results == (TxnMarkerPartitionResult(7, TP0, Errors.INVALID_PRODUCER_EPOCH),)
    assert rm.online_partition(TP0).log.log_end_offset == 3  # only the first marker was appended


def test_the_marker_purgatory_times_out_with_request_timed_out(tmp_path):
    rm = leader(tmp_path)
    effects: list = []
    drive(rm.handle_write_txn_markers(markers((7, False, (TP0,))), T0, "c"), None, effects)
    assert rm.next_task_due_ms() <= T0 + 30000
    drive(rm.expire_delayed_operations(T0 + 30000), None, effects)
    (response,) = emitted(effects, "c")
    assert response.results == (TxnMarkerPartitionResult(7, TP0, Errors.REQUEST_TIMED_OUT),)


def test_read_committed_fetch_reads_to_the_lso_and_lists_the_aborted_transactions(tmp_path):
    """Producer 7 aborts (records 0-1, marker 4), producer 8 is open from 2 (records 2-3): a READ_COMMITTED consumer
    reads below 2 and then, once 8 commits, everything with 7's aborted transaction; READ_UNCOMMITTED reads to the
    high watermark with null aborted transactions."""
    rm = leader(tmp_path, replicas=(0,))
    drive(rm.handle_produce(txn_produce(TP0, 7, 0), T0, "p"))
    drive(rm.handle_produce(txn_produce(TP0, 8, 0), T0, "p"))
    drive(rm.handle_write_txn_markers(markers((7, False, (TP0,))), T0, "c"))
    (data,) = consumer_fetch(rm, 0).partitions
    assert (data.high_watermark, data.last_stable_offset) == (5, 2)
    assert [b.base_offset for b in iter_batches(data.records)] == [0]
    assert data.aborted_transactions == (AbortedTransaction(7, 0),)
    (uncommitted,) = consumer_fetch(rm, 0, isolation_level=0).partitions
    assert offsets_of(FetchResponse((uncommitted,))) == [0, 1, 2, 3, 4] and uncommitted.aborted_transactions is None
    (nothing,) = consumer_fetch(rm, 2).partitions
    assert (nothing.records, nothing.aborted_transactions) == (b"", ())
    drive(rm.handle_write_txn_markers(markers((8, True, (TP0,))), T0, "c"))
    (data,) = consumer_fetch(rm, 2).partitions
    assert data.last_stable_offset == 6 and offsets_of(FetchResponse((data,))) == [2, 3, 4, 5]
    assert data.aborted_transactions == (AbortedTransaction(7, 0),)  # its marker at 4 is in the range read
    # ListOffsets latest: the LSO at READ_COMMITTED, the high watermark at READ_UNCOMMITTED
    drive(rm.handle_produce(txn_produce(TP0, 9, 0), T0, "p"))
    latest = {level: drive(rm.handle_list_offsets(ListOffsetsRequest(-1, level, (ListOffsetsPartition(TP0, -1),)),
                                                  T0)).partitions[0].offset for level in (0, 1)}
    assert latest == {0: 8, 1: 6}


def test_a_parked_read_committed_fetch_completes_when_the_marker_moves_the_lso(tmp_path):
    rm = leader(tmp_path)  # a follower: the HW moves with its fetches
    effects: list = []
    drive(rm.handle_produce(txn_produce(TP0, 7, 0), T0, "p"), broker_zk(), effects)
    follower_fetch(rm, 2, effects=effects)
    assert consumer_fetch(rm, 0, max_wait_ms=500, min_bytes=1, effects=effects) is None  # LSO 0: nothing yet
    drive(rm.handle_write_txn_markers(markers((7, True, (TP0,))), T0, "c"), None, effects)
    assert emitted(effects, "consumer") == []  # the marker is not replicated: still unstable
    follower_fetch(rm, 3, effects=effects)
    (response,) = emitted(effects, "consumer")
    # the records and the marker (a consumer skips control batches itself)
    assert offsets_of(response) == [0, 1, 2] and response.partitions[0].last_stable_offset == 3


def test_a_follower_fetching_the_leaders_markers_keeps_the_same_lso(tmp_path):
    rm = leader(tmp_path)
    drive(rm.handle_produce(txn_produce(TP0, 7, 0), T0, "p"), broker_zk(), [])
    drive(rm.handle_write_txn_markers(markers((7, False, (TP0,))), T0, "c"), None, [])
    drive(rm.handle_produce(txn_produce(TP0, 8, 0), T0, "p"), broker_zk(), [])
    (data,) = follower_fetch(rm, 0).partitions
    assert data.aborted_transactions is None  # a replica reads to the log end, nothing filtered
    follower = make_rm(tmp_path, broker_id=1)
    drive(follower.handle_leader_and_isr(lai_request([lai_state(TP0, 0, 0, (0, 1), (0, 1), is_new=True)]), T0))
    follower.online_partition(TP0).append_records_to_follower(0, data.records, 5, 0, T0)
    log = follower.online_partition(TP0).log
    assert (log.log_end_offset, log.high_watermark, log.last_stable_offset) == (5, 5, 3)
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in log.collect_aborted_transactions(0, 5)] == [
        (7, 0, 2)]


def test_a_transactional_produce_without_a_transactional_id_is_refused_as_kafka_2_6(tmp_path):
    """KafkaApis.handleProduceRequest: hasTransactionalRecords with a null transactional id fails authorisation
    (TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition); with one, acks=1 is accepted too."""
    from core.api.produce import request_from_wire
    from core.api.registry import RequestContext

    records = txn_produce(TP0, 7, 0).partitions[0].records
    body = {"transactional_id": None, "acks": -1, "timeout_ms": 1000,
            "topic_data": [{"name": "foo", "partition_data": [{"index": 0, "records": records},
                                                               {"index": 1, "records": b""}]}]}
    request = request_from_wire(8, body, RequestContext(8))
    assert [p.error for p in request.partitions] == [Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED] * 2
    assert request_from_wire(8, dict(body, transactional_id="tx"), RequestContext(8)).partitions[0].error == \
        Errors.NONE
    rm = leader(tmp_path, replicas=(0,))
    answer = drive(rm.handle_produce(ProduceRequest(1, 1000, (ProducePartition(TP0, records),), "tx"), T0, "p"))
    assert answer.partitions[0].error == Errors.NONE and rm.online_partition(TP0).log.first_unstable_offset == 0


def test_an_incremental_read_committed_session_skips_the_partition_until_its_lso_moves(tmp_path):
    """KIP-227 sessions: a partition at the end of what READ_COMMITTED may read is idle (not read, not answered)
    until a marker moves its last stable offset; then the session answers it with the records up to the LSO."""
    rm = leader(tmp_path, replicas=(0,))
    drive(rm.handle_produce(txn_produce(TP0, 7, 0), T0, "p"))
    full = consumer_fetch_session(rm, (FetchPartition(TP0, 0, -1, -1, 1 << 20),), 0, 0)
    assert full.session_id != 0 and full.partitions[0].last_stable_offset == 0 and full.partitions[0].records == b""
    assert consumer_fetch_session(rm, (), full.session_id, 1).partitions == ()
    drive(rm.handle_write_txn_markers(markers((7, True, (TP0,))), T0, "c"))
    moved = consumer_fetch_session(rm, (), full.session_id, 2)
    assert [d.last_stable_offset for d in moved.partitions] == [3] and offsets_of(moved) == [0, 1, 2]


def consumer_fetch_session(rm, partitions, session_id, epoch):
    request = FetchRequest(-1, partitions, max_wait_ms=0, isolation_level=1, session_id=session_id,
                           session_epoch=epoch)
    return drive(rm.handle_fetch(request, T0, "consumer"))


def test_a_coordinators_transactional_appends_are_epoch_checked_but_not_sequence_checked(tmp_path):
    """GroupMetadataManager's transactional offset commits append with AppendOrigin.Coordinator (every batch at
    sequence 0): a client's second batch at sequence 0 is OUT_OF_ORDER_SEQUENCE_NUMBER, a coordinator's is
    appended; an older producer epoch is refused from both."""
    rm = leader(tmp_path, replicas=(0,))
    for request in (txn_produce(TP0, 7, 0), txn_produce(TP0, 7, 0, n=3)):  # (n=3: not a duplicate of the first)
        client = drive(rm.handle_produce(attrs.evolve(request, acks=1), T0, "p"))
        coordinator = drive(rm.handle_produce(attrs.evolve(request, acks=1, coordinator=True), T0, "p"))
        assert coordinator.partitions[0].error == Errors.NONE
    assert client.partitions[0].error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
    drive(rm.handle_write_txn_markers(markers((7, True, (TP0,)), producer_epoch=1), T0, "c"))
    fenced = drive(rm.handle_produce(attrs.evolve(txn_produce(TP0, 7, 0), acks=1, coordinator=True), T0, "p"))
    assert fenced.partitions[0].error == Errors.INVALID_PRODUCER_EPOCH
