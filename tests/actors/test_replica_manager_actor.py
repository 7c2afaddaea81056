"""ReplicaManagerActor, the broker's request front (KafkaApis + ReplicaManager over PartitionActor shards): a
controller request is split into one ShardRequest per shard holding its partitions, the shards' answers are merged
into one NetReply in a deterministic order, and a shutdown completes once every shard has stopped. The shards are
real PartitionActors on one runtime; ZooKeeper is the in-memory model, the other peers sinks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.partition_actor import shard_of
from actors.replica_manager_actor import ReplicaManagerActor
from messages.broker_lifecycle import BrokerShutdownComplete, ReplicaManagerInit
from messages.common import Errors, TopicPartition
from messages.net import NetReply, NetRequest
from messages.partition import ReplicaManagerShutdown, ShardRequest, ShardShutdown, ShardStopped
from messages.requests import LeaderAndIsrResponse, PartitionError
from tests.support.actors import ActorTestbed, Delivered, ZooKeeperModel
from tests.support.broker import lai_request, lai_state, um_request

FRONT = "replica-manager"
SHARDS = 2
# two partitions of one topic in different shards: shard 0's has the higher number (t-7, t-3 as shard_of is)
TP0, TP1 = TopicPartition("t", 7), TopicPartition("t", 3)
assert (shard_of(TP0, SHARDS), shard_of(TP1, SHARDS)) == (0, 1)


def sent_by(caused: list[Delivered], sender: str) -> list[tuple[str, object]]:
    return [(d.receiver, d.body) for d in caused if d.sender == sender]


@pytest.fixture
def bed(tmp_path: Path) -> Iterator[ActorTestbed]:
    bed = ActorTestbed("broker-0", sinks=("net", "timer", "metrics", "kafka-server"))
    bed.rt.spawn(ZooKeeperModel, "zk")
    bed.rt.instances["zk"].zk.create_top_level_paths()
    bed.rt.spawn(ReplicaManagerActor, FRONT)
    bed.deliver(FRONT, ReplicaManagerInit(0, (str(tmp_path / "logs"),), partition_actors=SHARDS), "edge:process")
    bed.deliver(FRONT, NetRequest(7, 1, um_request(), True), "edge:net")  # brokers 0-2 alive
    try:
        yield bed
    finally:
        bed.shutdown()


def test_a_request_is_split_by_shard_and_answered_once_merged(bed: ActorTestbed) -> None:
    states = [lai_state(TP1, 0, 0, [0, 1], [0, 1], is_new=True), lai_state(TP0, 0, 0, [0, 1], [0, 1], is_new=True)]
    caused = bed.deliver(FRONT, NetRequest(7, 2, lai_request(states), True), "edge:net")
    assert sent_by(caused, FRONT)[:2] == [
        ("partition-0", ShardRequest(2, lai_request([states[1]]))),  # each shard only its partitions
        ("partition-1", ShardRequest(2, lai_request([states[0]])))]
    # one answer, on the request's connection and id, partitions in TopicPartition order (not shard order)
    assert [(to, body) for to, body in sent_by(caused, FRONT) if to == "net"] == [
        ("net", NetReply(7, 2, LeaderAndIsrResponse(Errors.NONE, (PartitionError(TP1, Errors.NONE),
                                                                   PartitionError(TP0, Errors.NONE)))))]


def test_a_request_without_reply_expected_is_not_answered(bed: ActorTestbed) -> None:
    caused = bed.deliver(FRONT, NetRequest(7, 3, um_request(), False), "edge:net")
    assert [to for to, _ in sent_by(caused, FRONT)] == ["partition-0", "partition-1"]


def test_shutdown_completes_when_every_shard_has_stopped_and_then_refuses_requests(bed: ActorTestbed) -> None:
    complete = BrokerShutdownComplete(True, "controlled shutdown succeeded")
    caused = bed.deliver(FRONT, ReplicaManagerShutdown(complete), "kafka-server")
    assert sent_by(caused, FRONT) == [("partition-0", ShardShutdown()), ("partition-1", ShardShutdown()),
                                      ("kafka-server", complete)]
    assert [body for to, body in sent_by(caused, "partition-0") + sent_by(caused, "partition-1")
            if to == FRONT] == [ShardStopped(0), ShardStopped(1)]
    # from now on a request is dropped unanswered: the sender's timeout and retry take over, as with a closed socket
    assert sent_by(bed.deliver(FRONT, NetRequest(7, 4, um_request(), True), "edge:net"), FRONT) == []
