"""The broker's authorizer (core/security/authorizer.py) and 2.6.3 KafkaApis' authorization of Produce, Fetch,
ListOffsets and Metadata (core/api/*: authorize_*), with Kafka's error codes."""

from __future__ import annotations

import pytest

from core.api import fetch, list_offsets, metadata, produce
from core.broker.metadata_cache import MetadataCache
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import (
    ALLOW_ALL,
    Authorizer,
    RequestAuthorizer,
    acl_authorizer_configs,
    authorizer_enabled,
)
from messages.common import Broker, EndPoint, Errors, TopicPartition
from messages.metadata import AutoCreateConfig, MetadataRequest, MetadataTopic
from messages.replication import (
    FetchPartition,
    FetchPartitionData,
    FetchRequest,
    FetchResponse,
    ListOffsetsPartition,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ProducePartition,
    ProduceRequest,
)
from messages.requests import UpdateMetadataPartitionState, UpdateMetadataRequest
from messages.security import AclRow, AuthorizerChanged

ALICE, BOB, ADMIN = "User:CN=alice", "User:CN=bob", "User:CN=broker"
LITERAL, PREFIXED = 3, 4  # PatternType codes
ALLOW, DENY = 3, 2  # AclPermissionType codes


def _row(rtype: ResourceType, name: str, principal: str, op: AclOperation, permission: int = ALLOW,
         pattern: int = LITERAL, host: str = "*") -> AclRow:
    return AclRow(rtype.code, name, pattern, principal, host, op.code, permission)


ACLS = (
    _row(ResourceType.TOPIC, "orders", ALICE, AclOperation.WRITE),
    _row(ResourceType.TOPIC, "orders", ALICE, AclOperation.DESCRIBE),
    _row(ResourceType.TOPIC, "orders", BOB, AclOperation.READ),
    _row(ResourceType.TOPIC, "logs-", ALICE, AclOperation.ALL, pattern=PREFIXED),
    _row(ResourceType.TOPIC, "logs-secret", ALICE, AclOperation.READ, DENY),
    _row(ResourceType.TRANSACTIONAL_ID, "tx-1", ALICE, AclOperation.WRITE),
    _row(ResourceType.TOPIC, "payments", BOB, AclOperation.WRITE, host="10.0.0.9"),
)
STATE = AuthorizerChanged(f"{ADMIN};User:ops", False, ACLS)


def _auth(principal: str, host: str = "127.0.0.1", state: AuthorizerChanged = STATE) -> RequestAuthorizer:
    return Authorizer.from_message(state).for_request(principal, host)


def test_authorizer_class_names_and_configs():
    assert authorizer_enabled("kafka.security.authorizer.AclAuthorizer")
    assert authorizer_enabled("kafka.security.auth.SimpleAclAuthorizer")
    assert not authorizer_enabled("") and not authorizer_enabled(None)
    with pytest.raises(ValueError, match="kactor serves only"):
        authorizer_enabled("org.example.Other")
    assert acl_authorizer_configs({}) == (None, False)
    assert acl_authorizer_configs({"super.users": "User:a;User:b", "allow.everyone.if.no.acl.found": "TRUE"}) == (
        "User:a;User:b", True)
    with pytest.raises(ValueError, match="allow.everyone.if.no.acl.found"):
        acl_authorizer_configs({"allow.everyone.if.no.acl.found": "yes"})
    with pytest.raises(ValueError, match="super.users"):
        acl_authorizer_configs({"super.users": "alice"})


def test_the_decision_implied_operations_deny_prefixes_hosts_and_super_users():
    alice, bob = _auth(ALICE), _auth(BOB)
    assert alice.allows(AclOperation.WRITE, ResourceType.TOPIC, "orders")
    assert not alice.allows(AclOperation.READ, ResourceType.TOPIC, "orders")
    assert bob.allows(AclOperation.DESCRIBE, ResourceType.TOPIC, "orders")  # READ implies DESCRIBE
    assert alice.allows(AclOperation.READ, ResourceType.TOPIC, "logs-app")  # a prefixed ALL
    assert not alice.allows(AclOperation.READ, ResourceType.TOPIC, "logs-secret")  # DENY wins over ALLOW
    assert not bob.allows(AclOperation.WRITE, ResourceType.TOPIC, "payments")  # the ACL names another host
    assert _auth(BOB, "10.0.0.9").allows(AclOperation.WRITE, ResourceType.TOPIC, "payments")
    assert not alice.allows(AclOperation.DESCRIBE, ResourceType.TOPIC, "no-acls")  # no ACL: refused by default
    assert _auth(ADMIN).allows(AclOperation.ALL, ResourceType.TOPIC, "no-acls")
    assert _auth("User:ops").allows_cluster(AclOperation.CLUSTER_ACTION)
    assert _auth(ALICE, state=AuthorizerChanged(None, True, ACLS)).allows(AclOperation.READ, ResourceType.TOPIC,
                                                                          "no-acls")
    assert not _auth("not-a-principal").allows(AclOperation.READ, ResourceType.TOPIC, "orders")
    unloaded = _auth(ALICE, state=AuthorizerChanged(ADMIN, False, loaded=False))
    assert not unloaded.allows(AclOperation.WRITE, ResourceType.TOPIC, "orders")
    assert ALLOW_ALL.allows(AclOperation.ALTER, ResourceType.CLUSTER, "kafka-cluster") and not ALLOW_ALL.enabled
    assert alice.authorized_operations(ResourceType.TOPIC, "orders") == (1 << 4) | (1 << 8)  # WRITE, DESCRIBE


