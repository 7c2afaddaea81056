"""The replica manager's request units (core/api/broker_requests.py): how each request type is split over the
PartitionActor shards and its answers merged (UpdateMetadata goes to each shard with only that shard's partitions and
every live broker, the metadata-cache query is answered from all shards at once), and what a failed part answers."""

from __future__ import annotations

import attrs
import pytest

from core.api import registry
from core.api.broker_requests import merge_responses, split_request, unit_of
from core.broker.metadata_cache import MetadataCache
from core.broker.shards import SplitRefused, shard_of
from messages.common import Broker, EndPoint, Errors, TopicPartition
from messages.replication import (
    AlterReplicaLogDirsRequest,
    DeleteRecordsRequest,
    DescribeLogDirsRequest,
    DescribeMetadataCacheRequest,
    DescribeMetadataCacheResponse,
    FetchPartition,
    FetchPartitionData,
    FetchRequest,
    FetchResponse,
    ListOffsetsPartition,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetForLeaderPartition,
    OffsetForLeaderPartitionResult,
    OffsetForLeaderTopic,
    OffsetForLeaderTopicResult,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
    ProducePartition,
    ProducePartitionResponse,
    ProduceRequest,
    ProduceResponse,
)
from messages.requests import (
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    StopReplicaRequest,
    StopReplicaResponse,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    UpdateMetadataResponse,
)
from messages.transaction_admin import DescribeProducersRequest
from messages.txn_markers import WriteTxnMarkersRequest

SHARDS = 4
BROKERS = (Broker(0, (EndPoint("127.0.0.1", 9092),)), Broker(1, (EndPoint("127.0.0.1", 9093),)))


def _state(topic: str, p: int, leader: int = 0) -> UpdateMetadataPartitionState:
    return UpdateMetadataPartitionState(TopicPartition(topic, p), 1, leader, 0, (0, 1), 0, (0, 1))


def test_update_metadata_gives_each_shard_its_partitions_and_every_broker() -> None:
    states = tuple(_state(t, p) for t in ("a", "b") for p in range(10))
    request = UpdateMetadataRequest(0, 1, 7, states, BROKERS)
    parts = split_request(request, SHARDS)
    assert sorted(parts) == list(range(SHARDS))
    for i, part in parts.items():
        assert (part.controller_id, part.controller_epoch, part.broker_epoch, part.live_brokers) == (0, 1, 7, BROKERS)
        assert part.partition_states == tuple(s for s in states if shard_of(s.topic_partition, SHARDS) == i)
    assert sorted((s for p in parts.values() for s in p.partition_states), key=lambda s: s.topic_partition) == \
        sorted(states, key=lambda s: s.topic_partition)
    # a brokers-only request reaches every shard as a brokers-only request
    assert all(p.partition_states == () and p.live_brokers == BROKERS
               for p in split_request(UpdateMetadataRequest(0, 1, 7, (), BROKERS), SHARDS).values())


def test_describe_metadata_cache_merges_every_shards_part() -> None:
    states = tuple(_state(t, p) for t in ("b", "a") for p in range(6))
    caches = {i: MetadataCache(0) for i in range(SHARDS)}
    for i, part in split_request(UpdateMetadataRequest(0, 1, 7, states, BROKERS), SHARDS).items():
        caches[i].update_metadata(part)

    def ask(request: DescribeMetadataCacheRequest) -> DescribeMetadataCacheResponse:
        answers = {}
        for i in split_request(request, SHARDS):
            snap = caches[i].snapshot
            topics = request.topics or tuple(sorted(snap.partition_states))
            answers[i] = DescribeMetadataCacheResponse(0, (0, 1), tuple(
                st for t in topics for _, st in sorted(snap.partition_states.get(t, {}).items())))
        return merge_responses(request, answers)

    everything = ask(DescribeMetadataCacheRequest())
    assert [(s.topic_partition.topic, s.topic_partition.partition) for s in everything.partition_states] == \
        [(t, p) for t in ("a", "b") for p in range(6)]
    assert (everything.controller_id, everything.alive_brokers) == (0, (0, 1))
    asked = ask(DescribeMetadataCacheRequest(("b", "a")))
    assert [(s.topic_partition.topic, s.topic_partition.partition) for s in asked.partition_states] == \
        [(t, p) for t in ("b", "a") for p in range(6)]


