"""The client quotas of a broker's listeners: Kafka's QuotaManagers (core/quota/) as the network edge uses them.

The quota layer under the inbound dispatch (edges/net/quota_layer.py) asks `ClientQuotas.answer` once per answer,
in whichever thread answers (the actors' driver thread, an edge handler's thread, the I/O thread for ApiVersions),
hence the lock; the quota changes come from the config manager through the "net" actor (`update`). The decision and
its arithmetic are core's (`core.quota.enforcement.throttle_for_response`); this module only keeps the state, reads
the clock and measures an answer's size (a Fetch is measured as encoded, and answered empty when throttled).

A request is measured as the connection's principal (Kafka's ``request.session``): ``User:ANONYMOUS`` on a PLAINTEXT
listener, ``User:<name>`` once authenticated on a SASL one, the certificate's ``User:<DN>`` on an SSL one; its
sanitized name is the user the quotas of /config/users/<user>[/clients/<client-id>] are resolved by, so every user
has a sensor of its own under a /config/users/<default> quota (`core.quota.enforcement.quota_user`).

The request quota's "request time" is the time the network edge itself spends on a request — decoding and
converting it, encoding its answer — since kactor's request handling is spread over actors whose time is not
attributed to a request (docs/kafka-2.6-departures.md).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from core.quota.client_quota_manager import QUOTA_BYTES_PER_SECOND_DEFAULT, QuotaConfig, QuotaManagers
from core.quota.enforcement import (
    ANONYMOUS_PRINCIPAL,
    FETCH,
    PRODUCE,
    AnsweredRequest,
    Throttle,
    quota_user,
    throttle_for_response,
    throttled_fetch_body,
    with_throttle_time,
)
from messages.quota import ClientQuotaConfigChanged

Encode = Callable[[dict[str, Any]], bytes]


def _wall_ms() -> float:
    return time.time() * 1000.0


class ClientQuotas:
    """The broker's client quota managers (produce, fetch, request), safe to use from any thread."""

    def __init__(self, config: QuotaConfig | None = None,
                 consumer_default: int = QUOTA_BYTES_PER_SECOND_DEFAULT,
                 clock: Callable[[], float] = _wall_ms) -> None:
        self._quotas = QuotaManagers(config or QuotaConfig(), consumer_default)
        self._clock = clock
        self._lock = threading.Lock()

    @property
    def managers(self) -> QuotaManagers:
        return self._quotas

    @property
    def enabled(self) -> bool:
        """Whether any client quota was set since start-up (read without the lock: a flag that only turns on)."""
        q = self._quotas
        return q.produce.quotas_enabled or q.fetch.quotas_enabled or q.request.quotas_enabled

    def update(self, change: ClientQuotaConfigChanged) -> None:
        """QuotaConfigHandler.updateQuotaConfig for one entity."""
        with self._lock:
            self._quotas.update_quota_config(change)

    def answer(self, api_key: int, client_id: str, body: dict[str, Any], request_bytes: int,
               request_body: dict[str, Any], net_ns: int, encode: Encode,
               principal: str = ANONYMOUS_PRINCIPAL) -> tuple[bytes, int]:
        """The answer's frame with its throttle time in it, and that throttle time (what to mute the channel
        for). ``body`` is the answer's wire body, ``encode`` turns a body into the whole frame; ``principal`` is the
        connection's KafkaPrincipal (``User:<name>``), whose user the quotas are resolved by
        (ClientQuotaManager.maybeRecordAndGetThrottleTimeMs with the request's session)."""
        started = time.perf_counter_ns()
        frame = encode(body)
        if not self.enabled:  # no quota was ever set: nothing to measure (ClientQuotaManager.quotasEnabled)
            return frame, 0
        request = self._answered(api_key, client_id, request_bytes, request_body, len(frame),
                                 net_ns + time.perf_counter_ns() - started, principal)
        decision = self._decide(request)
        if decision.throttle_time_ms <= 0:
            return frame, 0
        if decision.empty_fetch:
            body = throttled_fetch_body(body)
        throttled = with_throttle_time(body, decision.throttle_time_ms)
        if throttled is not body:
            frame = encode(throttled)
        return frame, decision.throttle_time_ms

    def silent(self, api_key: int, client_id: str, request_bytes: int, request_body: dict[str, Any],
               net_ns: int, principal: str = ANONYMOUS_PRINCIPAL) -> int:
        """The throttle of a request that gets no answer (Produce with acks=0): its bytes still count."""
        if not self.enabled:
            return 0
        request = self._answered(api_key, client_id, request_bytes, request_body, 0, net_ns, principal)
        return self._decide(request).throttle_time_ms

    @staticmethod
    def _answered(api_key: int, client_id: str, request_bytes: int, request_body: dict[str, Any],
                  response_bytes: int, net_ns: int, principal: str) -> AnsweredRequest:
        acks = int(request_body.get("acks", -1)) if api_key == PRODUCE else -1
        from_follower = api_key == FETCH and int(request_body.get("replica_id", -1)) >= 0
        return AnsweredRequest(api_key, client_id, request_bytes, response_bytes, net_ns, from_follower, acks,
                               quota_user(principal))

    def _decide(self, request: AnsweredRequest) -> Throttle:
        with self._lock:
            return throttle_for_response(self._quotas, request, int(self._clock()))
