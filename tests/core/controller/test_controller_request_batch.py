"""Port of Kafka's ControllerChannelManagerTest batch-building tests (3.0.0 list) at IBP 2.6 (LeaderAndIsr v4,
UpdateMetadata v6, StopReplica v3): one test per Kafka test, the Kafka name in each docstring. Tests that Kafka runs
for every IBP check the IBP 2.6 shape only; response callbacks are checked through
`stop_replica_partition_errors_for_deleting_topics` (the controller owns the events)."""

from __future__ import annotations

import pytest

from core.controller.context import ControllerContext
from core.controller.errors import IllegalStateError
from core.controller.request_batch import (
    ControllerBrokerRequestBatch,
    stop_replica_partition_errors_for_deleting_topics,
)
from messages.common import (
    Errors,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicPartition,
)
from messages.requests import (
    LeaderAndIsrRequest,
    PartitionError,
    StopReplicaRequest,
    StopReplicaResponse,
    UpdateMetadataRequest,
)
from tests.support.controller import broker, sent
from tests.support.fake_zookeeper import run

CONTROLLER_ID = 1
CONTROLLER_EPOCH = 1


def _context() -> ControllerContext:
    """Brokers 1,2,3 (epoch 1); topics foo, bar with 2 partitions × RF 3 round-robin; leader records for all."""
    ctx = ControllerContext()
    ctx.epoch = CONTROLLER_EPOCH
    ctx.set_live_brokers({broker(b): 1 for b in (1, 2, 3)})
    i = 0
    for topic in ("foo", "bar"):
        ctx.all_topics.add(topic)
        for p in range(2):
            replicas = tuple(((i + k) % 3) + 1 for k in range(3))
            i += 1
            tp = TopicPartition(topic, p)
            ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment(replicas))
            ctx.put_partition_leadership_info(tp, LeaderIsrAndControllerEpoch(
                LeaderAndIsr(replicas[0], 1, replicas, 1), CONTROLLER_EPOCH))
    return ctx


@pytest.fixture
def ctx() -> ControllerContext:
    return _context()


@pytest.fixture
def batch(ctx: ControllerContext) -> ControllerBrokerRequestBatch:
    return ControllerBrokerRequestBatch(CONTROLLER_ID, ctx)


def _send(batch: ControllerBrokerRequestBatch) -> list:
    _, effects = run(batch.send_requests_to_brokers(CONTROLLER_EPOCH), lambda b: ())
    assert batch.is_empty()
    return effects


def _add_lai(batch: ControllerBrokerRequestBatch, ctx: ControllerContext, brokers, tp: TopicPartition,
             is_new: bool = False) -> LeaderIsrAndControllerEpoch:
    info = ctx.partition_leadership_info(tp)
    batch.add_leader_and_isr_request_for_brokers(brokers, tp, info, ctx.partition_full_replica_assignment(tp), is_new)
    return info


def test_leader_and_isr_request_sent(ctx: ControllerContext, batch: ControllerBrokerRequestBatch) -> None:
    """testLeaderAndIsrRequestSent"""
    partitions = [TopicPartition("foo", 0), TopicPartition("foo", 1), TopicPartition("bar", 1)]
    batch.new_batch()
    infos = {tp: _add_lai(batch, ctx, [2], tp) for tp in partitions}
    effects = _send(batch)
    [lai] = sent(effects, LeaderAndIsrRequest)
    assert [e.broker_id for e in sent(effects, UpdateMetadataRequest)] == [1, 2, 3]
    assert lai.broker_id == 2
    req = lai.request
    assert (req.controller_id, req.controller_epoch, req.broker_epoch) == (CONTROLLER_ID, CONTROLLER_EPOCH, 1)
    assert {ps.topic_partition: (ps.leader, ps.isr) for ps in req.partition_states} == {
        tp: (i.leader_and_isr.leader, i.leader_and_isr.isr) for tp, i in infos.items()}
    assert {b.id for b in req.live_leaders} == {i.leader_and_isr.leader for i in infos.values()}


