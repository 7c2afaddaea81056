"""Framing: size prefixes across partial reads, request/response headers v0-v2, KIP-511's ApiVersions fallback, and
bad input (truncated, garbage, oversized, unknown key, unsupported version) raising typed errors only."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.api_versions import API_VERSIONS
from protocol.errors import (
    UNSUPPORTED_VERSION,
    FrameTooLargeError,
    MalformedError,
    ProtocolError,
    TruncatedError,
    UnknownApiKeyError,
    UnsupportedVersionError,
)
from protocol.framing import (
    SOCKET_REQUEST_MAX_BYTES,
    FrameDecoder,
    RequestHeader,
    api_versions_body,
    api_versions_unsupported_response,
    decode_request,
    decode_request_header,
    decode_response,
    encode_request,
    encode_response,
)

METADATA_V1 = {"topics": [{"name": "orders"}]}


def test_request_header_v1_bytes_for_a_non_flexible_version() -> None:
    frame = encode_request(RequestHeader(3, 1, 7, "cli"), METADATA_V1)
    # size, api key 3, version 1, correlation 7, client id "cli", topics [ "orders" ]
    body = b"\x00\x03\x00\x01\x00\x00\x00\x07\x00\x03cli" + b"\x00\x00\x00\x01\x00\x06orders"
    assert frame == struct.pack(">i", len(body)) + body


def test_request_header_v2_keeps_a_legacy_client_id_and_adds_tagged_fields() -> None:
    frame = encode_request(RequestHeader(3, 9, 8, "cli"), {"topics": None})
    # header: key, version, correlation, int16-length client id, empty tag section; body: null compact array,
    # allow_auto_topic_creation, two include_* booleans, empty tag section
    assert frame[4:] == b"\x00\x03\x00\x09\x00\x00\x00\x08\x00\x03cli\x00" + b"\x00\x01\x00\x00\x00"
    req = decode_request(frame[4:])
    assert req.header == RequestHeader(3, 9, 8, "cli")
    assert req.body["topics"] is None and req.body["allow_auto_topic_creation"] is True


def test_controlled_shutdown_v0_uses_header_v0_without_client_id() -> None:
    frame = encode_request(RequestHeader(7, 0, 5, "ignored"), {"broker_id": 2})
    assert frame[4:] == b"\x00\x07\x00\x00\x00\x00\x00\x05" + b"\x00\x00\x00\x02"
    assert decode_request(frame[4:]).header == RequestHeader(7, 0, 5, None)


def test_response_headers_v0_v1_and_api_versions_always_v0() -> None:
    v9 = encode_response(3, 9, 11, {})
    # header v1: correlation id + empty tag section; body: throttle 0, brokers [], cluster_id null, controller -1,
    # topics [], cluster_authorized_operations INT32_MIN, empty tag section
    body9 = b"\x00\x00\x00\x00" + b"\x01" + b"\x00" + b"\xff\xff\xff\xff" + b"\x01" + b"\x80\x00\x00\x00" + b"\x00"
    assert v9[4:] == b"\x00\x00\x00\x0b" + b"\x00" + body9
    v8 = encode_response(3, 8, 11, {})
    assert v8[4:9] == b"\x00\x00\x00\x0b" + b"\x00"  # header v0, then the throttle time's first byte
    assert len(v8) == 4 + 4 + 4 + 4 + 2 + 4 + 4 + 4  # no tag bytes: int32 array lengths, int16 null string
    assert decode_response(3, 9, v9[4:])[0] == 11
    av3 = encode_response(18, 3, 12, api_versions_body())
    correlation_id, body = decode_response(18, 3, av3[4:])
    assert av3[4:8] == b"\x00\x00\x00\x0c" and av3[8:10] == b"\x00\x00"  # no tag byte between header and error code
    assert correlation_id == 12
    assert [(k["api_key"], k["min_version"], k["max_version"]) for k in body["api_keys"]] == [
        (key, r.min_version, r.max_version) for key, r in sorted(API_VERSIONS.items())
    ]


def _plain_frame(api_key: int, version: int, correlation_id: int, body: dict) -> bytes:
    """The frame as built before the one-buffer encoding: header and body encoded apart, then joined."""
    from protocol.api_versions import response_header_version
    from protocol.codec import encode_response as encode_body

    head = struct.pack(">i", correlation_id) + (b"\x00" if response_header_version(api_key, version) >= 1 else b"")
    payload = head + encode_body(api_key, version, body)
    return struct.pack(">i", len(payload)) + payload


@pytest.mark.parametrize("version", [7, 11])
def test_a_fetch_answer_built_in_one_buffer_is_the_plain_frame(version: int) -> None:
    """encode_response writes the frame in one buffer (its size last, the records copied once): the bytes are those
    of the header and body encoded apart and joined, for a Fetch answer carrying records and an empty one."""
    records = bytes(range(256)) * 4096  # a megabyte
    partition = {"partition_index": 0, "error_code": 0, "high_watermark": 7, "last_stable_offset": 7,
                 "log_start_offset": 0, "aborted_transactions": [], "records": records}
    if version >= 11:
        partition["preferred_read_replica"] = -1
    body = {"throttle_time_ms": 0, "error_code": 0, "session_id": 5, "responses": [
        {"topic": "orders", "partitions": [partition, {**partition, "partition_index": 1, "records": b""}]}]}
    framed = encode_response(1, version, 42, body)
    assert framed == _plain_frame(1, version, 42, body)
    assert len(framed) > len(records)
    assert decode_response(1, version, bytes(framed[4:]))[1]["responses"][0]["partitions"][0]["records"] == records
    for key, version, value in [(3, 9, {}), (18, 3, api_versions_body()), (3, 0, {})]:
        assert encode_response(key, version, 9, value) == _plain_frame(key, version, 9, value)


def test_newer_api_versions_request_is_answered_with_a_v0_unsupported_version_response() -> None:
    # an ApiVersions v4 request (a 3.x client): header v2, body a compact string pair
    payload = b"\x00\x12\x00\x04\x00\x00\x00\x2a\x00\x03cli\x00" + b"\x08kactors\x040.1\x00"
    with pytest.raises(UnsupportedVersionError) as e:
        decode_request(payload)
    assert e.value.header == RequestHeader(18, 4, 42, "cli")
    response = api_versions_unsupported_response(e.value.header.correlation_id)
    # v0 response: correlation id, error 35, one key: ApiVersions 0-3
    assert response == struct.pack(">iihihhh", 16, 42, UNSUPPORTED_VERSION, 1, 18, 0, 3)


def test_unknown_api_key_and_out_of_range_versions_raise_typed_errors() -> None:
    with pytest.raises(UnknownApiKeyError):
        decode_request(b"\x00\x32\x00\x00\x00\x00\x00\x01\x00\x00")  # key 50: 2.7's DescribeUserScramCredentials
    with pytest.raises(UnsupportedVersionError) as e:
        decode_request(b"\x00\x00\x00\x09\x00\x00\x00\x01\x00\x00")  # Produce v9
    assert e.value.error_code == UNSUPPORTED_VERSION
    with pytest.raises(MalformedError):
        decode_request_header(b"\x00\x03\xff\xff\x00\x00\x00\x01\x00\x00")


def test_invalid_utf8_and_nulls_in_non_nullable_fields_are_malformed() -> None:
    # Metadata v1, one topic whose name is the invalid UTF-8 byte 0xff
    with pytest.raises(MalformedError, match="UTF-8"):
        decode_request(b"\x00\x03\x00\x01\x00\x00\x00\x07\x00\x01c" + b"\x00\x00\x00\x01\x00\x01\xff")
    # the same in a flexible version (Metadata v9: compact string)
    with pytest.raises(MalformedError, match="UTF-8"):
        decode_request(b"\x00\x03\x00\x09\x00\x00\x00\x07\x00\x01c\x00" + b"\x02\x02\xff\x00\x01\x00\x00\x00")
    # a client id that is not UTF-8
    with pytest.raises(MalformedError, match="UTF-8"):
        decode_request(b"\x00\x03\x00\x01\x00\x00\x00\x07\x00\x01\xff" + b"\x00\x00\x00\x00")
    # a null topic name (length -1) where 2.6 does not allow one
    with pytest.raises(MalformedError, match="non-nullable field MetadataRequestTopic.name"):
        decode_request(b"\x00\x03\x00\x01\x00\x00\x00\x07\x00\x01c" + b"\x00\x00\x00\x01\xff\xff")
    # an array count far beyond the bytes left is refused before anything is allocated
    with pytest.raises(TruncatedError, match="cannot fit"):
        decode_request(b"\x00\x03\x00\x01\x00\x00\x00\x07\x00\x01c" + b"\x7f\xff\xff\xff\x00\x00")


def test_bodies_decode_from_bytearray_and_memoryview_too() -> None:
    frame = encode_request(RequestHeader(3, 9, 8, "cli"), {"topics": [{"name": "orders"}]})[4:]
    expected = decode_request(frame)
    assert decode_request(bytearray(frame)) == expected
    assert decode_request(memoryview(frame)) == expected
    assert isinstance(decode_request(memoryview(frame)).body["topics"][0]["name"], str)


def test_truncated_request_raises_truncated_error() -> None:
    frame = encode_request(RequestHeader(3, 1, 7, "cli"), METADATA_V1)[4:]
    for cut in range(len(frame)):
        with pytest.raises(TruncatedError):
            decode_request(frame[:cut])


def test_frame_decoder_reassembles_partial_reads() -> None:
    frames = [encode_request(RequestHeader(3, 1, i, "c"), METADATA_V1) for i in range(3)]
    stream = b"".join(frames)
    for chunk in (1, 3, 7, len(stream)):
        decoder = FrameDecoder()
        out: list[bytes] = []
        for i in range(0, len(stream), chunk):
            out += decoder.feed(stream[i : i + chunk])
        assert out == [f[4:] for f in frames]
        assert decoder.pending == 0


def test_frame_decoder_rejects_oversized_and_negative_sizes() -> None:
    assert FrameDecoder().max_bytes == SOCKET_REQUEST_MAX_BYTES == 104857600
    with pytest.raises(FrameTooLargeError, match="size = 104857601 larger than 104857600"):
        FrameDecoder().feed(struct.pack(">i", SOCKET_REQUEST_MAX_BYTES + 1))
    with pytest.raises(FrameTooLargeError, match="size = 101 larger than 100"):
        FrameDecoder(max_bytes=100).feed(struct.pack(">i", 101) + b"x" * 101)
    with pytest.raises(FrameTooLargeError, match=r"size = -1\)"):
        FrameDecoder().feed(b"\xff\xff\xff\xff")
    # exactly the limit is accepted
    assert FrameDecoder(max_bytes=3).feed(b"\x00\x00\x00\x03abc") == [b"abc"]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_decode_to_a_request_or_a_protocol_error(data: bytes) -> None:
    try:
        decode_request(data)
    except ProtocolError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(API_VERSIONS)), st.data())
def test_random_bodies_after_a_valid_header_never_crash(api_key: int, data: st.DataObject) -> None:
    r = API_VERSIONS[api_key]
    version = data.draw(st.integers(r.min_version, r.max_version))
    header = encode_request(RequestHeader(api_key, version, 1, "c"), {})[4:]
    tail = data.draw(st.binary(max_size=120))
    try:
        decode_request(header + tail)
    except ProtocolError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(API_VERSIONS)), st.data())
def test_random_response_bytes_never_crash(api_key: int, data: st.DataObject) -> None:
    r = API_VERSIONS[api_key]
    version = data.draw(st.integers(r.min_version, r.max_version))
    try:
        decode_response(api_key, version, data.draw(st.binary(max_size=120)))
    except ProtocolError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=6), st.data())
def test_frame_decoder_splits_any_chunking_into_the_same_frames(payloads: list[bytes], data: st.DataObject) -> None:
    stream = b"".join(struct.pack(">i", len(x)) + x for x in payloads)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    decoder = FrameDecoder()
    out: list[bytes] = []
    last = 0
    for c in [*cuts, len(stream)]:
        out += decoder.feed(stream[last:c])
        last = c
    assert out == payloads
