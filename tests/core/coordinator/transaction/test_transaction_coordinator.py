"""TransactionCoordinator (Kafka 2.6.3) driven through its procedures: every answer, the records it writes to
__transaction_state, the markers it sends, and the epochs, under a frozen clock."""

from __future__ import annotations

import json
import time

import pytest
from freezegun import freeze_time

from core.coordinator.group.group_metadata_manager import partition_for
from core.coordinator.transaction.transaction_coordinator import ABORT_TIMED_OUT, REMOVE_EXPIRED
from core.coordinator.transaction.transaction_metadata import TransactionMetadata, TransactionState
from core.coordinator.transaction.transaction_state_manager import TxnMetadataCacheEntry
from core.coordinator.transaction.txn_marker_channel_manager import RETRY_KEY
from messages.common import Errors, TopicPartition
from messages.transaction import (
    AddPartitionsToTxnRequest,
    InitProducerIdResponse,
    TransactionCoordinatorConfig,
)
from messages.txn_markers import TxnMarkerEntry
from tests.core.coordinator.transaction.harness import PARTITIONS, T0, T1, TXN, Harness

S = TransactionState
START = "2026-01-01 00:00:00"


@pytest.fixture
def frozen():
    with freeze_time(START) as f:
        yield f


@pytest.fixture
def h(frozen) -> Harness:
    h = Harness()
    h.elect()
    return h


def _state(h: Harness, txn_id: str = TXN) -> tuple:
    m = h.metadata(txn_id)
    return m.state, m.producer_id, m.producer_epoch, frozenset(m.topic_partitions)


def test_init_producer_id_creates_the_id_at_epoch_0_and_writes_it_before_answering(h):
    assert h.init() == InitProducerIdResponse(Errors.NONE, 0, 0)
    # the first id of the coordinator's own block, claimed in ZooKeeper
    assert json.loads(h.zk.get("/latest_producer_id_block")) == {"version": 1, "broker": 1, "block_start": "0",
                                                                 "block_end": "999"}
    ((txn_id, value),) = h.records()
    assert txn_id == TXN
    assert (value.producer_id, value.producer_epoch, value.txn_timeout_ms, value.state_byte,
            value.topic_partitions, value.txn_start_timestamp) == (0, 0, 10000, S.EMPTY.byte, frozenset(), -1)
    assert h.appends[0].timeout_ms == 30000  # request.timeout.ms
    # a second producer with the same id: the same producer id, the epoch bumped
    assert h.init() == InitProducerIdResponse(Errors.NONE, 0, 1)
    assert _state(h) == (S.EMPTY, 0, 1, frozenset())


def test_init_producer_id_errors(h):
    assert h.init("") == InitProducerIdResponse(Errors.INVALID_REQUEST)
    assert h.init(timeout_ms=0).error is Errors.INVALID_TRANSACTION_TIMEOUT
    assert h.init(timeout_ms=60001).error is Errors.INVALID_TRANSACTION_TIMEOUT  # transaction.max.timeout.ms
    assert h.init(pid=3).error is Errors.INVALID_REQUEST  # an id without an epoch
    assert h.records() == []
    # an idempotent producer: a new id every time, epoch 0, nothing written
    assert h.init(None) == InitProducerIdResponse(Errors.NONE, 0, 0)
    assert h.init(None) == InitProducerIdResponse(Errors.NONE, 1, 0)
    assert h.records() == []


def test_not_coordinator_and_load_in_progress(frozen):
    h = Harness()
    assert h.init().error is Errors.NOT_COORDINATOR  # the partition was never loaded here
    h.hold = True
    h.elect()
    assert h.init().error is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert h.add_error(0, 0) is Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert h.end(0, 0) is Errors.COORDINATOR_LOAD_IN_PROGRESS
    h.release()
    assert h.init().error is Errors.NONE
    h.resign()
    assert h.init().error is Errors.NOT_COORDINATOR
    assert h.add_error(0, 0) is Errors.NOT_COORDINATOR


