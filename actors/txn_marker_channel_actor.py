"""TransactionMarkerChannelActor ("txn-marker-channel-<broker>"): the transaction coordinator's channel to one broker,
the twin of the BrokerChannelActor (Kafka's TransactionMarkerChannelManager, whose sender thread drains one queue per
broker into one WriteTxnMarkers request with one request in flight per connection).

Markers queue here (the coordinator posts them as a WriteTxnMarkersRequest); when nothing is in flight, every queued
marker goes out as one WriteTxnMarkersRequest (messages/txn_markers.py, put on the wire by
core/api/write_txn_markers.py, the same spec the leader serves) to the broker's endpoint on the inter-broker
listener. Its answer, or its failure (no connection, no answer within
request.timeout.ms), goes back to the coordinator as TxnMarkersAnswered (failure: ``errors`` None), which decides
what to send again and to which leader (TransactionMarkerRequestCompletionHandler): this channel never retries by
itself, because the partition's leader may have moved.
"""

from __future__ import annotations

import logging

from actors import names
from actors.base import KActor
from messages.common import Broker, EndPoint
from messages.net import NetClose, NetResponse, NetSend, NetSendFailed
from messages.runtime import TimerFired
from messages.transaction import TxnMarkerChannelStart, TxnMarkersAnswered
from messages.txn_markers import TxnMarkerEntry, WriteTxnMarkersRequest, WriteTxnMarkersResponse

log = logging.getLogger("kactor.channel")
TIMEOUT_KEY = "request-timeout"


class TransactionMarkerChannelActor(KActor):
    def on_start(self) -> None:
        self.broker: Broker | None = None
        self.endpoint: EndPoint | None = None
        self.coordinator = names.TRANSACTION_COORDINATOR
        self.timeout_ms = 30000.0
        self.queue: list[TxnMarkerEntry] = []
        self.in_flight: tuple[TxnMarkerEntry, ...] | None = None
        self.request_id = 0

    def on_TxnMarkerChannelStart(self, msg: TxnMarkerChannelStart, sender: str) -> None:
        """The broker's registration as last read (its endpoint may have changed since the channel was made)."""
        self.broker, self.coordinator, self.timeout_ms = msg.broker, msg.coordinator, msg.request_timeout_ms
        endpoint = next((ep for ep in msg.broker.endpoints if ep.listener_name == msg.listener_name), None)
        if endpoint is None:
            log.error("End point with listener name %s not found for broker %d: its markers wait",
                      msg.listener_name, msg.broker.id)
        self.endpoint = endpoint

    def on_WriteTxnMarkersRequest(self, msg: WriteTxnMarkersRequest, sender: str) -> None:
        """The coordinator's markers for this broker: queued, and sent with the others queued by then."""
        self.queue.extend(msg.markers)
        self._maybe_send()

    def _maybe_send(self) -> None:
        if self.in_flight is not None or not self.queue or self.endpoint is None:
            return
        self.in_flight, self.queue = tuple(self.queue), []
        self.request_id += 1
        ep = self.endpoint
        self.post(names.NET, NetSend(ep.host, ep.port, names.REPLICA_MANAGER, WriteTxnMarkersRequest(self.in_flight),
                                     self.request_id, self.name))
        self.schedule(TIMEOUT_KEY, self.timeout_ms)

    def _answered(self, answer: WriteTxnMarkersResponse | None) -> None:
        assert self.in_flight is not None and self.broker is not None
        markers, self.in_flight = self.in_flight, None
        self.cancel_timer(TIMEOUT_KEY)
        self.post(self.coordinator, TxnMarkersAnswered(self.broker.id, markers,
                                                       None if answer is None else answer.results))
        self._maybe_send()

    def on_NetResponse(self, msg: NetResponse, sender: str) -> None:
        if self.in_flight is None or msg.request_id != self.request_id:
            return  # an answer to a request already given up on
        body = msg.body
        self._answered(body if isinstance(body, WriteTxnMarkersResponse) else None)

    def on_NetSendFailed(self, msg: NetSendFailed, sender: str) -> None:
        if self.in_flight is not None and msg.request_id == self.request_id:
            log.info("WriteTxnMarkers to broker %s failed: %s", self.broker.id if self.broker else "?", msg.error)
            self._answered(None)

    def on_TimerFired(self, msg: TimerFired, sender: str) -> None:
        if msg.key == TIMEOUT_KEY and self.in_flight is not None:
            # NetworkClient disconnects on a request timeout: the markers go back to the coordinator
            if self.endpoint is not None:
                self.post(names.NET, NetClose(self.endpoint.host, self.endpoint.port))
            self._answered(None)
