"""Reassignment of a partition that has never had a leader (no state znode: NewPartition, its replicas offline when
it was created), then the topic's deletion (issue #19's stuck seeded runs).

Kafka 2.6 half-applies such a reassignment (the topic znode rewritten with adding/removing replicas, then
updateLeaderEpoch's "leaderAndIsr path is empty") and the topic's deletion can then never complete. kactor applies the
target replicas directly (there is no data to move), so the partition comes online on them and the deletion
completes (docs/kafka-2.6-departures.md)."""

from __future__ import annotations

import json
from typing import Any

from core.controller.states import NewPartition, NewReplica, OnlinePartition, OnlineReplica
from messages import controller_events as ev
from messages.common import Errors, PartitionAndReplica, ReplicaAssignment, TopicPartition
from messages.requests import LeaderAndIsrRequest, PartitionError, StopReplicaRequest, StopReplicaResponse
from messages.zk import ERROR, SetData, ZkOpResult
from protocol.zk import paths, znodes
from tests.support.controller_events import (
    Harness,
    active_cluster,
    assert_context_consistent,
    register_broker,
    setup_cluster,
)

TP = TopicPartition("t", 0)


_active = active_cluster


def _topic_znode(h: Harness) -> dict:
    return json.loads(h.zk.get(paths.TopicZNode.path("t")))


def _answer_stop_replica_deletes(h: Harness) -> int:
    """Answer (NONE) every StopReplica(deletePartition=true) sent so far, as the brokers would; returns how many."""
    c = h.controllers[1]
    answered = 0
    for s in h.sent(1, StopReplicaRequest):
        if not any(ps.delete_partition for ps in s.request.partition_states):
            continue
        resp = StopReplicaResponse(Errors.NONE, tuple(PartitionError(ps.topic_partition, Errors.NONE)
                                                      for ps in s.request.partition_states))
        event = c.event_for_stop_replica_response(s.broker_id, s.request, resp)
        if event is not None:
            h.queues[1].append(event)
            answered += 1
    h.clear_effects(1)
    h.drain()
    return answered


def _delete_topic_until_gone(h: Harness) -> None:
    h.zk.create(paths.DeleteTopicsTopicZNode.path("t"))
    h.drain()
    for _ in range(5):
        if not h.zk.exists(paths.TopicZNode.path("t")):
            break
        _answer_stop_replica_deletes(h)
    assert not h.zk.exists(paths.TopicZNode.path("t"))
    assert not h.zk.exists(paths.DeleteTopicsTopicZNode.path("t"))
    c = h.controllers[1]
    assert "t" not in c.ctx.all_topics and not c.ctx.topics_to_be_deleted
    assert_context_consistent(c)


def test_reassignment_written_before_the_state_znode_then_deletion() -> None:
    """(a) The topic is created on broker 3 while 3 is down and a reassignment to the live broker 2 is written right
    after, before any state znode exists. The reassignment applies [2] directly (no adding/removing replicas left in
    the topic znode, no "leaderAndIsr path is empty"), the partition comes online on 2 (leader 2, epoch 0), the
    reassignment znode is deleted, and the topic's later deletion completes."""
    h = _active((1, 2, 3))
    h.zk.delete("/brokers/ids/3")
    h.drain()
    h.zk.create(paths.TopicZNode.path("t"), znodes.encode_topic_assignment({TP: _ra(3)}))
    h.zk.create(paths.ReassignPartitionsZNode, znodes.encode_reassign_partitions({TP: (2,)}))
    h.drain()
    c = h.controllers[1]
    assert ev.ZkPartitionReassignment() in h.processed[1]
    assert _topic_znode(h) == {"version": 2, "partitions": {"0": [2]}, "adding_replicas": {},
                               "removing_replicas": {}}
    assert not h.zk.exists(paths.ReassignPartitionsZNode)
    s = h.zk.state(TP)
    assert (s.leader_and_isr.leader, s.leader_and_isr.isr, s.leader_and_isr.leader_epoch) == (2, (2,), 0)
    assert c.ctx.partition_state(TP) == OnlinePartition
    assert c.ctx.replica_state(PartitionAndReplica(TP, 2)) == OnlineReplica
    assert c.ctx.partitions_being_reassigned == set()
    assert_context_consistent(c)
    become_leader = [ps for s in h.sent(1, LeaderAndIsrRequest, to=2) for ps in s.request.partition_states]
    assert [(ps.topic_partition, ps.leader, ps.replicas) for ps in become_leader] == [(TP, 2, (2,))]
    # the topic is deleted while broker 3 (the replica removed by the reassignment) is still down
    _delete_topic_until_gone(h)
    register_broker(h.zk, 3)
    h.drain()
    assert_context_consistent(c)


