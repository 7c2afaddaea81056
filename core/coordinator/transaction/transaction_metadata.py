"""TransactionMetadata (kafka.coordinator.transaction, Kafka 2.6.3): one transactional id's state, and its transitions.

A transition is two steps, as in Kafka: ``prepare_*`` checks it is allowed, sets ``pending_state`` and returns the
`TxnTransitMetadata` to write to ``__transaction_state``; once the write is acknowledged, `complete_transition_to`
makes it the current state (a failed write clears ``pending_state`` instead). A transition that is not allowed is a
programming error (`IllegalTxnStateError`, Kafka's IllegalStateException), never a client's: the coordinator checks
every client-visible condition first.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

import attrs

from core.coordinator.transaction.transaction_log import TxnLogValue
from messages.common import TopicPartition

NO_PRODUCER_ID = -1  # RecordBatch.NO_PRODUCER_ID
NO_PRODUCER_EPOCH = -1  # RecordBatch.NO_PRODUCER_EPOCH
SHORT_MAX = 32767


class IllegalTxnStateError(RuntimeError):
    """Kafka's IllegalStateException from TransactionMetadata: a transition the coordinator must never attempt."""


class TransactionState(enum.Enum):
    """Kafka's TransactionState case objects, with the byte each is written as."""

    EMPTY = ("Empty", 0)
    ONGOING = ("Ongoing", 1)
    PREPARE_COMMIT = ("PrepareCommit", 2)
    PREPARE_ABORT = ("PrepareAbort", 3)
    COMPLETE_COMMIT = ("CompleteCommit", 4)
    COMPLETE_ABORT = ("CompleteAbort", 5)
    DEAD = ("Dead", 6)
    PREPARE_EPOCH_FENCE = ("PrepareEpochFence", 7)

    @property
    def byte(self) -> int:
        return self.value[1]

    @property
    def kafka_name(self) -> str:
        return self.value[0]

    @classmethod
    def from_byte(cls, b: int) -> TransactionState:
        """TransactionMetadata.byteToState."""
        for s in cls:
            if s.byte == b:
                return s
        raise IllegalTxnStateError(f"Unknown transaction state byte {b} from the transaction status message")


S = TransactionState
# TransactionMetadata.validPreviousStates
VALID_PREVIOUS_STATES: dict[TransactionState, frozenset[TransactionState]] = {
    S.EMPTY: frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.ONGOING: frozenset({S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT}),
    S.PREPARE_COMMIT: frozenset({S.ONGOING}),
    S.PREPARE_ABORT: frozenset({S.ONGOING, S.PREPARE_EPOCH_FENCE}),
    S.COMPLETE_COMMIT: frozenset({S.PREPARE_COMMIT}),
    S.COMPLETE_ABORT: frozenset({S.PREPARE_ABORT}),
    S.DEAD: frozenset({S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT}),
    S.PREPARE_EPOCH_FENCE: frozenset({S.ONGOING}),
}


def is_epoch_exhausted(epoch: int) -> bool:
    """TransactionMetadata.isEpochExhausted: the epoch cannot be bumped twice more (a fence needs one, and the
    retry after it another)."""
    return epoch >= SHORT_MAX - 1


@attrs.frozen(slots=True)
class TxnTransitMetadata:
    """Kafka's TxnTransitMetadata: the state a prepared transition writes, and installs once written."""

    producer_id: int
    last_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    txn_timeout_ms: int
    txn_state: TransactionState
    topic_partitions: frozenset[TopicPartition]
    txn_start_timestamp: int
    txn_last_update_timestamp: int

    def to_log_value(self) -> TxnLogValue:
        return TxnLogValue(self.producer_id, self.producer_epoch, self.txn_timeout_ms, self.txn_state.byte,
                           self.topic_partitions, self.txn_last_update_timestamp, self.txn_start_timestamp)


