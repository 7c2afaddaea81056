"""Issue #6 on a real cluster: topic deletion (TopicDeletionManager, reference §8.1) read from the znodes and from the
brokers' log dirs — every replica alive, a dead follower halting it, a controller killed mid-way, deletion disabled,
a second delete of a marked topic, a partition added during deletion, and a topic re-created with fresh logs."""

from __future__ import annotations

import json

import pytest
from cluster_helpers import produce, run_kactor, segment_records, topic_dirs

from core.controller.states import (
    NonExistentPartition,
    NonExistentReplica,
    OfflinePartition,
    OfflineReplica,
    OnlineReplica,
    ReplicaDeletionIneligible,
    ReplicaDeletionStarted,
    ReplicaDeletionSuccessful,
)
from kactor.trace.reader import Record, decode_body, read_records, trace_file_for_broker
from messages.common import Errors, PartitionAndReplica, TopicPartition
from messages.observability import TopicDeletionProgress
from messages.topic_deletion import (
    CompleteReplicaDeletion,
    ControllerInstructionReply,
    ControllerInstructionRequest,
    DeleteTopic,
    DeletionQueueChange,
    EnqueueTopicsForDeletion,
    MutePartitionModifications,
    PartitionStateChanges,
    ReplicaStateChanges,
    SendMetadataUpdate,
    TopicDeletionManagerInit,
    TopicDeletionReply,
    TopicDeletionRequest,
)

pytestmark = pytest.mark.cluster

BROKERS = (0, 1, 2)


def _delete(c, topic: str):  # type: ignore[no-untyped-def]
    return run_kactor("topics", "--zookeeper", c.connect_string, "--delete", "--topic", topic, check=False)


def _topic_gone(c, topic: str) -> bool:  # type: ignore[no-untyped-def]
    """Every znode of the topic gone (/brokers/topics/t, /config/topics/t, /admin/delete_topics/t)."""
    return not any(c.zk.exists(p) for p in (f"/brokers/topics/{topic}", f"/config/topics/{topic}",
                                            f"/admin/delete_topics/{topic}"))


def _no_dirs(c, topic: str, brokers=BROKERS) -> bool:  # type: ignore[no-untyped-def]
    return all(topic_dirs(c, b, topic) == [] for b in brokers)


def test_deletion_with_every_replica_alive_then_recreate_gets_fresh_logs(start_cluster) -> None:
    c = start_cluster(3)
    c.create_topic("t", partitions=2, replication_factor=3, configs={"retention.ms": "1000000"})
    assert c.json("/config/topics/t") == {"version": 1, "config": {"retention.ms": "1000000"}}
    c.wait_partition("t", 0, lambda s: sorted(s["isr"]) == [0, 1, 2], what="t-0 ISR of 3")
    resp = produce(c, "t", 0, ("a", "b", "c"))
    assert resp.error == Errors.NONE and resp.base_offset == 0  # acks=all: the high watermark is past them
    assert all(topic_dirs(c, b, "t") == ["t-0", "t-1"] for b in BROKERS)
    # a delete node for a topic that does not exist is removed by the controller
    c.zk.create("/admin/delete_topics/ghost")

    out = _delete(c, "t")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["Topic t is marked for deletion.",
                                       "Note: This will have no impact if delete.topic.enable is not set to true."]
    c.wait(lambda: _topic_gone(c, "t"), what="/brokers/topics/t, /config/topics/t, /admin/delete_topics/t removed")
    c.wait(lambda: _no_dirs(c, "t"), what="t-0 and t-1 log dirs removed on every broker")
    c.wait(lambda: c.zk.get_children("/admin/delete_topics") == [], what="/admin/delete_topics/ghost removed")
    assert c.zk.get_children("/brokers/topics") == []
    assert not c.zk.exists("/config/topics/ghost") and not c.zk.exists("/brokers/topics/ghost")

    # re-created: new partitions (leader_epoch 0, version 0) with fresh, empty logs starting at offset 0
    c.create_topic("t", partitions=2, replication_factor=3)
    for p in (0, 1):
        st = c.wait_partition("t", p, lambda s: len(s["isr"]) == 3, what=f"t-{p} ISR of 3 after re-creation")
        assert st["leader_epoch"] == 0 and st["controller_epoch"] == 1
        assert c.zk.exists(f"/brokers/topics/t/partitions/{p}/state").version in (0, 1, 2, 3)
    assert all(topic_dirs(c, b, "t") == ["t-0", "t-1"] for b in BROKERS)
    assert all(segment_records(c, b, "t", 0) == [] for b in BROKERS)
    resp = produce(c, "t", 0, ("fresh",))
    assert resp.error == Errors.NONE and resp.base_offset == 0


