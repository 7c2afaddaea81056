"""The client quota layer under the dispatch (edges/net/inbound.py): each answer measured by the broker's client
quotas (edges/client_quotas.py) and its throttle_time_ms set (KafkaApis.sendResponseMaybeThrottle), its connection
muted for the throttle (KIP-219's ThrottledChannel: the answer is written at once, the next request read once the
throttle is over). Whether a connection is read is the dispatch's ``Inbound.mute`` alone; this layer sets the
connection's ``throttle`` and keeps the throttled connections for the sweep that reads them again.

With no client quotas (None) an answer is only encoded: the layer costs the plaintext path no call of its own."""

from __future__ import annotations

import logging
import time
from typing import Any

from edges.client_quotas import ClientQuotas
from edges.net.answers import InFlight, response_frame, silent_frame
from edges.net.framing import encode_inbound_response
from edges.net.selector import Conn
from messages.quota import ClientQuotaConfigChanged

log = logging.getLogger("kactor.edges.transport")


def now_ms() -> float:
    """The clock of the throttles (core.quota.enforcement.ChannelMute's ms)."""
    return time.monotonic() * 1000.0


class QuotaLayer:
    """KafkaApis.sendResponseMaybeThrottle and the throttled channels of one process's listeners. ``frame`` is
    called from whichever thread answers; ``throttle``, ``unthrottled`` and ``forget`` on the I/O thread only."""

    __slots__ = ("name", "client_quotas", "_throttled")

    def __init__(self, name: str, client_quotas: ClientQuotas | None) -> None:
        self.name = name
        # Kafka's client quotas, measured and enforced on the answers (None: no quotas, as before any is set)
        self.client_quotas = client_quotas
        # the connections a throttle mutes, for the sweep that reads them again once it is over (ThrottledChannel's
        # EndThrottlingResponse)
        self._throttled: dict[int, Conn] = {}

    def update(self, change: ClientQuotaConfigChanged) -> None:
        """A quota entity's new configuration (the "net" actor's ClientQuotaConfigChanged)."""
        if self.client_quotas is not None:
            self.client_quotas.update(change)

    def frame(self, inflight: InFlight, response: Any) -> tuple[bytes | None, int]:
        """The answer's frame (as answers.silent_frame / response_frame) with the client quotas applied: its
        throttle_time_ms set, and the time to mute the connection for (core/quota/enforcement.py)."""
        quotas, principal = self.client_quotas, inflight.principal
        if inflight.silent:
            frame = silent_frame(self.name, inflight, response)
            if quotas is None or principal is None or frame is None:
                return frame, 0
            return frame, quotas.silent(inflight.spec.api_key, inflight.client_id, inflight.size, inflight.body,
                                        inflight.net_ns, principal)
        if quotas is None or principal is None:
            return response_frame(self.name, inflight, response), 0
        try:
            wire = inflight.spec.response_to_wire(inflight.version, response)
            return quotas.answer(inflight.spec.api_key, inflight.client_id, wire, inflight.size, inflight.body,
                                 inflight.net_ns, lambda body: encode_inbound_response(
                                     inflight.spec, inflight.version, inflight.correlation_id, body), principal)
        except Exception:  # noqa: BLE001 - our own bug: the connection is closed rather than left waiting
            log.exception("%s: cannot encode a %s v%d response", self.name, inflight.spec.name, inflight.version)
            return None, 0

    def throttle(self, conn: Conn, throttle_ms: int) -> None:
        """Mute ``conn`` for a throttle from now, its answer being queued already (ThrottledChannel's
        StartThrottlingResponse); overlapping throttles extend the mute. The connection's interest is updated by
        whoever writes that answer (``Inbound.serve``)."""
        if throttle_ms <= 0 or conn.closed:
            return
        conn.throttle = conn.throttle.throttled(now_ms(), throttle_ms)
        self._throttled[conn.conn_id] = conn

    def unthrottled(self, at_ms: float) -> list[Conn]:
        """The throttled connections whose throttle is over at ``at_ms``, taken out (EndThrottlingResponse): the
        caller reads them again."""
        if not self._throttled:
            return []
        over = [conn for conn in self._throttled.values() if not conn.throttle.muted(at_ms)]
        for conn in over:
            del self._throttled[conn.conn_id]
        return over

    def forget(self, conn: Conn) -> None:
        """``conn`` was closed: it is not read again."""
        self._throttled.pop(conn.conn_id, None)
