"""kafka.server.ReplicaManager (2.6, ZooKeeper mode) as a pure, deterministic core.

Every public mutator is a generator (`core.effects.Proc`): it yields `messages.zk.ZkBatch` effects (ISR writes to
partition state znodes, ``isr_change_<seq>`` / ``log_dir_event_<seq>`` notifications) answered with the op results,
and `core.effects.Emit` effects (a delayed produce/fetch completing: ``Emit(reply_to, response)``) answered with
None. Time is always passed in as ``now_ms``. The only I/O is the local log's (core/broker/log.py).

Request admission (KafkaApis, §9.1) is in the ``handle_*`` methods: a control request whose broker epoch is older
than this broker's registration epoch is answered STALE_BROKER_EPOCH unprocessed.

Replication: the follower side builds ONE FetchRequest per leader broker per round (`build_fetch_requests`), batching
every partition it follows from that leader, and applies the FetchResponse (`handle_fetch_response`); the leader
side answers fetches (`handle_fetch`), updating follower state, expanding ISRs and advancing high watermarks. The
periodic tasks (isr-expiration every replica.lag.time.max.ms/2, isr-change-propagation every 2500 ms,
highwatermark-checkpoint every 5000 ms after the first LeaderAndIsr, delayed-operation expiry) run from
`run_scheduled_tasks(now_ms)`; `next_task_due_ms()` says when to call it next.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

import attrs

from core.broker.config import BrokerSideConfig
from core.broker.isr_propagation import ISR_CHANGE_PROPAGATION_CHECK_MS, IsrChangePropagation, propagate_log_dir_event
from core.broker.log import (
    REPLICATION_OFFSET_CHECKPOINT,
    KafkaStorageError,
    LogManager,
    read_offset_checkpoint,
    write_offset_checkpoint,
)
from core.broker.metadata_cache import MetadataCache
from core.broker.partition import (
    NO_LEADER_EPOCH_PROVIDED,
    ApiError,
    IsrProposal,
    Partition,
    _err,
    submit_isr_updates,
)
from core.effects import Emit, Proc
from messages.common import EPOCH_DURING_DELETE, NO_EPOCH, Errors, TopicPartition
from messages.replication import (
    FetchPartition,
    FetchPartitionData,
    FetchRequest,
    FetchResponse,
    ProduceRequest,
    ProduceResponse,
)
from messages.requests import (
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    PartitionError,
    StopReplicaPartitionState,
    StopReplicaRequest,
    StopReplicaResponse,
    UpdateMetadataRequest,
    UpdateMetadataResponse,
)

UNKNOWN_BROKER_EPOCH = -1  # AbstractControlRequest.UNKNOWN_BROKER_EPOCH
REQUEST_TIMED_OUT = _err("REQUEST_TIMED_OUT", Errors.UNKNOWN_SERVER_ERROR)
NOT_ENOUGH_REPLICAS_AFTER_APPEND = _err("NOT_ENOUGH_REPLICAS_AFTER_APPEND", Errors.NOT_LEADER_OR_FOLLOWER)


class _Offline:
    """HostedPartition.Offline: the partition's log dir failed."""

    def __repr__(self) -> str:
        return "HostedPartition.Offline"


OFFLINE = _Offline()


@attrs.define
class DelayedProduce:
    """kafka.server.DelayedProduce for one partition with acks=all."""

    reply_to: str
    tp: TopicPartition
    base_offset: int
    required_offset: int  # last appended offset + 1: done once the HW reaches it
    deadline_ms: float


@attrs.define
class DelayedFetch:
    """kafka.server.DelayedFetch: a fetch waiting for ``min_records`` or its ``max_wait_ms``."""

    reply_to: str
    request: FetchRequest
    deadline_ms: float


@attrs.frozen
class FollowerFetchState:
    """The follower side's fetcher entry for one partition (PartitionFetchState, simplified)."""

    leader_id: int
    leader_epoch: int