def _messages(path: str) -> list[tuple[Record, object]]:
    return [(r, decode_body(path, r)) for r in read_records(path)]


def _deletion_completed_in_trace(path: str, topic: str) -> bool:
    return any(r.type == "TopicDeletionProgress" and b == TopicDeletionProgress(topic, "Completed")
               for r, b in _messages(path))


def test_the_controllers_topic_deletion_actor_runs_the_deletion(start_cluster) -> None:
    """Issue #21: the TopicDeletionActor of every broker process, and the controller broker's trace shows its messages
    for a deletion: the controller's TopicDeletionRequests (EnqueueTopicsForDeletion with the topic's replicas as
    facts, then one CompleteReplicaDeletion per StopReplica response), the instructions it sends back in Kafka's order
    (partitions Offline → NonExistent, UpdateMetadata, replicas Offline → ReplicaDeletionStarted; at the end
    NonExistentReplica and the topic's znodes deleted) and the replies; the other brokers' deletion actors stay idle."""
    c = start_cluster(3)
    controller = c.controller_id()
    assert controller is not None
    c.create_topic("t", partitions=2, replication_factor=3)
    c.wait(lambda: all(topic_dirs(c, b, "t") == ["t-0", "t-1"] for b in BROKERS), what="t's logs on every broker")
    assert _delete(c, "t").returncode == 0
    c.wait(lambda: _topic_gone(c, "t"), what="t's znodes removed")
    path = trace_file_for_broker(c.trace_dir, controller)
    c.wait(lambda: _deletion_completed_in_trace(path, "t"), what="the deletion's last record in the controller's trace")

    msgs = _messages(path)
    tps = (TopicPartition("t", 0), TopicPartition("t", 1))
    replicas = tuple(sorted(PartitionAndReplica(tp, b) for tp in tps for b in BROKERS))
    asks = [b for r, b in msgs if r.sender == "controller" and r.receiver == "topic-deletion"
            and isinstance(b, TopicDeletionRequest)]
    enqueue, *completes = asks
    assert enqueue.stimulus.call == EnqueueTopicsForDeletion(("t",))
    (facts,) = enqueue.stimulus.facts
    assert facts.topic == "t" and [pf.partition for pf in facts.partitions] == [0, 1]
    assert all(sorted(pf.replicas) == list(BROKERS) and pf.states == (OnlineReplica,) * 3
               and pf.online == (True,) * 3 for pf in facts.partitions)
    assert all(isinstance(a.stimulus.call, CompleteReplicaDeletion) for a in completes)
    assert all(a.stimulus.facts == () for a in completes)  # the deletion actor already knows every replica's state
    assert sorted(r for a in completes for r in a.stimulus.call.replicas) == list(replicas)

    ops = [b.instruction.op for r, b in msgs if r.sender == "topic-deletion" and r.receiver == "controller"
           and isinstance(b, ControllerInstructionRequest)]
    assert ops[:6] == [
        PartitionStateChanges(tps, OfflinePartition), PartitionStateChanges(tps, NonExistentPartition),
        SendMetadataUpdate(tps), ReplicaStateChanges((), ReplicaDeletionIneligible),
        ReplicaStateChanges(replicas, OfflineReplica), ReplicaStateChanges(replicas, ReplicaDeletionStarted)]
    assert ops[-3:] == [MutePartitionModifications("t"), ReplicaStateChanges(replicas, NonExistentReplica),
                        DeleteTopic("t")]
    assert sorted(r for op in ops[6:-3] if op.target == ReplicaDeletionSuccessful for r in op.replicas) == \
        list(replicas)
    # the controller answered each instruction, without error; every replica made each transition (none missed)
    instructions = [b for r, b in msgs if isinstance(b, ControllerInstructionRequest)]
    answers = {b.request_id: b for r, b in msgs
               if r.sender == "controller" and isinstance(b, ControllerInstructionReply)}
    assert sorted(answers) == sorted(i.request_id for i in instructions)
    assert all(answers[i.request_id] == ControllerInstructionReply(
        i.request_id, () if isinstance(i.instruction.op, ReplicaStateChanges) else None) for i in instructions)
    replies = [b for r, b in msgs if r.sender == "topic-deletion" and isinstance(b, TopicDeletionReply)]
    assert len(replies) == len(asks) and all(b.error is None for b in replies)
    # the queue's changes reach the controller with the instructions: queued with the first, out with DeleteTopic
    changes = [b.instruction.change for r, b in msgs if r.sender == "topic-deletion"
               and isinstance(b, ControllerInstructionRequest)]
    assert changes[0] == DeletionQueueChange(queued=("t",))
    assert changes[-1] == DeletionQueueChange(dequeued=("t",), deletion_start_cleared=("t",))
    assert all(b.change == DeletionQueueChange() for b in replies)
    progress = [b.phase for r, b in msgs if r.sender == "topic-deletion" and r.receiver == "state-change-log"
                and isinstance(b, TopicDeletionProgress)]
    assert progress == ["Queued", "Started", "Completed"]

    # a TopicDeletionActor in every broker process; only the controller's is asked. Read once each broker's trace is
    # whole: its flusher writes once a second, and on a loaded machine the test got here within a second of the
    # other brokers' start (their init still in the buffer)
    c.stop(concurrent=True)
    for b in BROKERS:
        theirs = _messages(trace_file_for_broker(c.trace_dir, b))
        assert any(r.receiver == "topic-deletion" and isinstance(m, TopicDeletionManagerInit) for r, m in theirs)
        assert any(isinstance(m, TopicDeletionRequest) for _, m in theirs) == (b == controller)