def test_leader_and_isr_request_is_new(ctx: ControllerContext, batch: ControllerBrokerRequestBatch) -> None:
    """testLeaderAndIsrRequestIsNew"""
    tp = TopicPartition("foo", 0)
    batch.new_batch()
    _add_lai(batch, ctx, [2], tp, is_new=True)
    _add_lai(batch, ctx, [2], tp, is_new=False)
    [lai] = sent(_send(batch), LeaderAndIsrRequest)
    [ps] = lai.request.partition_states
    assert ps.is_new


def test_leader_and_isr_request_sent_to_live_or_shutting_down_brokers(ctx: ControllerContext,
                                                                     batch: ControllerBrokerRequestBatch) -> None:
    """testLeaderAndIsrRequestSentToLiveOrShuttingDownBrokers"""
    ctx.shutting_down_broker_ids.add(2)
    ctx.remove_live_brokers({3})
    batch.new_batch()
    _add_lai(batch, ctx, [1, 2, 3], TopicPartition("foo", 0))
    effects = _send(batch)
    assert [e.broker_id for e in sent(effects, LeaderAndIsrRequest)] == [1, 2]
    assert [e.broker_id for e in sent(effects, UpdateMetadataRequest)] == [1, 2]


def test_leader_and_isr_inter_broker_protocol_version(ctx: ControllerContext,
                                                      batch: ControllerBrokerRequestBatch) -> None:
    """testLeaderAndIsrInterBrokerProtocolVersion — IBP 2.6 (v4): IsNew, BrokerEpoch, adding/removing replicas,
    no topic ids."""
    tp = TopicPartition("foo", 0)
    ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment((1, 2, 3)).reassign_to((2, 3, 4)))
    batch.new_batch()
    _add_lai(batch, ctx, [2], tp, is_new=True)
    [lai] = sent(_send(batch), LeaderAndIsrRequest)
    [ps] = lai.request.partition_states
    assert (ps.replicas, ps.adding_replicas, ps.removing_replicas, ps.is_new) == ((2, 3, 4, 1), (4,), (1,), True)
    assert lai.request.broker_epoch == 1 and not hasattr(lai.request, "topic_ids")


def test_update_metadata_request_sent(ctx: ControllerContext, batch: ControllerBrokerRequestBatch) -> None:
    """testUpdateMetadataRequestSent"""
    partitions = [TopicPartition("foo", 0), TopicPartition("foo", 1), TopicPartition("bar", 1)]
    batch.new_batch()
    batch.add_update_metadata_request_for_brokers([2], partitions)
    effects = _send(batch)
    assert sent(effects, LeaderAndIsrRequest) == [] and sent(effects, StopReplicaRequest) == []
    [um] = sent(effects, UpdateMetadataRequest)
    assert um.broker_id == 2
    req = um.request
    assert (req.controller_id, req.controller_epoch, req.broker_epoch) == (CONTROLLER_ID, CONTROLLER_EPOCH, 1)
    assert len(req.partition_states) == 3
    for ps in req.partition_states:
        info = ctx.partition_leadership_info(ps.topic_partition).leader_and_isr
        assert (ps.leader, ps.isr, ps.replicas, ps.offline_replicas) == \
            (info.leader, info.isr, ctx.partition_replica_assignment(ps.topic_partition), ())
    assert [b.id for b in req.live_brokers] == [1, 2, 3]


def test_update_metadata_does_not_include_partitions_without_leader_and_isr(
        batch: ControllerBrokerRequestBatch) -> None:
    """testUpdateMetadataDoesNotIncludePartitionsWithoutLeaderAndIsr"""
    partitions = [TopicPartition("foo", 5), TopicPartition("bar", 7), TopicPartition("baz", 0)]
    batch.new_batch()
    batch.add_update_metadata_request_for_brokers([2], partitions)
    [um] = sent(_send(batch), UpdateMetadataRequest)
    assert um.request.partition_states == () and len(um.request.live_brokers) == 3


