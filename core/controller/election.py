"""Leader-election strategies (kafka.controller.Election and PartitionLeaderElectionAlgorithms).

The four algorithms are pure functions over (assignment, ISR, live replicas); the `leader_for_*` functions apply them
to a batch of partitions against a ControllerContext and return one ElectionResult per partition (reference §6).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

import attrs

from core.controller.context import ControllerContext, ControllerStats
from messages.common import LeaderAndIsr, TopicPartition
from messages.registry import message


# -- strategies (PartitionLeaderElectionStrategy) ---------------------------------------------------------------------
@message
class OfflinePartitionLeaderElectionStrategy:
    """OfflinePartitionLeaderElectionStrategy(allowUnclean)."""

    allow_unclean: bool = False

    @property
    def name(self) -> str:
        return "OfflinePartition"


@message
class ReassignPartitionLeaderElectionStrategy:
    @property
    def name(self) -> str:
        return "ReassignPartition"


@message
class PreferredReplicaPartitionLeaderElectionStrategy:
    @property
    def name(self) -> str:
        return "PreferredReplicaPartition"


@message
class ControlledShutdownPartitionLeaderElectionStrategy:
    @property
    def name(self) -> str:
        return "ControlledShutdownPartition"


PartitionLeaderElectionStrategy = (OfflinePartitionLeaderElectionStrategy | ReassignPartitionLeaderElectionStrategy
                                   | PreferredReplicaPartitionLeaderElectionStrategy
                                   | ControlledShutdownPartitionLeaderElectionStrategy)


@attrs.frozen
class ElectionResult:
    """kafka.controller.ElectionResult: the new LeaderAndIsr (None = no leader) and the LeaderAndIsr recipients.

    ``unclean`` (not in Kafka's type) tells that the leader was chosen outside the ISR (the meter was marked)."""

    topic_partition: TopicPartition
    leader_and_isr: LeaderAndIsr | None
    live_replicas: tuple[int, ...]
    unclean: bool = False


# -- PartitionLeaderElectionAlgorithms --------------------------------------------------------------------------------
def offline_partition_leader_election(assignment: Sequence[int], isr: Collection[int], live_replicas: Collection[int],
                                      unclean_leader_election_enabled: bool,
                                      stats: ControllerStats | None = None) -> int | None:
    """offlinePartitionLeaderElection: first live ISR member in assignment order; else, if unclean election is
    enabled, the first live replica (marking UncleanLeaderElectionsPerSec)."""
    for r in assignment:
        if r in live_replicas and r in isr:
            return r
    if unclean_leader_election_enabled:
        for r in assignment:
            if r in live_replicas:
                if stats is not None:
                    stats.mark_unclean_leader_election()
                return r
    return None


def reassign_partition_leader_election(reassignment: Sequence[int], isr: Collection[int],
                                       live_replicas: Collection[int]) -> int | None:
    """reassignPartitionLeaderElection: first target replica that is live and in the ISR."""
    for r in reassignment:
        if r in live_replicas and r in isr:
            return r
    return None


def preferred_replica_partition_leader_election(assignment: Sequence[int], isr: Collection[int],
                                                live_replicas: Collection[int]) -> int | None:
    """preferredReplicaPartitionLeaderElection: the head of the assignment iff it is live and in the ISR."""
    if assignment and assignment[0] in live_replicas and assignment[0] in isr:
        return assignment[0]
    return None


def controlled_shutdown_partition_leader_election(assignment: Sequence[int], isr: Collection[int],
                                                  live_replicas: Collection[int],
                                                  shutting_down_brokers: Collection[int]) -> int | None:
    """controlledShutdownPartitionLeaderElection: first replica live, in the ISR and not shutting down."""
    for r in assignment:
        if r in live_replicas and r in isr and r not in shutting_down_brokers:
            return r
    return None


# -- Election ---------------------------------------------------------------------------------------------------------
def _leader_for_offline_one(ctx: ControllerContext, tp: TopicPartition, leader_and_isr: LeaderAndIsr | None,
                            unclean_enabled: bool) -> ElectionResult:
    assignment = ctx.partition_replica_assignment(tp)
    live_replicas = tuple(r for r in assignment if ctx.is_replica_online(r, tp))
    if leader_and_isr is None:
        return ElectionResult(tp, None, live_replicas)
    isr = leader_and_isr.isr
    before = ctx.stats.unclean_leader_elections
    leader = offline_partition_leader_election(assignment, isr, set(live_replicas), unclean_enabled, ctx.stats)
    if leader is None:
        return ElectionResult(tp, None, live_replicas)
    new_isr = tuple(r for r in isr if ctx.is_replica_online(r, tp)) if leader in isr else (leader,)
    return ElectionResult(tp, leader_and_isr.new_leader_and_isr(leader, new_isr), live_replicas,
                          unclean=ctx.stats.unclean_leader_elections != before)


def leader_for_offline(ctx: ControllerContext,
                       partitions_with_unclean_leader_election_state:
                       Iterable[tuple[TopicPartition, LeaderAndIsr | None, bool]]) -> list[ElectionResult]:
    """Election.leaderForOffline: new ISR = old ISR filtered to online replicas if the leader was in it, else
    [leader]; recipients = live replicas of the assignment."""
    return [_leader_for_offline_one(ctx, tp, lai, unclean)
            for tp, lai, unclean in partitions_with_unclean_leader_election_state]


def leader_for_reassign(ctx: ControllerContext,
                        leader_and_isrs: Iterable[tuple[TopicPartition, LeaderAndIsr]]) -> list[ElectionResult]:
    """Election.leaderForReassign: leader from the target replicas, ISR unchanged; recipients = target replicas."""
    results = []
    for tp, lai in leader_and_isrs:
        targets = ctx.partition_full_replica_assignment(tp).target_replicas
        live = {r for r in targets if ctx.is_replica_online(r, tp)}
        leader = reassign_partition_leader_election(targets, lai.isr, live)
        results.append(ElectionResult(tp, lai.new_leader(leader) if leader is not None else None, targets))
    return results


def leader_for_preferred(ctx: ControllerContext,
                         leader_and_isrs: Iterable[tuple[TopicPartition, LeaderAndIsr]]) -> list[ElectionResult]:
    """Election.leaderForPreferredReplica: the preferred replica, ISR unchanged; recipients = full assignment."""
    results = []
    for tp, lai in leader_and_isrs:
        assignment = ctx.partition_replica_assignment(tp)
        live = {r for r in assignment if ctx.is_replica_online(r, tp)}
        leader = preferred_replica_partition_leader_election(assignment, lai.isr, live)
        results.append(ElectionResult(tp, lai.new_leader(leader) if leader is not None else None, assignment))
    return results


leader_for_preferred_replica = leader_for_preferred


def leader_for_controlled_shutdown(ctx: ControllerContext,
                                   leader_and_isrs: Iterable[tuple[TopicPartition, LeaderAndIsr]]
                                   ) -> list[ElectionResult]:
    """Election.leaderForControlledShutdown: new ISR = old ISR minus all shutting-down brokers; recipients = the
    assignment members that are online or shutting down."""
    shutting_down = frozenset(ctx.shutting_down_broker_ids)
    results = []
    for tp, lai in leader_and_isrs:
        assignment = ctx.partition_replica_assignment(tp)
        live_or_shutting_down = tuple(r for r in assignment
                                      if ctx.is_replica_online(r, tp, include_shutting_down_brokers=True))
        leader = controlled_shutdown_partition_leader_election(assignment, lai.isr, set(live_or_shutting_down),
                                                               shutting_down)
        new_isr = tuple(r for r in lai.isr if r not in shutting_down)
        results.append(ElectionResult(tp, lai.new_leader_and_isr(leader, new_isr) if leader is not None else None,
                                      live_or_shutting_down))
    return results
