"""Port of Kafka's PartitionLeaderElectionAlgorithmsTest (3.0.0): one test per Kafka test, the Kafka name in each
docstring."""

from __future__ import annotations

from core.controller.context import ControllerStats
from core.controller.election import (
    controlled_shutdown_partition_leader_election,
    offline_partition_leader_election,
    preferred_replica_partition_leader_election,
    reassign_partition_leader_election,
)


def test_offline_partition_leader_election() -> None:
    """testOfflinePartitionLeaderElection"""
    stats = ControllerStats()
    assert offline_partition_leader_election([2, 4], [2, 4], {4}, False, stats) == 4


def test_offline_partition_leader_election_last_isr_offline_unclean_leader_election_disabled() -> None:
    """testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionDisabled"""
    stats = ControllerStats()
    assert offline_partition_leader_election([2, 4], [2], {4}, False, stats) is None
    assert stats.unclean_leader_elections == 0


def test_offline_partition_leader_election_last_isr_offline_unclean_leader_election_enabled() -> None:
    """testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionEnabled"""
    stats = ControllerStats()
    assert offline_partition_leader_election([2, 4], [2], {4}, True, stats) == 4
    assert stats.unclean_leader_elections == 1


def test_reassign_partition_leader_election() -> None:
    """testReassignPartitionLeaderElection"""
    assert reassign_partition_leader_election([2, 4], [2, 4], {4}) == 4


def test_reassign_partition_leader_election_with_no_live_isr() -> None:
    """testReassignPartitionLeaderElectionWithNoLiveIsr"""
    assert reassign_partition_leader_election([2, 4], [2], set()) is None


def test_reassign_partition_leader_election_with_empty_isr() -> None:
    """testReassignPartitionLeaderElectionWithEmptyIsr"""
    assert reassign_partition_leader_election([2, 4], [], {2}) is None


def test_preferred_replica_partition_leader_election() -> None:
    """testPreferredReplicaPartitionLeaderElection"""
    assert preferred_replica_partition_leader_election([2, 4], [2, 4], {2, 4}) == 2


def test_preferred_replica_partition_leader_election_preferred_replica_in_isr_not_live() -> None:
    """testPreferredReplicaPartitionLeaderElectionPreferredReplicaInIsrNotLive"""
    assert preferred_replica_partition_leader_election([2, 4], [2], set()) is None


def test_preferred_replica_partition_leader_election_preferred_replica_not_in_isr_live() -> None:
    """testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrLive"""
    assert preferred_replica_partition_leader_election([2, 4], [4], {2, 4}) is None


def test_preferred_replica_partition_leader_election_preferred_replica_not_in_isr_not_live() -> None:
    """testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrNotLive"""
    assert preferred_replica_partition_leader_election([2, 4], [], set()) is None


def test_controlled_shutdown_partition_leader_election() -> None:
    """testControlledShutdownPartitionLeaderElection"""
    assert controlled_shutdown_partition_leader_election([2, 4], [2, 4], {2, 4}, {2}) == 4


def test_controlled_shutdown_partition_leader_election_last_isr_shutting_down() -> None:
    """testControlledShutdownPartitionLeaderElectionLastIsrShuttingDown"""
    assert controlled_shutdown_partition_leader_election([2, 4], [2], {2, 4}, {2}) is None


def test_controlled_shutdown_partition_leader_election_all_isr_simultaneously_shutdown() -> None:
    """testControlledShutdownPartitionLeaderElectionAllIsrSimultaneouslyShutdown"""
    assert controlled_shutdown_partition_leader_election([2, 4], [2, 4], {2, 4}, {2, 4}) is None
