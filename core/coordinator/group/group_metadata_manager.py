"""GroupMetadataManager (kafka.coordinator.group): the cache of groups and offsets of the ``__consumer_offsets``
partitions this broker leads, writing them to those partitions and loading them back.

The manager does no I/O. It writes through the `AppendToLog` ask (ReplicaManager.appendRecords with acks=-1 and
offsets.commit.timeout.ms, answered with the partition's error) and loads through the `ReadLogStart` ask (the log's
start offset, Log.logStartOffset) and the `ReadLog` ask (Log.read from an offset towards the log end, answered with
the bytes read and the log's end offset); the actor turns them into requests to the replica manager.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

import attrs

from core.coordinator.coordinator_loader import LoadFailed, UnreadableBatchError, load_log
from core.coordinator.group.group_metadata import GroupMetadata, GroupState
from core.coordinator.group.message_formats import (
    FormatError,
    GroupMetadataKey,
    OffsetAndMetadata,
    OffsetKey,
    group_metadata_key,
    group_metadata_value,
    offset_commit_key,
    offset_commit_value,
    read_group_message_value,
    read_message_key,
    read_offset_message_value,
    records_batch,
)
from core.effects import Proc
from messages import message
from messages.common import Errors, TopicPartition
from messages.replication import GROUP_METADATA_TOPIC_NAME
from protocol.errors import ProtocolError
from protocol.records import CONTROL_BIT, TRANSACTIONAL_BIT, iter_batches, read_records

log = logging.getLogger("kactor.coordinator")

LOAD_BUFFER_SIZE = 5 * 1024 * 1024  # offsets.load.buffer.size


@message
class AppendToLog:
    """Ask: append ``records`` (one batch) to __consumer_offsets-``partition`` as its leader (Kafka's appendRecords
    with internalTopicsAllowed, origin Coordinator) with ``acks`` -1 (stores) or 0 (tombstones: the local append's
    result only); resumed with an `Appended`."""

    partition: int
    records: bytes
    timeout_ms: int
    acks: int = -1
    # a TxnOffsetCommit's append (Kafka 3.7's appendForGroup with its verificationGuards): the transactional id, and
    # the token of the `VerifyTxnOffsetCommit` that verified its transaction (0: none)
    transactional_id: str | None = None
    verification_token: int = 0


@message
class VerifyTxnOffsetCommit:
    """Ask (Kafka 3.7, KAFKA-15449): ReplicaManager.maybeStartTransactionVerificationForPartition of
    __consumer_offsets-``partition`` for the transaction of ``records``' producer (a transactional batch header: its id
    and epoch) under ``transactional_id``, as GroupCoordinator.handleTxnCommitOffsets asks it before anything of the
    commit is done: the leader makes the producer's verification guard and asks the transaction coordinator whether
    the partition is in the transaction; the append that follows names ``token`` to bring the guard back. Resumed
    with an `Appended` carrying the verification's error (NONE: verified, already open, or verification off)."""

    partition: int
    transactional_id: str
    records: bytes
    token: int
    timeout_ms: int


@message
class Appended:
    """The partition's answer to an `AppendToLog`: its error, and the offset the batch was appended at
    (PartitionResponse.baseOffset; -1 on an error)."""

    error: Errors
    base_offset: int = -1


@message
class ReadLog:
    """Ask: read __consumer_offsets-``partition``'s log from ``offset`` (up to LOAD_BUFFER_SIZE bytes, whole
    batches, up to the log end); resumed with a LogRead."""

    partition: int
    offset: int


@message
class ReadLogStart:
    """Ask: the log start offset of __consumer_offsets-``partition`` (ListOffsets EARLIEST on this broker's replica);
    resumed with a LogStart."""

    partition: int


@message
class Fork:
    """Run ``proc`` as a procedure of its own (a callback Kafka runs later): the current one resumes at once."""

    proc: object


