"""Kafka 2.6.3's ClientQuotaManagerTest, ported: quota resolution order, exact throttle times, the request quota's
cap, sensor expiry; time is frozen (freezegun) and read through the broker's SystemClock, as the edge reads it."""

from __future__ import annotations

import pytest
from freezegun import freeze_time

from actors.clock import SystemClock
from core.quota.client_quota_manager import (
    DEFAULT,
    LONG_MAX,
    ClientQuotaManager,
    ClientRequestQuotaManager,
    QuotaConfig,
    QuotaEntity,
    QuotaManagers,
    QuotaType,
    desanitize,
    sanitize,
)
from messages.quota import ClientQuotaConfigChanged

CONFIG = QuotaConfig(quota_bytes_per_second_default=500)
UNLIMITED = QuotaConfig()


@pytest.fixture
def clock():
    with freeze_time("2026-01-01 00:00:00") as frozen:
        c = SystemClock()
        c.tick = lambda ms: frozen.tick(ms / 1000.0)  # type: ignore[attr-defined]
        yield c


def record(m: ClientQuotaManager, clock, user: str, client: str, value: float) -> int:
    return m.maybe_record_and_get_throttle_time_ms(user, client, value, clock.now_ms())


def _quota_parsing(clock, config, client1, client2, random_client, default_client) -> None:
    """ClientQuotaManagerTest.testQuotaParsing: clients are (user, client id, config entity)."""
    m = ClientQuotaManager(config, QuotaType.PRODUCE)
    m.update_quota(client1[2], 2000)
    m.update_quota(client2[2], 4000)
    assert m.quota(*random_client[:2]) == float(config.quota_bytes_per_second_default)
    assert m.quota(*client1[:2]) == 2000
    assert m.quota(*client2[:2]) == 4000
    assert record(m, clock, *client1[:2], 2500 * config.num_quota_samples) > 0
    # the sensor exists: its bound changes at once and the client is no longer throttled
    m.update_quota(client1[2], 3000)
    assert m.quota(*client1[:2]) == 3000
    assert record(m, clock, *client1[:2], 0) == 0
    m.update_quota(client1[2], 500)
    assert m.quota(*client1[:2]) == 500
    assert record(m, clock, *client1[:2], 0) > 0
    # the override removed, a high default: not throttled
    m.update_quota(client1[2], None)
    m.update_quota(default_client[2], 4000)
    assert m.quota(*client1[:2]) == 4000
    assert record(m, clock, *client1[:2], 1000 * config.num_quota_samples) == 0


def test_client_id_quota_parsing(clock):
    _quota_parsing(clock, CONFIG, ("ANONYMOUS", "p1", QuotaEntity(None, "p1")),
                   ("ANONYMOUS", "p2", QuotaEntity(None, "p2")), ("ANONYMOUS", "random-client-id", None),
                   ("", "", QuotaEntity(None, DEFAULT)))


def test_user_quota_parsing(clock):
    _quota_parsing(clock, UNLIMITED, ("User1", "p1", QuotaEntity("User1")), ("User2", "p2", QuotaEntity("User2")),
                   ("RandomUser", "random-client-id", None), ("", "", QuotaEntity(DEFAULT)))


def test_user_client_id_quota_parsing(clock):
    _quota_parsing(clock, UNLIMITED, ("User1", "p1", QuotaEntity("User1", "p1")),
                   ("User2", "p2", QuotaEntity("User2", "p2")), ("RandomUser", "random-client-id", None),
                   ("", "", QuotaEntity(DEFAULT, DEFAULT)))


def test_user_quota_parsing_with_default_client_id_quota(clock):
    _quota_parsing(clock, CONFIG, ("User1", "p1", QuotaEntity("User1")), ("User2", "p2", QuotaEntity("User2")),
                   ("RandomUser", "random-client-id", None), ("", "", QuotaEntity(DEFAULT)))


def test_user_client_quota_parsing_with_default_client_id_quota(clock):
    _quota_parsing(clock, CONFIG, ("User1", "p1", QuotaEntity("User1", "p1")),
                   ("User2", "p2", QuotaEntity("User2", "p2")), ("RandomUser", "random-client-id", None),
                   ("", "", QuotaEntity(DEFAULT, DEFAULT)))


def check(m: ClientQuotaManager, clock, user: str, client: str, bound: float, value: float, throttled: bool) -> None:
    """ClientQuotaManagerTest.checkQuota."""
    assert m.quota(user, client) == float(bound)
    expected_max = float("inf") if bound >= LONG_MAX else 1 * (11 - 1) * bound
    assert m.get_max_value_in_quota_window(user, client, clock.now_ms()) == expected_max
    t = record(m, clock, user, client, value * 11)
    assert (t > 0) if throttled else (t == 0), (user, client, t)