def test_deletion_halted_by_dead_follower_completes_after_restart(start_cluster) -> None:
    c = start_cluster(3)
    controller = c.controller_id()
    c.create_topic("t", partitions=2, replication_factor=3)
    follower = next(b for b in BROKERS if b != controller)
    alive = [b for b in BROKERS if b != follower]
    c.wait(lambda: all(topic_dirs(c, b, "t") == ["t-0", "t-1"] for b in BROKERS), what="t's logs on every broker")
    c.kill(follower)  # SIGKILL: its replicas go offline once its session expires
    c.wait(lambda: follower not in c.live_brokers(), what=f"broker {follower} to expire")
    c.wait(lambda: all(follower not in c.partition_state("t", p)["isr"] for p in (0, 1)),
           what=f"broker {follower} out of the ISRs")

    assert _delete(c, "t").returncode == 0
    # the live replicas are deleted; the dead one keeps the topic queued (halted, not failed)
    c.wait(lambda: _no_dirs(c, "t", alive), what="t dirs removed on the live brokers")
    assert topic_dirs(c, follower, "t") == ["t-0", "t-1"]
    assert c.zk.exists("/brokers/topics/t") and c.zk.exists("/admin/delete_topics/t")
    assert c.zk.exists("/config/topics/t")

    # a second delete of a topic already marked says so (exit 0, as Kafka 2.6) and changes nothing
    marker = c.zk.exists("/admin/delete_topics/t")
    again = _delete(c, "t")
    assert (again.returncode, again.stdout) == (0, "Topic t is already marked for deletion.\n"), again.stderr
    assert c.zk.exists("/admin/delete_topics/t") == marker

    # a partition added while the topic is being deleted is reverted (restorePartitionReplicaAssignment), never created
    before = c.json("/brokers/topics/t")
    added = dict(before, partitions={**before["partitions"], "2": alive})
    c.zk.set("/brokers/topics/t", json.dumps(added).encode())
    c.wait(lambda: c.json("/brokers/topics/t")["partitions"].keys() == {"0", "1"},
           what="the added partition t-2 reverted in /brokers/topics/t")
    assert c.json("/brokers/topics/t") == before
    assert not c.zk.exists("/brokers/topics/t/partitions/2")
    assert all("t-2" not in topic_dirs(c, b, "t") for b in BROKERS)

    c.restart(follower)
    c.wait(lambda: _topic_gone(c, "t"), what="deletion completed after the follower restarted")
    c.wait(lambda: _no_dirs(c, "t"), what="t dirs removed on every broker, the restarted one included")
    assert c.zk.get_children("/brokers/topics") == []