def _batch(producer_id: int = -1, transactional: bool = False) -> bytes:
    header = bytearray(61)
    header[8:12] = (61 - 12).to_bytes(4, "big")  # batchLength: a whole batch (2.6.3 reads no other as one)
    header[16] = 2  # magic
    header[21:23] = (0x10 if transactional else 0).to_bytes(2, "big")
    header[43:51] = producer_id.to_bytes(8, "big", signed=True)
    return bytes(header)


def _produce(*topics: str, records: bytes = b"", txn: str | None = None, principal: str = ALICE) -> ProduceRequest:
    return ProduceRequest(1, 1000, tuple(ProducePartition(TopicPartition(t, 0), records or _batch()) for t in topics),
                          txn, principal=principal)


def test_produce_topic_write_per_partition():
    req = _produce("orders", "payments", "logs-app")
    out = produce.authorize_produce(req, _auth(ALICE))
    assert [(p.tp.topic, p.error) for p in out.partitions] == [
        ("orders", Errors.NONE), ("payments", Errors.TOPIC_AUTHORIZATION_FAILED), ("logs-app", Errors.NONE)]
    assert out.partitions[1].records == b"" and out.partitions[0].records == req.partitions[0].records
    assert Errors.TOPIC_AUTHORIZATION_FAILED == 29
    assert produce.authorize_produce(req, ALLOW_ALL) is req


def test_produce_transactional_needs_the_transactional_id_and_idempotent_the_cluster():
    txn = _produce("orders", records=_batch(7, transactional=True), txn="tx-2")
    out = produce.authorize_produce(txn, _auth(ALICE))
    assert [p.error for p in out.partitions] == [Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]
    assert Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED == 53
    ok = produce.authorize_produce(_produce("orders", records=_batch(7, transactional=True), txn="tx-1"),
                                   _auth(ALICE))
    assert [p.error for p in ok.partitions] == [Errors.NONE]
    idem = produce.authorize_produce(_produce("orders", records=_batch(7)), _auth(ALICE))
    assert [p.error for p in idem.partitions] == [Errors.CLUSTER_AUTHORIZATION_FAILED]
    assert Errors.CLUSTER_AUTHORIZATION_FAILED == 31


def _fetch(replica_id: int, *topics: str, principal: str = BOB) -> FetchRequest:
    return FetchRequest(replica_id, tuple(FetchPartition(TopicPartition(t, 0), 0) for t in topics),
                        principal=principal)


def test_fetch_consumers_need_read_followers_cluster_action():
    req = _fetch(-1, "orders", "payments")
    allowed, refused = fetch.authorize_fetch(req, _auth(BOB))
    assert [p.tp.topic for p in allowed.partitions] == ["orders"]
    assert refused == (FetchPartitionData(TopicPartition("payments", 0), Errors.TOPIC_AUTHORIZATION_FAILED),)
    data = FetchPartitionData(TopicPartition("orders", 0), Errors.NONE, 5)
    merged = fetch.with_refused(FetchResponse((data,)), refused)
    assert [(p.tp.topic, p.error) for p in merged.partitions] == [
        ("payments", Errors.TOPIC_AUTHORIZATION_FAILED), ("orders", Errors.NONE)]
    follower = _fetch(2, "orders", principal=ALICE)
    allowed, refused = fetch.authorize_fetch(follower, _auth(ALICE))
    assert allowed.partitions == () and [p.error for p in refused] == [Errors.TOPIC_AUTHORIZATION_FAILED]
    assert fetch.authorize_fetch(follower, _auth(ADMIN)) == (follower, ())


