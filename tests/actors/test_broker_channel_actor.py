"""BrokerChannelActor (Kafka's RequestSendThread, ControllerChannelManager): one request in flight, FIFO behind it,
resent after 100 ms when the connection fails or request.timeout.ms passes without an answer, until it is answered
or the broker is removed. The network and timer edges are sinks here: the test plays them, on a ManualClock."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from actors.broker_channel_actor import RETRY_BACKOFF_MS, BrokerChannelActor
from core.effects import SendRequest
from messages.channel import ChannelResponse, ChannelStart, ChannelStop
from messages.common import Broker, EndPoint, Errors, TopicPartition
from messages.net import NetClose, NetResponse, NetSend, NetSendFailed
from messages.observability import ChannelRequestCompleted
from messages.requests import (
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    StopReplicaPartitionState,
    StopReplicaRequest,
    StopReplicaResponse,
    UpdateMetadataRequest,
    UpdateMetadataResponse,
)
from messages.runtime import CancelTimer, ScheduleTimer, TimerFired
from tests.support.actors import ActorTestbed, Delivered

CHANNEL = "channel-2"
BROKER = Broker(2, (EndPoint("127.0.0.1", 19092),))
TIMEOUT_MS = 5_000.0
T0 = 1_000.0

LAI = LeaderAndIsrRequest(1, 3, 7, (), ())
UM = UpdateMetadataRequest(1, 3, 7, (), ())
STOP = StopReplicaRequest(1, 3, 7, (StopReplicaPartitionState(TopicPartition("t", 0), 4, True),))


def send(request: object, request_id: int) -> NetSend:
    """The NetSend of one attempt: to the broker's replica manager, answers to the channel."""
    return NetSend("127.0.0.1", 19092, "replica-manager", request, request_id, CHANNEL)


def out(caused: list[Delivered]) -> list[tuple[str, object]]:
    """What the channel sent, in order: (receiver, body)."""
    return [(d.receiver, d.body) for d in caused if d.sender == CHANNEL]


@pytest.fixture
def bed() -> Iterator[ActorTestbed]:
    bed = ActorTestbed("controller-1", start_ms=T0, sinks=("net", "timer", "controller", "metrics"))
    bed.rt.spawn(BrokerChannelActor, CHANNEL)
    bed.deliver(CHANNEL, ChannelStart(BROKER, "controller", TIMEOUT_MS), "controller")
    try:
        yield bed
    finally:
        bed.shutdown()


def test_one_request_in_flight_the_rest_queued_in_order(bed: ActorTestbed) -> None:
    assert out(bed.deliver(CHANNEL, SendRequest(2, LAI), "controller", at_ms=T0)) == [
        ("net", send(LAI, 1)), ("timer", ScheduleTimer("request-timeout", TIMEOUT_MS))]
    assert out(bed.deliver(CHANNEL, SendRequest(2, UM), "controller", at_ms=T0 + 1)) == []  # queued behind it
    assert bed.rt.instances[CHANNEL].queue_size == 1

    response = LeaderAndIsrResponse(Errors.NONE, ())
    assert out(bed.deliver(CHANNEL, NetResponse(1, response), "net", at_ms=T0 + 40)) == [
        ("timer", CancelTimer("request-timeout")),
        ("controller", ChannelResponse(2, None, response)),  # only a StopReplica answer carries its request
        ("metrics", ChannelRequestCompleted(2, "LeaderAndIsrRequest", T0, T0, T0 + 40, 1, "NONE", 1)),
        ("net", send(UM, 2)), ("timer", ScheduleTimer("request-timeout", TIMEOUT_MS))]

    assert out(bed.deliver(CHANNEL, NetResponse(2, UpdateMetadataResponse(Errors.NONE)), "net", at_ms=T0 + 50)) == [
        ("timer", CancelTimer("request-timeout")),
        ("controller", ChannelResponse(2, None, UpdateMetadataResponse(Errors.NONE))),
        # queue time: enqueued at T0+1, sent at T0+40 when the first was answered
        ("metrics", ChannelRequestCompleted(2, "UpdateMetadataRequest", T0 + 1, T0 + 40, T0 + 50, 1, "NONE", 0))]
    assert bed.rt.instances[CHANNEL].in_flight is None


def test_a_failed_connection_is_retried_after_the_backoff_with_the_same_request(bed: ActorTestbed) -> None:
    bed.deliver(CHANNEL, SendRequest(2, LAI), "controller", at_ms=T0)
    assert out(bed.deliver(CHANNEL, NetSendFailed(1, "connection refused"), "net", at_ms=T0 + 3)) == [
        ("timer", CancelTimer("request-timeout")), ("timer", ScheduleTimer("retry", RETRY_BACKOFF_MS))]
    assert RETRY_BACKOFF_MS == 100.0  # Kafka's RequestSendThread backs off a hard-coded 100 ms

    # the timer edge fires 100 ms later: the same request again, under a new request id
    assert out(bed.deliver(CHANNEL, TimerFired("retry"), "timer", at_ms=T0 + 103)) == [
        ("net", send(LAI, 2)), ("timer", ScheduleTimer("request-timeout", TIMEOUT_MS))]
    # a failure or answer for the abandoned attempt changes nothing
    assert out(bed.deliver(CHANNEL, NetSendFailed(1, "late"), "net", at_ms=T0 + 104)) == []
    assert out(bed.deliver(CHANNEL, NetResponse(1, LeaderAndIsrResponse(Errors.NONE, ())), "net")) == []

    fails_again = bed.deliver(CHANNEL, NetSendFailed(2, "connection refused"), "net", at_ms=T0 + 110)
    assert out(fails_again) == [("timer", CancelTimer("request-timeout")), ("timer", ScheduleTimer("retry", 100.0))]
    assert out(bed.deliver(CHANNEL, TimerFired("retry"), "timer", at_ms=T0 + 210)) == [
        ("net", send(LAI, 3)), ("timer", ScheduleTimer("request-timeout", TIMEOUT_MS))]

    caused = bed.deliver(CHANNEL, NetResponse(3, LeaderAndIsrResponse(Errors.NONE, ())), "net", at_ms=T0 + 230)
    # sent_ms is the first attempt's: latency covers the retries; attempts counts them
    assert [b for r, b in out(caused) if r == "metrics"] == [
        ChannelRequestCompleted(2, "LeaderAndIsrRequest", T0, T0, T0 + 230, 3, "NONE", 0)]


