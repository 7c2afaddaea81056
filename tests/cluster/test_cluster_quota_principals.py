"""Issue #39 on a real broker with a SASL_PLAINTEXT listener (PLAIN: alice, bob, carol in its JAAS config):

- /config/users/<default> producer_byte_rate=100000 (``kactor configs --entity-type users --entity-default``) is a
  quota per user, as Kafka 2.6.3's DefaultQuotaCallback resolves it with the request's principal: carol, over it, is
  answered with throttle_time_ms and her next request waits that long; alice and bob, producing together at 70 kB/s
  each (140 kB/s between them, 70 kB/s each under their own quota), are never throttled nor held. Before, every
  connection was measured as user ANONYMOUS, one sensor shared by all three.
- connection.failed.authentication.delay.ms=300: N wrong passwords from one client, one connection after another,
  take at least N × 300 ms (each failure's answer is held that long); before, they were refused at once.

The broker runs with quota.window.num=3 (samples of 1 s): a rate is measured over at least 2 s, so a user's first
200 kB pass at once whatever the rate."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from cluster_helpers import Cluster, run_kactor

from kactor.records import values_batch
from tests.support.raw_client import RawClient

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" '
              'user_bob="bob-secret" user_carol="carol-secret";')
TOPIC = "tenants"
QUOTA = 100_000  # bytes a second, per user
DELAY_MS = 300


class SaslClient(RawClient):
    """Kafka frames over one SASL_PLAINTEXT connection, authenticated with PLAIN (SaslHandshake v1, SaslAuthenticate
    v2) unless ``password`` is None."""

    def __init__(self, port: int, user: str, password: str | None) -> None:
        super().__init__(port, f"{user}-app", timeout=30)
        self.user = user
        if password is not None:
            self.plain_login(user, password)

    def produce(self, size: int) -> tuple[int, float]:
        """One Produce v8 (acks=1) of a ``size``-byte record: its throttle_time_ms and how long its answer took."""
        body = {"transactional_id": None, "acks": 1, "timeout_ms": 30000, "topic_data": [
            {"name": TOPIC, "partition_data": [{"index": 0, "records": values_batch([b"x" * size])}]}]}
        sent = time.monotonic()
        answer = self.call(0, 8, body)
        took = time.monotonic() - sent
        (partition,) = answer["responses"][0]["partition_responses"]
        assert partition["error_code"] == 0, answer
        return int(answer["throttle_time_ms"]), took


def test_quotas_per_user_and_failed_logins_held(start_cluster: Any) -> None:
    """One broker (PLAINTEXT inter-broker, SASL_PLAINTEXT for the tenants) with TOPIC led by it, for both."""
    c: Cluster = start_cluster(1, overrides=(
        "listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0", "inter.broker.listener.name=PLAINTEXT",
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN",
        f"listener.name.sasl_plaintext.plain.sasl.jaas.config={PLAIN_JAAS}",
        "quota.window.num=3", f"connection.failed.authentication.delay.ms={DELAY_MS}"))
    c.create_topic(TOPIC, replication_factor=1)
    c.wait_partition(TOPIC, 0, lambda s: s["leader"] == 0, what=f"{TOPIC}-0 led")
    ports = {ep.split("://")[0]: int(ep.rsplit(":", 1)[1]) for ep in c.json("/brokers/ids/0")["endpoints"]}
    sasl_users_under_a_default_user_quota_are_throttled_independently(c, ports["SASL_PLAINTEXT"])
    wrong_passwords_are_held_for_the_failed_authentication_delay(ports["SASL_PLAINTEXT"])


def sasl_users_under_a_default_user_quota_are_throttled_independently(c: Cluster, port: int) -> None:
    run_kactor("configs", "--zookeeper", c.connect_string, "--alter", "--entity-type", "users", "--entity-default",
               "--add-config", f"producer_byte_rate={QUOTA}")

    # carol alone, far over her quota (150 kB a request): throttled once the change has reached the broker, and her
    # next request waits out the mute
    carol = SaslClient(port, "carol", "carol-secret")
    try:
        deadline = time.monotonic() + 30
        throttle = 0
        while throttle == 0:
            assert time.monotonic() < deadline, "carol was never throttled: the users/<default> quota never applied"
            throttle, _ = carol.produce(150_000)
        waited = carol.produce(1_000)[1]
        assert throttle >= 200 and waited * 1000 >= throttle * 0.9, (throttle, waited)
    finally:
        carol.close()

    # alice and bob at the same time, 14 kB every 0.2 s each (70 kB/s, together over one user's quota)
    results: dict[str, list[tuple[int, float]]] = {}
    spans: dict[str, float] = {}
    errors: list[BaseException] = []

    def tenant(user: str) -> None:
        try:
            client = SaslClient(port, user, f"{user}-secret")
            try:
                started = time.monotonic()
                answers = []
                for i in range(20):
                    time.sleep(max(0.0, started + i * 0.2 - time.monotonic()))
                    answers.append(client.produce(14_000))
                spans[user] = time.monotonic() - started
                results[user] = answers
            finally:
                client.close()
        except BaseException as e:  # noqa: BLE001 - reported by the test's thread
            errors.append(e)

    threads = [threading.Thread(target=tenant, args=(u,)) for u in ("alice", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == [] and sorted(results) == ["alice", "bob"], errors
    for user, answers in results.items():
        assert [t for t, _ in answers] == [0] * 20, (user, answers)
        assert spans[user] < 4.0 + 1.5, (user, spans[user])  # paced at 3.8 s, never muted for a throttle


def wrong_passwords_are_held_for_the_failed_authentication_delay(port: int) -> None:
    guesses = 5
    started = time.monotonic()
    for i in range(guesses):
        client = SaslClient(port, "alice", None)
        try:
            assert client.call(17, 1, {"mechanism": "PLAIN"})["error_code"] == 0
            answer = client.call(36, 2, {"auth_bytes": f"\0alice\0guess-{i}".encode()})
            assert answer["error_code"] == 58
            assert answer["error_message"] == "Authentication failed: Invalid username or password"
            assert client.closed()
        finally:
            client.close()
    took = time.monotonic() - started
    assert took >= guesses * DELAY_MS / 1000, took
    # the right password is let in at once meanwhile as before
    SaslClient(port, "alice", "alice-secret").close()
