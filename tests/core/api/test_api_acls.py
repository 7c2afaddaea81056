"""DescribeAcls / CreateAcls / DeleteAcls as Kafka 2.6.3's KafkaApis and AclAuthorizer serve them
(core/api/acls.py, acls_handler.py, describe_acls.py, create_acls.py, delete_acls.py), on sim's ZooKeeper model:
SECURITY_DISABLED without an authorizer, CLUSTER_AUTHORIZATION_FAILED without DESCRIBE / ALTER on the Cluster, the
filters (ANY, MATCH, principal, host, operation, permission), each creation's validation and the exact answers, at
every version through the wire codec, and the znodes and change notifications the writes leave."""

from __future__ import annotations

from typing import Any

import pytest

from core.api.acls import InvalidCreationError
from core.api.acls_handler import AclApiConfig, handle_acls
from core.api.admin import AdminRequest, fit
from core.api.registry import RequestContext, spec_for_key
from core.effects import run_sync
from core.security.acl_store import ZkAclAuthorizer
from messages.common import Errors
from protocol.api_versions import ApiKeys
from protocol.codec import decode_request, decode_response, encode_request, encode_response
from protocol.schema import message_spec
from tests.support.fake_zookeeper import FakeZooKeeper

ADMIN = "User:admin"
ON = AclApiConfig(True, ADMIN)
TOPIC, GROUP, CLUSTER = 2, 3, 4  # ResourceType codes
ANY, MATCH, LITERAL, PREFIXED = 1, 2, 3, 4  # PatternType codes
ALL, READ, WRITE, ALTER, DESCRIBE = 2, 3, 4, 7, 8  # AclOperation codes
DENY, ALLOW = 2, 3  # AclPermissionType codes
SECURITY_DISABLED = int(Errors.SECURITY_DISABLED)
DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = ApiKeys.DESCRIBE_ACLS, ApiKeys.CREATE_ACLS, ApiKeys.DELETE_ACLS


def creation(name: str = "orders", principal: str = "User:alice", operation: int = READ, *,
             resource_type: int = TOPIC, pattern: int = LITERAL, host: str = "*", permission: int = ALLOW
             ) -> dict[str, Any]:
    return {"resource_type": resource_type, "resource_name": name, "resource_pattern_type": pattern,
            "principal": principal, "host": host, "operation": operation, "permission_type": permission}


def acl_filter(resource_type: int = 1, name: str | None = None, pattern: int = ANY, principal: str | None = None,
               host: str | None = None, operation: int = 1, permission: int = 1) -> dict[str, Any]:
    return {"resource_type_filter": resource_type, "resource_name_filter": name, "pattern_type_filter": pattern,
            "principal_filter": principal, "host_filter": host, "operation": operation, "permission_type": permission}


def call(zk: FakeZooKeeper, api_key: int, body: dict[str, Any], principal: str = ADMIN, version: int = 2,
         config: AclApiConfig = ON, host: str = "127.0.0.1") -> dict[str, Any]:
    """The request through the wire codec at ``version``, served, and the answer back through it."""
    wire = fit(message_spec(api_key, version, "request"), body)
    decoded = decode_request(api_key, version, encode_request(api_key, version, wire))[0]
    spec = spec_for_key(api_key)
    assert spec is not None
    request = spec.request_from_wire(version, decoded, RequestContext(version))
    assert request == AdminRequest(api_key, version, decoded)
    answer = run_sync(handle_acls(config, api_key, version, decoded, principal, host), zk)
    out = spec.response_to_wire(version, answer)
    return decode_response(api_key, version, encode_response(api_key, version, out))[0]


def create(zk: FakeZooKeeper, *creations: dict[str, Any], **kw: Any) -> list[tuple[int, str | None]]:
    answer = call(zk, CREATE_ACLS, {"creations": list(creations)}, **kw)
    return [(r["error_code"], r["error_message"]) for r in answer["results"]]


