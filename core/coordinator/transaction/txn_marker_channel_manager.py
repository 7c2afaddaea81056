"""TransactionMarkerChannelManager + TransactionMarkerRequestCompletionHandler (kafka.coordinator.transaction, Kafka
2.6.3), the decisions only: which markers go to which partition leader, what each partition's answer means, and when
a transaction's markers are all written.

A transaction in PrepareCommit / PrepareAbort whose state is written has its markers sent to the leader of each of its
partitions (`SendTxnMarkers`: one WriteTxnMarkers request per broker, sent by that broker's
TransactionMarkerChannelActor). The leaders are read from ZooKeeper (the partition state znodes the controller writes
and its UpdateMetadata carries to Kafka's metadata cache) and the brokers' registrations. A partition whose topic is
gone is skipped, as 2.6 skips a partition its metadata cache does not know; a partition without a live leader, or
answered NOT_LEADER_OR_FOLLOWER and the other retriable errors, is sent again after ``RETRY_BACKOFF_MS``. When no
partition is left the coordinator writes CompleteCommit / CompleteAbort (``on_complete``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

import attrs

from core.coordinator.transaction.transaction_metadata import (
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
)
from core.effects import Proc, Schedule
from core.zk_client import KafkaZkClient, partition_state_or_none
from messages import message
from messages.common import Broker, Errors, TopicPartition
from messages.txn_markers import TxnMarkerEntry
from messages.zk import OK
from protocol.zk import paths
from protocol.zk.znodes import ZnodeDecodeError

log = logging.getLogger("kactor.coordinator")

RETRY_KEY = "txn-markers-retry"
RETRY_BACKOFF_MS = 100  # the sender thread's poll of the unknown-broker queue (retry.backoff.ms's default)

# TransactionMarkerRequestCompletionHandler: errors after which the marker is sent again
RETRIABLE = frozenset({Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_LEADER_OR_FOLLOWER, Errors.NOT_ENOUGH_REPLICAS,
                       Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, Errors.REQUEST_TIMED_OUT,
                       Errors.KAFKA_STORAGE_ERROR})
# ... after which the coordinator stops sending (a newer coordinator or producer epoch has taken over)
ABORT_SENDING = frozenset({Errors.INVALID_PRODUCER_EPOCH, Errors.TRANSACTION_COORDINATOR_FENCED})


@message
class SendTxnMarkers:
    """Effect: send a WriteTxnMarkers request of ``markers`` to ``broker`` (its TransactionMarkerChannelActor); its
    answer comes back as `on_response` (or `on_disconnect`)."""

    broker: Broker
    markers: tuple[TxnMarkerEntry, ...]


@attrs.define
class PendingCompleteTxn:
    """A transaction whose markers are being written: Kafka's PendingCompleteTxn with the partitions not yet
    acknowledged."""

    transactional_id: str
    coordinator_epoch: int
    metadata: TransactionMetadata
    transit: TxnTransitMetadata
    remaining: set[TopicPartition]


class TxnMarkerChannelManager:
    """The markers of one coordinator. ``valid(txn_id, coordinator_epoch)`` says whether the coordinator still owns
    that transaction at that epoch (TransactionStateManager.getTransactionState); ``on_complete(pending)`` writes its
    completion."""

    def __init__(self, valid: Callable[[str, int], bool],
                 on_complete: Callable[[PendingCompleteTxn], Proc[None]]) -> None:
        self.valid = valid
        self.on_complete = on_complete
        self.zk = KafkaZkClient()
        self.pending: dict[str, PendingCompleteTxn] = {}
        self.to_retry: set[tuple[str, TopicPartition]] = set()
        self._retry_scheduled = False

    def add_txn_markers_to_send(self, coordinator_epoch: int, metadata: TransactionMetadata,
                                transit: TxnTransitMetadata) -> Proc[None]:
        """TransactionMarkerChannelManager.addTxnMarkersToSend: ``transit`` is the CompleteCommit / CompleteAbort
        written once every partition has its marker."""
        txn_id = metadata.transactional_id
        pending = PendingCompleteTxn(txn_id, coordinator_epoch, metadata, transit, set(metadata.topic_partitions))
        self.pending[txn_id] = pending
        yield from self._send(pending, sorted(pending.remaining))

    def remove_markers_for_partition(self, txn_ids: Iterable[str]) -> None:
        """removeMarkersForTxnTopicPartition: the coordinator resigned these transactions' partition."""
        for txn_id in txn_ids:
            self.pending.pop(txn_id, None)
        self.to_retry = {(t, tp) for t, tp in self.to_retry if t in self.pending}

    def _send(self, pending: PendingCompleteTxn, partitions: list[TopicPartition]) -> Proc[None]:
        """addTxnMarkersToBrokerQueue: group the partitions by their leader's broker."""
        leaders = yield from self._leaders(partitions)
        by_broker: dict[int, tuple[Broker, list[TopicPartition]]] = {}
        for tp in partitions:
            found = leaders.get(tp, False)
            if found is False:  # the topic is gone: nobody to write the marker to
                log.info("Couldn't find leader endpoint for partitions %s while trying to send transaction markers "
                         "for %s, these partitions are likely deleted already and hence can be skipped", tp,
                         pending.transactional_id)
                pending.remaining.discard(tp)
            elif found is None:
                self.to_retry.add((pending.transactional_id, tp))
            else:
                by_broker.setdefault(found.id, (found, []))[1].append(tp)
        for broker, tps in by_broker.values():
            t = pending.transit
            yield SendTxnMarkers(broker, (TxnMarkerEntry(t.producer_id, t.producer_epoch,
                                                       t.txn_state is TransactionState.COMPLETE_COMMIT,
                                                       pending.coordinator_epoch, tuple(tps)),))
        yield from self._schedule_retry()
        if not pending.remaining:
            yield from self._complete(pending)

    def _leaders(self, partitions: list[TopicPartition]) -> Proc[dict[TopicPartition, Broker | None | bool]]:
        """Each partition's leader: its Broker, None while it has no live leader, False if its topic is gone."""
        topics = sorted({tp.topic for tp in partitions})
        topic_rs = yield from self.zk.get_data_raw([paths.TopicZNode.path(t) for t in topics])
        existing = {t for t, r in zip(topics, topic_rs, strict=True) if r.code == OK}
        known = [tp for tp in partitions if tp.topic in existing]
        state_rs = yield from self.zk.get_data_raw([paths.TopicPartitionStateZNode.path(tp) for tp in known])
        out: dict[TopicPartition, Broker | None | bool] = {tp: False for tp in partitions if tp.topic not in existing}
        brokers: dict[int, Broker | None] = {}
        for tp, r in zip(known, state_rs, strict=True):
            try:
                state = partition_state_or_none(r, tp) if r.code == OK else None
            except ZnodeDecodeError:
                state = None
            leader = state.leader_and_isr.leader if state is not None else -1
            if leader >= 0 and leader not in brokers:
                try:
                    brokers[leader] = yield from self.zk.get_broker(leader)
                except ZnodeDecodeError:
                    brokers[leader] = None
            out[tp] = brokers.get(leader) if leader >= 0 else None
        return out

    def _schedule_retry(self) -> Proc[None]:
        if self.to_retry and not self._retry_scheduled:
            self._retry_scheduled = True
            yield Schedule(RETRY_KEY, RETRY_BACKOFF_MS)

    def on_retry_timer(self) -> Proc[None]:
        """The sender thread's next poll: send again what had no leader or a retriable answer."""
        self._retry_scheduled = False
        retry, self.to_retry = self.to_retry, set()
        by_txn: dict[str, list[TopicPartition]] = {}
        for txn_id, tp in sorted(retry):
            by_txn.setdefault(txn_id, []).append(tp)
        for txn_id, tps in by_txn.items():
            pending = self.pending.get(txn_id)
            if pending is None:
                continue
            if not self.valid(txn_id, pending.coordinator_epoch):
                self.pending.pop(txn_id, None)
                continue
            yield from self._send(pending, [tp for tp in tps if tp in pending.remaining])

    def on_response(self, markers: tuple[TxnMarkerEntry, ...],
                    errors: dict[tuple[int, TopicPartition], Errors]) -> Proc[None]:
        """TransactionMarkerRequestCompletionHandler.onComplete: ``errors`` by (producer id, partition)."""
        for entry in markers:
            pending = self._pending_for(entry)
            if pending is None:
                continue
            abort_sending = False
            for tp in entry.partitions:
                error = errors.get((entry.producer_id, tp), Errors.UNKNOWN_SERVER_ERROR)
                if error is Errors.NONE:
                    pending.remaining.discard(tp)
                elif error in ABORT_SENDING:
                    log.info("Sending %s's transaction marker for partition %s has permanently failed with error "
                             "%s with the current coordinator epoch %d; cancel sending any more transaction markers "
                             "%s to the brokers", pending.transactional_id, tp, error.name,
                             pending.coordinator_epoch, entry)
                    abort_sending = True
                elif error in RETRIABLE:
                    log.info("Sending %s's transaction marker for partition %s has failed with error %s, retrying "
                             "with current coordinator epoch %d", pending.transactional_id, tp, error.name,
                             pending.coordinator_epoch)
                    self.to_retry.add((pending.transactional_id, tp))
                else:  # CORRUPT_MESSAGE, MESSAGE_TOO_LARGE... 2.6 throws: the marker is sent again, never dropped
                    log.error("Received error %s for %s's transaction marker to %s; retrying",
                              error.name, pending.transactional_id, tp)
                    self.to_retry.add((pending.transactional_id, tp))
            if abort_sending:
                self.pending.pop(pending.transactional_id, None)
                self.to_retry = {(t, p) for t, p in self.to_retry if t != pending.transactional_id}
                pending.metadata.pending_state = None
            elif not pending.remaining:
                yield from self._complete(pending)
        yield from self._schedule_retry()

    def on_disconnect(self, markers: tuple[TxnMarkerEntry, ...]) -> Proc[None]:
        """onComplete for a disconnected request: every marker of it is sent again (to the leaders found then)."""
        for entry in markers:
            pending = self._pending_for(entry)
            if pending is not None:
                self.to_retry.update((pending.transactional_id, tp) for tp in entry.partitions
                                     if tp in pending.remaining)
        yield from self._schedule_retry()

    def _pending_for(self, entry: TxnMarkerEntry) -> PendingCompleteTxn | None:
        """The pending transaction an answered marker is for, if the coordinator still owns it at that epoch."""
        for pending in self.pending.values():
            if pending.transit.producer_id == entry.producer_id \
                    and pending.coordinator_epoch == entry.coordinator_epoch \
                    and pending.transit.producer_epoch == entry.producer_epoch:
                if self.valid(pending.transactional_id, pending.coordinator_epoch):
                    return pending
                self.pending.pop(pending.transactional_id, None)
                return None
        return None

    def _complete(self, pending: PendingCompleteTxn) -> Proc[None]:
        """completeSendMarkersForTxnId: every marker written; the completion is written by the coordinator."""
        if self.pending.get(pending.transactional_id) is pending:
            del self.pending[pending.transactional_id]
            yield from self.on_complete(pending)

