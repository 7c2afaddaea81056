"""Partition reassignment through /admin/reassign_partitions and the AlterPartitionReassignments events (KIP-455,
reference §8.2; ControllerIntegrationTest's reassignment scenarios)."""

from __future__ import annotations

import json

from messages import controller_events as ev
from messages.common import Errors, ReplicaAssignment, TopicPartition
from messages.requests import LeaderAndIsrRequest, StopReplicaRequest, UpdateMetadataRequest
from protocol.zk import paths, znodes
from tests.support.controller_events import Harness, active_cluster, register_broker, setup_cluster

TP = TopicPartition("t", 0)


_active = active_cluster


def _epoch(h: Harness) -> int:
    return h.zk.state(TP).leader_and_isr.leader_epoch


def test_partition_reassignment_epochs() -> None:
    """ControllerIntegrationTest.testPartitionReassignment: [controller] → [other], both up: leader epoch
    0 → A1 (1) → ISR expands (no bump) → B3 reassign election (2) → B4 ISR shrink (3); the znode is deleted."""
    h = _active((1, 2), {"t": {0: [1]}})
    assert _epoch(h) == 0
    h.zk.create(paths.ReassignPartitionsZNode, znodes.encode_reassign_partitions({TP: (2,)}))
    h.drain()
    c = h.controllers[1]
    assert ev.ZkPartitionReassignment() in h.processed[1]
    assert _epoch(h) == 1  # A1
    assert json.loads(h.zk.get("/brokers/topics/t")) == {
        "version": 2, "partitions": {"0": [2, 1]}, "adding_replicas": {"0": [2]}, "removing_replicas": {"0": [1]}}
    assert c.ctx.partitions_being_reassigned == {TP}
    new_replica = [ps for s in h.sent(1, LeaderAndIsrRequest, to=2) for ps in s.request.partition_states]
    assert new_replica and new_replica[-1].is_new and new_replica[-1].adding_replicas == (2,)
    assert c.gauges().active
    # the leader (1) adds 2 to the ISR: the state znode's data watch fires PartitionReassignmentIsrChange
    h.zk.leader_writes_isr(TP, (1, 2))
    h.drain()
    assert ev.PartitionReassignmentIsrChange(TP) in h.processed[1]
    s = h.zk.state(TP)
    assert (s.leader_and_isr.leader, s.leader_and_isr.isr, s.leader_and_isr.leader_epoch) == (2, (2,), 3)
    assert json.loads(h.zk.get("/brokers/topics/t")) == {
        "version": 2, "partitions": {"0": [2]}, "adding_replicas": {}, "removing_replicas": {}}
    assert not h.zk.exists(paths.ReassignPartitionsZNode)
    assert c.ctx.partitions_being_reassigned == set()
    assert c.ctx.partition_full_replica_assignment(TP) == ReplicaAssignment((2,))
    stops = [ps for s in h.sent(1, StopReplicaRequest, to=1) for ps in s.request.partition_states]
    assert any(ps.topic_partition == TP and ps.delete_partition for ps in stops)
    # the creation watch is re-armed (ZkPartitionReassignment re-enqueued after the delete)
    assert 1 in h.zk.data_watches[paths.ReassignPartitionsZNode]
    assert not c.watches.watch_data(paths.TopicPartitionStateZNode.path(TP))


def test_partition_reassignment_with_offline_replica_halting_progress() -> None:
    """ControllerIntegrationTest.testPartitionReassignmentWithOfflineReplicaHaltingProgress /
    testPartitionReassignmentResumesAfterReplicaComesOnline: the target broker is down → progress stops after A1
    (epoch 1), the znode remains; it comes back → OnlineReplica + resumed A1 (2), then B3 (3), B4 (4)."""
    h = _active((1, 2), {"t": {0: [1]}})
    h.zk.delete("/brokers/ids/2")
    h.drain()
    h.zk.create(paths.ReassignPartitionsZNode, znodes.encode_reassign_partitions({TP: (2,)}))
    h.drain()
    assert _epoch(h) == 1
    assert h.zk.exists(paths.ReassignPartitionsZNode)
    register_broker(h.zk, 2)
    h.drain()
    assert _epoch(h) == 2
    h.zk.leader_writes_isr(TP, (1, 2))
    h.drain()
    s = h.zk.state(TP)
    assert (s.leader_and_isr.leader, s.leader_and_isr.isr, s.leader_and_isr.leader_epoch) == (2, (2,), 4)
    assert not h.zk.exists(paths.ReassignPartitionsZNode)


