"""PartitionActor, one shard of a broker's ReplicaManager: one core procedure at a time, even while it waits for
ZooKeeper (Kafka's partition lock); a follower's fetcher sends one batched fetch per leader and, when that fails,
waits replica.fetch.backoff.ms before the next; ShardShuttingDown sets the ReplicaManager's isShuttingDown at once, as
KafkaServer.shutdown sets the AtomicBoolean it shares with its ReplicaManager. Peers and edges are sinks the test
plays, ZooKeeper the in-memory model, on a ManualClock."""

from __future__ import annotations

from pathlib import Path

from actors.clock import ManualClock
from actors.partition_actor import PartitionActor
from actors.replica_manager_actor import ReplicaManagerActor
from actors.runtime import Runtime
from core.quota.replication_quota_manager import LONG_MAX
from kactor.records import values_batch
from messages.broker_lifecycle import ReplicaManagerInit
from messages.common import Errors, TopicPartition
from messages.net import NetResponse, NetSend, NetSendFailed
from messages.partition import ReplicaManagerShuttingDown, ShardInit, ShardReply, ShardRequest
from messages.quota import ReplicationQuotasChanged
from messages.replication import (
    INITIAL_EPOCH,
    INVALID_SESSION_ID,
    FetchPartition,
    FetchPartitionData,
    FetchRequest,
    FetchResponse,
)
from messages.requests import LeaderAndIsrResponse, PartitionError, UpdateMetadataResponse
from messages.runtime import ScheduleTimer, TimerFired
from messages.zk import GetData, ZkBatch, ZkRequest
from protocol.zk.znodes import encode_config_entity
from tests.support.actors import ActorTestbed, Delivered, ReleaseHeldZkRequests, Sink, ZooKeeperModel
from tests.support.broker import lai_request, lai_state, um_request

SHARD = "partition-0"
T0 = 1_000_000.0
TP = TopicPartition("t", 0)


def out(caused: list[Delivered]) -> list[tuple[str, object]]:
    """What the shard sent, in order, leaving out its gauges: (receiver, body)."""
    return [(d.receiver, d.body) for d in caused if d.sender == SHARD and d.receiver != "metrics"]


def _shard(tmp_path: Path) -> ActorTestbed:
    """Shard 0 of 1 on broker 0, brokers 0-2 alive (the helpers' UpdateMetadata: broker b at host<b>:9092+b)."""
    bed = ActorTestbed("broker-0", start_ms=T0, sinks=("net", "timer", "metrics", "replica-manager"))
    bed.rt.spawn(ZooKeeperModel, "zk")
    bed.rt.instances["zk"].zk.create_top_level_paths()
    bed.rt.spawn(PartitionActor, SHARD)
    assert out(bed.deliver(SHARD, ShardInit(0, 1, ReplicaManagerInit(0, (str(tmp_path / "logs"),))),
                           "replica-manager", at_ms=T0)) == [("timer", ScheduleTimer("replica-tasks", 2500.0))]
    bed.deliver(SHARD, ShardRequest(1, um_request()), "replica-manager", at_ms=T0)
    return bed


def test_a_request_waits_for_the_procedure_that_waits_for_zookeeper(tmp_path: Path) -> None:
    bed = _shard(tmp_path)
    try:
        zk = bed.rt.instances["zk"]
        zk.hold = True
        lai = lai_request([lai_state(TP, 1, 0, [1, 0], [1, 0], is_new=True)])
        # becoming follower reads the topic's config first (LogManager.getOrCreateLog's config): ZooKeeper holds it
        assert out(bed.deliver(SHARD, ShardRequest(2, lai), "replica-manager", at_ms=T0 + 1)) == [
            ("zk", ZkRequest(1, ZkBatch((GetData("/config/topics/t"),)), SHARD))]
        # an UpdateMetadata meanwhile is not started, let alone answered, before the LeaderAndIsr is done
        assert out(bed.deliver(SHARD, ShardRequest(3, um_request()), "replica-manager", at_ms=T0 + 2)) == []
        caused = out(bed.deliver("zk", ReleaseHeldZkRequests(), "test", at_ms=T0 + 3))
        replies = [body for to, body in caused if to == "replica-manager"]
        assert replies == [
            ShardReply(2, 0, LeaderAndIsrResponse(Errors.NONE, (PartitionError(TP, Errors.NONE),))),
            ShardReply(3, 0, UpdateMetadataResponse(Errors.NONE))]
        # the new follower's fetcher: one full fetch asking leader 1 for a new fetch session (KIP-227: no session
        # id, epoch 0), timed out after the fetch wait plus replica.socket.timeout.ms
        fetch = FetchRequest(0, (FetchPartition(TP, 0, 0, 0),), max_wait_ms=500, min_bytes=1, max_bytes=10485760,
                             session_id=INVALID_SESSION_ID, session_epoch=INITIAL_EPOCH)
        assert [(to, body) for to, body in caused if to == "net"] == [
            ("net", NetSend("host1", 9093, "replica-manager", fetch, 1, SHARD, timeout_ms=30_500))]
    finally:
        bed.shutdown()