def test_no_answer_within_the_request_timeout_closes_the_connection_and_resends(bed: ActorTestbed) -> None:
    bed.deliver(CHANNEL, SendRequest(2, STOP), "controller", at_ms=T0)
    # Kafka's NetworkClient disconnects on request timeout; the send thread then sends the same request again
    assert out(bed.deliver(CHANNEL, TimerFired("request-timeout"), "timer", at_ms=T0 + TIMEOUT_MS)) == [
        ("net", NetClose("127.0.0.1", 19092)), ("timer", ScheduleTimer("retry", RETRY_BACKOFF_MS))]
    # closing the connection fails the pending attempt: the backoff starts again from that failure
    assert out(bed.deliver(CHANNEL, NetSendFailed(1, "closed"), "net", at_ms=T0 + TIMEOUT_MS)) == [
        ("timer", CancelTimer("request-timeout")), ("timer", ScheduleTimer("retry", RETRY_BACKOFF_MS))]
    assert out(bed.deliver(CHANNEL, TimerFired("retry"), "timer", at_ms=T0 + TIMEOUT_MS + 100)) == [
        ("net", send(STOP, 2)), ("timer", ScheduleTimer("request-timeout", TIMEOUT_MS))]

    answer = StopReplicaResponse(Errors.NONE, ())
    caused = out(bed.deliver(CHANNEL, NetResponse(2, answer), "net", at_ms=T0 + TIMEOUT_MS + 150))
    assert caused[1] == ("controller", ChannelResponse(2, STOP, answer))  # StopReplica's callback reads its request
    assert caused[2] == ("metrics", ChannelRequestCompleted(
        2, "StopReplicaRequest", T0, T0, T0 + TIMEOUT_MS + 150, 2, "NONE", 0))


def test_an_error_answer_is_counted_under_its_name(bed: ActorTestbed) -> None:
    bed.deliver(CHANNEL, SendRequest(2, LAI), "controller", at_ms=T0)
    answer = LeaderAndIsrResponse(Errors.STALE_CONTROLLER_EPOCH, ())
    caused = out(bed.deliver(CHANNEL, NetResponse(1, answer), "net", at_ms=T0 + 5))
    assert ("metrics", ChannelRequestCompleted(2, "LeaderAndIsrRequest", T0, T0, T0 + 5, 1,
                                               "STALE_CONTROLLER_EPOCH", 0)) in caused
    assert ("controller", ChannelResponse(2, None, answer)) in caused


def test_removing_the_broker_drops_the_queue_and_the_in_flight_request(bed: ActorTestbed) -> None:
    bed.deliver(CHANNEL, SendRequest(2, LAI), "controller", at_ms=T0)
    bed.deliver(CHANNEL, SendRequest(2, UM), "controller", at_ms=T0 + 1)
    bed.deliver(CHANNEL, NetSendFailed(1, "connection refused"), "net", at_ms=T0 + 2)
    assert out(bed.deliver(CHANNEL, ChannelStop(), "controller", at_ms=T0 + 20)) == [
        ("timer", CancelTimer("retry")), ("timer", CancelTimer("request-timeout")),
        # the in-flight request is reported abandoned (the UpdateMetadata queued behind it still counted), the queued
        # one is dropped unreported, as Kafka's removeBroker drops its queue
        ("metrics", ChannelRequestCompleted(2, "LeaderAndIsrRequest", T0, T0, T0 + 20, 1, "BROKER_REMOVED", 1)),
        ("net", NetClose("127.0.0.1", 19092))]
    # stopped: a retry timer that fired anyway, a late answer and new requests send nothing
    assert out(bed.deliver(CHANNEL, TimerFired("retry"), "timer")) == []
    assert out(bed.deliver(CHANNEL, NetResponse(1, LeaderAndIsrResponse(Errors.NONE, ())), "net")) == []
    assert out(bed.deliver(CHANNEL, SendRequest(2, UM), "controller")) == []
    assert bed.rt.instances[CHANNEL].queue_size == 0


def test_a_request_waits_for_the_channel_to_know_its_broker_then_goes() -> None:
    bed = ActorTestbed("controller-1", start_ms=T0, sinks=("net", "timer", "controller", "metrics"))
    try:
        bed.rt.spawn(BrokerChannelActor, CHANNEL)
        assert out(bed.deliver(CHANNEL, SendRequest(2, LAI), "controller")) == []
        assert bed.rt.instances[CHANNEL].queue_size == 1
        assert out(bed.deliver(CHANNEL, ChannelStart(BROKER, "controller", TIMEOUT_MS), "controller")) == [
            ("net", send(LAI, 1)), ("timer", ScheduleTimer("request-timeout", TIMEOUT_MS))]
    finally:
        bed.shutdown()
