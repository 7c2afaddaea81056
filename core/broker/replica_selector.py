"""KIP-392 replica selectors (Kafka 2.6.3's org.apache.kafka.common.replica): which replica a consumer should fetch
from, chosen by the leader from the client's metadata (its rack) and a view of the partition's replicas.

``replica.selector.class`` names the selector with Kafka's class names; unset, there is none and a leader never names
a preferred read replica (ReplicaManager.replicaSelectorOpt is None). kactor loads no Java class: the two selectors
Kafka ships are the ones it knows, and any other name is refused at start-up (where Kafka would fail to load it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import attrs

from messages.common import TopicPartition

LEADER_SELECTOR = "org.apache.kafka.common.replica.LeaderSelector"
RACK_AWARE_SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"


@attrs.frozen
class ClientMetadata:
    """ClientMetadata.DefaultClientMetadata, the parts a selector reads: the consumer's ``client.rack`` (the Fetch
    v11 ``rack_id``; empty: none) and the listener its request came in on."""

    rack_id: str = ""
    listener_name: str = ""


@attrs.frozen
class ReplicaView:
    """ReplicaView.DefaultReplicaView: a replica's broker (its id and ``broker.rack``, as the metadata cache has the
    broker's endpoint on the client's listener), its log end offset and how long since it was last caught up."""

    broker_id: int
    rack: str | None
    log_end_offset: int
    time_since_last_caught_up_ms: float


@attrs.frozen
class PartitionView:
    """PartitionView.DefaultPartitionView: the candidate replicas (the leader among them) and the leader."""

    replicas: tuple[ReplicaView, ...]
    leader: ReplicaView


class ReplicaSelector(Protocol):
    def select(self, tp: TopicPartition, client: ClientMetadata, partition: PartitionView) -> ReplicaView | None:
        ...


def most_caught_up(replicas: Iterable[ReplicaView]) -> ReplicaView | None:
    """The max of ReplicaView.comparator(): the largest log end offset, then the shortest time since last caught up.
    Kafka takes the max over a hash set, so a full tie has no defined winner; here the lowest broker id wins, so that
    the choice replays."""
    return max(replicas, default=None,
               key=lambda r: (r.log_end_offset, -r.time_since_last_caught_up_ms, -r.broker_id))


@attrs.frozen
class LeaderSelector:
    """org.apache.kafka.common.replica.LeaderSelector: always the leader (so no preferred read replica)."""

    def select(self, tp: TopicPartition, client: ClientMetadata, partition: PartitionView) -> ReplicaView | None:
        return partition.leader


@attrs.frozen
class RackAwareReplicaSelector:
    """org.apache.kafka.common.replica.RackAwareReplicaSelector: with a client rack, the leader if it is in that rack,
    else the most caught-up replica of the rack; the leader when the client has no rack or no replica shares it."""

    def select(self, tp: TopicPartition, client: ClientMetadata, partition: PartitionView) -> ReplicaView | None:
        if not client.rack_id:
            return partition.leader
        same_rack = [r for r in partition.replicas if r.rack == client.rack_id]
        if not same_rack or partition.leader in same_rack:
            return partition.leader
        return most_caught_up(same_rack)


SELECTORS: dict[str, type[LeaderSelector] | type[RackAwareReplicaSelector]] = {
    LEADER_SELECTOR: LeaderSelector,
    RACK_AWARE_SELECTOR: RackAwareReplicaSelector,
}


def replica_selector_for(class_name: str | None) -> ReplicaSelector | None:
    """ReplicaManager.createReplicaSelector: the selector ``replica.selector.class`` names (None when unset). An
    unknown name raises ValueError with Kafka's ClassNotFoundException wording and what kactor knows."""
    if class_name is None or not class_name.strip():
        return None
    cls = SELECTORS.get(class_name.strip())
    if cls is None:
        raise ValueError(f"Class {class_name.strip()} cannot be found (kactor knows the replica selectors "
                         f"{', '.join(sorted(SELECTORS))})")
    return cls()