def describe(zk: FakeZooKeeper, f: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    return call(zk, DESCRIBE_ACLS, f or acl_filter(), **kw)


def listing(answer: dict[str, Any]) -> list[tuple]:
    return [(r["resource_type"], r["resource_name"], r.get("pattern_type", LITERAL), a["principal"], a["host"],
             a["operation"], a["permission_type"]) for r in answer["resources"] for a in r["acls"]]


@pytest.fixture
def zk() -> FakeZooKeeper:
    """ZooKeeper after a broker's authorizer started (AclAuthorizer.configure's createAclPaths)."""
    zk = FakeZooKeeper()
    run_sync(ZkAclAuthorizer().load(), zk)
    return zk


# -- without an authorizer, and the Cluster authorization -------------------------------------------------------------
@pytest.mark.parametrize("version", [0, 1, 2])
def test_without_an_authorizer_every_api_answers_security_disabled(zk: FakeZooKeeper, version: int) -> None:
    off = AclApiConfig(False)
    before = zk.zxid
    d = describe(zk, acl_filter(pattern=LITERAL), version=version, config=off)
    assert (d["error_code"], d["error_message"], d["resources"]) == (
        SECURITY_DISABLED, "No Authorizer is configured on the broker", [])
    assert create(zk, creation(), creation("b"), version=version, config=off) == \
        [(SECURITY_DISABLED, "No Authorizer is configured on the broker.")] * 2
    deleted = call(zk, DELETE_ACLS, {"filters": [acl_filter(pattern=LITERAL)]}, version=version, config=off)
    assert deleted["filter_results"] == [{"error_code": SECURITY_DISABLED,
                                          "error_message": "No Authorizer is configured on the broker.",
                                          "matching_acls": []}]
    assert zk.zxid == before  # nothing written


def test_describe_needs_describe_on_the_cluster_and_the_writes_need_alter(zk: FakeZooKeeper) -> None:
    refused = (int(Errors.CLUSTER_AUTHORIZATION_FAILED),
               "Request of session Session(User:bob,/127.0.0.1) is not authorized.")
    d = describe(zk, principal="User:bob")
    assert (d["error_code"], d["error_message"], d["resources"]) == (*refused, [])
    assert create(zk, creation(), principal="User:bob") == [refused]
    assert call(zk, DELETE_ACLS, {"filters": [acl_filter()]}, principal="User:bob")["filter_results"] == [
        {"error_code": refused[0], "error_message": refused[1], "matching_acls": []}]
    assert not zk.exists("/kafka-acl/Topic/orders")
    # DESCRIBE on the Cluster lets bob describe, not create; ALTER lets him create
    assert create(zk, creation("kafka-cluster", "User:bob", DESCRIBE, resource_type=CLUSTER)) == [(0, None)]
    assert describe(zk, principal="User:bob")["error_code"] == 0
    assert create(zk, creation(), principal="User:bob") == [refused]
    assert create(zk, creation("kafka-cluster", "User:bob", ALTER, resource_type=CLUSTER)) == [(0, None)]
    assert create(zk, creation(), principal="User:bob") == [(0, None)]
    # a DENY of ALTER wins over ALL
    assert create(zk, creation("kafka-cluster", "User:carol", ALL, resource_type=CLUSTER),
                  creation("kafka-cluster", "User:carol", ALTER, resource_type=CLUSTER, permission=DENY)) == \
        [(0, None)] * 2
    assert call(zk, DELETE_ACLS, {"filters": [acl_filter()]}, principal="User:carol")["filter_results"][0][
        "error_code"] == refused[0]
    assert describe(zk, principal="User:carol")["error_code"] == 0  # ALL implies DESCRIBE


# -- CreateAcls -------------------------------------------------------------------------------------------------------
def test_create_writes_kafkas_znode_and_a_change_notification(zk: FakeZooKeeper) -> None:
    assert create(zk, creation(), creation(operation=WRITE), creation("app-", pattern=PREFIXED, resource_type=GROUP,
                                                                       host="10.0.0.1", permission=DENY)) == \
        [(0, None)] * 3
    assert zk.get("/kafka-acl/Topic/orders") == (
        '{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"},'
        '{"principal":"User:alice","permissionType":"Allow","operation":"Write","host":"*"}]}')
    assert zk.get("/kafka-acl-extended/prefixed/Group/app-") == (
        '{"version":1,"acls":[{"principal":"User:alice","permissionType":"Deny","operation":"Read",'
        '"host":"10.0.0.1"}]}')
    assert [zk.get(f"/kafka-acl-changes/{c}") for c in zk.children("/kafka-acl-changes")] == ["TOPIC:orders"]
    assert [zk.get(f"/kafka-acl-extended-changes/{c}") for c in zk.children("/kafka-acl-extended-changes")] == [
        '{"version":1,"resourceType":"GROUP","name":"app-","patternType":"PREFIXED"}']
    # the same again changes nothing: no new notification
    assert create(zk, creation()) == [(0, None)]
    assert len(zk.children("/kafka-acl-changes")) == 1


def test_create_validates_each_creation_as_2_6(zk: FakeZooKeeper) -> None:
    assert create(zk, creation("my-cluster", resource_type=CLUSTER), creation(""), creation("a/b"),
                  creation("ok"), creation("x", "alice"), creation("x", "User:eve")) == [
        (int(Errors.INVALID_REQUEST), "The only valid name for the CLUSTER resource is kafka-cluster"),
        (int(Errors.INVALID_REQUEST), "Invalid empty resource name"),
        (int(Errors.INVALID_REQUEST), "Failed to create ACL"),  # AclAuthorizer.validateAclBinding: '/' in the name
        (0, None),
        # an unparsable principal fails its resource's update, with every creation on that resource
        (int(Errors.UNKNOWN_SERVER_ERROR), None), (int(Errors.UNKNOWN_SERVER_ERROR), None)]
    assert zk.exists("/kafka-acl/Topic/ok") and not zk.exists("/kafka-acl/Topic/x")
    # an unknown code (not 0) reads as UNKNOWN: AclAuthorizer refuses the binding
    assert create(zk, creation(operation=42)) == [(int(Errors.INVALID_REQUEST), "Failed to create ACL")]


@pytest.mark.parametrize("field, value", [("resource_type", ANY), ("resource_pattern_type", ANY),
                                          ("resource_pattern_type", MATCH), ("operation", 1),
                                          ("permission_type", 1)])
def test_an_any_in_a_creation_fails_the_whole_request(zk: FakeZooKeeper, field: str, value: int) -> None:
    """KafkaApis builds every binding first: ResourcePattern / AccessControlEntry throw IllegalArgumentException
    out of the handler, and getErrorResponse fails every creation with UNKNOWN_SERVER_ERROR, no message."""
    assert create(zk, creation("good"), {**creation(), field: value}) == [(int(Errors.UNKNOWN_SERVER_ERROR), None)] * 2
    assert not zk.exists("/kafka-acl/Topic/good")


@pytest.mark.parametrize("field", ["resource_type", "resource_pattern_type", "operation", "permission_type"])
def test_an_unknown_code_in_a_creation_is_refused_by_the_converter(field: str) -> None:
    """CreateAclsRequest.validate refuses UNKNOWN (0) at parse: every creation INVALID_REQUEST."""
    spec = spec_for_key(CREATE_ACLS)
    assert spec is not None
    body = {"creations": [creation(), {**creation(), field: 0}]}
    with pytest.raises(InvalidCreationError) as refused:
        spec.request_from_wire(2, body, RequestContext(2))
    assert refused.value.error == Errors.INVALID_REQUEST
    assert spec.error_response(1, body, int(Errors.INVALID_REQUEST)) == {
        "throttle_time_ms": 0, "results": [{"error_code": 42, "error_message": None}] * 2}


def test_version_0_creates_literal_acls(zk: FakeZooKeeper) -> None:
    """v0 has no pattern type: the schema's default, LITERAL."""
    assert create(zk, creation("t0", pattern=PREFIXED), version=0) == [(0, None)]
    assert zk.exists("/kafka-acl/Topic/t0") and not zk.exists("/kafka-acl-extended/prefixed/Topic/t0")


# -- DescribeAcls -----------------------------------------------------------------------------------------------------
def _some_acls(zk: FakeZooKeeper) -> None:
    assert create(zk, creation("orders"), creation("orders", "User:bob", WRITE, host="10.0.0.2", permission=DENY),
                  creation("*"), creation("ord", pattern=PREFIXED), creation("other", "User:bob"),
                  creation("orders", resource_type=GROUP)) == [(0, None)] * 6


def test_describe_answers_every_acl_grouped_by_resource_in_the_cache_order(zk: FakeZooKeeper) -> None:
    _some_acls(zk)
    answer = describe(zk)
    assert (answer["error_code"], answer["error_message"], answer["throttle_time_ms"]) == (0, None, 0)
    assert answer["resources"] == [
        {"resource_type": TOPIC, "resource_name": "other", "pattern_type": LITERAL, "acls": [
            {"principal": "User:bob", "host": "*", "operation": READ, "permission_type": ALLOW}]},
        {"resource_type": TOPIC, "resource_name": "orders", "pattern_type": LITERAL, "acls": [
            {"principal": "User:alice", "host": "*", "operation": READ, "permission_type": ALLOW},
            {"principal": "User:bob", "host": "10.0.0.2", "operation": WRITE, "permission_type": DENY}]},
        {"resource_type": TOPIC, "resource_name": "*", "pattern_type": LITERAL, "acls": [
            {"principal": "User:alice", "host": "*", "operation": READ, "permission_type": ALLOW}]},
        {"resource_type": TOPIC, "resource_name": "ord", "pattern_type": PREFIXED, "acls": [
            {"principal": "User:alice", "host": "*", "operation": READ, "permission_type": ALLOW}]},
        {"resource_type": GROUP, "resource_name": "orders", "pattern_type": LITERAL, "acls": [
            {"principal": "User:alice", "host": "*", "operation": READ, "permission_type": ALLOW}]}]


def test_describe_filters_as_2_6(zk: FakeZooKeeper) -> None:
    _some_acls(zk)

    def names(**f: Any) -> list[tuple]:
        return [(r[0], r[1], r[2], r[3]) for r in listing(describe(zk, acl_filter(**f)))]

    # MATCH: the literal name, the wildcard and every prefix that applies
    assert names(resource_type=TOPIC, name="orders", pattern=MATCH) == [
        (TOPIC, "orders", LITERAL, "User:alice"), (TOPIC, "orders", LITERAL, "User:bob"),
        (TOPIC, "*", LITERAL, "User:alice"), (TOPIC, "ord", PREFIXED, "User:alice")]
    # ANY with a name: that name under every pattern type; LITERAL / PREFIXED: exactly that pattern
    assert names(resource_type=TOPIC, name="ord", pattern=ANY) == [(TOPIC, "ord", PREFIXED, "User:alice")]
    assert names(resource_type=TOPIC, name="ord", pattern=LITERAL) == []
    assert names(resource_type=TOPIC, pattern=PREFIXED) == [(TOPIC, "ord", PREFIXED, "User:alice")]
    assert names(resource_type=GROUP) == [(GROUP, "orders", LITERAL, "User:alice")]
    # the entry filters
    assert names(principal="User:bob") == [(TOPIC, "other", LITERAL, "User:bob"),
                                           (TOPIC, "orders", LITERAL, "User:bob")]
    assert names(host="10.0.0.2") == [(TOPIC, "orders", LITERAL, "User:bob")]
    assert names(operation=WRITE) == [(TOPIC, "orders", LITERAL, "User:bob")]
    assert names(permission=DENY) == [(TOPIC, "orders", LITERAL, "User:bob")]
    assert names(operation=ALL) == []  # ALL as a filter is the operation ALL, not any operation
    # an UNKNOWN (or unknown) code matches nothing, without an error
    unknown = describe(zk, acl_filter(operation=0))
    assert (unknown["error_code"], unknown["resources"]) == (0, [])
    assert describe(zk, acl_filter(resource_type=77))["resources"] == []


def test_describe_v0_sees_literal_resources_only(zk: FakeZooKeeper) -> None:
    _some_acls(zk)
    rows = listing(describe(zk, acl_filter(resource_type=TOPIC, name="ord"), version=0))
    assert rows == []
    assert {r[1] for r in listing(describe(zk, acl_filter(resource_type=TOPIC), version=0))} == \
        {"other", "orders", "*"}


# -- DeleteAcls -------------------------------------------------------------------------------------------------------
def test_delete_answers_what_each_filter_removed_and_rewrites_the_znodes(zk: FakeZooKeeper) -> None:
    _some_acls(zk)
    notified = len(zk.children("/kafka-acl-changes"))
    answer = call(zk, DELETE_ACLS, {"filters": [
        acl_filter(resource_type=TOPIC, name="orders", pattern=LITERAL, principal="User:bob"),
        acl_filter(principal="User:bob"),  # would match bob's ACL on "orders" too: credited to the first filter
        acl_filter(resource_type=TOPIC, name="nothing", pattern=LITERAL)]})
    assert answer == {"throttle_time_ms": 0, "filter_results": [
        {"error_code": 0, "error_message": None, "matching_acls": [
            {"error_code": 0, "error_message": None, "resource_type": TOPIC, "resource_name": "orders",
             "pattern_type": LITERAL, "principal": "User:bob", "host": "10.0.0.2", "operation": WRITE,
             "permission_type": DENY}]},
        {"error_code": 0, "error_message": None, "matching_acls": [
            {"error_code": 0, "error_message": None, "resource_type": TOPIC, "resource_name": "other",
             "pattern_type": LITERAL, "principal": "User:bob", "host": "*", "operation": READ,
             "permission_type": ALLOW}]},
        {"error_code": 0, "error_message": None, "matching_acls": []}]}
    assert zk.get("/kafka-acl/Topic/orders") == (
        '{"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}')
    assert not zk.exists("/kafka-acl/Topic/other")  # its last entry gone: the znode is deleted
    assert len(zk.children("/kafka-acl-changes")) == notified + 2


def test_delete_with_match_removes_every_pattern_that_applies(zk: FakeZooKeeper) -> None:
    _some_acls(zk)
    answer = call(zk, DELETE_ACLS, {"filters": [acl_filter(resource_type=TOPIC, name="orders", pattern=MATCH)]})
    assert [(m["resource_name"], m["pattern_type"], m["principal"])
            for m in answer["filter_results"][0]["matching_acls"]] == [
        ("orders", LITERAL, "User:alice"), ("orders", LITERAL, "User:bob"), ("*", LITERAL, "User:alice"),
        ("ord", PREFIXED, "User:alice")]
    assert [r[1] for r in listing(describe(zk))] == ["other", "orders"]
    assert listing(describe(zk))[1][0] == GROUP


def test_delete_v0_removes_literal_patterns_only(zk: FakeZooKeeper) -> None:
    _some_acls(zk)
    answer = call(zk, DELETE_ACLS, {"filters": [acl_filter(resource_type=TOPIC)]}, version=0)
    assert sorted(m["resource_name"] for m in answer["filter_results"][0]["matching_acls"]) == \
        ["*", "orders", "orders", "other"]
    assert zk.exists("/kafka-acl-extended/prefixed/Topic/ord")


def test_a_created_acl_is_what_the_authorizer_then_decides_on(zk: FakeZooKeeper) -> None:
    """The next request's authorization reads what CreateAcls wrote: bob, given ALTER on the Cluster, may create."""
    assert create(zk, creation()) == [(0, None)]
    assert create(zk, creation("x"), principal="User:bob")[0][0] == int(Errors.CLUSTER_AUTHORIZATION_FAILED)
    assert create(zk, creation("kafka-cluster", "User:bob", ALTER, resource_type=CLUSTER)) == [(0, None)]
    assert create(zk, creation("x"), principal="User:bob") == [(0, None)]
    # a host-specific ALLOW: only from that host
    assert create(zk, creation("kafka-cluster", "User:dan", DESCRIBE, resource_type=CLUSTER, host="10.1.1.1")) == \
        [(0, None)]
    assert describe(zk, principal="User:dan", host="10.1.1.1")["error_code"] == 0
    assert describe(zk, principal="User:dan", host="10.1.1.2")["error_code"] == \
        int(Errors.CLUSTER_AUTHORIZATION_FAILED)