def test_list_offsets_needs_describe():
    req = ListOffsetsRequest(-1, 0, (ListOffsetsPartition(TopicPartition("orders", 0), -1),
                                     ListOffsetsPartition(TopicPartition("payments", 0), -1)), ALICE)
    allowed, refused = list_offsets.authorize_list_offsets(req, _auth(ALICE))
    assert [p.tp.topic for p in allowed.partitions] == ["orders"]
    assert refused == (ListOffsetsPartitionResponse(TopicPartition("payments", 0), Errors.TOPIC_AUTHORIZATION_FAILED),)
    merged = list_offsets.with_refused(ListOffsetsResponse(()), refused)
    assert merged.partitions == refused


def _cache() -> MetadataCache:
    cache = MetadataCache(1)
    states = tuple(UpdateMetadataPartitionState(TopicPartition(t, 0), 1, 1, 0, (1,), 0, (1,), ())
                   for t in ("orders", "payments", "logs-app"))
    cache.maybe_update(UpdateMetadataRequest(1, 1, 1, states, (Broker(1, (EndPoint("127.0.0.1", 9092,
                                                                                       "PLAINTEXT"),)),)))
    return cache


def _metadata(topics, **kw) -> MetadataRequest:
    return MetadataRequest(topics, auto_create=AutoCreateConfig(True, 1, 1), **kw)


def test_metadata_all_topics_leaves_out_what_the_principal_may_not_describe():
    r = metadata.handle_metadata_request(_cache(), _metadata(None), _auth(ALICE))
    assert [(t.name, t.error) for t in r.topics] == [("logs-app", Errors.NONE), ("orders", Errors.NONE)]
    assert metadata.handle_metadata_request(_cache(), _metadata(None), _auth("User:CN=nobody")).topics == ()
    r = metadata.handle_metadata_request(_cache(), _metadata(None), _auth(ADMIN))
    assert [t.name for t in r.topics] == ["logs-app", "orders", "payments"]


def test_metadata_named_topics_refused_and_auto_creation_needs_create():
    r = metadata.handle_metadata_request(_cache(), _metadata(("payments", "orders", "logs-new", "fresh")),
                                         _auth(ALICE))
    assert [(t.name, t.error) for t in r.topics] == [
        ("orders", Errors.NONE), ("logs-new", Errors.LEADER_NOT_AVAILABLE),  # logs-* ALL includes CREATE
        ("payments", Errors.TOPIC_AUTHORIZATION_FAILED), ("fresh", Errors.TOPIC_AUTHORIZATION_FAILED)]
    assert r.topics[2] == MetadataTopic("payments", Errors.TOPIC_AUTHORIZATION_FAILED)
    assert [c.name for c in r.create_topics] == ["logs-new"]
    describe_only = AuthorizerChanged(None, False, (_row(ResourceType.TOPIC, "fresh", ALICE, AclOperation.DESCRIBE),))
    r = metadata.handle_metadata_request(_cache(), _metadata(("fresh",)), _auth(ALICE, state=describe_only))
    assert [(t.name, t.error) for t in r.topics] == [("fresh", Errors.TOPIC_AUTHORIZATION_FAILED)]
    assert r.create_topics == ()
    cluster_create = AuthorizerChanged(None, False, describe_only.acls + (
        _row(ResourceType.CLUSTER, "kafka-cluster", ALICE, AclOperation.CREATE),))
    r = metadata.handle_metadata_request(_cache(), _metadata(("fresh",)), _auth(ALICE, state=cluster_create))
    assert [(t.name, t.error) for t in r.topics] == [("fresh", Errors.LEADER_NOT_AVAILABLE)]


def test_metadata_authorized_operations_are_the_principals():
    r = metadata.handle_metadata_request(_cache(), _metadata(("orders",), include_topic_authorized_operations=True,
                                                             include_cluster_authorized_operations=True),
                                         _auth(ALICE))
    assert r.topics[0].topic_authorized_operations == (1 << 4) | (1 << 8)
    assert r.cluster_authorized_operations == 0


def test_create_topics_needs_create_on_the_cluster_or_the_topic_and_delete_topics_delete():
    from core.api.admin import authorize_create_topics, authorize_delete_topics

    assert authorize_create_topics(["logs-new", "fresh", "orders"], _auth(ALICE)) == (
        {"logs-new"}, {"logs-new"})  # logs-* ALL: CREATE and DESCRIBE_CONFIGS; orders: WRITE and DESCRIBE only
    cluster = AuthorizerChanged(None, False, (_row(ResourceType.CLUSTER, "kafka-cluster", BOB, AclOperation.CREATE),))
    assert authorize_create_topics(["a", "b"], _auth(BOB, state=cluster)) == ({"a", "b"}, set())
    assert authorize_delete_topics(["logs-old", "orders"], _auth(ALICE)) == {"logs-old"}