class ReplicaManager:
    """The broker's replica manager: hosted partitions, controller requests, replication, ISR, checkpoints."""

    def __init__(self, config: BrokerSideConfig, now_ms: float, log_manager: LogManager | None = None,
                 metadata_cache: MetadataCache | None = None, broker_epoch: int = UNKNOWN_BROKER_EPOCH) -> None:
        self.config = config
        self.local_broker_id = config.broker_id
        self.log_manager = log_manager if log_manager is not None else LogManager(config.log_dirs)
        self.metadata_cache = metadata_cache if metadata_cache is not None else MetadataCache(config.broker_id)
        self.broker_epoch = broker_epoch
        self.controller_epoch = 0  # KafkaController.InitialControllerEpoch
        self.all_partitions: dict[TopicPartition, Partition | _Offline] = {}
        self.isr_propagation = IsrChangePropagation(now_ms)
        self.is_shutting_down = False
        # follower side: the fetchers (ReplicaFetcherManager), by partition and by leader
        self.fetch_states: dict[TopicPartition, FollowerFetchState] = {}
        self._fetch_in_flight: dict[int, FetchRequest] = {}
        # purgatories
        self._delayed_produce: list[DelayedProduce] = []
        self._delayed_fetch: list[DelayedFetch] = []
        # log dir failures noticed but not yet handled (LogDirFailureChannel's queue)
        self._failed_dirs: list[str] = []
        self._handled_failed_dirs: set[str] = set()
        # scheduled tasks
        self.hw_checkpoint_started = False
        self._next_isr_expiration_ms = now_ms + config.isr_expiration_interval_ms
        self._next_isr_propagation_ms = now_ms + ISR_CHANGE_PROPAGATION_CHECK_MS
        self._next_hw_checkpoint_ms: float | None = None
        # metrics (meters as counts)
        self.isr_expands = 0  # IsrExpandsPerSec
        self.isr_shrinks = 0  # IsrShrinksPerSec
        self.failed_isr_updates = 0  # FailedIsrUpdatesPerSec
        self.log_dir_events_sent = 0

    # ================================================================================================ metrics / state

    def get_partition(self, tp: TopicPartition) -> Partition | _Offline | None:
        """ReplicaManager.getPartition: a Partition (online), OFFLINE, or None (not hosted)."""
        return self.all_partitions.get(tp)

    def online_partition(self, tp: TopicPartition) -> Partition | None:
        p = self.all_partitions.get(tp)
        return p if isinstance(p, Partition) else None

    def online_partitions(self) -> Iterable[Partition]:
        return (p for p in self.all_partitions.values() if isinstance(p, Partition))

    @property
    def leader_count(self) -> int:
        """LeaderCount gauge."""
        return sum(1 for p in self.online_partitions() if p.is_leader)

    @property
    def partition_count(self) -> int:
        """PartitionCount gauge (allPartitions.size, offline entries included)."""
        return len(self.all_partitions)

    @property
    def under_replicated_partitions(self) -> int:
        return sum(1 for p in self.online_partitions() if p.is_under_replicated)

    @property
    def under_min_isr_partition_count(self) -> int:
        return sum(1 for p in self.online_partitions() if p.is_under_min_isr())

    @property
    def at_min_isr_partition_count(self) -> int:
        return sum(1 for p in self.online_partitions() if p.is_at_min_isr())

    @property
    def offline_replica_count(self) -> int:
        return sum(1 for p in self.all_partitions.values() if p is OFFLINE)

    @property
    def reassigning_partitions(self) -> int:
        return sum(1 for p in self.online_partitions()
                   if p.is_leader and (p.adding_replicas or p.removing_replicas))

    def metrics(self) -> dict[str, int]:
        """Kafka's ReplicaManager metric names → current values (meters as total counts)."""
        return {
            "LeaderCount": self.leader_count,
            "PartitionCount": self.partition_count,
            "OfflineReplicaCount": self.offline_replica_count,
            "UnderReplicatedPartitions": self.under_replicated_partitions,
            "UnderMinIsrPartitionCount": self.under_min_isr_partition_count,
            "AtMinIsrPartitionCount": self.at_min_isr_partition_count,
            "ReassigningPartitions": self.reassigning_partitions,
            "IsrExpandsPerSec": self.isr_expands,
            "IsrShrinksPerSec": self.isr_shrinks,
            "FailedIsrUpdatesPerSec": self.failed_isr_updates,
        }

    # IsrChangeListener (Partition → ReplicaManager)
    def mark_expand(self) -> None:
        self.isr_expands += 1

    def mark_shrink(self) -> None:
        self.isr_shrinks += 1

    def mark_failed(self) -> None:
        self.failed_isr_updates += 1

    def record_isr_change(self, tp: TopicPartition, now_ms: float) -> None:
        """ReplicaManager.recordIsrChange."""
        self.isr_propagation.record_isr_change(tp, now_ms)

    def _new_partition(self, tp: TopicPartition) -> Partition:
        return Partition(tp, self.local_broker_id, self.log_manager, self.config.replica_lag_time_max_ms, self,
                         self.config.min_insync_replicas)

    # ===================================================================================================== admission

    def is_broker_epoch_stale(self, broker_epoch_in_request: int) -> bool:
        """KafkaApis.isBrokerEpochStale: −1 is never stale; otherwise stale iff older than our registration."""
        return broker_epoch_in_request != UNKNOWN_BROKER_EPOCH and broker_epoch_in_request < self.broker_epoch

    def handle_leader_and_isr(self, request: LeaderAndIsrRequest, now_ms: float) -> Proc[LeaderAndIsrResponse]:
        """KafkaApis.handleLeaderAndIsrRequest (ZK mode)."""
        if self.is_broker_epoch_stale(request.broker_epoch):
            return _lai_error_response(request, Errors.STALE_BROKER_EPOCH)
        return (yield from self.become_leader_or_follower(request, now_ms))

    def handle_update_metadata(self, request: UpdateMetadataRequest, now_ms: float) -> Proc[UpdateMetadataResponse]:
        """KafkaApis.handleUpdateMetadataRequest (ZK mode)."""
        if self.is_broker_epoch_stale(request.broker_epoch):
            return UpdateMetadataResponse(Errors.STALE_BROKER_EPOCH)
        deleted = self.maybe_update_metadata_cache(request)
        if deleted is None:
            return UpdateMetadataResponse(Errors.STALE_CONTROLLER_EPOCH)
        yield from ()
        return UpdateMetadataResponse(Errors.NONE)

    def handle_stop_replica(self, request: StopReplicaRequest, now_ms: float) -> Proc[StopReplicaResponse]:
        """KafkaApis.handleStopReplicaRequest (ZK mode)."""
        if self.is_broker_epoch_stale(request.broker_epoch):
            return StopReplicaResponse(Errors.STALE_BROKER_EPOCH, tuple(
                PartitionError(s.topic_partition, Errors.STALE_BROKER_EPOCH) for s in request.partition_states))
        partition_errors, error = yield from self.stop_replicas(
            request.controller_id, request.controller_epoch, request.partition_states, now_ms)
        return StopReplicaResponse(error, tuple(PartitionError(tp, e) for tp, e in partition_errors.items()))

    # ======================================================================================== becomeLeaderOrFollower

    def become_leader_or_follower(self, request: LeaderAndIsrRequest, now_ms: float) -> Proc[LeaderAndIsrResponse]:
        """ReplicaManager.becomeLeaderOrFollower (§9.2)."""
        if request.controller_epoch < self.controller_epoch:
            return _lai_error_response(request, Errors.STALE_CONTROLLER_EPOCH)
        self.controller_epoch = request.controller_epoch
        response: dict[TopicPartition, Errors] = {}
        accepted: list[tuple[Partition, LeaderAndIsrPartitionState]] = []
        for state in request.partition_states:
            tp = state.topic_partition
            hosted = self.all_partitions.get(tp)
            if hosted is OFFLINE:
                response[tp] = Errors.KAFKA_STORAGE_ERROR
                continue
            if hosted is None:
                hosted = self._new_partition(tp)
                self.all_partitions[tp] = hosted
            assert isinstance(hosted, Partition)
            current = hosted.get_leader_epoch()
            if state.leader_epoch > current:
                if self.local_broker_id in state.replicas:
                    accepted.append((hosted, state))
                else:
                    response[tp] = Errors.UNKNOWN_TOPIC_OR_PARTITION
            else:
                # smaller: "leader epoch … smaller than the current"; equal: already applied
                response[tp] = Errors.STALE_CONTROLLER_EPOCH
        hw_checkpoints = self.log_manager.read_high_watermark_checkpoints() if accepted else {}
        to_lead = [(p, s) for p, s in accepted if s.leader == self.local_broker_id]
        to_follow = [(p, s) for p, s in accepted if s.leader != self.local_broker_id]
        became_leaders = self.make_leaders(to_lead, response, now_ms, hw_checkpoints) if to_lead else []
        became_followers = self.make_followers(to_follow, response, now_ms, hw_checkpoints) if to_follow else []
        # a Partition whose log could not be created (offline dir) is mapped to Offline
        for state in request.partition_states:
            tp = state.topic_partition
            p = self.all_partitions.get(tp)
            if isinstance(p, Partition) and p.log is None:
                self.mark_partition_offline(tp)
        if not self.hw_checkpoint_started:
            self.hw_checkpoint_started = True
            self._next_hw_checkpoint_ms = now_ms + self.config.replica_high_watermark_checkpoint_interval_ms
        del became_leaders  # (onLeadershipChange callback: group/transaction coordinators, not modelled)
        for p in became_followers:
            yield from self._complete_delayed_requests(p.topic_partition, now_ms, leadership_changed=True)
        yield from self._process_log_dir_failures()
        return LeaderAndIsrResponse(Errors.NONE, tuple(
            PartitionError(s.topic_partition, response.get(s.topic_partition, Errors.NONE))
            for s in request.partition_states))

    def make_leaders(self, states: Sequence[tuple[Partition, LeaderAndIsrPartitionState]],
                     response: dict[TopicPartition, Errors], now_ms: float,
                     hw_checkpoints: dict[str, dict[TopicPartition, int]] | None = None) -> list[Partition]:
        """ReplicaManager.makeLeaders: stop fetching, Partition.makeLeader each; returns those that became leader."""
        for p, _ in states:
            response[p.topic_partition] = Errors.NONE
        self.remove_fetchers(p.topic_partition for p, _ in states)
        became: list[Partition] = []
        for p, state in states:
            try:
                if p.make_leader(state, now_ms, hw_checkpoints):
                    became.append(p)
            except KafkaStorageError as e:
                self._note_storage_error(e)
                response[p.topic_partition] = Errors.KAFKA_STORAGE_ERROR
        return became

    def make_followers(self, states: Sequence[tuple[Partition, LeaderAndIsrPartitionState]],
                       response: dict[TopicPartition, Errors], now_ms: float,
                       hw_checkpoints: dict[str, dict[TopicPartition, int]] | None = None) -> list[Partition]:
        """ReplicaManager.makeFollowers: Partition.makeFollower if the new leader is alive in the metadata cache
        (else only create the log); for the changed ones: stop fetching, truncate to the high watermark, complete
        delayed requests, and (unless shutting down) fetch from the new leader at the high watermark."""
        for p, _ in states:
            response[p.topic_partition] = Errors.NONE
        changed: list[Partition] = []
        for p, state in states:
            try:
                if self.metadata_cache.has_alive_broker(state.leader):
                    if p.make_follower(state, now_ms, hw_checkpoints):
                        changed.append(p)
                else:
                    p.create_log_if_not_exists(state.is_new, hw_checkpoints)
            except KafkaStorageError as e:
                self._note_storage_error(e)
                response[p.topic_partition] = Errors.KAFKA_STORAGE_ERROR
        self.remove_fetchers(p.topic_partition for p in changed)
        for p in changed:
            # the 2.6 fetcher starts at the high watermark and truncates (OffsetsForLeaderEpoch not modelled)
            if p.log is not None:
                try:
                    p.log.truncate_to(p.log.high_watermark)
                except KafkaStorageError as e:
                    self._note_storage_error(e)
                    response[p.topic_partition] = Errors.KAFKA_STORAGE_ERROR
        if not self.is_shutting_down:
            for p in changed:
                if p.log is not None and p.leader_replica_id is not None:
                    self.fetch_states[p.topic_partition] = FollowerFetchState(p.leader_replica_id, p.leader_epoch)
        return changed

    def mark_partition_offline(self, tp: TopicPartition) -> None:
        """ReplicaManager.markPartitionOffline."""
        p = self.all_partitions.get(tp)
        if isinstance(p, Partition):
            p.mark_offline()
        self.all_partitions[tp] = OFFLINE
        self.fetch_states.pop(tp, None)

    # ===================================================================================================== stopReplicas

    def stop_replicas(self, controller_id: int, controller_epoch: int,
                      partition_states: Sequence[StopReplicaPartitionState], now_ms: float
                      ) -> Proc[tuple[dict[TopicPartition, Errors], Errors]]:
        """ReplicaManager.stopReplicas (§9.3): returns (per-partition errors, top-level error)."""
        if controller_epoch < self.controller_epoch:
            return {}, Errors.STALE_CONTROLLER_EPOCH
        self.controller_epoch = controller_epoch
        response: dict[TopicPartition, Errors] = {}
        stopped: list[StopReplicaPartitionState] = []
        for st in partition_states:
            tp = st.topic_partition
            hosted = self.all_partitions.get(tp)
            if hosted is OFFLINE:
                response[tp] = Errors.KAFKA_STORAGE_ERROR
            elif isinstance(hosted, Partition):
                requested = st.leader_epoch
                if requested in (EPOCH_DURING_DELETE, NO_EPOCH) or requested > hosted.get_leader_epoch():
                    stopped.append(st)
                else:
                    response[tp] = Errors.FENCED_LEADER_EPOCH
            else:
                stopped.append(st)
        # first stop fetchers, then remove deleted partitions, complete delayed operations, delete logs
        self.remove_fetchers(st.topic_partition for st in stopped)
        deleted: list[TopicPartition] = []
        for st in stopped:
            tp = st.topic_partition
            if st.delete_partition:
                hosted = self.all_partitions.get(tp)
                if isinstance(hosted, Partition):
                    del self.all_partitions[tp]
                    hosted.delete()
                deleted.append(tp)
            yield from self._complete_delayed_requests(tp, now_ms, leadership_changed=True)
        for tp in deleted:
            try:
                self.log_manager.delete_log(tp)
            except KafkaStorageError as e:
                self._note_storage_error(e)
                response[tp] = Errors.KAFKA_STORAGE_ERROR
        for st in partition_states:
            response.setdefault(st.topic_partition, Errors.NONE)
        yield from self._process_log_dir_failures()
        return {st.topic_partition: response[st.topic_partition] for st in partition_states}, Errors.NONE

    # ============================================================================================ UpdateMetadata

    def maybe_update_metadata_cache(self, request: UpdateMetadataRequest) -> list[TopicPartition] | None:
        """ReplicaManager.maybeUpdateMetadataCache: None if the controller epoch is stale (Kafka throws
        ControllerMovedException → STALE_CONTROLLER_EPOCH), else the partitions deleted from the cache."""
        if request.controller_epoch < self.controller_epoch:
            return None
        deleted = self.metadata_cache.update_metadata(request)
        self.controller_epoch = request.controller_epoch
        return deleted

    # ============================================================================================ leader: fetch

    def _get_partition_or_error(self, tp: TopicPartition, expect_leader: bool) -> Partition:
        """ReplicaManager.getPartitionOrException."""
        hosted = self.all_partitions.get(tp)
        if isinstance(hosted, Partition):
            return hosted
        if hosted is OFFLINE:
            raise ApiError(Errors.KAFKA_STORAGE_ERROR, f"partition {tp} is in an offline log directory")
        if self.metadata_cache.contains(tp):
            raise ApiError(Errors.NOT_LEADER_OR_FOLLOWER if expect_leader else Errors.REPLICA_NOT_AVAILABLE)
        raise ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION)

    def _read_partition(self, fp: FetchPartition, is_follower: bool) -> tuple[FetchPartitionData, int]:
        """ReplicaManager.readFromLocalLog for one partition: (data, leader LEO at read time)."""
        try:
            p = self._get_partition_or_error(fp.tp, expect_leader=True)
            records, hw, leo = p.read_records(fp.fetch_offset, fp.leader_epoch, self.config.replica_fetch_max_records,
                                              fetch_only_from_leader=True, committed_only=not is_follower)
            return FetchPartitionData(fp.tp, Errors.NONE, hw, leo, records), leo
        except ApiError as e:
            return FetchPartitionData(fp.tp, e.error), -1
        except KafkaStorageError as e:
            self._note_storage_error(e)
            return FetchPartitionData(fp.tp, Errors.KAFKA_STORAGE_ERROR), -1

    def _read_all(self, request: FetchRequest) -> list[FetchPartitionData]:
        return [self._read_partition(fp, request.replica_id >= 0)[0] for fp in request.partitions]

    def handle_fetch(self, request: FetchRequest, now_ms: float, reply_to: str = "") -> Proc[FetchResponse | None]:
        """ReplicaManager.fetchMessages: read, update follower fetch state (LEO, lastCaughtUpTime, HW), expand ISRs
        (one ZooKeeper batch for the whole request), then answer — or park in the fetch purgatory (None is
        returned; the response is emitted later as ``Emit(reply_to, FetchResponse)``)."""
        is_follower = request.replica_id >= 0
        results: list[FetchPartitionData] = []
        proposals: list[tuple[Partition, IsrProposal]] = []
        hw_moved: list[TopicPartition] = []
        for fp in request.partitions:
            data, leo = self._read_partition(fp, is_follower)
            if is_follower and data.error == Errors.NONE:
                p = self.all_partitions[fp.tp]
                assert isinstance(p, Partition)
                hw_before = p.high_watermark
                if p.update_follower_fetch_state(request.replica_id, fp.fetch_offset, 0, now_ms, leo):
                    proposal = p.maybe_expand_isr(request.replica_id)
                    if proposal is not None:
                        proposals.append((p, proposal))
                    data = attrs.evolve(data, high_watermark=p.high_watermark)
                else:
                    data = attrs.evolve(data, records=())  # not an assigned replica: withEmptyFetchInfo
                if p.high_watermark != hw_before:
                    hw_moved.append(fp.tp)
            results.append(data)
        if proposals:
            yield from submit_isr_updates(proposals, now_ms)
        for tp in hw_moved:
            yield from self._complete_delayed_requests(tp, now_ms)
        yield from self._process_log_dir_failures()
        total = sum(len(d.records) for d in results)
        has_error = any(d.error != Errors.NONE for d in results)
        if request.max_wait_ms > 0 and total < request.min_records and not has_error and request.partitions:
            self._delayed_fetch.append(DelayedFetch(reply_to, request, now_ms + request.max_wait_ms))
            return None
        return FetchResponse(tuple(results))

    # ========================================================================================== leader: produce

    def handle_produce(self, request: ProduceRequest, now_ms: float, reply_to: str = ""
                       ) -> Proc[ProduceResponse | None]:
        """ReplicaManager.appendRecords (one partition): append to the leader log; acks=1 answers at once, acks=all
        waits in the produce purgatory until the HW covers the records (None returned; the response is emitted as
        ``Emit(reply_to, ProduceResponse)``)."""
        tp = request.tp
        try:
            p = self._get_partition_or_error(tp, expect_leader=True)
            base = p.append_records_to_leader(request.records, request.acks, now_ms)
        except ApiError as e:
            return ProduceResponse(tp, e.error)
        except KafkaStorageError as e:
            self._note_storage_error(e)
            yield from self._process_log_dir_failures()
            return ProduceResponse(tp, Errors.KAFKA_STORAGE_ERROR)
        yield from self._complete_delayed_requests(tp, now_ms)
        required = base + len(request.records)
        if request.acks == -1 and p.high_watermark < required:
            self._delayed_produce.append(DelayedProduce(reply_to, tp, base, required, now_ms + request.timeout_ms))
            return None
        return ProduceResponse(tp, Errors.NONE, base, p.high_watermark)

    # ================================================================================================ purgatory

    def _produce_outcome(self, op: DelayedProduce) -> Errors | None:
        """Partition.checkEnoughReplicasReachOffset: None while still waiting."""
        p = self.online_partition(op.tp)
        if p is None or not p.is_leader:
            return Errors.NOT_LEADER_OR_FOLLOWER
        if p.high_watermark >= op.required_offset:
            return NOT_ENOUGH_REPLICAS_AFTER_APPEND if len(p.isr) < p.min_insync_replicas else Errors.NONE
        return None

    def _complete_delayed_requests(self, tp: TopicPartition, now_ms: float,
                                   leadership_changed: bool = False) -> Proc[None]:
        """tryCompleteDelayedRequests / completeDelayedFetchOrProduceRequests for one partition."""
        keep_p: list[DelayedProduce] = []
        for op in self._delayed_produce:
            outcome = self._produce_outcome(op) if op.tp == tp else None
            if op.tp == tp and leadership_changed and outcome is None:
                outcome = Errors.NOT_LEADER_OR_FOLLOWER
            if outcome is None:
                keep_p.append(op)
            else:
                p = self.online_partition(tp)
                hw = p.high_watermark if p is not None else -1
                yield Emit(op.reply_to, ProduceResponse(tp, outcome, op.base_offset, hw))
        self._delayed_produce = keep_p
        keep_f: list[DelayedFetch] = []
        for op in self._delayed_fetch:
            if all(fp.tp != tp for fp in op.request.partitions):
                keep_f.append(op)
                continue
            data = self._read_all(op.request)
            if leadership_changed:
                data = [attrs.evolve(d, error=Errors.NOT_LEADER_OR_FOLLOWER, records=())
                        if d.tp == tp and d.error == Errors.UNKNOWN_TOPIC_OR_PARTITION else d for d in data]
            if (leadership_changed or any(d.error != Errors.NONE for d in data)
                    or sum(len(d.records) for d in data) >= op.request.min_records):
                yield Emit(op.reply_to, FetchResponse(tuple(data)))
            else:
                keep_f.append(op)
        self._delayed_fetch = keep_f

    def expire_delayed_operations(self, now_ms: float) -> Proc[None]:
        """Purgatory expiration: delayed produces time out (REQUEST_TIMED_OUT); delayed fetches answer with what
        is there."""
        keep_p = []
        for op in self._delayed_produce:
            if op.deadline_ms <= now_ms:
                yield Emit(op.reply_to, ProduceResponse(op.tp, REQUEST_TIMED_OUT, op.base_offset))
            else:
                keep_p.append(op)
        self._delayed_produce = keep_p
        keep_f = []
        for op in self._delayed_fetch:
            if op.deadline_ms <= now_ms:
                yield Emit(op.reply_to, FetchResponse(tuple(self._read_all(op.request))))
            else:
                keep_f.append(op)
        self._delayed_fetch = keep_f

    @property
    def delayed_produce_count(self) -> int:
        return len(self._delayed_produce)

    @property
    def delayed_fetch_count(self) -> int:
        return len(self._delayed_fetch)

    # ========================================================================================= follower: fetchers

    def remove_fetchers(self, tps: Iterable[TopicPartition]) -> None:
        """ReplicaFetcherManager.removeFetcherForPartitions."""
        for tp in tps:
            self.fetch_states.pop(tp, None)

    def fetch_leaders(self) -> set[int]:
        return {st.leader_id for st in self.fetch_states.values()}

    def fetch_request_for(self, leader_id: int) -> FetchRequest | None:
        """The next FetchRequest to ``leader_id``: every partition followed from it, at the local LEO. None if a
        request to that leader is in flight or nothing is fetched from it."""
        if leader_id in self._fetch_in_flight:
            return None
        parts = []
        for tp, st in self.fetch_states.items():
            if st.leader_id != leader_id:
                continue
            p = self.online_partition(tp)
            if p is None or p.log is None:
                continue
            parts.append(FetchPartition(tp, p.log.log_end_offset, st.leader_epoch))
        if not parts:
            return None
        request = FetchRequest(self.local_broker_id, tuple(sorted(parts, key=lambda f: f.tp)),
                               self.config.replica_fetch_wait_max_ms, self.config.replica_fetch_min_records)
        self._fetch_in_flight[leader_id] = request
        return request

    def build_fetch_requests(self) -> dict[int, FetchRequest]:
        """One FetchRequest per leader broker with no request in flight (ReplicaFetcherThread.buildFetch)."""
        out = {}
        for leader in sorted(self.fetch_leaders()):
            req = self.fetch_request_for(leader)
            if req is not None:
                out[leader] = req
        return out

    def fetch_failed(self, leader_id: int) -> None:
        """The request to ``leader_id`` got no response (leader gone / timeout): allow a new one."""
        self._fetch_in_flight.pop(leader_id, None)

    def handle_fetch_response(self, leader_id: int, response: FetchResponse, now_ms: float) -> Proc[int]:
        """ReplicaFetcherThread.processPartitionData for each partition still fetched from ``leader_id`` at the
        offset that was requested; returns the number of records appended."""
        request = self._fetch_in_flight.pop(leader_id, None)
        offsets = {fp.tp: fp.fetch_offset for fp in request.partitions} if request is not None else {}
        appended = 0
        for d in response.partitions:
            st = self.fetch_states.get(d.tp)
            if st is None or st.leader_id != leader_id or d.error != Errors.NONE or d.tp not in offsets:
                continue
            p = self.online_partition(d.tp)
            if p is None:
                continue
            try:
                if p.append_records_to_follower(offsets[d.tp], d.records, d.high_watermark, d.log_end_offset):
                    appended += len(d.records)
            except KafkaStorageError as e:
                self._note_storage_error(e)
        yield from self._process_log_dir_failures()
        return appended

    # ============================================================================================= ISR expiration

    def maybe_shrink_isr(self, now_ms: float) -> Proc[list[TopicPartition]]:
        """The "isr-expiration" task: Partition.maybeShrinkIsr over every led partition, one ZooKeeper batch.
        Returns the partitions whose ISR shrank."""
        proposals: list[tuple[Partition, IsrProposal]] = []
        for p in self.online_partitions():
            if p.is_leader:
                proposal = p.maybe_shrink_isr(now_ms)
                if proposal is not None:
                    proposals.append((p, proposal))
        if not proposals:
            return []
        hw_before = {p.topic_partition: p.high_watermark for p, _ in proposals}
        committed = yield from submit_isr_updates(proposals, now_ms)
        for p, _ in proposals:
            if p.high_watermark != hw_before[p.topic_partition]:
                yield from self._complete_delayed_requests(p.topic_partition, now_ms)
        return [p.topic_partition for (p, _), ok in zip(proposals, committed, strict=True) if ok]

    def maybe_propagate_isr_changes(self, now_ms: float) -> Proc[tuple[TopicPartition, ...]]:
        """ReplicaManager.maybePropagateIsrChanges."""
        return (yield from self.isr_propagation.maybe_propagate_isr_changes(now_ms))

    # ========================================================================================== HW checkpointing

    def checkpoint_high_watermarks(self) -> Proc[None]:
        """ReplicaManager.checkpointHighWatermarks: ``replication-offset-checkpoint`` in every live log dir."""
        by_dir: dict[str, dict[TopicPartition, int]] = {d: {} for d in self.log_manager.live_log_dirs}
        for p in self.online_partitions():
            if p.log is not None and p.log.parent_dir in by_dir:
                by_dir[p.log.parent_dir][p.topic_partition] = p.log.high_watermark
        for d, hws in by_dir.items():
            try:
                if not os.path.isdir(d):
                    raise KafkaStorageError(f"log dir {d} is not available", d)
                path = os.path.join(d, REPLICATION_OFFSET_CHECKPOINT)
                owns = self.log_manager.owns
                if owns is not None:
                    # sharded: keep the other shards' entries (all shards run on one thread, so no race)
                    others = {tp: o for tp, o in read_offset_checkpoint(path).items() if not owns(tp)}
                    hws = {**others, **hws}
                write_offset_checkpoint(path, hws)
            except KafkaStorageError as e:
                e.log_dir = d
                self._note_storage_error(e)
        yield from self._process_log_dir_failures()

    # ========================================================================================= log dir failure

    def _note_storage_error(self, e: KafkaStorageError) -> None:
        """LogDirFailureChannel.maybeAddOfflineLogDir."""
        if e.log_dir is not None and e.log_dir not in self._handled_failed_dirs and e.log_dir not in self._failed_dirs:
            self.log_manager.mark_dir_offline(e.log_dir)
            self._failed_dirs.append(e.log_dir)

    def _process_log_dir_failures(self) -> Proc[None]:
        while self._failed_dirs:
            d = self._failed_dirs.pop(0)
            yield from self.handle_log_dir_failure(d)

    def handle_log_dir_failure(self, log_dir: str, send_zk_notification: bool = True) -> Proc[list[TopicPartition]]:
        """ReplicaManager.handleLogDirFailure: the dir's partitions go Offline (fetchers removed), the log manager
        forgets the dir, and ``/log_dir_event_notification/log_dir_event_<seq>`` tells the controller."""
        log_dir = os.path.abspath(log_dir)
        if log_dir in self._handled_failed_dirs or log_dir not in self.log_manager.log_dirs:
            return []
        self._handled_failed_dirs.add(log_dir)
        if log_dir in self._failed_dirs:
            self._failed_dirs.remove(log_dir)
        offline = [p.topic_partition for p in self.online_partitions()
                   if p.log is not None and p.log.parent_dir == log_dir]
        self.remove_fetchers(offline)
        for tp in offline:
            self.mark_partition_offline(tp)
        self.log_manager.handle_log_dir_failure(log_dir)
        for tp in offline:
            yield from self._complete_delayed_requests(tp, 0, leadership_changed=True)
        if send_zk_notification and (yield from propagate_log_dir_event(self.local_broker_id)):
            self.log_dir_events_sent += 1
        return offline

    # ============================================================================================ scheduling

    def next_task_due_ms(self) -> float:
        """When `run_scheduled_tasks` has something to do next."""
        due = [self._next_isr_expiration_ms, self._next_isr_propagation_ms]
        if self._next_hw_checkpoint_ms is not None:
            due.append(self._next_hw_checkpoint_ms)
        due += [op.deadline_ms for op in self._delayed_produce]
        due += [op.deadline_ms for op in self._delayed_fetch]
        return min(due)

    def run_scheduled_tasks(self, now_ms: float) -> Proc[None]:
        """Run every periodic task that is due: isr-expiration, isr-change-propagation, highwatermark-checkpoint,
        delayed-operation expiry. Periods are fixed-rate from the previous due time (Kafka's scheduler)."""
        if now_ms >= self._next_isr_expiration_ms:
            yield from self.maybe_shrink_isr(now_ms)
            self._next_isr_expiration_ms = _next_due(self._next_isr_expiration_ms, now_ms,
                                                     self.config.isr_expiration_interval_ms)
        if now_ms >= self._next_isr_propagation_ms:
            yield from self.maybe_propagate_isr_changes(now_ms)
            self._next_isr_propagation_ms = _next_due(self._next_isr_propagation_ms, now_ms,
                                                      ISR_CHANGE_PROPAGATION_CHECK_MS)
        if self._next_hw_checkpoint_ms is not None and now_ms >= self._next_hw_checkpoint_ms:
            yield from self.checkpoint_high_watermarks()
            self._next_hw_checkpoint_ms = _next_due(self._next_hw_checkpoint_ms, now_ms,
                                                    self.config.replica_high_watermark_checkpoint_interval_ms)
        yield from self.expire_delayed_operations(now_ms)

    def shutdown(self, checkpoint_hw: bool = True) -> Proc[None]:
        """ReplicaManager.shutdown: stop fetching; checkpoint high watermarks."""
        self.is_shutting_down = True
        self.fetch_states.clear()
        self._fetch_in_flight.clear()
        if checkpoint_hw:
            yield from self.checkpoint_high_watermarks()


def _next_due(prev_due: float, now_ms: float, period: float) -> float:
    nxt = prev_due + period
    if nxt <= now_ms:  # missed runs are not replayed
        nxt = now_ms + period
    return nxt


def _lai_error_response(request: LeaderAndIsrRequest, error: Errors) -> LeaderAndIsrResponse:
    """LeaderAndIsrRequest.getErrorResponse: top-level error, every partition with the same error."""
    return LeaderAndIsrResponse(error, tuple(PartitionError(s.topic_partition, error)
                                             for s in request.partition_states))


__all__ = [
    "OFFLINE",
    "DelayedFetch",
    "DelayedProduce",
    "FollowerFetchState",
    "ReplicaManager",
    "NO_LEADER_EPOCH_PROVIDED",
]
