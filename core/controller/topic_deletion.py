"""TopicDeletionManager (kafka.controller.TopicDeletionManager, Kafka 2.6; reference §8.1).

The state machine of topic deletion. Replica deletion states reuse the replica state machine
(ReplicaDeletionStarted / ReplicaDeletionSuccessful / ReplicaDeletionIneligible); the three topic sets live in the
ControllerContext (topics_to_be_deleted, topics_with_deletion_started, topics_ineligible_for_deletion).
Deletion advances only on events (StopReplica responses, broker startup, reassignment completion, failover): there is
no timer. Every method that may change replica/partition state is a procedure (generator of effects).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, Protocol

from core.controller.context import ControllerContext
from core.controller.partition_state_machine import ordered
from core.controller.states import (
    NonExistentPartition,
    NonExistentReplica,
    OfflinePartition,
    OfflineReplica,
    ReplicaDeletionIneligible,
    ReplicaDeletionStarted,
    ReplicaDeletionSuccessful,
)
from core.effects import Emit, Proc
from messages.common import PartitionAndReplica, TopicPartition
from messages.observability import TopicDeletionProgress

log = logging.getLogger("kactor.controller.topic_deletion")

STATE_CHANGE_LOG = "state-change-log"


class DeletionClient(Protocol):
    """kafka.controller.DeletionClient: the controller operations the deletion manager needs."""

    def delete_topic(self, topic: str, epoch_zk_version: int) -> Proc[None]: ...

    def delete_topic_deletions(self, topics: Iterable[str], epoch_zk_version: int) -> Proc[None]: ...

    def mute_partition_modifications(self, topic: str) -> None: ...

    def send_metadata_update(self, partitions: Iterable[TopicPartition]) -> Proc[None]: ...


class TopicDeletionManager:
    """Mirrors TopicDeletionManager(config, controllerContext, replicaStateMachine, partitionStateMachine, client).

    ``config`` needs ``broker_id`` and ``delete_topic_enable``; the state machines need
    ``handle_state_changes(items, target_state)`` procedures.
    """

    def __init__(self, config: Any, ctx: ControllerContext, replica_state_machine: Any, partition_state_machine: Any,
                 client: DeletionClient) -> None:
        self.config = config
        self.ctx = ctx
        self.replica_state_machine = replica_state_machine
        self.partition_state_machine = partition_state_machine
        self.client = client
        self.is_delete_topic_enabled: bool = bool(config.delete_topic_enable)

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
            self.ctx.queue_topic_deletion(ordered(to_delete))
            self.ctx.topics_ineligible_for_deletion.update(ineligible & self.ctx.topics_to_be_deleted)
        else:
            # if delete topic is disabled clean the topic entries under /admin/delete_topics
            log.info("Removing %s since delete topic is disabled", sorted(to_delete))
            yield from self.client.delete_topic_deletions(ordered(to_delete), self.ctx.epoch_zk_version)

    def try_topic_deletion(self) -> Proc[None]:
        """TopicDeletionManager.tryTopicDeletion (controller failover)."""
        if self.is_delete_topic_enabled:
            yield from self.resume_deletions()

    def enqueue_topics_for_deletion(self, topics: Iterable[str]) -> Proc[None]:
        """TopicDeletionManager.enqueueTopicsForDeletion: queue the topics, then resumeDeletions()."""
        if self.is_delete_topic_enabled:
            new = [t for t in ordered(set(topics)) if t not in self.ctx.topics_to_be_deleted]
            self.ctx.queue_topic_deletion(ordered(set(topics)))
            for t in new:
                yield Emit(STATE_CHANGE_LOG, TopicDeletionProgress(t, "Queued"))
            yield from self.resume_deletions()

    def resume_deletion_for_topics(self, topics: Iterable[str] = ()) -> Proc[None]:
        """TopicDeletionManager.resumeDeletionForTopics: queued topics among ``topics`` become eligible again."""
        if self.is_delete_topic_enabled:
            to_resume = set(topics) & self.ctx.topics_to_be_deleted
            if to_resume:
                self.ctx.topics_ineligible_for_deletion -= to_resume
                yield from self.resume_deletions()

    def fail_replica_deletion(self, replicas: Iterable[PartitionAndReplica]) -> Proc[None]:
        """TopicDeletionManager.failReplicaDeletion: replicas of queued topics → ReplicaDeletionIneligible, their
        topics ineligible ("replica deletion failure"), then resumeDeletions()."""
        if self.is_delete_topic_enabled:
            failed = [r for r in ordered(set(replicas)) if self._is_replica_of_queued_topic(r)]
            if failed:
                topics = {r.topic_partition.topic for r in failed}
                log.debug("Deletion failed for replicas %s. Halting deletion for topics %s", failed, sorted(topics))
                yield from self.replica_state_machine.handle_state_changes(failed, ReplicaDeletionIneligible)
                yield from self.mark_topic_ineligible_for_deletion(topics, "replica deletion failure")
                yield from self.resume_deletions()

    def mark_topic_ineligible_for_deletion(self, topics: Iterable[str], reason: str) -> Proc[None]:
        """TopicDeletionManager.markTopicIneligibleForDeletion: (topics ∩ queued) → ineligible."""
        if self.is_delete_topic_enabled:
            new_halted = self.ctx.topics_to_be_deleted & set(topics)
            fresh = new_halted - self.ctx.topics_ineligible_for_deletion
            self.ctx.topics_ineligible_for_deletion |= new_halted
            if new_halted:
                log.info("Halted deletion of topics %s due to %s", ",".join(sorted(new_halted)), reason)
            for t in sorted(fresh):
                yield Emit(STATE_CHANGE_LOG, TopicDeletionProgress(t, "Ineligible", reason))

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        """TopicDeletionManager.isTopicQueuedUpForDeletion (always false with deletion disabled)."""
        if self.is_delete_topic_enabled:
            return self.ctx.is_topic_queued_up_for_deletion(topic)
        return False

    def complete_replica_deletion(self, replicas: Iterable[PartitionAndReplica]) -> Proc[None]:
        """TopicDeletionManager.completeReplicaDeletion: replicas of queued topics → ReplicaDeletionSuccessful, then
        resumeDeletions()."""
        deleted = [r for r in ordered(set(replicas)) if self._is_replica_of_queued_topic(r)]
        log.debug("Deletion successfully completed for replicas %s", deleted)
        yield from self.replica_state_machine.handle_state_changes(deleted, ReplicaDeletionSuccessful)
        yield from self.resume_deletions()

    def reset(self) -> None:
        """TopicDeletionManager.reset (≤ 2.3; the 2.6 context reset clears the sets): nothing to do here."""

    # -- predicates --------------------------------------------------------------------------------------------------
    def _is_replica_of_queued_topic(self, replica: PartitionAndReplica) -> bool:
        """Kafka 2.6 checks the topic only. kactor also requires the replica to be in the partition's assignment: a
        late StopReplica answer for a replica a finished reassignment removed would otherwise give it a replica state
        outside every assignment, which the context keeps for ever."""
        tp = replica.topic_partition
        return (self.is_topic_queued_up_for_deletion(tp.topic)
                and replica.replica in self.ctx.partition_replica_assignment(tp))

    def _is_topic_ineligible_for_deletion(self, topic: str) -> bool:
        if self.is_delete_topic_enabled:
            return topic in self.ctx.topics_ineligible_for_deletion
        return True

    def _is_topic_deletion_in_progress(self, topic: str) -> bool:
        if self.is_delete_topic_enabled:
            return self.ctx.is_any_replica_in_state(topic, ReplicaDeletionStarted)
        return False

    def _is_topic_eligible_for_deletion(self, topic: str) -> bool:
        """isTopicEligibleForDeletion: queued, no replica in ReplicaDeletionStarted, not ineligible."""
        return (self.ctx.is_topic_queued_up_for_deletion(topic) and not self._is_topic_deletion_in_progress(topic)
                and not self._is_topic_ineligible_for_deletion(topic))

    # -- internals ---------------------------------------------------------------------------------------------------
    def _retry_deletion_for_ineligible_replicas(self, topics: Iterable[str]) -> Proc[None]:
        """retryDeletionForIneligibleReplicas: ReplicaDeletionIneligible replicas → OfflineReplica."""
        failed: list[PartitionAndReplica] = []
        for t in ordered(set(topics)):
            failed.extend(sorted(self.ctx.replicas_in_state(t, ReplicaDeletionIneligible)))
        log.debug("Retrying deletion of topics %s since replicas %s were not successfully deleted",
                  sorted(set(topics)), failed)
        yield from self.replica_state_machine.handle_state_changes(failed, OfflineReplica)

    def _complete_delete_topic(self, topic: str) -> Proc[None]:
        """completeDeleteTopic (Kafka 2.6): mute PartitionModifications, successful replicas → NonExistentReplica,
        the topic leaves topicsToBeDeleted and topicsWithDeletionStarted, its znodes are deleted (fenced), then it
        leaves the rest of the context (removeTopic). The sets are left before the znodes are deleted, as in 2.6: a
        deletion whose znode deletes fail is picked up again by the next TopicDeletion event or controller failover
        (the /admin/delete_topics marker goes last and survives the failure)."""
        self.client.mute_partition_modifications(topic)
        replicas = sorted(self.ctx.replicas_in_state(topic, ReplicaDeletionSuccessful))
        yield from self.replica_state_machine.handle_state_changes(replicas, NonExistentReplica)
        self.ctx.topics_to_be_deleted.discard(topic)
        self.ctx.topics_with_deletion_started.discard(topic)
        yield from self.client.delete_topic(topic, self.ctx.epoch_zk_version)
        self.ctx.remove_topic(topic)
        yield Emit(STATE_CHANGE_LOG, TopicDeletionProgress(topic, "Completed"))

    def _on_topic_deletion(self, topics: set[str]) -> Proc[None]:
        """onTopicDeletion: first time → partitions Offline → NonExistent, then mark deletion started; UpdateMetadata
        (leader −2) for all the topics' partitions; onPartitionDeletion."""
        unseen = sorted(topics - self.ctx.topics_with_deletion_started)
        if unseen:
            unseen_partitions: list[TopicPartition] = []
            for t in unseen:
                unseen_partitions.extend(sorted(self.ctx.partitions_for_topic(t)))
            yield from self.partition_state_machine.handle_state_changes(unseen_partitions, OfflinePartition)
            yield from self.partition_state_machine.handle_state_changes(unseen_partitions, NonExistentPartition)
            # after the partition moves, so the offline-partition count is decremented correctly
            self.ctx.begin_topic_deletion(unseen)
            for t in unseen:
                yield Emit(STATE_CHANGE_LOG, TopicDeletionProgress(t, "Started"))
        partitions: list[TopicPartition] = []
        for t in sorted(topics):
            partitions.extend(sorted(self.ctx.partitions_for_topic(t)))
        # send update metadata so that brokers stop serving data for topics to be deleted
        yield from self.client.send_metadata_update(partitions)
        yield from self._on_partition_deletion(topics)

    def _on_partition_deletion(self, topics_to_be_deleted: set[str]) -> Proc[None]:
        """onPartitionDeletion: dead replicas → ReplicaDeletionIneligible; the others (not yet successful) →
        OfflineReplica → ReplicaDeletionStarted; topics with dead replicas become ineligible."""
        all_dead: list[PartitionAndReplica] = []
        all_retry: list[PartitionAndReplica] = []
        ineligible: set[str] = set()
        ctx = self.ctx
        for topic in sorted(topics_to_be_deleted):
            replicas = sorted(ctx.replicas_for_topic(topic))
            alive = [r for r in replicas if ctx.is_replica_online(r.replica, r.topic_partition)]
            dead = [r for r in replicas if not ctx.is_replica_online(r.replica, r.topic_partition)]
            successful = ctx.replicas_in_state(topic, ReplicaDeletionSuccessful)
            all_dead.extend(dead)
            all_retry.extend(r for r in alive if r not in successful)
            if dead:
                log.debug("Dead Replicas (%s) found for topic %s", dead, topic)
                ineligible.add(topic)
        yield from self.replica_state_machine.handle_state_changes(all_dead, ReplicaDeletionIneligible)
        # send stop replica to all followers that are not in the OfflineReplica state so they stop fetching
        yield from self.replica_state_machine.handle_state_changes(all_retry, OfflineReplica)
        yield from self.replica_state_machine.handle_state_changes(all_retry, ReplicaDeletionStarted)
        if ineligible:
            yield from self.mark_topic_ineligible_for_deletion(ineligible, "offline replicas")

    def resume_deletions(self) -> Proc[None]:
        """resumeDeletions: complete topics whose replicas are all deleted; retry topics with ineligible replicas
        and none in progress; (re)start deletion of eligible topics."""
        queued = sorted(self.ctx.topics_to_be_deleted)
        retry: set[str] = set()
        eligible: set[str] = set()
        if queued:
            log.info("Handling deletion for topics %s", ",".join(queued))
        for topic in queued:
            if self.ctx.are_all_replicas_in_state(topic, ReplicaDeletionSuccessful):
                # clear up all state for this topic from controller cache and zookeeper
                yield from self._complete_delete_topic(topic)
                log.info("Deletion of topic %s successfully completed", topic)
            elif (not self.ctx.is_any_replica_in_state(topic, ReplicaDeletionStarted)
                  and self.ctx.is_any_replica_in_state(topic, ReplicaDeletionIneligible)):
                # no replica in progress and not all successful, some replica failed → retry
                retry.add(topic)
            if self._is_topic_eligible_for_deletion(topic):
                log.info("Deletion of topic %s (re)started", topic)
                eligible.add(topic)
        if retry:
            yield from self._retry_deletion_for_ineligible_replicas(retry)
        if eligible:
            yield from self._on_topic_deletion(eligible)