def test_add_partitions_then_commit_writes_prepare_then_markers_then_complete(h, frozen):
    h.init()
    frozen.tick(1)
    assert h.add_error(0, 0, T0) is Errors.NONE
    assert _state(h) == (S.ONGOING, 0, 0, frozenset({T0}))
    start = h.metadata().txn_start_timestamp
    frozen.tick(1)
    assert h.add_error(0, 0, T0, T1) is Errors.NONE
    assert h.metadata().txn_start_timestamp == start  # the transaction started with its first partition
    n = len(h.records())
    assert h.add_error(0, 0, T1) is Errors.NONE
    assert len(h.records()) == n  # nothing new: nothing written
    assert h.end(0, 0, commit=True) is Errors.NONE
    value = h.records()[-1][1]
    assert (value.state_byte, value.topic_partitions) == (S.PREPARE_COMMIT.byte, frozenset({T0, T1}))
    # one WriteTxnMarkers per leader: t-0 on broker 1, t-1 on broker 2, at coordinator epoch 5
    assert sorted((s.broker.id, s.markers) for s in h.sent) == [
        (1, (TxnMarkerEntry(0, 0, True, 5, (T0,)),)), (2, (TxnMarkerEntry(0, 0, True, 5, (T1,)),))]
    assert _state(h)[0] is S.PREPARE_COMMIT
    h.answer_markers()
    value = h.records()[-1][1]
    assert (value.state_byte, value.topic_partitions, value.producer_epoch) == (S.COMPLETE_COMMIT.byte,
                                                                               frozenset(), 0)
    assert _state(h) == (S.COMPLETE_COMMIT, 0, 0, frozenset())
    # EndTxn retried after the commit completed: NONE; the other outcome: INVALID_TXN_STATE
    assert h.end(0, 0, commit=True) is Errors.NONE
    assert h.end(0, 0, commit=False) is Errors.INVALID_TXN_STATE
    # the next transaction starts from CompleteCommit
    assert h.add_error(0, 0, T1) is Errors.NONE
    assert _state(h) == (S.ONGOING, 0, 0, frozenset({T1}))


def test_errors_of_add_partitions_and_end_txn(h):
    h.init()
    assert h.add_error(7, 0) is Errors.INVALID_PRODUCER_ID_MAPPING
    assert h.add_error(0, 1) is Errors.INVALID_PRODUCER_EPOCH
    assert {e for _, e in h.add(0, 0, T0, txn_id="").errors} == {Errors.INVALID_REQUEST}
    assert h.end(0, 0) is Errors.INVALID_TXN_STATE  # Empty: no transaction to end
    assert h.end(7, 0) is Errors.INVALID_PRODUCER_ID_MAPPING
    # a topic that does not exist: UNKNOWN_TOPIC_OR_PARTITION, the others OPERATION_NOT_ATTEMPTED, nothing added
    gone = TopicPartition("gone", 0)
    assert h.add(0, 0, T0, gone).errors == ((T0, Errors.OPERATION_NOT_ATTEMPTED),
                                            (gone, Errors.UNKNOWN_TOPIC_OR_PARTITION))
    assert h.add(0, 0, TopicPartition("t", 9)).errors == ((TopicPartition("t", 9),
                                                           Errors.UNKNOWN_TOPIC_OR_PARTITION),)
    assert _state(h)[0] is S.EMPTY


def test_unknown_transactional_id_is_invalid_producer_id_mapping(h):
    other = next(f"x{i}" for i in range(100) if partition_for(f"x{i}", PARTITIONS) == h.partition)
    assert {e for _, e in h.add(0, 0, T0, txn_id=other).errors} == {Errors.INVALID_PRODUCER_ID_MAPPING}


def test_add_offsets_adds_the_groups_consumer_offsets_partition(h):
    h.init()
    assert h.add_offsets(0, 0, "g") is Errors.NONE
    assert _state(h)[3] == frozenset({TopicPartition("__consumer_offsets", partition_for("g", 5))})
    assert h.add_offsets(0, 3, "g") is Errors.INVALID_PRODUCER_EPOCH


