"""Port of Kafka's TopicDeletionManagerTest (3.0.0 list, 2.6 behaviour; one test per Kafka test, the name in the
docstring) with Kafka's MockReplicaStateMachine / MockPartitionStateMachine / mocked DeletionClient, plus an
end-to-end deletion through KafkaController events."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import pytest

from core.controller.config import ControllerConfig
from core.controller.context import ControllerContext, ordered
from core.controller.errors import ControllerMovedError, KeeperError
from core.controller.kafka_controller import KafkaController
from core.controller.states import (
    NonExistentPartition,
    NonExistentReplica,
    OfflinePartition,
    OfflineReplica,
    OnlinePartition,
    OnlineReplica,
    PartitionState,
    ReplicaDeletionIneligible,
    ReplicaDeletionStarted,
    ReplicaDeletionSuccessful,
    ReplicaState,
)
from core.controller.topic_deletion import TopicDeletionManager
from core.controller.topic_deletion_client import (
    ControllerDeletionClient,
    RemoteTopicDeletionManager,
    SentFacts,
    answer_deletions,
)
from messages import controller_events as ev
from messages.common import (
    Broker,
    EndPoint,
    Errors,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    PartitionAndReplica,
    ReplicaAssignment,
    TopicPartition,
)
from messages.requests import PartitionError, StopReplicaRequest, StopReplicaResponse, UpdateMetadataRequest
from messages.zk import CONTROLLER_MOVED, NONODE, NOTEMPTY, OK, Delete, ZkBatch, ZkOpResult
from protocol.zk import paths, znodes
from tests.support.controller_events import Harness, active_cluster, register_broker, setup_cluster
from tests.support.fake_zookeeper import run


class _Config:
    broker_id = 1
    delete_topic_enable = True


class MockReplicaStateMachine:
    """Kafka's MockReplicaStateMachine: validates transitions (raises on an invalid one), counts calls."""

    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx
        self.state_changes_calls: Counter[ReplicaState] = Counter()

    def handle_state_changes(self, replicas: Iterable[PartitionAndReplica], target: ReplicaState) -> Any:
        self.state_changes_calls[target] += 1
        reps = ordered(replicas)
        for r in reps:
            self.ctx.put_replica_state_if_not_exists(r, NonExistentReplica)
        valid, invalid = self.ctx.check_valid_replica_state_change(reps, target)
        if invalid:
            raise AssertionError(f"invalid replica transitions to {target}: {invalid}")
        for r in valid:
            if target == NonExistentReplica:
                self.ctx.remove_replica_state(r)
            else:
                self.ctx.put_replica_state(r, target)
        return
        yield  # pragma: no cover


class MockPartitionStateMachine:
    """Kafka's MockPartitionStateMachine (no elections are needed by the deletion manager)."""

    def __init__(self, ctx: ControllerContext) -> None:
        self.ctx = ctx
        self.state_changes_calls: Counter[PartitionState] = Counter()

    def handle_state_changes(self, partitions: Iterable[TopicPartition], target: PartitionState,
                             strategy: Any = None) -> Any:
        self.state_changes_calls[target] += 1
        parts = ordered(partitions)
        for tp in parts:
            self.ctx.put_partition_state_if_not_exists(tp, NonExistentPartition)
        valid, invalid = self.ctx.check_valid_partition_state_change(parts, target)
        if invalid:
            raise AssertionError(f"invalid partition transitions to {target}: {invalid}")
        for tp in valid:
            self.ctx.put_partition_state(tp, target)
        return {}
        yield  # pragma: no cover


