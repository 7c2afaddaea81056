"""core/api/admin.py against protocol's codec: requests pass through as decoded, the
handler's answers (every field of the newest version) fit every version 2.6 serves and survive the codec both ways,
and every error response is a valid response of its version."""

from __future__ import annotations

import pytest

import core.api.admin as admin
from core.api import registry
from core.api.registry import RequestContext
from protocol.api_versions import API_VERSIONS
from protocol.codec import decode_request, decode_response, encode_request, encode_response
from protocol.schema import message_spec

CONFIG_ENTRY = {"name": "cleanup.policy", "value": "compact", "read_only": False, "config_source": 1,
                "is_default": False, "is_sensitive": False, "config_type": 7, "documentation": None,
                "synonyms": [{"name": "cleanup.policy", "value": "compact", "source": 1},
                             {"name": "log.cleanup.policy", "value": "delete", "source": 5}]}

# (request at its newest version, the handler's full answer) per api key
SAMPLES: dict[int, tuple[dict, dict]] = {
    19: ({"topics": [{"name": "t", "num_partitions": 2, "replication_factor": 1,
                      "assignments": [], "configs": [{"name": "cleanup.policy", "value": "compact"}]}],
          "timeout_ms": 5000, "validate_only": False},
         {"throttle_time_ms": 0, "topics": [{"name": "t", "error_code": 0, "error_message": None,
                                             "topic_config_error_code": 0, "num_partitions": 2,
                                             "replication_factor": 1, "configs": [
                                                 {k: CONFIG_ENTRY[k] for k in ("name", "value", "read_only",
                                                                                "config_source", "is_sensitive")}]}]}),
    20: ({"topic_names": ["a", "b"], "timeout_ms": 100},
         {"throttle_time_ms": 0, "responses": [{"name": "a", "error_code": 0}, {"name": "b", "error_code": 3}]}),
    37: ({"topics": [{"name": "t", "count": 3, "assignments": [{"broker_ids": [1, 2]}]}], "timeout_ms": 100,
          "validate_only": False},
         {"throttle_time_ms": 0, "results": [{"name": "t", "error_code": 37, "error_message": "no"}]}),
    32: ({"resources": [{"resource_type": 2, "resource_name": "t", "configuration_keys": None}],
          "include_synonyms": True, "include_documentation": False},
         {"throttle_time_ms": 0, "results": [{"error_code": 0, "error_message": None, "resource_type": 2,
                                              "resource_name": "t", "configs": [CONFIG_ENTRY]}]}),
    33: ({"resources": [{"resource_type": 4, "resource_name": "", "configs": [{"name": "x", "value": "1"}]}],
          "validate_only": True},
         {"throttle_time_ms": 0, "responses": [{"error_code": 42, "error_message": "bad", "resource_type": 4,
                                                "resource_name": ""}]}),
    44: ({"resources": [{"resource_type": 2, "resource_name": "t", "configs": [
        {"name": "cleanup.policy", "config_operation": 2, "value": "compact"}]}], "validate_only": False},
         {"throttle_time_ms": 0, "responses": [{"error_code": 0, "error_message": None, "resource_type": 2,
                                                "resource_name": "t"}]}),
    43: ({"election_type": 0, "topic_partitions": [{"topic": "t", "partitions": [0, 1]}], "timeout_ms": 100},
         {"throttle_time_ms": 0, "error_code": 0, "replica_election_results": [{"topic": "t", "partition_result": [
             {"partition_id": 0, "error_code": 0, "error_message": None},
             {"partition_id": 1, "error_code": 84, "error_message": None}]}]}),
    45: ({"timeout_ms": 100, "topics": [{"name": "t", "partitions": [{"partition_index": 0, "replicas": [1]},
                                                                     {"partition_index": 1, "replicas": None}]}]},
         {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "responses": [
             {"name": "t", "partitions": [{"partition_index": 0, "error_code": 0, "error_message": None}]}]}),
    46: ({"timeout_ms": 100, "topics": None},
         {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "topics": [
             {"name": "t", "partitions": [{"partition_index": 0, "replicas": [1, 2], "adding_replicas": [2],
                                           "removing_replicas": []}]}]}),
}
VERSIONS = [(k, v) for k in sorted(SAMPLES) for v in range(API_VERSIONS[k].min_version,
                                                             API_VERSIONS[k].max_version + 1)]


def test_every_admin_api_is_routed_to_the_admin_handler() -> None:
    handlers = {k: s.edge_handler for k in SAMPLES if (s := registry.spec_for_key(k)) is not None}
    assert handlers == dict.fromkeys(SAMPLES, "admin")


@pytest.mark.parametrize(("api_key", "version"), VERSIONS)
def test_request_passes_through_as_decoded(api_key: int, version: int) -> None:
    spec = registry.spec_for_key(api_key)
    newest = admin.fit(message_spec(api_key, version, "request"), SAMPLES[api_key][0])
    decoded, _ = decode_request(api_key, version, encode_request(api_key, version, newest))
    req = spec.request_from_wire(version, decoded, RequestContext(api_version=version))
    assert (req.api_key, req.version) == (api_key, version) and req.body is decoded


@pytest.mark.parametrize(("api_key", "version"), VERSIONS)
def test_answer_fits_each_version_both_ways(api_key: int, version: int) -> None:
    spec = registry.spec_for_key(api_key)
    body = spec.response_to_wire(version, SAMPLES[api_key][1])
    decoded, end = decode_response(api_key, version, encode_response(api_key, version, body))
    assert {k: decoded[k] for k in body} == body
    assert encode_response(api_key, version, decoded) == encode_response(api_key, version, body)


@pytest.mark.parametrize(("api_key", "version"), VERSIONS)
def test_error_response_names_every_item(api_key: int, version: int) -> None:
    spec = registry.spec_for_key(api_key)
    body = spec.error_response(version, SAMPLES[api_key][0], 41)
    decoded, _ = decode_response(api_key, version, encode_response(api_key, version, body))
    codes = _error_codes(decoded)
    assert codes and set(codes) == {41}


def _error_codes(value: object) -> list[int]:
    if isinstance(value, dict):
        return [c for k, v in value.items() for c in ([v] if k == "error_code" else _error_codes(v))]
    if isinstance(value, list):
        return [c for v in value for c in _error_codes(v)]
    return []


def test_describe_configs_v0_answers_is_default_where_later_versions_answer_the_source() -> None:
    spec = registry.spec_for_key(32)
    (v0,) = spec.response_to_wire(0, SAMPLES[32][1])["results"][0]["configs"]
    (v3,) = spec.response_to_wire(3, SAMPLES[32][1])["results"][0]["configs"]
    assert "config_source" not in v0 and v0["is_default"] is False and "synonyms" not in v0
    assert "is_default" not in v3 and v3["config_source"] == 1 and len(v3["synonyms"]) == 2
