"""ControllerContext: the active controller's in-memory view of the cluster (kafka.controller.ControllerContext).

A plain mutable object owned by the controller; the state machines mutate it. Method names are Kafka's in
snake_case. Zero-argument Scala ``def``s (liveBrokerIds …) are methods here too (they build a fresh set).

Beyond Kafka, partitions are indexed by broker (every replica in the full assignment) so `partitions_on_broker`,
`replicas_on_brokers` and `partition_leaders_on_broker`-style lookups do not scan all partitions.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any

from core.controller.states import PartitionState, ReplicaState
from messages.common import (
    INITIAL_CONTROLLER_EPOCH,
    INITIAL_CONTROLLER_EPOCH_ZK_VERSION,
    Broker,
    LeaderIsrAndControllerEpoch,
    PartitionAndReplica,
    ReplicaAssignment,
    TopicPartition,
)

EMPTY_ASSIGNMENT = ReplicaAssignment(())


def _tp_key(tp: TopicPartition) -> tuple[str, int]:
    return (tp.topic, tp.partition)


# The order their __lt__ gives, as a key: one call per item instead of a comparison per pair (a controlled shutdown
# sorts thousands of partitions and replicas per state change).
_SORT_KEYS: dict[type, Callable[[Any], Any]] = {TopicPartition: _tp_key,
                                                PartitionAndReplica: PartitionAndReplica.sort_key}


def ordered(items: Iterable[Any]) -> list[Any]:
    """Caller order for sequences; sets are sorted so that a run is deterministic (str hashes are randomised)."""
    if isinstance(items, set | frozenset):
        classes = set(map(type, items))
        key = _SORT_KEYS.get(classes.pop()) if len(classes) == 1 else None
        return sorted(items, key=key) if key is not None else sorted(items)
    return list(items)


class ControllerStats:
    """kafka.controller.ControllerStats: the UncleanLeaderElectionsPerSec meter as a running count."""

    def __init__(self) -> None:
        self.unclean_leader_elections = 0

    def mark_unclean_leader_election(self, n: int = 1) -> None:
        self.unclean_leader_elections += n


class ControllerContext:
    """Mirrors kafka.controller.ControllerContext (3.0 shape, without topic ids: IBP 2.6)."""

    def __init__(self) -> None:
        self.stats = ControllerStats()
        self.offline_partition_count = 0
        self.preferred_replica_imbalance_count = 0
        self.shutting_down_broker_ids: set[int] = set()
        self._live_brokers: dict[int, Broker] = {}
        self._live_broker_epochs: dict[int, int] = {}
        self.epoch: int = INITIAL_CONTROLLER_EPOCH
        self.epoch_zk_version: int = INITIAL_CONTROLLER_EPOCH_ZK_VERSION
        self.all_topics: set[str] = set()
        self.partition_assignments: dict[str, dict[int, ReplicaAssignment]] = {}
        self._partition_leadership_info: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        self.partitions_being_reassigned: set[TopicPartition] = set()
        self.partition_states: dict[TopicPartition, PartitionState] = {}
        self.replica_states: dict[PartitionAndReplica, ReplicaState] = {}
        self.replicas_on_offline_dirs: dict[int, set[TopicPartition]] = {}
        self.topics_to_be_deleted: set[str] = set()
        # Used to keep offlinePartitionCount right: once deletion started, partition state changes are not counted.
        self.topics_with_deletion_started: set[str] = set()
        self.topics_ineligible_for_deletion: set[str] = set()
        # Index (not in Kafka): broker id → partitions whose full replica list holds it.
        self._partitions_by_broker: dict[int, set[TopicPartition]] = {}

    # -- topics state ------------------------------------------------------------------------------------------------
    def _clear_topics_state(self) -> None:
        self.all_topics.clear()
        self.partition_assignments.clear()
        self._partition_leadership_info.clear()
        self.partitions_being_reassigned.clear()
        self.replicas_on_offline_dirs.clear()
        self.partition_states.clear()
        self.offline_partition_count = 0
        self.preferred_replica_imbalance_count = 0
        self.replica_states.clear()
        self._partitions_by_broker.clear()

    def partition_replica_assignment(self, tp: TopicPartition) -> tuple[int, ...]:
        """partitionReplicaAssignment: the full replica list, () if the topic or partition is unknown."""
        a = self.partition_assignments.get(tp.topic, {}).get(tp.partition)
        return a.replicas if a is not None else ()

    def partition_full_replica_assignment(self, tp: TopicPartition) -> ReplicaAssignment:
        """partitionFullReplicaAssignment: ReplicaAssignment.empty if unknown."""
        return self.partition_assignments.get(tp.topic, {}).get(tp.partition, EMPTY_ASSIGNMENT)

    def update_partition_full_replica_assignment(self, tp: TopicPartition, new_assignment: ReplicaAssignment) -> None:
        """updatePartitionFullReplicaAssignment (keeps the preferred-replica-imbalance count and the broker index)."""
        assignments = self.partition_assignments.setdefault(tp.topic, {})
        previous = assignments.get(tp.partition)
        assignments[tp.partition] = new_assignment
        self._reindex(tp, previous.replicas if previous is not None else (), new_assignment.replicas)
        leadership = self._partition_leadership_info.get(tp)
        self._update_preferred_replica_imbalance_metric(tp, previous, leadership, new_assignment, leadership)

    def _reindex(self, tp: TopicPartition, old: tuple[int, ...], new: tuple[int, ...]) -> None:
        if old == new:
            return
        index = self._partitions_by_broker
        for b in old:
            if b not in new:
                s = index.get(b)
                if s is not None:
                    s.discard(tp)
                    if not s:
                        del index[b]
        for b in new:
            index.setdefault(b, set()).add(tp)

    def partition_replica_assignment_for_topic(self, topic: str) -> dict[TopicPartition, tuple[int, ...]]:
        return {TopicPartition(topic, p): a.replicas for p, a in self.partition_assignments.get(topic, {}).items()}

    def partition_full_replica_assignment_for_topic(self, topic: str) -> dict[TopicPartition, ReplicaAssignment]:
        return {TopicPartition(topic, p): a for p, a in self.partition_assignments.get(topic, {}).items()}

    def all_partitions(self) -> set[TopicPartition]:
        return {TopicPartition(t, p) for t, parts in self.partition_assignments.items() for p in parts}

    def iter_all_partitions(self) -> Iterator[TopicPartition]:
        """allPartitions in assignment order (deterministic; not in Kafka)."""
        for t, parts in self.partition_assignments.items():
            for p in parts:
                yield TopicPartition(t, p)

    # -- brokers -----------------------------------------------------------------------------------------------------
    def set_live_brokers(self, broker_and_epochs: Mapping[Broker, int] | Iterable[Broker]) -> None:
        """setLiveBrokers(Map[Broker, epoch]); an iterable of Broker uses each Broker's own ``epoch``."""
        self._live_brokers.clear()
        self._live_broker_epochs.clear()
        self.add_live_brokers(broker_and_epochs)

    def add_live_brokers(self, broker_and_epochs: Mapping[Broker, int] | Iterable[Broker]) -> None:
        """addLiveBrokers"""
        pairs = (broker_and_epochs.items() if isinstance(broker_and_epochs, Mapping)
                 else ((b, b.epoch) for b in broker_and_epochs))
        for broker, epoch in pairs:
            self._live_brokers[broker.id] = broker
            self._live_broker_epochs[broker.id] = epoch

    def remove_live_brokers(self, broker_ids: Iterable[int]) -> None:
        """removeLiveBrokers"""
        for b in broker_ids:
            self._live_brokers.pop(b, None)
            self._live_broker_epochs.pop(b, None)

    def update_broker_metadata(self, old_metadata: Broker | None, new_metadata: Broker) -> None:
        """updateBrokerMetadata: replace a live broker's registration (the epoch is kept)."""
        if old_metadata is not None and old_metadata.id != new_metadata.id:
            self._live_brokers.pop(old_metadata.id, None)
        self._live_brokers[new_metadata.id] = new_metadata

    def live_broker_ids(self) -> set[int]:
        """liveBrokerIds: registered brokers that are not shutting down."""
        return self._live_broker_epochs.keys() - self.shutting_down_broker_ids

    def live_or_shutting_down_broker_ids(self) -> set[int]:
        return set(self._live_broker_epochs)

    def live_or_shutting_down_broker_ids_view(self) -> Collection[int]:
        """A live view of the live-or-shutting-down ids (no copy; do not mutate the context while iterating)."""
        return self._live_broker_epochs.keys()

    def is_live_or_shutting_down(self, broker_id: int) -> bool:
        return broker_id in self._live_broker_epochs

    def live_or_shutting_down_brokers(self) -> list[Broker]:
        """liveOrShuttingDownBrokers, sorted by id (deterministic requests)."""
        return [self._live_brokers[b] for b in sorted(self._live_brokers)]

    def live_broker_id_and_epochs(self) -> dict[int, int]:
        return dict(self._live_broker_epochs)

    def live_broker_epoch(self, broker_id: int) -> int:
        return self._live_broker_epochs[broker_id]

    def live_or_shutting_down_broker(self, broker_id: int) -> Broker | None:
        return self._live_brokers.get(broker_id)

    def partitions_on_broker(self, broker_id: int) -> set[TopicPartition]:
        """partitionsOnBroker (indexed)."""
        return set(self._partitions_by_broker.get(broker_id, ()))

    def is_replica_online(self, broker_id: int, tp: TopicPartition,
                          include_shutting_down_brokers: bool = False) -> bool:
        """isReplicaOnline: the broker is live (or shutting down, if included) and tp is not on an offline dir."""
        if broker_id not in self._live_broker_epochs:
            return False
        if not include_shutting_down_brokers and broker_id in self.shutting_down_broker_ids:
            return False
        offline = self.replicas_on_offline_dirs.get(broker_id)
        return offline is None or tp not in offline

    def replicas_on_brokers(self, broker_ids: Iterable[int]) -> set[PartitionAndReplica]:
        """replicasOnBrokers (indexed)."""
        return {PartitionAndReplica(tp, b) for b in broker_ids for tp in self._partitions_by_broker.get(b, ())}

    def replicas_for_topic(self, topic: str) -> set[PartitionAndReplica]:
        return {PartitionAndReplica(TopicPartition(topic, p), r)
                for p, a in self.partition_assignments.get(topic, {}).items() for r in a.replicas}

    def partitions_for_topic(self, topic: str) -> set[TopicPartition]:
        return {TopicPartition(topic, p) for p in self.partition_assignments.get(topic, {})}

    def online_and_offline_replicas(self) -> tuple[list[PartitionAndReplica], list[PartitionAndReplica]]:
        """onlineAndOfflineReplicas (lists in assignment order, for deterministic processing)."""
        online: list[PartitionAndReplica] = []
        offline: list[PartitionAndReplica] = []
        for topic, parts in self.partition_assignments.items():
            for p, a in parts.items():
                tp = TopicPartition(topic, p)
                for r in a.replicas:
                    (online if self.is_replica_online(r, tp) else offline).append(PartitionAndReplica(tp, r))
        return online, offline

    def replicas_for_partition(self, partitions: Iterable[TopicPartition]) -> set[PartitionAndReplica]:
        return {PartitionAndReplica(tp, r) for tp in partitions for r in self.partition_replica_assignment(tp)}

    def reset_context(self) -> None:
        """resetContext (controller resignation)."""
        self.topics_to_be_deleted.clear()
        self.topics_with_deletion_started.clear()
        self.topics_ineligible_for_deletion.clear()
        self.shutting_down_broker_ids.clear()
        self.epoch = 0
        self.epoch_zk_version = 0
        self._clear_topics_state()
        self._live_brokers.clear()
        self._live_broker_epochs.clear()

    def set_all_topics(self, topics: Iterable[str]) -> None:
        self.all_topics.clear()
        self.all_topics.update(topics)

    def remove_topic(self, topic: str) -> None:
        """removeTopic (Kafka 2.6): the topic, its assignments and leadership records leave the context; the deletion
        sets are not touched (completeDeleteTopic empties them). The kept imbalance count drops the topic's
        partitions here only if the topic is not queued for deletion (queueTopicDeletion already did)."""
        if topic not in self.topics_to_be_deleted:
            self._clean_preferred_replica_imbalance_metric(topic)
        self.all_topics.discard(topic)
        assignments = self.partition_assignments.pop(topic, None)
        if assignments is not None:
            for p, a in assignments.items():
                tp = TopicPartition(topic, p)
                self._partition_leadership_info.pop(tp, None)
                self._reindex(tp, a.replicas, ())

    def queue_topic_deletion(self, topics: Iterable[str]) -> None:
        """queueTopicDeletion. Subtracts a topic's imbalanced partitions only when it is newly queued (KAFKA-13572)."""
        for topic in topics:
            if topic not in self.topics_to_be_deleted:
                self.topics_to_be_deleted.add(topic)
                self._clean_preferred_replica_imbalance_metric(topic)

    def begin_topic_deletion(self, topics: Iterable[str]) -> None:
        self.topics_with_deletion_started.update(topics)

    def is_topic_deletion_in_progress(self, topic: str) -> bool:
        return topic in self.topics_with_deletion_started

    def is_topic_queued_up_for_deletion(self, topic: str) -> bool:
        return topic in self.topics_to_be_deleted

    # -- replica / partition states ----------------------------------------------------------------------------------
    def replicas_in_state(self, topic: str, state: ReplicaState) -> set[PartitionAndReplica]:
        return {r for r in self.replicas_for_topic(topic) if self.replica_states[r] == state}

    def check_valid_replica_state_change(
        self, replicas: Iterable[PartitionAndReplica], target_state: ReplicaState
    ) -> tuple[list[PartitionAndReplica], list[PartitionAndReplica]]:
        valid_prev = target_state.valid_previous_states
        states = self.replica_states
        valid: list[PartitionAndReplica] = []
        invalid: list[PartitionAndReplica] = []
        for r in replicas:
            (valid if states[r] in valid_prev else invalid).append(r)
        return valid, invalid

    def check_valid_partition_state_change(
        self, partitions: Iterable[TopicPartition], target_state: PartitionState
    ) -> tuple[list[TopicPartition], list[TopicPartition]]:
        valid_prev = target_state.valid_previous_states
        states = self.partition_states
        valid: list[TopicPartition] = []
        invalid: list[TopicPartition] = []
        for tp in partitions:
            (valid if states[tp] in valid_prev else invalid).append(tp)
        return valid, invalid

    def put_replica_state(self, replica: PartitionAndReplica, state: ReplicaState) -> None:
        self.replica_states[replica] = state

    def remove_replica_state(self, replica: PartitionAndReplica) -> None:
        self.replica_states.pop(replica, None)

    def put_replica_state_if_not_exists(self, replica: PartitionAndReplica, state: ReplicaState) -> None:
        self.replica_states.setdefault(replica, state)

    def put_partition_state(self, tp: TopicPartition, target_state: PartitionState) -> None:
        """putPartitionState (keeps offlinePartitionCount)."""
        current = self.partition_states.get(tp, PartitionState.NonExistentPartition)
        self.partition_states[tp] = target_state
        self._update_partition_state_metrics(tp, current, target_state)

    def _update_partition_state_metrics(self, tp: TopicPartition, current: PartitionState,
                                        target: PartitionState) -> None:
        """updatePartitionStateMetrics: ±1 offline partition when entering / leaving OfflinePartition, unless the
        topic's deletion has started."""
        if tp.topic not in self.topics_with_deletion_started:
            offline = PartitionState.OfflinePartition
            if current != offline and target == offline:
                self.offline_partition_count += 1
            elif current == offline and target != offline:
                self.offline_partition_count -= 1

    def put_partition_state_if_not_exists(self, tp: TopicPartition, state: PartitionState) -> None:
        if tp not in self.partition_states:
            self.partition_states[tp] = state
            self._update_partition_state_metrics(tp, PartitionState.NonExistentPartition, state)

    def replica_state(self, replica: PartitionAndReplica) -> ReplicaState:
        return self.replica_states[replica]

    def partition_state(self, tp: TopicPartition) -> PartitionState:
        return self.partition_states[tp]

    def partitions_in_state(self, state: PartitionState, topic: str | None = None) -> set[TopicPartition]:
        """partitionsInState(state) / partitionsInState(topic, state)."""
        return self.partitions_in_states((state,), topic)

    def partitions_in_states(self, states: Collection[PartitionState], topic: str | None = None) -> set[TopicPartition]:
        """partitionsInStates(states) / partitionsInStates(topic, states)."""
        if topic is None:
            return {tp for tp, s in self.partition_states.items() if s in states}
        return {tp for tp in self.partitions_for_topic(topic) if self.partition_states[tp] in states}

    # -- leadership --------------------------------------------------------------------------------------------------
    def put_partition_leadership_info(self, tp: TopicPartition, info: LeaderIsrAndControllerEpoch) -> None:
        """putPartitionLeadershipInfo (keeps the preferred-replica-imbalance count)."""
        previous = self._partition_leadership_info.get(tp)
        self._partition_leadership_info[tp] = info
        assignment = self.partition_full_replica_assignment(tp)
        self._update_preferred_replica_imbalance_metric(tp, assignment, previous, assignment, info)

    def partition_leadership_info(self, tp: TopicPartition) -> LeaderIsrAndControllerEpoch | None:
        return self._partition_leadership_info.get(tp)

    def partitions_leadership_info(self) -> Mapping[TopicPartition, LeaderIsrAndControllerEpoch]:
        """partitionsLeadershipInfo (a read-only view: write through put_partition_leadership_info)."""
        return self._partition_leadership_info

    def partitions_with_offline_leader(self) -> set[TopicPartition]:
        return {tp for tp, info in self._partition_leadership_info.items()
                if not self.is_replica_online(info.leader_and_isr.leader, tp)
                and tp.topic not in self.topics_to_be_deleted}

    def partition_leaders_on_broker(self, broker_id: int) -> set[TopicPartition]:
        """partitionLeadersOnBroker: partitions led by the broker, RF > 1, not queued for deletion (indexed)."""
        result: set[TopicPartition] = set()
        for tp in self._partitions_by_broker.get(broker_id, ()):
            info = self._partition_leadership_info.get(tp)
            if (info is not None and info.leader_and_isr.leader == broker_id
                    and tp.topic not in self.topics_to_be_deleted
                    and len(self.partition_replica_assignment(tp)) > 1):
                result.add(tp)
        return result

    def clear_partition_leadership_info(self) -> None:
        self._partition_leadership_info.clear()
        self.preferred_replica_imbalance_count = 0

    def partition_with_leaders_count(self) -> int:
        return len(self._partition_leadership_info)

    # -- preferred replica imbalance (§7.5) --------------------------------------------------------------------------
    def _update_preferred_replica_imbalance_metric(
        self, tp: TopicPartition,
        old_assignment: ReplicaAssignment | None, old_leadership: LeaderIsrAndControllerEpoch | None,
        new_assignment: ReplicaAssignment | None, new_leadership: LeaderIsrAndControllerEpoch | None,
    ) -> None:
        if tp.topic in self.topics_to_be_deleted:
            return
        if old_assignment is not None and old_leadership is not None \
                and not _has_preferred_leader(old_assignment, old_leadership):
            self.preferred_replica_imbalance_count -= 1
        if new_assignment is not None and new_leadership is not None \
                and not _has_preferred_leader(new_assignment, new_leadership):
            self.preferred_replica_imbalance_count += 1

    def _clean_preferred_replica_imbalance_metric(self, topic: str) -> None:
        for p, assignment in self.partition_assignments.get(topic, {}).items():
            info = self._partition_leadership_info.get(TopicPartition(topic, p))
            if info is not None and not _has_preferred_leader(assignment, info):
                self.preferred_replica_imbalance_count -= 1


def _has_preferred_leader(assignment: ReplicaAssignment, leadership: LeaderIsrAndControllerEpoch) -> bool:
    """hasPreferredLeader: a reassigning partition whose preferred replica is being added counts as balanced while
    that replica is not in the ISR (Kafka's literal behaviour)."""
    if not assignment.replicas:
        return True
    preferred = assignment.replicas[0]
    if assignment.is_being_reassigned and preferred in assignment.adding_replicas:
        return preferred not in leadership.leader_and_isr.isr
    return leadership.leader_and_isr.leader == preferred
