"""ApiVersions: 2.6's ranges for the served keys only; KIP-511's error answers; bodies the codec encodes."""

from __future__ import annotations

import pytest

from core.api import api_versions, registry
from core.api.registry import RequestContext
from messages.common import Errors
from messages.metadata import ApiVersionsRequest, ApiVersionsResponse
from protocol.codec import decode_request, decode_response, encode_request, encode_response


def test_only_served_keys_are_advertised_with_2_6_ranges():
    resp = api_versions.handle_api_versions_request(ApiVersionsRequest(), 2, served={0, 3, 1})
    assert resp == ApiVersionsResponse(Errors.NONE, ((0, 0, 8), (1, 0, 11), (3, 0, 9), (18, 0, 3)))


def test_by_default_the_registered_keys_are_advertised():
    resp = api_versions.handle_api_versions_request(ApiVersionsRequest(), 0)
    assert (18, 0, 3) in resp.api_keys
    # the registered keys of 2.6.3's table: KIP-664's (61, 65, 66) are served, not advertised
    assert {k for k, _, _ in resp.api_keys} == {k for k in registry.registered_keys() if k < 50}
    assert {61, 65, 66} <= registry.registered_keys()


@pytest.mark.parametrize("name, version_, ok", [
    ("librdkafka", "2.16.1", True), ("kafka-python", "3.0.12", True), ("a", "1", True),
    ("", "1.0", False), ("-bad", "1.0", False), ("ok", "1.0-", False), ("sp ace", "1", False),
])
def test_v3_software_name_and_version_are_validated(name, version_, ok):
    resp = api_versions.handle_api_versions_request(ApiVersionsRequest(name, version_), 3, served={0})
    assert resp.error == (Errors.NONE if ok else Errors.INVALID_REQUEST)
    assert (resp.api_keys != ()) == ok
    # before v3 the fields do not exist, so nothing is checked
    assert api_versions.handle_api_versions_request(ApiVersionsRequest(name, version_), 2, served={0}).error \
        == Errors.NONE


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_response_bodies_encode_and_decode_at_every_version(version):
    resp = ApiVersionsResponse(Errors.NONE, ((0, 0, 8), (18, 0, 3)), throttle_time_ms=5)
    body = api_versions.response_to_wire(version, resp)
    back = decode_response(18, version, encode_response(18, version, body))[0]
    assert back["error_code"] == 0
    assert [(k["api_key"], k["min_version"], k["max_version"]) for k in back["api_keys"]] == [(0, 0, 8), (18, 0, 3)]
    assert back.get("throttle_time_ms", 0) == (5 if version >= 1 else 0)


def test_request_from_wire_reads_the_software_fields():
    body = decode_request(18, 3, encode_request(18, 3, {"client_software_name": "kcat",
                                                        "client_software_version": "1.7"}))[0]
    assert api_versions.request_from_wire(3, body, RequestContext(3)) == ApiVersionsRequest("kcat", "1.7")
    assert api_versions.request_from_wire(0, {}, RequestContext(0)) == ApiVersionsRequest()