def test_concurrent_transactions_while_the_markers_are_written(h):
    h.init()
    h.add(0, 0, T0)
    assert h.end(0, 0) is Errors.NONE  # PrepareCommit, markers not yet answered
    assert h.add_error(0, 0, T1) is Errors.CONCURRENT_TRANSACTIONS
    assert h.end(0, 0, commit=True) is Errors.CONCURRENT_TRANSACTIONS
    # CompleteCommit is pending while the markers are written: whatever comes is CONCURRENT_TRANSACTIONS
    assert h.end(0, 0, commit=False) is Errors.CONCURRENT_TRANSACTIONS
    assert h.init().error is Errors.CONCURRENT_TRANSACTIONS
    h.answer_markers()
    assert h.init() == InitProducerIdResponse(Errors.NONE, 0, 1)


def test_a_pending_write_makes_other_requests_concurrent_transactions(h):
    h.init()
    h.hold = True  # the add waits for its append
    pending = h.request(AddPartitionsToTxnRequest(TXN, 0, 0, (T0,)))
    assert h.responses.get(pending) is None
    assert h.init().error is Errors.CONCURRENT_TRANSACTIONS
    assert h.end(0, 0) is Errors.CONCURRENT_TRANSACTIONS
    h.release()
    assert {e for _, e in h.responses[pending].errors} == {Errors.NONE}


def test_a_second_producer_fences_the_zombie_by_aborting_its_transaction(h):
    """InitProducerId while a transaction is Ongoing: the coordinator bumps the epoch and aborts it (PrepareAbort
    at the new epoch, markers with it), answering CONCURRENT_TRANSACTIONS; the retry bumps again. The zombie's
    requests with its old epoch get INVALID_PRODUCER_EPOCH (2.6: no PRODUCER_FENCED)."""
    h.init()
    h.add(0, 0, T0, T1)
    assert h.init().error is Errors.CONCURRENT_TRANSACTIONS
    value = h.records()[-1][1]
    assert (value.state_byte, value.producer_epoch, value.topic_partitions) == (S.PREPARE_ABORT.byte, 1,
                                                                              frozenset({T0, T1}))
    assert {m for s in h.sent for m in s.markers} == {TxnMarkerEntry(0, 1, False, 5, (T0,)),
                                                      TxnMarkerEntry(0, 1, False, 5, (T1,))}
    assert h.add_error(0, 0, T0) is Errors.INVALID_PRODUCER_EPOCH
    assert h.end(0, 0) is Errors.INVALID_PRODUCER_EPOCH
    assert h.init().error is Errors.CONCURRENT_TRANSACTIONS  # still aborting
    h.answer_markers()
    assert _state(h) == (S.COMPLETE_ABORT, 0, 1, frozenset())
    assert h.init() == InitProducerIdResponse(Errors.NONE, 0, 2)
    assert h.end(0, 1) is Errors.INVALID_PRODUCER_EPOCH
    assert h.add_error(0, 1) is Errors.INVALID_PRODUCER_EPOCH
    assert h.add_error(0, 2) is Errors.NONE


def test_kip_360_epoch_bump_with_the_producers_current_id_and_epoch(h):
    h.init()
    h.init()  # epoch 1
    # the producer's own bump: current epoch 1 → 2, the last epoch remembered
    assert h.init(pid=0, epoch=1) == InitProducerIdResponse(Errors.NONE, 0, 2)
    assert (h.metadata().last_producer_epoch, h.metadata().last_producer_id) == (1, 0)
    # its retry (the answer was lost): the same epoch again, not bumped
    assert h.init(pid=0, epoch=1) == InitProducerIdResponse(Errors.NONE, 0, 2)
    # an epoch that is neither: fenced
    assert h.init(pid=0, epoch=0).error is Errors.INVALID_PRODUCER_EPOCH
    # another producer id: fenced
    assert h.init(pid=9, epoch=0).error is Errors.INVALID_PRODUCER_EPOCH


def test_an_exhausted_epoch_rotates_the_producer_id(h):
    h.init()
    m = h.metadata()
    m.producer_epoch = 32766  # Short.MaxValue - 1: exhausted
    assert h.init(pid=0, epoch=32766) == InitProducerIdResponse(Errors.NONE, 1, 0)
    m = h.metadata()
    assert (m.producer_id, m.last_producer_id, m.last_producer_epoch) == (1, 0, 32766)
    # a retry of that rotation with the old id and its exhausted epoch (the last producer id and epoch): the
    # rotated id at its epoch again, not bumped
    assert h.init(pid=0, epoch=32766) == InitProducerIdResponse(Errors.NONE, 1, 0)


