"""What KafkaApis does with the client quotas when it answers a request (Kafka 2.6.3, KIP-219): record the
request's bytes and time, answer AT ONCE with ``throttle_time_ms``, and mute the client's channel for that long.

`throttle_for_response` is the decision: the throttle time of one answer, and whether a consumer fetch is answered
empty instead (a throttled fetch returns no data and its bytes are taken back, ``unrecordQuotaSensor``). The network
edge applies it: the time goes into the answer's ``throttle_time_ms`` (every version that has the field), and
`ChannelMute` says until when the connection reads nothing more. Produce with acks=0 gets no answer, yet its channel is
muted for the produce quota as in 2.6 (``sendNoOpResponseExemptThrottle`` after ``quotas.produce.throttle``).

Which answers are measured:
- Produce: the request's size against the produce quota, its time against the request quota (not with acks=0);
- Fetch from a consumer: the answer's size against the fetch quota and its time against the request quota; a
  follower's fetch is exempt (replication has its own throttles);
- cluster actions (LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown, WriteTxnMarkers) are exempt
  (``sendResponseExemptThrottle``), as are kactor's private keys;
- every other request: its time against the request quota (``sendResponseMaybeThrottle``).
"""

from __future__ import annotations

import functools
from typing import Any

import attrs

from core.quota.client_quota_manager import ClientRequestQuotaManager, QuotaManagers, sanitize

PRODUCE = 0
FETCH = 1
CLUSTER_ACTIONS = frozenset({4, 5, 6, 7, 27})  # ApiKeys' clusterAction: answered with sendResponseExemptThrottle
PRIVATE_API_KEY_MIN = 10000
ANONYMOUS = "ANONYMOUS"  # KafkaPrincipal.ANONYMOUS: every client's principal on a PLAINTEXT listener
ANONYMOUS_PRINCIPAL = "User:ANONYMOUS"


@functools.lru_cache(maxsize=4096)
def quota_user(principal: str) -> str:
    """Session.sanitizedUser: the user a connection's quotas are resolved by, ``Sanitizer.sanitize`` of its
    KafkaPrincipal's name (``User:alice`` → ``alice``, an SSL certificate's ``User:CN=a,O=b`` → ``CN%3Da%2CO%3Db``,
    the znode name /config/users/<user> is written under). A principal is ``<type>:<name>``
    (SecurityUtils.parseKafkaPrincipal splits at the first colon). Cached: a connection's every answer asks."""
    _, sep, name = principal.partition(":")
    return sanitize(name if sep else principal)


@attrs.frozen(slots=True)
class AnsweredRequest:
    """What the quotas need of a request being answered: its api key, the client's (sanitized) user and client
    id, the request's size in bytes, the answer's (Fetch), the time spent on it (ns), whether a follower sent a
    Fetch, and Produce's acks."""

    api_key: int
    client_id: str
    request_bytes: int = 0
    response_bytes: int = 0
    request_time_ns: int = 0
    from_follower: bool = False
    acks: int = -1
    user: str = ANONYMOUS


@attrs.frozen(slots=True)
class Throttle:
    """The decision for one answer: ``throttle_time_ms`` to report and to mute the channel for (0: none);
    ``empty_fetch``: answer a consumer fetch with no data (FetchContext.getThrottledResponse)."""

    throttle_time_ms: int = 0
    empty_fetch: bool = False


NO_THROTTLE = Throttle()


def is_exempt(request: AnsweredRequest) -> bool:
    return (request.api_key in CLUSTER_ACTIONS or request.api_key >= PRIVATE_API_KEY_MIN
            or (request.api_key == FETCH and request.from_follower))


def throttle_for_response(quotas: QuotaManagers, request: AnsweredRequest, now_ms: int) -> Throttle:
    """KafkaApis' quota handling of an answer (handleProduceRequest, handleFetchRequest, sendResponseMaybeThrottle):
    record, and the throttle time (the larger of the bandwidth and request throttles)."""
    if is_exempt(request):
        return NO_THROTTLE
    user, client_id = request.user, request.client_id
    percent = ClientRequestQuotaManager.nanos_to_percentage(request.request_time_ns)
    if request.api_key == PRODUCE:
        bandwidth = quotas.produce.maybe_record_and_get_throttle_time_ms(user, client_id, request.request_bytes, now_ms)
        req = 0 if request.acks == 0 else quotas.request.maybe_record_and_get_throttle_time_ms(
            user, client_id, percent, now_ms)
        return Throttle(max(bandwidth, req))
    if request.api_key == FETCH:
        req = quotas.request.maybe_record_and_get_throttle_time_ms(user, client_id, percent, now_ms)
        bandwidth = quotas.fetch.maybe_record_and_get_throttle_time_ms(user, client_id, request.response_bytes,
                                                                       now_ms)
        throttle = max(bandwidth, req)
        if throttle > 0:
            quotas.fetch.unrecord_quota_sensor(user, client_id, request.response_bytes, now_ms)
            return Throttle(throttle, empty_fetch=True)
        return NO_THROTTLE
    return Throttle(quotas.request.maybe_record_and_get_throttle_time_ms(user, client_id, percent, now_ms))


def throttled_fetch_body(body: dict[str, Any]) -> dict[str, Any]:
    """A consumer Fetch answer as FetchContext.getThrottledResponse gives it: no partitions, the same session
    and top-level error (the data is fetched again once the channel is unmuted)."""
    return {**body, "responses": []}


def with_throttle_time(body: dict[str, Any], throttle_time_ms: int) -> dict[str, Any]:
    """The answer's ``throttle_time_ms`` set, where its version has the field (as the response's constructor
    takes it); unchanged otherwise."""
    if throttle_time_ms <= 0 or "throttle_time_ms" not in body:
        return body
    return {**body, "throttle_time_ms": max(int(body["throttle_time_ms"] or 0), throttle_time_ms)}


@attrs.frozen(slots=True)
class ChannelMute:
    """A connection muted for a throttle (KafkaChannel's MUTED_AND_THROTTLED): nothing more is read from it until
    ``until_ms``. Throttles that overlap extend it; the answer itself is still written."""

    until_ms: float = 0.0

    def throttled(self, now_ms: float, throttle_time_ms: int) -> ChannelMute:
        """The mute after an answer throttled for ``throttle_time_ms`` at ``now_ms`` (ThrottledChannel)."""
        if throttle_time_ms <= 0:
            return self
        return ChannelMute(max(self.until_ms, now_ms + throttle_time_ms))

    def muted(self, now_ms: float) -> bool:
        return now_ms < self.until_ms
