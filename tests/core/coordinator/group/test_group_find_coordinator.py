"""FindCoordinator against an in-memory ZooKeeper and a broker's metadata cache: the group's partition (Java's
String.hashCode), the creation of __consumer_offsets with its exact znodes, COORDINATOR_NOT_AVAILABLE until the
cache knows a leader, then the leader's endpoint on the request's listener (COORDINATOR_NOT_AVAILABLE if it has none
there). Unless a test says otherwise the cache is ZooKeeper's state as the controller's UpdateMetadata carries it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from core.api.metadata import handle_metadata_request
from core.api.registry import coordinator_service_of
from core.broker.metadata_cache import MetadataCache
from core.coordinator.group.find_coordinator import (
    ReadMetadataCache,
    assign_replicas,
    find_coordinator,
    offsets_topic_partition_count,
)
from core.coordinator.group.group_metadata_manager import java_string_hash, partition_for
from core.effects import run_sync
from core.zk_client import KafkaZkClient
from messages.common import Broker, EndPoint, Errors, ReplicaAssignment, TopicPartition
from messages.group import FindCoordinatorRequest, FindCoordinatorResponse, GroupCoordinatorConfig
from messages.requests import UpdateMetadataPartitionState, UpdateMetadataRequest
from messages.transaction import TransactionCoordinatorConfig
from protocol.zk import paths, znodes
from tests.support.fake_zookeeper import FakeZooKeeper

TOPIC = "__consumer_offsets"


@pytest.mark.parametrize("s,h", [("", 0), ("a", 97), ("ab", 3105), ("polygenelubricants", -(1 << 31)),
                                 ("\U0001F600", 0xD83D * 31 + 0xDE00), ("hello world", 1794106052)])
def test_java_string_hash(s, h):
    assert java_string_hash(s) == h


def test_partition_for_uses_utils_abs():
    assert partition_for("polygenelubricants", 50) == 0  # Utils.abs(Integer.MIN_VALUE) = 0
    assert partition_for("hello world", 50) == 1794106052 % 50
    assert partition_for("ab", 7) == 3105 % 7


def test_assign_replicas_rack_unaware_from_index_zero():
    a = assign_replicas([1, 2, 3], 4, 2)
    assert [a[TopicPartition(TOPIC, p)].replicas for p in range(4)] == [(1, 2), (2, 3), (3, 1), (1, 3)]


def _zk(*brokers: int) -> FakeZooKeeper:
    zk = FakeZooKeeper().create_top_level_paths()
    for b in brokers:
        zk.create(f"/brokers/ids/{b}", znodes.encode_broker(
            Broker(b, (EndPoint("127.0.0.1", 9090 + b), EndPoint("localhost", 9190 + b, "OTHER"))), timestamp_ms=1))
    return zk


def updated_cache(zk: FakeZooKeeper) -> MetadataCache:
    """A broker's metadata cache once the controller's UpdateMetadata has carried ZooKeeper's brokers and partition
    states to it."""
    live = tuple(znodes.decode_broker(int(b), zk.get(f"/brokers/ids/{b}")) for b in zk.children("/brokers/ids"))
    states = []
    for topic in zk.children("/brokers/topics"):
        for p in zk.children(f"/brokers/topics/{topic}/partitions") if zk.exists(
                f"/brokers/topics/{topic}/partitions") else ():
            tp = TopicPartition(topic, int(p))
            s = zk.state(tp)
            assignment = znodes.decode_topic_assignment(topic, zk.get(paths.TopicZNode.path(topic)))
            states.append(UpdateMetadataPartitionState(tp, s.controller_epoch, s.leader_and_isr.leader,
                                                       s.leader_and_isr.leader_epoch, s.leader_and_isr.isr,
                                                       s.leader_and_isr.zk_version, assignment[tp].replicas))
    cache = MetadataCache(1)
    cache.maybe_update(UpdateMetadataRequest(1, 1, 1, tuple(states), live))
    return cache


def answer_from(cache: MetadataCache | None) -> Callable[[Any], Any]:
    """The replica manager's answer to the coordinator's ask of its cache."""
    def ask(effect: Any) -> Any:
        if not isinstance(effect, ReadMetadataCache):
            return None  # Respond
        assert cache is not None
        return handle_metadata_request(cache, effect.request())
    return ask


def _find(zk: FakeZooKeeper, key: str = "g", key_type: int = 0, listener: str = "PLAINTEXT",
          config: GroupCoordinatorConfig | None = None, partitions: int = 5,
          cache: MetadataCache | None = None) -> tuple[FindCoordinatorResponse, int]:
    cfg = config or GroupCoordinatorConfig(offsets_topic_num_partitions=partitions, offsets_topic_replication_factor=3)
    return run_sync(find_coordinator(KafkaZkClient(), cfg, partitions, FindCoordinatorRequest(key, key_type, listener)),
                    zk, ask=answer_from(cache or updated_cache(zk)))


def test_first_find_coordinator_creates_the_offsets_topic_with_its_replication_factor():
    zk = _zk(1, 2, 3)
    resp, count = _find(zk)
    assert (resp.error, count) == (Errors.COORDINATOR_NOT_AVAILABLE, None)
    assert json.loads(zk.get("/brokers/topics/__consumer_offsets")) == {
        "version": 2, "partitions": {"0": [1, 2, 3], "1": [2, 3, 1], "2": [3, 1, 2], "3": [1, 3, 2], "4": [2, 1, 3]},
        "adding_replicas": {}, "removing_replicas": {}}
    assert json.loads(zk.get("/config/topics/__consumer_offsets")) == {
        "version": 1, "config": {"cleanup.policy": "compact", "compression.type": "producer",
                                 "segment.bytes": "104857600"}}
    assert run_sync(offsets_topic_partition_count(KafkaZkClient()), zk) == 5
    # until the controller elects the partition's leader
    assert _find(zk)[0].error is Errors.COORDINATOR_NOT_AVAILABLE


def test_the_offsets_topic_waits_for_as_many_live_brokers_as_its_replication_factor(caplog):
    """KafkaApis.createInternalTopic: with fewer live brokers than offsets.topic.replication.factor nothing is
    created (kactor created it with fewer replicas, for ever) and FindCoordinator answers COORDINATOR_NOT_AVAILABLE,
    with 2.6's log line."""
    zk = _zk(1, 2)
    assert _find(zk)[0].error is Errors.COORDINATOR_NOT_AVAILABLE
    assert not zk.exists("/brokers/topics/__consumer_offsets")
    assert ("Number of alive brokers '2' does not meet the required replication factor '3' for the offsets topic "
            "(configured via 'offsets.topic.replication.factor'). This error can be ignored if the cluster is "
            "starting up and not all brokers are up yet.") in caplog.messages
    # the third broker comes up: the next FindCoordinator creates it with 3 replicas per partition
    zk.create("/brokers/ids/3", znodes.encode_broker(Broker(3, (EndPoint("127.0.0.1", 9093),)), timestamp_ms=1))
    assert _find(zk)[0].error is Errors.COORDINATOR_NOT_AVAILABLE
    assert {len(r) for r in json.loads(zk.get("/brokers/topics/__consumer_offsets"))["partitions"].values()} == {3}
    # a setting the live brokers meet: created at once
    zk2 = _zk(1, 2)
    _find(zk2, config=GroupCoordinatorConfig(offsets_topic_num_partitions=5, offsets_topic_replication_factor=2))
    assert json.loads(zk2.get("/brokers/topics/__consumer_offsets"))["partitions"] == {
        "0": [1, 2], "1": [2, 1], "2": [1, 2], "3": [2, 1], "4": [1, 2]}