def test_a_timed_out_transaction_is_aborted_with_an_epoch_bump(h, frozen):
    h.init(timeout_ms=10000)
    h.add(0, 0, T0)
    h.advance(frozen, 10000)  # the check at 10 s: started 10 s ago, not more than its timeout
    assert _state(h)[0] is S.ONGOING
    h.advance(frozen, 10000)
    value = h.records()[-1][1]
    assert (value.state_byte, value.producer_epoch) == (S.PREPARE_ABORT.byte, 1)
    assert [s.markers for s in h.sent] == [(TxnMarkerEntry(0, 1, False, 5, (T0,)),)]
    h.answer_markers()
    assert _state(h) == (S.COMPLETE_ABORT, 0, 1, frozenset())
    # the producer that let it time out is fenced
    assert h.end(0, 0) is Errors.INVALID_PRODUCER_EPOCH
    assert h.add_error(0, 0) is Errors.INVALID_PRODUCER_EPOCH
    assert h.timers.keys() >= {ABORT_TIMED_OUT, REMOVE_EXPIRED}


def test_a_failed_timeout_fence_does_not_burn_an_epoch_at_each_retry(h, frozen):
    """TransactionMetadata.hasFailedEpochFence (2.6.3 L200, L231; TransactionCoordinator L515): while
    __transaction_state refuses writes, each abort attempt of the timed-out transaction reuses the epoch its first
    fence bumped; once a write succeeds the abort goes through at that epoch, and prepareComplete forgets the failure
    (a later fence bumps again)."""
    h.init(timeout_ms=10000)
    h.add(0, 0, T0)
    h.advance(frozen, 10000)
    h.append_error = Errors.NOT_ENOUGH_REPLICAS  # the min ISR of __transaction_state is not met
    epochs = []
    for _ in range(5):
        h.advance(frozen, 10000)  # transaction.abort.timed.out.transaction.cleanup.interval.ms
        epochs.append((h.metadata().state, h.metadata().producer_epoch, h.metadata().pending_state))
    assert epochs == [(S.ONGOING, 1, None)] * 5
    assert h.metadata().has_failed_epoch_fence
    assert len(h.appends) == 2 + 5  # each attempt tried to write PrepareAbort
    h.append_error = Errors.NONE
    h.advance(frozen, 10000)
    value = h.records()[-1][1]
    assert (value.state_byte, value.producer_epoch) == (S.PREPARE_ABORT.byte, 1)
    h.answer_markers()
    assert _state(h) == (S.COMPLETE_ABORT, 0, 1, frozenset())
    assert not h.metadata().has_failed_epoch_fence
    # the next timed-out transaction is fenced with a new bump
    h.add(0, 1, T0)
    h.advance(frozen, 20000)
    assert h.records()[-1][1].producer_epoch == 2


def test_a_failed_fence_of_init_producer_id_is_not_bumped_again_by_the_retry(h, frozen):
    """The fence InitProducerId starts on an Ongoing transaction goes through the same endTransaction: a failed
    PrepareAbort leaves the bumped epoch in memory, marked, and the client's retry fences with that epoch."""
    h.init(timeout_ms=60000)
    h.add(0, 0, T0)
    h.append_error = Errors.NOT_ENOUGH_REPLICAS
    assert h.init(timeout_ms=60000) == InitProducerIdResponse(Errors.COORDINATOR_NOT_AVAILABLE)
    assert (h.metadata().producer_epoch, h.metadata().has_failed_epoch_fence) == (1, True)
    assert h.init(timeout_ms=60000) == InitProducerIdResponse(Errors.COORDINATOR_NOT_AVAILABLE)
    assert h.metadata().producer_epoch == 1
    h.append_error = Errors.NONE
    assert h.init(timeout_ms=60000) == InitProducerIdResponse(Errors.CONCURRENT_TRANSACTIONS)
    assert h.records()[-1][1].producer_epoch == 1