def test_invalid_zk_entries_are_dropped_and_malformed_json_is_ignored() -> None:
    """Entries that cannot start (unknown partition, empty / duplicate replica list) are removed from the znode;
    the valid one proceeds. Malformed JSON is logged and treated as empty (the controller keeps going)."""
    h = _active((1, 2, 3), {"t": {0: [1, 2], 1: [1, 2], 2: [1, 2]}})
    bad = {TP: (2, 3), TopicPartition("t", 1): (), TopicPartition("t", 2): (3, 3), TopicPartition("nope", 0): (1,)}
    h.zk.create(paths.ReassignPartitionsZNode, znodes.encode_reassign_partitions(bad))
    h.drain()
    remaining = znodes.decode_reassign_partitions(h.zk.get(paths.ReassignPartitionsZNode))
    assert remaining == {TP: (2, 3)}
    assert h.controllers[1].ctx.partitions_being_reassigned == {TP}
    # complete it: the znode disappears
    h.zk.leader_writes_isr(TP, (1, 2, 3))
    h.drain()
    assert not h.zk.exists(paths.ReassignPartitionsZNode)
    assert h.zk.state(TP).leader_and_isr.leader == 2
    # malformed JSON
    h.zk.create(paths.ReassignPartitionsZNode, "{not json")
    h.drain()
    assert h.controllers[1].is_active
    assert h.zk.get(paths.ReassignPartitionsZNode) == "{not json"


def test_api_reassignment_validation_cancel_and_list() -> None:
    """ApiPartitionReassignment: INVALID_REPLICA_ASSIGNMENT for dead / duplicate replicas, NO_REASSIGNMENT_IN_PROGRESS
    for a cancel without one; a started one is listed and can be cancelled (back to the origin replicas)."""
    h = _active((1, 2, 3), {"t": {0: [1, 2]}})
    reply = h.process(1, ev.ApiPartitionReassignment(((TP, (1, 9)),)))
    assert reply.results[0].error == Errors.INVALID_REPLICA_ASSIGNMENT
    reply = h.process(1, ev.ApiPartitionReassignment(((TP, None),)))
    assert reply.results[0].error == Errors.NO_REASSIGNMENT_IN_PROGRESS
    reply = h.process(1, ev.ApiPartitionReassignment(((TP, (3, 2)),)))
    assert reply == ev.AlterReassignmentsReply(Errors.NONE, (ev.PartitionReassignmentResult(TP, Errors.NONE),))
    listed = h.process(1, ev.ListPartitionReassignments())
    assert listed.reassignments == ((TP, ReplicaAssignment((3, 2, 1), (3,), (1,))),)
    h.drain()
    reply = h.process(1, ev.ApiPartitionReassignment(((TP, None),)))
    assert reply.results[0].error == Errors.NONE
    h.drain()
    # origin = replicas − adding = [2, 1]: a cancel cannot restore the original order (updateCurrentReassignment doc)
    assert h.controllers[1].ctx.partition_full_replica_assignment(TP) == ReplicaAssignment((2, 1))
    assert json.loads(h.zk.get("/brokers/topics/t"))["partitions"] == {"0": [2, 1]}
    h.add(2)
    assert h.process(2, ev.ListPartitionReassignments()).error == Errors.NOT_CONTROLLER