def java_string_hash(s: str) -> int:
    """java.lang.String.hashCode: s[0]*31^(n-1) + ... over the UTF-16 code units, in 32-bit arithmetic."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_for(group_id: str, num_partitions: int) -> int:
    """GroupMetadataManager.partitionFor: Utils.abs(groupId.hashCode) % groupMetadataTopicPartitionCount, where
    Utils.abs(Integer.MIN_VALUE) is 0."""
    h = java_string_hash(group_id)
    return (0 if h == -(1 << 31) else abs(h)) % num_partitions


def _store_error(error: Errors, offsets: bool) -> Errors:
    """The error storeGroup / storeOffsets answer for the append's error."""
    if error in (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_ENOUGH_REPLICAS,
                 Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND):
        return Errors.COORDINATOR_NOT_AVAILABLE
    if error in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.KAFKA_STORAGE_ERROR):
        return Errors.NOT_COORDINATOR
    if error is Errors.REQUEST_TIMED_OUT and not offsets:
        return Errors.REBALANCE_IN_PROGRESS
    if error in (Errors.MESSAGE_TOO_LARGE, Errors.RECORD_LIST_TOO_LARGE):
        return Errors.INVALID_COMMIT_OFFSET_SIZE if offsets else Errors.UNKNOWN_SERVER_ERROR
    if error is Errors.NETWORK_EXCEPTION and offsets:
        # Kafka 3.7.1 (KAFKA-16386): a TxnOffsetCommit whose verification could not reach the transaction
        # coordinator; retried by every client without a coordinator lookup
        return Errors.COORDINATOR_LOAD_IN_PROGRESS
    return error


def maybe_convert_offset_commit_error(error: Errors) -> Errors:
    """GroupMetadataManager.maybeConvertOffsetCommitError (Kafka 3.7.1): the error an offset commit answers for its
    append's or its verification's (`core.coordinator.transaction.verification.coordinator_verification_error`):
    NOT_ENOUGH_REPLICAS (the transaction coordinator's retriable errors) COORDINATOR_NOT_AVAILABLE,
    NETWORK_EXCEPTION COORDINATOR_LOAD_IN_PROGRESS; INVALID_TXN_STATE, INVALID_PRODUCER_ID_MAPPING and
    INVALID_PRODUCER_EPOCH as they are."""
    return _store_error(error, offsets=True)


NO_PRODUCER_ID = -1  # RecordBatch.NO_PRODUCER_ID
NO_PRODUCER_EPOCH = -1
CONTROL_COMMIT = 1  # ControlRecordType.COMMIT (ABORT is 0)


# an offset as loaded: the offset of the batch it was read in (appendedBatchOffset), and the offset
_BatchOffset = tuple[int, OffsetAndMetadata]


@attrs.define
class _Loaded:
    """What doLoadGroupsAndOffsets has read so far of one partition."""

    offsets: dict[str, dict[TopicPartition, _BatchOffset]] = attrs.Factory(dict)
    groups: dict[str, object] = attrs.Factory(dict)  # group id → GroupRecord
    removed_groups: set[str] = attrs.Factory(set)
    # producer id → group id → the transactional offsets no marker has completed yet
    pending: dict[int, dict[str, dict[TopicPartition, _BatchOffset]]] = attrs.Factory(dict)


def control_record_type(key: bytes | None) -> int | None:
    """ControlRecordType.parse: a control record's key is int16 version, int16 type (None: not one)."""
    if key is None or len(key) < 4:
        return None
    return int.from_bytes(key[2:4], "big", signed=True)


