"""The follower side of replication: Kafka 2.6's ReplicaFetcherManager, ReplicaFetcherThread and
AbstractFetcherThread as one pure, deterministic object per ReplicaManager.

A partition the broker starts to follow enters the fetcher *Truncating* at its high watermark
(`ReplicaFetcherManager.add_fetcher_for_partitions`, from ReplicaManager.makeFollowers). For each leader broker the
fetcher has at most one request in flight (the 2.6 fetcher thread waits for its answer), chosen by `do_work`:

* `maybe_truncate`: ONE OffsetsForLeaderEpochRequest for all the partitions truncating from that leader (a log with
  no leader-epoch entry is truncated to its high watermark at once), answered into
  `truncate_to_epoch_end_offsets` (core/broker/fetcher_state.py's `offset_truncation_state`: KIP-101, KIP-279);
* `list_offsets_request_for`: the leader's latest (then earliest) offset of the partitions it answered
  OFFSET_OUT_OF_RANGE, answered into `fetch_offset_and_truncate`;
* `build_fetch`: ONE FetchRequest for every partition fetched from that leader (an incremental one within a fetch
  session, the follower throttle leaving out what is not in sync), answered into `process_fetch_request`, which
  appends each partition's records (`process_partition_data`).

The PartitionActor drives it through the ReplicaManager (``rm.next_request_for``, ``rm.handle_fetch_response`` ...)
and sends the requests; the fetcher's back-off after an error or a fully throttled round
(replica.fetch.backoff.ms) is the actor's (actors/partition_actor.py), told by `throttled_fetch_leaders` and the
answers' error counts. The partitions, their logs and the log-dir failure channel are the ReplicaManager's, read
through ``replica_manager`` as Kafka's ReplicaFetcherThread reads its ``replicaMgr``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Protocol

import attrs

from core.broker.config import BrokerSideConfig
from core.broker.fetch_session import FetchSessionHandler
from core.broker.fetcher_state import FETCHING, TRUNCATING, FollowerFetchState, offset_truncation_state
from core.broker.kafka_storage_error import KafkaStorageError
from core.broker.log_manager import LogManager
from core.broker.partition import ApiError, Partition
from core.effects import Proc
from core.quota.replication_quota_manager import ReplicationQuotaManager
from messages.common import Errors, TopicPartition
from messages.replication import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    FetchPartition,
    FetchPartitionData,
    FetchRequest,
    FetchResponse,
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
)

log = logging.getLogger("kactor.broker")

FetcherRequest = OffsetsForLeaderEpochRequest | ListOffsetsRequest | FetchRequest


class FetcherReplicaManager(Protocol):
    """What the fetcher reads of core/broker/replica_manager.py's ReplicaManager (as ReplicaFetcherThread its
    ``replicaMgr``): the hosted partitions, the follower quota, the log manager, and the log-dir failure channel."""

    config: BrokerSideConfig
    local_broker_id: int
    follower_quota: ReplicationQuotaManager
    log_manager: LogManager

    @property
    def all_partitions(self) -> Mapping[TopicPartition, object]: ...

    def online_partition(self, tp: TopicPartition) -> Partition | None: ...

    def _note_storage_error(self, e: KafkaStorageError) -> None: ...

    def _process_log_dir_failures(self) -> Proc[None]: ...


class ReplicaFetcherManager:
    """kafka.server.ReplicaFetcherManager with its fetcher threads (one per leader broker, as
    ``num.replica.fetchers`` = 1): every followed partition's PartitionFetchState, by partition and by leader."""

    def __init__(self, replica_manager: FetcherReplicaManager) -> None:
        self.replica_manager = replica_manager
        # AbstractFetcherThread.partitionStates over every fetcher thread
        self.fetch_states: dict[TopicPartition, FollowerFetchState] = {}
        # the Truncating ones, in the order they became so (the fetcher pump asks after every step; a scan of
        # thousands of fetching partitions for none would double its cost)
        self._truncating: dict[TopicPartition, None] = {}
        self._fetch_in_flight: dict[int, tuple[FetchRequest, tuple[FetchPartition, ...]]] = {}  # by leader: sent, all
        self._epoch_in_flight: dict[int, OffsetsForLeaderEpochRequest] = {}  # by leader
        # partitions answered OFFSET_OUT_OF_RANGE: the leader's latest (then earliest) offset is asked with a
        # ListOffsets (AbstractFetcherThread.handleOutOfRangeError → fetchOffsetAndTruncate); value: the timestamp
        self._out_of_range: dict[TopicPartition, int] = {}
        self._list_offsets_in_flight: dict[int, ListOffsetsRequest] = {}  # by leader
        self._session_handlers: dict[int, FetchSessionHandler] = {}  # by leader
        self._fetch_leaders: set[int] | None = None
        # PartitionFetchState.lag: the leader's high watermark minus our log end after the last append that added
        # data (absent until then: not in sync, as Kafka's None); isReplicaInSync for the follower throttle
        self._fetch_lag: dict[TopicPartition, int] = {}
        # leaders whose last fetch round left every partition out for the follower throttle (the fetcher backs off)
        self.throttled_fetch_leaders: set[int] = set()
        self.fetcher_id = 0  # our fetcher's id in the sessions we open (the PartitionActor's shard)
        self._fetch_base: FetchRequest | None = None  # build_fetch's template, for the fields in _fetch_base_key
        self._fetch_base_key: tuple[int, int, int, int, int] | None = None

    # ============================================================================ ReplicaFetcherManager

    def add_fetcher_for_partitions(self, partitions: Iterable[Partition]) -> None:
        """AbstractFetcherManager.addFetcherForPartitions → AbstractFetcherThread.addPartitions: each partition
        fetched from its leader, PartitionFetchState(initOffset = its high watermark, Truncating)."""
        for p in partitions:
            if p.log is not None and p.leader_replica_id is not None:
                self.fetch_states[p.topic_partition] = FollowerFetchState(
                    p.leader_replica_id, p.leader_epoch, p.log.high_watermark, TRUNCATING)
                self._truncating[p.topic_partition] = None
                self._fetch_leaders = None

    def remove_fetcher_for_partitions(self, tps: Iterable[TopicPartition]) -> None:
        """AbstractFetcherManager.removeFetcherForPartitions."""
        for tp in tps:
            self.fetch_states.pop(tp, None)
            self._truncating.pop(tp, None)
            self._out_of_range.pop(tp, None)
            self._fetch_lag.pop(tp, None)
        self._fetch_leaders = None

    def shutdown(self) -> None:
        """AbstractFetcherManager.closeAllFetchers: nothing is fetched any more, no answer is awaited."""
        self.fetch_states.clear()
        self._truncating.clear()
        self._fetch_leaders = None
        self._fetch_in_flight.clear()
        self._epoch_in_flight.clear()
        self._list_offsets_in_flight.clear()
        self._out_of_range.clear()

    def fetch_leaders(self) -> set[int]:
        """The leaders fetched from (cached: asked after every step of a PartitionActor)."""
        if self._fetch_leaders is None:
            self._fetch_leaders = {st.leader_id for st in self.fetch_states.values()}
        return self._fetch_leaders

    # ============================================================================ AbstractFetcherThread.doWork

    def do_work(self, leader_id: int, now_ms: float = 0) -> FetcherRequest | None:
        """ReplicaFetcherThread.doWork for one leader: maybeTruncate, then the offsets of partitions out of range,
        then maybeFetch."""
        return (self.maybe_truncate(leader_id) or self.list_offsets_request_for(leader_id)
                or self.build_fetch(leader_id, now_ms))

    def build_fetch_requests(self) -> dict[int, FetcherRequest]:
        """One request per leader broker with no request in flight (ReplicaFetcherThread.doWork): an
        OffsetsForLeaderEpochRequest while partitions are truncating, a ListOffsetsRequest for partitions out of
        range, else the FetchRequest."""
        out: dict[int, FetcherRequest] = {}
        for leader in sorted(self.fetch_leaders()):
            req = self.do_work(leader)
            if req is not None:
                out[leader] = req
        return out

    def awaiting(self, leader_id: int) -> bool:
        """A request to ``leader_id`` is in flight: `do_work` gives None for it, at once and changing nothing (the
        2.6 fetcher thread waits for its answer)."""
        return (leader_id in self._fetch_in_flight or leader_id in self._epoch_in_flight
                or leader_id in self._list_offsets_in_flight)

    def fetch_failed(self, leader_id: int) -> None:
        """The request to ``leader_id`` (a fetch, an OffsetsForLeaderEpoch or a ListOffsets) got no response
        (leader gone / timeout): allow a new one, in full."""
        self._fetch_in_flight.pop(leader_id, None)
        self._epoch_in_flight.pop(leader_id, None)
        self._list_offsets_in_flight.pop(leader_id, None)
        handler = self._session_handlers.get(leader_id)
        if handler is not None:
            handler.reset()

    # ============================================================================ truncation by leader epoch

    def maybe_truncate(self, leader_id: int) -> OffsetsForLeaderEpochRequest | None:
        """AbstractFetcherThread.maybeTruncate for the partitions fetched from ``leader_id``: those Truncating with
        no leader-epoch entry are truncated to their fetch offset (the high watermark) and start Fetching
        (truncateToHighWatermark); for the others, the OffsetsForLeaderEpochRequest to send (their latest epoch,
        fenced by the current leader epoch: ReplicaFetcherThread.fetchEpochEndOffsets). None if nothing is
        truncating or a request to that leader is in flight (the 2.6 fetcher thread waits for it)."""
        if self.awaiting(leader_id):
            return None
        all_partitions = self.replica_manager.all_partitions
        asked: dict[str, list[OffsetForLeaderPartition]] = {}
        for tp in list(self._truncating):
            st = self.fetch_states[tp]
            if st.leader_id != leader_id:
                continue
            p = all_partitions.get(tp)
            if not isinstance(p, Partition) or p.log is None:
                continue
            latest = p.log.latest_epoch
            if latest is None:
                self._truncate_and_update(p, st, st.fetch_offset, True)
            else:
                asked.setdefault(tp.topic, []).append(OffsetForLeaderPartition(tp.partition, st.leader_epoch, latest))
        if not asked:
            return None
        request = OffsetsForLeaderEpochRequest(
            tuple(OffsetForLeaderTopic(topic, tuple(sorted(parts, key=lambda q: q.partition)))
                  for topic, parts in sorted(asked.items())), self.replica_manager.local_broker_id)
        self._epoch_in_flight[leader_id] = request
        return request

    def _truncate_and_update(self, p: Partition, st: FollowerFetchState, offset: int, completed: bool) -> None:
        """AbstractFetcherThread.doTruncate + updateFetchOffsetAndMaybeMarkTruncationComplete for one partition: a
        storage error takes it out of the fetcher (markPartitionFailed)."""
        tp = p.topic_partition
        try:
            p.truncate_to(offset)
        except (KafkaStorageError, ApiError) as e:
            if isinstance(e, KafkaStorageError):
                self.replica_manager._note_storage_error(e)
            self.remove_fetcher_for_partitions((tp,))
            return
        self.fetch_states[tp] = attrs.evolve(st, fetch_offset=offset, state=FETCHING if completed else TRUNCATING)
        if completed:
            self._truncating.pop(tp, None)

    def truncate_to_epoch_end_offsets(self, leader_id: int, response: OffsetsForLeaderEpochResponse, now_ms: float
                                      ) -> Proc[int]:
        """AbstractFetcherThread.truncateToEpochEndOffsets with the leader's answer: for each partition still
        truncating under the leader epoch it was asked with, truncate by `offset_truncation_state`; a
        FENCED_LEADER_EPOCH takes the partition out of the fetcher until the next LeaderAndIsr (onPartitionFenced);
        any other error leaves it truncating, to be asked again after replica.fetch.backoff.ms. Returns the number
        of partitions answered with an error."""
        request = self._epoch_in_flight.pop(leader_id, None)
        if request is None:
            return 0
        rm = self.replica_manager
        asked = {(t.topic, q.partition): q for t in request.topics for q in t.partitions}
        errors = 0
        for t in response.topics:
            for r in t.partitions:
                tp = TopicPartition(t.topic, r.partition)
                q = asked.get((t.topic, r.partition))
                st = self.fetch_states.get(tp)
                if (q is None or st is None or st.leader_id != leader_id or st.state != TRUNCATING
                        or st.leader_epoch != q.current_leader_epoch):
                    continue  # leadership or leader epoch changed while the request was out
                p = rm.online_partition(tp)
                if p is None or p.log is None:
                    continue
                if r.error_code == Errors.NONE:
                    log_ = p.log
                    decision = offset_truncation_state(r.leader_epoch, r.end_offset, st.fetch_offset,
                                                       log_.log_end_offset, log_.end_offset_for_epoch)
                    self._truncate_and_update(p, st, decision.offset, decision.truncation_completed)
                elif r.error_code == Errors.FENCED_LEADER_EPOCH:
                    self.remove_fetcher_for_partitions((tp,))
                else:
                    errors += 1
        yield from rm._process_log_dir_failures()
        return errors

    # ============================================================================ fetching

    def build_fetch(self, leader_id: int, now_ms: float = 0) -> FetchRequest | None:
        """ReplicaFetcherThread.buildFetch + FetchSessionHandler.build: the next FetchRequest to ``leader_id``,
        every partition followed from it, at the local LEO — in full when there is no session, else only the
        partitions whose fetch state changed since the last request, and the forgotten ones. A throttled partition
        that is not in sync is left out while the follower quota is exceeded (shouldFollowerThrottle); when that
        leaves nothing, the leader is in ``throttled_fetch_leaders`` (the fetcher backs off, as Kafka's does when
        buildFetch gives no request). None if a request to that leader is in flight or nothing is fetched from it."""
        if self.awaiting(leader_id):
            return None
        rm = self.replica_manager
        self.throttled_fetch_leaders.discard(leader_id)
        handler = self._session_handlers.get(leader_id)
        if handler is None:  # not setdefault: a handler (and its dict) built for every fetch only to be dropped
            handler = self._session_handlers[leader_id] = FetchSessionHandler()
        sent = handler.sent
        config = rm.config
        max_bytes = config.replica_fetch_max_bytes
        all_partitions = rm.all_partitions
        parts: list[FetchPartition] = []
        quota = rm.follower_quota
        limited = quota.limited  # no follower quota: no look-up per partition
        exceeded: bool | None = None  # the quota's check, made once per request and only if a partition needs it
        throttled_out = False
        out_of_range = self._out_of_range or None  # mostly empty: no look-up per partition
        for tp, st in self.fetch_states.items():
            if st.leader_id != leader_id or st.state != FETCHING or (out_of_range is not None and tp in out_of_range):
                continue
            p = all_partitions.get(tp)
            if not isinstance(p, Partition) or p.log is None:
                continue
            if limited and quota.is_throttled(tp) and self._fetch_lag.get(tp, 1) > 0:
                if exceeded is None:
                    exceeded = quota.is_quota_exceeded(now_ms)
                if exceeded:
                    throttled_out = True
                    continue
            log_ = p.log
            fp = sent.get(tp)  # unchanged since the last request: reuse it (no new object, no comparison of attrs)
            if (fp is None or fp.fetch_offset != log_.log_end_offset or fp.leader_epoch != st.leader_epoch
                    or fp.log_start_offset != log_.log_start_offset):
                fp = FetchPartition(tp, log_.log_end_offset, st.leader_epoch, log_.log_start_offset, max_bytes)
            parts.append(fp)
        if not parts:
            handler.reset()
            if throttled_out:
                self.throttled_fetch_leaders.add(leader_id)
            return None
        # the request's fixed fields, kept while they stay the same (one FetchRequest fewer to build a fetch)
        key = (rm.local_broker_id, config.replica_fetch_wait_max_ms, config.replica_fetch_min_bytes,
               config.replica_fetch_response_max_bytes, self.fetcher_id)
        base = self._fetch_base
        if base is None or self._fetch_base_key != key:
            base = self._fetch_base = FetchRequest(key[0], (), key[1], key[2], key[3], fetcher_id=key[4])
            self._fetch_base_key = key
        request = handler.build(base, parts)
        self._fetch_in_flight[leader_id] = (request, tuple(parts))
        return request

    def process_fetch_request(self, leader_id: int, response: FetchResponse, now_ms: float) -> Proc[int]:
        """AbstractFetcherThread.processFetchRequest with the leader's answer: `process_partition_data` for each
        partition still fetched from ``leader_id`` at the offset that was requested (FENCED_LEADER_EPOCH: out of the
        fetcher until the next LeaderAndIsr, 2.6's onPartitionFenced; OFFSET_OUT_OF_RANGE: the leader's offsets are
        asked, handleOutOfRangeError; other errors: fetched again after the back-off). Returns the number of bytes
        appended."""
        in_flight = self._fetch_in_flight.pop(leader_id, None)
        request, full = in_flight if in_flight is not None else (None, ())
        handler = self._session_handlers.get(leader_id)
        if handler is not None:
            handler.handle_response(request, full, response)
        rm = self.replica_manager
        # an idle round's answer names no partition: no dict of what was asked for it
        sent = {fp.tp: fp for fp in full} if response.partitions else {}
        appended = 0
        for d in response.partitions:
            st = self.fetch_states.get(d.tp)
            fp = sent.get(d.tp)
            if st is None or st.leader_id != leader_id or st.state != FETCHING or fp is None:
                continue
            if d.error == Errors.FENCED_LEADER_EPOCH and fp.leader_epoch == st.leader_epoch:
                # AbstractFetcherThread.onPartitionFenced: our leader epoch is older than the leader's; stop fetching
                # the partition until the LeaderAndIsr that brings the new epoch
                self.remove_fetcher_for_partitions((d.tp,))
                continue
            if d.error == Errors.OFFSET_OUT_OF_RANGE:
                self._out_of_range[d.tp] = LATEST_TIMESTAMP
                continue
            if d.error != Errors.NONE:
                continue
            p = rm.online_partition(d.tp)
            if p is None:
                continue
            try:
                appended += self.process_partition_data(p, fp.fetch_offset, d, now_ms)
            except ApiError as e:
                # CorruptRecordException / an out-of-order batch: the partition is fetched again after the back-off
                log.warning("follower append to %s from leader %d refused: %s", d.tp, leader_id, e)
            except KafkaStorageError as e:
                if not rm.log_manager.defer(e):  # deferred: the follower stays behind until the probe decides
                    rm._note_storage_error(e)
        if rm._failed_dirs:  # mostly none: no generator to find that out
            yield from rm._process_log_dir_failures()
        return appended

    def process_partition_data(self, p: Partition, fetch_offset: int, d: FetchPartitionData, now_ms: float) -> int:
        """ReplicaFetcherThread.processPartitionData: Log.appendAsFollower at ``fetch_offset``, then the leader's
        high watermark and log start offset; the partition's lag and the follower quota's bytes. Returns the bytes
        appended (0: nothing was). Raises ApiError / KafkaStorageError as the append does."""
        if not p.append_records_to_follower(fetch_offset, d.records, d.high_watermark, d.log_start_offset, now_ms):
            return 0
        log_ = p.log
        if log_ is not None:
            self._fetch_lag[d.tp] = max(0, d.high_watermark - log_.log_end_offset)
        quota = self.replica_manager.follower_quota
        if quota.limited and quota.is_throttled(d.tp):
            # processPartitionData's quota.record(records.sizeInBytes)
            quota.record(len(d.records), now_ms)
        return len(d.records)

    # ============================================================================ out of range

    def list_offsets_request_for(self, leader_id: int) -> ListOffsetsRequest | None:
        """AbstractFetcherThread.fetchOffsetAndTruncate's questions to the leader for the partitions it answered
        OFFSET_OUT_OF_RANGE: its latest offset (fetchLatestOffsetFromLeader), then, if that is not below ours, its
        earliest (fetchEarliestOffsetFromLeader); as this broker (replica id), at our current leader epoch."""
        if self.awaiting(leader_id) or not self._out_of_range:
            return None
        asked = []
        for tp, timestamp in self._out_of_range.items():
            st = self.fetch_states.get(tp)
            if st is not None and st.leader_id == leader_id:
                asked.append(ListOffsetsPartition(tp, timestamp, st.leader_epoch))
        if not asked:
            return None
        request = ListOffsetsRequest(self.replica_manager.local_broker_id, 0, tuple(asked))
        self._list_offsets_in_flight[leader_id] = request
        return request

    def fetch_offset_and_truncate(self, leader_id: int, response: ListOffsetsResponse, now_ms: float) -> Proc[int]:
        """AbstractFetcherThread.fetchOffsetAndTruncate with the leader's answer: a leader end offset below ours →
        truncate to it (the leader lost records we have: an unclean election); else, with the leader's start offset,
        a log that ends before it starts over there (truncateFullyAndStartAt). Errors leave the partition to be
        asked again after the back-off. Returns the number of partitions answered with an error."""
        request = self._list_offsets_in_flight.pop(leader_id, None)
        if request is None:
            return 0
        rm = self.replica_manager
        asked = {q.tp: q for q in request.partitions}
        errors = 0
        for r in response.partitions:
            q = asked.get(r.tp)
            st = self.fetch_states.get(r.tp)
            if (q is None or st is None or st.leader_id != leader_id or st.leader_epoch != q.current_leader_epoch
                    or self._out_of_range.get(r.tp) != q.timestamp):
                continue
            p = rm.online_partition(r.tp)
            if p is None or p.log is None:
                self._out_of_range.pop(r.tp, None)
                continue
            if r.error != Errors.NONE:
                errors += 1
                continue
            log_ = p.log
            try:
                if q.timestamp == LATEST_TIMESTAMP:
                    if r.offset < log_.log_end_offset:
                        log.warning("%s: leader %d's end offset %d is below ours %d: truncating", r.tp, leader_id,
                                    r.offset, log_.log_end_offset)
                        p.truncate_to(r.offset)
                        self._out_of_range.pop(r.tp)
                    else:
                        self._out_of_range[r.tp] = EARLIEST_TIMESTAMP
                    continue
                if r.offset > log_.log_end_offset:
                    log_.truncate_fully_and_start_at(r.offset)
                self._out_of_range.pop(r.tp)
            except (KafkaStorageError, ApiError) as e:
                if isinstance(e, KafkaStorageError):
                    rm._note_storage_error(e)
                self.remove_fetcher_for_partitions((r.tp,))
        yield from rm._process_log_dir_failures()
        return errors
