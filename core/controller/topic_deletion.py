"""TopicDeletionManager (kafka.controller.TopicDeletionManager, Kafka 2.6; reference §8.1): the TopicDeletionActor's
core.

It owns the deletion queue (topicsToBeDeleted, topicsWithDeletionStarted, topicsIneligibleForDeletion) and tracks
every replica of a queued topic through ReplicaDeletionStarted / ReplicaDeletionSuccessful /
ReplicaDeletionIneligible. It is called with a `DeletionStimulus`: one of Kafka's public calls plus the facts of the
topics involved (partitions, replica states, liveness, as the controller's context has them; only those that changed
since it was last told). It is a procedure: every step it needs of the controller — a replica or partition state
transition, a znode delete, an UpdateMetadata — is a `DeletionInstruction` it yields and is resumed with the outcome
of (a replica transition's answer is the replicas' states after it). Records for the state-change log are
`StateChange` effects. Deletion advances only on stimuli (StopReplica responses, broker startup, reassignment
completion, failover): there is no timer.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from core.controller.partition_state_machine import ordered
from core.controller.states import (
    NonExistentPartition,
    NonExistentReplica,
    OfflinePartition,
    OfflineReplica,
    ReplicaDeletionIneligible,
    ReplicaDeletionStarted,
    ReplicaDeletionSuccessful,
    ReplicaState,
)
from core.effects import Proc, StateChange
from messages.common import PartitionAndReplica, TopicPartition
from messages.observability import TopicDeletionProgress
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
    PartitionStateChanges,
    ReplicaFact,
    ReplicaStateChanges,
    ResumeDeletionForTopics,
    SendMetadataUpdate,
    TopicFacts,
    TryTopicDeletion,
)

log = logging.getLogger("kactor.controller.topic_deletion")


class _TopicView:
    """One topic as the deletion manager tracks it: its partitions, each replica's state and liveness."""

    __slots__ = ("partitions", "states", "online")

    def __init__(self, facts: TopicFacts) -> None:
        self.partitions: set[TopicPartition] = set()
        self.states: dict[PartitionAndReplica, ReplicaState] = {}
        self.online: set[PartitionAndReplica] = set()
        for pf in facts.partitions:
            tp = TopicPartition(facts.topic, pf.partition)
            self.partitions.add(tp)
            for r, state, online in zip(pf.replicas, pf.states, pf.online, strict=True):
                replica = PartitionAndReplica(tp, r)
                self.states[replica] = state
                if online:
                    self.online.add(replica)


