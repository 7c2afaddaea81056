"""FindCoordinator (v0-3) converters, both ways through protocol's codec."""

from __future__ import annotations

import pytest

import core.api  # noqa: F401 - registers every spec
from core.api.registry import RequestContext, Route, spec_for_key
from messages.common import Errors
from messages.group import FindCoordinatorRequest, FindCoordinatorResponse
from protocol.codec import decode_request, decode_response, encode_request, encode_response


@pytest.mark.parametrize("version", range(4))
def test_find_coordinator(version):
    spec = spec_for_key(10)
    assert spec is not None and spec.route == Route.GROUP_COORDINATOR
    body = {"key": "g", "key_type": 1} if version >= 1 else {"key": "g"}
    decoded, _ = decode_request(10, version, encode_request(10, version, body))
    assert spec.request_from_wire(version, decoded, RequestContext(version, listener="L")) == FindCoordinatorRequest(
        "g", 1 if version >= 1 else 0, "L")

    def out(r):
        return decode_response(10, version, encode_response(10, version, spec.response_to_wire(version, r)))[0]

    ok = out(FindCoordinatorResponse(Errors.NONE, 2, "127.0.0.1", 9092))
    assert (ok["error_code"], ok["node_id"], ok["host"], ok["port"], ok.get("error_message")) == (
        0, 2, "127.0.0.1", 9092, None)
    bad = out(FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE))
    assert (bad["error_code"], bad["node_id"], bad["host"], bad["port"]) == (15, -1, "", -1)
    assert bad.get("error_message") == ("The coordinator is not available." if version >= 1 else None)
