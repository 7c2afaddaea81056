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
    assert {k for k, _, _ in resp.api_keys} == registry.registered_keys()


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
