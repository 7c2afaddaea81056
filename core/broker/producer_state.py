"""Producers' state of one partition: Kafka 2.6's ``ProducerStateManager`` / ``ProducerAppendInfo`` /
``ProducerStateEntry``, idempotence and transactions.

Per producer id: its epoch, the metadata of its last 5 batches (first/last sequence, first/last offset), the epoch
of the transaction coordinator that wrote its last marker and, while it has a transaction open in this partition,
that transaction's first offset. A client batch that repeats one of the last batches is a duplicate (the log
answers with the original offsets and appends nothing); a sequence that does not follow the last one is
OUT_OF_ORDER_SEQUENCE_NUMBER; an older epoch INVALID_PRODUCER_EPOCH (2.6's ProducerFencedException). A producer the
partition knows no epoch of (its batches went with retention, or it expired) may continue at any sequence (KIP-360:
2.5 and later never answer UNKNOWN_PRODUCER_ID). Replicated batches (a follower's appends, recovery) update the
state without these checks (`REPLICATION`); a coordinator's (WriteTxnMarkers: `COORDINATOR`) have their epochs
checked but not their sequences.

Transactions: a transactional batch of a producer with no open transaction opens one at its offset (an ongoing
`TxnMetadata`); a COMMIT / ABORT control batch (its EndTransactionMarker) completes it (`CompletedTxn`), checked
against the producer's epoch and the coordinator's (an older coordinator epoch is TRANSACTION_COORDINATOR_FENCED).
A completed transaction stays "unreplicated" until the high watermark passes its marker; the first offset of the
earliest ongoing or unreplicated transaction is the partition's first unstable offset, and the last stable offset
is the least of it and the high watermark (the log's). A non-transactional batch of a producer with an open
transaction is INVALID_TXN_STATE.

KIP-890 part 1 (Kafka 3.6, ``transaction.partition.verification.enable``): before a client's transactional batch may
open a transaction here, the leader asks the transaction coordinator whether this partition is in the producer's
ongoing transaction. `ProducerStateManager.maybe_start_transaction_verification` makes the producer's
`VerificationStateEntry`, whose `VerificationGuard` (an object compared by identity, as 3.6's ``new Object()``) the
append must bring back (`check_verification`): a marker or a transactional batch written meanwhile clears the entry
(KAFKA-14884: an abort landing between the coordinator's answer and the append), so a stale verification is
INVALID_TXN_STATE, never a transaction the coordinator does not know of. The entry also keeps the lowest sequence
seen while verifying, so a higher sequence cannot overtake a lower one that failed verification with a retriable
error.

The state is rebuilt when the log is opened or truncated from the latest ``%020d.snapshot`` file at or below the log
end (Kafka's format, written when a segment rolls and when the log is closed) plus the batches after it.
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Iterable

import attrs
from crc32c import crc32c

from core.broker.api_error import ApiError
from messages.common import Errors
from protocol.records import EndTransactionMarker

NUM_BATCHES_TO_RETAIN = 5  # ProducerStateEntry.NumBatchesToRetain
# transactional.id.expiration.ms's default: LogManager hands every log the broker's setting (maxPidExpirationMs)
PRODUCER_ID_EXPIRATION_MS = 7 * 24 * 60 * 60 * 1000
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_TIMESTAMP = -1
NO_COORDINATOR_EPOCH = -1  # RecordBatch.NO_PARTITION_LEADER_EPOCH, ProducerStateEntry's initial coordinatorEpoch
INT_MAX = 2**31 - 1

# kafka.log.AppendOrigin: who appends decides which checks a batch gets
CLIENT = "Client"  # a producer's Produce: epochs and sequences checked, duplicates found
COORDINATOR = "Coordinator"  # a coordinator's own appends (WriteTxnMarkers' markers): epochs checked
REPLICATION = "Replication"  # a follower's appends and a log's recovery: nothing checked


def increment_sequence(sequence: int, increment: int) -> int:
    """DefaultRecordBatch.incrementSequence: sequences wrap from Int.MaxValue to 0."""
    if sequence > INT_MAX - increment:
        return increment - (INT_MAX - sequence) - 1
    return sequence + increment


def in_sequence(last_seq: int, next_seq: int) -> bool:
    """ProducerAppendInfo.inSequence."""
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT_MAX)


@attrs.frozen(slots=True)
class BatchMetadata:
    """kafka.log.BatchMetadata."""

    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


@attrs.frozen(slots=True)
class ProducerBatch:
    """What the state needs of one record batch (its header fields, where the log put it and, for a control
    batch, its marker: None for an empty control batch or one of an unknown type)."""

    producer_id: int
    producer_epoch: int
    base_sequence: int
    last_offset_delta: int
    base_offset: int
    max_timestamp: int
    is_transactional: bool = False
    is_control: bool = False
    marker: EndTransactionMarker | None = None

    @property
    def last_seq(self) -> int:
        return increment_sequence(self.base_sequence, self.last_offset_delta)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta


@attrs.frozen(slots=True)
class CompletedTxn:
    """kafka.log.CompletedTxn: a transaction a marker at ``last_offset`` ended."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


