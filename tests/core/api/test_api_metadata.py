"""Metadata v0-9: KafkaApis.handleTopicMetadataRequest over a MetadataCache, and the converters both ways against
protocol's codec."""

from __future__ import annotations

import pytest

from core.api import metadata
from core.api.registry import RequestContext
from core.broker.metadata_cache import MetadataCache
from messages.common import Broker, EndPoint, Errors, TopicPartition
from messages.metadata import (
    AUTHORIZED_OPERATIONS_OMITTED,
    AutoCreateConfig,
    CreatableTopic,
    MetadataBroker,
    MetadataPartition,
    MetadataRequest,
    MetadataResponse,
    MetadataTopic,
)
from messages.requests import UpdateMetadataPartitionState, UpdateMetadataRequest
from protocol.codec import decode_request, decode_response, encode_request, encode_response


def _broker(i: int, internal: bool = True) -> Broker:
    eps = (EndPoint(f"127.0.0.{i}", 9092, "PLAINTEXT"),)
    if internal:
        eps += (EndPoint(f"10.0.0.{i}", 9093, "INTERNAL"),)
    return Broker(i, eps, rack=f"r{i}")


def _state(topic: str, p: int, leader: int, isr: tuple[int, ...], replicas: tuple[int, ...], epoch: int = 4,
           offline: tuple[int, ...] = ()) -> UpdateMetadataPartitionState:
    return UpdateMetadataPartitionState(TopicPartition(topic, p), 1, leader, epoch, isr, 0, replicas, offline)


def _cache(states: tuple[UpdateMetadataPartitionState, ...], live: tuple[Broker, ...], controller: int = 2,
           controller_epoch: int = 1) -> MetadataCache:
    cache = MetadataCache(1)
    cache.maybe_update(UpdateMetadataRequest(controller, controller_epoch, 1, states, live))
    return cache


CACHE_STATES = (
    _state("orders", 0, 1, (1, 2), (1, 2)),
    _state("orders", 1, 2, (2, 1), (2, 1, 3), epoch=7, offline=(3,)),  # broker 3 is not alive
    _state("orders", 2, 3, (3,), (3, 1)),  # its leader is not alive
    _state("__consumer_offsets", 0, 1, (1,), (1,)),
)


def _request(topics, version=9, listener="PLAINTEXT", **kw) -> MetadataRequest:
    return MetadataRequest(topics, listener=listener, api_version=version, cluster_id="Ab3dCluster", **kw)


def test_topics_partitions_brokers_controller_and_cluster_id():
    cache = _cache(CACHE_STATES, (_broker(1), _broker(2)))
    resp = metadata.handle_metadata_request(cache, _request(("orders", "nope")))
    assert resp.brokers == (MetadataBroker(1, "127.0.0.1", 9092, "r1"), MetadataBroker(2, "127.0.0.2", 9092, "r2"))
    assert resp.cluster_id == "Ab3dCluster" and resp.controller_id == 2
    orders, nope = resp.topics
    assert nope == MetadataTopic("nope", Errors.UNKNOWN_TOPIC_OR_PARTITION)
    assert orders.error == Errors.NONE and not orders.is_internal
    assert orders.partitions == (
        MetadataPartition(0, Errors.NONE, 1, 4, (1, 2), (1, 2), ()),
        # v1+: every replica id is listed, alive or not, and the leader decides (errorUnavailableEndpoints false)
        MetadataPartition(1, Errors.NONE, 2, 7, (2, 1, 3), (2, 1), (3,)),
        MetadataPartition(2, Errors.LEADER_NOT_AVAILABLE, -1, 4, (3, 1), (3,), ()),
    )


def test_v0_lists_only_available_replicas_and_says_replica_not_available():
    cache = _cache(CACHE_STATES, (_broker(1), _broker(2)))
    (orders,) = metadata.handle_metadata_request(cache, _request(("orders",), version=0)).topics
    assert orders.partitions[1] == MetadataPartition(1, Errors.REPLICA_NOT_AVAILABLE, 2, 7, (2, 1), (2, 1), ())
    assert orders.partitions[2] == MetadataPartition(2, Errors.LEADER_NOT_AVAILABLE, -1, 4, (1,), (), ())


