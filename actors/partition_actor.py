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
import zlib
from collections import deque
from typing import Any

from actors import names
from actors.base import KActor
from actors.core_effects import routes
from actors.proc_driver import ProcDriver
from core.broker.config import BrokerSideConfig
from core.broker.fetch_session import FetchSessionCache
from core.broker.log import LogManager
from core.broker.replica_manager import ReplicaManager
from core.effects import Respond
from messages.broker_lifecycle import ReplicaManagerInit
from messages.common import Errors, TopicPartition
from messages.dynamic_config import LogConfigDefaultsChanged, TopicConfigChanged
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
from messages.replication import (
    DescribeMetadataCacheRequest,
    DescribeMetadataCacheResponse,
    FetchPartitionData,
    FetchRequest,
    FetchResponse,
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
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    StopReplicaRequest,
    StopReplicaResponse,
    UpdateMetadataRequest,
    UpdateMetadataResponse,
)
from messages.runtime import TimerFired
from messages.zk import ZkResponse

log = logging.getLogger("kactor.broker")

TASKS_TIMER = "replica-tasks"
REPLICA_SOCKET_TIMEOUT_MS = 30000  # replica.socket.timeout.ms
GAUGES_INTERVAL_MS = 1000


# (topic, partition, its class, shards) → shard: shard_of, computed once (the class: True == 1, but not as text)
_SHARDS: dict[tuple[str, int, type, int], int] = {}
_SHARDS_MAX = 200_000  # entries; cleared when full (a broker's partitions times a shard count or two)


def shard_of(tp: TopicPartition, shards: int) -> int:
    """The shard hosting ``tp``: a hash that is the same in every process and every run (not Python's hash())."""
    key = (tp.topic, tp.partition, tp.partition.__class__, shards)
    shard = _SHARDS.get(key)
    if shard is None:
        shard = zlib.crc32(f"{tp.topic}-{tp.partition}".encode()) % shards
        if len(_SHARDS) >= _SHARDS_MAX:
            _SHARDS.clear()
        _SHARDS[key] = shard
    return shard


def error_response(body: Any) -> Any:
    """What a shard answers when its core procedure failed (Kafka: UNKNOWN_SERVER_ERROR from the request handler)."""
    err = Errors.UNKNOWN_SERVER_ERROR
    if isinstance(body, LeaderAndIsrRequest):
        return LeaderAndIsrResponse(err)
    if isinstance(body, UpdateMetadataRequest):
        return UpdateMetadataResponse(err)
    if isinstance(body, StopReplicaRequest):
        return StopReplicaResponse(err)
    if isinstance(body, FetchRequest):
        return FetchResponse(tuple(FetchPartitionData(fp.tp, err) for fp in body.partitions))
    if isinstance(body, ProduceRequest):
        return ProduceResponse(tuple(ProducePartitionResponse(pp.tp, err) for pp in body.partitions))
    if isinstance(body, ListOffsetsRequest):
        return ListOffsetsResponse(tuple(ListOffsetsPartitionResponse(q.tp, err) for q in body.partitions))
    if isinstance(body, DescribeMetadataCacheRequest):
        return DescribeMetadataCacheResponse(-1, (), ())
    if isinstance(body, OffsetsForLeaderEpochRequest):
        return OffsetsForLeaderEpochResponse(tuple(
            OffsetForLeaderTopicResult(t.topic, tuple(OffsetForLeaderPartitionResult(err, q.partition, -1, -1)
                                                      for q in t.partitions)) for t in body.topics))
    return None


