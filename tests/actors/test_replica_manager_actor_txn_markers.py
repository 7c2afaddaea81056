"""A transaction's offsets and its marker completing at once: the group coordinator hears that its offsets' append
was acknowledged before it hears that the marker was written (KafkaApis: the append's callback runs inside
DelayedProduce.onComplete, GroupCoordinator.scheduleHandleTxnCompletion is scheduled after the marker's). The
shards are real PartitionActors behind the real front; the coordinator is a sink that records what it hears."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from actors.replica_manager_actor import ReplicaManagerActor
from core.broker.shards import shard_of
from core.coordinator.group.group_metadata import OffsetAndMetadata
from core.coordinator.group.message_formats import offset_commit_key, offset_commit_value, records_batch
from messages.broker_lifecycle import ReplicaManagerInit
from messages.common import Errors, TopicPartition
from messages.net import NetRequest
from messages.replication import (
    FetchPartition,
    FetchRequest,
    LocalReply,
    LocalRequest,
    ProducePartition,
    ProduceRequest,
)
from messages.topic import GROUP_METADATA_TOPIC_NAME
from messages.txn_markers import TxnMarkerEntry, TxnMarkersWritten, WriteTxnMarkersRequest
from tests.support.actors import ActorTestbed, ZooKeeperModel
from tests.support.broker import lai_request, lai_state, um_request

FRONT, COORDINATOR = "replica-manager", "group-coordinator"
SHARDS = 2
OFFSETS = TopicPartition(GROUP_METADATA_TOPIC_NAME, 0)
PRODUCER_ID, EPOCH = 42, 3


@pytest.fixture
def bed(tmp_path: Path) -> Iterator[ActorTestbed]:
    bed = ActorTestbed("broker-0", sinks=("net", "timer", "metrics", "kafka-server", COORDINATOR))
    bed.rt.spawn(ZooKeeperModel, "zk")
    bed.rt.instances["zk"].zk.create_top_level_paths()
    bed.rt.spawn(ReplicaManagerActor, FRONT)
    bed.deliver(FRONT, ReplicaManagerInit(0, (str(tmp_path / "logs"),), partition_actors=SHARDS,
                                          transaction_partition_verification_enable=False), "edge:process")
    bed.deliver(FRONT, NetRequest(7, 1, um_request(), True), "edge:net")
    bed.deliver(FRONT, NetRequest(7, 2, lai_request([lai_state(OFFSETS, 0, 0, [0, 1], [0, 1], is_new=True)]), True),
                "edge:net")
    try:
        yield bed
    finally:
        bed.shutdown()


def test_the_offsets_append_is_answered_before_the_marker_that_follows_it_is_reported(bed: ActorTestbed) -> None:
    """Both wait for follower 1 (acks=-1, ISR [0, 1]); one fetch past both completes them together. Heard the
    other way round, the coordinator completed the transaction with its offsets' append still unanswered and
    dropped them: the transaction committed its output without its offsets (`kactor sim --txn-check` seed 6854)."""
    assert shard_of(OFFSETS, SHARDS) in (0, 1)
    om = OffsetAndMetadata(5, -1, "", 0, None)
    batch = records_batch([(offset_commit_key("g", TopicPartition("in", 0)), offset_commit_value(om))], 0,
                          PRODUCER_ID, EPOCH)
    append = ProduceRequest(-1, 30000, (ProducePartition(OFFSETS, batch),), "tx", coordinator=True)
    assert not [d for d in bed.deliver(FRONT, LocalRequest(1, append, COORDINATOR), COORDINATOR)
                if d.receiver == COORDINATOR]  # waits for the follower
    marker = WriteTxnMarkersRequest((TxnMarkerEntry(PRODUCER_ID, EPOCH, True, 0, (OFFSETS,)),))
    assert not [d for d in bed.deliver(FRONT, NetRequest(8, 1, marker, True), "edge:net")
                if d.receiver in (COORDINATOR, "net")]
    caused = bed.deliver(FRONT, NetRequest(9, 1, FetchRequest(1, (FetchPartition(OFFSETS, 2),)), True), "edge:net")
    heard = [d.body for d in caused if d.receiver == COORDINATOR]
    assert [type(b) for b in heard] == [LocalReply, TxnMarkersWritten], heard
    assert heard[0].body.partitions[0].error is Errors.NONE and heard[0].body.partitions[0].base_offset == 0
    assert heard[1] == TxnMarkersWritten(PRODUCER_ID, True, (0,))
