"""TransactionStateManager (kafka.coordinator.transaction, Kafka 2.6.3): the transactional ids of the
``__transaction_state`` partitions this broker leads, written to those partitions and loaded back from them.

It does no I/O. It writes through the `AppendTxnLog` ask (ReplicaManager.appendRecords with acks=-1 and
request.timeout.ms, answered with the partition's error) and loads through `ReadTxnLogStart` (the log's start
offset) and `ReadTxnLog` (Log.read from an offset towards the log end); the actor turns them into requests to the
replica manager. A partition's cache carries the coordinator epoch it was loaded at (the leader epoch of the
partition: Kafka's coordinatorEpoch), so that an answer to a write made under an older epoch is not installed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import attrs

from core.coordinator.coordinator_loader import LoadFailed, UnreadableBatchError, load_log
from core.coordinator.group.group_metadata_manager import partition_for
from core.coordinator.transaction.transaction_log import (
    TombstoneBatchBuilder,
    TxnLogFormatError,
    key_to_bytes,
    read_txn_record_key,
    read_txn_record_value,
    records_batch,
    value_to_bytes,
)
from core.coordinator.transaction.transaction_metadata import (
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
)
from core.effects import Proc
from messages import message
from messages.common import Errors
from messages.topic import TRANSACTION_STATE_TOPIC_NAME
from messages.transaction import TransactionCoordinatorConfig
from protocol.errors import ProtocolError
from protocol.records import CONTROL_BIT, iter_batches, read_records

log = logging.getLogger("kactor.coordinator")
EMPTY_BYTE = TransactionState.EMPTY.byte


@message
class AppendTxnLog:
    """Ask: append ``records`` (one batch) to __transaction_state-``partition`` as its leader (appendRecords with
    internalTopicsAllowed, origin Coordinator) with acks=-1; resumed with the partition's Errors."""

    partition: int
    records: bytes
    timeout_ms: int


@message
class ReadTxnLog:
    """Ask: read __transaction_state-``partition``'s log from ``offset`` (up to ``max_bytes``, whole batches, up to
    the log end); resumed with a `LogRead`."""

    partition: int
    offset: int
    max_bytes: int


@message
class ReadTxnLogStart:
    """Ask: the log start offset of __transaction_state-``partition``; resumed with a `LogStart`."""

    partition: int


@attrs.define
class TxnMetadataCacheEntry:
    """Kafka's TxnMetadataCacheEntry: the partition's transactional ids, loaded at ``coordinator_epoch``."""

    coordinator_epoch: int
    metadata_per_transactional_id: dict[str, TransactionMetadata] = attrs.Factory(dict)


@attrs.frozen
class CoordinatorEpochAndTxnMetadata:
    coordinator_epoch: int
    transaction_metadata: TransactionMetadata


@attrs.frozen
class TransactionalIdAndProducerIdEpoch:
    transactional_id: str
    producer_id: int
    producer_epoch: int


def append_error(error: Errors) -> Errors:
    """appendTransactionToLog's mapping of the append's error to the coordinator's."""
    if error in (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_ENOUGH_REPLICAS,
                 Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, Errors.REQUEST_TIMED_OUT):
        return Errors.COORDINATOR_NOT_AVAILABLE
    if error in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.KAFKA_STORAGE_ERROR):
        return Errors.NOT_COORDINATOR
    if error is Errors.NONE:
        return Errors.NONE
    return Errors.UNKNOWN_SERVER_ERROR  # MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE and anything unexpected


