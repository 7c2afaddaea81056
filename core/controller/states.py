"""Partition and replica states (kafka.controller.PartitionState / ReplicaState) with Kafka's names, byte codes and
valid-previous-state tables (reference §5.1, §5.2)."""

from __future__ import annotations

import enum

from messages.registry import wire_enum


@wire_enum
class PartitionState(enum.Enum):
    """kafka.controller.PartitionState; the value is Kafka's ``state: Byte``."""

    NewPartition = 0
    OnlinePartition = 1
    OfflinePartition = 2
    NonExistentPartition = 3

    @property
    def valid_previous_states(self) -> frozenset[PartitionState]:
        return _PARTITION_VALID_PREVIOUS[self]

    def __str__(self) -> str:
        return self.name


@wire_enum
class ReplicaState(enum.Enum):
    """kafka.controller.ReplicaState; the value is Kafka's ``state: Byte``."""

    NewReplica = 1
    OnlineReplica = 2
    OfflineReplica = 3
    ReplicaDeletionStarted = 4
    ReplicaDeletionSuccessful = 5
    ReplicaDeletionIneligible = 6
    NonExistentReplica = 7

    @property
    def valid_previous_states(self) -> frozenset[ReplicaState]:
        return _REPLICA_VALID_PREVIOUS[self]

    def __str__(self) -> str:
        return self.name


_P = PartitionState
_PARTITION_VALID_PREVIOUS: dict[PartitionState, frozenset[PartitionState]] = {
    _P.NewPartition: frozenset({_P.NonExistentPartition}),
    _P.OnlinePartition: frozenset({_P.NewPartition, _P.OnlinePartition, _P.OfflinePartition}),
    _P.OfflinePartition: frozenset({_P.NewPartition, _P.OnlinePartition, _P.OfflinePartition}),
    _P.NonExistentPartition: frozenset({_P.OfflinePartition}),
}

_R = ReplicaState
_REPLICA_VALID_PREVIOUS: dict[ReplicaState, frozenset[ReplicaState]] = {
    _R.NewReplica: frozenset({_R.NonExistentReplica}),
    _R.OnlineReplica: frozenset({_R.NewReplica, _R.OnlineReplica, _R.OfflineReplica, _R.ReplicaDeletionIneligible}),
    _R.OfflineReplica: frozenset({_R.NewReplica, _R.OnlineReplica, _R.OfflineReplica, _R.ReplicaDeletionIneligible}),
    _R.ReplicaDeletionStarted: frozenset({_R.OfflineReplica}),
    _R.ReplicaDeletionSuccessful: frozenset({_R.ReplicaDeletionStarted}),
    _R.ReplicaDeletionIneligible: frozenset({_R.OfflineReplica, _R.ReplicaDeletionStarted}),
    _R.NonExistentReplica: frozenset({_R.ReplicaDeletionSuccessful}),
}

# Module-level aliases so callers can write ``from core.controller.states import OnlinePartition`` as in Scala.
NewPartition = PartitionState.NewPartition
OnlinePartition = PartitionState.OnlinePartition
OfflinePartition = PartitionState.OfflinePartition
NonExistentPartition = PartitionState.NonExistentPartition

NewReplica = ReplicaState.NewReplica
OnlineReplica = ReplicaState.OnlineReplica
OfflineReplica = ReplicaState.OfflineReplica
ReplicaDeletionStarted = ReplicaState.ReplicaDeletionStarted
ReplicaDeletionSuccessful = ReplicaState.ReplicaDeletionSuccessful
ReplicaDeletionIneligible = ReplicaState.ReplicaDeletionIneligible
NonExistentReplica = ReplicaState.NonExistentReplica
