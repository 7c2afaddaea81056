"""The kactor-private DescribeMetadataCache (key 10000): whole frames written and read in Kafka's framing (request
header v1, response header v0, one BYTES body of the codec's JSON) byte for byte; bad frames raise protocol's errors;
a body that is not the expected message is refused; the key is served but not advertised in ApiVersions."""

from __future__ import annotations

import pytest

from core.api import kactor_private as kp
from core.api import registry
from messages.codec import dumps_bytes
from messages.common import TopicPartition
from messages.replication import DescribeMetadataCacheRequest, DescribeMetadataCacheResponse
from messages.requests import UpdateMetadataPartitionState
from protocol.errors import MalformedError, TruncatedError, UnknownApiKeyError, UnsupportedVersionError
from protocol.framing import RequestHeader
from tests.protocol.wire_by_hand import blob, i16, i32, string

REQUEST = DescribeMetadataCacheRequest(("t",))
RESPONSE = DescribeMetadataCacheResponse(1, (0, 1, 2), (
    UpdateMetadataPartitionState(TopicPartition("t", 0), 3, 1, 4, (1, 2), 7, (1, 2, 0), (0,)),))


def test_request_frame_bytes_and_back() -> None:
    body = kp.request_to_wire(REQUEST)
    json = dumps_bytes(REQUEST)
    frame = kp.PRIVATE_CODEC.encode_request(RequestHeader(10000, 0, 5, "kactor-test"), body)
    payload = i16(10000) + i16(0) + i32(5) + string("kactor-test") + blob(json)
    assert frame == i32(len(payload)) + payload
    request = kp.PRIVATE_CODEC.decode_request(payload)
    assert request.header == RequestHeader(10000, 0, 5, "kactor-test")
    assert kp.request_from_wire(0, request.body) == REQUEST


def test_response_frame_bytes_and_back() -> None:
    frame = kp.PRIVATE_CODEC.encode_response(10000, 0, 5, kp.response_to_wire(0, RESPONSE))
    payload = i32(5) + blob(dumps_bytes(RESPONSE))
    assert frame == i32(len(payload)) + payload
    corr, body = kp.PRIVATE_CODEC.decode_response(10000, 0, payload)
    assert corr == 5 and kp.response_from_wire(0, body) == RESPONSE


@pytest.mark.parametrize("payload, error", [
    (i16(10000) + i16(0), TruncatedError),
    (i16(10001) + i16(0) + i32(1) + string(None) + blob(b"{}"), UnknownApiKeyError),
    (i16(10000) + i16(1) + i32(1) + string(None) + blob(b"{}"), UnsupportedVersionError),
    (i16(10000) + i16(0) + i32(1) + string(None) + blob(None), MalformedError),
    (i16(10000) + i16(0) + i32(1) + string(None) + i32(10), TruncatedError),
])
def test_bad_frames_raise_protocol_errors(payload: bytes, error: type) -> None:
    with pytest.raises(error):
        kp.PRIVATE_CODEC.decode_request(payload)


@pytest.mark.parametrize("json", [b"not json", dumps_bytes(RESPONSE), b'{"@":"NoSuchType"}'])
def test_a_body_that_is_not_the_request_is_refused(json: bytes) -> None:
    with pytest.raises(ValueError):
        kp.request_from_wire(0, {"json": json})
    assert kp.response_from_wire(0, kp.error_response(0, {"json": json}, 42)) == \
        DescribeMetadataCacheResponse(-1, (), ())


def test_served_but_never_advertised() -> None:
    assert registry.spec_for_key(10000) is kp.SPEC
    assert registry.spec_for_type(DescribeMetadataCacheRequest) is kp.SPEC
    assert 10000 not in registry.registered_keys()
    assert kp.SPEC.body_codec is kp.PRIVATE_CODEC
