"""Port of Kafka's ControllerContextTest (3.0.0 + the 3.6 KAFKA-13572 test): one test per Kafka test, the Kafka name
in each docstring; plus checks of the broker index and the offline-partition bookkeeping."""

from __future__ import annotations

import pytest

from core.controller.context import ControllerContext
from core.controller.states import NewPartition, NonExistentPartition, OfflinePartition, OnlinePartition
from messages.common import (
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    PartitionAndReplica,
    ReplicaAssignment,
    TopicPartition,
)
from tests.support.controller import broker

A0, A1, B0 = TopicPartition("A", 0), TopicPartition("A", 1), TopicPartition("B", 0)


@pytest.fixture
def ctx() -> ControllerContext:
    """Brokers 1,2,3; A-0 [1,2,3], A-1 [2,3,1], B-0 [3,1,2] (round-robin)."""
    c = ControllerContext()
    c.set_live_brokers({broker(b): 1 for b in (1, 2, 3)})
    for tp, replicas in ((A0, (1, 2, 3)), (A1, (2, 3, 1)), (B0, (3, 1, 2))):
        c.all_topics.add(tp.topic)
        c.update_partition_full_replica_assignment(tp, ReplicaAssignment(replicas))
    return c


def _leader(ctx: ControllerContext, tp: TopicPartition, leader: int) -> None:
    ctx.put_partition_leadership_info(tp, LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, 0, (1, 2, 3), 0), 1))


def test_update_partition_full_replica_assignment_updates_replica_assignment(ctx: ControllerContext) -> None:
    """testUpdatePartitionFullReplicaAssignmentUpdatesReplicaAssignment"""
    tp = TopicPartition("newTopic", 0)
    ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment((4,)))
    assert ctx.partition_replica_assignment(tp) == (4,)
    assert ctx.partition_full_replica_assignment(tp) == ReplicaAssignment((4,))
    full = ReplicaAssignment((3,), (1,), (2,))
    ctx.update_partition_full_replica_assignment(tp, full)
    assert ctx.partition_full_replica_assignment(tp) == full
    assert ctx.partition_replica_assignment(tp) == (3,)


def test_partition_replica_assignment_returns_empty_seq_if_topic_or_partition_does_not_exist(
        ctx: ControllerContext) -> None:
    """testPartitionReplicaAssignmentReturnsEmptySeqIfTopicOrPartitionDoesNotExist"""
    assert ctx.partition_replica_assignment(TopicPartition("D", 0)) == ()
    assert ctx.partition_replica_assignment(TopicPartition("A", 100)) == ()


def test_partition_full_replica_assignment_returns_empty_assignment_if_topic_or_partition_does_not_exist(
        ctx: ControllerContext) -> None:
    """testPartitionFullReplicaAssignmentReturnsEmptyAssignmentIfTopicOrPartitionDoesNotExist"""
    empty = ReplicaAssignment(())
    assert ctx.partition_full_replica_assignment(TopicPartition("D", 0)) == empty
    assert ctx.partition_full_replica_assignment(TopicPartition("A", 100)) == empty


def test_partition_replica_assignment_for_topic_returns_empty_map_if_topic_does_not_exist(
        ctx: ControllerContext) -> None:
    """testPartitionReplicaAssignmentForTopicReturnsEmptyMapIfTopicDoesNotExist"""
    assert ctx.partition_replica_assignment_for_topic("D") == {}


def test_partition_replica_assignment_for_topic_returns_expected_replica_assignments(ctx: ControllerContext) -> None:
    """testPartitionReplicaAssignmentForTopicReturnsExpectedReplicaAssignments"""
    assert ctx.partition_replica_assignment_for_topic("A") == {A0: (1, 2, 3), A1: (2, 3, 1)}


def test_partition_replica_assignment() -> None:
    """testPartitionReplicaAssignment"""
    ra = ReplicaAssignment
    r = ra((1, 2, 3, 4, 5, 6), (), ())
    assert (r.target_replicas, r.is_being_reassigned) == ((1, 2, 3, 4, 5, 6), False)
    r = ra((1, 2, 3, 4, 5, 6), (4, 5, 6), ())
    assert (r.target_replicas, r.is_being_reassigned) == ((1, 2, 3, 4, 5, 6), True)
    r = ra((1, 2, 3, 4, 5, 6), (), (4, 5, 6))
    assert (r.target_replicas, r.is_being_reassigned) == ((1, 2, 3), True)
    r = ra((1, 2, 3, 4, 5, 6), (1, 2, 3), (4, 5, 6))
    assert (r.target_replicas, r.is_being_reassigned) == ((1, 2, 3), True)
    assert ra((1, 2, 3)).reassign_to((4, 5, 6)) == ra((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))
    assert ra((1, 2, 3)).reassign_to((2, 3, 4)) == ra((2, 3, 4, 1), (4,), (1,))
    assert ra((1, 2, 3)).reassign_to((1, 2, 3)) == ra((1, 2, 3))


def test_reassign_to_idempotence() -> None:
    """testReassignToIdempotence"""
    for a in (ReplicaAssignment((1, 2, 3)),
              ReplicaAssignment((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3)),
              ReplicaAssignment((2, 3, 4, 1), (4,), (1,))):
        assert a.reassign_to(a.target_replicas) == a