def test_the_leader_of_the_groups_partition_answers_on_the_requests_listener():
    zk = _zk(1, 2, 3)
    _find(zk)
    p = partition_for("g", 5)
    zk.put_partition_state(TopicPartition(TOPIC, p), 2, (2, 1))
    assert _find(zk) == (FindCoordinatorResponse(Errors.NONE, 2, "127.0.0.1", 9092), 5)
    assert _find(zk, listener="OTHER")[0] == FindCoordinatorResponse(Errors.NONE, 2, "localhost", 9192)
    # KafkaApis' getNode(listenerName): no endpoint on the request's listener, no coordinator (kactor answered the
    # first endpoint, an address of another listener the client may not reach)
    assert _find(zk, listener="EXTERNAL") == (FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE), 5)
    zk.delete("/brokers/ids/2")  # the leader is gone: not available until a new one is elected
    assert _find(zk)[0].error is Errors.COORDINATOR_NOT_AVAILABLE


def test_a_leader_only_zookeeper_knows_is_not_the_coordinator_yet():
    """KafkaApis answers from its metadata cache: a leader the controller wrote to ZooKeeper but has not yet told
    the brokers (it died before sending LeaderAndIsr and UpdateMetadata) is not named, as it would answer
    NOT_COORDINATOR (librdkafka then never re-fetches its assignment's committed offsets)."""
    zk = _zk(1, 2, 3)
    _find(zk)
    before = updated_cache(zk)  # the topic as created, no leader yet
    p = partition_for("g", 5)
    zk.put_partition_state(TopicPartition(TOPIC, p), 2, (2, 1))
    assert _find(zk, cache=before) == (FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE), 5)
    assert _find(zk, cache=MetadataCache(1)) == (FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE), 5)
    assert _find(zk) == (FindCoordinatorResponse(Errors.NONE, 2, "127.0.0.1", 9092), 5)