def test_reassignment_of_a_never_led_partition_waits_for_its_targets() -> None:
    """The partition is created while its only replica (3) is offline (NewPartition, no state znode) and reassigned
    to the offline broker 4: the target replicas are applied at once (topic znode [4], no
    adding/removing), the partition stays NewPartition with no state znode until broker 4 registers, then comes
    online on 4 with epoch 0; the deletion that follows completes."""
    h = _active((1, 2, 3, 4))
    for b in (3, 4):
        h.zk.delete(f"/brokers/ids/{b}")
    h.drain()
    h.zk.create(paths.TopicZNode.path("t"), znodes.encode_topic_assignment({TP: _ra(3)}))
    h.drain()
    c = h.controllers[1]
    assert c.ctx.partition_state(TP) == NewPartition
    assert not h.zk.exists(paths.TopicPartitionStateZNode.path(TP))
    h.zk.create(paths.ReassignPartitionsZNode, znodes.encode_reassign_partitions({TP: (4,)}))
    h.drain()
    assert _topic_znode(h) == {"version": 2, "partitions": {"0": [4]}, "adding_replicas": {},
                               "removing_replicas": {}}
    assert not h.zk.exists(paths.ReassignPartitionsZNode)
    assert not h.zk.exists(paths.TopicPartitionStateZNode.path(TP))
    assert c.ctx.partition_state(TP) == NewPartition
    assert_context_consistent(c)
    register_broker(h.zk, 3)
    h.drain()
    assert not h.zk.exists(paths.TopicPartitionStateZNode.path(TP))  # 3 no longer holds a replica
    register_broker(h.zk, 4)
    h.drain()
    s = h.zk.state(TP)
    assert (s.leader_and_isr.leader, s.leader_and_isr.isr, s.leader_and_isr.leader_epoch) == (4, (4,), 0)
    assert c.ctx.partition_state(TP) == OnlinePartition
    assert_context_consistent(c)
    _delete_topic_until_gone(h)


def test_reassignment_of_a_never_led_partition_then_broker_back_then_deletion() -> None:
    """(b) as in the seeded run: the only replica (3) offline at creation, reassigned to [1, 2] (live), broker 3 back,
    then the deletion. The reassignment completes at once ([1, 2], leader 1, ISR [1, 2], epoch 0); broker 3's return
    changes nothing; the deletion completes."""
    h = _active((1, 2, 3))
    h.zk.delete("/brokers/ids/3")
    h.drain()
    h.zk.create(paths.TopicZNode.path("t"), znodes.encode_topic_assignment({TP: _ra(3)}))
    h.drain()
    h.zk.create(paths.ReassignPartitionsZNode, znodes.encode_reassign_partitions({TP: (1, 2)}))
    h.drain()
    c = h.controllers[1]
    assert _topic_znode(h) == {"version": 2, "partitions": {"0": [1, 2]}, "adding_replicas": {},
                               "removing_replicas": {}}
    assert not h.zk.exists(paths.ReassignPartitionsZNode)
    s = h.zk.state(TP)
    assert (s.leader_and_isr.leader, s.leader_and_isr.isr, s.leader_and_isr.leader_epoch) == (1, (1, 2), 0)
    register_broker(h.zk, 3)
    h.drain()
    assert_context_consistent(c)
    assert c.ctx.partition_replica_assignment(TP) == (1, 2)
    _delete_topic_until_gone(h)


def _ra(*replicas: int) -> ReplicaAssignment:
    return ReplicaAssignment(tuple(replicas))


def _fail_writes(h: Harness, *failing: tuple[str, int]) -> list[Any]:
    """Make the n-th SetData (1-based, counted per path) of each (path, n) fail with a ZooKeeper error; returns the
    list of failed ops."""
    apply_fenced = h.zk._apply_fenced
    seen: dict[str, int] = {}
    failed: list[Any] = []

    def apply(op: Any, fence_version: int) -> ZkOpResult:
        if isinstance(op, SetData):
            seen[op.path] = seen.get(op.path, 0) + 1
            if (op.path, seen[op.path]) in failing:
                failed.append(op)
                return ZkOpResult(ERROR)
        return apply_fenced(op, fence_version)

    h.zk._apply_fenced = apply  # type: ignore[method-assign]
    return failed


def test_failed_reassignment_is_rolled_back() -> None:
    """A reassignment that fails after its topic znode was rewritten (here A1's leader-epoch write to the state znode
    fails with a ZooKeeper error) is rolled back: the topic znode holds the original assignment again with no
    adding/removing replicas, the context matches it, the partition is no longer being reassigned, the entry is
    dropped from /admin/reassign_partitions, and the topic's deletion completes."""
    h = _active((1, 2))
    h.zk.create(paths.TopicZNode.path("t"), znodes.encode_topic_assignment({TP: _ra(1)}))
    h.drain()
    c = h.controllers[1]
    assert h.zk.state(TP).leader_and_isr.leader == 1
    failed = _fail_writes(h, (paths.TopicPartitionStateZNode.path(TP), 1))
    h.zk.create(paths.ReassignPartitionsZNode, znodes.encode_reassign_partitions({TP: (2,)}))
    h.drain()
    assert failed
    assert _topic_znode(h) == {"version": 2, "partitions": {"0": [1]}, "adding_replicas": {},
                               "removing_replicas": {}}
    assert h.zk.state(TP).leader_and_isr.leader_epoch == 0
    assert c.ctx.partition_full_replica_assignment(TP) == _ra(1)
    assert c.ctx.partitions_being_reassigned == set()
    assert not c.watches.watch_data(paths.TopicPartitionStateZNode.path(TP))
    assert not h.zk.exists(paths.ReassignPartitionsZNode)
    assert "t" not in c.ctx.topics_ineligible_for_deletion
    assert_context_consistent(c)
    _delete_topic_until_gone(h)