def test_controller_requests_need_cluster_action():
    from core.api import leader_and_isr, stop_replica, update_metadata
    from messages.requests import (
        LeaderAndIsrPartitionState,
        LeaderAndIsrRequest,
        LeaderAndIsrResponse,
        PartitionError,
        StopReplicaPartitionState,
        StopReplicaRequest,
        StopReplicaResponse,
        UpdateMetadataResponse,
    )

    tp = TopicPartition("orders", 0)
    lai = LeaderAndIsrRequest(1, 1, 5, (LeaderAndIsrPartitionState(tp, 1, 1, 0, (1,), 0, (1,)),), ())
    refused = Errors.CLUSTER_AUTHORIZATION_FAILED
    assert leader_and_isr.authorize(lai, _auth(ALICE)).answer == LeaderAndIsrResponse(refused,
                                                                                      (PartitionError(tp, refused),))
    assert leader_and_isr.authorize(lai, _auth(ADMIN)).request is lai
    stop = StopReplicaRequest(1, 1, 5, (StopReplicaPartitionState(tp, 0, True),))
    assert stop_replica.authorize(stop, _auth(ALICE)).answer == StopReplicaResponse(refused,
                                                                                    (PartitionError(tp, refused),))
    cluster_action = AuthorizerChanged(None, False, (
        _row(ResourceType.CLUSTER, "kafka-cluster", ALICE, AclOperation.CLUSTER_ACTION),))
    assert stop_replica.authorize(stop, _auth(ALICE, state=cluster_action)).request is stop
    update = UpdateMetadataRequest(1, 1, 5, (), ())
    assert update_metadata.authorize(update, _auth(BOB)).answer == UpdateMetadataResponse(refused)
    wire = leader_and_isr.error_response(4, leader_and_isr.request_to_wire(lai), int(refused))
    assert wire["error_code"] == 31


def test_config_resources_need_describe_or_alter_configs_on_the_topic_or_the_cluster():
    from core.api.admin import authorize_config_resources, authorize_create_partitions, fit_response
    from core.api.registry import spec_for_key
    from protocol.api_versions import ApiKeys

    resources = [{"resource_type": 2, "resource_name": "logs-a"}, {"resource_type": 2, "resource_name": "orders"},
                 {"resource_type": 4, "resource_name": "0"}]
    served, refused = authorize_config_resources(resources, AclOperation.DESCRIBE_CONFIGS, _auth(ALICE), True)
    assert served == resources[:1]
    assert refused == [
        {"error_code": 29, "error_message": None, "resource_type": 2, "resource_name": "orders", "configs": []},
        {"error_code": 31, "error_message": None, "resource_type": 4, "resource_name": "0", "configs": []}]
    served, refused = authorize_config_resources(resources, AclOperation.ALTER_CONFIGS, _auth(ADMIN), False)
    assert served == resources and refused == []
    assert authorize_create_partitions(["logs-a", "orders"], _auth(ALICE)) == {"logs-a"}
    elect_leaders = spec_for_key(ApiKeys.ELECT_LEADERS)
    assert elect_leaders.service.cluster_operation is AclOperation.ALTER
    body = {"topic_partitions": [{"topic": "t", "partitions": [0]}]}
    answer = elect_leaders.error_response(2, body, 31)
    assert fit_response(ApiKeys.ELECT_LEADERS, 2, answer) == answer  # the admin edge fits the handler's answer again