def test_update_metadata_request_during_topic_deletion(ctx: ControllerContext,
                                                       batch: ControllerBrokerRequestBatch) -> None:
    """testUpdateMetadataRequestDuringTopicDeletion"""
    ctx.queue_topic_deletion({"foo"})
    partitions = sorted(ctx.all_partitions())
    batch.new_batch()
    batch.add_update_metadata_request_for_brokers([2], partitions)
    [um] = sent(_send(batch), UpdateMetadataRequest)
    assert len(um.request.partition_states) == 4
    for ps in um.request.partition_states:
        info = ctx.partition_leadership_info(ps.topic_partition).leader_and_isr
        assert ps.isr == info.isr
        if ps.topic_partition.topic == "foo":
            assert (ps.leader, ps.leader_epoch, ps.zk_version) == (-2, 0, 0)
        else:
            assert (ps.leader, ps.leader_epoch, ps.zk_version) == (info.leader, info.leader_epoch, info.zk_version)


def test_update_metadata_includes_live_or_shutting_down_brokers(ctx: ControllerContext,
                                                                batch: ControllerBrokerRequestBatch) -> None:
    """testUpdateMetadataIncludesLiveOrShuttingDownBrokers"""
    ctx.shutting_down_broker_ids.add(2)
    ctx.remove_live_brokers({3})
    batch.new_batch()
    batch.add_update_metadata_request_for_brokers([1, 2, 3], ())
    ums = sent(_send(batch), UpdateMetadataRequest)
    assert [e.broker_id for e in ums] == [1, 2]
    assert all([b.id for b in e.request.live_brokers] == [1, 2] for e in ums)


def test_update_metadata_inter_broker_protocol_version(ctx: ControllerContext,
                                                       batch: ControllerBrokerRequestBatch) -> None:
    """testUpdateMetadataInterBrokerProtocolVersion — IBP 2.6 (v6): broker epoch, endpoints with listener names,
    rack, offline replicas."""
    ctx.remove_live_brokers({3})
    batch.new_batch()
    batch.add_update_metadata_request_for_brokers([1], [TopicPartition("foo", 0)])
    [um] = sent(_send(batch), UpdateMetadataRequest)
    [ps] = um.request.partition_states
    assert ps.offline_replicas == (3,)
    assert um.request.live_brokers[0].endpoints[0].listener_name == "PLAINTEXT"


def _stop_replica(ctx, batch, partitions, delete: bool, brokers=(2,)) -> list:
    batch.new_batch()
    for tp in partitions:
        batch.add_stop_replica_request_for_brokers(list(brokers), tp, delete)
    return _send(batch)


def test_stop_replica_request_sent(ctx: ControllerContext, batch: ControllerBrokerRequestBatch) -> None:
    """testStopReplicaRequestSent"""
    partitions = [TopicPartition("foo", 0), TopicPartition("foo", 1), TopicPartition("bar", 1)]
    effects = _stop_replica(ctx, batch, partitions, False)
    assert sent(effects, LeaderAndIsrRequest) == [] and sent(effects, UpdateMetadataRequest) == []
    [stop] = sent(effects, StopReplicaRequest)
    assert stop.broker_id == 2
    assert [(ps.topic_partition, ps.leader_epoch, ps.delete_partition) for ps in stop.request.partition_states] == \
        [(tp, 1, False) for tp in partitions]
    response = StopReplicaResponse(Errors.NONE, tuple(PartitionError(tp, Errors.NONE) for tp in partitions))
    assert stop_replica_partition_errors_for_deleting_topics(ctx, stop.request, response) == {}


