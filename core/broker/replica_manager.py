"""kafka.server.ReplicaManager (2.6, ZooKeeper mode) as a pure, deterministic core.

Every public mutator is a generator (`core.effects.Proc`): it yields `messages.zk.ZkBatch` effects (ISR writes to
partition state znodes, ``isr_change_<seq>`` / ``log_dir_event_<seq>`` notifications) answered with the op results,
and `core.effects.Respond` effects (a delayed produce/fetch completing: ``Respond(reply_to, response)``) answered with
None. Time is always passed in as ``now_ms``. The only I/O is the local log's (core/broker/log.py, log_manager.py,
checkpoints.py). The delayed operations the purgatories hold are core/broker/delayed_operations.py's.

Request admission (KafkaApis, §9.1) is in the ``handle_*`` methods: a control request whose broker epoch is older
than this broker's registration epoch is answered STALE_BROKER_EPOCH unprocessed.

Replication: the follower side (Kafka's ReplicaFetcherManager / ReplicaFetcherThread / AbstractFetcherThread) is
core/broker/replica_fetcher.py's `ReplicaFetcherManager`, held as ``replica_fetcher_manager``: makeFollowers adds a
partition to it *Truncating* (core/broker/fetcher_state.py), and it asks each leader OffsetsForLeaderEpoch, truncates,
then fetches, one request per leader in flight; the PartitionActor and the API modules drive it through this class
(``next_request_for``, ``handle_epoch_response``, ``handle_fetch_response`` ...), which forwards. The leader side
answers OffsetsForLeaderEpoch from its leader-epoch caches (`handle_offsets_for_leader_epoch`) and fetches
(`handle_fetch`), updating follower state, expanding ISRs and advancing high watermarks. The
periodic tasks (isr-expiration every replica.lag.time.max.ms/2, isr-change-propagation every 2500 ms,
highwatermark-checkpoint every 5000 ms after the first LeaderAndIsr, the LogManager's retention, flusher,
recovery-point and log-start-offset checkpoints, delayed-operation expiry) run from
`run_scheduled_tasks(now_ms)`; `next_task_due_ms()` says when to call it next.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence

import attrs

from core.broker import alter_log_dirs
from core.broker.checkpoints import REPLICATION_OFFSET_CHECKPOINT, read_offset_checkpoint, write_offset_checkpoint
from core.broker.config import BrokerSideConfig
from core.broker.delayed_operations import (
    DelayedDeleteRecords,
    DelayedFetch,
    DelayedProduce,
    DelayedWriteTxnMarkers,
    DeleteRecordsPartitionStatus,
    ProducePartitionStatus,
)
from core.broker.fetch_session import FetchContext, FetchSession, FetchSessionCache
from core.broker.fetcher_state import FollowerFetchState
from core.broker.isr_propagation import ISR_CHANGE_PROPAGATION_CHECK_MS, IsrChangePropagation, propagate_log_dir_event
from core.broker.kafka_storage_error import KafkaStorageError
from core.broker.leader_epoch_cache import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
from core.broker.log_config import MIN_IN_SYNC_REPLICAS, LogConfigs, log_defaults_from_broker_config
from core.broker.log_manager import LogManager, log_initial_task_delay_ms
from core.broker.metadata_cache import MetadataCache
from core.broker.partition import (
    FETCH_HIGH_WATERMARK,
    FETCH_LOG_END,
    FETCH_TXN_COMMITTED,
    NO_LEADER_EPOCH_PROVIDED,
    READ_COMMITTED,
    ApiError,
    IsrProposal,
    Partition,
    submit_isr_updates,
)
from core.broker.producer_state import CLIENT, COORDINATOR, VerificationGuard
from core.broker.replica_fetcher import FetcherRequest, ReplicaFetcherManager
from core.broker.replica_selector import ClientMetadata, PartitionView, ReplicaView, replica_selector_for
from core.coordinator.transaction.verification import (
    TransactionalBatch,
    VerifyPartitionsInTxn,
    coordinator_verification_error,
    transaction_coordinator_partition,
    transactional_batch,
    unverified_append_error,
    verification_response_errors,
)
from core.effects import Proc, Respond
from core.quota.replication_quota_manager import (
    ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND,
    ALTER_LOG_DIRS_REPLICATION,
    DEFAULT_REPLICATION_THROTTLED_RATE,
    FOLLOWER_REPLICATION,
    FOLLOWER_REPLICATION_THROTTLED_REPLICAS,
    LEADER_REPLICATION,
    LEADER_REPLICATION_THROTTLED_REPLICAS,
    ReplicationQuotaConfig,
    ReplicationQuotaManager,
)
from messages.common import EPOCH_DURING_DELETE, NO_EPOCH, Broker, Errors, TopicPartition
from messages.replication import (
    DEBUGGING_REPLICA_ID,
    GROUP_METADATA_TOPIC_NAME,
    INVALID_LOW_WATERMARK,
    AbortedTransaction,
    AlterReplicaLogDirsRequest,
    AlterReplicaLogDirsResponse,
    DeleteRecordsPartitionResult,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DescribeMetadataCacheRequest,
    DescribeMetadataCacheResponse,
    FetchPartition,
    FetchPartitionData,
    FetchRequest,
    FetchResponse,
    LeadershipChange,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetForLeaderPartitionResult,
    OffsetForLeaderTopicResult,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
    ProducePartitionResponse,
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
from messages.topic import INTERNAL_TOPICS, TRANSACTION_STATE_TOPIC_NAME
from messages.txn_markers import (
    TxnMarkerEntry,
    TxnMarkerPartitionResult,
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)
from protocol.records import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    NO_SEQUENCE,
    EndTransactionMarker,
    build_end_txn_marker_batch,
    produce_records_error,
)

UNKNOWN_BROKER_EPOCH = -1  # AbstractControlRequest.UNKNOWN_BROKER_EPOCH
FUTURE_LOCAL_REPLICA_ID = -3  # Request.FutureLocalReplicaId: a local read up to the log end, any replica
# the LogManager's other periodic tasks (KafkaConfig names and 2.6 defaults; read from the broker's log.* properties)
LOG_FLUSH_OFFSET_CHECKPOINT_INTERVAL_MS = "log.flush.offset.checkpoint.interval.ms"  # 60000
LOG_FLUSH_START_OFFSET_CHECKPOINT_INTERVAL_MS = "log.flush.start.offset.checkpoint.interval.ms"  # 60000
LOG_FLUSH_SCHEDULER_INTERVAL_MS = "log.flush.scheduler.interval.ms"  # Long.MaxValue: never
_LOG_TASK_DEFAULTS = {LOG_FLUSH_OFFSET_CHECKPOINT_INTERVAL_MS: 60000,
                      LOG_FLUSH_START_OFFSET_CHECKPOINT_INTERVAL_MS: 60000,
                      LOG_FLUSH_SCHEDULER_INTERVAL_MS: 2**63 - 1}

# KafkaConfig.requestTimeoutMs (request.timeout.ms, 30000): how long WriteTxnMarkers' appends wait for the ISR
WRITE_TXN_MARKERS_TIMEOUT_MS = 30000

log = logging.getLogger("kactor.broker")


class _Offline:
    """HostedPartition.Offline: the partition's log dir failed."""

    def __repr__(self) -> str:
        return "HostedPartition.Offline"