def test_delete_records_markers_and_log_dirs():
    from core.api import alter_replica_log_dirs, delete_records, describe_log_dirs, write_txn_markers
    from messages.replication import (
        AlterReplicaLogDir,
        AlterReplicaLogDirResult,
        AlterReplicaLogDirsRequest,
        AlterReplicaLogDirsResponse,
        DeleteRecordsPartition,
        DeleteRecordsPartitionResult,
        DeleteRecordsRequest,
        DeleteRecordsResponse,
        DescribeLogDirsRequest,
        DescribeLogDirsResponse,
    )
    from messages.txn_markers import (
        TxnMarkerEntry,
        TxnMarkerPartitionResult,
        WriteTxnMarkersRequest,
        WriteTxnMarkersResponse,
    )

    logs, orders = TopicPartition("logs-a", 0), TopicPartition("orders", 0)
    out = delete_records.authorize(DeleteRecordsRequest(1000, (DeleteRecordsPartition(logs, 5),
                                                               DeleteRecordsPartition(orders, 5))), _auth(ALICE))
    assert out.request.partitions == (DeleteRecordsPartition(logs, 5),)
    assert out.finish(DeleteRecordsResponse((DeleteRecordsPartitionResult(logs, Errors.NONE, 5),))).partitions == (
        DeleteRecordsPartitionResult(orders, Errors.TOPIC_AUTHORIZATION_FAILED),
        DeleteRecordsPartitionResult(logs, Errors.NONE, 5))
    markers = WriteTxnMarkersRequest((TxnMarkerEntry(7, 0, True, 1, (logs, orders)),))
    assert write_txn_markers.authorize(markers, _auth(ALICE)).answer == WriteTxnMarkersResponse((
        TxnMarkerPartitionResult(7, logs, Errors.CLUSTER_AUTHORIZATION_FAILED),
        TxnMarkerPartitionResult(7, orders, Errors.CLUSTER_AUTHORIZATION_FAILED)))
    assert write_txn_markers.authorize(markers, _auth(ADMIN)).request == markers
    move = AlterReplicaLogDirsRequest((AlterReplicaLogDir(logs, "/d2"),))
    assert alter_replica_log_dirs.authorize(move, _auth(ALICE)).answer == AlterReplicaLogDirsResponse((
        AlterReplicaLogDirResult(logs, Errors.CLUSTER_AUTHORIZATION_FAILED),))
    assert describe_log_dirs.authorize(DescribeLogDirsRequest(), _auth(ALICE)).answer == DescribeLogDirsResponse(())
    assert describe_log_dirs.authorize(DescribeLogDirsRequest(), _auth(ADMIN)).request == DescribeLogDirsRequest()


def test_offsets_for_leader_epoch_cluster_action_or_describe():
    from core.api import offset_for_leader_epoch as olfe
    from messages.replication import (
        OffsetForLeaderPartition,
        OffsetForLeaderPartitionResult,
        OffsetForLeaderTopic,
        OffsetForLeaderTopicResult,
        OffsetsForLeaderEpochRequest,
        OffsetsForLeaderEpochResponse,
    )

    req = OffsetsForLeaderEpochRequest(tuple(OffsetForLeaderTopic(t, (OffsetForLeaderPartition(0, 3, 3),))
                                             for t in ("orders", "payments")))
    assert olfe.authorize(req, _auth(ADMIN)).request == req
    out = olfe.authorize(req, _auth(ALICE))
    assert [t.topic for t in out.request.topics] == ["orders"]
    served = OffsetsForLeaderEpochResponse((OffsetForLeaderTopicResult("orders", (
        OffsetForLeaderPartitionResult(Errors.NONE, 0, 3, 10),)),))
    assert out.finish(served).topics[1] == OffsetForLeaderTopicResult("payments", (
        OffsetForLeaderPartitionResult(Errors.TOPIC_AUTHORIZATION_FAILED, 0, -1, -1),))


def test_controlled_shutdown_needs_cluster_action():
    from core.api import controlled_shutdown
    from messages.requests import ControlledShutdownRequest, ControlledShutdownResponse

    req = ControlledShutdownRequest(1, 5)
    assert controlled_shutdown.authorize(req, _auth(ALICE)).answer == ControlledShutdownResponse(
        Errors.CLUSTER_AUTHORIZATION_FAILED)
    assert controlled_shutdown.authorize(req, _auth(ADMIN)).request == req


def test_kactors_describe_metadata_cache_needs_describe_on_the_cluster_and_takes_the_connections_principal():
    from core.api import kactor_private
    from core.api.registry import RequestContext
    from messages.replication import DescribeMetadataCacheRequest, DescribeMetadataCacheResponse

    assert kactor_private.authorize(DescribeMetadataCacheRequest(), _auth(ALICE)).answer == \
        DescribeMetadataCacheResponse(-1, (), ())
    assert kactor_private.authorize(DescribeMetadataCacheRequest(), _auth(ADMIN)).request is not None
    from messages.codec import dumps_bytes

    spoofed = {"json": dumps_bytes(DescribeMetadataCacheRequest(principal=ADMIN))}  # a principal in the body
    decoded = kactor_private.SPEC.request_from_wire(0, spoofed, RequestContext(0, principal=ALICE))
    assert decoded == DescribeMetadataCacheRequest(principal=ALICE)