class TopicDeletionManager:
    """Mirrors TopicDeletionManager(config, controllerContext, replicaStateMachine, partitionStateMachine, client):
    the three topic sets are its own; the state machines and the client are the controller, reached by instructions."""

    def __init__(self, broker_id: int, delete_topic_enable: bool) -> None:
        self.broker_id = broker_id
        self.is_delete_topic_enabled = bool(delete_topic_enable)
        self.controller_epoch: int | None = None
        self.topics_to_be_deleted: set[str] = set()
        self.topics_with_deletion_started: set[str] = set()
        self.topics_ineligible_for_deletion: set[str] = set()
        self._topics: dict[str, _TopicView] = {}
        # the sets as the controller was last told them (queued, deletion started, ineligible)
        self._told: tuple[set[str], set[str], set[str]] = (set(), set(), set())

    # -- the stimulus ------------------------------------------------------------------------------------------------
    def handle(self, stimulus: DeletionStimulus) -> Proc[DeletionQueueChange]:
        """Run one of Kafka's public calls; returns its queue's change since the controller was last told. A stimulus
        of another controller epoch than the last one comes from a new controllership: the queue starts empty (Kafka's
        resetContext)."""
        if stimulus.controller_epoch != self.controller_epoch:
            self.reset()
            self.controller_epoch = stimulus.controller_epoch
        for f in stimulus.facts:
            self._topics[f.topic] = _TopicView(f)
        try:
            yield from self._call(stimulus.call)
        finally:
            # a topic's facts are kept while it is queued (the controller sends them again only when they change)
            for topic in [t for t in self._topics if t not in self.topics_to_be_deleted]:
                del self._topics[topic]
        return self.queue_change()

    def _call(self, call: Any) -> Proc[None]:
        if isinstance(call, EnqueueTopicsForDeletion):
            yield from self.enqueue_topics_for_deletion(call.topics)
        elif isinstance(call, CompleteReplicaDeletion):
            yield from self.complete_replica_deletion(call.replicas)
        elif isinstance(call, FailReplicaDeletion):
            yield from self.fail_replica_deletion(call.replicas)
        elif isinstance(call, ResumeDeletionForTopics):
            yield from self.resume_deletion_for_topics(call.topics)
        elif isinstance(call, MarkTopicIneligibleForDeletion):
            yield from self.mark_topic_ineligible_for_deletion(call.topics, call.reason)
        elif isinstance(call, InitTopicDeletion):
            yield from self.init(call.topics_to_be_deleted, call.topics_ineligible_for_deletion)
        elif isinstance(call, TryTopicDeletion):
            yield from self.try_topic_deletion()
        else:
            raise TypeError(f"not a TopicDeletionManager call: {type(call).__name__}")

    def queue_change(self) -> DeletionQueueChange:
        """How the queue changed since the controller was last told; it is told now."""
        now = (self.topics_to_be_deleted, self.topics_with_deletion_started, self.topics_ineligible_for_deletion)
        added_removed: list[tuple[str, ...]] = []
        for current, told in zip(now, self._told, strict=True):
            added_removed += [tuple(sorted(current - told)), tuple(sorted(told - current))]
        change = DeletionQueueChange(*added_removed)
        self._told = (set(self.topics_to_be_deleted), set(self.topics_with_deletion_started),
                      set(self.topics_ineligible_for_deletion))
        return change

    def reset(self) -> None:
        """TopicDeletionManager.reset (≤ 2.3; in 2.6 resetContext empties the sets): forget the queue (the controller
        of the next epoch starts from an empty context too)."""
        self.topics_to_be_deleted.clear()
        self.topics_with_deletion_started.clear()
        self.topics_ineligible_for_deletion.clear()
        self._told = (set(), set(), set())
        self._topics = {}

    def _instruct(self, op: Any) -> Proc[Any]:
        return (yield DeletionInstruction(op, self.queue_change()))

    def _replica_state_changes(self, replicas: list[PartitionAndReplica], target: ReplicaState) -> Proc[None]:
        missed: tuple[ReplicaFact, ...] = yield from self._instruct(ReplicaStateChanges(tuple(replicas), target))
        for r in replicas:
            view = self._topics.get(r.topic_partition.topic)
            if view is not None and r in view.states:
                view.states[r] = target
        for f in missed:
            view = self._topics.get(f.replica.topic_partition.topic)
            if view is not None and f.replica in view.states:
                view.states[f.replica] = f.state

    # -- public API --------------------------------------------------------------------------------------------------
    def init(self, initial_topics_to_be_deleted: Iterable[str],
             initial_topics_ineligible_for_deletion: Iterable[str]) -> Proc[None]:
        """TopicDeletionManager.init: queue the topics (and mark the ineligible ones among them); with deletion
        disabled, delete their /admin/delete_topics/<t> nodes instead."""
        to_delete = set(initial_topics_to_be_deleted)
        ineligible = set(initial_topics_ineligible_for_deletion)
        log.info("Initializing manager with initial deletions: %s, initial ineligible deletions: %s",
                 sorted(to_delete), sorted(ineligible))
        if self.is_delete_topic_enabled:
            self.topics_to_be_deleted.update(to_delete)
            self.topics_ineligible_for_deletion.update(ineligible & self.topics_to_be_deleted)
        else:
            # if delete topic is disabled clean the topic entries under /admin/delete_topics
            log.info("Removing %s since delete topic is disabled", sorted(to_delete))
            yield from self._instruct(DeleteTopicDeletions(tuple(ordered(to_delete))))

    def try_topic_deletion(self) -> Proc[None]:
        """TopicDeletionManager.tryTopicDeletion (controller failover)."""
        if self.is_delete_topic_enabled:
            yield from self.resume_deletions()

    def enqueue_topics_for_deletion(self, topics: Iterable[str]) -> Proc[None]:
        """TopicDeletionManager.enqueueTopicsForDeletion: queue the topics, then resumeDeletions()."""
        if self.is_delete_topic_enabled:
            new = [t for t in ordered(set(topics)) if t not in self.topics_to_be_deleted]
            self.topics_to_be_deleted.update(new)
            for t in new:
                yield StateChange(TopicDeletionProgress(t, "Queued"))
            yield from self.resume_deletions()

    def resume_deletion_for_topics(self, topics: Iterable[str] = ()) -> Proc[None]:
        """TopicDeletionManager.resumeDeletionForTopics: queued topics among ``topics`` become eligible again."""
        if self.is_delete_topic_enabled:
            to_resume = set(topics) & self.topics_to_be_deleted
            if to_resume:
                self.topics_ineligible_for_deletion -= to_resume
                yield from self.resume_deletions()

    def fail_replica_deletion(self, replicas: Iterable[PartitionAndReplica]) -> Proc[None]:
        """TopicDeletionManager.failReplicaDeletion: replicas of queued topics → ReplicaDeletionIneligible, their
        topics ineligible ("replica deletion failure"), then resumeDeletions()."""
        if self.is_delete_topic_enabled:
            failed = [r for r in ordered(set(replicas)) if self._is_replica_of_queued_topic(r)]
            if failed:
                topics = {r.topic_partition.topic for r in failed}
                log.debug("Deletion failed for replicas %s. Halting deletion for topics %s", failed, sorted(topics))
                yield from self._replica_state_changes(failed, ReplicaDeletionIneligible)
                yield from self.mark_topic_ineligible_for_deletion(topics, "replica deletion failure")
                yield from self.resume_deletions()

    def mark_topic_ineligible_for_deletion(self, topics: Iterable[str], reason: str) -> Proc[None]:
        """TopicDeletionManager.markTopicIneligibleForDeletion: (topics ∩ queued) → ineligible."""
        if self.is_delete_topic_enabled:
            new_halted = self.topics_to_be_deleted & set(topics)
            fresh = new_halted - self.topics_ineligible_for_deletion
            self.topics_ineligible_for_deletion |= new_halted
            if new_halted:
                log.info("Halted deletion of topics %s due to %s", ",".join(sorted(new_halted)), reason)
            for t in sorted(fresh):
                yield StateChange(TopicDeletionProgress(t, "Ineligible", reason))

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        """TopicDeletionManager.isTopicQueuedUpForDeletion (always false with deletion disabled)."""
        return self.is_delete_topic_enabled and topic in self.topics_to_be_deleted

    def complete_replica_deletion(self, replicas: Iterable[PartitionAndReplica]) -> Proc[None]:
        """TopicDeletionManager.completeReplicaDeletion: replicas of queued topics → ReplicaDeletionSuccessful, then
        resumeDeletions()."""
        deleted = [r for r in ordered(set(replicas)) if self._is_replica_of_queued_topic(r)]
        log.debug("Deletion successfully completed for replicas %s", deleted)
        yield from self._replica_state_changes(deleted, ReplicaDeletionSuccessful)
        yield from self.resume_deletions()

    # -- the tracked replicas ----------------------------------------------------------------------------------------
    def _view(self, topic: str) -> _TopicView | None:
        return self._topics.get(topic)

    def replicas_in_state(self, topic: str, state: ReplicaState) -> set[PartitionAndReplica]:
        view = self._view(topic)
        return set() if view is None else {r for r, s in view.states.items() if s == state}

    def _are_all_replicas_in_state(self, topic: str, state: ReplicaState) -> bool:
        view = self._view(topic)
        return view is None or all(s == state for s in view.states.values())

    def _is_any_replica_in_state(self, topic: str, state: ReplicaState) -> bool:
        view = self._view(topic)
        return view is not None and any(s == state for s in view.states.values())

    # -- predicates --------------------------------------------------------------------------------------------------
    def _is_replica_of_queued_topic(self, replica: PartitionAndReplica) -> bool:
        """Kafka 2.6 checks the topic only. kactor also requires the replica to be in the partition's assignment: a
        late StopReplica answer for a replica a finished reassignment removed would otherwise give it a replica state
        outside every assignment, which the context keeps for ever."""
        view = self._view(replica.topic_partition.topic)
        return (self.is_topic_queued_up_for_deletion(replica.topic_partition.topic)
                and view is not None and replica in view.states)

    def _is_topic_ineligible_for_deletion(self, topic: str) -> bool:
        if self.is_delete_topic_enabled:
            return topic in self.topics_ineligible_for_deletion
        return True

    def _is_topic_deletion_in_progress(self, topic: str) -> bool:
        if self.is_delete_topic_enabled:
            return self._is_any_replica_in_state(topic, ReplicaDeletionStarted)
        return False

    def _is_topic_eligible_for_deletion(self, topic: str) -> bool:
        """isTopicEligibleForDeletion: queued, no replica in ReplicaDeletionStarted, not ineligible."""
        return (topic in self.topics_to_be_deleted and not self._is_topic_deletion_in_progress(topic)
                and not self._is_topic_ineligible_for_deletion(topic))

    # -- internals ---------------------------------------------------------------------------------------------------
    def _retry_deletion_for_ineligible_replicas(self, topics: Iterable[str]) -> Proc[None]:
        """retryDeletionForIneligibleReplicas: ReplicaDeletionIneligible replicas → OfflineReplica."""
        failed: list[PartitionAndReplica] = []
        for t in ordered(set(topics)):
            failed.extend(sorted(self.replicas_in_state(t, ReplicaDeletionIneligible)))
        log.debug("Retrying deletion of topics %s since replicas %s were not successfully deleted",
                  sorted(set(topics)), failed)
        yield from self._replica_state_changes(failed, OfflineReplica)

    def _complete_delete_topic(self, topic: str) -> Proc[None]:
        """completeDeleteTopic (Kafka 2.6): mute PartitionModifications, successful replicas → NonExistentReplica,
        the topic leaves topicsToBeDeleted and topicsWithDeletionStarted, its znodes are deleted (fenced), then it
        leaves the rest of the context (removeTopic, with the znode deletes). The sets are left before the znodes are
        deleted, as in 2.6: a deletion whose znode deletes fail is picked up again by the next TopicDeletion event or
        controller failover (the /admin/delete_topics marker goes last and survives the failure)."""
        yield from self._instruct(MutePartitionModifications(topic))
        replicas = sorted(self.replicas_in_state(topic, ReplicaDeletionSuccessful))
        yield from self._replica_state_changes(replicas, NonExistentReplica)
        self.topics_to_be_deleted.discard(topic)
        self.topics_with_deletion_started.discard(topic)
        yield from self._instruct(DeleteTopic(topic))
        self._topics.pop(topic, None)
        yield StateChange(TopicDeletionProgress(topic, "Completed"))

    def _on_topic_deletion(self, topics: set[str]) -> Proc[None]:
        """onTopicDeletion: first time → partitions Offline → NonExistent, then mark deletion started; UpdateMetadata
        (leader −2) for all the topics' partitions; onPartitionDeletion."""
        unseen = sorted(topics - self.topics_with_deletion_started)
        if unseen:
            unseen_partitions: list[TopicPartition] = []
            for t in unseen:
                unseen_partitions.extend(sorted(self._partitions_for_topic(t)))
            yield from self._instruct(PartitionStateChanges(tuple(unseen_partitions), OfflinePartition))
            yield from self._instruct(PartitionStateChanges(tuple(unseen_partitions), NonExistentPartition))
            # after the partition moves, so the offline-partition count is decremented correctly
            self.topics_with_deletion_started.update(unseen)
            for t in unseen:
                yield StateChange(TopicDeletionProgress(t, "Started"))
        partitions: list[TopicPartition] = []
        for t in sorted(topics):
            partitions.extend(sorted(self._partitions_for_topic(t)))
        # send update metadata so that brokers stop serving data for topics to be deleted
        yield from self._instruct(SendMetadataUpdate(tuple(partitions)))
        yield from self._on_partition_deletion(topics)

    def _partitions_for_topic(self, topic: str) -> set[TopicPartition]:
        view = self._view(topic)
        return set() if view is None else view.partitions

    def _on_partition_deletion(self, topics_to_be_deleted: set[str]) -> Proc[None]:
        """onPartitionDeletion: dead replicas → ReplicaDeletionIneligible; the others (not yet successful) →
        OfflineReplica → ReplicaDeletionStarted; topics with dead replicas become ineligible."""
        all_dead: list[PartitionAndReplica] = []
        all_retry: list[PartitionAndReplica] = []
        ineligible: set[str] = set()
        for topic in sorted(topics_to_be_deleted):
            view = self._view(topic)
            replicas = sorted(view.states) if view is not None else []
            online = view.online if view is not None else set()
            alive = [r for r in replicas if r in online]
            dead = [r for r in replicas if r not in online]
            successful = self.replicas_in_state(topic, ReplicaDeletionSuccessful)
            all_dead.extend(dead)
            all_retry.extend(r for r in alive if r not in successful)
            if dead:
                log.debug("Dead Replicas (%s) found for topic %s", dead, topic)
                ineligible.add(topic)
        yield from self._replica_state_changes(all_dead, ReplicaDeletionIneligible)
        # send stop replica to all followers that are not in the OfflineReplica state so they stop fetching
        yield from self._replica_state_changes(all_retry, OfflineReplica)
        yield from self._replica_state_changes(all_retry, ReplicaDeletionStarted)
        if ineligible:
            yield from self.mark_topic_ineligible_for_deletion(ineligible, "offline replicas")

    def resume_deletions(self) -> Proc[None]:
        """resumeDeletions: complete topics whose replicas are all deleted; retry topics with ineligible replicas
        and none in progress; (re)start deletion of eligible topics."""
        queued = sorted(self.topics_to_be_deleted)
        retry: set[str] = set()
        eligible: set[str] = set()
        if queued:
            log.info("Handling deletion for topics %s", ",".join(queued))
        for topic in queued:
            if self._are_all_replicas_in_state(topic, ReplicaDeletionSuccessful):
                # clear up all state for this topic from controller cache and zookeeper
                yield from self._complete_delete_topic(topic)
                log.info("Deletion of topic %s successfully completed", topic)
            elif (not self._is_any_replica_in_state(topic, ReplicaDeletionStarted)
                  and self._is_any_replica_in_state(topic, ReplicaDeletionIneligible)):
                # no replica in progress and not all successful, some replica failed → retry
                retry.add(topic)
            if self._is_topic_eligible_for_deletion(topic):
                log.info("Deletion of topic %s (re)started", topic)
                eligible.add(topic)
        if retry:
            yield from self._retry_deletion_for_ineligible_replicas(retry)
        if eligible:
            yield from self._on_topic_deletion(eligible)