@attrs.define(slots=True)
class TxnMetadata:
    """kafka.log.TxnMetadata: an ongoing transaction (``last_offset`` None) or one completed whose marker the high
    watermark has not passed yet."""

    producer_id: int
    first_offset: int
    last_offset: int | None = None


class ProducerStateEntry:
    """kafka.log.ProducerStateEntry: a producer's epoch, its last batches, its coordinator's epoch, the time of
    its last append and its open transaction's first offset (None: none open)."""

    __slots__ = ("producer_id", "producer_epoch", "batches", "coordinator_epoch", "last_timestamp",
                 "current_txn_first_offset", "last_marker_offset")

    def __init__(self, producer_id: int, producer_epoch: int = NO_PRODUCER_EPOCH,
                 batches: Iterable[BatchMetadata] = (), coordinator_epoch: int = NO_COORDINATOR_EPOCH,
                 last_timestamp: int | None = None, current_txn_first_offset: int | None = None,
                 last_marker_offset: int = -1) -> None:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.batches: deque[BatchMetadata] = deque(batches, maxlen=NUM_BATCHES_TO_RETAIN)
        self.coordinator_epoch = coordinator_epoch
        self.last_timestamp = (self.batches[-1].timestamp if self.batches else NO_TIMESTAMP) \
            if last_timestamp is None else last_timestamp
        self.current_txn_first_offset = current_txn_first_offset
        # beyond 2.6.3 (in memory only, -1 when unknown): the offset of the producer's last transaction marker
        # here, so a batch of a transaction that marker ended is never a duplicate of a later one (see
        # find_duplicate_batch)
        self.last_marker_offset = last_marker_offset

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def last_offset(self) -> int:
        """ProducerStateEntry.lastDataOffset (-1: only markers known)."""
        return self.batches[-1].last_offset if self.batches else -1

    def maybe_update_producer_epoch(self, epoch: int) -> None:
        """ProducerStateEntry.maybeUpdateProducerEpoch: a new epoch forgets the old epoch's batches."""
        if epoch != self.producer_epoch:
            self.batches.clear()
            self.producer_epoch = epoch

    def add_batch(self, epoch: int, metadata: BatchMetadata) -> None:
        """ProducerStateEntry.addBatch."""
        self.maybe_update_producer_epoch(epoch)
        self.batches.append(metadata)
        self.last_timestamp = metadata.timestamp

    def find_duplicate_batch(self, batch: ProducerBatch) -> BatchMetadata | None:
        """ProducerStateEntry.findDuplicateBatch: same epoch and exactly the same sequence range, and (beyond
        2.6.3) not a batch of a transaction that has ended here since.

        A client retries a batch only while its transaction is open: it cannot commit before every batch is
        answered, and Java's producer bumps its epoch when it aborts with one unanswered (KIP-360). librdkafka does
        not always: after aborting with a batch whose send timed out it has re-sent the same sequences, under the
        same epoch, with the next transaction's records. Kafka takes those for a retry of the aborted batch,
        answers NONE and appends nothing, so the next transaction commits without them (`kactor chaos` seed 8,
        docs/kafka-2.6-departures.md). Not a duplicate, the batch is checked as any other and is answered
        OUT_OF_ORDER_SEQUENCE_NUMBER, on which the client aborts and bumps its epoch."""
        if batch.producer_epoch != self.producer_epoch:
            return None
        last_seq = batch.last_seq
        for metadata in self.batches:
            if metadata.first_seq == batch.base_sequence and metadata.last_seq == last_seq:
                return metadata if metadata.last_offset > self.last_marker_offset else None
        return None

    def update(self, next_entry: ProducerStateEntry) -> None:
        """ProducerStateEntry.update: a prepared entry applied."""
        self.maybe_update_producer_epoch(next_entry.producer_epoch)
        for metadata in next_entry.batches:
            self.batches.append(metadata)
        self.coordinator_epoch = next_entry.coordinator_epoch
        self.current_txn_first_offset = next_entry.current_txn_first_offset
        self.last_timestamp = next_entry.last_timestamp
        self.last_marker_offset = next_entry.last_marker_offset

    def copy(self) -> ProducerStateEntry:
        return ProducerStateEntry(self.producer_id, self.producer_epoch, self.batches, self.coordinator_epoch,
                                  self.last_timestamp, self.current_txn_first_offset, self.last_marker_offset)