def test_an_existing_topics_partition_count_wins_over_the_config():
    zk = _zk(1)
    zk.create("/brokers/topics/__consumer_offsets", znodes.encode_topic_assignment(
        {TopicPartition(TOPIC, p): ReplicaAssignment((1,)) for p in range(3)}))
    zk.put_partition_state(TopicPartition(TOPIC, partition_for("g", 3)), 1, (1,))
    assert _find(zk, partitions=50) == (FindCoordinatorResponse(Errors.NONE, 1, "127.0.0.1", 9091), 3)


def test_unknown_key_type():
    zk = _zk(1)
    assert _find(zk, key_type=5)[0].error is Errors.INVALID_REQUEST
    assert not zk.exists("/brokers/topics/__consumer_offsets")


def _find_txn(zk: FakeZooKeeper, key: str, partitions: int = 4,
              config: TransactionCoordinatorConfig | None = None) -> tuple[FindCoordinatorResponse, int | None]:
    cfg = config or TransactionCoordinatorConfig(transaction_log_num_partitions=partitions)
    return run_sync(find_coordinator(KafkaZkClient(), GroupCoordinatorConfig(), partitions,
                                     FindCoordinatorRequest(key, 1, "PLAINTEXT"), cfg),
                    zk, ask=answer_from(updated_cache(zk)))


