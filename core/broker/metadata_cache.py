"""kafka.server.MetadataCache (2.6): the broker's view of the cluster, fed only by UpdateMetadata requests.

Immutable snapshot semantics as in Kafka: each update builds a new snapshot (partition map copied only when the request
carries partition states), so readers holding the previous snapshot are unaffected.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from messages.common import LEADER_DURING_DELETE, NO_LEADER, Broker, Errors, TopicPartition
from messages.requests import UpdateMetadataPartitionState, UpdateMetadataRequest


@attrs.frozen
class MetadataSnapshot:
    partition_states: dict[str, dict[int, UpdateMetadataPartitionState]]
    controller_id: int | None
    alive_brokers: dict[int, Broker]


@attrs.frozen
class PartitionMetadata:
    """One partition of a metadata response (MetadataResponse.PartitionMetadata)."""

    topic_partition: TopicPartition
    error: Errors
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...]


class MetadataCache:
    """MetadataCache(brokerId): alive brokers, controller id and partition states from UpdateMetadata."""

    def __init__(self, broker_id: int) -> None:
        self.broker_id = broker_id
        self.snapshot = MetadataSnapshot({}, None, {})
        self.controller_epoch = -1  # of the last UpdateMetadata taken by maybe_update

    def maybe_update(self, request: UpdateMetadataRequest) -> list[TopicPartition] | None:
        """ReplicaManager.maybeUpdateMetadataCache for a cache of its own (the replica manager's front answers
        Metadata from one): a request from an older controller epoch is ignored (None), else `update_metadata`."""
        if request.controller_epoch < self.controller_epoch:
            return None
        self.controller_epoch = request.controller_epoch
        return self.update_metadata(request)

    # ------------------------------------------------------------------------------------------------------ update

    def update_metadata(self, request: UpdateMetadataRequest) -> list[TopicPartition]:
        """MetadataCache.updateMetadata: replace alive brokers, set controller id, merge partition states.

        A state with leader −2 (LeaderDuringDelete) removes the partition; returns those deleted partitions.
        """
        alive = {b.id: b for b in request.live_brokers}
        controller_id = request.controller_id if request.controller_id >= 0 else None
        deleted: list[TopicPartition] = []
        if not request.partition_states:
            self.snapshot = MetadataSnapshot(self.snapshot.partition_states, controller_id, alive)
            return deleted
        # Kafka copies every topic's map; only the topics this request touches are copied here (readers of the old
        # snapshot still see it whole): an UpdateMetadata for a few partitions of 25,000 topics copied all 25,000.
        states = dict(self.snapshot.partition_states)
        copied: set[str] = set()
        for st in request.partition_states:
            tp = st.topic_partition
            topic = tp.topic
            if topic not in copied:
                copied.add(topic)
                old = states.get(topic)
                if old is not None:
                    states[topic] = dict(old)
            if st.leader == LEADER_DURING_DELETE:
                parts = states.get(topic)
                if parts is not None:
                    parts.pop(tp.partition, None)
                    if not parts:
                        del states[topic]
                deleted.append(tp)
            else:
                parts = states.get(topic)
                if parts is None:
                    parts = states[topic] = {}
                parts[tp.partition] = st
        self.snapshot = MetadataSnapshot(states, controller_id, alive)
        return deleted

    # ------------------------------------------------------------------------------------------------------ reads

    def get_alive_brokers(self) -> tuple[Broker, ...]:
        return tuple(self.snapshot.alive_brokers.values())

    def get_alive_broker(self, broker_id: int) -> Broker | None:
        return self.snapshot.alive_brokers.get(broker_id)

    def has_alive_broker(self, broker_id: int) -> bool:
        return broker_id in self.snapshot.alive_brokers

    def get_controller_id(self) -> int | None:
        return self.snapshot.controller_id

    def contains(self, tp: TopicPartition) -> bool:
        return tp.partition in self.snapshot.partition_states.get(tp.topic, {})

    def get_partition_info(self, tp: TopicPartition) -> UpdateMetadataPartitionState | None:
        return self.snapshot.partition_states.get(tp.topic, {}).get(tp.partition)

    def get_all_topics(self) -> set[str]:
        return set(self.snapshot.partition_states)

    def get_all_partitions(self) -> set[TopicPartition]:
        return {TopicPartition(t, p) for t, parts in self.snapshot.partition_states.items() for p in parts}

    def get_partition_leader(self, tp: TopicPartition) -> int | None:
        """The leader id if the partition has one that is alive (getPartitionLeaderEndpoint)."""
        info = self.get_partition_info(tp)
        if info is None or info.leader == NO_LEADER or info.leader not in self.snapshot.alive_brokers:
            return None
        return info.leader

    def get_topic_metadata(self, topics: Iterable[str], listener: str | None = None,
                           error_unavailable_endpoints: bool = True,
                           error_unavailable_listeners: bool = False) -> list[PartitionMetadata]:
        """MetadataCache.getPartitionMetadata for ``topics`` (unknown topics are skipped), partitions in order.

        A broker counts as available when it is alive and (``listener`` given) has that listener. Leader not
        available → LEADER_NOT_AVAILABLE, leader −1 (an alive leader without the listener: LISTENER_NOT_FOUND when
        ``error_unavailable_listeners``, Metadata v6+); with ``error_unavailable_endpoints`` (Metadata v0) the
        replicas, ISR and offline replicas list only available brokers, and a missing one makes
        REPLICA_NOT_AVAILABLE; otherwise every id is listed and the leader's presence decides.
        """
        alive = self.snapshot.alive_brokers

        def available(broker_id: int) -> bool:
            b = alive.get(broker_id)
            return b is not None and (listener is None or any(ep.listener_name == listener for ep in b.endpoints))

        def endpoints(ids: Iterable[int]) -> tuple[int, ...]:
            return tuple(r for r in ids if available(r)) if error_unavailable_endpoints else tuple(ids)

        result: list[PartitionMetadata] = []
        for topic in topics:
            for p, st in sorted(self.snapshot.partition_states.get(topic, {}).items()):
                tp = TopicPartition(topic, p)
                replicas, isr = endpoints(st.replicas), endpoints(st.isr)
                offline = endpoints(st.offline_replicas)
                if not available(st.leader):
                    error = Errors.LEADER_NOT_AVAILABLE
                    if st.leader in alive and error_unavailable_listeners:
                        error = Errors.LISTENER_NOT_FOUND
                    result.append(PartitionMetadata(tp, error, NO_LEADER, st.leader_epoch, replicas, isr, offline))
                    continue
                if len(replicas) < len(st.replicas) or len(isr) < len(st.isr):
                    error = Errors.REPLICA_NOT_AVAILABLE
                else:
                    error = Errors.NONE
                result.append(PartitionMetadata(tp, error, st.leader, st.leader_epoch, replicas, isr, offline))
        return result
