"""kafka.cluster.Partition / kafka.cluster.Replica (2.6): leadership, follower-fetch bookkeeping, ISR, high
watermark, and the leader's answer to OffsetsForLeaderEpoch (`last_offset_for_leader_epoch`).

Plain Python, no clock reads (every time-dependent method takes ``now_ms``), no ZooKeeper calls: an ISR change is an
`IsrProposal` (a value: the partition itself holds no in-flight state) that `submit_isr_updates` writes to
``/brokers/topics/<t>/partitions/<p>/state`` — conditionally on the cached zkVersion, keeping the controller epoch the
broker last received for the partition (Kafka 2.6 `ZkPartitionStateStore.expandIsr/shrinkIsr` →
`ReplicationUtils.updateLeaderAndIsr`) — and then hands back to `Partition.complete_isr_update`, which either commits
the new ISR and zkVersion or leaves both as they were (2.6's `maybeUpdateIsrAndVersion`). The write is synchronous as
in 2.6: a PartitionActor runs one core procedure at a time, so nothing else touches the partition meanwhile. Many
proposals go out in ONE pipelined ZkBatch.

ISR-change outcomes go to an `IsrChangeListener` (Kafka's IsrChangeListener + ReplicaManager.recordIsrChange).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import attrs

from core.broker.api_error import ApiError
from core.broker.cleaner.keys import validate_keys
from core.broker.kafka_storage_error import KafkaStorageError
from core.broker.leader_epoch_cache import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
from core.broker.log import UNKNOWN_OFFSET, Log, LogAppendInfo
from core.broker.log_manager import LogManager
from core.broker.producer_state import CLIENT
from core.broker.transaction_index import AbortedTxn
from core.effects import Proc
from core.zk_client import KafkaZkClient
from messages.codec.summary import offset_range
from messages.common import (
    INITIAL_CONTROLLER_EPOCH,
    INITIAL_LEADER_EPOCH,
    INITIAL_ZK_VERSION,
    Errors,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    TopicPartition,
)
from messages.replication import EARLIEST_TIMESTAMP, HIGH_WATERMARK, LATEST_TIMESTAMP
from messages.requests import LeaderAndIsrPartitionState
from messages.zk import BADVERSION, NONODE, OK

NO_LEADER_EPOCH_PROVIDED = -1  # a fetch without a current leader epoch (old clients)
NO_TIMESTAMP = -1  # RecordBatch.NO_TIMESTAMP
# kafka.server.FetchIsolation: how far a read may go
FETCH_LOG_END = 0  # followers (and the group coordinator's loads)
FETCH_HIGH_WATERMARK = 1  # consumers, READ_UNCOMMITTED
FETCH_TXN_COMMITTED = 2  # consumers, READ_COMMITTED: the last stable offset
READ_COMMITTED = 1  # IsolationLevel.READ_COMMITTED (a ListOffsets / Fetch request's isolation_level)


def _err(name: str, fallback: Errors) -> Errors:
    """An Errors member if the shared enum has it, else ``fallback``."""
    return getattr(Errors, name, fallback)


# Codes the shared enum may lack (it has both now): UNKNOWN_LEADER_EPOCH (75), NOT_ENOUGH_REPLICAS (19).
UNKNOWN_LEADER_EPOCH = _err("UNKNOWN_LEADER_EPOCH", Errors.NOT_LEADER_OR_FOLLOWER)
NOT_ENOUGH_REPLICAS = _err("NOT_ENOUGH_REPLICAS", Errors.NOT_LEADER_OR_FOLLOWER)


class IsrChangeListener(Protocol):
    """What a leader reports about its ISR changes (Kafka's IsrChangeListener + recordIsrChange)."""

    def mark_expand(self) -> None: ...

    def mark_shrink(self) -> None: ...

    def mark_failed(self) -> None: ...

    def record_isr_change(self, tp: TopicPartition, now_ms: float) -> None: ...


class CountingIsrChangeListener:
    """A listener that only counts (tests, or a PartitionActor that forwards counts)."""

    def __init__(self) -> None:
        self.expands = 0
        self.shrinks = 0
        self.failures = 0
        self.recorded: list[TopicPartition] = []

    def mark_expand(self) -> None:
        self.expands += 1

    def mark_shrink(self) -> None:
        self.shrinks += 1

    def mark_failed(self) -> None:
        self.failures += 1

    def record_isr_change(self, tp: TopicPartition, now_ms: float) -> None:
        self.recorded.append(tp)


@attrs.define
class Replica:
    """kafka.cluster.Replica: the leader's view of one remote (follower) replica."""

    broker_id: int
    log_end_offset: int = UNKNOWN_OFFSET
    log_start_offset: int = UNKNOWN_OFFSET
    last_caught_up_time_ms: float = 0
    last_fetch_leader_log_end_offset: int = UNKNOWN_OFFSET
    last_fetch_time_ms: float = 0

    def update_fetch_state(self, fetch_offset: int, follower_start_offset: int, fetch_time_ms: float,
                           leader_end_offset: int) -> None:
        """Replica.updateFetchState: a fetch at/after the leader's LEO now → caught up now; at/after the LEO of the
        previous fetch → caught up as of the previous fetch."""
        if fetch_offset >= leader_end_offset:
            self.last_caught_up_time_ms = max(self.last_caught_up_time_ms, fetch_time_ms)
        elif fetch_offset >= self.last_fetch_leader_log_end_offset:
            self.last_caught_up_time_ms = max(self.last_caught_up_time_ms, self.last_fetch_time_ms)
        self.log_start_offset = follower_start_offset
        self.log_end_offset = fetch_offset
        self.last_fetch_leader_log_end_offset = leader_end_offset
        self.last_fetch_time_ms = fetch_time_ms

    def reset_last_caught_up_time(self, cur_leader_log_end_offset: int, cur_time_ms: float,
                                  last_caught_up_time_ms: float) -> None:
        """Replica.resetLastCaughtUpTime (on makeLeader)."""
        self.last_fetch_leader_log_end_offset = cur_leader_log_end_offset
        self.last_fetch_time_ms = cur_time_ms
        self.last_caught_up_time_ms = last_caught_up_time_ms

    def reset_fetch_state(self) -> None:
        """updateFetchState(UnknownOffsetMetadata, UnknownOffset, 0, UnknownOffset) on becoming a new leader."""
        self.log_end_offset = UNKNOWN_OFFSET
        self.log_start_offset = UNKNOWN_OFFSET
        self.last_fetch_leader_log_end_offset = UNKNOWN_OFFSET
        self.last_fetch_time_ms = 0


_proposal_ids = itertools.count(1)


@attrs.frozen(eq=False)
class IsrProposal:
    """One ISR change the leader writes: the state znode contents it wants, conditional on ``zk_version``
    (Kafka 2.6's ``new LeaderAndIsr(localBrokerId, leaderEpoch, newIsr, zkVersion)``)."""

    topic_partition: TopicPartition
    kind: str  # "expand" | "shrink"
    isr: tuple[int, ...]  # the proposed ISR
    leader: int
    leader_epoch: int
    controller_epoch: int
    zk_version: int  # expected version of the conditional write
    id: int = attrs.field(factory=lambda: next(_proposal_ids))

    def partition_state(self) -> LeaderIsrAndControllerEpoch:
        """The state znode contents the proposal writes, conditional on ``zk_version``."""
        return LeaderIsrAndControllerEpoch(LeaderAndIsr(self.leader, self.leader_epoch, self.isr, self.zk_version),
                                           self.controller_epoch)


class Partition:
    """kafka.cluster.Partition for one topic-partition hosted on broker ``local_broker_id``."""

    def __init__(self, topic_partition: TopicPartition, local_broker_id: int, log_manager: LogManager | None,
                 replica_lag_time_max_ms: int = 30000, listener: IsrChangeListener | None = None,
                 min_insync_replicas: int = 1) -> None:
        self.topic_partition = topic_partition
        self.local_broker_id = local_broker_id
        self.log_manager = log_manager
        self.replica_lag_time_max_ms = replica_lag_time_max_ms
        self.listener: IsrChangeListener = listener if listener is not None else CountingIsrChangeListener()
        self.min_insync_replicas = min_insync_replicas
        self.log: Log | None = log_manager.get_log(topic_partition) if log_manager is not None else None
        # assignment (AssignmentState)
        self.replicas: tuple[int, ...] = ()
        self.adding_replicas: tuple[int, ...] = ()
        self.removing_replicas: tuple[int, ...] = ()
        self.remote_replicas: dict[int, Replica] = {}
        # leadership
        self.isr: tuple[int, ...] = ()  # inSyncReplicaIds: what ZooKeeper holds as far as this broker knows
        self.leader_replica_id: int | None = None
        self.leader_epoch = INITIAL_LEADER_EPOCH - 1
        self.leader_epoch_start_offset: int | None = None
        self.zk_version = INITIAL_ZK_VERSION
        self.controller_epoch = INITIAL_CONTROLLER_EPOCH

    # --------------------------------------------------------------------------------------------------- queries

    def __repr__(self) -> str:
        return (f"Partition({self.topic_partition}, leader={self.leader_replica_id}, epoch={self.leader_epoch}, "
                f"isr={list(self.isr)}, replicas={list(self.replicas)}, zkVersion={self.zk_version})")

    @property
    def is_leader(self) -> bool:
        return self.leader_replica_id == self.local_broker_id

    def get_leader_epoch(self) -> int:
        return self.leader_epoch

    @property
    def in_sync_replica_ids(self) -> tuple[int, ...]:
        return self.isr

    @property
    def replication_factor(self) -> int:
        """AssignmentState.replicationFactor: replicas minus those being added by a reassignment."""
        return len(self.replicas) - len(self.adding_replicas)

    @property
    def is_under_replicated(self) -> bool:
        return self.is_leader and self.replication_factor - len(self.isr) > 0

    def is_at_min_isr(self) -> bool:
        return self.is_leader and len(self.isr) == self.min_insync_replicas

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark if self.log is not None else UNKNOWN_OFFSET

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset if self.log is not None else UNKNOWN_OFFSET

    def local_log_or_error(self) -> Log:
        if self.log is None:
            raise ApiError(Errors.REPLICA_NOT_AVAILABLE, f"log of {self.topic_partition} is not available")
        return self.log

    # ------------------------------------------------------------------------------------------------ assignment

    def update_assignment_and_isr(self, replicas: Sequence[int], isr: Sequence[int],
                                  adding: Sequence[int] = (), removing: Sequence[int] = ()) -> None:
        """Partition.updateAssignmentAndIsr: remote replicas follow the assignment; the ISR is committed."""
        self.replicas = tuple(replicas)
        self.adding_replicas = tuple(adding)
        self.removing_replicas = tuple(removing)
        remote = [r for r in self.replicas if r != self.local_broker_id]
        for r in list(self.remote_replicas):
            if r not in remote:
                del self.remote_replicas[r]
        for r in remote:
            if r not in self.remote_replicas:
                self.remote_replicas[r] = Replica(r)
        self.isr = tuple(isr)

    def create_log_if_not_exists(self, is_new: bool,
                                 high_watermark_checkpoints: Mapping[str, Mapping[TopicPartition, int]] | None = None
                                 ) -> Log:
        """Partition.createLogIfNotExists (via LogManager.getOrCreateLog); raises KafkaStorageError."""
        if self.log is None:
            if self.log_manager is None:
                raise KafkaStorageError(f"no log manager for {self.topic_partition}")
            self.log = self.log_manager.get_or_create_log(self.topic_partition, is_new, high_watermark_checkpoints)
        return self.log

    # ------------------------------------------------------------------------------------------------ leadership

    def make_leader(self, state: LeaderAndIsrPartitionState, now_ms: float,
                    high_watermark_checkpoints: Mapping[str, Mapping[TopicPartition, int]] | None = None) -> bool:
        """Partition.makeLeader: returns True iff this broker was not the leader before.

        Records the controller epoch, takes assignment and ISR, creates the log if needed, sets leader epoch /
        epoch start offset (= local LEO) / zkVersion, resets the caught-up bookkeeping of remote replicas (ISR
        members count as caught up now), resets their fetch state if leadership is new, maybe advances the HW.
        """
        self.controller_epoch = state.controller_epoch
        self.update_assignment_and_isr(state.replicas, state.isr, state.adding_replicas, state.removing_replicas)
        log = self.create_log_if_not_exists(state.is_new, high_watermark_checkpoints)
        start = log.log_end_offset
        self.leader_epoch = state.leader_epoch
        self.leader_epoch_start_offset = start
        self.zk_version = state.zk_version
        log.assign_epoch_start_offset(self.leader_epoch, start)
        is_new_leader = not self.is_leader
        for replica in self.remote_replicas.values():
            caught_up = now_ms if replica.broker_id in self.isr else 0
            replica.reset_last_caught_up_time(start, now_ms, caught_up)
        if is_new_leader:
            self.leader_replica_id = self.local_broker_id
            for replica in self.remote_replicas.values():
                replica.reset_fetch_state()
        self.maybe_increment_leader_hw(now_ms)
        return is_new_leader

    def make_follower(self, state: LeaderAndIsrPartitionState, now_ms: float,
                      high_watermark_checkpoints: Mapping[str, Mapping[TopicPartition, int]] | None = None) -> bool:
        """Partition.makeFollower: returns False only if the leader id and leader epoch are both unchanged."""
        old_leader_epoch = self.leader_epoch
        self.controller_epoch = state.controller_epoch
        self.update_assignment_and_isr(state.replicas, (), state.adding_replicas, state.removing_replicas)
        self.create_log_if_not_exists(state.is_new, high_watermark_checkpoints)
        self.leader_epoch = state.leader_epoch
        self.leader_epoch_start_offset = None
        self.zk_version = state.zk_version
        if self.leader_replica_id == state.leader and self.leader_epoch == old_leader_epoch:
            return False
        self.leader_replica_id = state.leader
        return True

    def delete(self) -> None:
        """Partition.delete: forget assignment, ISR, leadership and the log reference (the log itself is deleted by
        the LogManager)."""
        self.remote_replicas.clear()
        self.replicas = self.adding_replicas = self.removing_replicas = ()
        self.isr = ()
        self.leader_replica_id = None
        self.leader_epoch_start_offset = None
        self.log = None

    def mark_offline(self) -> None:
        """The partition's log dir failed: drop the log reference and leadership."""
        self.log = None
        self.leader_replica_id = None

    # ------------------------------------------------------------------------------------------- follower fetches

    def update_follower_fetch_state(self, follower_id: int, fetch_offset: int, follower_start_offset: int,
                                    now_ms: float, leader_end_offset: int) -> bool:
        """Partition.updateFollowerFetchState: returns False if ``follower_id`` is not an assigned replica.

        Updates the follower's LEO and caught-up time and, if its LEO moved, maybe advances the HW. The ISR
        expansion check is the separate `maybe_expand_isr` (it produces a ZooKeeper write).
        """
        replica = self.remote_replicas.get(follower_id)
        if replica is None:
            return False
        prev = replica.log_end_offset
        replica.update_fetch_state(fetch_offset, follower_start_offset, now_ms, leader_end_offset)
        if prev != replica.log_end_offset and self.is_leader:
            self.maybe_increment_leader_hw(now_ms)
        return True

    def is_follower_in_sync(self, replica: Replica, high_watermark: int) -> bool:
        """Partition.isFollowerInSync: LEO ≥ HW and ≥ the start offset of the current leader epoch."""
        return (replica.log_end_offset >= high_watermark and self.leader_epoch_start_offset is not None
                and replica.log_end_offset >= self.leader_epoch_start_offset)

    def needs_expand_isr(self, follower_id: int) -> bool:
        replica = self.remote_replicas.get(follower_id)
        return (self.is_leader and self.log is not None and replica is not None
                and follower_id not in self.isr and self.is_follower_in_sync(replica, self.log.high_watermark))

    def maybe_expand_isr(self, follower_id: int) -> IsrProposal | None:
        """Partition.maybeExpandIsr: the write of ISR + follower, if the follower has caught up (nothing changes
        until the write succeeds)."""
        if not self.needs_expand_isr(follower_id):
            return None
        return self._propose("expand", (*self.isr, follower_id))

    # --------------------------------------------------------------------------------------------------- shrink

    def get_out_of_sync_replicas(self, now_ms: float, max_lag_ms: int | None = None) -> tuple[int, ...]:
        """Partition.getOutOfSyncReplicas: ISR followers with LEO ≠ leader LEO, not caught up for > max lag."""
        if self.log is None:
            return ()
        max_lag = self.replica_lag_time_max_ms if max_lag_ms is None else max_lag_ms
        leo = self.log.log_end_offset
        out = []
        for r in self.isr:
            if r == self.local_broker_id:
                continue
            replica = self.remote_replicas.get(r)
            if replica is None or (replica.log_end_offset != leo and now_ms - replica.last_caught_up_time_ms > max_lag):
                out.append(r)
        return tuple(out)

    def maybe_shrink_isr(self, now_ms: float) -> IsrProposal | None:
        """Partition.maybeShrinkIsr: the write of ISR − out-of-sync followers, if any are out of sync."""
        if not self.is_leader:
            return None
        out = self.get_out_of_sync_replicas(now_ms)
        if not out:
            return None
        new_isr = tuple(r for r in self.isr if r not in out)
        assert new_isr, f"shrinking the ISR of {self.topic_partition} to empty"
        return self._propose("shrink", new_isr)

    # ------------------------------------------------------------------------------------------ ISR write outcome

    def _propose(self, kind: str, new_isr: tuple[int, ...]) -> IsrProposal:
        return IsrProposal(self.topic_partition, kind, new_isr, self.local_broker_id, self.leader_epoch,
                           self.controller_epoch, self.zk_version)

    def complete_isr_update(self, proposal: IsrProposal, new_zk_version: int | None, error: Errors,
                            now_ms: float) -> bool:
        """The outcome of a proposal's conditional write (Kafka 2.6 ZkPartitionStateStore.expandIsr/shrinkIsr +
        Partition.maybeUpdateIsrAndVersion). Returns True iff the ISR changed.

        * success → the ISR and zkVersion change, the change is recorded for propagation, IsrExpandsPerSec /
          IsrShrinksPerSec is marked, the HW may advance;
        * failure (a zkVersion another writer moved, a missing znode, ZooKeeper trouble) → ISR and zkVersion stay
          as they were and FailedIsrUpdatesPerSec is marked ("Cached zkVersion ... not equal to that in
          zookeeper, skip updating ISR"); nothing is left pending: the next follower fetch or isr-expiration run
          tries again, and the next LeaderAndIsr brings a fresh zkVersion.
        * a proposal made under another leader epoch or zkVersion (a LeaderAndIsr came in between) → ignored.
        """
        if proposal.leader_epoch != self.leader_epoch or proposal.zk_version != self.zk_version:
            return False
        if error == Errors.NONE and new_zk_version is not None:
            self.isr = proposal.isr
            self.zk_version = new_zk_version
            self.listener.record_isr_change(self.topic_partition, now_ms)
            if proposal.kind == "expand":
                self.listener.mark_expand()
            else:
                self.listener.mark_shrink()
            self.maybe_increment_leader_hw(now_ms)
            return True
        self.listener.mark_failed()
        return False

    # ------------------------------------------------------------------------------------------- high watermark

    def maybe_increment_leader_hw(self, now_ms: float) -> bool:
        """Partition.maybeIncrementLeaderHW: HW = min LEO over the leader and every remote replica that is in the
        ISR or caught up within replica.lag.time.max.ms."""
        if not self.is_leader or self.log is None:
            return False
        isr = self.isr
        new_hw = self.log.log_end_offset
        for replica in self.remote_replicas.values():
            if replica.log_end_offset < new_hw and (
                    now_ms - replica.last_caught_up_time_ms <= self.replica_lag_time_max_ms
                    or replica.broker_id in isr):
                new_hw = replica.log_end_offset
        return self.log.maybe_increment_high_watermark(new_hw)

    # ------------------------------------------------------------------------------------------- reads / appends

    def check_current_leader_epoch(self, current_leader_epoch: int) -> Errors:
        """Partition.checkCurrentLeaderEpoch: older → FENCED_LEADER_EPOCH, newer → UNKNOWN_LEADER_EPOCH."""
        if current_leader_epoch == NO_LEADER_EPOCH_PROVIDED:
            return Errors.NONE
        if self.leader_epoch > current_leader_epoch:
            return Errors.FENCED_LEADER_EPOCH
        if self.leader_epoch < current_leader_epoch:
            return UNKNOWN_LEADER_EPOCH
        return Errors.NONE

    def local_log_with_epoch(self, current_leader_epoch: int, require_leader: bool) -> Log:
        """Partition.localLogWithEpochOrException."""
        err = self.check_current_leader_epoch(current_leader_epoch)
        if err != Errors.NONE:
            raise ApiError(err)
        if require_leader and not self.is_leader:
            raise ApiError(Errors.NOT_LEADER_OR_FOLLOWER, f"broker {self.local_broker_id} is not leader of "
                                                          f"{self.topic_partition}")
        if self.log is None:
            raise ApiError(Errors.NOT_LEADER_OR_FOLLOWER if require_leader else Errors.REPLICA_NOT_AVAILABLE)
        return self.log

    def read_records(self, fetch_offset: int, current_leader_epoch: int, max_bytes: int, fetch_isolation: int,
                     fetch_only_from_leader: bool = True, min_one_message: bool = True) -> LogReadInfo:
        """Partition.readRecords: the batches from ``fetch_offset`` up to the isolation's bound (FETCH_LOG_END: the
        log end; FETCH_HIGH_WATERMARK: the high watermark; FETCH_TXN_COMMITTED: the last stable offset), with the
        offsets captured before the read. A FETCH_TXN_COMMITTED read also answers the aborted transactions
        overlapping what it read (Log.read's addAbortedTransactions; an empty list when it read nothing). An offset
        outside [log start, log end] raises ApiError(OFFSET_OUT_OF_RANGE) (Log.read's OffsetOutOfRangeException)."""
        log = self.local_log_with_epoch(current_leader_epoch, fetch_only_from_leader)
        hw, log_start, leo = log.high_watermark, log.log_start_offset, log.log_end_offset
        lso = log.last_stable_offset
        max_offset = None if fetch_isolation == FETCH_LOG_END else lso if fetch_isolation == FETCH_TXN_COMMITTED \
            else hw
        records = log.read(fetch_offset, max_bytes, max_offset, min_one_message)
        aborted: tuple[AbortedTxn, ...] | None = None
        if fetch_isolation == FETCH_TXN_COMMITTED:
            read = offset_range(records) if records else None
            aborted = () if read is None else tuple(log.collect_aborted_transactions(fetch_offset, read[1] + 1))
        return LogReadInfo(records, hw, lso, log_start, leo, aborted)

    def fetch_offset_for_timestamp(self, timestamp: int, isolation_level: int | None, current_leader_epoch: int,
                                   fetch_only_from_leader: bool) -> tuple[int, int, int] | None:
        """Partition.fetchOffsetForTimestamp: (offset, timestamp, leader epoch) or None. ``isolation_level`` None
        is a replica's request (bounded by the log end), else a client's (by the high watermark; READ_COMMITTED by
        the last stable offset). A client asking a leader whose epoch starts beyond its high watermark (a new
        leader not caught up yet) gets OFFSET_NOT_AVAILABLE (KIP-207)."""
        log = self.local_log_with_epoch(current_leader_epoch, fetch_only_from_leader)
        last_fetchable = log.log_end_offset if isolation_level is None else log.last_stable_offset \
            if isolation_level == READ_COMMITTED else log.high_watermark
        start = self.leader_epoch_start_offset
        if isolation_level is not None and start is not None and start > log.high_watermark:
            not_available: ApiError | None = ApiError(
                Errors.OFFSET_NOT_AVAILABLE,
                f"leader epoch start offset {start} of {self.topic_partition} is beyond its high watermark")
        else:
            not_available = None
        if timestamp == LATEST_TIMESTAMP:
            if not_available is not None:
                raise not_available
            return last_fetchable, NO_TIMESTAMP, self.leader_epoch
        found = log.fetch_offset_by_timestamp(timestamp)
        if timestamp == EARLIEST_TIMESTAMP:
            return found
        if found is not None and found[0] < last_fetchable:
            return found
        if not_available is not None:
            raise not_available
        return None

    def last_offset_for_leader_epoch(self, current_leader_epoch: int, leader_epoch: int,
                                     fetch_only_from_leader: bool = True) -> tuple[Errors, int, int]:
        """Partition.lastOffsetForLeaderEpoch: (error, epoch, end offset) of the largest epoch ≤ ``leader_epoch``
        in the local log, checked against ``current_leader_epoch`` (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH)
        and, for a follower's request, leadership (NOT_LEADER_FOR_PARTITION). An epoch the log cannot place gives
        (NONE, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET): the follower then truncates to its high watermark."""
        try:
            log = self.local_log_with_epoch(current_leader_epoch, fetch_only_from_leader)
        except ApiError as e:
            return e.error, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        found = log.end_offset_for_epoch(leader_epoch)
        if found is None:
            return Errors.NONE, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        end_offset, epoch = found
        return Errors.NONE, epoch, end_offset

    def truncate_to(self, offset: int) -> bool:
        """Partition.truncateTo (a follower's log, by its fetcher): the log and its leader-epoch cache end at
        ``offset``; the high watermark follows if it was beyond."""
        return self.local_log_or_error().truncate_to(offset)

    def append_records_to_leader(self, records: bytes, required_acks: int, now_ms: float, origin: str = CLIENT
                                 ) -> LogAppendInfo:
        """Partition.appendRecordsToLeader: Log.appendAsLeader at this leader epoch (offsets and
        partitionLeaderEpoch assigned) for ``origin`` (producer_state.CLIENT or COORDINATOR); acks=all needs
        ISR ≥ min.insync.replicas; then maybe advance the HW."""
        log = self.local_log_with_epoch(NO_LEADER_EPOCH_PROVIDED, require_leader=True)
        if required_acks == -1 and len(self.isr) < self.min_insync_replicas:
            raise ApiError(NOT_ENOUGH_REPLICAS, f"ISR {list(self.isr)} of {self.topic_partition} is below "
                                                f"min.insync.replicas {self.min_insync_replicas}")
        if log.config.compact:
            validate_keys(records, log.config, self.topic_partition)  # LogValidator.validateKey
        info = log.append_as_leader(records, self.leader_epoch, int(now_ms), origin)
        self.maybe_increment_leader_hw(now_ms)
        return info

    def low_watermark_if_leader(self, is_alive: Callable[[int], bool]) -> int:
        """Partition.lowWatermarkIfLeader: the smallest log start offset over the leader's log and the remote
        replicas on live brokers (as their fetches last told it); NOT_LEADER_OR_FOLLOWER on a follower."""
        if not self.is_leader or self.log is None:
            raise ApiError(Errors.NOT_LEADER_OR_FOLLOWER, f"broker {self.local_broker_id} is not the leader of "
                                                          f"{self.topic_partition}")
        low = self.log.log_start_offset
        for replica in self.remote_replicas.values():
            if replica.log_start_offset < low and is_alive(replica.broker_id):
                low = replica.log_start_offset
        return low

    def delete_records_on_leader(self, offset: int, is_alive: Callable[[int], bool]) -> tuple[int, int]:
        """Partition.deleteRecordsOnLeader: move the leader's log start offset to ``offset`` (-1: the high
        watermark); returns (the offset asked, after that conversion; the low watermark now). POLICY_VIOLATION when
        the topic's cleanup.policy lacks delete, OFFSET_OUT_OF_RANGE below 0 or beyond the high watermark
        (Log.maybeIncrementLogStartOffset), NOT_LEADER_OR_FOLLOWER when the leader is not local."""
        log = self.log
        if not self.is_leader or log is None:
            raise ApiError(Errors.NOT_LEADER_OR_FOLLOWER, f"Leader not local for partition {self.topic_partition} "
                                                          f"on broker {self.local_broker_id}")
        if not log.config.delete:
            raise ApiError(Errors.POLICY_VIOLATION, f"Records of partition {self.topic_partition} can not be "
                                                    f"deleted due to the configured policy")
        converted = log.high_watermark if offset == HIGH_WATERMARK else offset
        if converted < 0:
            raise ApiError(Errors.OFFSET_OUT_OF_RANGE, f"The offset {converted} for partition "
                                                       f"{self.topic_partition} is not valid")
        log.maybe_increment_log_start_offset(converted)
        return converted, self.low_watermark_if_leader(is_alive)

    def append_records_to_follower(self, fetch_offset: int, records: bytes, leader_high_watermark: int,
                                   leader_log_start_offset: int = -1, now_ms: float | None = None) -> bool:
        """ReplicaFetcherThread.processPartitionData: Log.appendAsFollower (offsets and epochs as the leader's
        batches carry them, so the leader-epoch cache follows the leader's), follow the leader's HW (min(leader HW,
        local LEO)) and its log start offset (retention on the leader moves ours). A fetch for an offset that is no
        longer our LEO is ignored (False)."""
        log = self.log
        if log is None or self.is_leader:
            return False
        if fetch_offset != log.log_end_offset:
            return False
        if records:
            # the time rolls a segment (segment.ms) and dates a new one, as the leader's append is told it
            log.append_as_follower(records, None if now_ms is None else int(now_ms))
        log.update_high_watermark(min(leader_high_watermark, log.log_end_offset))
        if leader_log_start_offset > log.log_start_offset:
            log.maybe_increment_log_start_offset(leader_log_start_offset)
        return True


@attrs.frozen
class LogReadInfo:
    """kafka.log.FetchDataInfo plus the offsets Partition.readRecords captures before reading (LogReadInfo)."""

    records: bytes
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    log_end_offset: int
    aborted_transactions: tuple[AbortedTxn, ...] | None = None  # READ_COMMITTED reads only


# --------------------------------------------------------------------------------------------- the ZooKeeper write


def submit_isr_updates(updates: Sequence[tuple[Partition, IsrProposal]], now_ms: float) -> Proc[list[bool]]:
    """Write ISR proposals to their state znodes in ONE pipelined batch (ReplicationUtils.updateLeaderAndIsr through
    KafkaZkClient.conditional_update_partition_states, which re-checks a BADVERSION) and complete them. Returns per
    proposal: committed?"""
    if not updates:
        return []
    written = yield from KafkaZkClient().conditional_update_partition_states(
        [(p.topic_partition, p.partition_state()) for _, p in updates])
    return [part.complete_isr_update(prop, version, _ISR_WRITE_ERRORS.get(code, Errors.UNKNOWN_SERVER_ERROR)
                                     if version is None or code != OK else Errors.NONE, now_ms)
            for (part, prop), (version, code) in zip(updates, written, strict=True)]


# What a failed ISR write answers (the error only matters as "not NONE": the ISR stays as it was).
_ISR_WRITE_ERRORS = {BADVERSION: Errors.INVALID_UPDATE_VERSION, NONODE: Errors.UNKNOWN_TOPIC_OR_PARTITION}
