"""Cancelling a partition reassignment that is still moving (KIP-455, Kafka 2.4+): AlterPartitionReassignments with
a null target, KafkaController.processApiPartitionReassignment → maybeBuildReassignment's reassignTo(origin) →
onPartitionReassignment. The replicas go back to the origin ones, in ZooKeeper and in the context; the adding
replicas are stopped and their logs deleted (OfflineReplica, out of the ISR; StopReplica deletePartition=true, at a
leader epoch their brokers accept; NonExistentReplica); the leader, an origin replica, keeps leading with a new
epoch; the reassignment's /admin/reassign_partitions entry and ISR-change watch go; a ReassignmentProgress(Cancelled)
record marks it."""

from __future__ import annotations

import json

from core.effects import StateChange
from messages import controller_events as ev
from messages.common import Errors, PartitionAndReplica, ReplicaAssignment, TopicPartition
from messages.observability import ReassignmentProgress
from messages.requests import LeaderAndIsrRequest, StopReplicaRequest, UpdateMetadataRequest
from protocol.zk import paths, znodes
from tests.support.controller_events import Harness, active_cluster

TP = TopicPartition("t", 0)


def _moving(h: Harness, target: tuple[int, ...]) -> None:
    """A reassignment submitted through /admin/reassign_partitions that cannot finish (its new replicas never catch
    up: nobody writes them into the ISR)."""
    h.zk.create(paths.ReassignPartitionsZNode, znodes.encode_reassign_partitions({TP: target}))
    h.drain()


def _progress(h: Harness, broker: int = 1) -> list[tuple[str, tuple[int, ...]]]:
    return [(e.record.phase, e.record.target_replicas) for e in h.effects[broker]
            if isinstance(e, StateChange) and isinstance(e.record, ReassignmentProgress)]


def test_cancel_reverts_to_the_origin_replicas_and_deletes_the_adding_ones() -> None:
    h = active_cluster((1, 2, 3), {"t": {0: [1, 2]}})
    c = h.controllers[1]
    _moving(h, (3, 2))
    assert json.loads(h.zk.get("/brokers/topics/t"))["adding_replicas"] == {"0": [3]}
    assert c.ctx.partitions_being_reassigned == {TP}
    epoch = h.zk.state(TP).leader_and_isr.leader_epoch
    h.clear_effects(1)

    reply = h.process(1, ev.ApiPartitionReassignment(((TP, None),)))
    assert reply == ev.AlterReassignmentsReply(Errors.NONE, (ev.PartitionReassignmentResult(TP, Errors.NONE),))
    # ZooKeeper: the origin replicas (RS − AR of [3, 2, 1]: Kafka's originReplicas keeps the reassignment's order,
    # not the one before it), nothing adding or removing; the /admin/reassign_partitions entry gone
    assert json.loads(h.zk.get("/brokers/topics/t")) == {
        "version": 2, "partitions": {"0": [2, 1]}, "adding_replicas": {}, "removing_replicas": {}}
    assert not h.zk.exists(paths.ReassignPartitionsZNode)
    # the context: no reassignment, no replica state of the adding replica, its ISR-change watch dropped
    assert c.ctx.partition_full_replica_assignment(TP) == ReplicaAssignment((2, 1))
    assert c.ctx.partitions_being_reassigned == set()
    assert PartitionAndReplica(TP, 3) not in c.ctx.replica_states
    assert not c.watches.watch_data(paths.TopicPartitionStateZNode.path(TP))
    # the adding replica stopped with its log deleted (U3's ReplicaDeletionStarted), at a leader epoch above the one
    # it has (A1's), so that its broker does not ignore the StopReplica (fence_unneeded_replicas)
    stops = [ps for s in h.sent(1, StopReplicaRequest, to=3) for ps in s.request.partition_states]
    assert [(ps.topic_partition, ps.delete_partition) for ps in stops][-1] == (TP, True)
    assert all(ps.leader_epoch > epoch for ps in stops)
    assert not [s for s in h.sent(1, StopReplicaRequest) if s.broker_id in (1, 2)]
    # the leader (1) keeps leading the origin replicas, with a new epoch (B3), and the ISR holds no adding replica
    s = h.zk.state(TP).leader_and_isr
    assert (s.leader, 3 in s.isr) == (1, False) and s.leader_epoch > epoch
    last = [ps for r in h.sent(1, LeaderAndIsrRequest, to=1) for ps in r.request.partition_states][-1]
    assert (last.replicas, last.adding_replicas, last.removing_replicas, last.leader) == ((2, 1), (), (), 1)
    assert h.sent(1, UpdateMetadataRequest)
    assert _progress(h) == [("Cancelled", (2, 1))]
    # nothing left to do: the next events change nothing, and a second cancel has no reassignment to cancel
    h.drain()
    assert h.process(1, ev.ApiPartitionReassignment(((TP, None),))).results[0].error == \
        Errors.NO_REASSIGNMENT_IN_PROGRESS