def test_the_listener_the_request_came_in_on_decides_endpoints_and_listener_not_found():
    cache = _cache(CACHE_STATES, (_broker(1), _broker(2, internal=False)))
    resp = metadata.handle_metadata_request(cache, _request(("orders",), listener="INTERNAL"))
    assert resp.brokers == (MetadataBroker(1, "10.0.0.1", 9093, "r1"),)  # broker 2 has no INTERNAL endpoint
    p1 = resp.topics[0].partitions[1]
    assert p1.error == Errors.LISTENER_NOT_FOUND and p1.leader == -1  # v6+: its leader is alive, but not there
    old = metadata.handle_metadata_request(cache, _request(("orders",), version=5, listener="INTERNAL"))
    assert old.topics[0].partitions[1].error == Errors.LEADER_NOT_AVAILABLE  # v5 and below


def test_all_topics_internal_flag_unknown_controller_and_authorized_operations():
    cache = _cache(CACHE_STATES, (_broker(1),), controller=-1)
    resp = metadata.handle_metadata_request(cache, _request(None, include_topic_authorized_operations=True,
                                                            include_cluster_authorized_operations=True))
    assert [t.name for t in resp.topics] == ["__consumer_offsets", "orders"]
    assert resp.topics[0].is_internal and resp.controller_id == -1
    assert resp.topics[0].topic_authorized_operations == metadata.TOPIC_OPERATIONS == 0b110111111000
    assert resp.cluster_authorized_operations == metadata.CLUSTER_OPERATIONS == 0b1111110100000
    plain = metadata.handle_metadata_request(cache, _request(()))
    assert plain.topics == () and plain.cluster_authorized_operations == AUTHORIZED_OPERATIONS_OMITTED


ON = AutoCreateConfig(True, 3, 2)  # auto.create.topics.enable, num.partitions, default.replication.factor


def test_an_unknown_topic_is_auto_created_leader_not_available_and_listed_for_the_edge():
    cache = _cache(CACHE_STATES, (_broker(1), _broker(2)))
    r = metadata.handle_metadata_request(cache, _request(("orders", "new-topic"), auto_create=ON))
    assert [(t.name, t.error, t.partitions) for t in r.topics][1] == ("new-topic", Errors.LEADER_NOT_AVAILABLE, ())
    assert r.topics[0].error == Errors.NONE
    assert r.create_topics == (CreatableTopic("new-topic", 3, 2),)
    assert metadata.edge_task(r) == ("auto_create", (CreatableTopic("new-topic", 3, 2),))
    assert "create_topics" not in str(metadata.response_to_wire(9, r))  # kactor-internal: never on the wire


@pytest.mark.parametrize(("auto_create", "allow"), [(AutoCreateConfig(False, 1, 1), True), (ON, False)])
def test_without_the_broker_setting_or_the_clients_permission_the_topic_stays_unknown(auto_create, allow):
    cache = _cache(CACHE_STATES, (_broker(1), _broker(2)))
    r = metadata.handle_metadata_request(cache, _request(("new-topic",), auto_create=auto_create,
                                                         allow_auto_topic_creation=allow))
    assert [(t.name, t.error) for t in r.topics] == [("new-topic", Errors.UNKNOWN_TOPIC_OR_PARTITION)]
    assert r.create_topics == () and metadata.edge_task(r) is None


def test_a_request_for_every_topic_never_creates():
    cache = _cache(CACHE_STATES, (_broker(1), _broker(2)))
    r = metadata.handle_metadata_request(cache, _request(None, auto_create=ON))
    assert r.create_topics == () and {t.name for t in r.topics} == {"orders", "__consumer_offsets"}


@pytest.mark.parametrize("name", ["", ".", "..", "a" * 250, "bad/name", "ümlaut", "orders_x"])
def test_an_illegal_or_colliding_name_is_invalid_topic_exception(name):
    states = CACHE_STATES + (_state("orders.x", 0, 1, (1,), (1,)),)  # "orders_x" collides with "orders.x"
    cache = _cache(states, (_broker(1), _broker(2)))
    r = metadata.handle_metadata_request(cache, _request((name,), auto_create=ON))
    assert [(t.name, t.error) for t in r.topics] == [(name, Errors.INVALID_TOPIC_EXCEPTION)]
    assert r.create_topics == ()


def test_a_249_character_name_is_legal():
    cache = _cache(CACHE_STATES, (_broker(1), _broker(2)))
    name = "a-b." * 62 + "c"
    assert len(name) == 249
    assert metadata.handle_metadata_request(cache, _request((name,), auto_create=ON)).create_topics == (
        CreatableTopic(name, 3, 2),)