OFFLINE = _Offline()


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
        # LogManager's log configs: broker defaults (dynamic ones applied) and the hosted topics' overrides
        # KafkaServer.copyKafkaConfigToLog: the broker's log.* properties are every log's defaults
        self.log_configs = LogConfigs({**log_defaults_from_broker_config(dict(config.log_props)),
                                       MIN_IN_SYNC_REPLICAS: str(config.min_insync_replicas)})
        self.log_manager.config_for = self.log_configs.for_topic  # a log starts with its topic's LogConfig
        # QuotaFactory's leader and follower ReplicationQuotaManagers; the throttled replicas are read from the hosted
        # topics' overrides (TopicConfigHandler), the rates come with update_replication_quotas (BrokerConfigHandler)
        quota_config = ReplicationQuotaConfig(config.replication_quota_window_num,
                                              config.replication_quota_window_size_seconds)
        self.leader_quota = ReplicationQuotaManager(quota_config, LEADER_REPLICATION, config.broker_id,
                                                    LEADER_REPLICATION_THROTTLED_REPLICAS, self.log_configs.overrides)
        self.follower_quota = ReplicationQuotaManager(quota_config, FOLLOWER_REPLICATION, config.broker_id,
                                                      FOLLOWER_REPLICATION_THROTTLED_REPLICAS,
                                                      self.log_configs.overrides)
        # QuotaFactory's alterLogDirs quota: ReplicaAlterLogDirsThread holds back every move while it is exceeded
        self.alter_log_dirs_quota = ReplicationQuotaManager(quota_config, ALTER_LOG_DIRS_REPLICATION, config.broker_id,
                                                            ALTER_LOG_DIRS_IO_MAX_BYTES_PER_SECOND, {})
        self.is_shutting_down = False
        # follower side: the fetchers (ReplicaFetcherManager, core/broker/replica_fetcher.py)
        self.replica_fetcher_manager = ReplicaFetcherManager(self)
        # leader side: fetch sessions (FetchSessionCache), ids made deterministic from a counter
        self.fetch_sessions = FetchSessionCache()
        # KIP-392: replica.selector.class (None: consumers are never sent to a follower)
        self.replica_selector = replica_selector_for(config.replica_selector_class)
        # purgatories
        self._delayed_produce: list[DelayedProduce] = []
        self._delayed_fetch: list[DelayedFetch] = []
        # False: a parked fetch's expiry tests every partition of its session again (the plain path the fast one is
        # tested against: tests/core/broker/test_broker_idle_fetch.py)
        self.fast_fetch_expiry = True
        self._delayed_delete_records: list[DelayedDeleteRecords] = []
        self._delayed_txn_markers: list[DelayedWriteTxnMarkers] = []
        # KIP-890 (3.7): the group coordinator's verifications (a TxnOffsetCommit's), by (its token, partition), each
        # the producer id and the guard its append must bring back
        self._coordinator_guards: dict[tuple[int, TopicPartition], tuple[int, VerificationGuard]] = {}
        # log dir failures noticed but not yet handled (LogDirFailureChannel's queue)
        self._failed_dirs: list[str] = []
        self._handled_failed_dirs: set[str] = set()
        # scheduled tasks
        self.hw_checkpoint_started = False
        self._next_isr_expiration_ms = now_ms + config.isr_expiration_interval_ms
        self._next_isr_propagation_ms = now_ms + ISR_CHANGE_PROPAGATION_CHECK_MS
        self._next_hw_checkpoint_ms: float | None = None
        props = dict(config.log_props)
        # LogManager.startup schedules every task initialTaskDelayMs after startup (log.initial.task.delay.ms)
        initial_task_delay_ms = log_initial_task_delay_ms(props)
        self._next_log_retention_ms = now_ms + initial_task_delay_ms
        # a period of 0 would run the task on every pass (Kafka's scheduler refuses it): at least 1 ms
        self._log_task_periods = {k: max(1, int(props.get(k, default))) for k, default in _LOG_TASK_DEFAULTS.items()}
        # kafka-recovery-point-checkpoint, kafka-log-start-offset-checkpoint, kafka-log-flusher
        self._next_log_task_ms = {k: now_ms + initial_task_delay_ms for k in _LOG_TASK_DEFAULTS}
        self._last_hw_checkpoint: dict[str, dict[TopicPartition, int]] = {}  # per dir: what was last written
        self._alter_log_dirs_due_ms = 0.0  # the next future-log copy round (core/broker/alter_log_dirs.py)
        self._periodic_due_ms = 0.0
        self._refresh_periodic_due()
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
    def offline_replica_count(self) -> int:
        return sum(1 for p in self.all_partitions.values() if p is OFFLINE)

    def metrics(self) -> dict[str, int]:
        """Kafka's ReplicaManager metric names → current values (meters as total counts); one pass over the
        partitions (the gauges are refreshed every second with thousands of them)."""
        leaders = urp = under_min = at_min = reassigning = offline = 0
        for p in self.all_partitions.values():
            if not isinstance(p, Partition):
                offline += 1
            elif p.leader_replica_id == self.local_broker_id:
                leaders += 1
                urp += p.replication_factor - len(p.isr) > 0
                under_min += len(p.isr) < p.min_insync_replicas
                at_min += len(p.isr) == p.min_insync_replicas
                reassigning += bool(p.adding_replicas or p.removing_replicas)
        return {
            "LeaderCount": leaders,
            "PartitionCount": self.partition_count,
            "OfflineReplicaCount": offline,
            "UnderReplicatedPartitions": urp,
            "UnderMinIsrPartitionCount": under_min,
            "AtMinIsrPartitionCount": at_min,
            "ReassigningPartitions": reassigning,
            "IsrExpandsPerSec": self.isr_expands,
            "IsrShrinksPerSec": self.isr_shrinks,
            "FailedIsrUpdatesPerSec": self.failed_isr_updates,
        }

    def replication_quota_metrics(self, now_ms: float) -> dict[str, int]:
        """The ReplicationQuotaManagers' ``byte-rate`` metrics (bytes/s of throttled replication, whole bytes), named
        ``<QuotaType>.byte-rate`` (kafka.server:type=LeaderReplication|FollowerReplication|AlterLogDirsReplication,
        name=byte-rate); a broker's value is the sum over its shards."""
        return {f"{q.quota_type}.byte-rate": int(q.metric_value(now_ms))
                for q in (self.leader_quota, self.follower_quota, self.alter_log_dirs_quota)}

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
        """KafkaApis.handleStopReplicaRequest (ZK mode): a stale broker epoch is answered with the top-level error and
        no partition errors; a stale controller epoch (stopReplicas) with an empty partition map."""
        if self.is_broker_epoch_stale(request.broker_epoch):
            return StopReplicaResponse(Errors.STALE_BROKER_EPOCH)
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
        # Partition.createLog reads the topic's config (fetchTopicConfig) for a partition hosted for the first time
        yield from self.log_configs.fetch_topic_configs(p for p, _ in accepted if p.get_leader_epoch() < 0)
        hw_checkpoints = self.log_manager.read_high_watermark_checkpoints()
        to_lead = [(p, s) for p, s in accepted if s.leader == self.local_broker_id]
        to_follow = [(p, s) for p, s in accepted if s.leader != self.local_broker_id]
        # Partition.makeLeader: `if (leaderHWIncremented) tryCompleteDelayedRequests()` -- a LeaderAndIsr that
        # shrinks the ISR (a dead follower removed by the controller) or bumps the epoch can commit what acks=all
        # produces and fetches wait for; nothing else would wake them before their timeout
        hw_before = {p.topic_partition: p.high_watermark for p, _ in to_lead}
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
            self._refresh_periodic_due()
        self._touch_delayed_fetches(p.topic_partition for p, _ in to_lead)  # a new leader epoch, perhaps a new ISR
        for p, _ in to_lead:
            if p.is_leader and p.high_watermark != hw_before[p.topic_partition]:
                yield from self._complete_delayed_requests(p.topic_partition, now_ms)
        for p in became_followers:
            yield from self._complete_delayed_requests(p.topic_partition, now_ms, leadership_changed=True)
        yield from self._process_log_dir_failures()
        # KafkaApis' onLeadershipChange: the group (transaction) coordinator loads the __consumer_offsets
        # (__transaction_state) partitions this broker now leads (onElection) and unloads those it now follows
        # (onResignation)
        for topic in (GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME):
            elected = tuple((p.topic_partition.partition, p.leader_epoch) for p in became_leaders
                            if p.topic_partition.topic == topic)
            resigned = tuple((p.topic_partition.partition, p.leader_epoch) for p in became_followers
                             if p.topic_partition.topic == topic)
            if elected or resigned:
                yield LeadershipChange(elected, resigned, topic)
        return LeaderAndIsrResponse(Errors.NONE, tuple(
            PartitionError(s.topic_partition, response.get(s.topic_partition, Errors.NONE))
            for s in request.partition_states))

    def make_leaders(self, states: Sequence[tuple[Partition, LeaderAndIsrPartitionState]],
                     response: dict[TopicPartition, Errors], now_ms: float,
                     hw_checkpoints: Mapping[str, Mapping[TopicPartition, int]] | None = None) -> list[Partition]:
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
                       hw_checkpoints: Mapping[str, Mapping[TopicPartition, int]] | None = None) -> list[Partition]:
        """ReplicaManager.makeFollowers (2.6): Partition.makeFollower if the new leader is alive in the metadata
        cache (else only create the log); for the changed ones: stop fetching, complete delayed requests, and
        (unless shutting down) add them to the fetcher *Truncating* at their high watermark. Nothing is truncated
        here: the fetcher truncates by OffsetsForLeaderEpoch (`epoch_request_for` / `handle_epoch_response`), so
        a follower whose leader epoch was only bumped keeps the records its leader has acknowledged."""
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
        if not self.is_shutting_down:
            self.replica_fetcher_manager.add_fetcher_for_partitions(changed)
        return changed

    def mark_partition_offline(self, tp: TopicPartition) -> None:
        """ReplicaManager.markPartitionOffline."""
        p = self.all_partitions.get(tp)
        if isinstance(p, Partition):
            p.mark_offline()
        self.all_partitions[tp] = OFFLINE
        self.remove_fetchers((tp,))

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
        # one checkpoint per log dir after all the renames (LogManager.asyncDelete(Set), Kafka 2.7+)
        _, storage_errors = self.log_manager.delete_logs(deleted)
        for tp, e in storage_errors.items():
            self._note_storage_error(e)
            response[tp] = Errors.KAFKA_STORAGE_ERROR
        for st in partition_states:
            response.setdefault(st.topic_partition, Errors.NONE)
        yield from self._process_log_dir_failures()
        # KafkaApis.handleStopReplicaRequest: a deleted __consumer_offsets (__transaction_state) partition →
        # GroupCoordinator (TransactionCoordinator).onResignation
        for topic in (GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME):
            resigned = tuple((st.topic_partition.partition, st.leader_epoch) for st in partition_states
                             if st.delete_partition and st.topic_partition.topic == topic
                             and response[st.topic_partition] == Errors.NONE)
            if resigned:
                yield LeadershipChange((), resigned, topic)
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

    def handle_describe_metadata_cache(self, request: DescribeMetadataCacheRequest
                                       ) -> Proc[DescribeMetadataCacheResponse]:
        """kactor introspection: the MetadataCache's partition states (as the last UpdateMetadata left them), alive
        brokers and controller id."""
        cache = self.metadata_cache
        snapshot = cache.snapshot
        topics = request.topics or tuple(sorted(snapshot.partition_states))
        states = tuple(st for topic in topics
                       for _, st in sorted(snapshot.partition_states.get(topic, {}).items()))
        owns = self.log_manager.owns
        if owns is not None:  # every shard caches __transaction_state's leaders (update_metadata.split): one answers
            states = tuple(st for st in states if owns(st.topic_partition))
        controller = cache.get_controller_id()
        yield from ()
        return DescribeMetadataCacheResponse(-1 if controller is None else controller,
                                             tuple(sorted(snapshot.alive_brokers)), states)

    # ============================================================================ leader: OffsetsForLeaderEpoch

    def last_offset_for_leader_epoch(self, tp: TopicPartition, current_leader_epoch: int, leader_epoch: int,
                                     fetch_only_from_leader: bool = True) -> tuple[Errors, int, int]:
        """ReplicaManager.lastOffsetForLeaderEpoch for one partition: (error, epoch, end offset)."""
        hosted = self.all_partitions.get(tp)
        if isinstance(hosted, Partition):
            try:
                return hosted.last_offset_for_leader_epoch(current_leader_epoch, leader_epoch, fetch_only_from_leader)
            except KafkaStorageError as e:
                self._note_storage_error(e)
                return Errors.KAFKA_STORAGE_ERROR, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if hosted is OFFLINE:
            return Errors.KAFKA_STORAGE_ERROR, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if self.metadata_cache.contains(tp):
            return Errors.NOT_LEADER_OR_FOLLOWER, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        return Errors.UNKNOWN_TOPIC_OR_PARTITION, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET

    def handle_offsets_for_leader_epoch(self, request: OffsetsForLeaderEpochRequest, now_ms: float = 0
                                        ) -> Proc[OffsetsForLeaderEpochResponse]:
        """KafkaApis.handleOffsetForLeaderEpochRequest → ReplicaManager.lastOffsetForLeaderEpoch: each partition's
        answer from its leader-epoch cache, on the leader only (fetchOnlyFromLeader = true for every request, a
        consumer's with replica id -2 too: KIP-320's truncation check must not read a follower's cache)."""
        topics = []
        for t in request.topics:
            results = []
            for q in t.partitions:
                error, epoch, end_offset = self.last_offset_for_leader_epoch(
                    TopicPartition(t.topic, q.partition), q.current_leader_epoch, q.leader_epoch)
                results.append(OffsetForLeaderPartitionResult(error, q.partition, epoch, end_offset))
            topics.append(OffsetForLeaderTopicResult(t.topic, tuple(results)))
        yield from self._process_log_dir_failures()
        return OffsetsForLeaderEpochResponse(tuple(topics))

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

    def _replica_racks(self, tp: TopicPartition, listener: str) -> dict[int, str | None]:
        """MetadataCache.getPartitionReplicaEndpoints, the part a selector reads: the rack of each of the partition's
        replicas whose broker is alive and (``listener`` given) has an endpoint on the client's listener; the others
        are Node.noNode and cannot be chosen."""
        info = self.metadata_cache.get_partition_info(tp)
        if info is None:
            return {}
        racks: dict[int, str | None] = {}
        for r in info.replicas:
            b = self.metadata_cache.get_alive_broker(r)
            if b is not None and (not listener or any(ep.listener_name == listener for ep in b.endpoints)):
                racks[r] = b.rack
        return racks

    def find_preferred_read_replica(self, p: Partition, request: FetchRequest, fetch_offset: int, now_ms: float
                                    ) -> int | None:
        """ReplicaManager.findPreferredReadReplica (KIP-392): for a consumer's Fetch v11+ (it has client metadata)
        to the leader, with a ``replica.selector.class``, the replica the selector prefers, unless that is the leader
        itself. The candidates are the followers holding ``fetch_offset`` (log start ≤ it ≤ log end offset, in the
        ISR or not) and the leader; only a replica whose broker has an endpoint on the client's listener can be
        named. A follower names none (Kafka 2.6 asks ``leaderReplicaIdOpt``, which a follower also has; the
        followers' states it would then read are stale or unknown, and later versions ask leaderIdIfLocal)."""
        if (self.replica_selector is None or not request.client_metadata or request.replica_id >= 0
                or not p.is_leader or p.log is None):
            return None
        racks = self._replica_racks(p.topic_partition, request.listener)
        leader = ReplicaView(self.local_broker_id, racks.get(self.local_broker_id), p.log.log_end_offset, 0)
        followers = tuple(ReplicaView(r.broker_id, racks[r.broker_id], r.log_end_offset,
                                      now_ms - r.last_caught_up_time_ms)
                          for r in sorted(p.remote_replicas.values(), key=lambda r: r.broker_id)
                          if r.broker_id in racks and r.log_start_offset <= fetch_offset <= r.log_end_offset)
        selected = self.replica_selector.select(p.topic_partition, ClientMetadata(request.rack_id, request.listener),
                                                PartitionView((*followers, leader), leader))
        if selected is None or selected == leader or selected.broker_id not in racks:
            return None
        return selected.broker_id

    def _read_partition(self, fp: FetchPartition, max_bytes: int, min_one_message: bool, isolation: int,
                        only_leader: bool, request: FetchRequest | None = None, now_ms: float = 0
                        ) -> FetchPartitionData:
        """ReplicaManager.readFromLocalLog's read() for one partition (at most min(its partition_max_bytes,
        ``max_bytes``) bytes, at least one batch when ``min_one_message``); errors become the partition's answer.
        When the leader prefers another replica for a consumer (``find_preferred_read_replica``), nothing is read:
        the answer is empty, with the offsets of fetchOffsetSnapshot and the preferred read replica. A follower's
        read of a throttled partition while the leader's replication quota is exceeded is answered with no records
        and no error (readFromLocalLog with ``quota = replicationQuota(...)``, shouldLeaderThrottle)."""
        try:
            p = self._get_partition_or_error(fp.tp, expect_leader=only_leader)
            # no call per partition read without a replica selector (find_preferred_read_replica's first test)
            preferred = None if request is None or self.replica_selector is None else \
                self.find_preferred_read_replica(p, request, fp.fetch_offset, now_ms)
            if preferred is not None:
                log = p.local_log_with_epoch(fp.leader_epoch, require_leader=False)
                return FetchPartitionData(fp.tp, Errors.NONE, log.high_watermark, log.last_stable_offset,
                                          log.log_start_offset, b"", log.log_end_offset,
                                          preferred_read_replica=preferred)
            info = p.read_records(fp.fetch_offset, fp.leader_epoch, min(fp.partition_max_bytes, max_bytes),
                                  isolation, only_leader, min_one_message)
            records = info.records
            if (records and request is not None and request.replica_id >= 0 and self.leader_quota.limited
                    and self.leader_quota.should_throttle(fp.tp, request.replica_id in p.isr, now_ms)):
                records = b""  # shouldLeaderThrottle: "If the partition is being throttled, simply return an empty set"
            aborted = None if info.aborted_transactions is None else tuple(
                AbortedTransaction(t.producer_id, t.first_offset) for t in info.aborted_transactions)
            # positional (preferred_read_replica -1): a keyword costs a name match on every partition read
            return FetchPartitionData(fp.tp, Errors.NONE, info.high_watermark, info.last_stable_offset,
                                      info.log_start_offset, records, info.log_end_offset, -1, aborted)
        except ApiError as e:
            return FetchPartitionData(fp.tp, e.error)
        except KafkaStorageError as e:
            # deferred (the PartitionActors): only the log-dir probe's recorded LogDirFailure takes the dir offline
            if not self.log_manager.defer(e):
                self._note_storage_error(e)
            return FetchPartitionData(fp.tp, Errors.KAFKA_STORAGE_ERROR)

    @staticmethod
    def _fetch_isolation(request: FetchRequest) -> tuple[int, bool]:
        """fetchMessages' FetchIsolation and fetchOnlyFromLeader for ``request``: followers and local log-end reads
        (FUTURE_LOCAL_REPLICA_ID) read to the log end, consumers to the high watermark (READ_COMMITTED: the last
        stable offset); followers only from the leader, consumers too unless the request has client metadata
        (``isFromFollower || (isFromConsumer && clientMetadata.isEmpty)``: a Fetch v11+ may read a follower, up to
        the follower's high watermark)."""
        if request.replica_id >= 0:
            return FETCH_LOG_END, True
        if request.replica_id == FUTURE_LOCAL_REPLICA_ID:
            return FETCH_LOG_END, False
        isolation = FETCH_TXN_COMMITTED if request.isolation_level == READ_COMMITTED else FETCH_HIGH_WATERMARK
        return isolation, not request.client_metadata

    def _selects_replica(self, request: FetchRequest) -> bool:
        """Whether the leader may name a preferred read replica for ``request`` (a consumer's Fetch v11+ with a
        replica selector configured): its partitions are never skipped as idle, since each answer may redirect."""
        return self.replica_selector is not None and request.client_metadata and request.replica_id < 0

    def _idle(self, context: FetchContext, fp: FetchPartition, isolation: int) -> Partition | None:
        """In an incremental fetch session, the led Partition if reading ``fp`` can bring the fetcher nothing: it is
        at the end of what it may read, at our leader epoch, and the session already answered our high watermark,
        last stable offset and log start offset. The fast path of an idle fetch: no read and no response entry,
        so an idle broker's fetch round does not cost a read per partition."""
        cp = context.cached(fp.tp)
        if cp is None:
            return None
        p = self.all_partitions.get(fp.tp)
        if not isinstance(p, Partition) or p.leader_replica_id != self.local_broker_id or p.log is None:
            return None
        if fp.leader_epoch != NO_LEADER_EPOCH_PROVIDED and fp.leader_epoch != p.leader_epoch:
            return None
        log = p.log
        hw = log.high_watermark
        lso = log.last_stable_offset
        end = log.log_end_offset if isolation == FETCH_LOG_END else lso if isolation == FETCH_TXN_COMMITTED else hw
        if fp.fetch_offset != end or cp.high_watermark != hw or cp.last_stable_offset != lso \
                or cp.log_start_offset != log.log_start_offset:
            return None
        return p

    def _read_all(self, request: FetchRequest, context: FetchContext, now_ms: float,
                  candidates: tuple[FetchPartition, ...] | None = None) -> list[FetchPartitionData]:
        """readFromLocalLog over the context's partitions, sharing ``max_bytes`` (KIP-74: the first partition with
        data may exceed it by one batch); idle partitions of an incremental session are not read. ``candidates``:
        the context's partitions that may not be idle, in its order (the others are known to be idle): the same
        answer without testing the known-idle ones."""
        isolation, only_leader = self._fetch_isolation(request)
        skip_idle = context.incremental and not self._selects_replica(request)
        limit = request.max_bytes
        min_one = True
        out: list[FetchPartitionData] = []
        for fp in context.partitions if candidates is None else candidates:
            if skip_idle and self._idle(context, fp, isolation) is not None:
                continue
            data = self._read_partition(fp, limit, min_one, isolation, only_leader, request, now_ms)
            size = len(data.records)
            if size:
                min_one = False
                limit = max(0, limit - size)
            out.append(data)
        return out

    def handle_fetch(self, request: FetchRequest, now_ms: float, reply_to: str = "") -> Proc[FetchResponse | None]:
        """ReplicaManager.fetchMessages behind FetchManager.newContext: resolve the fetch session, read, update
        follower fetch state (LEO, lastCaughtUpTime, HW), expand ISRs (one ZooKeeper batch for the whole request),
        then answer — or park in the fetch purgatory (None is returned; the response is emitted later as
        ``Respond(reply_to, FetchResponse)``) while fewer than ``min_bytes`` were read and ``max_wait_ms`` > 0."""
        context = self.fetch_sessions.new_context(request)
        if isinstance(context, FetchResponse):
            return context
        is_follower = request.replica_id >= 0
        isolation, only_leader = self._fetch_isolation(request)
        skip_idle = context.incremental and not self._selects_replica(request)
        limit = request.max_bytes
        min_one = True
        results: list[FetchPartitionData] = []
        read: list[FetchPartition] = []
        proposals: list[tuple[Partition, IsrProposal]] = []
        hw_moved: list[TopicPartition] = []
        for fp in context.partitions:
            if skip_idle:
                idle = self._idle(context, fp, isolation)
                if idle is not None:
                    if not is_follower:
                        continue
                    replica = idle.remote_replicas.get(request.replica_id)
                    if (replica is not None and replica.log_end_offset == fp.fetch_offset
                            and not idle.needs_expand_isr(request.replica_id)):
                        # Partition.updateFollowerFetchState with nothing else to do: caught up as of now
                        replica.update_fetch_state(fp.fetch_offset, fp.log_start_offset, now_ms, fp.fetch_offset)
                        continue
            read.append(fp)
            data = self._read_partition(fp, limit, min_one, isolation, only_leader, request, now_ms)
            if data.records:
                min_one = False
                limit = max(0, limit - len(data.records))
            if is_follower and data.error == Errors.NONE:
                p = self.all_partitions[fp.tp]
                assert isinstance(p, Partition)
                hw_before = p.high_watermark
                if p.update_follower_fetch_state(request.replica_id, fp.fetch_offset, fp.log_start_offset, now_ms,
                                                 data.log_end_offset):
                    proposal = p.maybe_expand_isr(request.replica_id)
                    if proposal is not None:
                        proposals.append((p, proposal))
                    data = with_fetch_offsets(data, p.high_watermark,
                                              p.log.last_stable_offset if p.log is not None else p.high_watermark)
                else:
                    data = attrs.evolve(data, records=b"")  # not an assigned replica: withEmptyFetchInfo
                if p.high_watermark != hw_before:
                    hw_moved.append(fp.tp)
            results.append(data)
        if proposals:
            yield from submit_isr_updates(proposals, now_ms)
            self._touch_delayed_fetches(p.topic_partition for p, _ in proposals)  # a committed ISR moves HWs
        for tp in hw_moved:
            yield from self._complete_delayed_requests(tp, now_ms)
        if is_follower and self._delayed_delete_records:  # a follower's log start moves the low watermark
            yield from self._complete_delayed_delete_records({fp.tp for fp in context.partitions})
        if self._failed_dirs:  # mostly none: no generator to find that out
            yield from self._process_log_dir_failures()
        if request.max_wait_ms > 0 and context.partitions:
            # park while fewer than min_bytes were read, no partition failed and none was redirected (a partition
            # answered with a preferred read replica was not read here and will not be: no use waiting); one pass
            readable = 0
            for d in results:
                if d.error != Errors.NONE or d.preferred_read_replica >= 0:
                    break
                readable += len(d.records)
            else:
                if readable < request.min_bytes:
                    self._delayed_fetch.append(DelayedFetch(reply_to, request, context, now_ms + request.max_wait_ms,
                                                            frozenset(fp.tp for fp in context.partitions), tuple(read)))
                    return None
        return self._fetch_response(request, context, results, now_ms)

    def _fetch_response(self, request: FetchRequest, context: FetchContext, data: list[FetchPartitionData],
                        now_ms: float) -> FetchResponse:
        """The answer to a fetch; a follower's throttled partitions' bytes are recorded against the leader quota
        (KafkaApis' ``quotas.leader.record(sizeOfThrottledPartitions(...))``, counting their records) while a quota
        is set (without one the recording only feeds the byte-rate metric: ReplicationQuotaManager.limited)."""
        if request.replica_id >= 0 and self.leader_quota.limited:
            quota = self.leader_quota
            throttled = sum(len(d.records) for d in data if d.records and quota.is_throttled(d.tp))
            if throttled:
                quota.record(throttled, now_ms)
        return context.response(data)

    # ========================================================================================== leader: produce

    def handle_produce(self, request: ProduceRequest, now_ms: float, reply_to: str = ""
                       ) -> Proc[ProduceResponse | None]:
        """ReplicaManager.appendRecords: append each partition's batches to its leader log (appendToLocalLog); acks
        0 and 1 are answered at once (the network layer sends nothing for acks=0), acks=all waits in the produce
        purgatory until the high watermark of every appended partition covers its records (None returned; the
        response is emitted as ``Respond(reply_to, ProduceResponse)``, DelayedProduce). A coordinator's request
        (``request.coordinator``) appends with origin Coordinator: epochs checked, sequences not."""
        if request.acks not in (-1, 0, 1):
            return ProduceResponse(tuple(ProducePartitionResponse(pp.tp, Errors.INVALID_REQUIRED_ACKS)
                                         for pp in request.partitions))
        if request.verify_only:
            return (yield from self._verify_for_coordinator(request, now_ms))
        guards, unverified = yield from self._verify_transactional_partitions(request, now_ms)
        if request.coordinator and request.verification_token:
            guards = self._take_coordinator_guards(request)
        status: dict[TopicPartition, ProducePartitionStatus] = {}
        appended: list[TopicPartition] = []
        for pp in request.partitions:
            tp = pp.tp
            if pp.error != Errors.NONE:  # refused by the wire edge already (an unconvertible message set)
                status[tp] = ProducePartitionStatus(-1, ProducePartitionResponse(tp, pp.error), False)
                continue
            if tp in unverified:
                error, message = unverified_append_error(unverified[tp])
                status[tp] = ProducePartitionStatus(-1, ProducePartitionResponse(tp, error, error_message=message),
                                                    False)
                continue
            refused = None if request.coordinator else produce_records_error(pp.records)
            # KafkaApis' ProduceRequest.validateRecords (2.6.3 looks the partition up in its metadata cache first, so
            # an unknown partition's answer there wins; here the records' is answered first)
            if refused is not None:
                code, message = refused
                error = Errors(code)
                status[tp] = ProducePartitionStatus(-1, ProducePartitionResponse(
                    tp, error, error_message=message if error == Errors.INVALID_RECORD else None), False)
                continue
            try:
                p = self._get_partition_or_error(tp, expect_leader=True)
                # a follower answers NOT_LEADER_OR_FOLLOWER before any check of the batch, as 3.6's
                # Partition.appendRecordsToLeader does before UnifiedLog sees it (a retriable answer, where the
                # verification check would answer INVALID_TXN_STATE: no guard was asked for a partition led elsewhere)
                if request.transactional_id is not None and p.log is not None and p.is_leader:
                    txn_batch = transactional_batch(pp.records)
                    # UnifiedLog.analyzeAndValidateProducerState's check (3.6; 3.7 a coordinator's batch too)
                    if txn_batch is not None:
                        p.log.producer_state.check_verification(
                            txn_batch.producer_id, True, guards.get(tp), self.verification_enabled)
                info = p.append_records_to_leader(pp.records, request.acks, now_ms,
                                                  COORDINATOR if request.coordinator else CLIENT)
                log_start = p.log.log_start_offset if p.log is not None else -1
            except ApiError as e:
                message = str(e) if e.error == Errors.INVALID_RECORD else None
                # a RecordValidationException also answers the partition's log start offset
                start = p.log.log_start_offset if e.record_errors and p.log is not None else -1
                status[tp] = ProducePartitionStatus(-1, ProducePartitionResponse(
                    tp, e.error, log_start_offset=start, record_errors=e.record_errors, error_message=message), False)
                continue
            except KafkaStorageError as e:
                if not self.log_manager.defer(e):  # deferred: the dir goes offline on the probe's recorded input
                    self._note_storage_error(e)
                status[tp] = ProducePartitionStatus(-1, ProducePartitionResponse(tp, Errors.KAFKA_STORAGE_ERROR),
                                                    False)
                continue
            appended.append(tp)
            status[tp] = ProducePartitionStatus(
                info.last_offset + 1,
                ProducePartitionResponse(tp, Errors.NONE, info.first_offset, info.log_append_time, log_start),
                request.acks == -1)
        for tp in appended:
            yield from self._complete_delayed_requests(tp, now_ms)
        if self._failed_dirs:
            yield from self._process_log_dir_failures()
        op = DelayedProduce(reply_to, status, now_ms + request.timeout_ms)
        if request.acks == -1 and appended and not self._try_complete_produce(op):
            self._delayed_produce.append(op)
            return None
        return op.response()

    @property
    def verification_enabled(self) -> bool:
        """transaction.partition.verification.enable (ProducerStateManagerConfig.transactionVerificationEnabled)."""
        return self.config.transaction_partition_verification_enable

    def _verify_transactional_partitions(self, request: ProduceRequest, now_ms: float
                                         ) -> Proc[tuple[dict[TopicPartition, VerificationGuard],
                                                         dict[TopicPartition, Errors]]]:
        """ReplicaManager.appendRecords' verification (Kafka 3.6, KIP-890 part 1): each partition whose
        transactional batch would open a transaction here (partitionEntriesForVerification →
        Partition.maybeStartTransactionVerification) gets a verification guard, and the transactional id's
        coordinator is asked whether those partitions are in the producer's transaction (getTransactionCoordinator,
        then AddPartitionsToTxnManager's verify-only AddPartitionsToTxn: the `VerifyPartitionsInTxn` ask). Returns
        the guards and the partitions that failed verification with their errors (appendRecords maps them:
        `unverified_append_error`). Nothing is asked when verification is off, for a coordinator's appends (but its
        ``verify_only`` request: the sequence is then NO_SEQUENCE, as GroupCoordinator.handleTxnCommitOffsets
        passes), or for a request without a transactional id."""
        guards: dict[TopicPartition, VerificationGuard] = {}
        if (request.coordinator and not request.verify_only) or request.transactional_id is None \
                or not self.verification_enabled:
            return guards, {}
        producer_ids: set[int] = set()
        first: TransactionalBatch | None = None
        for pp in request.partitions:
            txn_batch = transactional_batch(pp.records) if pp.error == Errors.NONE else None
            if txn_batch is None:
                continue
            producer_ids.add(txn_batch.producer_id)
            p = self.online_partition(pp.tp)
            if p is None or not p.is_leader or p.log is None:
                continue  # the append answers NOT_LEADER_OR_FOLLOWER / UNKNOWN_TOPIC_OR_PARTITION
            guard = p.log.producer_state.maybe_start_transaction_verification(
                txn_batch.producer_id, sequence=NO_SEQUENCE if request.coordinator else txn_batch.base_sequence,
                epoch=txn_batch.producer_epoch, now_ms=int(now_ms))
            if guard is not None:
                guards[pp.tp] = guard
                first = first or txn_batch
        if len(producer_ids) > 1:
            # InvalidPidMappingException("Transactional records contained more than one producer ID")
            return guards, {pp.tp: Errors.INVALID_PRODUCER_ID_MAPPING for pp in request.partitions}
        if first is None:
            return guards, {}
        broker = self._transaction_coordinator(request.transactional_id)
        if broker is None:
            return guards, dict.fromkeys(guards, Errors.COORDINATOR_NOT_AVAILABLE)
        answer = yield VerifyPartitionsInTxn(broker, request.transactional_id, first.producer_id, first.producer_epoch,
                                             tuple(guards))
        top_level, results = answer
        return guards, verification_response_errors(top_level, results, guards)

    def _verify_for_coordinator(self, request: ProduceRequest, now_ms: float) -> Proc[ProduceResponse]:
        """ReplicaManager.maybeStartTransactionVerificationForPartition (Kafka 3.7, KAFKA-15449) for the group
        coordinator's TxnOffsetCommit (GroupCoordinator.handleTxnCommitOffsets), a ``verify_only`` request: each
        partition answers its own error (getPartitionOrException: not led here, unknown, offline) or its
        verification's (`coordinator_verification_error`), else NONE — verified, its producer's transaction already
        open here, or verification off (then nothing is looked at). Nothing is appended; a verification's guard
        stays here under the request's token until the append naming it takes it (appendForGroup's
        ``verificationGuards``)."""
        if request.transactional_id is None or not self.verification_enabled:
            return ProduceResponse(tuple(ProducePartitionResponse(pp.tp, Errors.NONE) for pp in request.partitions))
        guards, unverified = yield from self._verify_transactional_partitions(request, now_ms)
        self._forget_stale_coordinator_guards()
        answers = []
        for pp in request.partitions:
            try:
                if not self._get_partition_or_error(pp.tp, expect_leader=True).is_leader:
                    raise ApiError(Errors.NOT_LEADER_OR_FOLLOWER)  # Partition.maybeStartTransactionVerification
            except ApiError as e:
                answers.append(ProducePartitionResponse(pp.tp, e.error))
                continue
            error = Errors.NONE
            if pp.tp in unverified:
                error = coordinator_verification_error(unverified[pp.tp])
            elif pp.tp in guards:
                txn_batch = transactional_batch(pp.records)
                assert txn_batch is not None  # a guard is only made for a transactional batch
                self._coordinator_guards[(request.verification_token, pp.tp)] = (txn_batch.producer_id, guards[pp.tp])
            answers.append(ProducePartitionResponse(pp.tp, error))
        return ProduceResponse(tuple(answers))

    def _take_coordinator_guards(self, request: ProduceRequest) -> dict[TopicPartition, VerificationGuard]:
        """The guards the coordinator's verification under the append's token left (none: its transaction was
        already open here, or the token is unknown — then the append must find it still open)."""
        guards = {}
        for pp in request.partitions:
            entry = self._coordinator_guards.pop((request.verification_token, pp.tp), None)
            if entry is not None:
                guards[pp.tp] = entry[1]
        return guards

    def _forget_stale_coordinator_guards(self) -> None:
        """A coordinator's verification whose append never came (its group refused the commit, the coordinator
        moved) is forgotten once its guard is no longer its producer's on the partition (3.7's guard is garbage
        then)."""
        def current(tp: TopicPartition, producer_id: int, guard: VerificationGuard) -> bool:
            p = self.online_partition(tp)
            return p is not None and p.log is not None and p.log.producer_state.verification_guard(producer_id) is guard

        self._coordinator_guards = {key: (pid, guard) for key, (pid, guard) in self._coordinator_guards.items()
                                    if current(key[1], pid, guard)}

    def _transaction_coordinator(self, transactional_id: str) -> Broker | None:
        """ReplicaManager.getTransactionCoordinator (3.6): the alive leader of the id's ``__transaction_state``
        partition in the metadata cache (None: COORDINATOR_NOT_AVAILABLE — the topic or a leader is missing)."""
        cache = self.metadata_cache
        partitions = cache.snapshot.partition_states.get(TRANSACTION_STATE_TOPIC_NAME)
        if not partitions:
            return None
        tp = TopicPartition(TRANSACTION_STATE_TOPIC_NAME,
                            transaction_coordinator_partition(transactional_id, len(partitions)))
        leader = cache.get_partition_leader(tp)
        return None if leader is None else cache.get_alive_broker(leader)

    # ================================================================================= leader: WriteTxnMarkers

    def handle_write_txn_markers(self, request: WriteTxnMarkersRequest, now_ms: float, reply_to: str = ""
                                 ) -> Proc[WriteTxnMarkersResponse | None]:
        """KafkaApis.handleWriteTxnMarkersRequest: for each marker, a COMMIT / ABORT control batch
        (MemoryRecords.withEndTransactionMarker, timestamped now) appended to each of its partitions through
        ReplicaManager.appendRecords(requiredAcks = -1, internalTopicsAllowed = true, origin = Coordinator): the
        producer's epoch and the coordinator's are checked (INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED),
        the answer waits until the ISR has every marker (None returned; ``Respond(reply_to, response)`` later) or
        request.timeout.ms. A partition with no log here is UNKNOWN_TOPIC_OR_PARTITION (getMagic), one led elsewhere
        NOT_LEADER_OR_FOLLOWER. Once a marker is in ``__consumer_offsets`` partitions, the group coordinator is told
        (`TxnMarkersWritten`, GroupCoordinator.scheduleHandleTxnCompletion) before the answer."""
        errors: list[TxnMarkerPartitionResult] = []
        markers: list[tuple[TxnMarkerEntry, DelayedProduce]] = []
        appended: list[TopicPartition] = []
        deadline = now_ms + WRITE_TXN_MARKERS_TIMEOUT_MS
        for marker in request.markers:
            status: dict[TopicPartition, ProducePartitionStatus] = {}
            control = EndTransactionMarker(CONTROL_COMMIT if marker.committed else CONTROL_ABORT,
                                           marker.coordinator_epoch)
            for tp in marker.partitions:
                hosted = self.all_partitions.get(tp)
                if not isinstance(hosted, Partition) or hosted.log is None:
                    errors.append(TxnMarkerPartitionResult(marker.producer_id, tp, Errors.UNKNOWN_TOPIC_OR_PARTITION))
                    continue
                records = build_end_txn_marker_batch(marker.producer_id, marker.producer_epoch, control, int(now_ms))
                try:
                    p = self._get_partition_or_error(tp, expect_leader=True)
                    info = p.append_records_to_leader(records, -1, now_ms, COORDINATOR)
                except ApiError as e:
                    status[tp] = ProducePartitionStatus(-1, ProducePartitionResponse(tp, e.error), False)
                    continue
                except KafkaStorageError as e:
                    if not self.log_manager.defer(e):
                        self._note_storage_error(e)
                    status[tp] = ProducePartitionStatus(-1, ProducePartitionResponse(tp, Errors.KAFKA_STORAGE_ERROR),
                                                        False)
                    continue
                appended.append(tp)
                status[tp] = ProducePartitionStatus(info.last_offset + 1,
                                                    ProducePartitionResponse(tp, Errors.NONE, info.first_offset), True)
            markers.append((marker, DelayedProduce(reply_to, status, deadline)))
        for tp in dict.fromkeys(appended):
            yield from self._complete_delayed_requests(tp, now_ms)
        yield from self._process_log_dir_failures()
        op = DelayedWriteTxnMarkers(reply_to, markers, errors, deadline)
        if not self._try_complete_txn_markers(op):
            self._delayed_txn_markers.append(op)
            return None
        yield from op.written_offsets_partitions()
        return op.response()

    def _try_complete_txn_markers(self, op: DelayedWriteTxnMarkers) -> bool:
        """Each marker's DelayedProduce.tryComplete; True when none is pending."""
        done = True
        for _marker, produce in op.markers:
            done = self._try_complete_produce(produce) and done
        return done

    @property
    def delayed_txn_markers_count(self) -> int:
        return len(self._delayed_txn_markers)

    # ===================================================================================== leader: ListOffsets

    def handle_list_offsets(self, request: ListOffsetsRequest, now_ms: float = 0) -> Proc[ListOffsetsResponse]:
        """KafkaApis.handleListOffsetRequestV1AndAbove → ReplicaManager.fetchOffsetForTimestamp for each
        partition: -1 the latest offset (a client's: the high watermark, READ_COMMITTED the last stable offset; a
        replica's: the log end), -2 the log start, else the first offset whose batch's max timestamp is at or
        after the timestamp. A partition named twice is INVALID_REQUEST; a client's request (replica id < 0, not
        -2) must reach the leader."""
        is_client = request.replica_id < 0
        isolation = request.isolation_level if is_client else None
        only_leader = request.replica_id != DEBUGGING_REPLICA_ID
        seen: dict[TopicPartition, int] = {}
        for q in request.partitions:
            seen[q.tp] = seen.get(q.tp, 0) + 1
        out = []
        for q in request.partitions:
            if seen[q.tp] > 1:
                out.append(ListOffsetsPartitionResponse(q.tp, Errors.INVALID_REQUEST))
                continue
            try:
                p = self._get_partition_or_error(q.tp, expect_leader=only_leader)
                found = p.fetch_offset_for_timestamp(q.timestamp, isolation, q.current_leader_epoch, only_leader)
            except ApiError as e:
                out.append(ListOffsetsPartitionResponse(q.tp, e.error))
                continue
            except KafkaStorageError as e:
                self._note_storage_error(e)
                out.append(ListOffsetsPartitionResponse(q.tp, Errors.KAFKA_STORAGE_ERROR))
                continue
            if found is None:
                out.append(ListOffsetsPartitionResponse(q.tp, Errors.NONE))
            else:
                offset, timestamp, epoch = found
                out.append(ListOffsetsPartitionResponse(q.tp, Errors.NONE, timestamp, offset, epoch))
        yield from self._process_log_dir_failures()
        return ListOffsetsResponse(tuple(out))

    # ================================================================================== leader: DeleteRecords

    def handle_delete_records(self, request: DeleteRecordsRequest, now_ms: float, reply_to: str = ""
                              ) -> Proc[DeleteRecordsResponse | None]:
        """ReplicaManager.deleteRecords: each partition's leader moves its log start offset (deleteRecordsOnLocalLog
        → Partition.deleteRecordsOnLeader; an internal topic is INVALID_TOPIC_EXCEPTION), then the answer waits in
        the purgatory until every replica's log start reached the offset (DelayedDeleteRecords: None returned, the
        response emitted as ``Respond(reply_to, DeleteRecordsResponse)``) unless every partition failed."""
        status: dict[TopicPartition, DeleteRecordsPartitionStatus] = {}
        for q in request.partitions:
            tp = q.tp
            try:
                # KafkaApis answers a partition it does not know before the replica manager refuses internal topics
                if tp.topic in INTERNAL_TOPICS and self.metadata_cache.contains(tp):
                    raise ApiError(Errors.INVALID_TOPIC_EXCEPTION,
                                   f"Cannot delete records of internal topic {tp.topic}")
                p = self._get_partition_or_error(tp, expect_leader=True)
                required, low = p.delete_records_on_leader(q.offset, self.metadata_cache.has_alive_broker)
                self._touch_delayed_fetches((tp,))  # a new log start offset for the fetchers to learn
            except ApiError as e:
                status[tp] = DeleteRecordsPartitionStatus(-1, DeleteRecordsPartitionResult(tp, e.error), False)
                continue
            except KafkaStorageError as e:
                if not self.log_manager.defer(e):  # deferred: the dir goes offline on the probe's recorded input
                    self._note_storage_error(e)
                status[tp] = DeleteRecordsPartitionStatus(
                    -1, DeleteRecordsPartitionResult(tp, Errors.KAFKA_STORAGE_ERROR), False)
                continue
            status[tp] = DeleteRecordsPartitionStatus(required, DeleteRecordsPartitionResult(tp, Errors.NONE, low),
                                                      True)
        yield from self._process_log_dir_failures()
        op = DelayedDeleteRecords(reply_to, status, now_ms + request.timeout_ms)
        # delayedDeleteRecordsRequired: some partition's leader took the deletion
        if any(st.acks_pending for st in status.values()) and not self._try_complete_delete_records(op):
            self._delayed_delete_records.append(op)
            return None
        return op.response()

    def _try_complete_delete_records(self, op: DelayedDeleteRecords) -> bool:
        """DelayedDeleteRecords.tryComplete: a pending partition is done once its low watermark reached the offset
        asked (NONE with it), or it is no longer led here (NOT_LEADER_OR_FOLLOWER), offline (KAFKA_STORAGE_ERROR)
        or gone (UNKNOWN_TOPIC_OR_PARTITION), with an invalid low watermark; True when none is pending."""
        for tp, st in op.status.items():
            if not st.acks_pending:
                continue
            hosted = self.all_partitions.get(tp)
            low = INVALID_LOW_WATERMARK
            if isinstance(hosted, Partition):
                if hosted.is_leader and hosted.log is not None:
                    low = hosted.low_watermark_if_leader(self.metadata_cache.has_alive_broker)
                    error = Errors.NONE if low >= st.required_offset else None
                else:
                    error = Errors.NOT_LEADER_OR_FOLLOWER
            else:
                error = Errors.KAFKA_STORAGE_ERROR if hosted is OFFLINE else Errors.UNKNOWN_TOPIC_OR_PARTITION
            if error is not None:
                st.acks_pending = False
                st.response = DeleteRecordsPartitionResult(tp, error, low)
        return not any(st.acks_pending for st in op.status.values())

    def _complete_delayed_delete_records(self, tps: set[TopicPartition] | frozenset[TopicPartition]
                                         ) -> Proc[None]:
        """delayedDeleteRecordsPurgatory.checkAndComplete for the partitions ``tps``."""
        keep: list[DelayedDeleteRecords] = []
        for op in self._delayed_delete_records:
            if not tps.isdisjoint(op.status) and self._try_complete_delete_records(op):
                yield Respond(op.reply_to, op.response())
            else:
                keep.append(op)
        self._delayed_delete_records = keep

    @property
    def delayed_delete_records_count(self) -> int:
        return len(self._delayed_delete_records)

    # ================================================================================================ purgatory

    def _try_complete_produce(self, op: DelayedProduce) -> bool:
        """DelayedProduce.tryComplete: each pending partition is done once Partition.checkEnoughReplicasReachOffset
        says so (its HW reached the records: NONE, or NOT_ENOUGH_REPLICAS_AFTER_APPEND below min ISR) or it
        failed (no longer leader); True when none is pending."""
        for tp, st in op.status.items():
            if not st.acks_pending:
                continue
            error = self._produce_outcome(tp, st.required_offset)
            if error is not None:
                st.acks_pending = False
                if error != Errors.NONE:
                    st.response = attrs.evolve(st.response, error=error)
        return not any(st.acks_pending for st in op.status.values())

    def _produce_outcome(self, tp: TopicPartition, required_offset: int) -> Errors | None:
        """Partition.checkEnoughReplicasReachOffset: None while still waiting."""
        p = self.online_partition(tp)
        if p is None or not p.is_leader:
            return Errors.NOT_LEADER_OR_FOLLOWER
        if p.high_watermark >= required_offset:
            return Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND if len(p.isr) < p.min_insync_replicas else Errors.NONE
        return None

    def _complete_delayed_requests(self, tp: TopicPartition, now_ms: float,
                                   leadership_changed: bool = False) -> Proc[None]:
        """tryCompleteDelayedRequests / completeDelayedFetchOrProduceRequests for one partition."""
        keep_p: list[DelayedProduce] = []
        for op in self._delayed_produce:
            st = op.status.get(tp)
            if st is not None and st.acks_pending and leadership_changed and self._produce_outcome(
                    tp, st.required_offset) is None:
                st.acks_pending = False
                st.response = attrs.evolve(st.response, error=Errors.NOT_LEADER_OR_FOLLOWER)
            if st is not None and self._try_complete_produce(op):
                yield Respond(op.reply_to, op.response())
            else:
                keep_p.append(op)
        self._delayed_produce = keep_p
        if self._delayed_txn_markers:
            keep_m: list[DelayedWriteTxnMarkers] = []
            for mop in self._delayed_txn_markers:
                watched = [op.status[tp] for _m, op in mop.markers if tp in op.status]
                if not watched:
                    keep_m.append(mop)
                    continue
                for st in watched:
                    if st.acks_pending and leadership_changed and self._produce_outcome(tp, st.required_offset) is None:
                        st.acks_pending = False
                        st.response = attrs.evolve(st.response, error=Errors.NOT_LEADER_OR_FOLLOWER)
                if self._try_complete_txn_markers(mop):
                    yield from mop.written_offsets_partitions()
                    yield Respond(mop.reply_to, mop.response())
                else:
                    keep_m.append(mop)
            self._delayed_txn_markers = keep_m
        keep_f: list[DelayedFetch] = []
        for op in self._delayed_fetch:
            if tp not in op.keys:
                keep_f.append(op)
                continue
            op.touched = True
            data = self._read_all(op.request, op.context, now_ms)
            if leadership_changed:
                data = [attrs.evolve(d, error=Errors.NOT_LEADER_OR_FOLLOWER, records=b"")
                        if d.tp == tp and d.error == Errors.UNKNOWN_TOPIC_OR_PARTITION else d for d in data]
            if (leadership_changed or any(d.error != Errors.NONE or d.preferred_read_replica >= 0 for d in data)
                    or sum(len(d.records) for d in data) >= op.request.min_bytes):
                yield Respond(op.reply_to, self._fetch_response(op.request, op.context, data, now_ms))
            else:
                keep_f.append(op)
        self._delayed_fetch = keep_f
        if self._delayed_delete_records:
            yield from self._complete_delayed_delete_records(frozenset((tp,)))

    def _touch_delayed_fetches(self, tps: Iterable[TopicPartition] | None = None) -> None:
        """Something happened to ``tps`` (None: to any partition) that may end their idleness without completing the
        fetches watching them: those fetches' expiry tests every partition again (``DelayedFetch.read``)."""
        if not self._delayed_fetch:
            return
        if tps is None:
            for op in self._delayed_fetch:
                op.touched = True
            return
        changed = set(tps)
        for op in self._delayed_fetch:
            if not op.touched and not changed.isdisjoint(op.keys):
                op.touched = True

    def expire_delayed_operations(self, now_ms: float) -> Proc[None]:
        """Purgatory expiration: a delayed produce's pending partitions time out (REQUEST_TIMED_OUT); delayed
        fetches answer with what is there."""
        keep_p = []
        for op in self._delayed_produce:
            if op.deadline_ms <= now_ms:
                for st in op.status.values():
                    if st.acks_pending:
                        st.acks_pending = False
                        st.response = attrs.evolve(st.response, error=Errors.REQUEST_TIMED_OUT)
                yield Respond(op.reply_to, op.response())
            else:
                keep_p.append(op)
        self._delayed_produce = keep_p
        keep_f = []
        for op in self._delayed_fetch:
            if op.deadline_ms <= now_ms:
                # DelayedFetch.onComplete reads every partition again; one nothing happened to since it was parked is
                # still idle (an idle broker's fetch rounds spent a fifth of its CPU here: performance-log.md)
                candidates = op.read if self.fast_fetch_expiry and not op.touched else None
                data = self._read_all(op.request, op.context, now_ms, candidates)
                yield Respond(op.reply_to, self._fetch_response(op.request, op.context, data, now_ms))
            else:
                keep_f.append(op)
        self._delayed_fetch = keep_f
        keep_d = []
        for op in self._delayed_delete_records:
            if op.deadline_ms <= now_ms:  # DelayedDeleteRecords.onExpiration
                for st in op.status.values():
                    if st.acks_pending:
                        st.acks_pending = False
                        st.response = attrs.evolve(st.response, error=Errors.REQUEST_TIMED_OUT)
                yield Respond(op.reply_to, op.response())
            else:
                keep_d.append(op)
        self._delayed_delete_records = keep_d
        keep_m = []
        for mop in self._delayed_txn_markers:
            if mop.deadline_ms <= now_ms:
                for _marker, op in mop.markers:
                    for st in op.status.values():
                        if st.acks_pending:
                            st.acks_pending = False
                            st.response = attrs.evolve(st.response, error=Errors.REQUEST_TIMED_OUT)
                yield from mop.written_offsets_partitions()
                yield Respond(mop.reply_to, mop.response())
            else:
                keep_m.append(mop)
        self._delayed_txn_markers = keep_m

    @property
    def delayed_produce_count(self) -> int:
        return len(self._delayed_produce)

    @property
    def delayed_fetch_count(self) -> int:
        return len(self._delayed_fetch)

    # ========================================================= follower: the fetchers (core/broker/replica_fetcher.py)
    # The PartitionActor, the API modules and the tests drive the follower side through the ReplicaManager; these
    # forward to its ReplicaFetcherManager, where the fetch states and Kafka's names live.

    @property
    def fetch_states(self) -> dict[TopicPartition, FollowerFetchState]:
        """Every followed partition's PartitionFetchState (ReplicaFetcherManager.fetch_states)."""
        return self.replica_fetcher_manager.fetch_states

    @property
    def fetcher_id(self) -> int:
        """Our fetcher's id in the fetch sessions we open (the PartitionActor's shard)."""
        return self.replica_fetcher_manager.fetcher_id

    @fetcher_id.setter
    def fetcher_id(self, value: int) -> None:
        self.replica_fetcher_manager.fetcher_id = value

    @property
    def throttled_fetch_leaders(self) -> set[int]:
        """Leaders whose last fetch round left every partition out for the follower throttle (the fetcher backs
        off)."""
        return self.replica_fetcher_manager.throttled_fetch_leaders

    def remove_fetchers(self, tps: Iterable[TopicPartition]) -> None:
        """ReplicaFetcherManager.removeFetcherForPartitions."""
        self.replica_fetcher_manager.remove_fetcher_for_partitions(tps)

    def fetch_leaders(self) -> set[int]:
        """The leaders fetched from (ReplicaFetcherManager.fetch_leaders)."""
        return self.replica_fetcher_manager.fetch_leaders()

    def awaiting(self, leader_id: int) -> bool:
        """A request to ``leader_id`` is in flight (ReplicaFetcherManager.awaiting)."""
        return self.replica_fetcher_manager.awaiting(leader_id)

    def next_request_for(self, leader_id: int, now_ms: float = 0) -> FetcherRequest | None:
        """ReplicaFetcherThread.doWork for one leader (ReplicaFetcherManager.do_work)."""
        return self.replica_fetcher_manager.do_work(leader_id, now_ms)

    def build_fetch_requests(self) -> dict[int, FetcherRequest]:
        """One request per leader broker with no request in flight (ReplicaFetcherManager.build_fetch_requests)."""
        return self.replica_fetcher_manager.build_fetch_requests()

    def epoch_request_for(self, leader_id: int) -> OffsetsForLeaderEpochRequest | None:
        """AbstractFetcherThread.maybeTruncate (ReplicaFetcherManager.maybe_truncate)."""
        return self.replica_fetcher_manager.maybe_truncate(leader_id)

    def fetch_request_for(self, leader_id: int, now_ms: float = 0) -> FetchRequest | None:
        """ReplicaFetcherThread.buildFetch (ReplicaFetcherManager.build_fetch)."""
        return self.replica_fetcher_manager.build_fetch(leader_id, now_ms)

    def fetch_failed(self, leader_id: int) -> None:
        """The request to ``leader_id`` got no response (ReplicaFetcherManager.fetch_failed)."""
        self.replica_fetcher_manager.fetch_failed(leader_id)

    def handle_epoch_response(self, leader_id: int, response: OffsetsForLeaderEpochResponse, now_ms: float
                              ) -> Proc[int]:
        """AbstractFetcherThread.truncateToEpochEndOffsets (ReplicaFetcherManager.truncate_to_epoch_end_offsets)."""
        return self.replica_fetcher_manager.truncate_to_epoch_end_offsets(leader_id, response, now_ms)

    def handle_fetch_response(self, leader_id: int, response: FetchResponse, now_ms: float) -> Proc[int]:
        """AbstractFetcherThread.processFetchRequest's answer (ReplicaFetcherManager.process_fetch_request)."""
        return self.replica_fetcher_manager.process_fetch_request(leader_id, response, now_ms)

    def handle_list_offsets_response(self, leader_id: int, response: ListOffsetsResponse, now_ms: float
                                     ) -> Proc[int]:
        """AbstractFetcherThread.fetchOffsetAndTruncate (ReplicaFetcherManager.fetch_offset_and_truncate)."""
        return self.replica_fetcher_manager.fetch_offset_and_truncate(leader_id, response, now_ms)

    def update_replication_quotas(self, leader_bytes_per_second: int, follower_bytes_per_second: int,
                                  alter_log_dirs_bytes_per_second: int = DEFAULT_REPLICATION_THROTTLED_RATE) -> None:
        """BrokerConfigHandler: the leader, follower and alter-log-dirs ReplicationQuotaManagers take the broker's
        rates."""
        self.leader_quota.update_quota(leader_bytes_per_second)
        self.follower_quota.update_quota(follower_bytes_per_second)
        self.alter_log_dirs_quota.update_quota(alter_log_dirs_bytes_per_second)

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
        """ReplicaManager.checkpointHighWatermarks: ``replication-offset-checkpoint`` in every live log dir.

        A dir whose high watermarks are exactly those last written is not rewritten (the file would be identical):
        an idle broker with 10,000 partitions otherwise rewrites — and, sharded, re-reads — them every 5 s."""
        by_dir: dict[str, dict[TopicPartition, int]] = {d: {} for d in self.log_manager.live_log_dirs}
        for p in self.online_partitions():
            if p.log is not None and p.log.parent_dir in by_dir:
                by_dir[p.log.parent_dir][p.topic_partition] = p.log.high_watermark
        for d, hws in by_dir.items():
            if self._last_hw_checkpoint.get(d) == hws:
                continue
            written = hws
            try:
                disk = self.log_manager.disk
                if not disk.isdir(d):
                    raise KafkaStorageError(f"log dir {d} is not available", d)
                path = os.path.join(d, REPLICATION_OFFSET_CHECKPOINT)
                owns = self.log_manager.owns
                if owns is not None:
                    # sharded: keep the other shards' entries (all shards run on one thread, so no race)
                    others = {tp: o for tp, o in read_offset_checkpoint(path, disk).items() if not owns(tp)}
                    hws = {**others, **hws}
                write_offset_checkpoint(path, hws, disk)
                self._last_hw_checkpoint[d] = written
            except KafkaStorageError as e:
                e.log_dir = d
                if not self.log_manager.defer(e):
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

    def _refresh_periodic_due(self) -> None:
        """The earliest due time of the fixed-rate tasks (isr-expiration, isr-change-propagation,
        highwatermark-checkpoint, kafka-log-retention and the log tasks), kept for `next_task_due_ms`: called
        wherever one of them is set, so that the minimum is not taken again after every step of a PartitionActor
        (tests/core/broker/test_next_task_due.py holds it to the minimum taken afresh)."""
        due = min(self._next_isr_expiration_ms, self._next_isr_propagation_ms, self._next_log_retention_ms,
                  *self._next_log_task_ms.values())
        if self._next_hw_checkpoint_ms is not None and self._next_hw_checkpoint_ms < due:
            due = self._next_hw_checkpoint_ms
        self._periodic_due_ms = due

    def next_task_due_ms(self) -> float:
        """When `run_scheduled_tasks` has something to do next."""
        # a running minimum, no list: asked after every step of a PartitionActor (mostly with empty purgatories)
        due = self._periodic_due_ms
        for purgatory in (self._delayed_produce, self._delayed_fetch, self._delayed_delete_records,
                          self._delayed_txn_markers):
            if purgatory:  # in this order: of equal deadlines the first is kept (an int or a float)
                for op in purgatory:
                    if op.deadline_ms < due:
                        due = op.deadline_ms
        if self.log_manager.has_future_logs and alter_log_dirs.moving(self) and self._alter_log_dirs_due_ms < due:
            # ReplicaAlterLogDirsThread: copying until every moving replica is swapped in (after a storage error,
            # once replica.fetch.backoff.ms is over)
            due = self._alter_log_dirs_due_ms
        return due

    def run_scheduled_tasks(self, now_ms: float) -> Proc[None]:
        """Run every periodic task that is due: isr-expiration, isr-change-propagation, highwatermark-checkpoint,
        kafka-log-retention, kafka-log-flusher, kafka-recovery-point-checkpoint, kafka-log-start-offset-checkpoint,
        delayed-operation expiry. Periods are fixed-rate from the previous due time (Kafka's
        scheduler)."""
        if now_ms < self._periodic_due_ms and not self.log_manager.has_future_logs:
            # no periodic task is due (their earliest due time is kept: _refresh_periodic_due), the common case of a
            # PartitionActor's pass: only the purgatories, and only if some operation's deadline has come
            for purgatory in (self._delayed_produce, self._delayed_fetch, self._delayed_delete_records,
                              self._delayed_txn_markers):
                for op in purgatory:
                    if op.deadline_ms <= now_ms:
                        yield from self.expire_delayed_operations(now_ms)
                        return
            return
        if now_ms >= self._next_isr_expiration_ms:
            yield from self.maybe_shrink_isr(now_ms)
            self._next_isr_expiration_ms = _next_due(self._next_isr_expiration_ms, now_ms,
                                                     self.config.isr_expiration_interval_ms)
            self._refresh_periodic_due()
        if now_ms >= self._next_isr_propagation_ms:
            yield from self.maybe_propagate_isr_changes(now_ms)
            self._next_isr_propagation_ms = _next_due(self._next_isr_propagation_ms, now_ms,
                                                      ISR_CHANGE_PROPAGATION_CHECK_MS)
            self._refresh_periodic_due()
        if self._next_hw_checkpoint_ms is not None and now_ms >= self._next_hw_checkpoint_ms:
            yield from self.checkpoint_high_watermarks()
            self._next_hw_checkpoint_ms = _next_due(self._next_hw_checkpoint_ms, now_ms,
                                                    self.config.replica_high_watermark_checkpoint_interval_ms)
            self._refresh_periodic_due()
        if now_ms >= self._next_log_retention_ms:
            self.cleanup_logs(now_ms)
            self._next_log_retention_ms = _next_due(self._next_log_retention_ms, now_ms,
                                                    self.config.log_retention_check_interval_ms)
            self._refresh_periodic_due()
            yield from self._process_log_dir_failures()
        lm = self.log_manager
        for task, run in ((LOG_FLUSH_SCHEDULER_INTERVAL_MS, lambda: lm.flush_dirty_logs(int(now_ms))),
                          (LOG_FLUSH_OFFSET_CHECKPOINT_INTERVAL_MS, lm.checkpoint_recovery_offsets),
                          (LOG_FLUSH_START_OFFSET_CHECKPOINT_INTERVAL_MS, lm.checkpoint_log_start_offsets)):
            if now_ms >= self._next_log_task_ms[task]:
                self._run_log_task(run)
                self._next_log_task_ms[task] = _next_due(self._next_log_task_ms[task], now_ms,
                                                         self._log_task_periods[task])
                self._refresh_periodic_due()
                yield from self._process_log_dir_failures()
        if self.log_manager.has_future_logs and now_ms >= self._alter_log_dirs_due_ms:
            try:
                if self.alter_log_dirs_quota.is_quota_exceeded(now_ms):
                    # ReplicaAlterLogDirsThread.buildFetch builds no fetch; the thread waits replica.fetch.backoff.ms
                    self._alter_log_dirs_due_ms = now_ms + alter_log_dirs.QUOTA_BACKOFF_MS
                else:
                    alter_log_dirs.copy_step(self, now_ms)
            except KafkaStorageError as e:
                self._alter_log_dirs_due_ms = now_ms + alter_log_dirs.STORAGE_ERROR_BACKOFF_MS
                if not self.log_manager.defer(e):
                    self._note_storage_error(e)
            yield from self._process_log_dir_failures()
        yield from self.expire_delayed_operations(now_ms)

    def handle_alter_replica_log_dirs(self, request: AlterReplicaLogDirsRequest, now_ms: float = 0
                                      ) -> Proc[AlterReplicaLogDirsResponse]:
        """KafkaApis.handleAlterReplicaLogDirsRequest → ReplicaManager.alterReplicaLogDirs (core/broker/
        alter_log_dirs.py); the copy runs from the scheduled tasks."""
        yield from ()
        return alter_log_dirs.alter_replica_log_dirs(self, request)

    def cleanup_logs(self, now_ms: float) -> int:
        """The "kafka-log-retention" task (LogManager.cleanupLogs): segments past retention.ms / retention.bytes
        are deleted and the log start offset advances (never past the high watermark). Returns the segments
        deleted."""
        try:
            deleted = self.log_manager.cleanup_logs(int(now_ms))
            if deleted:
                self._touch_delayed_fetches()  # some log start offsets moved
            return deleted
        except KafkaStorageError as e:
            if not self.log_manager.defer(e):
                self._note_storage_error(e)
            return 0

    def _run_log_task(self, run: Callable[[], None]) -> None:
        """One of the LogManager's periodic tasks; a storage error defers or takes its dir offline."""
        try:
            run()
        except KafkaStorageError as e:
            if not self.log_manager.defer(e):
                self._note_storage_error(e)

    def begin_shutdown(self) -> None:
        """KafkaServer.shutdown's ``isShuttingDown.compareAndSet(false, true)``, which comes before
        controlledShutdown(): ReplicaManager holds the same AtomicBoolean (createReplicaManager(isShuttingDown)), so
        from then on makeFollowers "skips the adding-fetcher step" for the partitions a LeaderAndIsr makes it follow.
        Fetchers that already run keep running until shutdown(). This is why, in Kafka 2.6, a broker in controlled
        shutdown never fetches the partitions it just stopped leading, and their new leaders do not put it back
        into those ISRs (Partition.maybeExpandIsr); the followers it already had keep fetching (KIP-841, 3.3, is
        what stopped those from re-entering ISRs)."""
        self.is_shutting_down = True

    def shutdown(self, checkpoint_hw: bool = True) -> Proc[None]:
        """ReplicaManager.shutdown: stop fetching; checkpoint high watermarks."""
        self.is_shutting_down = True
        self.replica_fetcher_manager.shutdown()
        if checkpoint_hw:
            yield from self.checkpoint_high_watermarks()
            self.log_manager.close()  # LogManager.shutdown: producer-state snapshots written, files closed