class TransactionStateManager:
    """The transactional ids of the partitions this broker coordinates, and which partitions those are."""

    def __init__(self, broker_id: int, config: TransactionCoordinatorConfig, now_ms: Callable[[], float]) -> None:
        self.broker_id = broker_id
        self.config = config
        self.now_ms = now_ms
        self.num_partitions = config.transaction_log_num_partitions  # transactionTopicPartitionCount
        self.transaction_metadata_cache: dict[int, TxnMetadataCacheEntry] = {}
        self.loading_partitions: dict[int, int] = {}  # partition → the coordinator epoch being loaded
        # loads that failed (transaction-coordinator-metrics partition-load-error-total): the partition stays loading
        self.partition_load_errors = 0

    def partition_for(self, transactional_id: str) -> int:
        """TransactionStateManager.partitionFor: Utils.abs(transactionalId.hashCode) % partition count."""
        return partition_for(transactional_id, self.num_partitions)

    def validate_transaction_timeout_ms(self, txn_timeout_ms: int) -> bool:
        return 0 < txn_timeout_ms <= self.config.transaction_max_timeout_ms

    def is_loading(self, partition: int) -> bool:
        return partition in self.loading_partitions

    def get_transaction_state(self, transactional_id: str) -> Errors | CoordinatorEpochAndTxnMetadata | None:
        """TransactionStateManager.getTransactionState: COORDINATOR_LOAD_IN_PROGRESS while the id's partition loads,
        NOT_COORDINATOR if this broker does not own it, else the id's metadata with the partition's coordinator epoch
        (None if the id is unknown)."""
        partition = self.partition_for(transactional_id)
        if partition in self.loading_partitions:
            return Errors.COORDINATOR_LOAD_IN_PROGRESS
        entry = self.transaction_metadata_cache.get(partition)
        if entry is None:
            return Errors.NOT_COORDINATOR
        metadata = entry.metadata_per_transactional_id.get(transactional_id)
        return None if metadata is None else CoordinatorEpochAndTxnMetadata(entry.coordinator_epoch, metadata)

    def put_transaction_state_if_not_exists(self, metadata: TransactionMetadata
                                            ) -> Errors | CoordinatorEpochAndTxnMetadata:
        """TransactionStateManager.putTransactionStateIfNotExists: the cached metadata of that id if there is one,
        else ``metadata`` once cached."""
        partition = self.partition_for(metadata.transactional_id)
        if partition in self.loading_partitions:
            return Errors.COORDINATOR_LOAD_IN_PROGRESS
        entry = self.transaction_metadata_cache.get(partition)
        if entry is None:
            return Errors.NOT_COORDINATOR
        cached = entry.metadata_per_transactional_id.setdefault(metadata.transactional_id, metadata)
        return CoordinatorEpochAndTxnMetadata(entry.coordinator_epoch, cached)

    def timed_out_transactions(self) -> list[TransactionalIdAndProducerIdEpoch]:
        """TransactionStateManager.timedOutTransactions: Ongoing transactions of the loaded partitions with no
        transition pending, started more than their timeout ago."""
        now = int(self.now_ms())
        out = []
        for partition, entry in sorted(self.transaction_metadata_cache.items()):
            if partition in self.loading_partitions:
                continue
            for m in entry.metadata_per_transactional_id.values():
                if m.state is TransactionState.ONGOING and m.pending_state is None \
                        and m.txn_start_timestamp + m.txn_timeout_ms < now:
                    out.append(TransactionalIdAndProducerIdEpoch(m.transactional_id, m.producer_id, m.producer_epoch))
        return out

    # -- writing --------------------------------------------------------------------------------------------------
    def append_transaction_to_log(self, transactional_id: str, coordinator_epoch: int, new_metadata: TxnTransitMetadata,
                                  retry_on_error: Callable[[Errors], bool] = lambda _: False) -> Proc[Errors]:
        """TransactionStateManager.appendTransactionToLog: write ``new_metadata`` with acks=-1; once written, and if
        the partition is still ours at ``coordinator_epoch``, it becomes the id's state. On an error the pending
        state is cleared (so the client may retry), unless ``retry_on_error`` says the caller retries this write."""
        partition = self.partition_for(transactional_id)
        state = self.get_transaction_state(transactional_id)
        if isinstance(state, Errors):
            return state
        if state is None or state.coordinator_epoch != coordinator_epoch:
            return Errors.NOT_COORDINATOR
        now = int(self.now_ms())
        value = None if new_metadata.txn_state is TransactionState.DEAD \
            else value_to_bytes(new_metadata.to_log_value(), EMPTY_BYTE)
        batch = records_batch([(key_to_bytes(transactional_id), value)], now)
        raw = yield AppendTxnLog(partition, batch, self.config.request_timeout_ms)
        error = append_error(raw)
        if raw is not Errors.NONE:
            log.debug("Appending %s's new metadata %s failed: %s, returning %s", transactional_id, new_metadata,
                      raw.name, error.name)
        current = self.get_transaction_state(transactional_id)
        if isinstance(current, Errors):
            log.info("Accessing the cached transaction metadata for %s returns %s after appending to the log; "
                     "not updating the cache", transactional_id, current.name)
            return Errors.NOT_COORDINATOR if error is Errors.NONE else error
        if current is None or current.coordinator_epoch != coordinator_epoch:
            log.info("The cached coordinator metadata for %s has changed after appending its new metadata to the "
                     "log; not updating the cache", transactional_id)
            return Errors.NOT_COORDINATOR
        metadata = current.transaction_metadata
        if error is Errors.NONE:
            if metadata.pending_state is new_metadata.txn_state:
                metadata.complete_transition_to(new_metadata)
            return Errors.NONE
        if not retry_on_error(error):
            metadata.pending_state = None
        return error

    def remove_expired_transactional_ids(self) -> Proc[int]:
        """TransactionStateManager.removeExpiredTransactionalIds: an id that is Empty or complete, with nothing
        pending, unchanged for transactional.id.expiration.ms goes Dead: its tombstone is written and, once
        acknowledged, it leaves the cache. A partition's tombstones go in batches bounded by max.message.bytes
        (maybeAppendExpiration: a full batch is written, flushRecordsBuilder, and the id starts the next one), so
        that no batch is refused as too large. The number removed."""
        now = int(self.now_ms())
        removed = 0
        for partition in sorted(self.transaction_metadata_cache):
            entry = self.transaction_metadata_cache.get(partition)
            if entry is None or partition in self.loading_partitions:
                continue
            builder: TombstoneBatchBuilder | None = None
            expired: list[tuple[TransactionMetadata, TxnTransitMetadata]] = []
            for m in list(entry.metadata_per_transactional_id.values()):
                if self.transaction_metadata_cache.get(partition) is not entry:
                    break  # unloaded while a batch was written: the ids left are no longer ours
                if m.pending_state is not None or not self._should_expire(m, now):
                    continue
                key = key_to_bytes(m.transactional_id)
                if builder is not None and not builder.has_room_for(key):
                    removed += yield from self._write_tombstones(partition, entry, expired, builder.build())
                    builder, expired = None, []
                    if self.transaction_metadata_cache.get(partition) is not entry or m.pending_state is not None:
                        continue
                if builder is None:
                    builder = TombstoneBatchBuilder(self.config.message_max_bytes, now)
                builder.append(key)
                expired.append((m, m.prepare_dead()))
            if expired and builder is not None:
                removed += yield from self._write_tombstones(partition, entry, expired, builder.build())
        return removed

    def _should_expire(self, m: TransactionMetadata, now: int) -> bool:
        """TransactionStateManager.shouldExpire: TransactionState.isExpirationAllowed and unchanged long enough."""
        return m.state in (TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT,
                           TransactionState.COMPLETE_ABORT) \
            and m.txn_last_update_timestamp <= now - self.config.transactional_id_expiration_ms

    def _write_tombstones(self, partition: int, entry: TxnMetadataCacheEntry,
                          expired: list[tuple[TransactionMetadata, TxnTransitMetadata]], batch: bytes) -> Proc[int]:
        """writeTombstonesForExpiredTransactionalIds: one batch appended; on success each id still Dead-pending
        at its epoch, in the same cache entry, leaves the cache, else it goes back to its state. The number
        removed."""
        error = yield AppendTxnLog(partition, batch, self.config.request_timeout_ms)
        current = self.transaction_metadata_cache.get(partition)
        removed = 0
        for m, transit in expired:
            if error is Errors.NONE and current is entry \
                    and entry.metadata_per_transactional_id.get(m.transactional_id) is m \
                    and m.pending_state is TransactionState.DEAD and m.producer_epoch == transit.producer_epoch:
                del entry.metadata_per_transactional_id[m.transactional_id]
                removed += 1
            else:
                m.pending_state = None
        if error is not Errors.NONE:
            log.warning("Failed to append %d transactional id tombstones to %s-%d: %s", len(expired),
                        TRANSACTION_STATE_TOPIC_NAME, partition, error.name)
        return removed

    # -- loading --------------------------------------------------------------------------------------------------
    def load_transactions_for_partition(self, partition: int, coordinator_epoch: int
                                        ) -> Proc[TxnMetadataCacheEntry | None]:
        """TransactionStateManager.loadTransactionsForTxnTopicPartition: read the partition from its log start to its
        log end, the last record of each transactional id winning and tombstones removing; the entry installed once
        the high watermark reaches that end (`await_committed`, beyond Kafka: no uncommitted record is acted on)
        (None if the partition was given up or loaded again meanwhile, or the load failed). Requests for its ids get
        COORDINATOR_LOAD_IN_PROGRESS until then. The caller sends the markers of the transactions found in
        PrepareCommit / PrepareAbort.

        A load that fails — the log cannot be read, or holds a batch that is not the ids' records (a control batch:
        2.6.3's loadTransactionMetadata fails on one too) — installs nothing: 2.6.3 would install the ids read
        before the failure, and the ids after it would be lost (their open transactions never aborted, their
        producers never fenced). The failure is logged at ERROR with the partition and offset and counted
        (``partition_load_errors``); the partition stays loading until its next election loads it again."""
        self.loading_partitions[partition] = coordinator_epoch
        self.transaction_metadata_cache.pop(partition, None)
        loaded: dict[str, TransactionMetadata] = {}

        def current() -> bool:
            return self.loading_partitions.get(partition) == coordinator_epoch

        outcome = yield from load_log(
            partition, lambda: ReadTxnLogStart(partition),
            lambda at: ReadTxnLog(partition, at, self.config.transaction_log_load_buffer_size), current,
            lambda records, at: self._read_batches(records, loaded, at))
        if outcome is None:
            return None
        if isinstance(outcome, LoadFailed):
            return self._load_failed(partition, coordinator_epoch, outcome.offset, outcome.reason)
        del self.loading_partitions[partition]
        entry = TxnMetadataCacheEntry(coordinator_epoch, loaded)
        self.transaction_metadata_cache[partition] = entry
        log.info("Finished loading %d transaction metadata from %s-%d", len(loaded), TRANSACTION_STATE_TOPIC_NAME,
                 partition)
        return entry

    def _load_failed(self, partition: int, coordinator_epoch: int, offset: int, reason: str) -> None:
        self.partition_load_errors += 1
        log.error("Error loading transactions from %s-%d at offset %d (coordinator epoch %d): %s. Nothing of the "
                  "partition is loaded: its transactional ids answer COORDINATOR_LOAD_IN_PROGRESS until it is "
                  "loaded again at its next election", TRANSACTION_STATE_TOPIC_NAME, partition, offset,
                  coordinator_epoch, reason)

    @staticmethod
    def _read_batches(records: bytes, loaded: dict[str, TransactionMetadata], offset: int) -> int | None:
        """The batches of one read (from ``offset``) applied to ``loaded``; the offset after the last (None: no
        batch). Raises `UnreadableBatchError` at the first batch that is not transactional ids' records."""
        next_offset = None
        try:
            for batch in iter_batches(records):
                offset = batch.base_offset
                if batch.attributes & CONTROL_BIT:
                    raise TxnLogFormatError("a control batch (a transaction marker), which no client can have "
                                            "written since AddPartitionsToTxn refuses internal topics")
                for record in read_records(batch):
                    if record.key is None:
                        raise TxnLogFormatError("Transaction log record key should not be null")
                    txn_id = read_txn_record_key(record.key)
                    if record.value is None:
                        loaded.pop(txn_id, None)
                    else:
                        loaded[txn_id] = TransactionMetadata.from_log_value(txn_id,
                                                                            read_txn_record_value(record.value))
                next_offset = offset = batch.base_offset + batch.last_offset_delta + 1
        except (ProtocolError, TxnLogFormatError, RuntimeError) as e:
            raise UnreadableBatchError(offset, str(e)) from e
        return next_offset

    def remove_transactions_for_partition(self, partition: int, coordinator_epoch: int) -> None:
        """TransactionStateManager.removeTransactionsForTxnTopicPartition: the partition is no longer ours; its
        load stops and its ids leave the cache."""
        self.loading_partitions.pop(partition, None)
        self.transaction_metadata_cache.pop(partition, None)
        log.info("Unloaded transaction metadata of %s-%d for coordinator epoch %d", TRANSACTION_STATE_TOPIC_NAME,
                 partition, coordinator_epoch)