def test_fewer_live_brokers_than_the_default_replication_factor_is_invalid_replication_factor():
    cache = _cache(CACHE_STATES, (_broker(1),))  # one broker alive, default.replication.factor 2
    r = metadata.handle_metadata_request(cache, _request(("new-topic",), auto_create=ON))
    assert [(t.name, t.error) for t in r.topics] == [("new-topic", Errors.INVALID_REPLICATION_FACTOR)]
    assert r.create_topics == ()


def test_the_internal_topics_are_created_whatever_the_settings():
    """KafkaApis.getTopicMetadata: a named internal topic that does not exist is createInternalTopic'd, whatever
    auto.create.topics.enable and the request's allow_auto_topic_creation say — __transaction_state as well as
    __consumer_offsets (audit finding 7: kactor answered it UNKNOWN_TOPIC_OR_PARTITION and never created it)."""
    cache = _cache(CACHE_STATES[:3], (_broker(1),))
    off = AutoCreateConfig(False, 1, 1, offsets_topic_replication_factor=1, transaction_topic_replication_factor=1)
    r = metadata.handle_metadata_request(cache, _request(("__consumer_offsets", "__transaction_state"),
                                                         auto_create=off, allow_auto_topic_creation=False))
    assert [(t.name, t.error, t.is_internal) for t in r.topics] == [
        ("__consumer_offsets", Errors.LEADER_NOT_AVAILABLE, True),
        ("__transaction_state", Errors.LEADER_NOT_AVAILABLE, True)]
    assert r.create_topics == (CreatableTopic("__consumer_offsets", -1, -1),
                               CreatableTopic("__transaction_state", -1, -1))


def test_a_cache_that_knows_no_broker_yet_leaves_the_replication_factor_to_zookeeper():
    """A broker just started answers before the controller's first UpdateMetadata: its cache lists no broker, but
    2.6's AdminZkClient.createTopic counts ZooKeeper's brokers (this one among them), and a topic that exists there
    is TopicExistsException, answered LEADER_NOT_AVAILABLE. So the answer is LEADER_NOT_AVAILABLE and the edge's
    AdminZkClient decides; INVALID_REPLICATION_FACTOR with no partitions stalled librdkafka for
    topic.metadata.refresh.interval.ms (test_cluster_broker_restart, under load)."""
    r = metadata.handle_metadata_request(MetadataCache(0), _request(("restarted",), auto_create=ON))
    assert [(t.name, t.error, t.partitions) for t in r.topics] == [("restarted", Errors.LEADER_NOT_AVAILABLE, ())]
    assert r.create_topics == (CreatableTopic("restarted", 3, 2),) and r.brokers == () and r.controller_id == -1


def test_transaction_state_is_not_created_where_no_broker_stamped_its_replication_factor():
    cache = _cache(CACHE_STATES[:3], (_broker(1),))
    r = metadata.handle_metadata_request(cache, _request(("__transaction_state",), auto_create=ON))
    assert [(t.name, t.error, t.is_internal) for t in r.topics] == [
        ("__transaction_state", Errors.UNKNOWN_TOPIC_OR_PARTITION, True)]
    assert r.create_topics == ()


@pytest.mark.parametrize("topic", ["__consumer_offsets", "__transaction_state"])
@pytest.mark.parametrize("alive", [1, 2])
def test_an_internal_topic_waits_for_its_replication_factor_live_brokers(alive, topic):
    """KafkaApis.createInternalTopic: fewer live brokers than offsets.topic.replication.factor /
    transaction.state.log.replication.factor creates nothing, and getTopicMetadata answers that
    INVALID_REPLICATION_FACTOR (an internal topic, no partitions; COORDINATOR_NOT_AVAILABLE is FindCoordinator's
    answer); with that many brokers it is created."""
    cache = _cache(CACHE_STATES[:3], tuple(_broker(i) for i in range(1, alive + 1)))
    config = AutoCreateConfig(True, 1, 1, offsets_topic_replication_factor=2, transaction_topic_replication_factor=2)
    r = metadata.handle_metadata_request(cache, _request((topic,), auto_create=config))
    created = alive >= 2
    assert [(t.name, t.error, t.is_internal, t.partitions) for t in r.topics] == [
        (topic, Errors.LEADER_NOT_AVAILABLE if created else Errors.INVALID_REPLICATION_FACTOR, True, ())]
    assert r.create_topics == ((CreatableTopic(topic, -1, -1),) if created else ())
    assert metadata.edge_task(r) == (("auto_create", r.create_topics) if created else None)