class MockDeletionClient:
    def __init__(self) -> None:
        self.deleted_topics: list[str] = []
        self.deleted_topic_deletions: list[str] = []
        self.muted: list[str] = []
        self.metadata_updates: list[set[TopicPartition]] = []

    def delete_topic(self, topic: str, epoch_zk_version: int) -> Any:
        self.deleted_topics.append(topic)
        return
        yield  # pragma: no cover

    def delete_topic_deletions(self, topics: Iterable[str], epoch_zk_version: int) -> Any:
        self.deleted_topic_deletions.extend(topics)
        return
        yield  # pragma: no cover

    def mute_partition_modifications(self, topic: str) -> None:
        self.muted.append(topic)

    def send_metadata_update(self, partitions: Iterable[TopicPartition]) -> Any:
        self.metadata_updates.append(set(partitions))
        return
        yield  # pragma: no cover


def _init_context(brokers: list[int], topics: list[str], num_partitions: int, rf: int) -> ControllerContext:
    """Kafka's ControllerTestUtils.initContext: round-robin assignments, leader = first replica, ISR = replicas,
    partitions Online, replicas Online."""
    ctx = ControllerContext()
    ctx.set_live_brokers({Broker(b, (EndPoint("localhost", 9090 + b),), None, 1): 1 for b in brokers})
    for t in topics:
        ctx.all_topics.add(t)
        for p in range(num_partitions):
            tp = TopicPartition(t, p)
            replicas = tuple(brokers[(p + j) % len(brokers)] for j in range(rf))
            ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment(replicas))
            ctx.put_partition_leadership_info(tp, LeaderIsrAndControllerEpoch(LeaderAndIsr(replicas[0], 0, replicas, 0),
                                                                              1))
            ctx.put_partition_state(tp, OnlinePartition)
            for r in replicas:
                ctx.put_replica_state(PartitionAndReplica(tp, r), OnlineReplica)
    return ctx


class _Deletion:
    """Kafka's TopicDeletionManager(config, ctx, replicaStateMachine, partitionStateMachine, client) as the test calls
    it: the controller's calls (RemoteTopicDeletionManager) answered by the TopicDeletionActor's core
    (TopicDeletionManager) in the same generator, its instructions carried out on the mocks."""

    def __init__(self, config: Any, ctx: ControllerContext, rsm: Any, psm: Any, client: Any) -> None:
        sent = SentFacts()
        self.remote = RemoteTopicDeletionManager(config, ctx, sent)
        self.manager = TopicDeletionManager(config.broker_id, config.delete_topic_enable)
        self.client = ControllerDeletionClient(ctx, rsm, psm, client, sent)

    def __getattr__(self, name: str) -> Any:
        call = getattr(self.remote, name)
        if name == "is_topic_queued_up_for_deletion":
            return call
        return lambda *args: answer_deletions(call(*args), self.manager, self.client)


def _manager(ctx: ControllerContext) -> tuple[_Deletion, MockReplicaStateMachine, MockPartitionStateMachine,
                                              MockDeletionClient]:
    rsm, psm, client = MockReplicaStateMachine(ctx), MockPartitionStateMachine(ctx), MockDeletionClient()
    return _Deletion(_Config(), ctx, rsm, psm, client), rsm, psm, client


def _go(proc: Any) -> Any:
    return run(proc, lambda batch: pytest.fail(f"unexpected ZooKeeper access {batch}"))[0]


def test_initialization() -> None:
    """TopicDeletionManagerTest.testInitialization"""
    ctx = _init_context([1, 2, 3], ["foo", "bar", "baz"], 2, 3)
    dm, _, _, _ = _manager(ctx)
    assert ctx.topics_to_be_deleted == set()
    _go(dm.init({"foo", "bar"}, {"bar", "baz"}))
    assert ctx.topics_to_be_deleted == {"foo", "bar"}
    assert ctx.topics_ineligible_for_deletion == {"bar"}


