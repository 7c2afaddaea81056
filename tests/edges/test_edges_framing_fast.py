"""`encode_outbound` keeps each (api key, version, client id)'s request header bytes after the correlation id and
joins the frame itself: the frame is byte for byte `protocol.framing.encode_request`'s (or, for an API that writes its
own body, `encode_request_frame`'s), whatever the correlation id and client id, on a kept header or a fresh one."""

from __future__ import annotations

import pytest

import core.api  # noqa: F401 - every unit registered
from core.api import fetch
from core.api.registry import ApiSpec, units
from edges.net import framing
from messages.common import TopicPartition
from messages.replication import FetchPartition, FetchRequest
from protocol.framing import RequestHeader, decode_request, encode_request, encode_request_frame

FOLLOWER = FetchRequest(2, (FetchPartition(TopicPartition("t", 0), 10, 3, 0, 1048576),), 500, 1, 10485760, 0, 5, 3,
                        fetcher_id=1)
CONSUMER = FetchRequest(-1, (FetchPartition(TopicPartition("t", 1), 7),), rack_id="r1")


def _plain(spec: ApiSpec, body: object, corr: int, client_id: str) -> bytes:
    """encode_outbound as it was: a RequestHeader, then encode_request (or the API's own body bytes)."""
    assert spec.send_version is not None and spec.request_to_wire is not None
    cid = spec.client_id_of(body) if spec.client_id_of is not None else None
    header = RequestHeader(spec.api_key, spec.send_version, corr, cid or client_id)
    if spec.request_body_bytes is not None:
        return encode_request_frame(header, spec.request_body_bytes(body))
    return encode_request(header, spec.request_to_wire(body))


@pytest.mark.parametrize("body", [FOLLOWER, CONSUMER])
@pytest.mark.parametrize("client_id", ["broker-0", "", "ü" * 40])
def test_the_frame_is_encode_requests(body: FetchRequest, client_id: str) -> None:
    spec = framing.outbound_spec(body)
    for corr in (0, 1, 2**31 - 1, -(2**31), 7):  # the second time round from the kept header bytes
        frame = framing.encode_outbound(spec, body, corr, client_id)
        assert frame == _plain(spec, body, corr, client_id)
        request = decode_request(frame[4:])
        assert request.header.correlation_id == corr


def test_every_sending_spec_has_the_same_header_as_encode_request_header() -> None:
    for spec in units():
        if spec.send_version is None or spec.body_codec is not None:
            continue
        for client_id in ("broker-1", "", "x" * 300):
            head = framing._header_tail(spec.api_key, spec.send_version, client_id)
            full = encode_request(RequestHeader(spec.api_key, spec.send_version, 9, client_id), {})
            assert full[4 + 8:4 + 8 + len(head)] == head


def test_the_kept_headers_are_bounded() -> None:
    framing._header_tail.cache_clear()
    for i in range(framing.HEADER_TAILS_MAX + 10):
        framing._header_tail(fetch.SPEC.api_key, fetch.SEND_VERSION, f"c{i}")
    assert framing._header_tail.cache_info().currsize <= framing.HEADER_TAILS_MAX