def test_reassign_to() -> None:
    """testReassignTo"""
    assignment = ReplicaAssignment((1, 2, 3))
    first = assignment.reassign_to((4, 5, 6))
    assert first == ReplicaAssignment((4, 5, 6, 1, 2, 3), (4, 5, 6), (1, 2, 3))
    second = first.reassign_to((7, 8, 9))
    assert second == ReplicaAssignment((7, 8, 9, 1, 2, 3), (7, 8, 9), (1, 2, 3))
    assert second.reassign_to((1, 2, 3)) == assignment


def test_preferred_replica_imbalance_metric(ctx: ControllerContext) -> None:
    """testPreferredReplicaImbalanceMetric"""
    for tp in (A0, A1, B0):
        ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment((1, 2, 3)))
    assert ctx.preferred_replica_imbalance_count == 0
    _leader(ctx, A0, 1)
    assert ctx.preferred_replica_imbalance_count == 0
    _leader(ctx, A1, 2)
    assert ctx.preferred_replica_imbalance_count == 1
    _leader(ctx, B0, 3)
    assert ctx.preferred_replica_imbalance_count == 2
    ctx.update_partition_full_replica_assignment(A0, ReplicaAssignment((2, 3, 1)))
    ctx.update_partition_full_replica_assignment(A1, ReplicaAssignment((2, 3, 1)))
    assert ctx.preferred_replica_imbalance_count == 2
    ctx.queue_topic_deletion({"B"})
    assert ctx.preferred_replica_imbalance_count == 1
    _leader(ctx, B0, 1)
    assert ctx.preferred_replica_imbalance_count == 1
    for topic in ("A", "B"):
        ctx.remove_topic(topic)
    assert ctx.preferred_replica_imbalance_count == 0


def test_preferred_replica_imbalance_metric_on_concurrent_topic_deletion(ctx: ControllerContext) -> None:
    """testPreferredReplicaImbalanceMetricOnConcurrentTopicDeletion (3.6, KAFKA-13572)"""
    _leader(ctx, A0, 1)
    _leader(ctx, A1, 2)
    _leader(ctx, B0, 3)
    _leader(ctx, A0, 2)  # A imbalanced once
    assert ctx.preferred_replica_imbalance_count == 1
    ctx.queue_topic_deletion({"A"})
    assert ctx.preferred_replica_imbalance_count == 0
    ctx.queue_topic_deletion({"A", "B"})
    assert ctx.preferred_replica_imbalance_count == 0


# -- kactor-specific ---------------------------------------------------------------------------------------------------
def test_reassigning_preferred_adding_replica_counts_balanced_until_in_isr(ctx: ControllerContext) -> None:
    tp = TopicPartition("C", 0)
    ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment((1, 2)).reassign_to((4, 2)))
    ctx.put_partition_leadership_info(tp, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2), 0), 1))
    assert ctx.preferred_replica_imbalance_count == 0
    ctx.put_partition_leadership_info(tp, LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 0, (1, 2, 4), 1), 1))
    assert ctx.preferred_replica_imbalance_count == 1


def test_broker_index_and_replica_lookups(ctx: ControllerContext) -> None:
    assert ctx.partitions_on_broker(1) == {A0, A1, B0}
    ctx.update_partition_full_replica_assignment(A0, ReplicaAssignment((2, 3)))
    assert ctx.partitions_on_broker(1) == {A1, B0}
    assert ctx.replicas_on_brokers({1}) == {PartitionAndReplica(A1, 1), PartitionAndReplica(B0, 1)}
    _leader(ctx, A1, 1)
    _leader(ctx, B0, 3)
    assert ctx.partition_leaders_on_broker(1) == {A1}
    ctx.remove_topic("A")
    assert ctx.partitions_on_broker(1) == {B0}
    assert ctx.partition_leaders_on_broker(1) == set()


def test_is_replica_online(ctx: ControllerContext) -> None:
    assert ctx.is_replica_online(1, A0)
    ctx.shutting_down_broker_ids.add(1)
    assert not ctx.is_replica_online(1, A0)
    assert ctx.is_replica_online(1, A0, include_shutting_down_brokers=True)
    assert ctx.live_broker_ids() == {2, 3} and ctx.live_or_shutting_down_broker_ids() == {1, 2, 3}
    ctx.replicas_on_offline_dirs[2] = {A0}
    assert not ctx.is_replica_online(2, A0) and ctx.is_replica_online(2, A1)
    assert not ctx.is_replica_online(9, A0)


def test_offline_partition_count_bookkeeping(ctx: ControllerContext) -> None:
    ctx.put_partition_state_if_not_exists(A0, OfflinePartition)
    assert ctx.offline_partition_count == 1
    ctx.put_partition_state(A0, OfflinePartition)
    assert ctx.offline_partition_count == 1
    ctx.put_partition_state(A0, OnlinePartition)
    assert ctx.offline_partition_count == 0
    ctx.put_partition_state(A1, NewPartition)
    ctx.put_partition_state(A1, OfflinePartition)
    ctx.begin_topic_deletion({"A"})
    ctx.put_partition_state(A1, NonExistentPartition)
    assert ctx.offline_partition_count == 1  # deletion started: not counted any more


def test_reset_context(ctx: ControllerContext) -> None:
    _leader(ctx, A0, 2)
    ctx.epoch, ctx.epoch_zk_version = 3, 4
    ctx.queue_topic_deletion({"B"})
    ctx.reset_context()
    assert (ctx.epoch, ctx.epoch_zk_version, ctx.preferred_replica_imbalance_count) == (0, 0, 0)
    assert ctx.all_partitions() == set() and ctx.live_or_shutting_down_broker_ids() == set()
    assert ctx.partitions_on_broker(1) == set() and ctx.topics_to_be_deleted == set()