def test_an_unused_transactional_id_expires(frozen):
    h = Harness(TransactionCoordinatorConfig(transaction_log_num_partitions=PARTITIONS,
                                             transactional_id_expiration_ms=60000,
                                             remove_expired_transactional_ids_interval_ms=30000))
    h.elect()
    h.init(timeout_ms=60000)
    h.add(0, 0, T0)
    h.advance(frozen, 50000)  # expiration checks at 30 s: an Ongoing transaction does not expire
    assert h.metadata().state is S.ONGOING
    assert h.end(0, 0) is Errors.NONE
    h.answer_markers()  # CompleteCommit at 50 s
    h.advance(frozen, 59000)  # the check at 90 s: unused for 40 s
    assert h.metadata().state is S.COMPLETE_COMMIT
    h.advance(frozen, 11000)  # the check at 120 s: unused for 70 s
    assert h.metadata() is None
    assert h.records()[-1] == (TXN, None)  # its tombstone
    # the id comes back as a new one: a new producer id
    assert h.init() == InitProducerIdResponse(Errors.NONE, 1, 0)


def _expired_ids(h: Harness, n: int, width: int = 40) -> list[str]:
    """``n`` ids of ``width`` characters in partition 0, CompleteCommit an hour ago."""
    old = int(time.time() * 1000) - 3_600_000
    ids = [f"sink-%0{width - 5}d" % i for i in range(n)]
    h.tc.state_manager.transaction_metadata_cache[0] = TxnMetadataCacheEntry(5, {
        t: TransactionMetadata(t, i, -1, 0, -1, 10000, S.COMPLETE_COMMIT, set(), old, old) for i, t in enumerate(ids)})
    return ids


@pytest.mark.parametrize(("max_bytes", "n", "batches"), [(1000, 60, 4), (1048588, 20000, 2)])
def test_expired_ids_tombstones_are_split_at_max_message_bytes(frozen, max_bytes, n, batches):
    """removeExpiredTransactionalIds / maybeAppendExpiration / flushRecordsBuilder (2.6.3): the tombstones of one
    partition go in batches no bigger than max.message.bytes (20,000 ids of 40 characters made one 1,051,805-byte
    batch, which Log.append refuses), each written, and every id leaves the cache."""
    h = Harness(TransactionCoordinatorConfig(transaction_log_num_partitions=1, transactional_id_expiration_ms=60000,
                                             message_max_bytes=max_bytes))
    h.elect(partition=0)
    ids = _expired_ids(h, n)
    h.run(h.tc.state_manager.remove_expired_transactional_ids())
    sizes = [len(a.records) for a in h.appends]
    assert len(sizes) == batches and max(sizes) <= max_bytes
    assert [t for t, value in h.records(0)] == ids and all(value is None for _, value in h.records(0))
    assert h.tc.state_manager.transaction_metadata_cache[0].metadata_per_transactional_id == {}


def test_expired_ids_go_back_to_their_state_when_their_batch_is_refused(frozen):
    h = Harness(TransactionCoordinatorConfig(transaction_log_num_partitions=1, transactional_id_expiration_ms=60000,
                                             message_max_bytes=1000))
    h.elect(partition=0)
    ids = _expired_ids(h, 30)
    h.append_error = Errors.NOT_ENOUGH_REPLICAS
    h.run(h.tc.state_manager.remove_expired_transactional_ids())
    cached = h.tc.state_manager.transaction_metadata_cache[0].metadata_per_transactional_id
    assert len(h.appends) == 2 and sorted(cached) == ids
    assert {(m.state, m.pending_state) for m in cached.values()} == {(S.COMPLETE_COMMIT, None)}


def test_a_new_coordinator_loads_the_ids_and_completes_a_prepared_commit(frozen):
    h = Harness()
    h.elect(epoch=5)
    h.init()
    h.add(0, 0, T0)
    h.end(0, 0)  # PrepareCommit written; its coordinator dies before the markers are answered
    other = Harness(log=h.log, zk=h.zk)
    other.elect(epoch=6)
    assert _state(other) == (S.PREPARE_COMMIT, 0, 0, frozenset({T0}))
    assert other.metadata().last_producer_epoch == -1  # not in the record (value version 0)
    assert [s.markers for s in other.sent] == [(TxnMarkerEntry(0, 0, True, 6, (T0,)),)]
    other.answer_markers()
    assert _state(other) == (S.COMPLETE_COMMIT, 0, 0, frozenset())
    # the old coordinator's answers, at epoch 5, after it lost the partition: ignored
    h.resign(epoch=5)
    h.answer_markers()
    assert h.metadata() is Errors.NOT_COORDINATOR


