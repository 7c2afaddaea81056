"""The APIs whose feature is not configured here (SASL on a PLAINTEXT listener, delegation tokens over
PLAINTEXT; no authorizer: tests/core/api/test_api_acls.py): each request is answered, whole, item by item, with the
error Kafka 2.6.3's KafkaApis answers then, at every version, as the edge answers it (the converter raises
NotConfigured; the spec's error_response builds the answer)."""

from __future__ import annotations

from typing import Any

import pytest

from core.api.admin import fit
from core.api.not_configured import NotConfigured
from core.api.registry import RequestContext, spec_for_key
from messages.common import Errors
from protocol.api_versions import API_VERSIONS
from protocol.codec import decode_request, decode_response, encode_request, encode_response
from protocol.schema import message_spec

# api key -> (a request body at the highest version, the error, the answer's error codes in order)
CASES: dict[int, tuple[dict[str, Any], Errors, int]] = {
    17: ({"mechanism": "PLAIN"}, Errors.ILLEGAL_SASL_STATE, 1),
    36: ({"auth_bytes": b"\x00a\x00b"}, Errors.ILLEGAL_SASL_STATE, 1),
    38: ({"renewers": [], "max_lifetime_ms": -1}, Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, 1),
    39: ({"hmac": b"h", "renew_period_ms": 1000}, Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, 1),
    40: ({"hmac": b"h", "expiry_time_period_ms": 1000}, Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, 1),
    41: ({"owners": None}, Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, 1),
}


def _error_codes(value: Any) -> list[int]:
    """Every error code in a response body, depth first (a top-level one, then each item's)."""
    codes: list[int] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ("error_code", "partition_error_code"):
                codes.append(v)
            else:
                codes.extend(_error_codes(v))
    elif isinstance(value, list):
        for item in value:
            codes.extend(_error_codes(item))
    return codes


@pytest.mark.parametrize("key, version", [(k, v) for k in sorted(CASES)
                                          for v in range(API_VERSIONS[k].min_version, API_VERSIONS[k].max_version + 1)])
def test_each_item_is_answered_with_the_error_kafka_answers(key: int, version: int) -> None:
    body, error, items = CASES[key]
    spec = spec_for_key(key)
    assert spec is not None
    wire = fit(message_spec(key, version, "request"), body)
    decoded = decode_request(key, version, encode_request(key, version, wire))[0]
    with pytest.raises(NotConfigured) as refused:
        spec.request_from_wire(version, decoded, RequestContext(version))
    assert refused.value.error == error
    answer = spec.error_response(version, decoded, int(refused.value.error))
    back = decode_response(key, version, encode_response(key, version, answer))[0]
    codes = _error_codes(back)
    # one error per item; OffsetDelete's answer also has its top-level one
    assert codes == [int(error)] * items


def test_the_answers_carry_kafkas_messages_and_empty_results() -> None:
    sasl = spec_for_key(36).error_response(2, {}, int(Errors.ILLEGAL_SASL_STATE))
    assert sasl["error_message"] == "SaslAuthenticate request received after successful authentication"
    assert spec_for_key(17).error_response(1, {}, int(Errors.ILLEGAL_SASL_STATE)) == {"error_code": 34,
                                                                                      "mechanisms": []}
    token = spec_for_key(38).error_response(2, {}, int(Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED))
    assert (token["principal_type"], token["principal_name"], token["token_id"], token["expiry_timestamp_ms"]) == \
        ("User", "ANONYMOUS", "", -1)
    assert spec_for_key(39).error_response(1, {}, 64)["expiry_timestamp_ms"] == -1
