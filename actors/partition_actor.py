"""PartitionActor: one shard of a broker's partitions, running Kafka's ReplicaManager logic for them.

Each shard owns a functional-core `core.broker.replica_manager.ReplicaManager` restricted to the partitions that
hash to it (`shard_of`): it runs becomeLeaderOrFollower → makeLeaders / makeFollowers, stopReplicas, the follower
fetchers (one FetchRequest per leader broker per round, batching every partition it follows from that leader), the
leader's fetch/produce handling, and the periodic tasks (isr-expiration, isr-change-propagation, high-watermark
checkpoint, delayed-operation expiry) from ONE timer. Work is serialised: one core procedure at a time, suspended
across ZooKeeper round trips like Kafka's partition lock, so the outcome depends only on message order.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections import deque
from typing import Any

import attrs

from actors import names
from actors.base import KActor
from actors.core_effects import EVERY_RECIPIENT, EffectInterpreter
from actors.proc_driver import ProcDriver
from core.api.registry import follower_unit_of, sharded_unit_of
from core.broker.cleaner import swap as log_cleaning
from core.broker.config import BrokerSideConfig
from core.broker.fetch_session import FetchSessionCache
from core.broker.log_manager import LogManager
from core.broker.replica_manager import ReplicaManager
from core.broker.shards import ShardedRequest, shard_of
from core.coordinator.transaction.verification import VerifyPartitionsInTxn
from core.disk import OS_DISK
from core.effects import ReplyHandle, Respond
from messages.broker_lifecycle import ReplicaManagerInit
from messages.common import Errors, TopicPartition
from messages.dynamic_config import LogConfigDefaultsChanged, TopicConfigChanged
from messages.log_cleaner import LogCleaned
from messages.net import NetResponse, NetSend, NetSendFailed
from messages.partition import (
    LogAppendFailed,
    LogDirFailure,
    ReplicaManagerGauges,
    ShardBrokerEpoch,
    ShardInit,
    ShardReply,
    ShardRequest,
    ShardShutdown,
    ShardShuttingDown,
    ShardStopped,
)
from messages.quota import ReplicationQuotasChanged
from messages.replication import FetchRequest
from messages.runtime import TimerFired
from messages.transaction import AddPartitionsToTxnRequest, AddPartitionsToTxnResponse
from messages.zk import ZkResponse

__all__ = ["PartitionActor", "shard_of"]

log = logging.getLogger("kactor.broker")

TASKS_TIMER = "replica-tasks"
REPLICA_SOCKET_TIMEOUT_MS = 30000  # replica.socket.timeout.ms
GAUGES_INTERVAL_MS = 1000


# The shard's work queue: one item at a time runs as a core procedure (not traced: the messages that made them are)
@attrs.frozen(slots=True)
class _Request:
    """A shard's part of a request (ShardRequest), served by its unit's ReplicaManager handler."""

    token: int
    body: Any
    unit: ShardedRequest


@attrs.frozen(slots=True)
class _Tasks:
    """The periodic tasks are due (isr expiration and propagation, checkpoints, delayed-operation expiry)."""


_TASKS = _Tasks()  # it carries nothing: one will do


@attrs.frozen(slots=True)
class _Fetched:
    """A follower fetcher's answer from ``leader`` (its request's unit applies it)."""

    leader: int
    response: Any


@attrs.frozen(slots=True)
class _DirFailed:
    dir_index: int


@attrs.frozen(slots=True)
class _Verified:
    """The coordinator's answer to a produce's verification (or its failure): the produce, parked meanwhile, goes on
    in its turn."""

    ask: int
    answer: tuple[Errors, dict[TopicPartition, Errors]]


@attrs.frozen(slots=True)
class _Shutdown:
    pass


@attrs.frozen(slots=True)
class _Cleaned:
    """The log cleaner has cleaned a log of this shard: swap it in (Log.replaceSegments), in turn with the rest."""

    msg: LogCleaned


@attrs.frozen(slots=True)
class _Config:
    change: TopicConfigChanged | LogConfigDefaultsChanged | ReplicationQuotasChanged


class PartitionActor(KActor):
    """Actor "partition-<i>": shard i of the broker's ReplicaManager."""

    def on_start(self) -> None:
        self.rm: ReplicaManager | None = None
        self.shard = 0
        self.queue: deque[Any] = deque()
        self.busy = False
        self.driver = ProcDriver(self, EffectInterpreter(self, respond=self._respond, optional=EVERY_RECIPIENT),
                                 asks={VerifyPartitionsInTxn: self._send_verification})
        self.fetch_ids = itertools.count(1)
        self.fetches: dict[int, int] = {}  # NetSend request id -> leader broker id
        self.verifications: dict[int, int] = {}  # NetSend request id -> the waiting produce's ask id
        self.request_timeout_ms = 30000.0  # request.timeout.ms: AddPartitionsToTxnManager's NetworkClient
        self.backing_off: set[int] = set()
        self.fetch_backoff_ms = 1000
        self.inter_broker_listener_name = "PLAINTEXT"
        self.timer_due: float | None = None
        self.last_gauges: dict[str, int] | None = None
        self.gauges_due_ms = 0.0
        self.stopped = False

    # -- lifecycle ----------------------------------------------------------------------------------------------------
    def on_ShardInit(self, msg: ShardInit, sender: str) -> None:
        cfg: ReplicaManagerInit = msg.config
        self.shard = msg.shard
        shards = msg.shards
        owns = (lambda tp: shard_of(tp, shards) == msg.shard) if shards > 1 else None
        config = BrokerSideConfig(cfg.broker_id, tuple(cfg.log_dirs),
                                  replica_lag_time_max_ms=cfg.replica_lag_time_max_ms,
                                  replica_high_watermark_checkpoint_interval_ms=cfg.high_watermark_checkpoint_interval_ms,
                                  replica_fetch_wait_max_ms=cfg.replica_fetch_wait_max_ms,
                                  min_insync_replicas=cfg.min_insync_replicas,
                                  replica_fetch_min_bytes=cfg.replica_fetch_min_bytes,
                                  replica_fetch_max_bytes=cfg.replica_fetch_max_bytes,
                                  replica_fetch_response_max_bytes=cfg.replica_fetch_response_max_bytes,
                                  log_retention_check_interval_ms=cfg.log_retention_check_interval_ms,
                                  log_props=cfg.log_props,
                                  replica_selector_class=cfg.replica_selector_class,
                                  replication_quota_window_num=cfg.replication_quota_window_num,
                                  replication_quota_window_size_seconds=cfg.replication_quota_window_size_seconds,
                                  transaction_partition_verification_enable=(
                                      cfg.transaction_partition_verification_enable))
        self.fetch_backoff_ms = cfg.replica_fetch_backoff_ms
        self.inter_broker_listener_name = cfg.inter_broker_listener_name
        # I/O errors are deferred: only the log-dir probe's recorded LogDirFailure takes a dir offline; a failed
        # append is refused, and recorded (live) or re-enacted (replay) through _AppendFaults
        self.append_faults = _AppendFaults(self.runtime, config.log_dirs)
        disk = self.runtime.edges.disk
        self.rm = ReplicaManager(config, self.now_ms(), LogManager(config.log_dirs, owns, defer_io_errors=True,
                                                                   append_faults=self.append_faults,
                                                                   disk=OS_DISK if disk is None else disk,
                                                                   max_pid_expiration_ms=cfg.transactional_id_expiration_ms))
        self.rm.fetcher_id = msg.shard
        self.rm.fetch_sessions = FetchSessionCache(msg.shard)  # fetch sessions live in (and name) a shard
        cleaner = self.runtime.edges.log_cleaner
        if cleaner is not None:
            cleaner.register_shard(self.name, self.rm.log_manager)
        self._reschedule()

    def on_ShardBrokerEpoch(self, msg: ShardBrokerEpoch, sender: str) -> None:
        assert self.rm is not None
        self.rm.broker_epoch = msg.broker_epoch

    def on_LogAppendFailed(self, msg: LogAppendFailed, sender: str) -> None:
        """Only recorded: a replay reads these ahead (edges.log_dirs.RecordedLogDirs); the append was refused."""

    def on_LogDirFailure(self, msg: LogDirFailure, sender: str) -> None:
        self._enqueue(_DirFailed(msg.dir_index))

    def on_ShardShutdown(self, msg: ShardShutdown, sender: str) -> None:
        self._enqueue(_Shutdown())

    def on_ShardShuttingDown(self, msg: ShardShuttingDown, sender: str) -> None:
        # KafkaServer's isShuttingDown, shared with its ReplicaManager: set at once, not queued behind the shard's
        # work (an AtomicBoolean in Kafka); from now on makeFollowers starts no fetchers (core ReplicaManager)
        if self.rm is not None:
            self.rm.begin_shutdown()

    def on_TopicConfigChanged(self, msg: TopicConfigChanged, sender: str) -> None:
        self._enqueue(_Config(msg))

    def on_LogConfigDefaultsChanged(self, msg: LogConfigDefaultsChanged, sender: str) -> None:
        self._enqueue(_Config(msg))

    def on_ReplicationQuotasChanged(self, msg: ReplicationQuotasChanged, sender: str) -> None:
        self._enqueue(_Config(msg))

    def on_LogCleaned(self, msg: LogCleaned, sender: str) -> None:
        self._enqueue(_Cleaned(msg))

    # -- work ---------------------------------------------------------------------------------------------------------
    def on_ShardRequest(self, msg: ShardRequest, sender: str) -> None:
        self.queue.append(_Request(msg.token, msg.body, sharded_unit_of(msg.body)))  # _enqueue, a call less
        if not self.busy:  # (busy: it waits its turn, which _done gives it)
            self._next()

    def on_TimerFired(self, msg: TimerFired, sender: str) -> None:
        if msg.key == TASKS_TIMER:
            self.timer_due = None
            self.queue.append(_TASKS)  # _enqueue, inline
            self._next()
        elif msg.key.startswith("fetch-backoff-"):
            self.backing_off.discard(int(msg.key.rsplit("-", 1)[1]))
            self._after()

    def on_NetResponse(self, msg: NetResponse, sender: str) -> None:
        ask = self.verifications.pop(msg.request_id, None)
        if ask is not None:
            body = msg.body
            self._enqueue(_Verified(ask, (body.error, dict(body.errors)) if isinstance(
                body, AddPartitionsToTxnResponse) else (Errors.NETWORK_EXCEPTION, {})))
            return
        leader = self.fetches.pop(msg.request_id, None)
        if leader is not None:
            self.queue.append(_Fetched(leader, msg.body))  # _enqueue, inline
            self._next()

    def on_NetSendFailed(self, msg: NetSendFailed, sender: str) -> None:
        ask = self.verifications.pop(msg.request_id, None)
        if ask is not None:
            # AddPartitionsToTxnManager: a disconnection or timeout fails the verification with NETWORK_EXCEPTION
            self._enqueue(_Verified(ask, (Errors.NETWORK_EXCEPTION, {})))
            return
        leader = self.fetches.pop(msg.request_id, None)
        if leader is not None and self.rm is not None:
            log.info("%s: fetch from broker %d failed: %s", self.name, leader, msg.error)
            self.rm.fetch_failed(leader)
            self._back_off(leader)

    def on_ZkResponse(self, msg: ZkResponse, sender: str) -> None:
        self.driver.on_zk_response(msg)

    def _enqueue(self, item: Any) -> None:
        self.queue.append(item)
        self._next()

    def _next(self) -> None:
        while not self.busy and self.queue and self.rm is not None and not self.stopped:
            item = self.queue.popleft()
            self.busy = True
            self._START[type(item)](self, item, self.rm, self.now_ms())

    def _start_request(self, item: _Request, rm: ReplicaManager, now: float) -> None:
        proc = item.unit.handle(rm, item.body, now, ReplyHandle(item.token))
        self.driver.run(proc, lambda result, error: self._answered(item, result, error))

    def _start_tasks(self, item: _Tasks, rm: ReplicaManager, now: float) -> None:
        self.driver.run(rm.run_scheduled_tasks(now), self._tasks_done)

    def _start_fetched(self, item: _Fetched, rm: ReplicaManager, now: float) -> None:
        unit = follower_unit_of(item.response)
        if unit is None or unit.handle_response is None:
            rm.fetch_failed(item.leader)
            self._back_off(item.leader)
            self._done(None, None)
            return
        if unit.response_failed is not None and unit.response_failed(item.response):
            # ReplicaFetcherThread: partitions in error are asked again after replica.fetch.backoff.ms
            self._back_off(item.leader)
        self.driver.run(unit.handle_response(rm, item.leader, item.response, now), self._done)

    def _start_dir_failed(self, item: _DirFailed, rm: ReplicaManager, now: float) -> None:
        log_dirs = rm.log_manager.log_dirs
        if 0 <= item.dir_index < len(log_dirs):
            # one /log_dir_event_notification per failed dir, written by shard 0 (every shard gets the failure
            # before any later controller request, which queues behind it)
            self.driver.run(rm.handle_log_dir_failure(log_dirs[item.dir_index], send_zk_notification=self.shard == 0),
                            self._done)
        else:
            self._done(None, None)

    def _start_shutdown(self, item: _Shutdown, rm: ReplicaManager, now: float) -> None:
        self.driver.run(rm.shutdown(), self._stopped)

    def _start_config(self, item: _Config, rm: ReplicaManager, now: float) -> None:
        self._apply_config(rm, item.change)
        self._done(None, None)

    def _start_cleaned(self, item: _Cleaned, rm: ReplicaManager, now: float) -> None:
        cleaner = self.runtime.edges.log_cleaner
        swapped = log_cleaning.swap_cleaned(rm, item.msg, clean_here=cleaner is None)
        if cleaner is not None:
            cleaner.swapped(item.msg.plan.topic_partition, swapped)
        self._done(None, None)

    def _start_verified(self, item: _Verified, rm: ReplicaManager, now: float) -> None:
        # the produce's own procedure goes on (its done callback frees the shard); none waiting: nothing to do
        if not self.driver.resume(item.ask, item.answer):
            self._done(None, None)

    _START = {_Request: _start_request, _Tasks: _start_tasks, _Fetched: _start_fetched, _DirFailed: _start_dir_failed,
              _Shutdown: _start_shutdown, _Config: _start_config, _Cleaned: _start_cleaned,
              _Verified: _start_verified}

    def _apply_config(self, rm: ReplicaManager,
                      msg: TopicConfigChanged | LogConfigDefaultsChanged | ReplicationQuotasChanged) -> None:
        """A topic's new overrides (TopicConfigHandler) or new broker log defaults (DynamicLogConfig) for the logs
        of this shard, or the broker's replication quotas, in turn with its other work; min.insync.replicas takes
        effect on the next produce."""
        if isinstance(msg, ReplicationQuotasChanged):
            rm.update_replication_quotas(msg.leader_bytes_per_second, msg.follower_bytes_per_second,
                                         msg.alter_log_dirs_bytes_per_second)
            return
        if isinstance(msg, TopicConfigChanged):
            changed = rm.log_configs.update_topic(msg.topic, dict(msg.config), rm.online_partitions())
        else:
            rm.log_configs.reconfigure_defaults(dict(msg.config), rm.online_partitions())
            changed = True
        if changed:
            self._publish_gauges()  # UnderMinIsrPartitionCount / AtMinIsrPartitionCount may have moved

    def _answered(self, item: _Request, result: Any, error: BaseException | None) -> None:
        if error is not None:
            log.error("%s: %s failed: %s", self.name, type(item.body).__name__, error, exc_info=error)
            # Kafka: UNKNOWN_SERVER_ERROR from the request handler
            result = item.unit.error(item.body, Errors.UNKNOWN_SERVER_ERROR)
        if result is not None:  # None: a delayed fetch/produce, answered later through Respond
            self.post(names.REPLICA_MANAGER, ShardReply(item.token, self.shard, result))
        if item.unit.changes_partitions:
            self._publish_gauges()
        self._done(None, None)

    def _done(self, result: Any, error: BaseException | None) -> None:
        if error is not None:
            log.error("%s: task failed: %s", self.name, error, exc_info=error)
        rm = self.rm
        assert rm is not None
        # _poke_log_dir_probe's own test, before its call (after every item of the shard, hardly ever true)
        if rm.log_manager.deferred_io_failures or self.append_faults._failed:
            self._poke_log_dir_probe()
        self.busy = False
        self._after()
        if self.queue:  # (_next's own first look: nothing queued is the common case)
            self._next()

    def _tasks_done(self, result: Any, error: BaseException | None) -> None:
        # the tasks timer also fires for every delayed-fetch expiry (each fetcher, every replica.fetch.wait.max.ms):
        # the O(partitions) gauges are refreshed from it at most once a second
        now = self.now_ms()
        if now >= self.gauges_due_ms:
            self.gauges_due_ms = now + GAUGES_INTERVAL_MS
            self._publish_gauges()
        self._done(result, error)

    def _stopped(self, result: Any, error: BaseException | None) -> None:
        self.stopped = True
        self.busy = False
        self.cancel_timer(TASKS_TIMER)
        self.post(names.REPLICA_MANAGER, ShardStopped(self.shard))

    def _respond(self, effect: Respond) -> None:
        handle = effect.reply_to
        assert isinstance(handle, ReplyHandle)
        self.post(names.REPLICA_MANAGER, ShardReply(handle.token, self.shard, effect.response))

    def _send_verification(self, ask: int, effect: VerifyPartitionsInTxn) -> tuple[str, Any]:
        """AddPartitionsToTxnManager.addTxnData (Kafka 3.6): the produce waits while the coordinator's broker is
        asked, with a verify-only AddPartitionsToTxn v4 on the inter-broker listener, whether the partitions are in
        the producer's transaction; its answer (or failure) resumes it, in its turn (`_Verified`).

        The shard is free meanwhile, as Kafka's request handler returns once the manager has the request: a
        coordinator out of reach held every partition of the shard (its produces, fetches and delayed operations'
        expiry) for up to request.timeout.ms (`kactor sim --txn-check` seed 6985: an acks=all produce unanswered
        for 32 s behind a verification sent to a broker cut off from this one). What the produce does after its
        verification, it does on the shard's state as it is then (its partitions looked up again, its guards
        checked at the append: KAFKA-14884)."""
        rid = next(self.fetch_ids)
        self.verifications[rid] = ask
        self.busy = False
        ep = next((e for e in effect.broker.endpoints if e.listener_name == self.inter_broker_listener_name), None)
        if ep is None:
            return self.name, NetSendFailed(rid, f"broker {effect.broker.id} has no "
                                                 f"{self.inter_broker_listener_name} endpoint")
        request = AddPartitionsToTxnRequest(effect.transactional_id, effect.producer_id, effect.producer_epoch,
                                            effect.partitions, verify_only=True)
        return names.NET, NetSend(ep.host, ep.port, names.TRANSACTION_COORDINATOR, request, rid, self.name,
                                  timeout_ms=self.request_timeout_ms)

    # -- fetchers and timers ------------------------------------------------------------------------------------------
    def _after(self) -> None:
        if self.rm is None or self.stopped:
            return
        self._pump_fetchers()
        self._reschedule()

    def _pump_fetchers(self) -> None:
        """ReplicaFetcherThread.doWork for every leader with nothing in flight: one batched
        OffsetsForLeaderEpochRequest for its truncating partitions, else one batched FetchRequest."""
        rm = self.rm
        assert rm is not None
        # the ReplicaManager's fetch_leaders / awaiting / throttled_fetch_leaders are its fetcher manager's: asked
        # here after every item of the shard, straight from it (a call less each)
        fetchers = rm.replica_fetcher_manager
        leaders = fetchers.fetch_leaders()
        if not leaders:
            return
        if self.backing_off:
            leaders = leaders - self.backing_off
        # in broker id order; one leader (the common case) needs no sorted(), ~1,600 instructions even for one. The
        # manager's set is iterated as it is: it replaces that set when its leaders change, never changes it in place
        for leader in sorted(leaders) if len(leaders) > 1 else leaders:
            if fetchers.awaiting(leader) and leader not in fetchers.throttled_fetch_leaders:
                continue  # no request, as below, without finding its endpoint (the common case: a fetch parked)
            broker = rm.metadata_cache.get_alive_broker(leader)
            if broker is None:
                continue  # not in the metadata yet: the next UpdateMetadata brings it
            # AbstractFetcherManager: the leader's brokerEndPoint(config.interBrokerListenerName); a loop, not
            # next() over a generator (its frame), as every fetch asks
            ep = None
            for e in broker.endpoints:
                if e.listener_name == self.inter_broker_listener_name:
                    ep = e
                    break
            if ep is None:
                continue  # no such listener registered: nothing to fetch from
            request = rm.next_request_for(leader, self.now_ms())
            if request is None:
                if leader in rm.throttled_fetch_leaders:
                    # AbstractFetcherThread.maybeFetch: no request (all throttled) → wait replica.fetch.backoff.ms
                    self._back_off(leader)
                continue
            rid = next(self.fetch_ids)
            self.fetches[rid] = leader
            wait_ms = request.max_wait_ms if isinstance(request, FetchRequest) else 0
            self.post(names.NET, NetSend(ep.host, ep.port, names.REPLICA_MANAGER, request, rid, self.name,
                                     timeout_ms=wait_ms + REPLICA_SOCKET_TIMEOUT_MS))

    def _poke_log_dir_probe(self) -> None:
        """A deferred I/O error: ask the log-dir probe (live only) to check now; it decides, through an input."""
        assert self.rm is not None
        failures = self.rm.log_manager.deferred_io_failures
        appends = self.append_faults.take()
        if failures or appends:
            log.warning("%s: I/O errors in %s", self.name, ", ".join(sorted(failures)))
            failures.clear()
            probe = self.runtime.edges.log_dirs
            if probe is not None:
                for dir_index, seq in appends:
                    probe.append_failed(self.name, dir_index, seq)
                probe.poke()

    def _back_off(self, leader: int) -> None:
        self.backing_off.add(leader)
        self.schedule(f"fetch-backoff-{leader}", self.fetch_backoff_ms)

    def _reschedule(self) -> None:
        rm = self.rm
        assert rm is not None
        due = rm.next_task_due_ms()
        if self.timer_due is None or due < self.timer_due:
            self.timer_due = due
            delay = due - self.now_ms()
            self.schedule(TASKS_TIMER, delay if delay > 0.0 else 0.0)  # max(0.0, delay), without its call

    def _publish_gauges(self) -> None:
        # O(partitions): only after the periodic tasks and after controller requests, not after every fetch
        assert self.rm is not None
        gauges = {**self.rm.metrics(), **self.rm.replication_quota_metrics(self.now_ms())}
        if gauges != self.last_gauges:
            self.last_gauges = gauges
            self.post(names.METRICS, ReplicaManagerGauges(self.shard, gauges))


class _AppendFaults:
    """core.broker.log.AppendFaults of one shard. Live, a refused append is kept as (dir index, seq of the message
    being handled) and reported through the log-dir edge, which records it as a LogAppendFailed input; in a replay
    that edge is the trace (edges.log_dirs.RecordedLogDirs), and the same appends are refused again."""

    def __init__(self, runtime: Any, log_dirs: tuple[str, ...]) -> None:
        self._runtime = runtime
        self._index = {os.path.abspath(d): i for i, d in enumerate(log_dirs)}
        self._failed: list[tuple[int, int]] = []

    def injected(self, log_dir: str) -> bool:
        edge = self._runtime.edges.log_dirs
        return edge is not None and edge.append_refused(self._index.get(log_dir, -1), self._runtime.current_seq)

    def failed(self, log_dir: str) -> None:
        failure = (self._index.get(log_dir, -1), self._runtime.current_seq)
        if failure not in self._failed:
            self._failed.append(failure)

    def take(self) -> list[tuple[int, int]]:
        failed, self._failed = self._failed, []
        return failed
