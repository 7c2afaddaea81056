"""UpdateMetadata's body reused across one batch's brokers (`update_metadata.request_body_bytes`) is, for every
receiver, the body the plain path encodes (request_to_wire and protocol's v6 encoder), and a frame made with it is
the plain frame; anything the controller changed between two requests is encoded afresh."""

from __future__ import annotations

import attrs

from core.api import update_metadata
from core.controller.request_batch import ControllerBrokerRequestBatch
from edges.net.framing import encode_outbound
from messages.common import TopicPartition
from messages.requests import UpdateMetadataRequest
from protocol.api_versions import ApiKeys
from protocol.framing import RequestHeader, decode_request, encode_request
from tests.core.controller.test_controller_request_batch import CONTROLLER_ID, _context, _send
from tests.support.controller import sent


def _batch_requests() -> list[UpdateMetadataRequest]:
    """One batch's UpdateMetadata to brokers 1, 2 and 3 (each with its own broker epoch) for three partitions."""
    ctx = _context()
    batch = ControllerBrokerRequestBatch(CONTROLLER_ID, ctx)
    batch.new_batch()
    batch.add_update_metadata_request_for_brokers(
        [1, 2, 3], [TopicPartition("foo", 0), TopicPartition("foo", 1), TopicPartition("bar", 1)])
    # the fixture's brokers share epoch 1: each given its own, as brokers registered at different times have
    return [attrs.evolve(s.request, broker_epoch=4_294_967_296 * i + 17)
            for i, s in enumerate(sent(_send(batch), UpdateMetadataRequest))]


def _plain(request: UpdateMetadataRequest) -> bytes:
    frame = encode_request(RequestHeader(ApiKeys.UPDATE_METADATA, update_metadata.SEND_VERSION, 7, "controller"),
                           update_metadata.request_to_wire(request))
    return frame[4 + 2 + 2 + 4 + 2 + len("controller") + 1:]  # after the size and the v2 header


def test_one_batchs_bodies_are_the_plain_bodies_for_every_broker() -> None:
    requests = _batch_requests()
    assert len(requests) == 3 and len({r.broker_epoch for r in requests}) == 3
    assert all(r.partition_states is requests[0].partition_states for r in requests)  # one tuple, shared
    update_metadata._last_body = None
    bodies = [update_metadata.request_body_bytes(r) for r in requests]
    assert bodies == [_plain(r) for r in requests]
    assert update_metadata._last_body is not None and update_metadata._last_body[4] == bodies[0]  # encoded once
    for r in requests:  # the frame the transport sends, read back: the receiver's epoch, the batch's states
        frame = encode_outbound(update_metadata.SPEC, r, 7, "controller")
        assert frame == encode_request(RequestHeader(ApiKeys.UPDATE_METADATA, update_metadata.SEND_VERSION, 7,
                                                     "controller"), update_metadata.request_to_wire(r))
        body = decode_request(frame[4:]).body
        assert body["broker_epoch"] == r.broker_epoch
        assert update_metadata.request_from_wire(6, body).partition_states == r.partition_states


def test_what_differs_from_the_last_body_is_encoded_afresh() -> None:
    first = _batch_requests()[0]
    update_metadata._last_body = None
    update_metadata.request_body_bytes(first)
    changed = [
        attrs.evolve(first, controller_epoch=first.controller_epoch + 1, broker_epoch=first.broker_epoch + 5),
        attrs.evolve(first, controller_id=first.controller_id + 1),
        attrs.evolve(first, partition_states=first.partition_states[:1]),
        attrs.evolve(first, partition_states=tuple(first.partition_states)[::-1]),
        attrs.evolve(first, live_brokers=first.live_brokers[:1]),
        # equal states in another tuple: encoded again (found by identity), the same bytes
        attrs.evolve(first, partition_states=tuple(list(first.partition_states)), broker_epoch=-1),
    ]
    for r in changed:
        assert update_metadata.request_body_bytes(r) == _plain(r)
        update_metadata.request_body_bytes(first)  # back to the batch's body
        assert update_metadata.request_body_bytes(first) == _plain(first)