def test_a_failed_fetch_waits_the_fetch_backoff_before_the_next(tmp_path: Path) -> None:
    bed = _shard(tmp_path)
    try:
        bed.deliver(SHARD, ShardRequest(2, lai_request([lai_state(TP, 1, 0, [1, 0], [1, 0], is_new=True)])),
                    "replica-manager", at_ms=T0 + 1)
        assert out(bed.deliver(SHARD, NetSendFailed(1, "connection refused"), "net", at_ms=T0 + 10)) == [
            ("timer", ScheduleTimer("fetch-backoff-1", 1000))]  # replica.fetch.backoff.ms
        # no session was opened: the next fetch is a full one again
        fetch = FetchRequest(0, (FetchPartition(TP, 0, 0, 0),), max_wait_ms=500, min_bytes=1, max_bytes=10485760,
                             session_id=INVALID_SESSION_ID, session_epoch=INITIAL_EPOCH)
        assert out(bed.deliver(SHARD, TimerFired("fetch-backoff-1"), "timer", at_ms=T0 + 1010)) == [
            ("net", NetSend("host1", 9093, "replica-manager", fetch, 2, SHARD, timeout_ms=30_500))]
        assert out(bed.deliver(SHARD, NetSendFailed(1, "late"), "net")) == []  # the abandoned attempt
    finally:
        bed.shutdown()


def test_every_shard_begins_its_shutdown(tmp_path: Path) -> None:
    rt = Runtime("broker-0", clock=ManualClock(1_000.0))
    try:
        for name in ("kafka-server", "timer", "zk", "metrics", "net"):
            rt.spawn(Sink, name)
        rt.spawn(ReplicaManagerActor, "replica-manager")
        rt.deliver("replica-manager", ReplicaManagerInit(0, (str(tmp_path / "a"),), partition_actors=3), "edge:process")
        shards = [rt.instances[f"partition-{i}"] for i in range(3)]
        assert [s.rm.is_shutting_down for s in shards] == [False] * 3
        rt.deliver("replica-manager", ReplicaManagerShuttingDown(), "kafka-server")
        assert [s.rm.is_shutting_down for s in shards] == [True] * 3
    finally:
        rt.shutdown()


def test_a_follower_whose_only_partition_is_throttled_backs_off_until_its_quota_allows(tmp_path: Path) -> None:
    """ReplicaFetcherThread.buildFetch leaves a throttled partition out while the follower quota is exceeded; with
    nothing left to fetch the fetcher waits replica.fetch.backoff.ms (AbstractFetcherThread.maybeFetch) and asks
    again, until the rate (SimpleRate over the elapsed time) is back within the quota."""
    bed = _shard(tmp_path)
    try:
        bed.rt.instances["zk"].zk.create("/config/topics/t", encode_config_entity(
            {"follower.replication.throttled.replicas": "0:0"}))
        bed.deliver(SHARD, ReplicationQuotasChanged(LONG_MAX, 1000), "replica-manager", at_ms=T0)
        bed.deliver(SHARD, ShardRequest(2, lai_request([lai_state(TP, 1, 0, [1], [1, 0], is_new=True)])),
                    "replica-manager", at_ms=T0 + 1)
        records = values_batch(["x" * 3000, "y"], int(T0), base_offset=0, leader_epoch=0)
        answer = FetchResponse((FetchPartitionData(TP, Errors.NONE, 5, 5, 0, records),), session_id=7)
        # 3 kB fetched in the first second of a 1000 B/s quota, the leader's HW (5) ahead: throttled, nothing to send
        assert out(bed.deliver(SHARD, NetResponse(1, answer), "net", at_ms=T0 + 20)) == [
            ("timer", ScheduleTimer("fetch-backoff-1", 1000))]
        assert out(bed.deliver(SHARD, TimerFired("fetch-backoff-1"), "timer", at_ms=T0 + 1030)) == [
            ("timer", ScheduleTimer("fetch-backoff-1", 1000))]  # 3 kB over 1 s: still above
        sent = out(bed.deliver(SHARD, TimerFired("fetch-backoff-1"), "timer", at_ms=T0 + 4040))  # 3.1 kB over 4 s
        sends = [body.body for to, body in sent if to == "net"]
        assert [[(fp.tp, fp.fetch_offset) for fp in r.partitions] for r in sends] == [[(TP, 2)]]
    finally:
        bed.shutdown()
