"""BrokerChannelActor: one per live broker, replacing Kafka's RequestSendThread (ControllerChannelManager §7).

A FIFO of requests with one in flight. A request is retried every 100 ms (Kafka's hard-coded backoff) after a
connection failure or after request.timeout.ms without an answer, until it is answered or the broker is removed.
Nothing here waits: the network edge answers with NetResponse / NetSendFailed, the timer edge with TimerFired, so
a dead or slow broker delays only its own channel.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any

import attrs

from actors import names
from actors.base import KActor
from core.effects import SendRequest
from messages.channel import ChannelResponse, ChannelStart, ChannelStop
from messages.common import Broker, EndPoint
from messages.net import NetClose, NetResponse, NetSend, NetSendFailed
from messages.observability import ChannelRequestCompleted
from messages.requests import StopReplicaRequest
from messages.runtime import TimerFired

RETRY_BACKOFF_MS = 100.0

log = logging.getLogger("kactor.channel")


@attrs.define
class _Queued:
    request: Any
    enqueued_ms: float
    sent_ms: float = 0.0
    attempts: int = 0


class BrokerChannelActor(KActor):
    def on_start(self) -> None:
        self.broker: Broker | None = None
        self.controller = names.CONTROLLER
        self.timeout_ms = 30000.0
        self.queue: deque[_Queued] = deque()
        self.in_flight: _Queued | None = None
        self.request_id = 0
        self.stopped = False
        self.endpoint: EndPoint | None = None

    @property
    def queue_size(self) -> int:
        """Kafka's QueueSize gauge: requests waiting, not counting the one in flight."""
        return len(self.queue)

    def on_ChannelStart(self, msg: ChannelStart, sender: str) -> None:
        self.broker, self.controller, self.timeout_ms = msg.broker, msg.controller, msg.request_timeout_ms
        # ControllerChannelManager.addNewBroker: broker.node(config.interBrokerListenerName)
        self.endpoint = next((ep for ep in msg.broker.endpoints if ep.listener_name == msg.listener_name), None)
        if self.endpoint is None:
            log.error("End point with listener name %s not found for broker %d: requests to it stay queued",
                      msg.listener_name, msg.broker.id)
        self._maybe_send()  # a request that arrived before the channel knew its broker waits for no other

    def on_SendRequest(self, msg: SendRequest, sender: str) -> None:
        if self.stopped:
            return
        self.queue.append(_Queued(msg.request, self.now_ms()))
        self._maybe_send()

    def _maybe_send(self) -> None:
        if self.in_flight is not None or not self.queue or self.broker is None or self.endpoint is None:
            return
        self.in_flight = self.queue.popleft()
        self._send()

    def _send(self) -> None:
        assert self.in_flight is not None and self.broker is not None
        item = self.in_flight
        item.attempts += 1
        if item.attempts == 1:
            item.sent_ms = self.now_ms()
        self.request_id += 1
        ep = self.endpoint
        assert ep is not None
        self.post(names.NET, NetSend(ep.host, ep.port, names.REPLICA_MANAGER, item.request, self.request_id, self.name))
        self.schedule("request-timeout", self.timeout_ms)

    def on_NetResponse(self, msg: NetResponse, sender: str) -> None:
        if self.in_flight is None or msg.request_id != self.request_id or self.broker is None:
            return  # an answer to an attempt we already gave up on
        item, self.in_flight = self.in_flight, None
        self.cancel_timer("request-timeout")
        # Only StopReplica's callback reads its request (Kafka's closure over it); other responses go without theirs,
        # which the trace already holds twice (SendRequest, NetSend)
        request = item.request if isinstance(item.request, StopReplicaRequest) else None
        self.post(self.controller, ChannelResponse(self.broker.id, request, msg.body))
        self._completed(item, getattr(getattr(msg.body, "error", None), "name", "NONE"))
        self._maybe_send()

    def on_NetSendFailed(self, msg: NetSendFailed, sender: str) -> None:
        if self.in_flight is not None and msg.request_id == self.request_id:
            self.cancel_timer("request-timeout")
            self.schedule("retry", RETRY_BACKOFF_MS)

    def on_TimerFired(self, msg: TimerFired, sender: str) -> None:
        if self.in_flight is None or self.stopped:
            return
        if msg.key == "request-timeout":
            # Kafka's NetworkClient disconnects on request timeout; the send thread then resends the same request.
            if self.endpoint is not None:
                self.post(names.NET, NetClose(self.endpoint.host, self.endpoint.port))
            self.schedule("retry", RETRY_BACKOFF_MS)
        elif msg.key == "retry":
            self._send()

    def on_ChannelStop(self, msg: ChannelStop, sender: str) -> None:
        self.stopped = True
        self.cancel_timer("retry")
        self.cancel_timer("request-timeout")
        if self.in_flight is not None:
            self._completed(self.in_flight, "BROKER_REMOVED")
        self.in_flight = None
        self.queue.clear()
        if self.endpoint is not None:
            self.post(names.NET, NetClose(self.endpoint.host, self.endpoint.port))

    def _completed(self, item: _Queued, error: str) -> None:
        assert self.broker is not None
        self.post(names.METRICS, ChannelRequestCompleted(
            self.broker.id, type(item.request).__name__, item.enqueued_ms, item.sent_ms, self.now_ms(),
            item.attempts, error, self.queue_size))