def test_cancel_of_an_adding_replica_already_in_the_isr_takes_it_out() -> None:
    """[1] → [1, 2, 3]: 2 caught up (in the ISR), 3 not; the cancel leaves [1] with ISR [1], 2 and 3 deleted."""
    h = active_cluster((1, 2, 3), {"t": {0: [1]}})
    _moving(h, (1, 2, 3))
    h.zk.leader_writes_isr(TP, (1, 2))
    h.drain()
    assert h.controllers[1].ctx.partitions_being_reassigned == {TP}  # 3 is not in sync: still moving
    epoch = h.zk.state(TP).leader_and_isr.leader_epoch
    h.clear_effects(1)
    assert h.process(1, ev.ApiPartitionReassignment(((TP, None),))).results[0].error == Errors.NONE
    s = h.zk.state(TP).leader_and_isr
    assert (s.leader, s.isr) == (1, (1,))
    assert json.loads(h.zk.get("/brokers/topics/t"))["partitions"] == {"0": [1]}
    for broker in (2, 3):
        stops = [ps for r in h.sent(1, StopReplicaRequest, to=broker) for ps in r.request.partition_states]
        assert (TP, True) in [(ps.topic_partition, ps.delete_partition) for ps in stops], broker
        deleting = [ps.leader_epoch for ps in stops if ps.delete_partition]
        assert deleting and deleting[-1] > epoch, broker  # 2 left the ISR: OfflineReplica's own bump
    assert _progress(h) == [("Cancelled", (1,))]


def test_an_api_reassignment_cancelled_through_the_api() -> None:
    """Started by AlterPartitionReassignments, cancelled by it: the same revert; no znode was ever involved."""
    h = active_cluster((1, 2, 3), {"t": {0: [1, 2]}})
    assert h.process(1, ev.ApiPartitionReassignment(((TP, (2, 3)),))).results[0].error == Errors.NONE
    h.drain()
    assert h.controllers[1].ctx.partition_full_replica_assignment(TP) == ReplicaAssignment((2, 3, 1), (3,), (1,))
    assert h.process(1, ev.ApiPartitionReassignment(((TP, None),))).results[0].error == Errors.NONE
    assert h.controllers[1].ctx.partition_full_replica_assignment(TP) == ReplicaAssignment((2, 1))
    assert [p for p, _ in _progress(h)] == ["Started", "Cancelled"]
    assert not h.zk.exists(paths.ReassignPartitionsZNode)


def test_a_completed_reassignment_is_not_reported_cancelled() -> None:
    h = active_cluster((1, 2), {"t": {0: [1]}})
    _moving(h, (2,))
    h.zk.leader_writes_isr(TP, (1, 2))
    h.drain()
    assert [p for p, _ in _progress(h)] == ["Started", "Completed"]


def test_a_replaced_reassignment_stops_its_adding_replica_at_a_newer_epoch() -> None:
    """[1, 2] → [1, 3] (3 not caught up), replaced by → [1, 2]: U3 stops 3 — at a leader epoch above A1's."""
    h = active_cluster((1, 2, 3), {"t": {0: [1, 2]}})
    _moving(h, (1, 3))
    epoch = h.zk.state(TP).leader_and_isr.leader_epoch
    h.clear_effects(1)
    assert h.process(1, ev.ApiPartitionReassignment(((TP, (1, 2)),))).results[0].error == Errors.NONE
    stops = [ps for r in h.sent(1, StopReplicaRequest, to=3) for ps in r.request.partition_states]
    assert stops and stops[-1].delete_partition and all(ps.leader_epoch > epoch for ps in stops)
    assert h.controllers[1].ctx.partition_full_replica_assignment(TP) == ReplicaAssignment((1, 2))