def test_the_broker_stamps_offsets_topic_replication_factor_into_metadata_requests():
    from kactor.broker_process import auto_create_config
    from kactor.config import build_config

    cfg = build_config({"broker.id": "1", "zookeeper.connect": "127.0.0.1:1", "offsets.topic.replication.factor": "2"})
    assert auto_create_config(cfg).offsets_topic_replication_factor == 2
    assert AutoCreateConfig().offsets_topic_replication_factor == 3  # Kafka 2.6's default


def test_a_stale_controller_epoch_does_not_update_the_cache():
    cache = _cache(CACHE_STATES, (_broker(1),), controller_epoch=5)
    assert cache.maybe_update(UpdateMetadataRequest(9, 4, 1, (), ())) is None
    assert cache.get_controller_id() == 2
    assert cache.maybe_update(UpdateMetadataRequest(9, 5, 1, (), (_broker(1),))) == []
    assert cache.get_controller_id() == 9


@pytest.mark.parametrize("version", range(10))
def test_request_from_wire_at_every_version(version):
    body = {"topics": [{"name": "a"}, {"name": "b"}]}
    if version >= 4:
        body["allow_auto_topic_creation"] = False
    if version >= 8:
        body["include_topic_authorized_operations"] = True
    wire = decode_request(3, version, encode_request(3, version, body))[0]
    ctx = RequestContext(version, listener="INTERNAL", cluster_id="cid")
    req = metadata.request_from_wire(version, wire, ctx)
    assert req == MetadataRequest(("a", "b"), version < 4, "INTERNAL", False, version >= 8, version, "cid")
    everything = {"topics": [] if version == 0 else None}
    assert metadata.request_from_wire(version, decode_request(3, version, encode_request(3, version, everything))[0],
                                      ctx).topics is None
    if version >= 1:
        assert metadata.request_from_wire(version, {"topics": []}, ctx).topics == ()


FULL = MetadataResponse(
    (MetadataBroker(1, "h1", 9092, "r1"), MetadataBroker(2, "h2", 9093, None)), "cid", 2,
    (MetadataTopic("orders", Errors.NONE, False, (MetadataPartition(0, Errors.NONE, 1, 7, (1, 2), (1,), (2,)),), 123),
     MetadataTopic("gone", Errors.UNKNOWN_TOPIC_OR_PARTITION)), 0, 456)


@pytest.mark.parametrize("version", range(10))
def test_response_round_trip_keeps_what_each_version_carries(version):
    wire = decode_response(3, version, encode_response(3, version, metadata.response_to_wire(version, FULL)))[0]
    back = metadata.response_from_wire(version, wire)
    assert [(b.node_id, b.host, b.port) for b in back.brokers] == [(1, "h1", 9092), (2, "h2", 9093)]
    assert back.brokers[0].rack == ("r1" if version >= 1 else None)
    assert back.controller_id == (2 if version >= 1 else -1)
    assert back.cluster_id == ("cid" if version >= 2 else None)
    (p,) = back.topics[0].partitions
    assert (p.leader, p.replicas, p.isr) == (1, (1, 2), (1,))
    assert p.leader_epoch == (7 if version >= 7 else -1)
    assert p.offline_replicas == ((2,) if version >= 5 else ())
    assert back.topics[1].error == Errors.UNKNOWN_TOPIC_OR_PARTITION
    assert back.cluster_authorized_operations == (456 if version >= 8 else AUTHORIZED_OPERATIONS_OMITTED)
    if version == 9:
        assert back == FULL


@pytest.mark.parametrize("version", [0, 4, 9])
def test_error_response_fails_every_requested_topic(version):
    body = metadata.error_response(version, {"topics": [{"name": "a"}]}, Errors.INVALID_REQUEST)
    wire = decode_response(3, version, encode_response(3, version, body))[0]
    assert [(t["name"], t["error_code"]) for t in wire["topics"]] == [("a", 42)] and wire["brokers"] == []


def test_request_to_wire_is_what_request_from_wire_reads():
    req = MetadataRequest(("x",), False, include_topic_authorized_operations=True)
    wire = decode_request(3, 9, encode_request(3, 9, metadata.request_to_wire(req)))[0]
    assert metadata.request_from_wire(9, wire, RequestContext(9, listener="PLAINTEXT")) == req


def test_the_edges_auto_creation_settings_travel_in_the_request():
    ctx = RequestContext(4, listener="PLAINTEXT", auto_create=ON)
    req = metadata.request_from_wire(4, {"topics": [{"name": "a"}], "allow_auto_topic_creation": True}, ctx)
    assert req.auto_create == ON and req.allow_auto_topic_creation