def test_update_metadata_copies_only_the_topics_it_touches() -> None:
    """MetadataCache.updateMetadata: a new snapshot; the old one is left whole for its readers; a leader of -2
    removes a partition (and a topic left empty); topics the request does not name are shared, not copied."""
    cache = MetadataCache(0)
    cache.update_metadata(UpdateMetadataRequest(0, 1, 7, tuple(_state(t, p) for t in "abc" for p in range(3)),
                                                BROKERS))
    before = cache.snapshot
    deleted = cache.update_metadata(UpdateMetadataRequest(0, 1, 7, (
        _state("a", 1, leader=1), _state("b", 0, leader=-2), _state("b", 1, leader=-2), _state("b", 2, leader=-2),
        _state("c", 0, leader=-2), _state("d", 0)), BROKERS))
    after = cache.snapshot
    assert deleted == [TopicPartition("b", p) for p in range(3)] + [TopicPartition("c", 0)]
    assert {t: {p: s.leader for p, s in parts.items()} for t, parts in after.partition_states.items()} == \
        {"a": {0: 0, 1: 1, 2: 0}, "c": {1: 0, 2: 0}, "d": {0: 0}}
    assert {t: {p: s.leader for p, s in parts.items()} for t, parts in before.partition_states.items()} == \
        {t: {0: 0, 1: 0, 2: 0} for t in "abc"}
    cache.update_metadata(UpdateMetadataRequest(0, 1, 7, (_state("d", 1),), BROKERS))
    assert cache.snapshot.partition_states["a"] is after.partition_states["a"]
    assert cache.snapshot.partition_states["d"] is not after.partition_states["d"]


def test_offsets_for_leader_epoch_split_by_shard_and_merged_in_request_order() -> None:
    """A follower's OffsetsForLeaderEpoch reaches the shards hosting its partitions, each with only its own (topic
    order kept); the answers merge back in the request's topic and partition order."""
    topics = tuple(OffsetForLeaderTopic(t, tuple(OffsetForLeaderPartition(p, 3, 2) for p in range(8)))
                   for t in ("b", "a"))
    request = OffsetsForLeaderEpochRequest(topics, replica_id=1)
    parts = split_request(request, SHARDS)
    seen = []
    for i, part in parts.items():
        assert part.replica_id == 1
        for t in part.topics:
            assert all(shard_of(TopicPartition(t.topic, q.partition), SHARDS) == i for q in t.partitions)
            seen += [(t.topic, q) for q in t.partitions]
    assert sorted(seen, key=lambda x: (x[0], x[1].partition)) == sorted(
        ((t.topic, q) for t in topics for q in t.partitions), key=lambda x: (x[0], x[1].partition))
    answers = {i: OffsetsForLeaderEpochResponse(tuple(
        OffsetForLeaderTopicResult(t.topic, tuple(OffsetForLeaderPartitionResult(Errors.NONE, q.partition, 2, 10 * i)
                                                  for q in t.partitions)) for t in part.topics))
        for i, part in parts.items()}
    merged = merge_responses(request, answers)
    assert [(t.topic, [r.partition for r in t.partitions]) for t in merged.topics] == [
        ("b", list(range(8))), ("a", list(range(8)))]
    assert all(r.end_offset == 10 * shard_of(TopicPartition(t.topic, r.partition), SHARDS)
               for t in merged.topics for r in t.partitions)


def test_a_full_fetch_opens_a_session_only_within_one_shard() -> None:
    """A session lives in one shard: a full request (epoch 0) whose partitions span shards is served sessionless
    (each part epoch -1); within one shard it keeps epoch 0; an incremental request goes to the shard its session
    id names, and one naming another shard's partition is refused (answered FETCH_SESSION_ID_NOT_FOUND, as a whole)."""
    tps = [TopicPartition("t", p) for p in range(20)]
    by_shard: dict[int, list[TopicPartition]] = {}
    for tp in tps:
        by_shard.setdefault(shard_of(tp, SHARDS), []).append(tp)
    spanning = FetchRequest(-1, tuple(FetchPartition(tp, 0) for tp in tps), session_epoch=0)
    parts = split_request(spanning, SHARDS)
    assert sorted(parts) == sorted(by_shard) and all(p.session_epoch == -1 for p in parts.values())
    assert {fp.tp for p in parts.values() for fp in p.partitions} == set(tps)
    one = FetchRequest(-1, tuple(FetchPartition(tp, 0) for tp in by_shard[2]), session_epoch=0)
    assert split_request(one, SHARDS) == {2: one}
    incremental = FetchRequest(-1, (FetchPartition(by_shard[2][0], 5),), session_id=3 * 1024 + 2, session_epoch=1)
    assert split_request(incremental, SHARDS) == {2: incremental}
    with pytest.raises(SplitRefused) as refused:
        split_request(attrs.evolve(incremental, partitions=(FetchPartition(by_shard[1][0], 0),)), SHARDS)
    assert refused.value.response == FetchResponse((), Errors.FETCH_SESSION_ID_NOT_FOUND)