class VerificationGuard:
    """3.6's verification guard: a fresh object per verification, equal only to itself, so a verification answered
    for one incarnation of the producer's state entry is never taken for another's (the ABA case of KAFKA-14884)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"VerificationGuard@{id(self):x}"


@attrs.define(slots=True)
class VerificationStateEntry:
    """storage's VerificationStateEntry (Kafka 3.6): the guard of a producer's transaction being verified here, kept
    until the producer's first transactional append or an end marker, the time it was made (unverified entries
    expire as producers do) and the lowest sequence and latest epoch seen while verifying."""

    timestamp: int
    lowest_sequence: int
    epoch: int
    verification_guard: VerificationGuard = attrs.Factory(VerificationGuard)

    def maybe_update_lowest_sequence_and_epoch(self, incoming_sequence: int, incoming_epoch: int) -> None:
        """VerificationStateEntry.maybeUpdateLowestSequenceAndEpoch: a lower sequence of the same epoch, or any
        sequence of a newer epoch, becomes the one higher sequences may not overtake."""
        if incoming_epoch == self.epoch and incoming_sequence < self.lowest_sequence:
            self.lowest_sequence = incoming_sequence
        if incoming_epoch > self.epoch:
            self.epoch = incoming_epoch
            self.lowest_sequence = incoming_sequence


@attrs.define(slots=True)
class ProducerAppendInfos:
    """The ProducerAppendInfos of one append, not yet applied: each producer's updated entry, the transactions its
    batches opened, and those its markers completed (in order)."""

    entries: dict[int, ProducerStateEntry] = attrs.Factory(dict)
    started: list[TxnMetadata] = attrs.Factory(list)
    completed: list[CompletedTxn] = attrs.Factory(list)
    # producers that wrote a transactional batch or a marker: their verification entries end (UnifiedLog
    # .updateProducers' clearVerificationStateEntry)
    transactional: set[int] = attrs.Factory(set)

    def __bool__(self) -> bool:
        return bool(self.entries)


class ProducerStateManager:
    """kafka.log.ProducerStateManager (the snapshot files are the Log's)."""

    def __init__(self) -> None:
        self.producers: dict[int, ProducerStateEntry] = {}
        # first offset -> transaction, each dict in offset order (transactions open in offset order)
        self.ongoing_txns: dict[int, TxnMetadata] = {}
        self.unreplicated_txns: dict[int, TxnMetadata] = {}
        self.verification_states: dict[int, VerificationStateEntry] = {}

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        return self.producers.get(producer_id)

    def find_duplicate(self, batch: ProducerBatch) -> BatchMetadata | None:
        """Log.analyzeAndValidateProducerState's duplicate check for a client batch."""
        entry = self.producers.get(batch.producer_id)
        return entry.find_duplicate_batch(batch) if entry is not None else None

    def prepare(self, batches: Iterable[ProducerBatch], origin: str) -> ProducerAppendInfos:
        """ProducerAppendInfo.append for each batch (offsets already assigned): the updated entries, opened and
        completed transactions, not yet applied. Raises ApiError for what ``origin`` checks
        (OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED) and INVALID_TXN_STATE
        for a non-transactional batch inside a transaction."""
        infos = ProducerAppendInfos()
        for batch in batches:
            pid = batch.producer_id
            current = self.producers.get(pid)
            entry = infos.entries.get(pid)
            if entry is None:
                # ProducerAppendInfo's updatedEntry: the current epoch, coordinator epoch, last timestamp and open
                # transaction, none of its batches yet
                entry = infos.entries[pid] = ProducerStateEntry(pid) if current is None else ProducerStateEntry(
                    pid, current.producer_epoch, (), current.coordinator_epoch, current.last_timestamp,
                    current.current_txn_first_offset, current.last_marker_offset)
            if batch.is_transactional or batch.is_control:
                infos.transactional.add(pid)
            if batch.is_control:
                if batch.marker is not None:  # an empty control batch: its transaction was cleaned away
                    infos.completed.append(self._append_end_txn_marker(batch, entry, infos, origin))
                continue
            self._check_producer_epoch(batch.producer_epoch, batch.base_offset, entry, origin)
            if origin == CLIENT:
                self._check_verifying_sequence(batch, self.verification_states.get(pid))
                self._check_sequence(batch, current, entry)
            entry.add_batch(batch.producer_epoch, BatchMetadata(batch.base_sequence, batch.last_seq,
                                                                batch.base_offset, batch.last_offset,
                                                                batch.max_timestamp))
            if entry.current_txn_first_offset is not None and not batch.is_transactional:
                raise ApiError(Errors.INVALID_TXN_STATE,
                               f"Expected transactional write from producer {pid} at offset {batch.base_offset}")
            if entry.current_txn_first_offset is None and batch.is_transactional:
                entry.current_txn_first_offset = batch.base_offset
                infos.started.append(TxnMetadata(pid, batch.base_offset))
        return infos

    @staticmethod
    def _check_producer_epoch(epoch: int, offset: int, entry: ProducerStateEntry, origin: str) -> None:
        """ProducerAppendInfo.checkProducerEpoch: an older epoch than the producer's is fenced, except in a
        replica's append (Kafka only warns)."""
        if epoch < entry.producer_epoch and origin != REPLICATION:
            raise ApiError(Errors.INVALID_PRODUCER_EPOCH,
                           f"Producer's epoch at offset {offset} is {epoch}, which is smaller than the last seen "
                           f"epoch {entry.producer_epoch}")

    def _append_end_txn_marker(self, batch: ProducerBatch, entry: ProducerStateEntry, infos: ProducerAppendInfos,
                               origin: str) -> CompletedTxn:
        """ProducerAppendInfo.appendEndTxnMarker: the marker completes the producer's open transaction (a marker
        with none open completes an empty one at its own offset)."""
        marker = batch.marker
        assert marker is not None
        offset = batch.base_offset
        self._check_producer_epoch(batch.producer_epoch, offset, entry, origin)
        if entry.coordinator_epoch > marker.coordinator_epoch and origin != REPLICATION:
            raise ApiError(Errors.TRANSACTION_COORDINATOR_FENCED,
                           f"Invalid coordinator epoch for producerId {batch.producer_id} at offset {offset}: "
                           f"{marker.coordinator_epoch} (zombie), {entry.coordinator_epoch} (current)")
        first_offset = entry.current_txn_first_offset
        if first_offset is None:
            first_offset = offset
            infos.started.append(TxnMetadata(batch.producer_id, offset))
        entry.maybe_update_producer_epoch(batch.producer_epoch)
        entry.current_txn_first_offset = None
        entry.coordinator_epoch = marker.coordinator_epoch
        entry.last_timestamp = batch.max_timestamp
        entry.last_marker_offset = offset
        return CompletedTxn(batch.producer_id, first_offset, offset, marker.is_abort)

    @staticmethod
    def _check_verifying_sequence(batch: ProducerBatch, verifying: VerificationStateEntry | None) -> None:
        """ProducerAppendInfo.checkSequence's first rule (3.6): while the producer is being verified, no sequence
        above the lowest one seen meanwhile (an earlier batch failed verification and will be retried)."""
        if verifying is not None and batch.base_sequence > verifying.lowest_sequence:
            raise ApiError(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER,
                           f"Out of order sequence number for producer {batch.producer_id} at offset "
                           f"{batch.base_offset}: {batch.base_sequence} (incoming seq. number), "
                           f"{verifying.lowest_sequence} (earliest seen sequence)")

    @staticmethod
    def _check_sequence(batch: ProducerBatch, current: ProducerStateEntry | None,
                        updated: ProducerStateEntry) -> None:
        """ProducerAppendInfo.checkSequence (client appends), as in 2.6.3."""
        epoch, first_seq = batch.producer_epoch, batch.base_sequence
        if epoch != updated.producer_epoch:
            # a new epoch starts at sequence 0, unless the partition knows no epoch of the producer (KIP-360, 2.5+):
            # its state went with retention, DeleteRecords or expiry, and the producer just continues
            if first_seq != 0 and updated.producer_epoch != NO_PRODUCER_EPOCH:
                raise ApiError(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER,
                               f"Invalid sequence number for new epoch of producer {batch.producer_id} at offset "
                               f"{batch.base_offset}: {epoch} (request epoch), {first_seq} (seq. number), "
                               f"{updated.producer_epoch} (current producer epoch)")
            return
        if updated.batches:
            current_last_seq = updated.last_seq
        elif current is not None and epoch == current.producer_epoch:
            current_last_seq = current.last_seq
        else:
            current_last_seq = NO_SEQUENCE
        # "If there is no current producer epoch (possibly because all producer records have been deleted due to
        # retention or the DeleteRecords API) accept writes with any sequence number"
        current_epoch = current.producer_epoch if current is not None else NO_PRODUCER_EPOCH
        if current_epoch != NO_PRODUCER_EPOCH and not in_sequence(current_last_seq, first_seq):
            raise ApiError(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER,
                           f"Out of order sequence number for producerId {batch.producer_id}: {first_seq} "
                           f"(incoming seq. number), {current_last_seq} (current end sequence number)")

    def update(self, infos: ProducerAppendInfos) -> None:
        """ProducerStateManager.update for each prepared entry: applied, the transactions it opened ongoing."""
        for pid, entry in infos.entries.items():
            current = self.producers.get(pid)
            if current is None:
                self.producers[pid] = entry
            else:
                current.update(entry)
        for txn in infos.started:
            self.ongoing_txns[txn.first_offset] = txn
        for pid in infos.transactional:
            self.verification_states.pop(pid, None)

    # ----------------------------------------------------------------------- KIP-890 part 1: verification (3.6)

    def has_ongoing_transaction(self, producer_id: int) -> bool:
        """UnifiedLog.hasOngoingTransaction: the producer has a transaction open in this partition."""
        entry = self.producers.get(producer_id)
        return entry is not None and entry.current_txn_first_offset is not None

    def maybe_create_verification_state_entry(self, producer_id: int, sequence: int, epoch: int,
                                              now_ms: int) -> VerificationStateEntry:
        """ProducerStateManager.maybeCreateVerificationStateEntry: the producer's entry (made now if it has none),
        its lowest sequence and epoch updated."""
        entry = self.verification_states.get(producer_id)
        if entry is None:
            entry = self.verification_states[producer_id] = VerificationStateEntry(now_ms, sequence, epoch)
        entry.maybe_update_lowest_sequence_and_epoch(sequence, epoch)
        return entry

    def maybe_start_transaction_verification(self, producer_id: int, sequence: int, epoch: int,
                                             now_ms: int) -> VerificationGuard | None:
        """UnifiedLog.maybeStartTransactionVerification: None when the producer's transaction is already open here
        (nothing to verify), else the guard the append must bring back once the coordinator has verified."""
        if self.has_ongoing_transaction(producer_id):
            return None
        return self.maybe_create_verification_state_entry(producer_id, sequence, epoch, now_ms).verification_guard

    def verification_guard(self, producer_id: int) -> VerificationGuard | None:
        """UnifiedLog.verificationGuard."""
        entry = self.verification_states.get(producer_id)
        return None if entry is None else entry.verification_guard

    def check_verification(self, producer_id: int, is_transactional: bool, request_guard: VerificationGuard | None,
                           verification_enabled: bool) -> None:
        """UnifiedLog.analyzeAndValidateProducerState's check of a client's batch (3.6): a transactional batch of a
        producer with no transaction open here needs the guard of its verification, still current; else
        INVALID_TXN_STATE ("Record was not part of an ongoing transaction") and nothing is appended. The shard runs
        this check and the append in one step, as Kafka's log lock does."""
        if not is_transactional or not verification_enabled or self.has_ongoing_transaction(producer_id):
            return
        if request_guard is None or request_guard is not self.verification_guard(producer_id):
            raise ApiError(Errors.INVALID_TXN_STATE, "Record was not part of an ongoing transaction")

    # ------------------------------------------------------------------------------------------ transactions

    def last_stable_offset(self, completed: CompletedTxn) -> int:
        """ProducerStateManager.lastStableOffset(completedTxn): the first offset of the earliest transaction of
        another producer still open at the marker, else the offset after the marker (what the txnindex entry
        records).

        Beyond 2.6.3: a transaction opened after the marker does not count. Kafka asks after the whole append's
        producer state is applied, so a follower appending a marker and later batches in one fetch (or a leader
        recovering them) records the first offset of a transaction that began after the marker; the txnindex
        search (TransactionIndex.collectAbortedTxns) stops at the first entry whose last stable offset reaches the
        fetch's upper bound, so that too-high entry hid the next aborted transaction from read_committed Fetches
        (`kactor sim --txn-check` seed 2059: T1's abort at offset 1 recorded 4 after a power-loss restart, and
        T2's aborted values at 2-3 were answered with no aborted transaction)."""
        return min((txn.first_offset for txn in self.ongoing_txns.values()
                    if txn.producer_id != completed.producer_id and txn.first_offset < completed.last_offset),
                   default=completed.last_offset + 1)

    def complete_txn(self, completed: CompletedTxn) -> None:
        """ProducerStateManager.completeTxn: the transaction is no longer ongoing, but unstable until the high
        watermark passes its marker."""
        txn = self.ongoing_txns.pop(completed.first_offset, None)
        if txn is None:
            raise ValueError(f"Attempted to complete transaction {completed} on partition which was not started")
        txn.last_offset = completed.last_offset
        self.unreplicated_txns[completed.first_offset] = txn
        self.unreplicated_txns = dict(sorted(self.unreplicated_txns.items()))

    def on_high_watermark_updated(self, high_watermark: int) -> None:
        """ProducerStateManager.onHighWatermarkUpdated: completed transactions whose marker is below it are stable."""
        if self.unreplicated_txns:
            self.unreplicated_txns = {o: t for o, t in self.unreplicated_txns.items()
                                      if t.last_offset is None or t.last_offset >= high_watermark}

    @property
    def first_unstable_offset(self) -> int | None:
        """ProducerStateManager.firstUnstableOffset: the first offset of the earliest ongoing or unreplicated
        transaction."""
        first = [next(iter(d)) for d in (self.ongoing_txns, self.unreplicated_txns) if d]
        return min(first) if first else None

    # ------------------------------------------------------------------------------------- loading, truncation

    def load_snapshot(self, entries: Iterable[ProducerStateEntry]) -> None:
        """ProducerStateManager.loadFromSnapshot → loadProducerEntry: each open transaction is ongoing again."""
        self.producers = {}
        self.ongoing_txns = {}
        self.unreplicated_txns = {}
        for e in entries:
            self.producers[e.producer_id] = e
            if e.current_txn_first_offset is not None:
                self.ongoing_txns[e.current_txn_first_offset] = TxnMetadata(e.producer_id, e.current_txn_first_offset)
        self.ongoing_txns = dict(sorted(self.ongoing_txns.items()))

    def load_batches(self, batches: Iterable[ProducerBatch]) -> list[CompletedTxn]:
        """Batches re-read from the log (Log.loadProducersFromLog / LogSegment.updateProducerState): no checks; the
        transactions their markers complete, in order."""
        completed: list[CompletedTxn] = []
        for batch in batches:
            infos = self.prepare((batch,), REPLICATION)
            self.update(infos)
            for txn in infos.completed:
                completed.append(txn)
                self.complete_txn(txn)
        return completed

    def load_batch(self, batch: ProducerBatch) -> list[CompletedTxn]:
        return self.load_batches((batch,))

    def truncate_head(self, log_start_offset: int) -> None:
        """ProducerStateManager.truncateHead: producers whose last data batch is below the new log start are
        forgotten (their open transactions too), as are completed transactions whose marker is below it."""
        kept = {}
        for pid, e in self.producers.items():
            # ProducerStateEntry.removeBatchesOlderThan, then isProducerRetained
            while e.batches and e.batches[0].last_offset < log_start_offset:
                e.batches.popleft()
            if e.last_offset >= log_start_offset:
                kept[pid] = e
        evicted = self.producers.keys() - kept.keys()
        self.producers = kept
        if evicted:
            self.ongoing_txns = {o: t for o, t in self.ongoing_txns.items() if t.producer_id not in evicted}
        self.unreplicated_txns = {o: t for o, t in self.unreplicated_txns.items()
                                  if t.last_offset is None or t.last_offset >= log_start_offset}

    def remove_expired_producers(self, now_ms: int, expiration_ms: int = PRODUCER_ID_EXPIRATION_MS) -> None:
        """ProducerStateManager.removeExpiredProducers: producers with no open transaction whose last append is
        ``expiration_ms`` (transactional.id.expiration.ms) or longer ago are forgotten, so the state does not grow
        with every producer that ever wrote."""
        self.producers = {pid: e for pid, e in self.producers.items()
                          if e.current_txn_first_offset is not None or now_ms - e.last_timestamp < expiration_ms}
        # 3.6: verification entries never followed by an append go the same way
        if self.verification_states:
            self.verification_states = {pid: v for pid, v in self.verification_states.items()
                                        if now_ms - v.timestamp < expiration_ms}

    def truncation_affects(self, offset: int) -> bool:
        """Whether truncating the log at ``offset`` may remove a batch or a marker some state remembers (a
        producer that ever had a marker is assumed to: its entry does not say where its last marker was)."""
        return (bool(self.ongoing_txns) or bool(self.unreplicated_txns)
                or any(entry.last_offset >= offset or entry.coordinator_epoch != NO_COORDINATOR_EPOCH
                       for entry in self.producers.values()))

    def truncate(self) -> None:
        """ProducerStateManager.truncate: forget everything (the log reloads it)."""
        self.producers.clear()
        self.verification_states.clear()
        self.ongoing_txns.clear()
        self.unreplicated_txns.clear()


# ------------------------------------------------------------------------------------------------------- snapshots

SNAPSHOT_FILE_SUFFIX = ".snapshot"
PRODUCER_SNAPSHOT_VERSION = 1
# ProducerSnapshotEntrySchema: producer_id int64, epoch int16, last_sequence int32, last_offset int64, offset_delta
# int32, timestamp int64, coordinator_epoch int32, current_txn_first_offset int64
_SNAPSHOT_ENTRY = struct.Struct(">qhiqiqiq")
_SNAPSHOT_HEAD = struct.Struct(">hIi")  # version, crc (of what follows it), entry count


class CorruptSnapshotError(Exception):
    """Kafka's CorruptSnapshotException: the snapshot is ignored (deleted) and the log re-read instead."""


def snapshot_file_name(offset: int) -> str:
    """ProducerStateManager's ``%020d.snapshot``, named for the log end offset it was taken at."""
    return f"{offset:020d}{SNAPSHOT_FILE_SUFFIX}"


def encode_snapshot(producers: Iterable[ProducerStateEntry]) -> bytes:
    """ProducerStateManager.writeSnapshot: each producer's epoch, LAST batch (Kafka keeps only that one; -1s for a
    producer known only by its markers), last timestamp, coordinator epoch and open transaction's first offset
    (-1: none), the CRC-32C over the entries array."""
    entries = list(producers)
    body = bytearray(struct.pack(">i", len(entries)))
    for e in entries:
        if e.batches:
            last = e.batches[-1]
            last_seq, last_offset, delta = last.last_seq, last.last_offset, last.last_offset - last.first_offset
        else:
            last_seq, last_offset, delta = NO_SEQUENCE, -1, 0
        txn = e.current_txn_first_offset
        body += _SNAPSHOT_ENTRY.pack(e.producer_id, e.producer_epoch, last_seq, last_offset, delta, e.last_timestamp,
                                     e.coordinator_epoch, -1 if txn is None else txn)
    return struct.pack(">hI", PRODUCER_SNAPSHOT_VERSION, crc32c(bytes(body))) + bytes(body)


def decode_snapshot(data: bytes) -> list[ProducerStateEntry]:
    """ProducerStateManager.readSnapshot; CorruptSnapshotError on a wrong version, CRC or length."""
    if len(data) < _SNAPSHOT_HEAD.size:
        raise CorruptSnapshotError(f"snapshot of {len(data)} bytes")
    version, crc, count = _SNAPSHOT_HEAD.unpack_from(data)
    if version != PRODUCER_SNAPSHOT_VERSION:
        raise CorruptSnapshotError(f"snapshot version {version}")
    if crc32c(data[6:]) != crc:
        raise CorruptSnapshotError("snapshot CRC mismatch")
    if count < 0 or len(data) != _SNAPSHOT_HEAD.size + count * _SNAPSHOT_ENTRY.size:
        raise CorruptSnapshotError(f"snapshot of {len(data)} bytes for {count} entries")
    out = []
    for pid, epoch, last_seq, last_offset, delta, ts, coordinator_epoch, txn in _SNAPSHOT_ENTRY.iter_unpack(
            data[_SNAPSHOT_HEAD.size:]):
        batches = []
        if last_offset >= 0:
            first_seq = last_seq - delta if last_seq >= delta else INT_MAX - (delta - last_seq) + 1
            batches.append(BatchMetadata(first_seq, last_seq, last_offset - delta, last_offset, ts))
        out.append(ProducerStateEntry(pid, epoch, batches, coordinator_epoch, ts, txn if txn >= 0 else None))
    return out
