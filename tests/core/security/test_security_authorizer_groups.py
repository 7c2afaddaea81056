"""2.6.3 KafkaApis' authorization of the group coordinator's APIs (core/api/group.py, offsets.py,
find_coordinator.py): FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch."""

from __future__ import annotations

import attrs
import pytest

from core.api import find_coordinator, group, offsets
from core.security.acl import AclOperation, ResourceType
from core.security.authorizer import ALLOW_ALL, Authorizer, RequestAuthorizer
from messages.common import Errors, TopicPartition
from messages.group import (
    COORDINATOR_TYPE_GROUP,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitPartitionResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchPartitionData,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from messages.security import AclRow, AuthorizerChanged

BOB = "User:CN=bob"


def _row(rtype: ResourceType, name: str, op: AclOperation) -> AclRow:
    return AclRow(rtype.code, name, 3, BOB, "*", op.code, 3)


STATE = AuthorizerChanged(None, False, (
    _row(ResourceType.GROUP, "g", AclOperation.READ),
    _row(ResourceType.GROUP, "viewers", AclOperation.DESCRIBE),
    _row(ResourceType.TOPIC, "t", AclOperation.READ),
    _row(ResourceType.TRANSACTIONAL_ID, "tx", AclOperation.DESCRIBE),
))
AUTH: RequestAuthorizer = Authorizer.from_message(STATE).for_request(BOB, "127.0.0.1")


def test_find_coordinator_needs_describe_on_the_group_or_transactional_id():
    ok = FindCoordinatorRequest("g")
    assert find_coordinator.authorize_find_coordinator(ok, AUTH).request == ok
    out = find_coordinator.authorize_find_coordinator(FindCoordinatorRequest("other"), AUTH)
    assert out.request is None and out.answer == FindCoordinatorResponse(
        Errors.GROUP_AUTHORIZATION_FAILED, error_message="Group authorization failed.")
    assert Errors.GROUP_AUTHORIZATION_FAILED == 30
    assert find_coordinator.authorize_find_coordinator(FindCoordinatorRequest("tx", 1), AUTH).request is not None
    out = find_coordinator.authorize_find_coordinator(FindCoordinatorRequest("tx2", 1), AUTH)
    assert out.answer.error == Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    wire = find_coordinator.find_coordinator_to_wire(3, out.answer)
    assert (wire["error_code"], wire["node_id"], wire["error_message"]) == (
        53, -1, "Transactional Id authorization failed.")
    assert COORDINATOR_TYPE_GROUP == 0


@pytest.mark.parametrize(("request_", "answer"), [
    (JoinGroupRequest("other", 10000, 10000, "m-1", "consumer", ()),
     JoinGroupResponse(Errors.GROUP_AUTHORIZATION_FAILED, member_id="m-1")),
    (SyncGroupRequest("other", 1, "m-1"), SyncGroupResponse(Errors.GROUP_AUTHORIZATION_FAILED)),
    (HeartbeatRequest("other", 1, "m-1"), HeartbeatResponse(Errors.GROUP_AUTHORIZATION_FAILED)),
    (LeaveGroupRequest("other", (MemberIdentity("m-1"),)), LeaveGroupResponse(Errors.GROUP_AUTHORIZATION_FAILED)),
    # DESCRIBE on a group does not let a member join it
    (HeartbeatRequest("viewers", 1, "m-1"), HeartbeatResponse(Errors.GROUP_AUTHORIZATION_FAILED)),
])
def test_membership_needs_read_on_the_group(request_, answer):
    out = group.authorize_group_membership(request_, AUTH)
    assert out.request is None and out.answer == answer
    allowed = attrs.evolve(request_, group_id="g")
    assert group.authorize_group_membership(allowed, AUTH).request == allowed
    assert group.authorize_group_membership(request_, ALLOW_ALL).request == request_


def _commit(group_id: str, *topics: str) -> OffsetCommitRequest:
    return OffsetCommitRequest(group_id, tuple(OffsetCommitPartition(TopicPartition(t, 0), 5) for t in topics))


def test_offset_commit_group_then_topic_read():
    out = offsets.authorize_offset_commit(_commit("other", "t", "u"), AUTH)
    assert out.answer == OffsetCommitResponse((
        OffsetCommitPartitionResponse(TopicPartition("t", 0), Errors.GROUP_AUTHORIZATION_FAILED),
        OffsetCommitPartitionResponse(TopicPartition("u", 0), Errors.GROUP_AUTHORIZATION_FAILED)))
    out = offsets.authorize_offset_commit(_commit("g", "t", "u"), AUTH)
    assert [p.tp.topic for p in out.request.partitions] == ["t"]
    served = OffsetCommitResponse((OffsetCommitPartitionResponse(TopicPartition("t", 0), Errors.NONE),))
    assert [(p.tp.topic, p.error) for p in out.finish(served).partitions] == [
        ("u", Errors.TOPIC_AUTHORIZATION_FAILED), ("t", Errors.NONE)]
    only_denied = offsets.authorize_offset_commit(_commit("g", "u"), AUTH)
    assert only_denied.request is None and only_denied.answer == OffsetCommitResponse((
        OffsetCommitPartitionResponse(TopicPartition("u", 0), Errors.TOPIC_AUTHORIZATION_FAILED),))


def test_offset_fetch_group_describe_then_topic_describe():
    out = offsets.authorize_offset_fetch(OffsetFetchRequest("other", (TopicPartition("t", 0),)), AUTH)
    assert out.answer == OffsetFetchResponse(Errors.GROUP_AUTHORIZATION_FAILED, (
        OffsetFetchPartitionData(TopicPartition("t", 0), error=Errors.GROUP_AUTHORIZATION_FAILED),))
    viewers = offsets.authorize_offset_fetch(OffsetFetchRequest("viewers", None), AUTH)  # DESCRIBE is enough
    every = OffsetFetchResponse(Errors.NONE, (OffsetFetchPartitionData(TopicPartition("t", 0), 7),
                                              OffsetFetchPartitionData(TopicPartition("u", 0), 9)))
    assert viewers.finish(every).partitions == (OffsetFetchPartitionData(TopicPartition("t", 0), 7),)
    named = offsets.authorize_offset_fetch(OffsetFetchRequest("g", (TopicPartition("t", 0), TopicPartition("u", 0))),
                                           AUTH)
    assert named.request.partitions == (TopicPartition("t", 0),)
    answered = named.finish(OffsetFetchResponse(Errors.NONE, (OffsetFetchPartitionData(TopicPartition("t", 0), 7),)))
    assert answered.partitions == (OffsetFetchPartitionData(TopicPartition("t", 0), 7),
                                   OffsetFetchPartitionData(TopicPartition("u", 0), -1, -1, "",
                                                            Errors.TOPIC_AUTHORIZATION_FAILED))


def test_describe_list_and_delete_groups_and_offset_delete():
    from core.api import offset_delete
    from messages.group import (
        DeleteGroupsRequest,
        DeleteGroupsResponse,
        DescribedGroup,
        DescribeGroupsRequest,
        DescribeGroupsResponse,
        ListedGroup,
        ListGroupsRequest,
        ListGroupsResponse,
        OffsetDeleteRequest,
        OffsetDeleteResponse,
    )

    out = group.authorize_describe_groups(DescribeGroupsRequest(("other", "g", "viewers")), AUTH)
    assert out.request.groups == ("g", "viewers")
    served = DescribeGroupsResponse((DescribedGroup(Errors.NONE, "viewers", "Empty"),
                                     DescribedGroup(Errors.NONE, "g", "Stable")))
    assert [(d.group_id, d.error) for d in out.finish(served).groups] == [
        ("other", Errors.GROUP_AUTHORIZATION_FAILED), ("g", Errors.NONE), ("viewers", Errors.NONE)]
    listed = ListGroupsResponse(Errors.NONE, tuple(ListedGroup(g, "consumer", "Stable") for g in ("g", "x", "viewers")))
    assert [g.group_id for g in group.authorize_list_groups(ListGroupsRequest(), AUTH).finish(listed).groups] == [
        "g", "viewers"]
    deleted = group.authorize_delete_groups(DeleteGroupsRequest(("g", "other")), AUTH)  # READ is not DELETE
    assert deleted.answer == DeleteGroupsResponse((("g", Errors.GROUP_AUTHORIZATION_FAILED),
                                                   ("other", Errors.GROUP_AUTHORIZATION_FAILED)))
    assert offset_delete.authorize(OffsetDeleteRequest("g", (TopicPartition("t", 0),)), AUTH).answer == \
        OffsetDeleteResponse(Errors.GROUP_AUTHORIZATION_FAILED)


def test_offset_delete_with_delete_on_the_group_refuses_unreadable_topics():
    from core.api import offset_delete
    from messages.group import DeleteGroupsRequest, OffsetDeleteRequest, OffsetDeleteResponse

    auth = Authorizer.from_message(AuthorizerChanged(None, False, STATE.acls + (
        _row(ResourceType.GROUP, "g", AclOperation.DELETE),))).for_request(BOB, "127.0.0.1")
    t0, u0 = TopicPartition("t", 0), TopicPartition("u", 0)
    out = offset_delete.authorize(OffsetDeleteRequest("g", (t0, u0)), auth)
    assert out.request.partitions == (t0,)
    assert out.finish(OffsetDeleteResponse(Errors.NONE, ((t0, Errors.NONE),))).partitions == (
        (t0, Errors.NONE), (u0, Errors.TOPIC_AUTHORIZATION_FAILED))
    deleted = group.authorize_delete_groups(DeleteGroupsRequest(("g", "other")), auth)
    assert deleted.request.groups == ("g",)