def test_produce_and_list_offsets_answers_merge_in_request_order() -> None:
    a, b = TopicPartition("t", 0), TopicPartition("t", 1)
    request = ListOffsetsRequest(-1, 0, (ListOffsetsPartition(b, -1), ListOffsetsPartition(a, -2)))
    answers = {i: ListOffsetsResponse(tuple(ListOffsetsPartitionResponse(q.tp, Errors.NONE, -1, q.tp.partition)
                                            for q in part.partitions))
               for i, part in split_request(request, SHARDS).items()}
    assert merge_responses(request, answers) == ListOffsetsResponse((
        ListOffsetsPartitionResponse(b, Errors.NONE, -1, 1), ListOffsetsPartitionResponse(a, Errors.NONE, -1, 0)))
    produce = ProduceRequest(-1, 1000, (ProducePartition(b, b"x"), ProducePartition(a, b"y")))
    answers = {i: ProduceResponse(tuple(ProducePartitionResponse(pp.tp, Errors.NONE, 7) for pp in part.partitions))
               for i, part in split_request(produce, SHARDS).items()}
    assert [r.tp for r in merge_responses(produce, answers).partitions] == [b, a]


def test_the_table_holds_every_request_type_the_replica_manager_serves_once() -> None:
    """One unit per request type, and each answer a follower fetcher gets back names the unit that applies it."""
    BROKER_REQUESTS = {spec.request_type: spec.service.sharded for spec in registry.units()  # noqa: N806
                       if isinstance(spec.service, registry.ReplicaManagerService) and spec.service.sharded}
    FOLLOWER_RESPONSES = {u.response_type: registry.follower_unit_of(u.response_type.__new__(u.response_type))  # noqa: N806
                          for u in BROKER_REQUESTS.values() if u.response_type is not None}
    assert set(BROKER_REQUESTS) == {LeaderAndIsrRequest, UpdateMetadataRequest, StopReplicaRequest, FetchRequest,
                                    ProduceRequest, ListOffsetsRequest, OffsetsForLeaderEpochRequest,
                                    DescribeMetadataCacheRequest, DescribeLogDirsRequest, DeleteRecordsRequest,
                                    AlterReplicaLogDirsRequest, WriteTxnMarkersRequest,
                                    DescribeProducersRequest}  # KIP-664's, beyond 2.6 (issue #40)
    assert all(unit.request_type is t for t, unit in BROKER_REQUESTS.items())
    assert {t: u.request_type for t, u in FOLLOWER_RESPONSES.items()} == {
        FetchResponse: FetchRequest, ListOffsetsResponse: ListOffsetsRequest,
        OffsetsForLeaderEpochResponse: OffsetsForLeaderEpochRequest}
    # only the controller's partition changes move a shard's partition gauges
    assert {t for t, u in BROKER_REQUESTS.items() if u.changes_partitions} == {LeaderAndIsrRequest, StopReplicaRequest}
    with pytest.raises(TypeError, match="cannot handle MetadataCache"):
        unit_of(MetadataCache(0))


def test_a_failed_part_answers_every_item_with_the_error() -> None:
    """A shard whose handler raised answers its part as Kafka's request handler does: each partition (or the
    controller request as a whole) with the error."""
    a, b = TopicPartition("t", 0), TopicPartition("u", 3)
    err = Errors.UNKNOWN_SERVER_ERROR
    assert unit_of(FetchRequest(-1, (FetchPartition(a, 0), FetchPartition(b, 9)))).error(
        FetchRequest(-1, (FetchPartition(a, 0), FetchPartition(b, 9))), err) == \
        FetchResponse((FetchPartitionData(a, err), FetchPartitionData(b, err)))
    produce = ProduceRequest(-1, 1000, (ProducePartition(b, b"x"),))
    assert unit_of(produce).error(produce, err) == ProduceResponse((ProducePartitionResponse(b, err),))
    offsets = ListOffsetsRequest(-1, 0, (ListOffsetsPartition(a, -1),))
    assert unit_of(offsets).error(offsets, err) == ListOffsetsResponse((ListOffsetsPartitionResponse(a, err),))
    epochs = OffsetsForLeaderEpochRequest((OffsetForLeaderTopic("u", (OffsetForLeaderPartition(3, 5, 5),)),))
    assert unit_of(epochs).error(epochs, err) == OffsetsForLeaderEpochResponse(
        (OffsetForLeaderTopicResult("u", (OffsetForLeaderPartitionResult(err, 3, -1, -1),)),))
    um = UpdateMetadataRequest(0, 1, 7, (), BROKERS)
    assert unit_of(um).error(um, err) == UpdateMetadataResponse(err)
    assert registry.spec_for_type(LeaderAndIsrRequest).service.sharded.error(None, err) == LeaderAndIsrResponse(err)
    assert registry.spec_for_type(StopReplicaRequest).service.sharded.error(None, err) == StopReplicaResponse(err)
    cache = DescribeMetadataCacheRequest(())
    assert unit_of(cache).error(cache, err) == DescribeMetadataCacheResponse(-1, (), ())
