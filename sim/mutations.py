"""Historical defects of kactor, put back one at a time as small monkeypatches: how the simulator's power is measured
(issue #28: the simulator finds each within 1,000 seeds). ``kactor sim --mutation NAME --seeds 1-1000 --steps 50
--stop-at-first`` runs with one applied and stops at the first seed that catches it; ``--mutation list`` names them.

Each mutation undoes exactly the fix its commit made, in the code the simulator runs (a live broker's actors and
core); nothing here is imported by the broker itself, and nothing is applied unless asked for.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import attrs


@attrs.frozen
class Mutation:
    name: str
    fix: str  # the commit that fixed it
    defect: str
    apply: Callable[[], Callable[[], None]]  # patches, and returns what undoes the patch


def _patch(owner: Any, attr: str, replacement: Any) -> Callable[[], None]:
    original = owner.__dict__[attr]
    setattr(owner, attr, replacement)
    return lambda: setattr(owner, attr, original)


def _segment_truncate_keeps_no_timestamp() -> Callable[[], None]:
    """9461e5d: LogSegment.truncate_to does not reload the largest timestamp of the batches after the last time-index
    entry, and a follower's append does not date the segment it creates, so a truncated segment of small batches is
    judged by a creation time of 0 and retention deletes it."""
    from core.broker.log_segment import LogSegment
    from core.broker.partition import Partition

    original = Partition.append_records_to_follower

    def append_records_to_follower(self: Any, fetch_offset: int, records: bytes, leader_high_watermark: int,
                                   leader_log_start_offset: int = -1, now_ms: float | None = None) -> bool:
        # the commit's second half: the follower's append was not told the time (its segment dated 0)
        return original(self, fetch_offset, records, leader_high_watermark, leader_log_start_offset)

    undo = (_patch(LogSegment, "_load_largest_timestamp", lambda self: None),
            _patch(Partition, "append_records_to_follower", append_records_to_follower))
    return lambda: [u() for u in undo] and None


def _make_leader_completes_nothing() -> Callable[[], None]:
    """f9f9c20: a LeaderAndIsr that moves a led partition's high watermark (the ISR shrunk by the controller) does
    not complete the delayed produces waiting for it (Partition.makeLeader's tryCompleteDelayedRequests)."""
    from core.broker.replica_manager import ReplicaManager

    original = ReplicaManager._complete_delayed_requests

    def complete(self: Any, tp: Any, now_ms: float, leadership_changed: bool = False) -> Any:
        if not leadership_changed and sys._getframe(1).f_code.co_name == "become_leader_or_follower":
            return iter(())
        return original(self, tp, now_ms, leadership_changed)

    return _patch(ReplicaManager, "_complete_delayed_requests", complete)


def _truncate_to_end_keeps_epoch_cache() -> Callable[[], None]:
    """5d23a47 (KAFKA-10706): Log.truncate_to at or past the log end leaves the leader-epoch cache untrimmed, so a
    follower whose cache ends with an epoch it led without writing asks OffsetsForLeaderEpoch with it for ever."""
    from core.broker.log import Log

    original = Log.truncate_to

    def truncate_to(self: Any, offset: int) -> bool:
        if offset >= self.log_end_offset:
            self._ensure_live()
            return False
        return original(self, offset)

    return _patch(Log, "truncate_to", truncate_to)


def _follower_truncates_to_high_watermark() -> Callable[[], None]:
    """The pre-KIP-101 follower (the defect the issue names first): on becoming follower it truncates to its high
    watermark instead of asking the leader for the end offset of its latest epoch (OffsetsForLeaderEpoch), so it
    drops acknowledged records its high watermark had not reached yet."""
    from core.broker.replica_fetcher import ReplicaFetcherManager

    original = ReplicaFetcherManager.maybe_truncate

    def maybe_truncate(self: Any, leader_id: int) -> Any:
        for tp in list(self._truncating):
            st = self.fetch_states[tp]
            p = self.replica_manager.all_partitions.get(tp)
            if st.leader_id == leader_id and not self.awaiting(leader_id) and getattr(p, "log", None) is not None:
                self._truncate_and_update(p, st, st.fetch_offset, True)  # the branch of a log with no epoch
        return original(self, leader_id)

    return _patch(ReplicaFetcherManager, "maybe_truncate", maybe_truncate)


def _zk_writes_unfenced() -> Callable[[], None]:
    """KafkaZkClient's controller writes without the /controller_epoch check (Kafka's
    wrapRequestWithControllerEpochCheck, KAFKA-9724's kind of zombie): a controller that lost its session but has not
    heard of it yet overwrites what its successor wrote."""
    from core.zk_client import NO_FENCE, KafkaZkClient

    original = KafkaZkClient.__dict__["retry_requests_until_connected"]

    def unfenced(self: Any, ops: Any, expected_controller_epoch_zk_version: int = NO_FENCE) -> Any:
        return original(self, ops, NO_FENCE)

    undo = _patch(KafkaZkClient, "retry_requests_until_connected", unfenced)
    undo_alias = _patch(KafkaZkClient, "_zk", unfenced)
    return lambda: (undo_alias(), undo())[-1]


def _serve_before_startup() -> Callable[[], None]:
    """6b9b8e9: a broker reads requests as soon as its listeners are bound, before its start-up has ended (Kafka's
    SocketServer.startProcessingRequests, which KafkaServer.startup calls last): the transport was built processing
    (``Transport(process_requests=True)``, the default BrokerProcess then used), so a request reached actors not yet
    registered. The sim's network stands in for the transport: it reads a starting broker's requests from the
    start, as the transport did before the fix."""
    import sim.runtime

    return _patch(sim.runtime, "PROCESS_REQUESTS_AT_START", True)


def _add_partitions_takes_internal_topics() -> Callable[[], None]:
    """7db20da (issue #39): AddPartitionsToTxn authorizes internal topics like any other (2.6.3's
    KafkaApis.handleAddPartitionToTxnRequest filters them out of the authorized set: TOPIC_AUTHORIZATION_FAILED), so a
    client's EndTxn has the coordinator write a transaction marker into ``__transaction_state``, where every later
    load of the partition stops."""
    import core.api.add_partitions_to_txn

    return _patch(core.api.add_partitions_to_txn, "INTERNAL_TOPICS", frozenset())


def _transaction_loader_stops_quietly() -> Callable[[], None]:
    """aadf49f (issue #39): the transaction loader stops at a batch it cannot read and installs the ids read before
    it, logging nothing at ERROR (what kactor did before, and 2.6.3's loadTransactionMetadata would do with the
    marker it never lets in). A load can only meet such a batch once internal topics are open to AddPartitionsToTxn,
    so this one puts that defect back too: the two together are the audit's finding 1 as it was found."""
    from core.coordinator.transaction.transaction_state_manager import TransactionStateManager
    from protocol.errors import ProtocolError
    from protocol.records import CONTROL_BIT, iter_batches

    original = TransactionStateManager.__dict__["_read_batches"]

    def read_batches(records: bytes, loaded: Any, offset: int) -> int | None:
        end = 0
        try:
            for batch in iter_batches(records):
                if batch.attributes & CONTROL_BIT:
                    if end:
                        original.__func__(records[:end], loaded, offset)
                    return None  # no batch (more): the load ends here, as if the log did
                end += len(batch.raw)
        except ProtocolError:
            pass
        return original.__func__(records, loaded, offset)

    undo = (_add_partitions_takes_internal_topics(),
            _patch(TransactionStateManager, "_read_batches", staticmethod(read_batches)))
    return lambda: [u() for u in undo] and None


def _no_partition_verification() -> Callable[[], None]:
    """Issue #40 (KIP-890 part 1, Kafka 3.6): transaction.partition.verification.enable=false — the partition leader
    appends a transactional batch that opens a transaction without asking the coordinator, so a produce delayed past
    its transaction's end, or to a partition never added to it, opens a transaction no marker will end (2.6's
    hole)."""
    from core.broker.replica_manager import ReplicaManager

    return _patch(ReplicaManager, "verification_enabled", property(lambda self: False))


MUTATIONS = {m.name: m for m in (
    Mutation("truncate-to-high-watermark", "KIP-101",
             "a new follower truncates to its high watermark, not by OffsetsForLeaderEpoch",
             _follower_truncates_to_high_watermark),
    Mutation("make-leader-completes-nothing", "f9f9c20",
             "a LeaderAndIsr shrinking a led partition's ISR leaves its delayed produces parked",
             _make_leader_completes_nothing),
    Mutation("truncate-to-end-keeps-epochs", "5d23a47",
             "Log.truncate_to past the log end leaves the epoch cache untrimmed (KAFKA-10706)",
             _truncate_to_end_keeps_epoch_cache),
    Mutation("segment-truncate-timestamp", "9461e5d",
             "LogSegment.truncate_to forgets the largest timestamp of its batches; retention deletes them",
             _segment_truncate_keeps_no_timestamp),
    Mutation("zk-write-unfenced", "KafkaZkClient",
             "the controller's ZooKeeper writes skip the /controller_epoch check: a zombie controller is not fenced",
             _zk_writes_unfenced),
    Mutation("serve-before-startup", "6b9b8e9",
             "a broker reads requests before its start-up has ended (SocketServer.startProcessingRequests)",
             _serve_before_startup),
    Mutation("add-partitions-internal-topics", "7db20da",
             "AddPartitionsToTxn accepts __transaction_state and __consumer_offsets partitions (issue #39)",
             _add_partitions_takes_internal_topics),
    Mutation("transaction-loader-partial", "aadf49f",
             "internal topics open to AddPartitionsToTxn, and the transaction loader installing what it read before a "
             "marker it cannot read, silently (issue #39)",
             _transaction_loader_stops_quietly),
    Mutation("no-partition-verification", "KIP-890",
             "transaction.partition.verification.enable=false: a transactional batch opens a transaction the "
             "coordinator never heard of (issue #40)",
             _no_partition_verification),
)}


def apply(name: str) -> Callable[[], None]:
    """Put the named defect back (in this process); returns what takes it out again."""
    return MUTATIONS[name].apply()


__all__ = ["MUTATIONS", "Mutation", "apply"]