def test_a_transactional_ids_coordinator_leads_its_transaction_state_partition():
    """Key type 1: __transaction_state is created as TransactionStateManager.transactionTopicConfigs says (only
    once transaction.state.log.replication.factor brokers are alive), COORDINATOR_NOT_AVAILABLE until its
    partition has a leader, then that leader; __consumer_offsets is not touched."""
    zk = _zk(1, 2)
    assert _find_txn(zk, "txn-a") == (FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE), None)
    assert not zk.exists("/brokers/topics/__transaction_state")
    zk.create("/brokers/ids/3", znodes.encode_broker(Broker(3, (EndPoint("127.0.0.1", 9093),)), timestamp_ms=1))
    assert _find_txn(zk, "txn-a")[0].error is Errors.COORDINATOR_NOT_AVAILABLE
    assert json.loads(zk.get("/brokers/topics/__transaction_state"))["partitions"] == {
        "0": [1, 2, 3], "1": [2, 3, 1], "2": [3, 1, 2], "3": [1, 3, 2]}
    assert json.loads(zk.get("/config/topics/__transaction_state")) == {
        "version": 1, "config": {"unclean.leader.election.enable": "false", "compression.type": "uncompressed",
                                 "cleanup.policy": "compact", "min.insync.replicas": "2",
                                 "segment.bytes": "104857600"}}
    assert not zk.exists("/brokers/topics/__consumer_offsets")
    p = partition_for("txn-a", 4)
    assert p == abs(java_string_hash("txn-a")) % 4
    zk.put_partition_state(TopicPartition("__transaction_state", p), 3, (3, 1))
    assert _find_txn(zk, "txn-a") == (FindCoordinatorResponse(Errors.NONE, 3, "127.0.0.1", 9093), 4)


def test_no_live_broker_creates_nothing():
    zk = _zk()
    assert _find(zk)[0].error is Errors.COORDINATOR_NOT_AVAILABLE
    assert not zk.exists("/brokers/topics/__consumer_offsets")


def test_the_group_coordinator_serves_find_coordinator_and_keeps_the_partition_count_it_read():
    """FindCoordinator is one of the coordinator's request types (its unit's service): its answer goes to the request's
    reply handle, and the partition count read from ZooKeeper becomes the coordinator's."""
    from core.coordinator.group.group_coordinator import GroupCoordinator
    from core.effects import ReplyHandle, Respond

    zk = _zk(1)
    zk.create("/brokers/topics/__consumer_offsets", znodes.encode_topic_assignment(
        {TopicPartition(TOPIC, p): ReplicaAssignment((1,)) for p in range(3)}))
    zk.put_partition_state(TopicPartition(TOPIC, partition_for("g", 3)), 1, (1,))
    gc = GroupCoordinator(1, GroupCoordinatorConfig(offsets_topic_num_partitions=50), lambda: 0.0)
    effects: list = []
    request = FindCoordinatorRequest("g", 0, "PLAINTEXT")
    run_sync(coordinator_service_of(request).handle(gc, request, ReplyHandle(7)), zk, effects.append,
             answer_from(updated_cache(zk)))
    effects = [e for e in effects if not isinstance(e, ReadMetadataCache)]
    assert effects == [Respond(ReplyHandle(7), FindCoordinatorResponse(Errors.NONE, 1, "127.0.0.1", 9091))]
    assert gc.manager.num_partitions == 3


def test_a_find_coordinator_whose_lookup_fails_is_coordinator_not_available():
    """An undecodable __consumer_offsets znode, or a lookup that raises: COORDINATOR_NOT_AVAILABLE, which the client
    retries, and nothing is created over the topic."""
    from core.coordinator.group.group_coordinator import GroupCoordinator
    from core.effects import ReplyHandle, Respond

    zk = _zk(1)
    zk.create("/brokers/topics/__consumer_offsets", "not json")
    gc = GroupCoordinator(1, GroupCoordinatorConfig(offsets_topic_num_partitions=3), lambda: 0.0)
    effects: list = []
    request = FindCoordinatorRequest("g")
    run_sync(coordinator_service_of(request).handle(gc, request, ReplyHandle(1)), zk, effects.append)
    assert effects == [Respond(ReplyHandle(1), FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE))]
    assert zk.get("/brokers/topics/__consumer_offsets") == "not json"

    zk.set("/brokers/topics/__consumer_offsets", znodes.encode_topic_assignment(
        {TopicPartition(TOPIC, p): ReplicaAssignment((1,)) for p in range(3)}))
    effects.clear()
    run_sync(coordinator_service_of(request).handle(gc, request, ReplyHandle(2)), zk, effects.append,
             lambda e: "no answer")
    assert effects[-1] == Respond(ReplyHandle(2), FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE))