def test_failed_rollback_leaves_a_consistent_reassignment_that_completes() -> None:
    """When the rollback's own topic-znode write fails too, the partition stays reassigning with the znode and the
    context agreeing (RS [2, 1], adding [2], removing [1]); the adding replica gets a replica state (NewReplica), and
    the reassignment completes on the next ISR change of its state znode."""
    h = _active((1, 2))
    h.zk.create(paths.TopicZNode.path("t"), znodes.encode_topic_assignment({TP: _ra(1)}))
    h.drain()
    c = h.controllers[1]
    failed = _fail_writes(h, (paths.TopicPartitionStateZNode.path(TP), 1), (paths.TopicZNode.path("t"), 2))
    h.zk.create(paths.ReassignPartitionsZNode, znodes.encode_reassign_partitions({TP: (2,)}))
    h.drain()
    assert [op.path for op in failed] == [paths.TopicPartitionStateZNode.path(TP), paths.TopicZNode.path("t")]
    assert _topic_znode(h) == {"version": 2, "partitions": {"0": [2, 1]}, "adding_replicas": {"0": [2]},
                               "removing_replicas": {"0": [1]}}
    assert c.ctx.partition_full_replica_assignment(TP) == ReplicaAssignment((2, 1), (2,), (1,))
    assert c.ctx.partitions_being_reassigned == {TP}
    assert c.ctx.replica_state(PartitionAndReplica(TP, 2)) == NewReplica
    assert_context_consistent(c)
    h.zk.leader_writes_isr(TP, (1, 2))
    h.drain()
    assert _topic_znode(h) == {"version": 2, "partitions": {"0": [2]}, "adding_replicas": {},
                               "removing_replicas": {}}
    assert c.ctx.partitions_being_reassigned == set()
    assert h.zk.state(TP).leader_and_isr.leader == 2
    _delete_topic_until_gone(h)


def test_failover_cleans_a_half_applied_reassignment_of_a_never_led_partition() -> None:
    """A topic znode left by Kafka 2.6's half-applied reassignment (adding [2], removing [3], no state znode, brokers 2
    and 3 down): the new controller's failover resumes it (maybeResumeReassignments) and applies [2] directly, so the
    znode holds [2] with no adding/removing replicas; the partition stays NewPartition until broker 2 registers, then
    comes online on 2."""
    h = Harness()
    setup_cluster(h.zk, (1,))
    h.zk.create(paths.TopicZNode.path("t"), znodes.encode_topic_assignment(
        {TP: ReplicaAssignment((2, 3), adding_replicas=(2,), removing_replicas=(3,))}))
    h.add(1)
    h.process(1, ev.Startup())
    h.drain()
    c = h.controllers[1]
    assert _topic_znode(h) == {"version": 2, "partitions": {"0": [2]}, "adding_replicas": {},
                               "removing_replicas": {}}
    assert c.ctx.partitions_being_reassigned == set()
    assert c.ctx.partition_state(TP) == NewPartition
    assert_context_consistent(c)
    register_broker(h.zk, 2)
    h.drain()
    s = h.zk.state(TP)
    assert (s.leader_and_isr.leader, s.leader_and_isr.isr, s.leader_and_isr.leader_epoch) == (2, (2,), 0)
    assert_context_consistent(c)
    _delete_topic_until_gone(h)


def test_a_topic_deleted_while_a_partition_is_reassigned_takes_its_reassignment_with_it() -> None:
    """kactor chaos seed 2: t0-3 was reassigned 20 ms before t0's deletion. Kafka 2.6 marks the topic ineligible
    before queueing it (a no-op), so the deletion goes ahead and /admin/reassign_partitions kept t0-3 for ever. The
    deletion now removes the topic's reassignment entries and ISR watches with the topic's znodes."""
    h = _active((1, 2, 3, 4))
    h.zk.create(paths.TopicZNode.path("t"), znodes.encode_topic_assignment({TP: _ra(1, 2)}))
    h.drain()
    c = h.controllers[1]
    h.zk.create(paths.ReassignPartitionsZNode, znodes.encode_reassign_partitions({TP: (2, 4)}))
    h.drain()
    assert _topic_znode(h) == {"version": 2, "partitions": {"0": [2, 4, 1]}, "adding_replicas": {"0": [4]},
                               "removing_replicas": {"0": [1]}}
    assert c.ctx.partitions_being_reassigned == {TP}  # waits for 4 to join the ISR, which no broker here does
    _delete_topic_until_gone(h)
    assert not h.zk.exists(paths.ReassignPartitionsZNode)
    assert c.ctx.partitions_being_reassigned == set()
    assert not c.watches.watch_data(paths.TopicPartitionStateZNode.path(TP))  # its ISR watch is gone