class PartitionActor(KActor):
    """Actor "partition-<i>": shard i of the broker's ReplicaManager."""

    def on_start(self) -> None:
        self.rm: ReplicaManager | None = None
        self.shard = 0
        self.queue: deque[tuple[Any, ...]] = deque()
        self.busy = False
        self.driver = ProcDriver(self, self._effect)
        self.fetch_ids = itertools.count(1)
        self.fetches: dict[int, int] = {}  # NetSend request id -> leader broker id
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
                                  log_props=cfg.log_props)
        self.fetch_backoff_ms = cfg.replica_fetch_backoff_ms
        self.inter_broker_listener_name = cfg.inter_broker_listener_name
        # I/O errors are deferred: only the log-dir probe's recorded LogDirFailure takes a dir offline; a failed
        # append is refused, and recorded (live) or re-enacted (replay) through _AppendFaults
        self.append_faults = _AppendFaults(self.runtime, config.log_dirs)
        self.rm = ReplicaManager(config, self.now_ms(), LogManager(config.log_dirs, owns, defer_io_errors=True,
                                                                   append_faults=self.append_faults))
        self.rm.fetcher_id = msg.shard
        self.rm.fetch_sessions = FetchSessionCache(msg.shard)  # fetch sessions live in (and name) a shard
        self._reschedule()

    def on_ShardBrokerEpoch(self, msg: ShardBrokerEpoch, sender: str) -> None:
        assert self.rm is not None
        self.rm.broker_epoch = msg.broker_epoch

    def on_LogAppendFailed(self, msg: LogAppendFailed, sender: str) -> None:
        """Only recorded: a replay reads these ahead (edges.log_dirs.RecordedLogDirs); the append was refused."""

    def on_LogDirFailure(self, msg: LogDirFailure, sender: str) -> None:
        self._enqueue(("log-dir-failure", msg.dir_index))

    def on_ShardShutdown(self, msg: ShardShutdown, sender: str) -> None:
        self._enqueue(("shutdown",))

    def on_ShardShuttingDown(self, msg: ShardShuttingDown, sender: str) -> None:
        # KafkaServer's isShuttingDown, shared with its ReplicaManager: set at once, not queued behind the shard's
        # work (an AtomicBoolean in Kafka); from now on makeFollowers starts no fetchers (core ReplicaManager)
        if self.rm is not None:
            self.rm.begin_shutdown()

    def on_TopicConfigChanged(self, msg: TopicConfigChanged, sender: str) -> None:
        self._enqueue(("config", msg))

    def on_LogConfigDefaultsChanged(self, msg: LogConfigDefaultsChanged, sender: str) -> None:
        self._enqueue(("config", msg))

    # -- work ---------------------------------------------------------------------------------------------------------
    def on_ShardRequest(self, msg: ShardRequest, sender: str) -> None:
        self._enqueue(("request", msg.token, msg.body))

    def on_TimerFired(self, msg: TimerFired, sender: str) -> None:
        if msg.key == TASKS_TIMER:
            self.timer_due = None
            self._enqueue(("tasks",))
        elif msg.key.startswith("fetch-backoff-"):
            self.backing_off.discard(int(msg.key.rsplit("-", 1)[1]))
            self._after()

    def on_NetResponse(self, msg: NetResponse, sender: str) -> None:
        leader = self.fetches.pop(msg.request_id, None)
        if leader is not None:
            self._enqueue(("fetched", leader, msg.body))

    def on_NetSendFailed(self, msg: NetSendFailed, sender: str) -> None:
        leader = self.fetches.pop(msg.request_id, None)
        if leader is not None and self.rm is not None:
            log.info("%s: fetch from broker %d failed: %s", self.name, leader, msg.error)
            self.rm.fetch_failed(leader)
            self._back_off(leader)

    def on_ZkResponse(self, msg: ZkResponse, sender: str) -> None:
        self.driver.on_zk_response(msg)

    def _enqueue(self, item: tuple[Any, ...]) -> None:
        self.queue.append(item)
        self._next()

    def _next(self) -> None:
        if self.busy or not self.queue or self.rm is None or self.stopped:
            return
        item = self.queue.popleft()
        self.busy = True
        rm, now = self.rm, self.now_ms()
        kind = item[0]
        if kind == "request":
            token, body = item[1], item[2]
            proc = self._request_proc(rm, token, body, now)
            self.driver.run(proc, lambda result, error: self._answered(token, body, result, error))
        elif kind == "tasks":
            self.driver.run(rm.run_scheduled_tasks(now), self._tasks_done)
        elif kind == "fetched":
            leader, response = item[1], item[2]
            if isinstance(response, FetchResponse):
                if any(d.error != Errors.NONE for d in response.partitions):
                    self._back_off(leader)  # ReplicaFetcherThread: partitions in error wait replica.fetch.backoff.ms
                self.driver.run(rm.handle_fetch_response(leader, response, now), self._done)
            elif isinstance(response, OffsetsForLeaderEpochResponse):
                if any(r.error_code != Errors.NONE for t in response.topics for r in t.partitions):
                    self._back_off(leader)  # partitions in error are asked again after replica.fetch.backoff.ms
                self.driver.run(rm.handle_epoch_response(leader, response, now), self._done)
            elif isinstance(response, ListOffsetsResponse):
                if any(r.error != Errors.NONE for r in response.partitions):
                    self._back_off(leader)  # partitions in error are asked again after replica.fetch.backoff.ms
                self.driver.run(rm.handle_list_offsets_response(leader, response, now), self._done)
            else:
                rm.fetch_failed(leader)
                self._back_off(leader)
                self._done(None, None)
        elif kind == "log-dir-failure":
            log_dirs = rm.log_manager.log_dirs
            if 0 <= item[1] < len(log_dirs):
                # one /log_dir_event_notification per failed dir, written by shard 0 (every shard gets the failure
                # before any later controller request, which queues behind it)
                self.driver.run(rm.handle_log_dir_failure(log_dirs[item[1]], send_zk_notification=self.shard == 0),
                                self._done)
            else:
                self._done(None, None)
        elif kind == "shutdown":
            self.driver.run(rm.shutdown(), self._stopped)
        elif kind == "config":
            self._apply_config(rm, item[1])
            self._done(None, None)

    def _apply_config(self, rm: ReplicaManager, msg: TopicConfigChanged | LogConfigDefaultsChanged) -> None:
        """A topic's new overrides (TopicConfigHandler) or new broker log defaults (DynamicLogConfig) for the logs
        of this shard, in turn with its other work; min.insync.replicas takes effect on the next produce."""
        if isinstance(msg, TopicConfigChanged):
            changed = rm.log_configs.update_topic(msg.topic, dict(msg.config), rm.online_partitions())
        else:
            rm.log_configs.reconfigure_defaults(dict(msg.config), rm.online_partitions())
            changed = True
        if changed:
            self._publish_gauges()  # UnderMinIsrPartitionCount / AtMinIsrPartitionCount may have moved

    def _request_proc(self, rm: ReplicaManager, token: int, body: Any, now: float) -> Any:
        reply_to = f"token:{token}"
        if isinstance(body, LeaderAndIsrRequest):
            return rm.handle_leader_and_isr(body, now)
        if isinstance(body, UpdateMetadataRequest):
            return rm.handle_update_metadata(body, now)
        if isinstance(body, StopReplicaRequest):
            return rm.handle_stop_replica(body, now)
        if isinstance(body, FetchRequest):
            return rm.handle_fetch(body, now, reply_to)
        if isinstance(body, ProduceRequest):
            return rm.handle_produce(body, now, reply_to)
        if isinstance(body, DescribeMetadataCacheRequest):
            return rm.handle_describe_metadata_cache(body)
        if isinstance(body, OffsetsForLeaderEpochRequest):
            return rm.handle_offsets_for_leader_epoch(body, now)
        if isinstance(body, ListOffsetsRequest):
            return rm.handle_list_offsets(body, now)
        raise TypeError(f"{self.name}: no handler for {type(body).__name__}")

    def _answered(self, token: int, body: Any, result: Any, error: BaseException | None) -> None:
        if error is not None:
            log.error("%s: %s failed: %s", self.name, type(body).__name__, error, exc_info=error)
            result = error_response(body)
        if result is not None:  # None: a delayed fetch/produce, answered later through Respond
            self.post(names.REPLICA_MANAGER, ShardReply(token, self.shard, result))
        if isinstance(body, (LeaderAndIsrRequest, StopReplicaRequest)):
            self._publish_gauges()
        self._done(None, None)

    def _done(self, result: Any, error: BaseException | None) -> None:
        if error is not None:
            log.error("%s: task failed: %s", self.name, error, exc_info=error)
        self._poke_log_dir_probe()
        self.busy = False
        self._after()
        self._next()

    def _tasks_done(self, result: Any, error: BaseException | None) -> None:
        # the tasks timer also fires for every delayed-fetch expiry (each fetcher, every replica.fetch.wait.max.ms):
        # the O(partitions) gauges are refreshed from it at most once a second
        if self.now_ms() >= self.gauges_due_ms:
            self.gauges_due_ms = self.now_ms() + GAUGES_INTERVAL_MS
            self._publish_gauges()
        self._done(result, error)

    def _stopped(self, result: Any, error: BaseException | None) -> None:
        self.stopped = True
        self.busy = False
        self.cancel_timer(TASKS_TIMER)
        self.post(names.REPLICA_MANAGER, ShardStopped(self.shard))

    def _effect(self, effect: Any) -> None:
        if isinstance(effect, Respond):
            self.post(names.REPLICA_MANAGER, ShardReply(int(effect.reply_to[6:]), self.shard, effect.response))
            return None
        delivered = routes(effect)
        if delivered is not None:
            for to, body in delivered:
                if self.runtime.has_actor(to):  # a broker without a group coordinator (unit tests): nobody to tell
                    self.post(to, body)
            return None
        raise TypeError(f"{self.name}: unexpected effect {type(effect).__name__}")

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
        for leader in sorted(rm.fetch_leaders() - self.backing_off):
            broker = rm.metadata_cache.get_alive_broker(leader)
            if broker is None:
                continue  # not in the metadata yet: the next UpdateMetadata brings it
            # AbstractFetcherManager: the leader's brokerEndPoint(config.interBrokerListenerName)
            ep = next((e for e in broker.endpoints if e.listener_name == self.inter_broker_listener_name), None)
            if ep is None:
                continue  # no such listener registered: nothing to fetch from
            request = rm.next_request_for(leader)
            if request is None:
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
            self.schedule(TASKS_TIMER, max(0.0, due - self.now_ms()))

    def _publish_gauges(self) -> None:
        # O(partitions): only after the periodic tasks and after controller requests, not after every fetch
        assert self.rm is not None
        gauges = self.rm.metrics()
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
