"""Issue #43: a produce or fetch whose partitions all live in one shard goes to that shard as the request itself,
equal to what the general split (attrs.evolve of the request with its group) builds, with no copy per request."""

from __future__ import annotations

import attrs

from core.api import fetch, produce
from core.broker.shards import shard_of
from messages.common import TopicPartition
from messages.replication import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    FetchPartition,
    FetchRequest,
    ProducePartition,
    ProduceRequest,
)

SHARDS = 4


def _same_shard_pair() -> tuple[TopicPartition, TopicPartition]:
    first = TopicPartition("t", 0)
    other = next(TopicPartition("t", i) for i in range(1, 100)
                 if shard_of(TopicPartition("t", i), SHARDS) == shard_of(first, SHARDS))
    return first, other


def _other_shard(tp: TopicPartition) -> TopicPartition:
    return next(TopicPartition("u", i) for i in range(100)
                if shard_of(TopicPartition("u", i), SHARDS) != shard_of(tp, SHARDS))


def test_a_one_shard_produce_is_the_request_itself_equal_to_the_general_split() -> None:
    a, b = _same_shard_pair()
    request = ProduceRequest(-1, 30000, (ProducePartition(a, b"x"), ProducePartition(b, b"y")), "txn")
    parts = produce.split(request, SHARDS)
    shard = shard_of(a, SHARDS)
    assert parts == {shard: attrs.evolve(request, partitions=request.partitions)}
    assert parts[shard] is request
    c = _other_shard(a)
    two = attrs.evolve(request, partitions=(*request.partitions, ProducePartition(c, b"z")))
    assert produce.split(two, SHARDS) == {
        shard: attrs.evolve(request, partitions=request.partitions),
        shard_of(c, SHARDS): attrs.evolve(request, partitions=(ProducePartition(c, b"z"),))}


def test_a_one_shard_fetch_is_the_request_itself_equal_to_the_general_split() -> None:
    a, b = _same_shard_pair()
    request = FetchRequest(1, (FetchPartition(a, 5), FetchPartition(b, 6)), 500, 1, session_epoch=INITIAL_EPOCH,
                           fetcher_id=2)
    parts = fetch.split(request, SHARDS)
    shard = shard_of(a, SHARDS)
    assert parts == {shard: attrs.evolve(request, partitions=request.partitions, session_epoch=INITIAL_EPOCH)}
    assert parts[shard] is request
    c = _other_shard(a)
    two = attrs.evolve(request, partitions=(*request.partitions, FetchPartition(c, 7)))
    # spanning shards: no session (a session lives in one shard)
    assert fetch.split(two, SHARDS) == {
        shard: attrs.evolve(request, partitions=request.partitions, session_epoch=FINAL_EPOCH),
        shard_of(c, SHARDS): attrs.evolve(request, partitions=(FetchPartition(c, 7),), session_epoch=FINAL_EPOCH)}