def test_deletion_resumed_after_controller_broker_killed_mid_way(start_cluster) -> None:
    c = start_cluster(3)
    old_controller = c.controller_id()
    assert old_controller is not None
    c.create_topic("t", partitions=2, replication_factor=3)
    follower, survivor = (b for b in BROKERS if b != old_controller)
    c.wait(lambda: all(topic_dirs(c, b, "t") == ["t-0", "t-1"] for b in BROKERS), what="t's logs on every broker")
    c.kill(follower)
    c.wait(lambda: follower not in c.live_brokers(), what=f"broker {follower} to expire")
    assert _delete(c, "t").returncode == 0
    # mid-way: the live replicas are deleted, the dead follower's are not
    c.wait(lambda: _no_dirs(c, "t", (old_controller, survivor)), what="t dirs removed on the live brokers")
    assert c.zk.exists("/brokers/topics/t") and c.zk.exists("/admin/delete_topics/t")

    c.kill(old_controller)
    c.wait(lambda: c.controller_id() == survivor and c.controller_epoch() == 2,
           what=f"broker {survivor} elected controller (epoch 2)")
    # the new controller picks the deletion up from /admin/delete_topics (still halted: two replicas are offline)
    assert c.zk.exists("/brokers/topics/t") and c.zk.exists("/admin/delete_topics/t")

    c.restart(follower)
    c.restart(old_controller)
    c.wait(lambda: _topic_gone(c, "t"), what="deletion completed by the new controller")
    c.wait(lambda: _no_dirs(c, "t"), what="t dirs removed on every broker")
    assert c.controller_id() == survivor


def test_delete_topic_disabled_removes_the_marker_and_keeps_the_topic(start_cluster) -> None:
    c = start_cluster(3, overrides=("delete.topic.enable=false",))
    c.create_topic("t", partitions=2, replication_factor=3)
    states = {p: c.wait_partition("t", p, lambda s: len(s["isr"]) == 3) for p in (0, 1)}
    assignment = c.json("/brokers/topics/t")
    out = _delete(c, "t")
    assert out.returncode == 0 and "Topic t is marked for deletion." in out.stdout
    c.wait(lambda: not c.zk.exists("/admin/delete_topics/t"), what="/admin/delete_topics/t removed by the controller")
    assert c.json("/brokers/topics/t") == assignment
    assert c.zk.exists("/config/topics/t")
    assert {p: c.partition_state("t", p) for p in (0, 1)} == states
    assert all(topic_dirs(c, b, "t") == ["t-0", "t-1"] for b in BROKERS)
    resp = produce(c, "t", 1, ("still", "here"))
    assert resp.error == Errors.NONE and resp.base_offset == 0


def test_second_delete_of_a_marked_topic_exits_as_kafka_2_6(zk_chroot: str, zk) -> None:
    """TopicCommand (2.6, --zookeeper): ``case _: NodeExistsException => println(s"Topic $topic is already marked
    for deletion.")`` — no exception, so exit code 0. No broker is needed: nothing removes the marker meanwhile."""
    zk.create("/brokers/topics/t", b'{"version":2,"partitions":{"0":[0]},"adding_replicas":{},"removing_replicas":{}}',
              makepath=True)
    zk.create("/admin/delete_topics/t", makepath=True)
    out = run_kactor("topics", "--zookeeper", zk_chroot, "--delete", "--topic", "t", check=False)
    assert (out.returncode, out.stdout) == (0, "Topic t is already marked for deletion.\n"), (out.returncode,
                                                                                               out.stdout, out.stderr)
