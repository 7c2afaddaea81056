"""ReplicaManagerActor answers Metadata itself from a MetadataCache of its own, which every UpdateMetadata passing
through it updates (the shards each hold only their partitions' states): the whole topic across shards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import test_replica_manager_actor

from core.broker.shards import shard_of
from messages.common import Errors, TopicPartition
from messages.metadata import MetadataBroker, MetadataPartition, MetadataRequest, MetadataResponse, MetadataTopic
from messages.net import NetReply, NetRequest
from tests.support.actors import ActorTestbed
from tests.support.broker import um_request, um_state

FRONT = "replica-manager"
TP0, TP1 = TopicPartition("t", 7), TopicPartition("t", 3)
assert (shard_of(TP0, 2), shard_of(TP1, 2)) == (0, 1)


@pytest.fixture
def bed(tmp_path: Path) -> Iterator[ActorTestbed]:
    """test_replica_manager_actor's: the front with two real shards, brokers 0-2 alive."""
    yield from test_replica_manager_actor.bed.__wrapped__(tmp_path)


def _ask(bed: ActorTestbed, rid: int, request: MetadataRequest) -> list[object]:
    caused = bed.deliver(FRONT, NetRequest(3, rid, request, True, 9, "client", "127.0.0.1"), "edge:net")
    return [d.body for d in caused if d.sender == FRONT]


def test_metadata_is_answered_from_every_update_metadata_across_shards(bed: ActorTestbed) -> None:
    states = [um_state(TP0, 1, [1, 0], [1, 0], leader_epoch=4), um_state(TP1, 0, [0], [0, 2], leader_epoch=2)]
    bed.deliver(FRONT, NetRequest(7, 1, um_request(states, live=(0, 1), controller_epoch=2, controller_id=1), True),
                "edge:net")
    request = MetadataRequest(("t", "u"), cluster_id="cid")
    assert _ask(bed, 2, request) == [NetReply(3, 2, MetadataResponse(
        (MetadataBroker(0, "host0", 9092), MetadataBroker(1, "host1", 9093)), "cid", 1,
        (MetadataTopic("t", Errors.NONE, False, (
            MetadataPartition(3, Errors.NONE, 0, 2, (0, 2), (0,)),
            MetadataPartition(7, Errors.NONE, 1, 4, (1, 0), (1, 0)))),
         MetadataTopic("u", Errors.UNKNOWN_TOPIC_OR_PARTITION))))]
    # an UpdateMetadata of an older controller epoch changes nothing
    bed.deliver(FRONT, NetRequest(7, 3, um_request([], live=(0,), controller_epoch=1, controller_id=0), True),
                "edge:net")
    (reply,) = _ask(bed, 4, request)
    assert reply.body.controller_id == 1 and len(reply.body.brokers) == 2
    # not answered when no answer is expected; nothing reaches the shards either way
    caused = bed.deliver(FRONT, NetRequest(3, 5, request, False), "edge:net")
    assert [d for d in caused if d.sender == FRONT] == []