def test_get_max_value_in_quota_window_with_non_default_quota_window(clock):
    m = ClientQuotaManager(QuotaConfig(num_quota_samples=4), QuotaType.FETCH)
    assert m.get_max_value_in_quota_window("userA", "client1", clock.now_ms()) == float("inf")
    m.update_quota(QuotaEntity(DEFAULT), 10)
    assert m.get_max_value_in_quota_window("userA", "client1", clock.now_ms()) == 30


def test_set_and_remove_default_user_quota(clock):
    m = ClientQuotaManager(UNLIMITED, QuotaType.PRODUCE)
    check(m, clock, "userA", "client1", LONG_MAX, 1000, False)
    m.update_quota(QuotaEntity(DEFAULT), 10)
    check(m, clock, "userA", "client1", 10, 1000, True)
    m.update_quota(QuotaEntity(DEFAULT), None)
    check(m, clock, "userA", "client1", LONG_MAX, 1000, False)


def test_set_and_remove_user_quota(clock):
    m = ClientQuotaManager(UNLIMITED, QuotaType.PRODUCE)
    m.update_quota(QuotaEntity("userA"), 10)
    check(m, clock, "userA", "client1", 10, 1000, True)
    m.update_quota(QuotaEntity("userA"), None)
    check(m, clock, "userA", "client1", LONG_MAX, 1000, False)


def test_set_and_remove_user_client_quota(clock):
    m = ClientQuotaManager(UNLIMITED, QuotaType.PRODUCE)
    m.update_quota(QuotaEntity("userA", "client1"), 10)
    check(m, clock, "userA", "client1", 10, 1000, True)
    m.update_quota(QuotaEntity("userA", "client1"), None)
    check(m, clock, "userA", "client1", LONG_MAX, 1000, False)


def test_quota_config_precedence(clock):
    m = ClientQuotaManager(UNLIMITED, QuotaType.PRODUCE)
    m.update_quota(QuotaEntity(DEFAULT), 1000)
    m.update_quota(QuotaEntity(None, DEFAULT), 2000)
    m.update_quota(QuotaEntity(DEFAULT, DEFAULT), 3000)
    m.update_quota(QuotaEntity("userA"), 4000)
    m.update_quota(QuotaEntity("userA", "client1"), 5000)
    m.update_quota(QuotaEntity("userB"), 6000)
    m.update_quota(QuotaEntity("userB", "client1"), 7000)
    m.update_quota(QuotaEntity("userB", DEFAULT), 8000)
    m.update_quota(QuotaEntity("userC"), 10000)
    m.update_quota(QuotaEntity(None, "client1"), 9000)

    check(m, clock, "userA", "client1", 5000, 4500, False)  # <user, client> over <user>
    check(m, clock, "userA", "client2", 4000, 4500, True)  # <user> over <client> and the defaults
    check(m, clock, "userA", "client3", 4000, 0, True)  # <user> is shared by the user's clients
    check(m, clock, "userA", "client1", 5000, 0, False)  # <user, client> is its own
    check(m, clock, "userB", "client1", 7000, 8000, True)
    check(m, clock, "userB", "client2", 8000, 7000, False)  # <user, default client>: one each
    check(m, clock, "userB", "client3", 8000, 7000, False)
    check(m, clock, "userD", "client1", 3000, 3500, True)  # <default user, default client>
    check(m, clock, "userD", "client2", 3000, 2500, False)
    check(m, clock, "userE", "client1", 3000, 2500, False)

    m.update_quota(QuotaEntity(DEFAULT, DEFAULT), None)  # back to the <user> default
    check(m, clock, "userD", "client1", 1000, 0, False)  # other tags: a new sensor
    check(m, clock, "userE", "client4", 1000, 1500, True)
    check(m, clock, "userF", "client4", 1000, 800, False)  # the <user> default is shared by the user's clients
    check(m, clock, "userF", "client5", 1000, 800, True)

    m.update_quota(QuotaEntity(DEFAULT), None)  # back to the <client-id> default
    check(m, clock, "userF", "client4", 2000, 0, False)  # shared by a client id of every user
    check(m, clock, "userF", "client5", 2000, 0, False)
    check(m, clock, "userF", "client5", 2000, 2500, True)
    check(m, clock, "userG", "client5", 2000, 0, True)

    m.update_quota(QuotaEntity("userA"), 8000)
    m.update_quota(QuotaEntity("userA", "client1"), 10000)
    check(m, clock, "userA", "client2", 8000, 0, False)
    check(m, clock, "userA", "client2", 8000, 4500, True)  # with what was recorded before
    check(m, clock, "userA", "client1", 10000, 0, False)
    check(m, clock, "userA", "client1", 10000, 6000, True)
    m.update_quota(QuotaEntity("userA", "client1"), None)
    check(m, clock, "userA", "client6", 8000, 0, True)  # the shared user quota
    m.update_quota(QuotaEntity("userA", "client6"), 11000)
    check(m, clock, "userA", "client6", 11000, 8500, False)
    m.update_quota(QuotaEntity("userA", DEFAULT), 12000)
    m.update_quota(QuotaEntity("userA", "client6"), None)
    check(m, clock, "userA", "client6", 12000, 4000, True)


