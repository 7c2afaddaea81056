"""The controller's side of topic deletion: how KafkaController calls the TopicDeletionActor's TopicDeletionManager
(`RemoteTopicDeletionManager`) and how it carries out what the manager asks of it (`ControllerDeletionClient`).

Kafka's TopicDeletionManager is called synchronously by the controller's event procedures and calls back into the
state machines and the DeletionClient. Here each call is a `DeletionStimulus` effect the procedure waits on (the
ControllerActor sends it to the TopicDeletionActor as it sends a ZkBatch to ZooKeeper), and each call back is a
`DeletionInstruction` the controller carries out while the procedure waits. `answer_deletions` does both in one
generator (unit tests, and anything that runs the controller core without actors).

The controller's context keeps a copy of the deletion queue, as the deletion actor sends it with every instruction
and reply: the controller reads it synchronously (isTopicQueuedUpForDeletion, the offline-partition and preferred
imbalance counts, the gauges), and a call that the manager would ignore by Kafka's own guards is not sent at all.

The deletion actor keeps what it was told of each queued topic (partitions, replica states, liveness) and updates it
from its own transitions' answers; the controller remembers the same (`SentFacts`) and sends a topic's facts again only
when they changed otherwise (a broker failed or came back, a reassignment, another controllership): a StopReplica
answer during a 5,000-partition deletion carries no facts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

from core.controller.context import ControllerContext
from core.controller.partition_state_machine import ordered
from core.controller.states import NonExistentReplica, ReplicaState
from core.controller.topic_deletion import TopicDeletionManager
from core.effects import Proc
from messages.common import PartitionAndReplica, TopicPartition
from messages.topic_deletion import (
    CompleteReplicaDeletion,
    DeleteTopic,
    DeleteTopicDeletions,
    DeletionInstruction,
    DeletionQueueChange,
    DeletionStimulus,
    EnqueueTopicsForDeletion,
    FailReplicaDeletion,
    InitTopicDeletion,
    MarkTopicIneligibleForDeletion,
    MutePartitionModifications,
    PartitionFacts,
    PartitionStateChanges,
    ReplicaFact,
    ReplicaStateChanges,
    ResumeDeletionForTopics,
    SendMetadataUpdate,
    TopicFacts,
    TryTopicDeletion,
)

R = TypeVar("R")


class DeletionClient(Protocol):
    """kafka.controller.DeletionClient: the controller operations the deletion manager needs."""

    def delete_topic(self, topic: str, epoch_zk_version: int) -> Proc[None]: ...

    def delete_topic_deletions(self, topics: Iterable[str], epoch_zk_version: int) -> Proc[None]: ...

    def mute_partition_modifications(self, topic: str) -> None: ...

    def send_metadata_update(self, partitions: Iterable[TopicPartition]) -> Proc[None]: ...


def adopt_queue_change(ctx: ControllerContext, change: DeletionQueueChange) -> None:
    """Make the context's deletion sets the deletion actor's: newly queued topics go through queueTopicDeletion
    (which keeps the preferred-imbalance count), the rest is applied as it comes."""
    ctx.queue_topic_deletion(change.queued)
    ctx.topics_to_be_deleted.difference_update(change.dequeued)
    ctx.topics_with_deletion_started.update(change.deletion_started)
    ctx.topics_with_deletion_started.difference_update(change.deletion_start_cleared)
    ctx.topics_ineligible_for_deletion.update(change.ineligible)
    ctx.topics_ineligible_for_deletion.difference_update(change.eligible_again)


def missed_transitions(ctx: ControllerContext, replicas: Iterable[PartitionAndReplica],
                       target: ReplicaState) -> tuple[ReplicaFact, ...]:
    """The replicas not in ``target`` after a transition to it (a replica without a state is NonExistentReplica)."""
    states = ctx.replica_states
    out: list[ReplicaFact] = []
    for r in replicas:
        state = states.get(r, NonExistentReplica)
        if state != target:
            out.append(ReplicaFact(r, state, ctx.is_replica_online(r.replica, r.topic_partition)))
    return tuple(out)


def topic_facts(ctx: ControllerContext, topics: Iterable[str]) -> tuple[TopicFacts, ...]:
    """partitionsForTopic and every replica of replicasForTopic with its state and liveness, per topic."""
    states = ctx.replica_states
    out: list[TopicFacts] = []
    for topic in topics:
        partitions: list[PartitionFacts] = []
        for tp in sorted(ctx.partitions_for_topic(topic)):
            replicas = ctx.partition_replica_assignment(tp)
            partitions.append(PartitionFacts(
                tp.partition, replicas,
                tuple(states.get(PartitionAndReplica(tp, r), NonExistentReplica) for r in replicas),
                tuple(ctx.is_replica_online(r, tp) for r in replicas)))
        out.append(TopicFacts(topic, tuple(partitions)))
    return tuple(out)


class SentFacts:
    """The facts of each queued topic as the deletion actor has them: those sent, updated by the answers to its
    replica transitions. Both sides forget a topic when it leaves the queue, and everything at a new controller
    epoch."""

    def __init__(self) -> None:
        self.epoch: int | None = None
        self.topics: dict[str, TopicFacts] = {}

    def changed(self, ctx: ControllerContext, topics: Iterable[str]) -> tuple[TopicFacts, ...]:
        """The facts of ``topics`` that differ from what the deletion actor has; they are taken as sent."""
        if ctx.epoch != self.epoch:
            self.epoch = ctx.epoch
            self.topics = {}
        out = tuple(f for f in topic_facts(ctx, topics) if self.topics.get(f.topic) != f)
        for f in out:
            self.topics[f.topic] = f
        return out

    def answered(self, replicas: Iterable[PartitionAndReplica], target: ReplicaState,
                 missed: tuple[ReplicaFact, ...]) -> None:
        """The deletion actor takes ``replicas`` to be in ``target`` now, except the ``missed`` ones."""
        after: dict[str, dict[TopicPartition, dict[int, ReplicaState]]] = {}
        for r in replicas:
            after.setdefault(r.topic_partition.topic, {}).setdefault(r.topic_partition, {})[r.replica] = target
        for f in missed:
            after[f.replica.topic_partition.topic][f.replica.topic_partition][f.replica.replica] = f.state
        for topic, by_partition in after.items():
            old = self.topics.get(topic)
            if old is None:
                continue
            partitions = []
            for pf in old.partitions:
                new = by_partition.get(TopicPartition(topic, pf.partition))
                if new is not None:
                    pf = PartitionFacts(pf.partition, pf.replicas, tuple(new.get(r, state) for r, state in
                                                                         zip(pf.replicas, pf.states, strict=True)),
                                        pf.online)
                partitions.append(pf)
            self.topics[topic] = TopicFacts(topic, tuple(partitions))

    def forget_all_but(self, queued: set[str]) -> None:
        for topic in [t for t in self.topics if t not in queued]:
            del self.topics[topic]


class RemoteTopicDeletionManager:
    """TopicDeletionManager's public API as KafkaController calls it: each call that the manager would act on is a
    `DeletionStimulus` the procedure waits on; the reply's queue becomes the context's."""

    def __init__(self, config: Any, ctx: ControllerContext, sent: SentFacts) -> None:
        self.ctx = ctx
        self.sent = sent
        self.is_delete_topic_enabled: bool = bool(config.delete_topic_enable)

    def _call(self, call: Any, topics: Iterable[str] = ()) -> Proc[None]:
        ctx = self.ctx
        facts = self.sent.changed(ctx, ordered(ctx.topics_to_be_deleted | set(topics)))
        try:
            change = yield DeletionStimulus(ctx.epoch, call, facts)
            adopt_queue_change(ctx, change)
        finally:
            self.sent.forget_all_but(ctx.topics_to_be_deleted)

    def _queued(self, topics: Iterable[str]) -> list[str]:
        return ordered(set(topics) & self.ctx.topics_to_be_deleted)

    def init(self, initial_topics_to_be_deleted: Iterable[str],
             initial_topics_ineligible_for_deletion: Iterable[str]) -> Proc[None]:
        """TopicDeletionManager.init (nothing to queue or to remove: nothing to send)."""
        to_delete = ordered(set(initial_topics_to_be_deleted))
        if to_delete:
            yield from self._call(InitTopicDeletion(tuple(to_delete),
                                                    tuple(ordered(set(initial_topics_ineligible_for_deletion)))))

    def try_topic_deletion(self) -> Proc[None]:
        """TopicDeletionManager.tryTopicDeletion (resumeDeletions of a non-empty queue)."""
        if self.is_delete_topic_enabled and self.ctx.topics_to_be_deleted:
            yield from self._call(TryTopicDeletion())

    def enqueue_topics_for_deletion(self, topics: Iterable[str]) -> Proc[None]:
        """TopicDeletionManager.enqueueTopicsForDeletion."""
        if self.is_delete_topic_enabled:
            topics = ordered(set(topics))
            yield from self._call(EnqueueTopicsForDeletion(tuple(topics)), topics)

    def resume_deletion_for_topics(self, topics: Iterable[str] = ()) -> Proc[None]:
        """TopicDeletionManager.resumeDeletionForTopics (of the queued topics among ``topics``)."""
        if self.is_delete_topic_enabled:
            queued = self._queued(topics)
            if queued:
                yield from self._call(ResumeDeletionForTopics(tuple(queued)))

    def fail_replica_deletion(self, replicas: Iterable[PartitionAndReplica]) -> Proc[None]:
        """TopicDeletionManager.failReplicaDeletion (of the replicas of queued topics)."""
        if self.is_delete_topic_enabled:
            queued = self.ctx.topics_to_be_deleted
            failed = [r for r in ordered(set(replicas)) if r.topic_partition.topic in queued]
            if failed:
                yield from self._call(FailReplicaDeletion(tuple(failed)))

    def complete_replica_deletion(self, replicas: Iterable[PartitionAndReplica]) -> Proc[None]:
        """TopicDeletionManager.completeReplicaDeletion (resumeDeletions runs even when no replica is of a queued
        topic; with nothing queued it does nothing)."""
        if self.ctx.topics_to_be_deleted:
            yield from self._call(CompleteReplicaDeletion(tuple(ordered(set(replicas)))))

    def mark_topic_ineligible_for_deletion(self, topics: Iterable[str], reason: str) -> Proc[None]:
        """TopicDeletionManager.markTopicIneligibleForDeletion (of the queued topics among ``topics``)."""
        if self.is_delete_topic_enabled:
            queued = self._queued(topics)
            if queued:
                yield from self._call(MarkTopicIneligibleForDeletion(tuple(queued), reason))

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        """TopicDeletionManager.isTopicQueuedUpForDeletion (always false with deletion disabled)."""
        return self.is_delete_topic_enabled and topic in self.ctx.topics_to_be_deleted


class ControllerDeletionClient:
    """Carries out the deletion manager's instructions: Kafka's ControllerDeletionClient and the replica and
    partition state machines the manager calls."""

    def __init__(self, ctx: ControllerContext, replica_state_machine: Any, partition_state_machine: Any,
                 client: DeletionClient, sent: SentFacts) -> None:
        self.ctx = ctx
        self.sent = sent
        self.replica_state_machine = replica_state_machine
        self.partition_state_machine = partition_state_machine
        self.client = client

    def carry_out(self, instruction: DeletionInstruction) -> Proc[Any]:
        ctx = self.ctx
        adopt_queue_change(ctx, instruction.change)
        op = instruction.op
        if isinstance(op, ReplicaStateChanges):
            yield from self.replica_state_machine.handle_state_changes(list(op.replicas), op.target)
            missed = missed_transitions(ctx, op.replicas, op.target)
            self.sent.answered(op.replicas, op.target, missed)
            return missed
        if isinstance(op, PartitionStateChanges):
            yield from self.partition_state_machine.handle_state_changes(list(op.partitions), op.target)
        elif isinstance(op, SendMetadataUpdate):
            yield from self.client.send_metadata_update(list(op.partitions))
        elif isinstance(op, MutePartitionModifications):
            self.client.mute_partition_modifications(op.topic)
        elif isinstance(op, DeleteTopic):
            yield from self.client.delete_topic(op.topic, ctx.epoch_zk_version)
            ctx.remove_topic(op.topic)
            self.sent.topics.pop(op.topic, None)
        elif isinstance(op, DeleteTopicDeletions):
            yield from self.client.delete_topic_deletions(list(op.topics), ctx.epoch_zk_version)
        else:
            raise TypeError(f"not a deletion instruction: {type(op).__name__}")
        return None


def answering(proc: Proc[R], effect_type: type, answer: Callable[[Any], Proc[Any]]) -> Proc[R]:
    """``proc`` with its ``effect_type`` effects answered by the procedure ``answer(effect)`` (whose own effects pass
    through); an exception ``answer`` raises is thrown into ``proc`` where it yielded, as a callee's would be."""
    value: Any = None
    error: BaseException | None = None
    try:
        while True:
            try:
                effect = proc.throw(error) if error is not None else proc.send(value)
            except StopIteration as stop:
                return stop.value
            value, error = None, None
            if isinstance(effect, effect_type):
                try:
                    value = yield from answer(effect)
                except Exception as e:  # noqa: BLE001 - it belongs to proc, which decides
                    error = e
            else:
                try:
                    value = yield effect
                except Exception as e:  # noqa: BLE001 - thrown in by the driver: proc's
                    error = e
    finally:
        proc.close()


def answer_deletions(proc: Proc[R], manager: TopicDeletionManager, client: ControllerDeletionClient) -> Proc[R]:
    """Run controller procedure ``proc`` with its deletion calls answered by ``manager`` here, in one generator: what
    the ControllerActor and the TopicDeletionActor do with messages."""
    return (yield from answering(proc, DeletionStimulus,
                                 lambda s: answering(manager.handle(s), DeletionInstruction, client.carry_out)))

