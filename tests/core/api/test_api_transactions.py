"""The transaction coordinator's APIs against protocol's codec, at every version 2.6 serves: a request decodes into
the coordinator's internal request, its answer (and the whole-request error answer) encodes as a valid response of
that version. (The WriteTxnMarkers the coordinator sends: test_api_write_txn_markers.py.)"""

from __future__ import annotations

from typing import Any

import pytest

import core.api  # noqa: F401 - registers every API
from core.api.admin import fit
from core.api.registry import RequestContext, Route, spec_for_key
from messages.common import Errors, TopicPartition
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
from protocol.api_versions import API_VERSIONS
from protocol.codec import decode_request, decode_response, encode_request, encode_response
from protocol.schema import message_spec

T0, T1, U3 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 3)
# api key -> (request body at the newest version, the internal request, an internal response, the errors it answers)
CASES: dict[int, tuple[dict[str, Any], Any, Any, list[int]]] = {
    22: ({"transactional_id": "tx", "transaction_timeout_ms": 60000, "producer_id": 5, "producer_epoch": 2},
         InitProducerIdRequest("tx", 60000, 5, 2), InitProducerIdResponse(Errors.NONE, 5, 3), [0]),
    24: ({"v3_and_below_transactional_id": "tx", "v3_and_below_producer_id": 5, "v3_and_below_producer_epoch": 0,
          "v3_and_below_topics": [{"name": "t", "partitions": [0, 1]}, {"name": "u", "partitions": [3]}]},
         AddPartitionsToTxnRequest("tx", 5, 0, (T0, T1, U3)),
         AddPartitionsToTxnResponse(((T0, Errors.OPERATION_NOT_ATTEMPTED), (T1, Errors.OPERATION_NOT_ATTEMPTED),
                                     (U3, Errors.UNKNOWN_TOPIC_OR_PARTITION))), [55, 55, 3]),
    25: ({"transactional_id": "tx", "producer_id": 5, "producer_epoch": 0, "group_id": "g"},
         AddOffsetsToTxnRequest("tx", 5, 0, "g"), AddOffsetsToTxnResponse(Errors.CONCURRENT_TRANSACTIONS), [51]),
    26: ({"transactional_id": "tx", "producer_id": 5, "producer_epoch": 0, "committed": True},
         EndTxnRequest("tx", 5, 0, True), EndTxnResponse(Errors.INVALID_PRODUCER_EPOCH), [47]),
}
# AddPartitionsToTxn v4 (a leader's verify-only batch, Kafka 3.6) has other fields: tests/core/api/
# test_api_add_partitions_to_txn_v4.py
VERSIONS = [(k, v) for k in sorted(CASES) for v in range(API_VERSIONS[k].min_version, API_VERSIONS[k].max_version + 1)
            if (k, v) != (24, 4)]


def _error_codes(value: Any) -> list[int]:
    if isinstance(value, dict):
        return [c for k, v in value.items()
                for c in ([v] if k in ("error_code", "partition_error_code") else _error_codes(v))]
    if isinstance(value, list):
        return [c for v in value for c in _error_codes(v)]
    return []


def test_the_transaction_apis_go_to_the_transaction_coordinator():
    assert {k: spec_for_key(k).route for k in CASES} == dict.fromkeys(CASES, Route.TRANSACTION_COORDINATOR)


@pytest.mark.parametrize(("key", "version"), VERSIONS)
def test_request_and_answers_at_each_version(key: int, version: int) -> None:
    body, internal, response, codes = CASES[key]
    spec = spec_for_key(key)
    wire = fit(message_spec(key, version, "request"), body)
    decoded, _ = decode_request(key, version, encode_request(key, version, wire))
    expected = internal
    if key == 22 and version < 3:  # v3 added the producer's current id and epoch (KIP-360)
        expected = InitProducerIdRequest("tx", 60000)
    assert spec.request_from_wire(version, decoded, RequestContext(version)) == expected
    back, _ = decode_response(key, version, encode_response(key, version, spec.response_to_wire(version, response)))
    assert _error_codes(back) == codes
    if key == 22:
        assert (back["producer_id"], back["producer_epoch"]) == (5, 3)
    failed, _ = decode_response(key, version, encode_response(key, version,
                                                              spec.error_response(version, decoded, 15)))
    assert _error_codes(failed) == [15] * len(codes)


def test_an_idempotent_producers_init_producer_id_has_no_transactional_id():
    wire = fit(message_spec(22, 0, "request"), {"transactional_id": None, "transaction_timeout_ms": 2147483647})
    decoded, _ = decode_request(22, 0, encode_request(22, 0, wire))
    assert spec_for_key(22).request_from_wire(0, decoded, RequestContext(0)) == InitProducerIdRequest(None, 2147483647)
    assert spec_for_key(22).error_response(3, {}, 15) == {"throttle_time_ms": 0, "error_code": 15,
                                                          "producer_id": -1, "producer_epoch": -1}