def _next_due(prev_due: float, now_ms: float, period: float) -> float:
    nxt = prev_due + period
    if nxt <= now_ms:  # missed runs are not replayed
        nxt = now_ms + period
    return nxt


def with_fetch_offsets(data: FetchPartitionData, high_watermark: int, last_stable_offset: int) -> FetchPartitionData:
    """``attrs.evolve(data, high_watermark=..., last_stable_offset=...)`` built directly: the leader's answer to a
    follower carries the offsets after its fetch state moved (fetchMessages' updateFollowerFetchState, then the
    partition's HW), once per fetched partition of every follower fetch, where evolve's field-by-field copy cost
    more than the read. tests/core/broker/test_fetch_offsets.py holds it to evolve and fails when
    FetchPartitionData gains a field. Offsets that did not move keep ``data`` itself (the same value)."""
    if data.high_watermark == high_watermark and data.last_stable_offset == last_stable_offset:
        return data
    return FetchPartitionData(data.tp, data.error, high_watermark, last_stable_offset, data.log_start_offset,
                              data.records, data.log_end_offset, data.preferred_read_replica,
                              data.aborted_transactions)


def _lai_error_response(request: LeaderAndIsrRequest, error: Errors) -> LeaderAndIsrResponse:
    """LeaderAndIsrRequest.getErrorResponse: top-level error, every partition with the same error."""
    return LeaderAndIsrResponse(error, tuple(PartitionError(s.topic_partition, error)
                                             for s in request.partition_states))


__all__ = [
    "OFFLINE",
    "DelayedDeleteRecords",
    "DelayedFetch",
    "DelayedProduce",
    "FetchSession",
    "FollowerFetchState",
    "ReplicaManager",
    "NO_LEADER_EPOCH_PROVIDED",
]
