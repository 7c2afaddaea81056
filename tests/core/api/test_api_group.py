"""The group membership converters, both ways through protocol's codec at every version Kafka 2.6 serves: a request
encoded by the codec decodes to the internal request KafkaApis would hand the coordinator, and the internal response
encodes to the body that version carries."""

from __future__ import annotations

import pytest

import core.api  # noqa: F401 - registers every spec
from core.api.group import GROUP_AUTHORIZED_OPERATIONS
from core.api.registry import RequestContext, Route, spec_for_key
from messages.common import Errors
from messages.group import (
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    DescribedGroup,
    DescribedGroupMember,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupMember,
    JoinGroupProtocol,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupMemberResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    ListedGroup,
    ListGroupsRequest,
    ListGroupsResponse,
    MemberIdentity,
    SyncGroupAssignment,
    SyncGroupRequest,
    SyncGroupResponse,
)
from protocol.codec import decode_request, decode_response, encode_request, encode_response

CTX = RequestContext(api_version=0, client_id="cli", client_host="/127.0.0.1", listener="PLAINTEXT")


def inbound(key: int, version: int, body: dict):
    """The body as a client sends it (encoded and decoded by the codec), converted."""
    decoded, _ = decode_request(key, version, encode_request(key, version, body))
    spec = spec_for_key(key)
    assert spec is not None and spec.route == Route.GROUP_COORDINATOR
    return spec.request_from_wire(version, decoded, CTX)


def outbound(key: int, version: int, response) -> dict:
    spec = spec_for_key(key)
    body = spec.response_to_wire(version, response)
    decoded, _ = decode_response(key, version, encode_response(key, version, body))
    return decoded