def test_stop_replica_request_with_already_defined_deleted_partition(ctx: ControllerContext,
                                                                    batch: ControllerBrokerRequestBatch) -> None:
    """testStopReplicaRequestWithAlreadyDefinedDeletedPartition"""
    tp = TopicPartition("foo", 0)
    batch.new_batch()
    batch.add_stop_replica_request_for_brokers([2], tp, True)
    batch.add_stop_replica_request_for_brokers([2], tp, False)
    [stop] = sent(_send(batch), StopReplicaRequest)
    [ps] = stop.request.partition_states
    assert ps.delete_partition


def test_stop_replicas_requests_while_topic_queued_for_deletion(ctx: ControllerContext,
                                                               batch: ControllerBrokerRequestBatch) -> None:
    """testStopReplicaRequestsWhileTopicQueuedForDeletion"""
    ctx.queue_topic_deletion({"foo"})
    partitions = sorted(ctx.all_partitions())
    [stop] = sent(_stop_replica(ctx, batch, partitions, True), StopReplicaRequest)
    for ps in stop.request.partition_states:
        assert ps.delete_partition
        assert ps.leader_epoch == (-2 if ps.topic_partition.topic == "foo" else 1)
    response = StopReplicaResponse(Errors.NONE, tuple(PartitionError(tp, Errors.NONE) for tp in partitions))
    assert stop_replica_partition_errors_for_deleting_topics(ctx, stop.request, response) == {}


def test_stop_replica_requests_while_topic_deletion_started(ctx: ControllerContext,
                                                            batch: ControllerBrokerRequestBatch) -> None:
    """testStopReplicaRequestsWhileTopicDeletionStarted"""
    ctx.queue_topic_deletion({"foo"})
    ctx.begin_topic_deletion({"foo"})
    partitions = sorted(ctx.all_partitions())
    [stop] = sent(_stop_replica(ctx, batch, partitions, True), StopReplicaRequest)
    assert {ps.topic_partition: ps.leader_epoch for ps in stop.request.partition_states if ps.leader_epoch == -2} \
        == {tp: -2 for tp in partitions if tp.topic == "foo"}
    response = StopReplicaResponse(Errors.NONE, tuple(PartitionError(tp, Errors.NONE) for tp in partitions))
    assert stop_replica_partition_errors_for_deleting_topics(ctx, stop.request, response) == \
        {tp: Errors.NONE for tp in partitions if tp.topic == "foo"}


def test_stop_replica_request_without_delete_partition_while_topic_deletion_started(
        ctx: ControllerContext, batch: ControllerBrokerRequestBatch) -> None:
    """testStopReplicaRequestWithoutDeletePartitionWhileTopicDeletionStarted"""
    ctx.queue_topic_deletion({"foo"})
    ctx.begin_topic_deletion({"foo"})
    partitions = sorted(ctx.all_partitions())
    [stop] = sent(_stop_replica(ctx, batch, partitions, False), StopReplicaRequest)
    assert not any(ps.delete_partition for ps in stop.request.partition_states)
    response = StopReplicaResponse(Errors.NONE, tuple(PartitionError(tp, Errors.NONE) for tp in partitions))
    assert stop_replica_partition_errors_for_deleting_topics(ctx, stop.request, response) == {}


def test_mixed_delete_and_not_delete_stop_replica_requests(ctx: ControllerContext,
                                                           batch: ControllerBrokerRequestBatch) -> None:
    """testMixedDeleteAndNotDeleteStopReplicaRequests — IBP ≥ 2.6-IV0: one v3 request with both kinds."""
    batch.new_batch()
    for p in range(2):
        batch.add_stop_replica_request_for_brokers([2], TopicPartition("foo", p), True)
        batch.add_stop_replica_request_for_brokers([2], TopicPartition("bar", p), False)
    [stop] = sent(_send(batch), StopReplicaRequest)
    # grouped by topic, as StopReplicaTopicState
    assert [(ps.topic_partition.topic, ps.delete_partition) for ps in stop.request.partition_states] == \
        [("foo", True), ("foo", True), ("bar", False), ("bar", False)]


