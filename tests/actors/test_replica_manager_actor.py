"""ReplicaManagerActor, the broker's request front (KafkaApis + ReplicaManager over PartitionActor shards): a
controller request is split into one ShardRequest per shard holding its partitions, the shards' answers are merged
into one NetReply in a deterministic order, and a shutdown completes once every shard has stopped. The shards are
real PartitionActors on one runtime; ZooKeeper is the in-memory model, the other peers sinks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from actors.replica_manager_actor import ReplicaManagerActor
from core.broker.shards import shard_of
from kactor.records import read_values, values_batch
from messages.broker_lifecycle import BrokerShutdownComplete, ReplicaManagerInit
from messages.common import Errors, TopicPartition
from messages.net import NetReply, NetRequest
from messages.partition import ReplicaManagerShutdown, ShardRequest, ShardShutdown, ShardStopped
from messages.replication import (
    FetchPartition,
    FetchRequest,
    LeadershipChange,
    ListOffsetsPartition,
    ListOffsetsRequest,
    LocalReply,
    LocalRequest,
    ProducePartition,
    ProducePartitionResponse,
    ProduceRequest,
    ProduceResponse,
)
from messages.requests import LeaderAndIsrResponse, PartitionError
from tests.support.actors import ActorTestbed, Delivered, Sink, ZooKeeperModel
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


def _lead_both(bed: ActorTestbed, replicas: tuple[int, ...]) -> None:
    states = [lai_state(tp, 0, 0, [0], replicas, is_new=True) for tp in (TP0, TP1)]
    bed.deliver(FRONT, NetRequest(7, 2, lai_request(states), True), "edge:net")


def test_a_produce_over_two_shards_is_one_answer_in_request_order(bed: ActorTestbed) -> None:
    """ReplicaManager.appendRecords over partitions of different shards: each shard appends its partitions, the
    front answers once, partitions in the request's order; acks=0 (no reply expected) is appended unanswered."""
    _lead_both(bed, replicas=(0,))
    request = ProduceRequest(1, 30000, (ProducePartition(TP1, values_batch(["b"])),
                                        ProducePartition(TP0, values_batch(["a", "a2"]))))
    caused = bed.deliver(FRONT, NetRequest(7, 3, request, True), "edge:net")
    assert [(to, body) for to, body in sent_by(caused, FRONT) if to.startswith("partition-")] == [
        ("partition-0", ShardRequest(3, attrs.evolve(request, partitions=request.partitions[1:]))),
        ("partition-1", ShardRequest(3, attrs.evolve(request, partitions=request.partitions[:1])))]
    (reply,) = [body for to, body in sent_by(caused, FRONT) if to == "net"]
    assert reply == NetReply(7, 3, ProduceResponse((ProducePartitionResponse(TP1, Errors.NONE, 0, -1, 0),
                                                    ProducePartitionResponse(TP0, Errors.NONE, 0, -1, 0))))
    caused = bed.deliver(FRONT, NetRequest(7, 4, attrs.evolve(request, acks=0), False), "edge:net")
    assert [to for to, _ in sent_by(caused, FRONT)] == ["partition-0", "partition-1"]  # appended, not answered
    fetch = FetchRequest(-1, (FetchPartition(TP0, 0), FetchPartition(TP1, 0)))
    (reply,) = [body for to, body in sent_by(bed.deliver(FRONT, NetRequest(7, 5, fetch, True), "edge:net"), FRONT)
                if to == "net"]
    assert [(d.tp, read_values(d.records)) for d in reply.body.partitions] == [
        (TP0, ("a", "a2", "a", "a2")), (TP1, ("b", "b"))]