@attrs.define
class TransactionMetadata:
    """Kafka's TransactionMetadata (its lock is the actor's single thread)."""

    transactional_id: str
    producer_id: int
    last_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    txn_timeout_ms: int
    state: TransactionState
    topic_partitions: set[TopicPartition] = attrs.Factory(set)
    txn_start_timestamp: int = -1
    txn_last_update_timestamp: int = -1
    pending_state: TransactionState | None = None
    # TransactionMetadata.hasFailedEpochFence: a fence's bumped epoch may not have been written, so the next fence
    # reuses it instead of burning another (safe: that epoch was never returned to a client)
    has_failed_epoch_fence: bool = False

    @classmethod
    def from_log_value(cls, transactional_id: str, value: TxnLogValue) -> TransactionMetadata:
        """TransactionLog.readTxnRecordValue: the last producer id and epoch are not in the record (version 0)."""
        return cls(transactional_id, value.producer_id, NO_PRODUCER_ID, value.producer_epoch, NO_PRODUCER_EPOCH,
                   value.txn_timeout_ms, TransactionState.from_byte(value.state_byte), set(value.topic_partitions),
                   value.txn_start_timestamp, value.txn_last_update_timestamp)

    # -- queries -------------------------------------------------------------------------------------------------
    @property
    def pending_transition_in_progress(self) -> bool:
        return self.pending_state is not None

    @property
    def is_producer_epoch_exhausted(self) -> bool:
        return is_epoch_exhausted(self.producer_epoch)

    @property
    def has_pending_transaction(self) -> bool:
        """TransactionMetadata.hasPendingTransaction: Ongoing, PrepareAbort or PrepareCommit."""
        return self.state in (S.ONGOING, S.PREPARE_ABORT, S.PREPARE_COMMIT)

    # -- preparing transitions -----------------------------------------------------------------------------------

    def prepare_fence_producer_epoch(self) -> TxnTransitMetadata:
        """TransactionMetadata.prepareFenceProducerEpoch: bump the epoch so that the abort's markers fence the
        current producer; the follow-up abort takes the pending state over (endTransaction, isFromClient=false).
        After a fence whose write failed (``has_failed_epoch_fence``) the epoch is not bumped again."""
        if self.producer_epoch == SHORT_MAX:
            raise IllegalTxnStateError("Cannot fence producer with epoch equal to Short.MaxValue since this would "
                                       "overflow")
        bumped = self.producer_epoch if self.has_failed_epoch_fence else self.producer_epoch + 1
        return self._prepare_transition_to(S.PREPARE_EPOCH_FENCE, self.producer_id, bumped,
                                           NO_PRODUCER_EPOCH, self.txn_timeout_ms, frozenset(self.topic_partitions),
                                           self.txn_start_timestamp, self.txn_last_update_timestamp)

    def prepare_increment_producer_epoch(self, new_txn_timeout_ms: int, expected_producer_epoch: int | None,
                                         update_timestamp: int) -> TxnTransitMetadata | None:
        """TransactionMetadata.prepareIncrementProducerEpoch (KIP-360): None when the expected epoch is neither the
        current nor the last one (the producer is fenced: INVALID_PRODUCER_EPOCH in 2.6)."""
        if self.is_producer_epoch_exhausted:
            raise IllegalTxnStateError(f"Cannot allocate any more producer epochs for producerId {self.producer_id}")
        bumped = self.producer_epoch + 1
        if expected_producer_epoch is None:
            # a new producer, or one recovering from a fatal error
            epochs = (bumped, NO_PRODUCER_EPOCH)
        elif self.producer_epoch == NO_PRODUCER_EPOCH or expected_producer_epoch == self.producer_epoch:
            epochs = (bumped, self.producer_epoch)
        elif expected_producer_epoch == self.last_producer_epoch:
            # a retry of a bump whose answer was lost: the current epoch again, not bumped
            epochs = (self.producer_epoch, self.last_producer_epoch)
        else:
            return None
        return self._prepare_transition_to(S.EMPTY, self.producer_id, epochs[0], epochs[1], new_txn_timeout_ms,
                                           frozenset(), -1, update_timestamp)

    def prepare_producer_id_rotation(self, new_producer_id: int, new_txn_timeout_ms: int, update_timestamp: int,
                                     record_last_epoch: bool) -> TxnTransitMetadata:
        """TransactionMetadata.prepareProducerIdRotation: a new producer id at epoch 0 once the epoch is exhausted."""
        if self.has_pending_transaction:
            raise IllegalTxnStateError("Cannot rotate producer ids while a transaction is still pending")
        return self._prepare_transition_to(S.EMPTY, new_producer_id, 0,
                                           self.producer_epoch if record_last_epoch else NO_PRODUCER_EPOCH,
                                           new_txn_timeout_ms, frozenset(), -1, update_timestamp)

    def prepare_add_partitions(self, added: Iterable[TopicPartition], update_timestamp: int) -> TxnTransitMetadata:
        """TransactionMetadata.prepareAddPartitions: the transaction starts now unless it is already Ongoing."""
        start = update_timestamp if self.state in (S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT) \
            else self.txn_start_timestamp
        return self._prepare_transition_to(S.ONGOING, self.producer_id, self.producer_epoch,
                                           self.last_producer_epoch, self.txn_timeout_ms,
                                           frozenset(self.topic_partitions) | frozenset(added), start,
                                           update_timestamp)

    def prepare_abort_or_commit(self, new_state: TransactionState, update_timestamp: int) -> TxnTransitMetadata:
        """TransactionMetadata.prepareAbortOrCommit."""
        return self._prepare_transition_to(new_state, self.producer_id, self.producer_epoch,
                                           self.last_producer_epoch, self.txn_timeout_ms,
                                           frozenset(self.topic_partitions), self.txn_start_timestamp,
                                           update_timestamp)

    def prepare_complete(self, update_timestamp: int) -> TxnTransitMetadata:
        """TransactionMetadata.prepareComplete: CompleteCommit after PrepareCommit, else CompleteAbort; no
        partitions left. The Prepare state (with any fenced epoch) was written, so a failed fence is forgotten."""
        new_state = S.COMPLETE_COMMIT if self.state is S.PREPARE_COMMIT else S.COMPLETE_ABORT
        self.has_failed_epoch_fence = False
        return self._prepare_transition_to(new_state, self.producer_id, self.producer_epoch,
                                           self.last_producer_epoch, self.txn_timeout_ms, frozenset(),
                                           self.txn_start_timestamp, update_timestamp)

    def prepare_dead(self) -> TxnTransitMetadata:
        """TransactionMetadata.prepareDead: the transactional id expires (its tombstone is written)."""
        return self._prepare_transition_to(S.DEAD, self.producer_id, self.producer_epoch, self.last_producer_epoch,
                                           self.txn_timeout_ms, frozenset(), self.txn_start_timestamp,
                                           self.txn_last_update_timestamp)

    def _prepare_transition_to(self, new_state: TransactionState, new_producer_id: int, new_epoch: int,
                               new_last_epoch: int, new_txn_timeout_ms: int,
                               new_topic_partitions: frozenset[TopicPartition], new_txn_start_timestamp: int,
                               update_timestamp: int) -> TxnTransitMetadata:
        """TransactionMetadata.prepareTransitionTo."""
        if self.pending_state is not None:
            raise IllegalTxnStateError(f"Preparing transaction state transition to {new_state.kafka_name} while it "
                                       f"already a pending state {self.pending_state.kafka_name}")
        if new_producer_id < 0:
            raise IllegalTxnStateError(f"Illegal new producer id {new_producer_id}")
        if new_state is not S.DEAD and new_epoch < 0:
            raise IllegalTxnStateError(f"Illegal new producer epoch {new_epoch}")
        if self.state not in VALID_PREVIOUS_STATES[new_state]:
            raise IllegalTxnStateError(f"Preparing transaction state transition to {new_state.kafka_name} failed "
                                       f"since the target state {new_state.kafka_name} is not a valid previous "
                                       f"state of the current state {self.state.kafka_name}")
        self.pending_state = new_state
        return TxnTransitMetadata(new_producer_id, self.producer_id, new_epoch, new_last_epoch, new_txn_timeout_ms,
                                  new_state, new_topic_partitions, new_txn_start_timestamp, update_timestamp)

    # -- completing ----------------------------------------------------------------------------------------------
    def complete_transition_to(self, t: TxnTransitMetadata) -> None:
        """TransactionMetadata.completeTransitionTo: install the written state after checking it follows from the
        current one."""
        to = self.pending_state
        if to is None or to is not t.txn_state:
            raise IllegalTxnStateError(f"TransactionalId {self.transactional_id} completing transaction state "
                                       f"transition while it does not have a pending state")
        same_epoch = t.producer_epoch == self.producer_epoch and t.producer_id == self.producer_id
        if to is S.EMPTY:  # InitProducerId
            bump = t.producer_epoch == self.producer_epoch + 1 or (t.producer_epoch == 0
                                                                   and t.producer_id != self.producer_id)
            if (self.producer_epoch != t.producer_epoch and not bump) or self.topic_partitions \
                    or t.txn_start_timestamp != -1:
                self._transition_failure(t)
            self.txn_timeout_ms = t.txn_timeout_ms
            self.producer_epoch, self.last_producer_epoch = t.producer_epoch, t.last_producer_epoch
            self.producer_id, self.last_producer_id = t.producer_id, t.last_producer_id
        elif to is S.ONGOING:  # AddPartitionsToTxn
            if not same_epoch or not self.topic_partitions <= t.topic_partitions \
                    or self.txn_timeout_ms != t.txn_timeout_ms or self.txn_start_timestamp > t.txn_start_timestamp:
                self._transition_failure(t)
            self.txn_start_timestamp = t.txn_start_timestamp
            self.topic_partitions |= t.topic_partitions
        elif to in (S.PREPARE_ABORT, S.PREPARE_COMMIT):  # EndTxn
            if not same_epoch or self.topic_partitions != t.topic_partitions \
                    or self.txn_timeout_ms != t.txn_timeout_ms or self.txn_start_timestamp != t.txn_start_timestamp:
                self._transition_failure(t)
        elif to in (S.COMPLETE_ABORT, S.COMPLETE_COMMIT):  # the markers were written
            if not same_epoch or self.txn_timeout_ms != t.txn_timeout_ms or t.txn_start_timestamp == -1:
                self._transition_failure(t)
            self.txn_start_timestamp = t.txn_start_timestamp
            self.topic_partitions.clear()
        else:  # PrepareEpochFence is always taken over by PrepareAbort; Dead leaves the cache instead
            self._transition_failure(t)
        self.state = to
        self.pending_state = None
        self.txn_last_update_timestamp = t.txn_last_update_timestamp

    def _transition_failure(self, t: TxnTransitMetadata) -> None:
        raise IllegalTxnStateError(f"TransactionalId {self.transactional_id} failed transition to state {t} due to "
                                   f"unexpected metadata")
