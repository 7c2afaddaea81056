"""TransactionCoordinator (kafka.coordinator.transaction, Kafka 2.6.3): KIP-98's transactions with KIP-360's epoch
bumps, as procedures (core.effects) that answer each request with `Respond(reply_to, response)`.

InitProducerId (with or without a transactional id), AddPartitionsToTxn, AddOffsetsToTxn and EndTxn write the new
state of the transactional id to ``__transaction_state`` (acks=-1) before answering; EndTxn then has the markers
written to the transaction's partitions (`TxnMarkerChannelManager`) and, once all are, writes CompleteCommit /
CompleteAbort. The two periodic tasks are named timers: the abort of transactions open longer than their timeout
(``transaction.abort.timed.out.transaction.cleanup.interval.ms``) and the expiration of transactional ids unused for
``transactional.id.expiration.ms``. The clock is injected (``now_ms``).

2.6 answers a fenced producer INVALID_PRODUCER_EPOCH (PRODUCER_FENCED is 2.7's, KIP-588).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import attrs

from core.coordinator.group.group_metadata_manager import partition_for
from core.coordinator.transaction.producer_id_generator import ProducerIdGenerator
from core.coordinator.transaction.transaction_metadata import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
    is_epoch_exhausted,
)
from core.coordinator.transaction.transaction_state_manager import (
    CoordinatorEpochAndTxnMetadata,
    TransactionStateManager,
)
from core.coordinator.transaction.txn_marker_channel_manager import (
    RETRY_KEY,
    PendingCompleteTxn,
    TxnMarkerChannelManager,
)
from core.effects import Proc, ReplyHandle, Respond, Schedule
from core.zk_client import KafkaZkClient
from messages.common import Errors, TopicPartition
from messages.topic import GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME
from messages.transaction import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    TransactionCoordinatorConfig,
)
from messages.zk import OK
from protocol.zk import paths, znodes
from protocol.zk.znodes import ZnodeDecodeError

log = logging.getLogger("kactor.coordinator")

ABORT_TIMED_OUT = "txn-abort-timed-out"  # transaction-abort
REMOVE_EXPIRED = "txn-remove-expired"  # transactionalId-expiration
COMPLETION_RETRY = "txn-completion-retry"  # the sender thread's retry of a failed completion write
COMPLETION_RETRY_BACKOFF_MS = 100
S = TransactionState


@attrs.frozen
class _Fail:
    error: Errors


class TransactionCoordinator:
    """One broker's transaction coordinator: the transactional ids of the __transaction_state partitions it leads."""

    def __init__(self, broker_id: int, config: TransactionCoordinatorConfig, now_ms: Callable[[], float],
                 offsets_topic_num_partitions: int = 50) -> None:
        self.broker_id = broker_id
        self.config = config
        self.now_ms = now_ms
        self.offsets_topic_num_partitions = offsets_topic_num_partitions
        self.state_manager = TransactionStateManager(broker_id, config, now_ms)
        self.producer_ids = ProducerIdGenerator(broker_id)
        self.markers = TxnMarkerChannelManager(self._owns, self._write_txn_completion)
        self.is_active = False
        self.zk = KafkaZkClient()
        self._completions_to_retry: list[PendingCompleteTxn] = []

    def _now(self) -> int:
        return int(self.now_ms())

    # == lifecycle ===================================================================================================
    def startup(self) -> Proc[None]:
        """TransactionCoordinator.startup: the partition counts of existing __transaction_state and
        __consumer_offsets win over the config's, and the two periodic tasks are scheduled."""
        for topic in (TRANSACTION_STATE_TOPIC_NAME, GROUP_METADATA_TOPIC_NAME):
            (r,) = yield from self.zk.get_data_raw([paths.TopicZNode.path(topic)])
            if r.code != OK:
                continue
            try:
                count = len(znodes.decode_topic_assignment(topic, r.data))
            except ZnodeDecodeError as e:
                log.error("Ignoring the assignment of %s: %s", topic, e)
                continue
            if count and topic == TRANSACTION_STATE_TOPIC_NAME:
                self.state_manager.num_partitions = count
            elif count:
                self.offsets_topic_num_partitions = count
        self.is_active = True
        yield Schedule(ABORT_TIMED_OUT, self.config.abort_timed_out_transactions_interval_ms)
        yield Schedule(REMOVE_EXPIRED, self.config.remove_expired_transactional_ids_interval_ms)

    def on_election(self, partition: int, coordinator_epoch: int) -> Proc[None]:
        """TransactionCoordinator.onElection: load the partition's transactional ids; the transactions found
        between their PrepareCommit / PrepareAbort and its completion have their markers sent again."""
        log.info("Elected as the txn coordinator for partition %d at epoch %d", partition, coordinator_epoch)
        entry = yield from self.state_manager.load_transactions_for_partition(partition, coordinator_epoch)
        if entry is None:
            return
        for metadata in list(entry.metadata_per_transactional_id.values()):
            if metadata.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT) and metadata.pending_state is None:
                log.info("Sending the transaction markers of %s (producer id %d, epoch %d) found in %s at coordinator "
                         "epoch %d", metadata.transactional_id, metadata.producer_id, metadata.producer_epoch,
                         metadata.state.kafka_name, coordinator_epoch)
                transit = metadata.prepare_complete(self._now())
                yield from self.markers.add_txn_markers_to_send(coordinator_epoch, metadata, transit)

    def on_resignation(self, partition: int, coordinator_epoch: int) -> Proc[None]:
        """TransactionCoordinator.onResignation: the partition's ids and their pending markers go."""
        log.info("Resigned as the txn coordinator for partition %d at epoch %d", partition, coordinator_epoch)
        entry = self.state_manager.transaction_metadata_cache.get(partition)
        if entry is not None:
            self.markers.remove_markers_for_partition(entry.metadata_per_transactional_id)
        self.state_manager.remove_transactions_for_partition(partition, coordinator_epoch)
        return
        yield

    def on_timer(self, key: str) -> Proc[None]:
        if key == ABORT_TIMED_OUT:
            yield from self.abort_timed_out_transactions()
            yield Schedule(ABORT_TIMED_OUT, self.config.abort_timed_out_transactions_interval_ms)
        elif key == REMOVE_EXPIRED:
            yield from self.state_manager.remove_expired_transactional_ids()
            yield Schedule(REMOVE_EXPIRED, self.config.remove_expired_transactional_ids_interval_ms)
        elif key == RETRY_KEY:
            yield from self.markers.on_retry_timer()
        elif key == COMPLETION_RETRY:
            retry, self._completions_to_retry = self._completions_to_retry, []
            for pending in retry:
                yield from self._write_txn_completion(pending)

    def _owns(self, transactional_id: str, coordinator_epoch: int) -> bool:
        state = self.state_manager.get_transaction_state(transactional_id)
        return isinstance(state, CoordinatorEpochAndTxnMetadata) and state.coordinator_epoch == coordinator_epoch

    def partition_for_group(self, group_id: str) -> int:
        """GroupCoordinator.partitionFor: the __consumer_offsets partition of a group (AddOffsetsToTxn)."""
        return partition_for(group_id, self.offsets_topic_num_partitions)

    # == InitProducerId ==============================================================================================
    def handle_init_producer_id(self, req: InitProducerIdRequest, reply_to: ReplyHandle) -> Proc[None]:
        """KafkaApis.handleInitProducerIdRequest + TransactionCoordinator.handleInitProducerId."""
        yield Respond(reply_to, (yield from self.init_producer_id(req)))

    def init_producer_id(self, req: InitProducerIdRequest) -> Proc[InitProducerIdResponse]:
        if (req.producer_id == NO_PRODUCER_ID) != (req.producer_epoch == NO_PRODUCER_EPOCH):
            return InitProducerIdResponse(Errors.INVALID_REQUEST)  # KafkaApis: an id without an epoch, or the reverse
        txn_id = req.transactional_id
        if txn_id is None:  # an idempotent producer: a new id, blindly
            return InitProducerIdResponse(Errors.NONE, (yield from self.producer_ids.generate_producer_id()), 0)
        if txn_id == "":
            return InitProducerIdResponse(Errors.INVALID_REQUEST)
        if not self.is_active:
            return InitProducerIdResponse(Errors.COORDINATOR_NOT_AVAILABLE)
        if not self.state_manager.validate_transaction_timeout_ms(req.transaction_timeout_ms):
            return InitProducerIdResponse(Errors.INVALID_TRANSACTION_TIMEOUT)
        expected = None if req.producer_id == NO_PRODUCER_ID else (req.producer_id, req.producer_epoch)
        state = self.state_manager.get_transaction_state(txn_id)
        if state is None:
            producer_id = yield from self.producer_ids.generate_producer_id()
            state = self.state_manager.put_transaction_state_if_not_exists(TransactionMetadata(
                txn_id, producer_id, NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_PRODUCER_EPOCH,
                req.transaction_timeout_ms, S.EMPTY, set(), -1, self._now()))
        if isinstance(state, Errors):
            return InitProducerIdResponse(state)
        result = yield from self._prepare_init_producer_id_transit(req.transaction_timeout_ms, state, expected)
        if isinstance(result, _Fail):
            return InitProducerIdResponse(result.error)
        coordinator_epoch, transit = result
        if transit.txn_state is S.PREPARE_EPOCH_FENCE:
            # abort the ongoing transaction first; the client retries (and bumps the epoch again)
            error = yield from self._end_transaction(txn_id, transit.producer_id, transit.producer_epoch,
                                                     committed=False, is_from_client=False)
            return InitProducerIdResponse(Errors.CONCURRENT_TRANSACTIONS if error is Errors.NONE else error)
        error = yield from self.state_manager.append_transaction_to_log(txn_id, coordinator_epoch, transit)
        if error is not Errors.NONE:
            log.info("Returning %s error code to client for %s's InitProducerId request", error.name, txn_id)
            return InitProducerIdResponse(error)
        log.info("Initialized transactionalId %s with producerId %d and producer epoch %d on partition %s-%d",
                 txn_id, transit.producer_id, transit.producer_epoch, TRANSACTION_STATE_TOPIC_NAME,
                 self.state_manager.partition_for(txn_id))
        return InitProducerIdResponse(Errors.NONE, transit.producer_id, transit.producer_epoch)

    def _prepare_init_producer_id_transit(self, txn_timeout_ms: int, state: CoordinatorEpochAndTxnMetadata,
                                          expected: tuple[int, int] | None
                                          ) -> Proc[_Fail | tuple[int, TxnTransitMetadata]]:
        """TransactionCoordinator.prepareInitProducerIdTransit."""
        m = state.transaction_metadata
        if m.pending_transition_in_progress:
            return _Fail(Errors.CONCURRENT_TRANSACTIONS)
        if expected is not None and not (
                m.producer_epoch == NO_PRODUCER_EPOCH or expected[0] == m.producer_id
                or (expected[0] == m.last_producer_id and is_epoch_exhausted(expected[1]))):
            return _Fail(Errors.INVALID_PRODUCER_EPOCH)
        if m.state in (S.PREPARE_ABORT, S.PREPARE_COMMIT):
            return _Fail(Errors.CONCURRENT_TRANSACTIONS)
        if m.state in (S.COMPLETE_ABORT, S.COMPLETE_COMMIT, S.EMPTY):
            if m.is_producer_epoch_exhausted and (expected is None or expected[1] == m.producer_epoch):
                new_id = yield from self.producer_ids.generate_producer_id()
                if m.pending_transition_in_progress:  # another request prepared a transition meanwhile
                    return _Fail(Errors.CONCURRENT_TRANSACTIONS)
                return state.coordinator_epoch, m.prepare_producer_id_rotation(new_id, txn_timeout_ms, self._now(),
                                                                               expected is not None)
            transit = m.prepare_increment_producer_epoch(txn_timeout_ms, None if expected is None else expected[1],
                                                         self._now())
            return _Fail(Errors.INVALID_PRODUCER_EPOCH) if transit is None else (state.coordinator_epoch, transit)
        if m.state is S.ONGOING:
            # the ongoing transaction is aborted first (this epoch is never returned to the client)
            return state.coordinator_epoch, m.prepare_fence_producer_epoch()
        raise RuntimeError(f"Found transactionalId {m.transactional_id} with state {m.state.kafka_name}. This is "
                           "illegal as we should never have transitioned to this state.")

    # == AddPartitionsToTxn / AddOffsetsToTxn ========================================================================
    def handle_add_partitions(self, req: AddPartitionsToTxnRequest, reply_to: ReplyHandle) -> Proc[None]:
        """KafkaApis.handleAddPartitionToTxnRequest over handleAddPartitionsToTransaction: a partition of a topic
        that does not exist is UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED; else the one
        answer for all of them. (2.6 asks its metadata cache; kactor ZooKeeper's assignments, which it follows.)"""
        topics = sorted({tp.topic for tp in req.partitions})
        assignment = (yield from self.zk.get_full_replica_assignment_for_topics(topics)) if topics else {}
        missing = {tp for tp in req.partitions if tp not in assignment}
        if missing:
            yield Respond(reply_to, AddPartitionsToTxnResponse(tuple(
                (tp, Errors.UNKNOWN_TOPIC_OR_PARTITION if tp in missing else Errors.OPERATION_NOT_ATTEMPTED)
                for tp in req.partitions)))
            return
        error = yield from self.add_partitions_to_transaction(req.transactional_id, req.producer_id,
                                                              req.producer_epoch, frozenset(req.partitions))
        yield Respond(reply_to, AddPartitionsToTxnResponse(tuple((tp, error) for tp in req.partitions)))

    def handle_add_offsets(self, req: AddOffsetsToTxnRequest, reply_to: ReplyHandle) -> Proc[None]:
        """KafkaApis.handleAddOffsetsToTxnRequest: the group's __consumer_offsets partition joins the transaction."""
        tp = TopicPartition(GROUP_METADATA_TOPIC_NAME, self.partition_for_group(req.group_id))
        error = yield from self.add_partitions_to_transaction(req.transactional_id, req.producer_id,
                                                              req.producer_epoch, frozenset({tp}))
        yield Respond(reply_to, AddOffsetsToTxnResponse(error))

    def add_partitions_to_transaction(self, txn_id: str, producer_id: int, producer_epoch: int,
                                      partitions: frozenset[TopicPartition]) -> Proc[Errors]:
        """TransactionCoordinator.handleAddPartitionsToTransaction."""
        if not txn_id:
            return Errors.INVALID_REQUEST
        if not self.is_active:
            return Errors.COORDINATOR_NOT_AVAILABLE
        state = self.state_manager.get_transaction_state(txn_id)
        if isinstance(state, Errors):
            return state
        if state is None:
            return Errors.INVALID_PRODUCER_ID_MAPPING
        m = state.transaction_metadata
        if m.producer_id != producer_id:
            return Errors.INVALID_PRODUCER_ID_MAPPING
        if m.producer_epoch != producer_epoch:
            return Errors.INVALID_PRODUCER_EPOCH
        if m.pending_transition_in_progress or m.state in (S.PREPARE_COMMIT, S.PREPARE_ABORT):
            return Errors.CONCURRENT_TRANSACTIONS
        if m.state is S.ONGOING and partitions <= m.topic_partitions:
            return Errors.NONE  # nothing new: no write
        transit = m.prepare_add_partitions(partitions, self._now())
        return (yield from self.state_manager.append_transaction_to_log(txn_id, state.coordinator_epoch, transit))

    # == EndTxn ======================================================================================================
    def handle_end_txn(self, req: EndTxnRequest, reply_to: ReplyHandle) -> Proc[None]:
        """KafkaApis.handleEndTxnRequest over handleEndTransaction."""
        error = yield from self._end_transaction(req.transactional_id, req.producer_id, req.producer_epoch,
                                                 req.committed, is_from_client=True)
        yield Respond(reply_to, EndTxnResponse(error))

    def _end_transaction(self, txn_id: str, producer_id: int, producer_epoch: int, committed: bool,
                         is_from_client: bool) -> Proc[Errors]:
        """TransactionCoordinator.endTransaction: PrepareCommit / PrepareAbort written (acks=-1), then the answer,
        then the markers. A request from the coordinator itself (a fence, a timed-out transaction) carries the
        bumped epoch and takes over the PrepareEpochFence pending state."""
        if not txn_id:
            return Errors.INVALID_REQUEST
        if not self.is_active:
            return Errors.COORDINATOR_NOT_AVAILABLE
        state = self.state_manager.get_transaction_state(txn_id)
        if isinstance(state, Errors):
            return state
        if state is None:
            return Errors.INVALID_PRODUCER_ID_MAPPING
        m = state.transaction_metadata
        coordinator_epoch = state.coordinator_epoch
        if m.producer_id != producer_id:
            return Errors.INVALID_PRODUCER_ID_MAPPING
        # strict equality for a client (it never bumps the epoch); the coordinator's own abort carries the bump
        if (is_from_client and producer_epoch != m.producer_epoch) or producer_epoch < m.producer_epoch:
            return Errors.INVALID_PRODUCER_EPOCH
        if m.pending_transition_in_progress and m.pending_state is not S.PREPARE_EPOCH_FENCE:
            return Errors.CONCURRENT_TRANSACTIONS
        is_epoch_fence = False
        if m.state is S.ONGOING:
            next_state = S.PREPARE_COMMIT if committed else S.PREPARE_ABORT
            if next_state is S.PREPARE_ABORT and m.pending_state is S.PREPARE_EPOCH_FENCE:
                # clear the fence's pending state for PrepareAbort, which writes the bumped epoch
                is_epoch_fence = True
                m.pending_state = None
                m.producer_epoch = producer_epoch
                m.last_producer_epoch = NO_PRODUCER_EPOCH
            transit = m.prepare_abort_or_commit(next_state, self._now())
        else:
            return self._end_txn_state_error(m, committed)
        error = yield from self.state_manager.append_transaction_to_log(txn_id, coordinator_epoch, transit)
        if error is not Errors.NONE:
            log.info("Aborting sending of transaction markers and returning %s error to client for %s's EndTransaction "
                     "request of %s, since appending %s to transaction log with coordinator epoch %d failed",
                     error.name, txn_id, "COMMIT" if committed else "ABORT", transit, coordinator_epoch)
            if is_epoch_fence:
                self._failed_epoch_fence(txn_id, coordinator_epoch, error, transit.producer_epoch)
            return error
        # sendTxnMarkersCallback: the state written is still this transaction's
        after = self.state_manager.get_transaction_state(txn_id)
        if isinstance(after, Errors):
            return after
        if after is None or after.coordinator_epoch != coordinator_epoch:
            return Errors.NOT_COORDINATOR
        m = after.transaction_metadata
        if m.producer_id != producer_id:
            return Errors.INVALID_PRODUCER_ID_MAPPING
        if m.producer_epoch != producer_epoch:
            return Errors.INVALID_PRODUCER_EPOCH
        if m.pending_transition_in_progress:
            return Errors.CONCURRENT_TRANSACTIONS
        if m.state is not (S.PREPARE_COMMIT if committed else S.PREPARE_ABORT):
            return Errors.INVALID_TXN_STATE
        yield from self.markers.add_txn_markers_to_send(coordinator_epoch, m, m.prepare_complete(self._now()))
        return Errors.NONE

    def _failed_epoch_fence(self, txn_id: str, coordinator_epoch: int, error: Errors, epoch: int) -> None:
        """endTransaction's sendTxnMarkersCallback on a fence whose PrepareAbort was not written: the id's metadata,
        if still ours at that coordinator epoch, keeps its bumped epoch and is marked hasFailedEpochFence, so the
        next fence does not bump it again."""
        state = self.state_manager.get_transaction_state(txn_id)
        if state is None:
            log.warning("The coordinator still owns the transaction partition for %s, but there is no metadata in "
                        "the cache; this is not expected", txn_id)
        elif isinstance(state, CoordinatorEpochAndTxnMetadata) and state.coordinator_epoch == coordinator_epoch:
            state.transaction_metadata.has_failed_epoch_fence = True
            log.warning("The coordinator failed to write an epoch fence transition for producer %s to the transaction "
                        "log with error %s. The epoch was increased to %d but not returned to the client", txn_id,
                        error.name, epoch)

    @staticmethod
    def _end_txn_state_error(m: TransactionMetadata, committed: bool) -> Errors:
        """endTransaction's answer for a transaction that is not Ongoing: a retry of a completed end is NONE, of
        one being completed CONCURRENT_TRANSACTIONS, anything else INVALID_TXN_STATE."""
        if m.state is S.COMPLETE_COMMIT:
            return Errors.NONE if committed else Errors.INVALID_TXN_STATE
        if m.state is S.COMPLETE_ABORT:
            return Errors.NONE if not committed else Errors.INVALID_TXN_STATE
        if m.state is S.PREPARE_COMMIT:
            return Errors.CONCURRENT_TRANSACTIONS if committed else Errors.INVALID_TXN_STATE
        if m.state is S.PREPARE_ABORT:
            return Errors.CONCURRENT_TRANSACTIONS if not committed else Errors.INVALID_TXN_STATE
        if m.state is S.EMPTY:
            log.debug("TransactionalId %s's state is Empty: no transaction to %s", m.transactional_id,
                      "commit" if committed else "abort")
            return Errors.INVALID_TXN_STATE
        raise RuntimeError(f"Found transactionalId {m.transactional_id} with state {m.state.kafka_name}. This is "
                           "illegal as we should never have transitioned to this state.")

    # == the markers' completion =====================================================================================
    def _write_txn_completion(self, pending: PendingCompleteTxn) -> Proc[None]:
        """TransactionMarkerChannelManager.tryAppendToLog: CompleteCommit / CompleteAbort written once every marker
        is; COORDINATOR_NOT_AVAILABLE is retried, NOT_COORDINATOR and the load of a newer epoch give up (the new
        coordinator sends the markers again)."""
        error = yield from self.state_manager.append_transaction_to_log(
            pending.transactional_id, pending.coordinator_epoch, pending.transit,
            retry_on_error=lambda e: e is Errors.COORDINATOR_NOT_AVAILABLE)
        if error is Errors.NONE:
            log.debug("Completed transaction for %s with coordinator epoch %d, final state after commit: %s",
                      pending.transactional_id, pending.coordinator_epoch, pending.transit.txn_state.kafka_name)
        elif error is Errors.COORDINATOR_NOT_AVAILABLE:
            log.warning("Failed updating transaction state for %s when appending to transaction log due to %s. "
                        "retrying", pending.transactional_id, error.name)
            if not self._completions_to_retry:
                yield Schedule(COMPLETION_RETRY, COMPLETION_RETRY_BACKOFF_MS)
            self._completions_to_retry.append(pending)
        else:
            log.info("No longer the coordinator for %s with coordinator epoch %d (%s); cancel appending %s to "
                     "transaction log", pending.transactional_id, pending.coordinator_epoch, error.name,
                     pending.transit)

    def on_markers_response(self, markers: Any, errors: dict[tuple[int, TopicPartition], Errors]) -> Proc[None]:
        yield from self.markers.on_response(markers, errors)

    def on_markers_disconnect(self, markers: Any) -> Proc[None]:
        yield from self.markers.on_disconnect(markers)

    # == periodic tasks ==============================================================================================
    def abort_timed_out_transactions(self) -> Proc[None]:
        """TransactionCoordinator.abortTimedOutTransactions: each Ongoing transaction past its timeout is fenced
        (its epoch bumped, so that its producer can no longer write) and aborted."""
        for t in self.state_manager.timed_out_transactions():
            state = self.state_manager.get_transaction_state(t.transactional_id)
            if not isinstance(state, CoordinatorEpochAndTxnMetadata):
                continue
            m = state.transaction_metadata
            if m.producer_id != t.producer_id or m.producer_epoch != t.producer_epoch \
                    or m.pending_transition_in_progress:
                continue
            transit = m.prepare_fence_producer_epoch()
            log.info("Aborting transaction %s with producer id %d and epoch %d as it timed out",
                     t.transactional_id, transit.producer_id, t.producer_epoch)
            error = yield from self._end_transaction(t.transactional_id, transit.producer_id,
                                                     transit.producer_epoch, committed=False, is_from_client=False)
            if error is not Errors.NONE:
                if m.pending_state is S.PREPARE_EPOCH_FENCE:
                    m.pending_state = None
                log.info("Failed to rollback transaction %s after it timed out: %s", t.transactional_id,
                         error.name)
