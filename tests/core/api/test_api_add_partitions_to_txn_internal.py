"""AddPartitionsToTxn never lets an internal topic into a transaction (2.6.3 KafkaApis.handleAddPartitionToTxnRequest,
L2130-2131: ``filterByAuthorized(..., partitionsToAdd.filterNot(tp => Topic.isInternal(tp.topic)))``), with or without
an authorizer: the internal topic's partitions answer TOPIC_AUTHORIZATION_FAILED, their siblings
OPERATION_NOT_ATTEMPTED."""

from __future__ import annotations

import pytest

from core.api.add_partitions_to_txn import authorize
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import ALLOW_ALL, Authorizer, RequestAuthorizer
from messages.common import Errors, TopicPartition
from messages.security import AclRow, AuthorizerChanged
from messages.transaction import AddPartitionsToTxnRequest, AddPartitionsToTxnResponse

ALICE = "User:alice"
LITERAL, ALLOW = 3, 3  # PatternType.LITERAL, AclPermissionType.ALLOW
T0 = TopicPartition("t", 0)
TXN_STATE = TopicPartition("__transaction_state", 0)
OFFSETS = TopicPartition("__consumer_offsets", 7)


def _everything_for_alice() -> RequestAuthorizer:
    """WRITE on Topic:* and on the transactional id: the grant the audit's poisoning needed."""
    acls = (AclRow(ResourceType.TOPIC.code, "*", LITERAL, ALICE, "*", AclOperation.WRITE.code, ALLOW),
            AclRow(ResourceType.TRANSACTIONAL_ID.code, "tx", LITERAL, ALICE, "*", AclOperation.WRITE.code, ALLOW))
    return Authorizer.from_message(AuthorizerChanged(None, False, acls)).for_request(ALICE, "127.0.0.1")


def _super_user() -> RequestAuthorizer:
    return Authorizer.from_message(AuthorizerChanged(ALICE, False, ())).for_request(ALICE, "127.0.0.1")


@pytest.mark.parametrize("auth", [ALLOW_ALL, _everything_for_alice(), _super_user()],
                         ids=["no authorizer", "WRITE on Topic:*", "super user"])
@pytest.mark.parametrize("internal", [TXN_STATE, OFFSETS])
def test_an_internal_topics_partition_is_refused_and_its_siblings_not_attempted(auth: RequestAuthorizer,
                                                                              internal: TopicPartition) -> None:
    decision = authorize(AddPartitionsToTxnRequest("tx", 5, 0, (T0, internal)), auth)
    assert decision.request is None
    assert decision.answer == AddPartitionsToTxnResponse(((T0, Errors.OPERATION_NOT_ATTEMPTED),
                                                          (internal, Errors.TOPIC_AUTHORIZATION_FAILED)))


def test_only_internal_partitions_all_answer_topic_authorization_failed() -> None:
    decision = authorize(AddPartitionsToTxnRequest("tx", 5, 0, (TXN_STATE,)), ALLOW_ALL)
    assert decision.answer == AddPartitionsToTxnResponse(((TXN_STATE, Errors.TOPIC_AUTHORIZATION_FAILED),))


def test_ordinary_topics_still_go_to_the_coordinator() -> None:
    request = AddPartitionsToTxnRequest("tx", 5, 0, (T0, TopicPartition("u", 1)))
    assert authorize(request, ALLOW_ALL).request is request
    assert authorize(request, _everything_for_alice()).request is request
