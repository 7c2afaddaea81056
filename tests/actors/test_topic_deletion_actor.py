"""The TopicDeletionActor's message handling, and the ControllerActor's side of it: the controller's procedure waits
for the deletion actor's reply (no other event starts meanwhile) and serves the deletion actor's instructions while
it waits. Real actors on a runtime with a manual clock; stand-ins record what the actor under test sends."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from actors.base import KActor
from actors.clock import ManualClock
from actors.controller_actor import ControllerActor
from actors.runtime import Runtime
from actors.topic_deletion_actor import TopicDeletionActor
from core.controller.config import ControllerConfig
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
from messages import controller_events as ev
from messages.broker_lifecycle import ControllerInit
from messages.common import PartitionAndReplica, ReplicaAssignment, TopicPartition
from messages.observability import TopicDeletionProgress
from messages.topic_deletion import (
    CompleteReplicaDeletion,
    ControllerInstructionReply,
    ControllerInstructionRequest,
    DeleteTopic,
    DeletionInstruction,
    DeletionQueueChange,
    DeletionStimulus,
    EnqueueTopicsForDeletion,
    MutePartitionModifications,
    PartitionFacts,
    PartitionStateChanges,
    RaisedError,
    ReplicaStateChanges,
    SendMetadataUpdate,
    TopicDeletionManagerInit,
    TopicDeletionReply,
    TopicDeletionRequest,
    TopicFacts,
    TryTopicDeletion,
)
from messages.zk import CONTROLLER_MOVED, OK, Delete, GetChildren, ZkOpResult, ZkRequest, ZkResponse

EDGE = "edge:test"
T0 = 1_000_000.0
T0P0 = TopicPartition("t", 0)
REPLICAS = (PartitionAndReplica(T0P0, 1), PartitionAndReplica(T0P0, 2))


class Sink(KActor):
    """A stand-in: records every message it is sent, decides nothing."""

    def on_start(self) -> None:
        self.got: list[Any] = []

    def on_unhandled(self, body: Any, sender: str) -> None:
        self.got.append(body)


def _runtime(actors: tuple[tuple[type, str], ...]) -> Runtime:
    rt = Runtime("deletion-test", clock=ManualClock(T0))
    for cls, name in actors:
        rt.spawn(cls, name)
    return rt


@pytest.fixture
def rt() -> Iterator[Runtime]:
    """The TopicDeletionActor under test; "controller" and "state-change-log" are stand-ins."""
    runtime = _runtime(((Sink, "controller"), (Sink, "state-change-log"), (TopicDeletionActor, "topic-deletion")))
    runtime.deliver("topic-deletion", TopicDeletionManagerInit(1, True), EDGE)
    try:
        yield runtime
    finally:
        runtime.shutdown()


def _got(rt: Runtime, name: str) -> list[Any]:
    return rt.instances[name].got


def _facts(online: tuple[bool, bool] = (True, True), state: Any = OnlineReplica) -> tuple[TopicFacts, ...]:
    return (TopicFacts("t", (PartitionFacts(0, (1, 2), (state, state), online),)),)


def _ask(rt: Runtime, request_id: int, call: Any, facts: tuple[TopicFacts, ...] = (), epoch: int = 1) -> None:
    rt.deliver("topic-deletion", TopicDeletionRequest(request_id, DeletionStimulus(epoch, call, facts), "controller"),
               "controller")


def _instructions(rt: Runtime) -> list[ControllerInstructionRequest]:
    return [m for m in _got(rt, "controller") if isinstance(m, ControllerInstructionRequest)]


def _carry_out(rt: Runtime, answer: Any = None) -> Any:
    """Answer the last instruction the deletion actor sent (a replica transition: every replica made it)."""
    last = _instructions(rt)[-1]
    op = last.instruction.op
    if answer is None:
        answer = ControllerInstructionReply(last.request_id, () if isinstance(op, ReplicaStateChanges) else None)
    rt.deliver("topic-deletion", answer, "controller")
    return op


def test_enqueue_waits_for_each_instruction_in_kafkas_order_then_replies_with_the_queue(rt: Runtime) -> None:
    """enqueueTopicsForDeletion → resumeDeletions → onTopicDeletion: one instruction at a time, the next only once the
    controller answered the previous one; the reply carries the queue, the state-change log the progress."""
    _ask(rt, 7, EnqueueTopicsForDeletion(("t",)), _facts())
    ops = []
    while len(ops) < 6:
        assert not [m for m in _got(rt, "controller") if isinstance(m, TopicDeletionReply)]
        assert len(_instructions(rt)) == len(ops) + 1  # exactly one waits for the controller
        ops.append(_carry_out(rt))
    assert ops == [
        PartitionStateChanges((T0P0,), OfflinePartition), PartitionStateChanges((T0P0,), NonExistentPartition),
        SendMetadataUpdate((T0P0,)), ReplicaStateChanges((), ReplicaDeletionIneligible),
        ReplicaStateChanges(REPLICAS, OfflineReplica), ReplicaStateChanges(REPLICAS, ReplicaDeletionStarted)]
    # each instruction carries the queue as it was when it was sent: queued, then deletion started (after NonExistent)
    # each instruction tells the controller how the queue changed since it was last told: queued, then deletion
    # started (after NonExistent), then nothing more
    changes = [i.instruction.change for i in _instructions(rt)]
    assert changes == [DeletionQueueChange(queued=("t",)), DeletionQueueChange(),
                       DeletionQueueChange(deletion_started=("t",))] + [DeletionQueueChange()] * 3
    (reply,) = [m for m in _got(rt, "controller") if isinstance(m, TopicDeletionReply)]
    assert reply == TopicDeletionReply(7, DeletionQueueChange())
    assert _got(rt, "state-change-log") == [TopicDeletionProgress("t", "Queued"), TopicDeletionProgress("t", "Started")]
    manager = rt.instances["topic-deletion"].manager
    assert manager.replicas_in_state("t", ReplicaDeletionStarted) == set(REPLICAS)


def test_complete_replica_deletion_of_every_replica_deletes_the_topic(rt: Runtime) -> None:
    """completeReplicaDeletion of the last replicas → completeDeleteTopic: mute, NonExistentReplica, DeleteTopic with
    the topic already out of the queue (2.6's order); the reply's queue is empty."""
    _ask(rt, 1, EnqueueTopicsForDeletion(("t",)), _facts())
    for _ in range(6):
        _carry_out(rt)
    before = len(_instructions(rt))
    _ask(rt, 2, CompleteReplicaDeletion(REPLICAS), _facts(state=ReplicaDeletionStarted))
    ops = []
    while not [m for m in _got(rt, "controller") if isinstance(m, TopicDeletionReply) and m.request_id == 2]:
        ops.append(_carry_out(rt))
    assert ops[0] == ReplicaStateChanges(REPLICAS, ReplicaDeletionSuccessful)
    assert ops[1:] == [MutePartitionModifications("t"), ReplicaStateChanges(REPLICAS, NonExistentReplica),
                       DeleteTopic("t")]
    delete = _instructions(rt)[-1]
    assert delete.instruction.change == DeletionQueueChange(dequeued=("t",), deletion_start_cleared=("t",))
    assert len(_instructions(rt)) == before + 4
    assert _got(rt, "controller")[-1] == TopicDeletionReply(2, DeletionQueueChange())
    assert _got(rt, "state-change-log")[-1] == TopicDeletionProgress("t", "Completed")


def test_dead_replica_makes_the_topic_ineligible(rt: Runtime) -> None:
    """onPartitionDeletion: a replica that is not online → ReplicaDeletionIneligible, its topic halted."""
    _ask(rt, 1, EnqueueTopicsForDeletion(("t",)), _facts(online=(True, False)))
    ops = [_carry_out(rt) for _ in range(6)]
    assert ops[3:] == [ReplicaStateChanges(REPLICAS[1:], ReplicaDeletionIneligible),
                       ReplicaStateChanges(REPLICAS[:1], OfflineReplica),
                       ReplicaStateChanges(REPLICAS[:1], ReplicaDeletionStarted)]
    assert _got(rt, "controller")[-1] == TopicDeletionReply(1, DeletionQueueChange(ineligible=("t",)))
    assert _got(rt, "state-change-log")[-1] == TopicDeletionProgress("t", "Ineligible", "offline replicas")


def test_an_instruction_that_fails_fails_the_request(rt: Runtime) -> None:
    """A ControllerMovedError raised carrying out an instruction is thrown into the manager where it waited, and comes
    back to the controller in the reply (the controller's procedure then resigns, as when the error was its own)."""
    _ask(rt, 1, EnqueueTopicsForDeletion(("t",)), _facts())
    first = _instructions(rt)[-1]
    error = RaisedError("ControllerMovedError", "Controller epoch zkVersion check fails")
    _carry_out(rt, ControllerInstructionReply(first.request_id, None, error))
    assert len(_instructions(rt)) == 1 and first.instruction.change == DeletionQueueChange(queued=("t",))
    assert _got(rt, "controller")[-1] == TopicDeletionReply(1, DeletionQueueChange(), error)


def test_a_new_controller_epoch_starts_from_an_empty_queue(rt: Runtime) -> None:
    """The queue belongs to one controllership: a stimulus of a later epoch finds it empty (resetContext)."""
    _ask(rt, 1, EnqueueTopicsForDeletion(("t",)), _facts(online=(False, False)))
    for _ in range(6):
        _carry_out(rt)
    manager = rt.instances["topic-deletion"].manager
    assert manager.topics_to_be_deleted == {"t"}
    _ask(rt, 2, TryTopicDeletion(), _facts(), epoch=1)
    assert manager.topics_to_be_deleted == {"t"}
    n = len(_instructions(rt))
    _ask(rt, 3, TryTopicDeletion(), (), epoch=2)
    assert _got(rt, "controller")[-1] == TopicDeletionReply(3, DeletionQueueChange())
    assert manager.topics_to_be_deleted == set() and manager.topics_ineligible_for_deletion == set()
    assert len(_instructions(rt)) == n


def test_a_request_while_another_waits_drops_the_earlier_one(rt: Runtime) -> None:
    """The controller waits for one reply at a time, so a second request means it gave the first up: the first's
    late instruction answer is ignored and only the second is replied to."""
    _ask(rt, 1, EnqueueTopicsForDeletion(("t",)), _facts())
    stale = _instructions(rt)[-1]
    _ask(rt, 2, TryTopicDeletion(), _facts(), epoch=2)
    assert _got(rt, "controller")[-1] == TopicDeletionReply(2, DeletionQueueChange())
    rt.deliver("topic-deletion", ControllerInstructionReply(stale.request_id), "controller")
    assert [m.request_id for m in _got(rt, "controller") if isinstance(m, TopicDeletionReply)] == [2]


# -- the ControllerActor's side ---------------------------------------------------------------------------------------

class HeldZk(KActor):
    """Stands in for the ZkBridgeActor: keeps each request until the test answers it."""

    def on_start(self) -> None:
        self.requests: list[ZkRequest] = []

    def on_ZkRequest(self, msg: ZkRequest, sender: str) -> None:
        self.requests.append(msg)


@pytest.fixture
def crt() -> Iterator[Runtime]:
    """A ControllerActor (active for broker 1, topic t on brokers 1 and 2) with a stand-in deletion actor."""
    runtime = _runtime(((HeldZk, "zk"), (Sink, "timer"), (Sink, "state-change-log"), (Sink, "net"), (Sink, "metrics"),
                        (ControllerActor, "controller"), (Sink, "topic-deletion")))
    runtime.deliver("controller", ControllerInit(ControllerConfig(broker_id=1)), EDGE)
    core = runtime.instances["controller"].controller
    core.active_controller_id = 1
    core.ctx.all_topics.add("t")
    core.ctx.update_partition_full_replica_assignment(T0P0, ReplicaAssignment((1, 2)))
    for r in REPLICAS:
        core.ctx.put_replica_state(r, OnlineReplica)
    try:
        yield runtime
    finally:
        runtime.shutdown()


def _zk(rt: Runtime) -> list[ZkRequest]:
    return rt.instances["zk"].requests


def test_controller_gives_the_deletion_actor_its_config(crt: Runtime) -> None:
    assert _got(crt, "topic-deletion") == [TopicDeletionManagerInit(1, True)]


def test_controller_event_waits_for_the_deletion_reply_and_serves_instructions_meanwhile(crt: Runtime) -> None:
    """processTopicDeletion: the enqueue is a TopicDeletionRequest with the topic's facts; until its reply the next
    event waits in the queue, while an instruction of the deletion actor is carried out (its ZooKeeper write goes out
    and its answer comes back to the deletion actor); the reply's queue becomes the context's."""
    actor = crt.instances["controller"]
    crt.deliver("controller", ev.TopicDeletion(), EDGE)
    (children,) = _zk(crt)
    assert children.batch.ops == (GetChildren("/admin/delete_topics"),)
    crt.deliver("controller", ZkResponse(children.request_id, (ZkOpResult(OK, children=("t",)),)), "zk")
    (request,) = [m for m in _got(crt, "topic-deletion") if isinstance(m, TopicDeletionRequest)]
    assert request.stimulus == DeletionStimulus(0, EnqueueTopicsForDeletion(("t",)), (
        TopicFacts("t", (PartitionFacts(0, (1, 2), (OnlineReplica, OnlineReplica), (False, False)),)),))
    crt.deliver("controller", ev.TopicDeletion(), EDGE)  # queued behind the waiting event
    assert len(actor.queue) == 1 and len(_zk(crt)) == 1

    # an instruction while the event waits: DeleteTopic's fenced delete goes to ZooKeeper, the topic leaves the context
    instruction = DeletionInstruction(DeleteTopic("t"), DeletionQueueChange())
    crt.deliver("controller", ControllerInstructionRequest(5, instruction, "topic-deletion"), "topic-deletion")
    delete = _zk(crt)[-1]
    assert delete.batch.ops == (Delete("/brokers/topics/t", recursive=True),)
    crt.deliver("controller", ZkResponse(delete.request_id, (ZkOpResult(CONTROLLER_MOVED),)), "zk")
    assert _got(crt, "topic-deletion")[-1] == ControllerInstructionReply(5, None, RaisedError(
        "ControllerMovedError", "Controller epoch zkVersion check fails. Expected zkVersion = 0"))
    assert "t" in actor.controller.ctx.all_topics and len(actor.queue) == 1

    change = DeletionQueueChange(("t",), deletion_started=("t",))
    crt.deliver("controller", TopicDeletionReply(request.request_id, change), "topic-deletion")
    ctx = actor.controller.ctx
    assert ctx.topics_to_be_deleted == {"t"} and ctx.topics_with_deletion_started == {"t"}
    # the first event is done; the queued one started: its own /admin/delete_topics read
    assert not actor.queue and actor.current is not None and len(_zk(crt)) == 3
    assert _zk(crt)[-1].batch.ops == (GetChildren("/admin/delete_topics"),)


def test_a_failed_deletion_reply_is_raised_in_the_controller_procedure(crt: Runtime) -> None:
    """A reply with ControllerMovedError → the event's procedure resigns (maybeResign), as if it had raised it."""
    actor = crt.instances["controller"]
    crt.deliver("controller", ev.TopicDeletion(), EDGE)
    (children,) = _zk(crt)
    crt.deliver("controller", ZkResponse(children.request_id, (ZkOpResult(OK, children=("t",)),)), "zk")
    (request,) = [m for m in _got(crt, "topic-deletion") if isinstance(m, TopicDeletionRequest)]
    crt.deliver("controller", TopicDeletionReply(request.request_id, DeletionQueueChange(("t",)),
                                                 RaisedError("ControllerMovedError", "moved")), "topic-deletion")
    # maybeResign reads /controller
    assert _zk(crt)[-1].batch.ops[0].path == "/controller"
    assert actor.controller.ctx.topics_to_be_deleted == set()


def test_the_facts_give_each_replicas_liveness(crt: Runtime) -> None:
    """The facts give each replica's liveness as isReplicaOnline has it (here: brokers 1 and 2 live)."""
    from messages.common import Broker, EndPoint

    ctx = crt.instances["controller"].controller.ctx
    ctx.set_live_brokers({Broker(b, (EndPoint("h", 9090 + b),), None, 1): 1 for b in (1, 2)})
    crt.deliver("controller", ev.TopicDeletion(), EDGE)
    (children,) = _zk(crt)
    crt.deliver("controller", ZkResponse(children.request_id, (ZkOpResult(OK, children=("t",)),)), "zk")
    (request,) = [m for m in _got(crt, "topic-deletion") if isinstance(m, TopicDeletionRequest)]
    assert request.stimulus.facts[0].partitions[0].online == (True, True)
