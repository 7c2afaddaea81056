"""ControlledShutdown (key 7): the request the kafka-server actor sends (v3) is Kafka's bytes; v0-2 read (broker
epoch -1 before v2); the controller's answer both ways at every version; routed to the controller."""

from __future__ import annotations

import pytest

from core.api import controlled_shutdown
from core.api.registry import Route
from messages.common import Errors, TopicPartition
from messages.requests import ControlledShutdownRequest, ControlledShutdownResponse
from tests.protocol.wire_by_hand import TAGS, arr, carr, cstr, i16, i32, i64, string
from tests.support.api_wire import request_through_wire, response_through_wire


def test_v3_request_bytes_and_back() -> None:
    req = ControlledShutdownRequest(2, 4294967301)
    data, decoded = request_through_wire(7, controlled_shutdown.SEND_VERSION, controlled_shutdown.request_to_wire(req))
    assert data == i32(2) + i64(4294967301) + TAGS
    assert controlled_shutdown.request_from_wire(3, decoded) == req


@pytest.mark.parametrize("version, epoch", [(0, -1), (1, -1), (2, 40)])
def test_older_versions(version: int, epoch: int) -> None:
    body = {"broker_id": 2} | ({"broker_epoch": 40} if version >= 2 else {})
    data, decoded = request_through_wire(7, version, body)
    assert data == i32(2) + (i64(40) if version >= 2 else b"")
    assert controlled_shutdown.request_from_wire(version, decoded) == ControlledShutdownRequest(2, epoch)


@pytest.mark.parametrize("version", range(4))
def test_response_both_ways(version: int) -> None:
    resp = ControlledShutdownResponse(Errors.NONE, (TopicPartition("t", 1), TopicPartition("u", 0)))
    data, decoded = response_through_wire(7, version, controlled_shutdown.response_to_wire(version, resp))
    if version == 3:
        assert data == i16(0) + carr([cstr("t") + i32(1) + TAGS, cstr("u") + i32(0) + TAGS]) + TAGS
    else:
        assert data == i16(0) + arr([string("t") + i32(1), string("u") + i32(0)])
    assert controlled_shutdown.response_from_wire(version, decoded) == resp


def test_a_non_controllers_answer_and_the_error_response() -> None:
    """A broker that is not the controller answers STALE_CONTROLLER_EPOCH (2.6: ControllerMovedException)."""
    resp = ControlledShutdownResponse(Errors.STALE_CONTROLLER_EPOCH)
    _, decoded = response_through_wire(7, 3, controlled_shutdown.response_to_wire(3, resp))
    assert controlled_shutdown.response_from_wire(3, decoded) == resp
    err = controlled_shutdown.error_response(1, {"broker_id": 2}, Errors.UNKNOWN_SERVER_ERROR)
    assert controlled_shutdown.response_from_wire(1, response_through_wire(7, 1, err)[1]) == \
        ControlledShutdownResponse(Errors.UNKNOWN_SERVER_ERROR)


def test_routed_to_the_controller() -> None:
    assert controlled_shutdown.SPEC.route == Route.CONTROLLER
    assert controlled_shutdown.SPEC.request_type is ControlledShutdownRequest