def test_basic_deletion() -> None:
    """TopicDeletionManagerTest.testBasicDeletion"""
    ctx = _init_context([1, 2, 3], ["foo", "bar"], 2, 3)
    dm, rsm, psm, client = _manager(ctx)
    _go(dm.init(set(), set()))
    foo_partitions, bar_partitions = ctx.partitions_for_topic("foo"), ctx.partitions_for_topic("bar")
    foo_replicas = ctx.replicas_for_partition(foo_partitions)
    bar_replicas = ctx.replicas_for_partition(bar_partitions)
    _go(dm.enqueue_topics_for_deletion({"foo", "bar"}))
    assert ctx.partitions_in_state(NonExistentPartition, "foo") == foo_partitions
    assert ctx.partitions_in_state(NonExistentPartition, "bar") == bar_partitions
    assert ctx.replicas_in_state("foo", ReplicaDeletionStarted) == foo_replicas
    assert ctx.replicas_in_state("bar", ReplicaDeletionStarted) == bar_replicas
    assert client.metadata_updates == [foo_partitions | bar_partitions]
    assert ctx.topics_to_be_deleted == {"foo", "bar"}
    assert ctx.topics_with_deletion_started == {"foo", "bar"}
    assert ctx.topics_ineligible_for_deletion == set()
    _go(dm.complete_replica_deletion(foo_replicas | bar_replicas))
    assert ctx.partitions_for_topic("foo") == set() and ctx.partitions_for_topic("bar") == set()
    assert {r for r in ctx.replica_states if r.topic_partition.topic in ("foo", "bar")} == set()
    assert ctx.topics_to_be_deleted == set()
    assert ctx.topics_with_deletion_started == set()
    assert ctx.topics_ineligible_for_deletion == set()
    assert psm.state_changes_calls[OfflinePartition] == 1
    assert psm.state_changes_calls[NonExistentPartition] == 1
    assert rsm.state_changes_calls[ReplicaDeletionIneligible] == 1
    assert rsm.state_changes_calls[OfflineReplica] == 1
    assert rsm.state_changes_calls[ReplicaDeletionStarted] == 1
    assert rsm.state_changes_calls[ReplicaDeletionSuccessful] == 1
    assert sorted(client.deleted_topics) == ["bar", "foo"] and sorted(client.muted) == ["bar", "foo"]


def test_complete_delete_topic_leaves_the_deletion_sets_before_the_znodes_go() -> None:
    """completeDeleteTopic's order in Kafka 2.6: NonExistentReplica, then topicsToBeDeleted / topicsWithDeletionStarted
    lose the topic, then the znodes are deleted, then removeTopic. A znode delete that fails (a KeeperError) therefore
    leaves the topic out of the deletion sets but still in allTopics (removeTopic not reached); removeTopic itself
    leaves the deletion sets alone."""
    ctx = _init_context([1, 2, 3], ["foo"], 1, 3)
    dm, _, _, client = _manager(ctx)
    _go(dm.init(set(), set()))
    _go(dm.enqueue_topics_for_deletion({"foo"}))
    seen: list[tuple[set[str], set[str], set[str]]] = []

    def failing_delete_topic(topic: str, epoch_zk_version: int) -> Any:
        seen.append((set(ctx.topics_to_be_deleted), set(ctx.topics_with_deletion_started), set(ctx.all_topics)))
        raise KeeperError(NOTEMPTY, "/brokers/topics/foo")
        yield  # pragma: no cover

    client.delete_topic = failing_delete_topic  # type: ignore[method-assign]
    with pytest.raises(KeeperError):
        _go(dm.complete_replica_deletion(ctx.replicas_for_topic("foo")))
    assert seen == [(set(), set(), {"foo"})]
    assert ctx.all_topics == {"foo"} and ctx.topics_to_be_deleted == set()
    ctx.queue_topic_deletion({"foo"})
    ctx.remove_topic("foo")
    assert ctx.topics_to_be_deleted == {"foo"} and "foo" not in ctx.all_topics