def test_quota_violation(clock):
    """ClientQuotaManagerTest.testQuotaViolation: 400 B/s for 10 s under a 500 B/s quota, then 2,300 B half-way
    through a window: (6300 / 10.5 - 500) / 500 * 10.5 s = 2,100 ms."""
    m = ClientQuotaManager(CONFIG, QuotaType.PRODUCE)
    for _ in range(10):
        assert record(m, clock, "ANONYMOUS", "unknown", 400) == 0
        clock.tick(1000)
    clock.tick(500)
    assert record(m, clock, "ANONYMOUS", "unknown", 2300) == 2100
    clock.tick(2100)
    for _ in range(10):
        record(m, clock, "ANONYMOUS", "unknown", 400)
        clock.tick(1000)
    assert record(m, clock, "ANONYMOUS", "unknown", 0) == 0  # the burst's sample has rolled over


def test_request_percentage_quota_violation(clock):
    """ClientQuotaManagerTest.testRequestPercentageQuotaViolation: 1 % = 10 ms a second; a throttle is capped at
    one quota window (1,000 ms)."""
    m = ClientRequestQuotaManager(CONFIG)
    m.update_quota(QuotaEntity("ANONYMOUS", "test-client"), 1)

    def pct(millis: float) -> float:
        return m.nanos_to_percentage(int(millis * 1_000_000))

    for _ in range(10):
        assert record(m, clock, "ANONYMOUS", "test-client", pct(4)) == 0
        clock.tick(1000)
    clock.tick(500)
    assert record(m, clock, "ANONYMOUS", "test-client", pct(67.1)) == 210
    clock.tick(210)
    for _ in range(11):
        record(m, clock, "ANONYMOUS", "test-client", pct(4))
        clock.tick(1000)
    assert record(m, clock, "ANONYMOUS", "test-client", 0) == 0
    assert record(m, clock, "ANONYMOUS", "test-client", pct(500)) == 1000
    for _ in range(10):
        clock.tick(1000)
        assert record(m, clock, "ANONYMOUS", "test-client", 0) == 1000
    clock.tick(1000)
    assert record(m, clock, "ANONYMOUS", "test-client", 0) == 0


def test_no_quota_records_nothing(clock):
    """quotasEnabled: without any quota ever set there is no sensor at all."""
    m = ClientQuotaManager(UNLIMITED, QuotaType.PRODUCE)
    assert record(m, clock, "ANONYMOUS", "c", 10**12) == 0
    assert m.sensor_count() == 0


def test_idle_sensors_expire(clock):
    """Sensors idle for an hour go (InactiveSensorExpirationTimeSeconds): memory follows the clients seen lately."""
    m = ClientQuotaManager(CONFIG, QuotaType.PRODUCE)
    for i in range(50):
        record(m, clock, "ANONYMOUS", f"client-{i}", 1)
    assert m.sensor_count() == 50
    clock.tick(3600 * 1000 + 61_000)
    record(m, clock, "ANONYMOUS", "fresh", 1)
    assert m.sensor_count() == 1


def test_quota_config_handler_reads_znode_values(clock):
    """QuotaConfigHandler.updateQuotaConfig: each type from its key, a missing key removes that type's quota, the
    znode's sanitized client id is desanitized."""
    q = QuotaManagers(UNLIMITED)
    q.update_quota_config(ClientQuotaConfigChanged(None, sanitize("app 1*"), (("producer_byte_rate", "1048576"),
                                                                       ("request_percentage", "12.5"))))
    assert q.produce.quota("ANONYMOUS", "app 1*") == 1048576
    assert q.request.quota("ANONYMOUS", "app 1*") == 12.5
    assert q.fetch.quota("ANONYMOUS", "app 1*") == float(LONG_MAX)
    q.update_quota_config(ClientQuotaConfigChanged(None, sanitize("app 1*"), (("consumer_byte_rate", "2000"),)))
    assert q.produce.quota("ANONYMOUS", "app 1*") == float(LONG_MAX)
    assert q.fetch.quota("ANONYMOUS", "app 1*") == 2000


def test_sanitizer_matches_kafka():
    """Sanitizer: URL encoding with * and space as %2A and %20; desanitize inverts it."""
    assert sanitize("user@example.com") == "user%40example.com"
    assert sanitize("a b*c/d") == "a%20b%2Ac%2Fd"
    assert sanitize("Ünïcode") == "%C3%9Cn%C3%AFcode"
    assert sanitize("ok.-_09") == "ok.-_09"
    for name in ("a b*c/d", "Ünïcode", "x+y~z"):
        assert desanitize(sanitize(name)) == name