class GroupMetadataManager:
    """The groups of the partitions this broker coordinates, and which partitions those are."""

    def __init__(self, broker_id: int, num_partitions: int, offset_commit_timeout_ms: int,
                 offset_metadata_max_bytes: int, now_ms: Callable[[], float]) -> None:
        self.broker_id = broker_id
        self.num_partitions = num_partitions  # groupMetadataTopicPartitionCount
        self.offset_commit_timeout_ms = offset_commit_timeout_ms
        self.offset_metadata_max_bytes = offset_metadata_max_bytes
        self.now_ms = now_ms
        self.groups: dict[str, GroupMetadata] = {}
        self.owned_partitions: set[int] = set()
        self.loading_partitions: dict[int, int] = {}  # partition → the load under way (or failed)
        self.failed_loads: set[int] = set()  # loading partitions whose load failed: the next election loads again
        # loads that failed (group-coordinator-metrics partition-load-error-total)
        self.partition_load_errors = 0
        self._loads = 0
        self._verifications = 0  # the tokens of VerifyTxnOffsetCommit
        # openGroupsForProducer: producer id → the groups it has transactional offsets pending in
        self.open_groups_for_producer: dict[int, set[str]] = {}

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.num_partitions)

    def is_group_local(self, group_id: str) -> bool:
        return self.partition_for(group_id) in self.owned_partitions

    def is_group_loading(self, group_id: str) -> bool:
        return self.partition_for(group_id) in self.loading_partitions

    def is_loading(self) -> bool:
        return bool(self.loading_partitions)

    def group_not_exists(self, group_id: str) -> bool:
        """GroupMetadataManager.groupNotExists: this broker coordinates the group and has no live group of it."""
        group = self.groups.get(group_id)
        return self.is_group_local(group_id) and (group is None or group.is_(GroupState.DEAD))

    def add_group(self, group: GroupMetadata) -> GroupMetadata:
        """GroupMetadataManager.addGroup: the cached group of that id if there is one, else ``group``."""
        return self.groups.setdefault(group.group_id, group)

    # -- storing --------------------------------------------------------------------------------------------------
    def store_group(self, group: GroupMetadata, assignment: dict[str, bytes]) -> Proc[Errors]:
        """GroupMetadataManager.storeGroup: the group's metadata record, appended with acks=-1; the error the
        caller answers with."""
        partition = self.partition_for(group.group_id)
        if partition not in self.owned_partitions:
            return Errors.NOT_COORDINATOR
        now = int(self.now_ms())
        batch = records_batch([(group_metadata_key(group.group_id),
                                group_metadata_value(group.to_record(assignment)))], now)
        appended: Appended = yield AppendToLog(partition, batch, self.offset_commit_timeout_ms)
        error = appended.error
        if error is not Errors.NONE:
            log.warning("Failed to write group metadata for %s (generation %d): %s", group.group_id,
                        group.generation_id, error.name)
        return _store_error(error, offsets=False)

    def verify_transaction(self, group_id: str, transactional_id: str, producer_id: int, producer_epoch: int
                           ) -> Proc[tuple[Errors, int]]:
        """The verification GroupCoordinator.handleTxnCommitOffsets starts before anything else of a TxnOffsetCommit
        (Kafka 3.7, KAFKA-15449, KIP-890 part 1): the group's ``__consumer_offsets`` partition must be in the
        producer's ongoing transaction (or the transaction already open there). The verification's error as the
        replica manager gives it (`maybe_convert_offset_commit_error` maps it for the answer), and the token the
        append names (`store_offsets`' ``verification_token``)."""
        self._verifications += 1
        token = self._verifications
        header = records_batch([], int(self.now_ms()), producer_id, producer_epoch)
        verified: Appended = yield VerifyTxnOffsetCommit(self.partition_for(group_id), transactional_id, header, token,
                                                         self.offset_commit_timeout_ms)
        return verified.error, token

    def store_offsets(self, group: GroupMetadata, offsets: dict[TopicPartition, OffsetAndMetadata],
                      producer_id: int = NO_PRODUCER_ID, producer_epoch: int = NO_PRODUCER_EPOCH,
                      transactional_id: str | None = None, verification_token: int = 0
                      ) -> Proc[dict[TopicPartition, Errors]]:
        """GroupMetadataManager.storeOffsets: the offsets whose metadata fits offset.metadata.max.bytes, as one
        batch of offset commit records appended with acks=-1; each partition's error. With a producer id
        (TxnOffsetCommit) the batch is transactional (the producer's id and epoch, base sequence 0) and the offsets
        stay pending in the group until the transaction's marker (`handle_txn_completion`); its append names the
        transactional id and the token of the verification that preceded it (3.7: a batch opening a transaction on
        the partition is refused INVALID_TXN_STATE unless that verification's guard is still current)."""
        valid = {tp: om for tp, om in offsets.items()
                 if len(om.metadata.encode("utf-8")) <= self.offset_metadata_max_bytes}
        result = {tp: Errors.OFFSET_METADATA_TOO_LARGE for tp in offsets if tp not in valid}
        if not valid:
            return result
        partition = self.partition_for(group.group_id)
        if partition not in self.owned_partitions:
            return {tp: Errors.NOT_COORDINATOR for tp in offsets}
        now = int(self.now_ms())
        entries = [(offset_commit_key(group.group_id, tp), offset_commit_value(om)) for tp, om in valid.items()]
        txn = producer_id != NO_PRODUCER_ID
        if txn:
            batch = records_batch(entries, now, producer_id, producer_epoch)
            self.open_groups_for_producer.setdefault(producer_id, set()).add(group.group_id)
            group.prepare_txn_offset_commit(producer_id, valid)
        else:
            batch = records_batch(entries, now)
        appended: Appended = yield AppendToLog(partition, batch, self.offset_commit_timeout_ms,
                                               transactional_id=transactional_id if txn else None,
                                               verification_token=verification_token if txn else 0)
        error = appended.error
        if error is Errors.NONE and not group.is_(GroupState.DEAD):
            for tp, om in valid.items():
                if txn:
                    group.on_txn_offset_commit_append(producer_id, tp, appended.base_offset, om)
                else:
                    group.on_offset_commit_append(tp, appended.base_offset, om)
        elif txn and not group.is_(GroupState.DEAD):
            for tp, om in valid.items():
                group.fail_pending_txn_offset_commit(producer_id, tp, om)
            if producer_id not in group.pending_transactional_offset_commits:  # removeProducerGroup
                self._remove_producer_group(producer_id, group.group_id)
        mapped = maybe_convert_offset_commit_error(error)
        result.update({tp: mapped for tp in valid})
        return {tp: result[tp] for tp in offsets}

    def handle_txn_completion(self, producer_id: int, completed_partitions: set[int], is_commit: bool) -> list[str]:
        """GroupMetadataManager.handleTxnCompletion: a COMMIT / ABORT marker of ``producer_id`` was written to these
        __consumer_offsets partitions: its pending offsets in their groups are made committed (COMMIT) or dropped
        (ABORT). The entry point for the marker's effect (the WriteTxnMarkers leader side); the groups completed."""
        done = []
        open_groups = self.open_groups_for_producer.get(producer_id, set())
        for group_id in sorted(open_groups):
            if self.partition_for(group_id) not in completed_partitions:
                continue
            group = self.groups.get(group_id)
            if group is not None and not group.is_(GroupState.DEAD):
                group.complete_pending_txn_offset_commit(producer_id, is_commit)
                done.append(group_id)
            open_groups.discard(group_id)
        if not open_groups:
            self.open_groups_for_producer.pop(producer_id, None)
        return done

    def _remove_producer_group(self, producer_id: int, group_id: str) -> None:
        """removeProducerGroup: the producer has no offsets pending in the group any more."""
        group_ids = self.open_groups_for_producer.get(producer_id)
        if group_ids is not None:
            group_ids.discard(group_id)
            if not group_ids:
                del self.open_groups_for_producer[producer_id]

    def cleanup_group_metadata(self, groups: Iterable[GroupMetadata],
                               selector: Callable[[GroupMetadata], dict[TopicPartition, OffsetAndMetadata]]
                               ) -> Proc[tuple[int, list[GroupMetadata]]]:
        """GroupMetadataManager.cleanupGroupMetadata: ``selector`` removes offsets of each group; a group left Empty
        without offsets goes Dead; a Dead group leaves the cache. Each group's tombstones (its removed offsets, and
        its metadata once it had a generation) are appended as one batch with requiredAcks 0 — "even if the
        tombstone is lost, it will be appended again in the next purge cycle" — so a failed append is logged and
        nothing else. The number of offsets removed, and the groups that left the cache."""
        removed_count = 0
        gone = []
        for group in list(groups):
            removed = selector(group)
            if group.is_(GroupState.EMPTY) and not group.has_offsets():
                log.info("Group %s transitioned to Dead in generation %d", group.group_id, group.generation_id)
                group.transition_to(GroupState.DEAD, self.now_ms())
            partition = self.partition_for(group.group_id)
            if partition not in self.owned_partitions:
                log.info("BrokerId %d is no longer a coordinator for the group %s. Proceeding cleanup for other "
                         "alive groups", self.broker_id, group.group_id)
                continue
            entries: list[tuple[bytes, bytes | None]] = [(offset_commit_key(group.group_id, tp), None)
                                                         for tp in removed]
            if group.is_(GroupState.DEAD) and self.groups.get(group.group_id) is group:
                del self.groups[group.group_id]
                gone.append(group)
                if group.generation_id > 0:  # a group that only stores offsets never wrote its metadata
                    entries.append((group_metadata_key(group.group_id), None))
            if not entries:
                continue
            appended: Appended = yield AppendToLog(partition, records_batch(entries, int(self.now_ms())),
                                                   self.offset_commit_timeout_ms, acks=0)
            error = appended.error
            if error is Errors.NONE:
                removed_count += len(removed)
            else:
                log.error("Failed to append %d tombstones to %s-%d for expired/deleted offsets and/or metadata for "
                          "group %s: %s", len(entries), GROUP_METADATA_TOPIC_NAME, partition, group.group_id,
                          error.name)
        return removed_count, gone

    # -- loading --------------------------------------------------------------------------------------------------
    def load_groups_and_offsets(self, partition: int) -> Proc[list[GroupMetadata] | None]:
        """scheduleLoadGroupAndOffsets + doLoadGroupsAndOffsets: read the partition from its log start
        (log.logStartOffset: retention or DeleteRecords may have moved it above 0) to its log end, the last record of
        each key winning and tombstones removing, a transaction's marker (control batch) completing or dropping its
        pending offsets; the groups installed once the high watermark reaches that end (`await_committed`, beyond
        Kafka: no uncommitted record is acted on); None if the partition was given up meanwhile, or the load failed.
        Requests for its groups get COORDINATOR_LOAD_IN_PROGRESS until then.

        A load that fails — the log cannot be read, or holds a record that does not decode (2.6.3 throws there) —
        installs nothing: 2.6.3's loadGroupsAndOffsets logs the error and owns the partition anyway, its groups
        empty or half-read (committed offsets lost to their consumers). The failure is logged at ERROR with the
        partition and offset and counted (``partition_load_errors``); the partition stays loading until its next
        election loads it again."""
        name = f"{GROUP_METADATA_TOPIC_NAME}-{partition}"
        if partition in self.loading_partitions and partition not in self.failed_loads:
            log.info("Already loading offsets and group metadata from %s", name)
            return None
        self.failed_loads.discard(partition)
        log.info("Scheduling loading of offsets and group metadata from %s", name)
        started = self.now_ms()
        self._loads += 1
        load = self.loading_partitions[partition] = self._loads
        loaded = _Loaded()
        outcome = yield from load_log(partition, lambda: ReadLogStart(partition), lambda at: ReadLog(partition, at),
                                      lambda: self.loading_partitions.get(partition) == load,
                                      lambda records, at: self._read_batches(records, loaded, at))
        if outcome is None:
            return None
        if isinstance(outcome, LoadFailed):
            return self._load_failed(partition, outcome.offset, outcome.reason)
        del self.loading_partitions[partition]
        self.owned_partitions.add(partition)
        groups = self._install(loaded)
        # kactor has no scheduler thread: the load starts as the election arrives
        log.info("Finished loading offsets and group metadata from %s in %d milliseconds, of which 0 milliseconds "
                 "was spent in the scheduler.", name, int(self.now_ms() - started))
        return groups

    def _load_failed(self, partition: int, offset: int, reason: str) -> None:
        self.partition_load_errors += 1
        self.failed_loads.add(partition)
        log.error("Error loading offsets from %s-%d at offset %d: %s. Nothing of the partition is loaded: its groups "
                  "answer COORDINATOR_LOAD_IN_PROGRESS until it is loaded again at its next election",
                  GROUP_METADATA_TOPIC_NAME, partition, offset, reason)

    def _read_batches(self, records: bytes, loaded: _Loaded, offset: int) -> int | None:
        """The batches of one read (from ``offset``) applied to ``loaded``; the offset after the last (None: no
        batch). Raises `UnreadableBatchError` at the first batch that does not decode."""
        next_offset = None
        try:
            for batch in iter_batches(records):
                offset = batch.base_offset
                if batch.attributes & CONTROL_BIT:
                    # a transaction's marker: its offsets become committed (COMMIT) or go (ABORT)
                    records = read_records(batch)
                    pending = loaded.pending.pop(batch.producer_id, {})
                    if records and control_record_type(records[0].key) == CONTROL_COMMIT:
                        for group_id, offsets in pending.items():
                            group_offsets = loaded.offsets.setdefault(group_id, {})
                            for tp, (batch_offset, om) in offsets.items():
                                # olderThan: a plain commit appended after the transaction's offsets wins
                                if tp not in group_offsets or group_offsets[tp][0] < batch_offset:
                                    group_offsets[tp] = (batch_offset, om)
                else:
                    txn_producer = batch.producer_id if batch.attributes & TRANSACTIONAL_BIT else None
                    batch_records = read_records(batch)
                    # batchBaseOffset: the batch's first record's offset (the cleaner may have removed those before)
                    batch_offset = batch.base_offset + (batch_records[0].offset_delta if batch_records else 0)
                    for record in batch_records:
                        self._apply(record.key, record.value, loaded, batch_offset, txn_producer)
                next_offset = offset = batch.base_offset + batch.last_offset_delta + 1
        except (ProtocolError, FormatError) as e:
            raise UnreadableBatchError(offset, str(e)) from e
        return next_offset

    @staticmethod
    def _apply(key: bytes | None, value: bytes | None, loaded: _Loaded, batch_offset: int,
               txn_producer: int | None = None) -> None:
        if key is None:
            raise FormatError("Group metadata/offset entry key should not be null")
        k = read_message_key(key)
        if isinstance(k, OffsetKey):
            group_offsets = (loaded.offsets if txn_producer is None
                             else loaded.pending.setdefault(txn_producer, {})).setdefault(k.group, {})
            if value is None:
                group_offsets.pop(k.tp, None)
            else:
                group_offsets[k.tp] = (batch_offset, read_offset_message_value(value))
        elif isinstance(k, GroupMetadataKey):
            if value is None:
                loaded.groups.pop(k.group, None)
                loaded.removed_groups.add(k.group)
            else:
                loaded.groups[k.group] = read_group_message_value(value)
                loaded.removed_groups.discard(k.group)

    def _install(self, loaded: _Loaded) -> list[GroupMetadata]:
        """loadGroup for every group read, and an Empty group for offsets without group metadata."""
        now = self.now_ms()
        out = []
        pending_by_group: dict[str, dict[int, dict[TopicPartition, _BatchOffset]]] = {}
        for producer_id, groups in loaded.pending.items():
            for group_id, offsets in groups.items():
                if offsets:
                    pending_by_group.setdefault(group_id, {})[producer_id] = offsets
        ids = list(loaded.groups) + [g for g in loaded.offsets if g not in loaded.groups]
        ids += [g for g in pending_by_group if g not in loaded.groups and g not in loaded.offsets]
        for group_id in ids:
            record = loaded.groups.get(group_id)
            offsets = loaded.offsets.get(group_id, {})
            pending = pending_by_group.get(group_id, {})
            if record is None and not offsets and not pending:
                continue
            group = (GroupMetadata.from_record(group_id, record, now) if record is not None  # type: ignore[arg-type]
                     else GroupMetadata(group_id, GroupState.EMPTY, now))
            group.offsets = {tp: om for tp, (_, om) in offsets.items()}
            group.offset_batches = {tp: batch_offset for tp, (batch_offset, _) in offsets.items()}
            # loadGroup: the transactional offsets whose marker is not in the log yet stay pending (appended)
            for producer_id, txn_offsets in pending.items():
                group.pending_transactional_offset_commits[producer_id] = dict(txn_offsets)
                self.open_groups_for_producer.setdefault(producer_id, set()).add(group_id)
            self.groups[group_id] = group
            out.append(group)
        return out

    def remove_groups_for_partition(self, partition: int) -> list[GroupMetadata]:
        """removeGroupsForPartition: the partition is no longer ours; its groups leave the cache (returned, for
        onGroupUnloaded)."""
        name = f"{GROUP_METADATA_TOPIC_NAME}-{partition}"
        log.info("Scheduling unloading of offsets and group metadata from %s", name)
        self.loading_partitions.pop(partition, None)
        self.failed_loads.discard(partition)
        self.owned_partitions.discard(partition)
        gone = [g for gid, g in self.groups.items() if self.partition_for(gid) == partition]
        log.info("Finished unloading %s. Removed %d cached offsets and %d cached groups.", name,
                 sum(len(g.offsets) for g in gone), len(gone))
        for g in gone:
            del self.groups[g.group_id]
            # removeGroupFromAllProducers
            for producer_id, group_ids in list(self.open_groups_for_producer.items()):
                group_ids.discard(g.group_id)
                if not group_ids:
                    del self.open_groups_for_producer[producer_id]
        return gone