def test_deletion_with_broker_offline() -> None:
    """TopicDeletionManagerTest.testDeletionWithBrokerOffline"""
    ctx = _init_context([1, 2, 3], ["foo", "bar"], 2, 3)
    dm, rsm, _, _ = _manager(ctx)
    _go(dm.init(set(), set()))
    foo_partitions = ctx.partitions_for_topic("foo")
    foo_replicas = ctx.replicas_for_partition(foo_partitions)
    # Broker 2 is taken offline
    offline_broker = ctx.live_or_shutting_down_broker(2)
    last_epoch = ctx.live_broker_epoch(2)
    ctx.remove_live_brokers({2})
    assert ctx.live_broker_ids() == {1, 3}
    offline = {r for r in foo_replicas if r.replica == 2}
    online = foo_replicas - offline
    _go(rsm.handle_state_changes(offline, OfflineReplica))
    # Start topic deletion
    _go(dm.enqueue_topics_for_deletion({"foo"}))
    assert ctx.partitions_in_state(NonExistentPartition, "foo") == foo_partitions
    assert ctx.replicas_in_state("foo", ReplicaDeletionStarted) == online
    assert ctx.replicas_in_state("foo", ReplicaDeletionIneligible) == offline
    assert ctx.topics_to_be_deleted == {"foo"}
    assert ctx.topics_with_deletion_started == {"foo"}
    assert ctx.topics_ineligible_for_deletion == {"foo"}
    # Deletion succeeds for online replicas
    _go(dm.complete_replica_deletion(online))
    assert ctx.partitions_in_state(NonExistentPartition, "foo") == foo_partitions
    assert ctx.topics_to_be_deleted == {"foo"}
    assert ctx.topics_with_deletion_started == {"foo"}
    assert ctx.topics_ineligible_for_deletion == {"foo"}
    assert ctx.replicas_in_state("foo", ReplicaDeletionSuccessful) == online
    assert ctx.replicas_in_state("foo", OfflineReplica) == offline
    # Broker 2 comes back online and deletion is resumed
    assert offline_broker is not None
    ctx.add_live_brokers({offline_broker: last_epoch + 1})
    _go(dm.resume_deletion_for_topics({"foo"}))
    assert ctx.replicas_in_state("foo", ReplicaDeletionSuccessful) == online
    assert ctx.replicas_in_state("foo", ReplicaDeletionStarted) == offline
    _go(dm.complete_replica_deletion(offline))
    assert ctx.partitions_for_topic("foo") == set()
    assert {r for r in ctx.replica_states if r.topic_partition.topic == "foo"} == set()
    assert ctx.topics_to_be_deleted == set()
    assert ctx.topics_with_deletion_started == set()
    assert ctx.topics_ineligible_for_deletion == set()


def test_broker_failure_after_deletion_started() -> None:
    """TopicDeletionManagerTest.testBrokerFailureAfterDeletionStarted"""
    ctx = _init_context([1, 2, 3], ["foo", "bar"], 2, 3)
    dm, _, _, _ = _manager(ctx)
    _go(dm.init(set(), set()))
    foo_partitions = ctx.partitions_for_topic("foo")
    foo_replicas = ctx.replicas_for_partition(foo_partitions)
    _go(dm.enqueue_topics_for_deletion({"foo"}))
    assert ctx.partitions_in_state(NonExistentPartition, "foo") == foo_partitions
    assert ctx.replicas_in_state("foo", ReplicaDeletionStarted) == foo_replicas
    assert ctx.topics_with_deletion_started == {"foo"} and ctx.topics_ineligible_for_deletion == set()
    # Broker 2 fails
    offline_broker = ctx.live_or_shutting_down_broker(2)
    last_epoch = ctx.live_broker_epoch(2)
    ctx.remove_live_brokers({2})
    offline = {r for r in foo_replicas if r.replica == 2}
    online = foo_replicas - offline
    _go(dm.fail_replica_deletion(offline))
    assert ctx.replicas_in_state("foo", ReplicaDeletionIneligible) == offline
    assert ctx.replicas_in_state("foo", ReplicaDeletionStarted) == online
    assert ctx.topics_ineligible_for_deletion == {"foo"}
    # Broker 2 is restarted. The offline replicas remain ineligable (TODO: this is probably not desired)
    assert offline_broker is not None
    ctx.add_live_brokers({offline_broker: last_epoch + 1})
    _go(dm.resume_deletion_for_topics({"foo"}))
    assert ctx.topics_ineligible_for_deletion == set()
    assert ctx.replicas_in_state("foo", ReplicaDeletionIneligible) == offline
    assert ctx.replicas_in_state("foo", ReplicaDeletionStarted) == online
    # When deletion completes for the replicas which started, then deletion begins for the remaining ones
    _go(dm.complete_replica_deletion(online))
    assert ctx.replicas_in_state("foo", ReplicaDeletionSuccessful) == online
    assert ctx.replicas_in_state("foo", ReplicaDeletionStarted) == offline


