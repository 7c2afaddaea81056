"""The controller's side of the TopicDeletionActor (core/controller/topic_deletion_client.py): which calls reach the
deletion manager, and which facts go with them — a topic's facts once, then only when they changed otherwise than by
the manager's own transitions."""

from __future__ import annotations

from typing import Any

from core.controller.errors import ControllerMovedError, KeeperError, exception_of, raised_error
from core.controller.states import (
    OnlineReplica,
    ReplicaDeletionIneligible,
    ReplicaDeletionStarted,
    ReplicaDeletionSuccessful,
)
from messages import controller_events as ev
from messages.common import Errors, PartitionAndReplica, TopicPartition
from messages.requests import PartitionError, StopReplicaRequest, StopReplicaResponse
from messages.topic_deletion import (
    CompleteReplicaDeletion,
    DeletionStimulus,
    EnqueueTopicsForDeletion,
    FailReplicaDeletion,
    PartitionFacts,
    RaisedError,
    TopicFacts,
)
from tests.support.controller_events import Harness, active_cluster, create_topic

FOO0 = TopicPartition("foo", 0)


def _record_stimuli(h: Harness, broker_id: int = 1) -> list[DeletionStimulus]:
    """Every stimulus broker_id's controller sends its deletion manager, in order."""
    manager = h.deletion_managers[broker_id]
    handle = manager.handle
    seen: list[DeletionStimulus] = []

    def recording(stimulus: DeletionStimulus) -> Any:
        seen.append(stimulus)
        return handle(stimulus)

    manager.handle = recording  # type: ignore[method-assign]
    return seen


def _answer_deletes(h: Harness, broker_id: int) -> None:
    """Broker ``broker_id`` answers its StopReplica(deletePartition=true) requests without error."""
    c = h.controllers[1]
    for s in h.sent(1, StopReplicaRequest, to=broker_id):
        if any(ps.delete_partition for ps in s.request.partition_states):
            resp = StopReplicaResponse(Errors.NONE, tuple(PartitionError(ps.topic_partition, Errors.NONE)
                                                          for ps in s.request.partition_states))
            event = c.event_for_stop_replica_response(broker_id, s.request, resp)
            if event is not None:
                h.process(1, event)
    h.drain()


def test_no_call_reaches_the_deletion_manager_while_nothing_is_queued() -> None:
    """Startup, a topic change, a broker failure and its return: Kafka's manager would do nothing with an empty
    queue, so nothing is sent."""
    h = active_cluster((1, 2), {"foo": {0: [1, 2]}})
    seen = _record_stimuli(h)
    h.zk.delete("/brokers/ids/2")
    h.drain()
    h.process(1, ev.TopicChange())
    assert seen == []


def test_a_topics_facts_go_once_then_only_when_they_changed_otherwise() -> None:
    h = active_cluster((1, 2, 3), {"foo": {0: [1, 2, 3]}})
    seen = _record_stimuli(h)
    h.zk.create("/admin/delete_topics/foo")
    h.drain()
    (enqueue,) = seen
    assert enqueue.call == EnqueueTopicsForDeletion(("foo",))
    assert enqueue.facts == (TopicFacts("foo", (PartitionFacts(0, (1, 2, 3), (OnlineReplica,) * 3, (True,) * 3),)),)
    # broker 1's answer: the manager knows the replicas are ReplicaDeletionStarted (its own transition's answer)
    _answer_deletes(h, 1)
    assert seen[1].call == CompleteReplicaDeletion((PartitionAndReplica(FOO0, 1),)) and seen[1].facts == ()
    # broker 3 fails: its replica is offline now, which the manager was not told: the topic's facts again
    h.zk.delete("/brokers/ids/3")
    h.drain()
    fail = seen[2]
    assert fail.call == FailReplicaDeletion((PartitionAndReplica(FOO0, 3),))
    assert fail.facts == (TopicFacts("foo", (PartitionFacts(
        0, (1, 2, 3), (ReplicaDeletionSuccessful, ReplicaDeletionStarted, ReplicaDeletionStarted),
        (True, True, False)),)),)
    assert h.deletion_managers[1].replicas_in_state("foo", ReplicaDeletionIneligible) == {
        PartitionAndReplica(FOO0, 3)}
    assert h.controllers[1].ctx.replica_state(PartitionAndReplica(FOO0, 3)) == ReplicaDeletionIneligible


def test_deleted_topic_is_forgotten_on_both_sides() -> None:
    h = active_cluster((1, 2), {"foo": {0: [1, 2]}})
    seen = _record_stimuli(h)
    h.zk.create("/admin/delete_topics/foo")
    h.drain()
    _answer_deletes(h, 1)
    _answer_deletes(h, 2)
    assert not h.zk.exists("/brokers/topics/foo")
    c = h.controllers[1]
    assert c.topic_deletion_manager.sent.topics == {} and c.ctx.topics_to_be_deleted == set()
    assert h.deletion_managers[1].topics_to_be_deleted == set() and h.deletion_managers[1]._topics == {}
    assert [type(s.call).__name__ for s in seen] == ["EnqueueTopicsForDeletion", "CompleteReplicaDeletion",
                                                     "CompleteReplicaDeletion"]
    # re-created and deleted again: its facts are sent afresh
    create_topic(h.zk, "foo", {0: [1, 2]})
    h.drain()
    h.zk.create("/admin/delete_topics/foo")
    h.drain()
    assert seen[-1].call == EnqueueTopicsForDeletion(("foo",)) and len(seen[-1].facts) == 1
    assert seen[-1].facts[0].partitions[0].states == (OnlineReplica, OnlineReplica)


def test_errors_cross_between_the_actors_as_the_same_exceptions() -> None:
    moved = exception_of(raised_error(ControllerMovedError("Controller moved")))
    assert type(moved) is ControllerMovedError and str(moved) == "Controller moved"
    keeper = exception_of(raised_error(KeeperError("NOTEMPTY", "/brokers/topics/foo")))
    assert type(keeper) is KeeperError and (keeper.code, keeper.path) == ("NOTEMPTY", "/brokers/topics/foo")
    assert str(keeper) == "KeeperErrorCode = NOTEMPTY for /brokers/topics/foo"
    other = exception_of(RaisedError("ZeroDivisionError", "division by zero"))
    assert type(other) is RuntimeError and str(other) == "ZeroDivisionError: division by zero"