@pytest.mark.parametrize("version", range(8))
def test_join_group(version):
    body = {"group_id": "g", "session_timeout_ms": 10000, "rebalance_timeout_ms": 30000, "member_id": "",
            "group_instance_id": "i1", "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b"m"}]}
    if version < 1:
        del body["rebalance_timeout_ms"]
    if version < 5:
        del body["group_instance_id"]
    req = inbound(11, version, body)
    assert req == JoinGroupRequest("g", 10000, 30000 if version >= 1 else 10000, "", "consumer",
                                   (JoinGroupProtocol("range", b"m"),), "i1" if version >= 5 else None,
                                   4 <= version < 5, "cli", "/127.0.0.1")
    resp = outbound(11, version, JoinGroupResponse(Errors.NONE, 3, "consumer", "range", "m1", "m1",
                                                   (JoinGroupMember("m1", b"md", "i1"),)))
    assert (resp["error_code"], resp["generation_id"], resp["protocol_name"], resp["leader"], resp["member_id"]) == (
        0, 3, "range", "m1", "m1")
    assert resp["members"][0]["metadata"] == b"md"
    assert resp.get("protocol_type") == ("consumer" if version >= 7 else None)
    assert resp["members"][0].get("group_instance_id") == ("i1" if version >= 5 else None)
    err = outbound(11, version, JoinGroupResponse(Errors.MEMBER_ID_REQUIRED, member_id="new"))
    assert (err["error_code"], err["member_id"], err["protocol_name"]) == (79, "new", None if version >= 7 else "")
    spec = spec_for_key(11)
    assert spec.error_response(version, body, 16)["error_code"] == 16


@pytest.mark.parametrize("version", range(6))
def test_sync_group(version):
    body = {"group_id": "g", "generation_id": 2, "member_id": "m1", "group_instance_id": "i",
            "protocol_type": "consumer", "protocol_name": "range",
            "assignments": [{"member_id": "m1", "assignment": b"a1"}]}
    if version < 3:
        del body["group_instance_id"]
    if version < 5:
        del body["protocol_type"], body["protocol_name"]
    assert inbound(14, version, body) == SyncGroupRequest(
        "g", 2, "m1", (SyncGroupAssignment("m1", b"a1"),), "i" if version >= 3 else None,
        "consumer" if version >= 5 else None, "range" if version >= 5 else None)
    resp = outbound(14, version, SyncGroupResponse(Errors.NONE, b"a1", "consumer", "range"))
    assert (resp["error_code"], resp["assignment"], resp.get("protocol_name")) == (
        0, b"a1", "range" if version >= 5 else None)


@pytest.mark.parametrize("version", range(5))
def test_heartbeat(version):
    body = {"group_id": "g", "generation_id": 2, "member_id": "m1"}
    if version >= 3:
        body["group_instance_id"] = None
    assert inbound(12, version, body) == HeartbeatRequest("g", 2, "m1")
    assert outbound(12, version, HeartbeatResponse(Errors.REBALANCE_IN_PROGRESS))["error_code"] == 27


@pytest.mark.parametrize("version", range(5))
def test_leave_group(version):
    if version < 3:
        body = {"group_id": "g", "member_id": "m1"}
        assert inbound(13, version, body) == LeaveGroupRequest("g", (MemberIdentity("m1"),))
        resp = outbound(13, version, LeaveGroupResponse(Errors.NONE, (
            LeaveGroupMemberResponse("m1", None, Errors.UNKNOWN_MEMBER_ID),)))
        assert resp["error_code"] == 25  # the one member's error is the answer's
    else:
        body = {"group_id": "g", "members": [{"member_id": "m1", "group_instance_id": None},
                                             {"member_id": "", "group_instance_id": "i2"}]}
        assert inbound(13, version, body) == LeaveGroupRequest("g", (MemberIdentity("m1"), MemberIdentity("", "i2")))
        resp = outbound(13, version, LeaveGroupResponse(Errors.NONE, (
            LeaveGroupMemberResponse("m1", None, Errors.NONE),
            LeaveGroupMemberResponse("", "i2", Errors.UNKNOWN_MEMBER_ID))))
        assert resp["error_code"] == 0
        assert [(m["member_id"], m["group_instance_id"], m["error_code"]) for m in resp["members"]] == [
            ("m1", None, 0), ("", "i2", 25)]


@pytest.mark.parametrize("version", range(6))
def test_describe_groups(version):
    body = {"groups": ["g", "h"]}
    if version >= 3:
        body["include_authorized_operations"] = True
    req = inbound(15, version, body)
    assert req == DescribeGroupsRequest(("g", "h"), version >= 3)
    resp = outbound(15, version, DescribeGroupsResponse((
        DescribedGroup(Errors.NONE, "g", "Stable", "consumer", "range", (
            DescribedGroupMember("m1", "cli", "/h", b"md", b"as", "i1"),)),
        DescribedGroup(Errors.NOT_COORDINATOR, "h")), req.include_authorized_operations))
    g, h = resp["groups"]
    assert (g["group_state"], g["protocol_data"], g["members"][0]["member_assignment"]) == ("Stable", "range", b"as")
    assert g["members"][0].get("group_instance_id") == ("i1" if version >= 4 else None)
    assert g.get("authorized_operations") == (GROUP_AUTHORIZED_OPERATIONS if version >= 3 else None)
    assert (h["error_code"], h["group_state"]) == (16, "")
    err = spec_for_key(15).error_response(version, body, 15)
    assert [(x["group_id"], x["error_code"]) for x in err["groups"]] == [("g", 15), ("h", 15)]


@pytest.mark.parametrize("version", range(5))
def test_list_groups(version):
    body = {"states_filter": ["Stable"]} if version >= 4 else {}
    assert inbound(16, version, body) == ListGroupsRequest(("Stable",) if version >= 4 else ())
    resp = outbound(16, version, ListGroupsResponse(Errors.NONE, (ListedGroup("g", "consumer", "Stable"),)))
    assert [(g["group_id"], g["protocol_type"], g.get("group_state")) for g in resp["groups"]] == [
        ("g", "consumer", "Stable" if version >= 4 else None)]


@pytest.mark.parametrize("version", range(3))
def test_delete_groups(version):
    assert inbound(42, version, {"groups_names": ["g", "h"]}) == DeleteGroupsRequest(("g", "h"))
    resp = outbound(42, version, DeleteGroupsResponse((("g", Errors.NONE), ("h", Errors.NON_EMPTY_GROUP))))
    assert [(r["group_id"], r["error_code"]) for r in resp["results"]] == [("g", 0), ("h", 68)]