def test_deletion_disabled_removes_delete_nodes() -> None:
    """init with delete.topic.enable=false deletes the /admin/delete_topics children and queues nothing."""
    ctx = _init_context([1, 2, 3], ["foo"], 1, 3)

    class _Off(_Config):
        delete_topic_enable = False

    client = MockDeletionClient()
    dm = _Deletion(_Off(), ctx, MockReplicaStateMachine(ctx), MockPartitionStateMachine(ctx), client)
    _go(dm.init({"foo"}, set()))
    assert client.deleted_topic_deletions == ["foo"] and ctx.topics_to_be_deleted == set()
    assert not dm.is_topic_queued_up_for_deletion("foo")


# -- end to end through KafkaController events -------------------------------------------------------------------------

def test_topic_deletion_end_to_end() -> None:
    """/admin/delete_topics/foo → TopicDeletion: UpdateMetadata with leader −2, StopReplica(delete=true, epoch −2) to
    every replica; StopReplica responses → TopicDeletionStopReplicaResponseReceived → the topic's znodes are deleted."""
    h = Harness()
    setup_cluster(h.zk, (1, 2, 3), {"foo": {0: [1, 2, 3], 1: [2, 3, 1]}, "bar": {0: [1, 2]}})
    h.zk.create("/config/topics/foo", '{"version":1,"config":{}}')
    c = h.add(1)
    h.process(1, ev.Startup())
    h.drain()
    h.clear_effects(1)
    h.zk.create("/admin/delete_topics/foo")
    h.drain()
    assert ev.TopicDeletion() in h.processed[1]
    um = [s for s in h.sent(1, UpdateMetadataRequest) if s.request.partition_states]
    assert um and all(ps.leader == -2 for s in um for ps in s.request.partition_states
                      if ps.topic_partition.topic == "foo")
    deletes: dict[int, StopReplicaRequest] = {}
    for s in h.sent(1, StopReplicaRequest):
        if any(ps.delete_partition for ps in s.request.partition_states):
            deletes[s.broker_id] = s.request
    assert sorted(deletes) == [1, 2, 3]
    assert all(ps.leader_epoch == -2 for r in deletes.values() for ps in r.partition_states)
    assert c.gauges().topics_to_delete == 1 and c.gauges().replicas_to_delete == 6
    for b, req in sorted(deletes.items()):
        resp = StopReplicaResponse(Errors.NONE, tuple(PartitionError(ps.topic_partition, Errors.NONE)
                                                      for ps in req.partition_states))
        event = c.event_for_stop_replica_response(b, req, resp)
        assert isinstance(event, ev.TopicDeletionStopReplicaResponseReceived)
        h.process(1, event)
    h.drain()
    assert not h.zk.exists("/brokers/topics/foo")
    assert not h.zk.exists("/config/topics/foo")
    assert not h.zk.exists("/admin/delete_topics/foo")
    assert c.ctx.all_topics == {"bar"} and c.gauges().topics_to_delete == 0
    assert not c.watches.watch_data(paths.TopicZNode.path("foo"))


def test_topic_deletion_of_unknown_topic_or_disabled() -> None:
    """processTopicDeletion: a delete node of an unknown topic is removed; with deletion disabled all are removed."""
    h = Harness()
    setup_cluster(h.zk, (1,), {"foo": {0: [1]}})
    h.add(1, delete_topic_enable=False)
    h.process(1, ev.Startup())
    h.drain()
    h.zk.create("/admin/delete_topics/nope")
    h.zk.create("/admin/delete_topics/foo")
    h.drain()
    assert h.zk.nodes["/admin/delete_topics"].children == set()
    assert h.zk.exists("/brokers/topics/foo")


