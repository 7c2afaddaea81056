"""KafkaApis' quota handling of answers (core/quota/enforcement.py): which quota each answer is measured by, the
throttle time it reports, the empty answer of a throttled consumer fetch, exemptions, and the channel mute."""

from __future__ import annotations

from freezegun import freeze_time

from actors.clock import SystemClock
from core.quota.client_quota_manager import DEFAULT, QuotaConfig, QuotaEntity, QuotaManagers
from core.quota.enforcement import (
    AnsweredRequest,
    ChannelMute,
    Throttle,
    throttle_for_response,
    throttled_fetch_body,
    with_throttle_time,
)

MB = 1024 * 1024


def _quotas(**quota: float) -> QuotaManagers:
    q = QuotaManagers(QuotaConfig())
    for name, value in quota.items():
        getattr(q, name).update_quota(QuotaEntity(None, "app"), value)
    return q


@freeze_time("2026-01-01")
def test_produce_over_its_byte_rate_is_throttled_for_the_time_that_brings_it_back():
    """1 MB/s quota, 11 MB in one go: measured over 10 windows, (11 MB / 10 s - 1 MB/s) / 1 MB/s * 10 s = 1,000 ms."""
    q = _quotas(produce=MB)
    now = SystemClock().now_ms()
    assert throttle_for_response(q, AnsweredRequest(0, "app", request_bytes=11 * MB), now) == Throttle(1000)
    # another client id has no quota
    assert throttle_for_response(q, AnsweredRequest(0, "other", request_bytes=11 * MB), now) == Throttle(0)


@freeze_time("2026-01-01")
def test_produce_with_acks_0_skips_the_request_quota_only():
    q = _quotas(produce=MB, request=0.0001)
    now = SystemClock().now_ms()
    busy = AnsweredRequest(0, "app", request_bytes=100, request_time_ns=50_000_000, acks=0)
    assert throttle_for_response(q, busy, now) == Throttle(0)
    assert throttle_for_response(q, AnsweredRequest(0, "app", request_bytes=100, request_time_ns=50_000_000,
                                                    acks=1), now).throttle_time_ms == 1000  # capped: one window


@freeze_time("2026-01-01")
def test_throttled_consumer_fetch_is_answered_empty_and_its_bytes_taken_back():
    q = _quotas(fetch=MB)
    now = SystemClock().now_ms()
    t = throttle_for_response(q, AnsweredRequest(1, "app", response_bytes=22 * MB), now)
    assert t == Throttle(12000, empty_fetch=True)  # (2.2 MB/s - 1 MB/s) / 1 MB/s * 10 s
    # nothing was kept: a fetch under the quota right after passes
    assert throttle_for_response(q, AnsweredRequest(1, "app", response_bytes=5 * MB), now) == Throttle(0)


@freeze_time("2026-01-01")
def test_followers_and_cluster_actions_are_exempt():
    q = QuotaManagers(QuotaConfig())
    q.fetch.update_quota(QuotaEntity(None, DEFAULT), 1)
    q.request.update_quota(QuotaEntity(None, DEFAULT), 0.0001)
    now = SystemClock().now_ms()
    assert throttle_for_response(q, AnsweredRequest(1, "broker-2-fetcher-0", response_bytes=MB,
                                                    request_time_ns=10**9, from_follower=True), now) == Throttle(0)
    for key in (4, 5, 6, 7, 10001):
        assert throttle_for_response(q, AnsweredRequest(key, "x", request_time_ns=10**9), now) == Throttle(0)
    # any other API is measured against the request quota
    assert throttle_for_response(q, AnsweredRequest(3, "x", request_time_ns=10**9), now).throttle_time_ms == 1000


def test_answer_bodies():
    assert with_throttle_time({"throttle_time_ms": 0, "x": 1}, 250) == {"throttle_time_ms": 250, "x": 1}
    assert with_throttle_time({"x": 1}, 250) == {"x": 1}  # a version without the field
    assert throttled_fetch_body({"throttle_time_ms": 5, "error_code": 0, "session_id": 7, "responses": [1]}) == \
        {"throttle_time_ms": 5, "error_code": 0, "session_id": 7, "responses": []}


def test_channel_mute_extends_and_ends():
    m = ChannelMute().throttled(1000.0, 0)
    assert not m.muted(1000.0)
    m = m.throttled(1000.0, 300)
    assert m.muted(1299.0) and not m.muted(1300.0)
    assert m.throttled(1100.0, 100).until_ms == 1300.0  # a shorter overlapping throttle does not shorten it
    assert m.throttled(1100.0, 500).until_ms == 1600.0