def test_error_response_carries_api_versions_own_range_for_unsupported_version():
    assert api_versions.error_response(0, {}, Errors.UNSUPPORTED_VERSION) == {
        "error_code": 35, "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 3}]}
    assert api_versions.error_response(1, {}, Errors.INVALID_REQUEST) == {
        "error_code": 42, "api_keys": [], "throttle_time_ms": 0}


# Kafka 2.6.3's ApiKeys as its brokers advertise them: apiKey -> (name, validVersions) of
# clients/src/main/resources/common/message/<Name>Request.json at tag 2.6.3 (the same as kafka-python 3's recorded
# ApiVersions answer of a 2.6 broker, BROKER_API_VERSIONS[(2, 6)]). Written out here, not read from kactor's table.
KAFKA_2_6_3: dict[int, tuple[str, int, int]] = {
    0: ("Produce", 0, 8), 1: ("Fetch", 0, 11), 2: ("ListOffsets", 0, 5), 3: ("Metadata", 0, 9),
    4: ("LeaderAndIsr", 0, 4), 5: ("StopReplica", 0, 3), 6: ("UpdateMetadata", 0, 6), 7: ("ControlledShutdown", 0, 3),
    8: ("OffsetCommit", 0, 8), 9: ("OffsetFetch", 0, 7), 10: ("FindCoordinator", 0, 3), 11: ("JoinGroup", 0, 7),
    12: ("Heartbeat", 0, 4), 13: ("LeaveGroup", 0, 4), 14: ("SyncGroup", 0, 5), 15: ("DescribeGroups", 0, 5),
    16: ("ListGroups", 0, 4), 17: ("SaslHandshake", 0, 1), 18: ("ApiVersions", 0, 3), 19: ("CreateTopics", 0, 5),
    20: ("DeleteTopics", 0, 4), 21: ("DeleteRecords", 0, 2), 22: ("InitProducerId", 0, 3),
    23: ("OffsetForLeaderEpoch", 0, 3), 24: ("AddPartitionsToTxn", 0, 1), 25: ("AddOffsetsToTxn", 0, 1),
    26: ("EndTxn", 0, 1), 27: ("WriteTxnMarkers", 0, 0), 28: ("TxnOffsetCommit", 0, 3), 29: ("DescribeAcls", 0, 2),
    30: ("CreateAcls", 0, 2), 31: ("DeleteAcls", 0, 2), 32: ("DescribeConfigs", 0, 3), 33: ("AlterConfigs", 0, 1),
    34: ("AlterReplicaLogDirs", 0, 1), 35: ("DescribeLogDirs", 0, 2), 36: ("SaslAuthenticate", 0, 2),
    37: ("CreatePartitions", 0, 2), 38: ("CreateDelegationToken", 0, 2), 39: ("RenewDelegationToken", 0, 2),
    40: ("ExpireDelegationToken", 0, 2), 41: ("DescribeDelegationToken", 0, 2), 42: ("DeleteGroups", 0, 2),
    43: ("ElectLeaders", 0, 2), 44: ("IncrementalAlterConfigs", 0, 1), 45: ("AlterPartitionReassignments", 0, 0),
    46: ("ListPartitionReassignments", 0, 0), 47: ("OffsetDelete", 0, 0), 48: ("DescribeClientQuotas", 0, 0),
    49: ("AlterClientQuotas", 0, 0),
}


def test_every_kafka_2_6_3_api_key_is_advertised_at_its_2_6_3_range():
    """Kafka 2.6 advertises all 50 keys on every listener (a feature that is off is answered with its error, never
    left out): a client that reads fewer takes the broker for an older one."""
    resp = api_versions.handle_api_versions_request(ApiVersionsRequest("kafka-python", "3.0.12"), 3)
    assert resp.error == Errors.NONE
    # only 2.6.3's table is advertised, though kactor serves more (issue #40): AddPartitionsToTxn to v4 (KIP-890
    # part 1's verify-only request, 3.6) and KIP-664's three admin APIs, which a client seeing them took for 3.x
    beyond = {24: ("AddPartitionsToTxn", 0, 4)}
    assert resp.api_keys == tuple((k, lo, hi) for k, (_, lo, hi) in sorted(KAFKA_2_6_3.items()))
    from protocol.api_versions import API_VERSIONS
    assert {k: (r.name, r.min_version, r.max_version) for k, r in API_VERSIONS.items() if k < 50} == {
        **KAFKA_2_6_3, **beyond}
    # beyond 2.6.3 (issue #40): KIP-664's admin APIs as Kafka 3.6 serves them
    assert {k: (r.name, r.min_version, r.max_version) for k, r in API_VERSIONS.items() if k >= 50} == {
        61: ("DescribeProducers", 0, 0), 65: ("DescribeTransactions", 0, 0), 66: ("ListTransactions", 0, 0)}