def test_stop_replica_groups_by_broker(ctx: ControllerContext, batch: ControllerBrokerRequestBatch) -> None:
    """testStopReplicaGroupsByBroker"""
    partitions = [TopicPartition("foo", 0), TopicPartition("foo", 1), TopicPartition("bar", 1)]
    stops = sent(_stop_replica(ctx, batch, partitions, False, brokers=(2, 3)), StopReplicaRequest)
    assert [s.broker_id for s in stops] == [2, 3]
    assert all([ps.topic_partition for ps in s.request.partition_states] == partitions for s in stops)


def test_stop_replica_sent_only_to_live_and_shutting_down_brokers(ctx: ControllerContext,
                                                                  batch: ControllerBrokerRequestBatch) -> None:
    """testStopReplicaSentOnlyToLiveAndShuttingDownBrokers"""
    ctx.shutting_down_broker_ids.add(2)
    ctx.remove_live_brokers({3})
    stops = sent(_stop_replica(ctx, batch, [TopicPartition("foo", 0)], False, brokers=(2, 3)), StopReplicaRequest)
    assert [s.broker_id for s in stops] == [2]


def test_stop_replica_inter_broker_protocol_version(ctx: ControllerContext,
                                                    batch: ControllerBrokerRequestBatch) -> None:
    """testStopReplicaInterBrokerProtocolVersion — IBP 2.6 (v3): per-partition leader epoch and delete flag in ONE
    request per broker, broker epoch set."""
    ctx.set_live_brokers({broker(1): 1, broker(2): 42, broker(3): 1})
    [stop] = sent(_stop_replica(ctx, batch, [TopicPartition("foo", 0)], True), StopReplicaRequest)
    assert stop.request.broker_epoch == 42
    [ps] = stop.request.partition_states
    assert (ps.leader_epoch, ps.delete_partition) == (1, True)


# -- kactor-specific ---------------------------------------------------------------------------------------------------
def test_new_batch_fails_when_not_empty(ctx: ControllerContext, batch: ControllerBrokerRequestBatch) -> None:
    batch.new_batch()
    batch.add_update_metadata_request_for_brokers([1], ())
    with pytest.raises(IllegalStateError):
        batch.new_batch()
    batch.clear()
    batch.new_batch()


def test_send_order_leader_and_isr_update_metadata_stop_replica(ctx: ControllerContext,
                                                                batch: ControllerBrokerRequestBatch) -> None:
    batch.new_batch()
    batch.add_stop_replica_request_for_brokers([3], TopicPartition("bar", 0), False)
    _add_lai(batch, ctx, [2], TopicPartition("foo", 0))
    batch.add_leader_and_isr_request_for_brokers([-1], TopicPartition("foo", 1),
                                                 ctx.partition_leadership_info(TopicPartition("foo", 1)),
                                                 ctx.partition_full_replica_assignment(TopicPartition("foo", 1)),
                                                 False)
    effects = _send(batch)
    kinds = [type(e.request).__name__ for e in effects]
    assert kinds == ["LeaderAndIsrRequest"] + ["UpdateMetadataRequest"] * 3 + ["StopReplicaRequest"]
    # a LeaderAndIsr entry implies UpdateMetadata for that partition to everyone
    um = sent(effects, UpdateMetadataRequest)[0].request
    assert {ps.topic_partition for ps in um.partition_states} == {TopicPartition("foo", 0), TopicPartition("foo", 1)}
    # StopReplica for a partition without leader info carries epoch −1 (NoEpoch)
    batch.new_batch()
    batch.add_stop_replica_request_for_brokers([3], TopicPartition("new", 0), False)
    [stop] = sent(_send(batch), StopReplicaRequest)
    assert stop.request.partition_states[0].leader_epoch == -1
