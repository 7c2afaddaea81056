"""Test harness for KafkaController scenarios on the in-memory ZooKeeper model (its one-shot watches per session):
a driver that runs controller events like the ControllerActor does (one at a time, watch notifications and
self-enqueued events feeding the queue)."""

from __future__ import annotations

from collections import deque
from typing import Any

from core.controller.config import ControllerConfig
from core.controller.kafka_controller import KafkaController
from core.controller.topic_deletion import TopicDeletionManager
from core.controller.topic_deletion_client import answer_deletions
from core.effects import AddBrokerChannel, Enqueue, RemoveBrokerChannel, SendRequest
from messages import controller_events as ev
from messages.common import (
    Broker,
    EndPoint,
    PartitionAndReplica,
    ReplicaAssignment,
    TopicPartition,
)
from protocol.zk import paths, znodes
from tests.support.controller import sent
from tests.support.fake_zookeeper import FakeZooKeeper, run


def broker(broker_id: int) -> Broker:
    return Broker(broker_id, (EndPoint(f"host{broker_id}", 9090 + broker_id),))


def setup_cluster(zk: FakeZooKeeper, brokers: list[int] | tuple[int, ...],
                  topics: dict[str, dict[int, list[int]]] | None = None) -> None:
    """Top-level paths, broker registrations and topic assignments (no partition states)."""
    for p in paths.PERSISTENT_ZK_PATHS:
        if not zk.exists(p):
            zk.create(p)
    if not zk.exists("/admin"):
        zk.create("/admin")
    for b in brokers:
        register_broker(zk, b)
    for t, parts in (topics or {}).items():
        create_topic(zk, t, parts)


def register_broker(zk: FakeZooKeeper, broker_id: int) -> None:
    zk.create(paths.BrokerIdZNode.path(broker_id), znodes.encode_broker(broker(broker_id), timestamp_ms=0))


def create_topic(zk: FakeZooKeeper, topic: str, parts: dict[int, list[int]]) -> None:
    """AdminZkClient.createTopic: the assignment znode only (the controller creates the partition states)."""
    zk.create(paths.TopicZNode.path(topic), znodes.encode_topic_assignment(
        {TopicPartition(topic, p): ReplicaAssignment(tuple(r)) for p, r in parts.items()}))


def preferred_replica_imbalance_count_2_6(c: KafkaController) -> int:
    """Kafka 2.6's updateMetrics recount of PreferredReplicaImbalanceCount after every event (reference Corrections
    7): partitions with a leadership record, not queued for deletion, whose leader is not the preferred replica -
    or, while the preferred replica is being added by a reassignment, whose ISR already holds it."""
    ctx = c.ctx
    count = 0
    for tp in ctx.iter_all_partitions():
        assignment = ctx.partition_full_replica_assignment(tp)
        info = ctx.partition_leadership_info(tp)
        if info is None or not assignment.replicas:
            continue
        if c.topic_deletion_manager.is_topic_queued_up_for_deletion(tp.topic):
            continue
        preferred = assignment.replicas[0]
        if assignment.is_being_reassigned and preferred in assignment.adding_replicas:
            count += preferred in info.leader_and_isr.isr
        else:
            count += info.leader_and_isr.leader != preferred
    return count


def assert_context_consistent(c: KafkaController) -> None:
    """Every partition of the context has a partition state, every replica of every assignment a replica state, no
    replica state is left for a replica outside the assignments, and only known partitions are being reassigned
    (issue #19: a replica without a state made every later deletion of its topic fail)."""
    ctx = c.ctx
    replicas = {PartitionAndReplica(tp, r) for tp in ctx.iter_all_partitions()
                for r in ctx.partition_replica_assignment(tp)}
    assert set(ctx.replica_states) == replicas, set(ctx.replica_states) ^ replicas
    assert set(ctx.partition_states) >= set(ctx.iter_all_partitions())
    assert ctx.partitions_being_reassigned <= set(ctx.iter_all_partitions())


def active_cluster(brokers: tuple[int, ...] = (1, 2, 3), topics: dict | None = None, **config: Any) -> Harness:
    """A cluster whose broker 1 is the active controller after its Startup; its effects so far are cleared."""
    h = Harness()
    setup_cluster(h.zk, brokers, topics)
    h.add(1, **config)
    h.process(1, ev.Startup())
    h.drain()
    h.clear_effects(1)
    return h


class Harness:
    """Drives KafkaControllers (one per broker id = ZooKeeper session) on one FakeZooKeeper."""

    def __init__(self, zk: FakeZooKeeper | None = None) -> None:
        self.zk = zk if zk is not None else FakeZooKeeper()
        self.controllers: dict[int, KafkaController] = {}
        # each broker's TopicDeletionActor core, answering its controller's deletion calls in the same generator
        self.deletion_managers: dict[int, TopicDeletionManager] = {}
        self.queues: dict[int, deque[Any]] = {}
        self.effects: dict[int, list[Any]] = {}
        self.processed: dict[int, list[Any]] = {}
        self.now_ms = 1_600_000_000_000

    def add(self, broker_id: int, **config: Any) -> KafkaController:
        c = KafkaController(ControllerConfig(broker_id, **config))
        self.controllers[broker_id] = c
        self.deletion_managers[broker_id] = TopicDeletionManager(broker_id, c.config.delete_topic_enable)
        self.queues[broker_id] = deque()
        self.effects[broker_id] = []
        self.processed[broker_id] = []
        return c

    def process(self, broker_id: int, event: Any) -> Any:
        """Process one event on broker_id's controller; collect its effects; queue self-enqueued events."""
        c = self.controllers[broker_id]
        self.zk.session_id = broker_id
        result, effects = run(answer_deletions(c.process(event, now_ms=self.now_ms), self.deletion_managers[broker_id],
                                               c.deletion_client), self.zk)
        self.processed[broker_id].append(event)
        if c.is_active:
            assert c.ctx.preferred_replica_imbalance_count == preferred_replica_imbalance_count_2_6(c), event
            assert_context_consistent(c)
        for e in effects:
            self.effects[broker_id].append(e)
            if isinstance(e, Enqueue):
                self.queues[broker_id].append(e.event)
        return result

    def deliver_watches(self) -> None:
        fired, self.zk.fired = self.zk.fired, []
        for session, watch in fired:
            c = self.controllers.get(session)
            if c is not None:
                self.queues[session].extend(c.events_for_watch(watch))

    def drain(self, max_events: int = 500) -> None:
        """Process queued and watch-triggered events until quiet."""
        for _ in range(max_events):
            self.deliver_watches()
            pending = [b for b, q in self.queues.items() if q]
            if not pending:
                return
            b = pending[0]
            self.process(b, self.queues[b].popleft())
        raise AssertionError("controller events did not quiesce")

    def sent(self, broker_id: int, request_type: type | None = None, to: int | None = None) -> list[SendRequest]:
        return sent(self.effects[broker_id], request_type, to)

    def clear_effects(self, broker_id: int) -> None:
        self.effects[broker_id].clear()

    def channels(self, broker_id: int) -> list[Any]:
        return [e for e in self.effects[broker_id] if isinstance(e, AddBrokerChannel | RemoveBrokerChannel)]