# -- completeDeleteTopic's ZooKeeper order (KafkaController.delete_topic, no actors) ---------------------------------

def _delete_topic_batches(answer: Any) -> tuple[list[ZkBatch], BaseException | None]:
    """Drive KafkaController.delete_topic("foo", 7); ``answer(batch)`` gives the results of each batch."""
    proc = KafkaController(ControllerConfig(1)).delete_topic("foo", 7)
    batches: list[ZkBatch] = []
    try:
        effect = next(proc)
        while True:
            assert isinstance(effect, ZkBatch)
            batches.append(effect)
            effect = proc.send(answer(effect))
    except StopIteration:
        return batches, None
    except Exception as e:  # noqa: BLE001 - what the proc raised
        return batches, e


def test_delete_topic_znodes_one_after_another() -> None:
    """TopicDeletionManager.completeDeleteTopic: deleteTopicZNode (recursive), then deleteTopicConfigs, then
    deleteTopicDeletions, each fenced and each sent only once the previous one is answered, so the
    /admin/delete_topics marker outlives the topic's znodes."""
    batches, error = _delete_topic_batches(lambda b: tuple(ZkOpResult(OK) for _ in b.ops))
    assert error is None
    assert [b.ops for b in batches] == [(Delete("/brokers/topics/foo", recursive=True),),
                                        (Delete("/config/topics/foo"),),
                                        (Delete("/admin/delete_topics/foo"),)]
    assert all(b.fence_version == 7 for b in batches)
    # an absent node is fine (the deletion is idempotent)
    batches, error = _delete_topic_batches(lambda b: tuple(ZkOpResult(NONODE) for _ in b.ops))
    assert error is None and len(batches) == 3


@pytest.mark.parametrize(("code", "raised"), [(CONTROLLER_MOVED, ControllerMovedError), (NOTEMPTY, KeeperError)])
def test_delete_topic_failed_recursive_delete_keeps_the_marker(code: str, raised: type) -> None:
    """A recursive delete that fails (another controller, or a child created meanwhile) throws, as
    KafkaZkClient.deleteRecursive does: neither the config nor the /admin/delete_topics marker is deleted."""
    batches, error = _delete_topic_batches(lambda b: tuple(ZkOpResult(code) for _ in b.ops))
    assert isinstance(error, raised)
    assert [b.ops for b in batches] == [(Delete("/brokers/topics/foo", recursive=True),)]


def test_delete_topic_controller_moved_before_the_marker() -> None:
    """The fence failing on the config delete stops before the marker delete."""
    def answer(b: ZkBatch) -> tuple[ZkOpResult, ...]:
        return (ZkOpResult(CONTROLLER_MOVED if b.ops[0].path == "/config/topics/foo" else OK),)

    batches, error = _delete_topic_batches(answer)
    assert isinstance(error, ControllerMovedError)
    assert [b.ops[0].path for b in batches] == ["/brokers/topics/foo", "/config/topics/foo"]