def test_a_local_request_is_answered_to_its_actor_and_reads_to_the_log_end(bed: ActorTestbed) -> None:
    """LocalRequest (the group coordinator's in-process produce / fetch / list offsets): the answer goes to
    ``reply_to`` as LocalReply with the token; a fetch as the debugging replica (-2) reads to the log end, past the
    high watermark a consumer stops at."""
    bed.rt.spawn(Sink, "group-coordinator")
    _lead_both(bed, replicas=(0,))  # alone: acks=all is done at once (the testbed's clock starts near 0, where a
    produce = ProduceRequest(-1, 30000, (ProducePartition(TP0, values_batch(["x"])),))
    # follower never heard of counts as caught up within replica.lag.time.max.ms)
    caused = bed.deliver(FRONT, LocalRequest(11, produce, "group-coordinator"), "group-coordinator")
    assert [(to, body) for to, body in sent_by(caused, FRONT) if not to.startswith("partition-")] == [
        ("group-coordinator", LocalReply(11, ProduceResponse((ProducePartitionResponse(TP0, Errors.NONE, 0, -1,
                                                                                     0),))))]
    bed.deliver(FRONT, NetRequest(7, 6, lai_request([lai_state(TP0, 0, 1, [0, 1], [0, 1])]), True), "edge:net")
    bed.deliver(FRONT, NetRequest(7, 7, ProduceRequest(1, 30000, (ProducePartition(TP0, values_batch(["y"])),)),
                                  True), "edge:net")  # HW stays at 1: follower 1 (in the ISR) has not fetched it
    load = FetchRequest(-2, (FetchPartition(TP0, 0),))
    (reply,) = [body for to, body in sent_by(bed.deliver(FRONT, LocalRequest(12, load, "group-coordinator"),
                                                        "group-coordinator"), FRONT) if to == "group-coordinator"]
    (data,) = reply.body.partitions
    assert reply.token == 12 and read_values(data.records) == ("x", "y") and data.high_watermark == 1
    assert data.log_end_offset == 2
    consumer = FetchRequest(-1, (FetchPartition(TP0, 0),))
    (reply,) = [body for to, body in sent_by(bed.deliver(FRONT, LocalRequest(13, consumer, "group-coordinator"),
                                                        "group-coordinator"), FRONT) if to == "group-coordinator"]
    assert read_values(reply.body.partitions[0].records) == ("x",)
    offsets = ListOffsetsRequest(-1, 0, (ListOffsetsPartition(TP1, -1), ListOffsetsPartition(TP0, -1)))
    (reply,) = [body for to, body in sent_by(bed.deliver(FRONT, LocalRequest(14, offsets, "group-coordinator"),
                                                        "group-coordinator"), FRONT) if to == "group-coordinator"]
    assert [(r.tp, r.error, r.offset) for r in reply.body.partitions] == [
        (TP1, Errors.NONE, 0), (TP0, Errors.NONE, 1)]


def test_leadership_of_consumer_offsets_reaches_the_group_coordinator_when_there_is_one(bed: ActorTestbed) -> None:
    """onLeadershipChange: the shard that became leader of a __consumer_offsets partition tells the group
    coordinator (with the leader epoch); a broker without one (controller-only set-ups) tells nobody."""
    co = TopicPartition("__consumer_offsets", 0)
    state = lai_state(co, 0, 3, [0], [0], is_new=True)
    caused = bed.deliver(FRONT, NetRequest(7, 2, lai_request([state]), True), "edge:net")
    assert not any(d.receiver == "group-coordinator" for d in caused)
    bed.rt.spawn(Sink, "group-coordinator")
    caused = bed.deliver(FRONT, NetRequest(7, 3, lai_request([lai_state(co, 1, 4, [1, 0], [0, 1])]), True),
                         "edge:net")
    assert [d.body for d in caused if d.receiver == "group-coordinator"] == [LeadershipChange((), ((0, 4),))]


def test_leadership_of_transaction_state_reaches_the_transaction_coordinator(bed: ActorTestbed) -> None:
    """onLeadershipChange: a __transaction_state partition this broker now leads goes to the transaction
    coordinator (its leader epoch is the coordinator epoch), not to the group coordinator."""
    bed.rt.spawn(Sink, "group-coordinator")
    bed.rt.spawn(Sink, "transaction-coordinator")
    ts = TopicPartition("__transaction_state", 2)
    caused = bed.deliver(FRONT, NetRequest(7, 2, lai_request([lai_state(ts, 0, 6, [0], [0], is_new=True)]), True),
                         "edge:net")
    assert [(d.receiver, d.body) for d in caused if isinstance(d.body, LeadershipChange)] == [
        ("transaction-coordinator", LeadershipChange(((2, 6),), (), "__transaction_state"))]


def test_a_clients_produce_to_an_internal_topic_is_refused_but_the_coordinators_is_not(bed: ActorTestbed) -> None:
    """KafkaApis' internalTopicsAllowed: a client's produce to __consumer_offsets is INVALID_TOPIC_EXCEPTION for that
    partition (the others are appended); the group coordinator's in-process produce (LocalRequest) is appended."""
    bed.rt.spawn(Sink, "group-coordinator")
    co = TopicPartition("__consumer_offsets", 0)
    states = [lai_state(tp, 0, 0, [0], [0], is_new=True) for tp in (co, TP0)]
    bed.deliver(FRONT, NetRequest(7, 2, lai_request(states), True), "edge:net")
    request = ProduceRequest(1, 30000, (ProducePartition(co, values_batch(["g"])),
                                        ProducePartition(TP0, values_batch(["t"]))))
    caused = bed.deliver(FRONT, NetRequest(7, 3, request, True, client_id="rdkafka"), "edge:net")
    (reply,) = [body for to, body in sent_by(caused, FRONT) if to == "net"]
    assert [(r.tp, r.error, r.base_offset) for r in reply.body.partitions] == [
        (co, Errors.INVALID_TOPIC_EXCEPTION, -1), (TP0, Errors.NONE, 0)]
    caused = bed.deliver(FRONT, LocalRequest(5, attrs.evolve(request, partitions=request.partitions[:1]),
                                             "group-coordinator"), "group-coordinator")
    (reply,) = [body for to, body in sent_by(caused, FRONT) if to == "group-coordinator"]
    assert [(r.tp, r.error, r.base_offset) for r in reply.body.partitions] == [(co, Errors.NONE, 0)]
