"""2.6.3 KafkaApis' authorization of the transaction APIs (core/api/init_producer_id.py, add_partitions_to_txn.py,
add_offsets_to_txn.py, end_txn.py, txn_offset_commit.py)."""

from __future__ import annotations

from core.api import add_offsets_to_txn, add_partitions_to_txn, end_txn, init_producer_id, txn_offset_commit
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import Authorizer
from messages.common import Errors, TopicPartition
from messages.group import (
    OffsetCommitPartition,
    OffsetCommitPartitionResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
from messages.security import AclRow, AuthorizerChanged
from messages.transaction import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
)

P = "User:CN=app"


def _row(rtype: ResourceType, name: str, op: AclOperation) -> AclRow:
    return AclRow(rtype.code, name, 3, P, "*", op.code, 3)


AUTH = Authorizer.from_message(AuthorizerChanged(None, False, (
    _row(ResourceType.TRANSACTIONAL_ID, "tx", AclOperation.WRITE),
    _row(ResourceType.TOPIC, "t", AclOperation.WRITE),
    _row(ResourceType.TOPIC, "t", AclOperation.READ),
    _row(ResourceType.GROUP, "g", AclOperation.READ),
))).for_request(P, "127.0.0.1")
T0, U0 = TopicPartition("t", 0), TopicPartition("u", 0)


def test_init_producer_id_transactional_id_write_or_idempotent_write():
    assert init_producer_id.authorize(InitProducerIdRequest("tx", 1000), AUTH).request is not None
    assert init_producer_id.authorize(InitProducerIdRequest("other", 1000), AUTH).answer == InitProducerIdResponse(
        Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    assert init_producer_id.authorize(InitProducerIdRequest(None, 1000), AUTH).answer == InitProducerIdResponse(
        Errors.CLUSTER_AUTHORIZATION_FAILED)


def test_add_partitions_needs_the_transactional_id_then_every_topic():
    assert add_partitions_to_txn.authorize(AddPartitionsToTxnRequest("other", 1, 0, (T0,)), AUTH).answer == \
        AddPartitionsToTxnResponse(((T0, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),))
    assert add_partitions_to_txn.authorize(AddPartitionsToTxnRequest("tx", 1, 0, (T0, U0)), AUTH).answer == \
        AddPartitionsToTxnResponse(((T0, Errors.OPERATION_NOT_ATTEMPTED), (U0, Errors.TOPIC_AUTHORIZATION_FAILED)))
    ok = AddPartitionsToTxnRequest("tx", 1, 0, (T0,))
    assert add_partitions_to_txn.authorize(ok, AUTH).request == ok


def test_add_offsets_and_end_txn():
    assert add_offsets_to_txn.authorize(AddOffsetsToTxnRequest("other", 1, 0, "g"), AUTH).answer == \
        AddOffsetsToTxnResponse(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    assert add_offsets_to_txn.authorize(AddOffsetsToTxnRequest("tx", 1, 0, "h"), AUTH).answer == \
        AddOffsetsToTxnResponse(Errors.GROUP_AUTHORIZATION_FAILED)
    assert add_offsets_to_txn.authorize(AddOffsetsToTxnRequest("tx", 1, 0, "g"), AUTH).request is not None
    assert end_txn.authorize(EndTxnRequest("other", 1, 0, True), AUTH).answer == EndTxnResponse(
        Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    assert end_txn.authorize(EndTxnRequest("tx", 1, 0, True), AUTH).request is not None


def test_txn_offset_commit():
    parts = (OffsetCommitPartition(T0, 5), OffsetCommitPartition(U0, 6))
    assert txn_offset_commit.authorize(TxnOffsetCommitRequest("other", "g", 1, 0, parts), AUTH).answer == \
        TxnOffsetCommitResponse(tuple(OffsetCommitPartitionResponse(tp, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
                                      for tp in (T0, U0)))
    assert txn_offset_commit.authorize(TxnOffsetCommitRequest("tx", "h", 1, 0, parts), AUTH).answer == \
        TxnOffsetCommitResponse(tuple(OffsetCommitPartitionResponse(tp, Errors.GROUP_AUTHORIZATION_FAILED)
                                      for tp in (T0, U0)))
    out = txn_offset_commit.authorize(TxnOffsetCommitRequest("tx", "g", 1, 0, parts), AUTH)
    assert out.request.partitions == parts[:1]
    served = TxnOffsetCommitResponse((OffsetCommitPartitionResponse(T0, Errors.NONE),))
    assert out.finish(served).partitions == (OffsetCommitPartitionResponse(U0, Errors.TOPIC_AUTHORIZATION_FAILED),
                                             OffsetCommitPartitionResponse(T0, Errors.NONE))