def test_stop_replica_top_level_errors_raise_no_deletion_event() -> None:
    """sendStopReplicaRequests' response callback looks only at the partition errors (reference Corrections 10): a
    stale broker epoch (top-level error, no partition errors) and a stale controller epoch (empty partition map) raise
    no TopicDeletionStopReplicaResponseReceived; the replicas stay ReplicaDeletionStarted. A partition error does."""
    h = active_cluster((1, 2), {"foo": {0: [1, 2]}})
    c = h.controllers[1]
    h.zk.create("/admin/delete_topics/foo")
    h.drain()
    (req,) = [s.request for s in h.sent(1, StopReplicaRequest, to=2)
              if any(ps.delete_partition for ps in s.request.partition_states)]
    foo0 = TopicPartition("foo", 0)
    for error in (Errors.STALE_BROKER_EPOCH, Errors.STALE_CONTROLLER_EPOCH):
        assert c.event_for_stop_replica_response(2, req, StopReplicaResponse(error)) is None
    assert c.ctx.replica_state(PartitionAndReplica(foo0, 2)) == ReplicaDeletionStarted
    event = c.event_for_stop_replica_response(
        2, req, StopReplicaResponse(Errors.NONE, (PartitionError(foo0, Errors.KAFKA_STORAGE_ERROR),)))
    assert event == ev.TopicDeletionStopReplicaResponseReceived(
        2, Errors.NONE, (PartitionError(foo0, Errors.KAFKA_STORAGE_ERROR),))
    h.process(1, event)
    assert c.ctx.replica_state(PartitionAndReplica(foo0, 2)) == ReplicaDeletionIneligible


def test_broker_startup_update_metadata_includes_topics_being_deleted() -> None:
    """onBrokerStartup (Kafka 2.6, reference Corrections 4) sends the new broker UpdateMetadata for every partition in
    partitionLeadershipInfo, a topic queued for deletion included (with leader -2, so the broker drops it)."""
    h = active_cluster((1, 2), {"foo": {0: [1, 2]}, "bar": {0: [1]}})
    h.zk.delete("/brokers/ids/2")
    h.drain()
    h.zk.create("/admin/delete_topics/foo")
    h.drain()
    assert h.controllers[1].ctx.topics_ineligible_for_deletion == {"foo"}
    h.clear_effects(1)
    register_broker(h.zk, 2)
    h.drain()
    first = next(s.request for s in h.sent(1, UpdateMetadataRequest, to=2) if s.request.partition_states)
    assert sorted((ps.topic_partition, ps.leader) for ps in first.partition_states) == [
        (TopicPartition("bar", 0), 1), (TopicPartition("foo", 0), -2)]


def test_late_stop_replica_answer_for_a_reassigned_away_replica_leaves_no_state() -> None:
    """A reassignment [1] → [2] stops replica 1 (StopReplica deletePartition=true, B5); the topic's deletion starts
    before broker 1 answers. The late answer names a replica no longer in the partition's assignment: it is ignored
    (kactor's guard, docs/kafka-2.6-departures.md; 2.6 would give it a replica state outside every assignment), and
    the deletion completes with no replica state left."""
    h = active_cluster((1, 2), {"foo": {0: [1]}})
    c = h.controllers[1]
    foo0 = TopicPartition("foo", 0)
    h.zk.create(paths.ReassignPartitionsZNode, znodes.encode_reassign_partitions({foo0: (2,)}))
    h.drain()
    h.zk.leader_writes_isr(foo0, (1, 2))
    h.drain()
    assert c.ctx.partition_replica_assignment(foo0) == (2,)
    (b5,) = [s.request for s in h.sent(1, StopReplicaRequest, to=1)
             if any(ps.delete_partition for ps in s.request.partition_states)]
    h.clear_effects(1)
    h.zk.create("/admin/delete_topics/foo")
    h.drain()
    late = c.event_for_stop_replica_response(1, b5, StopReplicaResponse(Errors.NONE, (PartitionError(foo0,
                                                                                                     Errors.NONE),)))
    assert late == ev.TopicDeletionStopReplicaResponseReceived(1, Errors.NONE, (PartitionError(foo0, Errors.NONE),))
    h.process(1, late)
    assert PartitionAndReplica(foo0, 1) not in c.ctx.replica_states
    (stop2,) = [s.request for s in h.sent(1, StopReplicaRequest, to=2)
                if any(ps.delete_partition for ps in s.request.partition_states)]
    h.process(1, c.event_for_stop_replica_response(2, stop2, StopReplicaResponse(Errors.NONE, (
        PartitionError(foo0, Errors.NONE),))))
    h.drain()
    assert not h.zk.exists("/brokers/topics/foo") and "foo" not in c.ctx.all_topics
    assert c.ctx.replica_states == {}