def test_a_write_answered_after_the_partition_moved_is_not_installed(h):
    h.init()
    h.hold = True
    pending = h.request(AddPartitionsToTxnRequest(TXN, 0, 0, (T0,)))
    h.resign()
    h.release()
    assert {e for _, e in h.responses[pending].errors} == {Errors.NOT_COORDINATOR}


def test_a_failed_write_clears_the_pending_state(h):
    h.init()
    h.append_error = Errors.NOT_ENOUGH_REPLICAS
    assert h.add_error(0, 0) is Errors.COORDINATOR_NOT_AVAILABLE
    h.append_error = Errors.NOT_LEADER_OR_FOLLOWER
    assert h.add_error(0, 0) is Errors.NOT_COORDINATOR
    h.append_error = Errors.MESSAGE_TOO_LARGE
    assert h.add_error(0, 0) is Errors.UNKNOWN_SERVER_ERROR
    h.append_error = Errors.NONE
    assert h.add_error(0, 0) is Errors.NONE
    assert _state(h)[0] is S.ONGOING


def test_markers_answered_not_leader_are_sent_again(h, frozen):
    h.init()
    h.add(0, 0, T0, T1)
    h.end(0, 0)
    h.answer_markers(Errors.NOT_LEADER_OR_FOLLOWER, only={T1})
    assert _state(h)[0] is S.PREPARE_COMMIT
    assert h.sent == [] and RETRY_KEY in h.timers
    h.zk.put_partition_state(T1, 1, (1,))  # t-1's new leader: broker 1
    h.advance(frozen, 100)
    assert [(s.broker.id, s.markers) for s in h.sent] == [(1, (TxnMarkerEntry(0, 0, True, 5, (T1,)),))]
    h.answer_markers()
    assert _state(h)[0] is S.COMPLETE_COMMIT


def test_a_failed_completion_write_is_retried(h, frozen):
    h.init()
    h.add(0, 0, T0)
    h.end(0, 0)
    h.append_error = Errors.NOT_ENOUGH_REPLICAS
    h.answer_markers()
    assert _state(h)[0] is S.PREPARE_COMMIT
    h.append_error = Errors.NONE
    h.advance(frozen, 100)
    assert _state(h)[0] is S.COMPLETE_COMMIT


def test_a_marker_for_a_deleted_topic_is_skipped(h):
    h.init()
    h.add(0, 0, T0)
    h.end(0, 0)
    h.sent.clear()
    h.zk.delete("/brokers/topics/t")
    h.run(h.tc.on_markers_disconnect((TxnMarkerEntry(0, 0, True, 5, (T0,)),)))
    h.run(h.tc.on_timer(RETRY_KEY))
    assert h.sent == []
    assert _state(h)[0] is S.COMPLETE_COMMIT


def test_a_load_keeps_the_last_record_of_each_id_and_honours_tombstones(frozen):
    h = Harness(TransactionCoordinatorConfig(transaction_log_num_partitions=PARTITIONS,
                                             transactional_id_expiration_ms=1000,
                                             remove_expired_transactional_ids_interval_ms=5000))
    h.elect()
    other_id = next(f"x{i}" for i in range(100) if partition_for(f"x{i}", PARTITIONS) == h.partition)
    h.init(other_id)
    h.advance(frozen, 5000)  # other_id expires: its tombstone
    h.init()
    h.init()
    h.add(0 + 1, 1, T0)  # TXN got producer id 1 (0 went to other_id)
    assert h.records()[1] == (other_id, None)
    loaded = Harness(log=h.log, zk=h.zk)
    loaded.elect(epoch=9)
    assert loaded.metadata(other_id) is None
    m = loaded.metadata()
    assert (m.state, m.producer_id, m.producer_epoch, m.topic_partitions) == (S.ONGOING, 1, 1, {T0})
    assert loaded.tc.state_manager.transaction_metadata_cache[h.partition].coordinator_epoch == 9
    assert loaded.sent == []  # nothing was being completed