def test_reassignment_resumed_on_failover() -> None:
    """initializePartitionReassignments: a reassignment recorded in the topic znode (adding/removing) is resumed by
    a new controller."""
    h = Harness()
    setup_cluster(h.zk, (1, 2), None)
    h.zk.create("/brokers/topics/t", znodes.encode_topic_assignment({TP: ReplicaAssignment((2, 1), (2,), (1,))}))
    h.zk.put_partition_state(TP, leader=1, isr=(1, 2), leader_epoch=1, controller_epoch=0)
    h.add(1)
    h.process(1, ev.Startup())
    h.drain()
    s = h.zk.state(TP)
    assert (s.leader_and_isr.leader, s.leader_and_isr.isr) == (2, (2,))
    assert json.loads(h.zk.get("/brokers/topics/t"))["partitions"] == {"0": [2]}


def test_a1_sends_is_new_false_to_every_replica_and_a2_is_new_true() -> None:
    """Kafka 2.6 (reference Corrections 6): A1's LeaderAndIsr goes to every replica of ORS + TRS with isNew=false,
    the adding replica included; only A2's own batch (AR → NewReplica) sends it isNew=true."""
    h = _active((1, 2), {"t": {0: [1]}})
    h.zk.create(paths.ReassignPartitionsZNode, znodes.encode_reassign_partitions({TP: (1, 2)}))
    h.drain()
    to2 = [[(ps.topic_partition, ps.leader_epoch, ps.replicas, ps.adding_replicas, ps.is_new)
            for ps in s.request.partition_states] for s in h.sent(1, LeaderAndIsrRequest, to=2)]
    assert to2 == [[(TP, 1, (1, 2), (2,), False)], [(TP, 1, (1, 2), (2,), True)]]
    to1 = [[(ps.leader_epoch, ps.is_new) for ps in s.request.partition_states]
           for s in h.sent(1, LeaderAndIsrRequest, to=1)]
    assert to1 == [[(1, False)]]


def test_isr_change_notification_does_not_complete_a_reassignment() -> None:
    """Kafka 2.6 (reference Corrections 3): an ISR change notification only refreshes the leadership cache and sends
    UpdateMetadata for the listed partitions; reassignment completion comes from the state znode's data watch
    (PartitionReassignmentIsrChange) alone. Here the ISR grows with the watch's event lost: the notification updates
    the cache and metadata, the reassignment stays in progress; the next state-znode change completes it."""
    h = _active((1, 2), {"t": {0: [1]}})
    h.zk.create(paths.ReassignPartitionsZNode, znodes.encode_reassign_partitions({TP: (2,)}))
    h.drain()
    c = h.controllers[1]
    h.zk.leader_writes_isr(TP, (1, 2))
    h.zk.fired.clear()  # the PartitionReassignmentIsrChange is not delivered
    h.clear_effects(1)
    h.zk.create(paths.IsrChangeNotificationSequenceZNode.path("0000000000"), znodes.encode_isr_change({TP}))
    h.drain()
    assert ev.IsrChangeNotification() in h.processed[1]
    assert c.ctx.partition_leadership_info(TP).leader_and_isr.isr == (1, 2)
    um = [(s.broker_id, [(ps.topic_partition, ps.isr) for ps in s.request.partition_states])
          for s in h.sent(1, UpdateMetadataRequest)]
    assert um == [(1, [(TP, (1, 2))]), (2, [(TP, (1, 2))])]
    assert h.sent(1, LeaderAndIsrRequest) == [] and h.sent(1, StopReplicaRequest) == []
    assert c.ctx.partitions_being_reassigned == {TP}
    assert json.loads(h.zk.get("/brokers/topics/t"))["adding_replicas"] == {"0": [2]}
    assert h.zk.nodes[paths.IsrChangeNotificationZNode].children == set()
    # the notification's read of the state znode re-armed its watch: the next change completes the reassignment
    assert 1 in h.zk.data_watches[paths.TopicPartitionStateZNode.path(TP)]
    h.zk.leader_writes_isr(TP, (1, 2))
    h.drain()
    assert c.ctx.partitions_being_reassigned == set()
    assert c.ctx.partition_full_replica_assignment(TP) == ReplicaAssignment((2,))
