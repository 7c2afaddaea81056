"""Client quotas on the listeners (edges/client_quotas.py + the transport's KIP-219 mute): an answer over quota
carries throttle_time_ms at once, and the connection is not read again until that time has passed; a quota change
from the "net" actor applies to the next answer; other clients are not held."""

from __future__ import annotations

import time

import pytest
from edge_support import AnsweringRuntime

import core.api  # noqa: F401 - registers every API
from core.quota.client_quota_manager import QuotaConfig
from edges.client_quotas import ClientQuotas
from edges.transport import BlockingClient, Transport
from messages.quota import ClientQuotaConfigChanged

PRODUCE = 0
RECORDS = b"x" * 20_000  # not a valid batch: the fake replica manager answers without reading it


@pytest.fixture
def transport():
    rt = AnsweringRuntime()
    t = Transport(rt, client_quotas=ClientQuotas(QuotaConfig()))
    rt.transport = t
    yield t
    t.close()


def produce(client: BlockingClient, acks: int = 1) -> dict:
    body = {"transactional_id": None, "acks": acks, "timeout_ms": 1000,
            "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": RECORDS}]}]}
    return client.request_raw(PRODUCE, 8, body, timeout_s=10)


def test_over_quota_answer_reports_throttle_and_the_connection_is_muted_for_it(transport):
    transport.update_client_quota(ClientQuotaConfigChanged(None, "slow", (("producer_byte_rate", "20000"),)))
    with BlockingClient(transport.host, transport.port, client_id="slow") as slow, \
            BlockingClient(transport.host, transport.port, client_id="fast") as fast:
        # 10 windows of 20,000 B/s: the first ~200 KB pass unthrottled
        throttles = [produce(slow)["throttle_time_ms"] for _ in range(12)]
        assert throttles[0] == 0
        throttle = throttles[-1]
        assert throttle > 0, throttles
        sent = time.monotonic()
        answer = produce(slow)  # read only once the mute of the previous answer is over
        waited_ms = (time.monotonic() - sent) * 1000
        assert waited_ms >= throttle * 0.9, (waited_ms, throttle)
        assert answer["throttle_time_ms"] > 0
        # another client id has no quota: answered at once, never throttled
        sent = time.monotonic()
        assert [produce(fast)["throttle_time_ms"] for _ in range(20)] == [0] * 20
        assert time.monotonic() - sent < throttle / 1000
    # the quota removed: the next client is not throttled
    transport.update_client_quota(ClientQuotaConfigChanged(None, "slow", ()))
    with BlockingClient(transport.host, transport.port, client_id="slow") as slow:
        assert produce(slow)["throttle_time_ms"] == 0


def test_without_quota_managers_answers_are_as_before():
    rt = AnsweringRuntime()
    t = Transport(rt)
    rt.transport = t
    try:
        with BlockingClient(t.host, t.port, client_id="c") as c:
            assert produce(c)["throttle_time_ms"] == 0
            t.update_client_quota(ClientQuotaConfigChanged(None, "c", (("producer_byte_rate", "1"),)))
            assert produce(c)["throttle_time_ms"] == 0
    finally:
        t.close()


def test_acks_0_is_muted_for_its_bytes_too(transport):
    """handleProduceRequest: acks=0 gets no answer, yet its bytes count and its channel is muted. 250 kB at
    20 kB/s over the 10 s quota window is 25 kB/s: a mute of about 2.5 s, which the next request waits behind."""
    transport.update_client_quota(ClientQuotaConfigChanged(None, "silent", (("producer_byte_rate", "20000"),)))
    with BlockingClient(transport.host, transport.port, client_id="silent") as c:
        c._sock.sendall(_acks0_frame(c, b"x" * 250_000))  # type: ignore[union-attr]
        time.sleep(0.3)
        sent = time.monotonic()
        answer = produce(c)  # behind the mute the acks=0 request earned
        assert (time.monotonic() - sent) > 1.0
        assert answer["throttle_time_ms"] > 0


def _acks0_frame(c: BlockingClient, records: bytes) -> bytes:
    from protocol.framing import RequestHeader, encode_request

    body = {"transactional_id": None, "acks": 0, "timeout_ms": 1000,
            "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": records}]}]}
    return encode_request(RequestHeader(PRODUCE, 8, 999, c.client_id), body)




def test_the_net_actor_hands_quota_changes_to_the_transport_and_ignores_them_in_replay(transport):
    """ClientQuotaConfigChanged (from the config manager, traced) reaches the transport's quota managers through the
    "net" actor; without a transport (a replay) it is only recorded."""
    from actors.edge_slots import Edges
    from actors.network_actor import NetworkActor
    from actors.runtime import Runtime

    change = ClientQuotaConfigChanged(None, "app", (("producer_byte_rate", "5000"),))
    for net in (transport, None):
        rt = Runtime("quota-net")
        rt.edges = Edges(net=net)
        try:
            rt.spawn(NetworkActor, "net")
            rt.inject("net", change, sender="test")
            assert rt.run_until_idle() == 1
        finally:
            rt.shutdown()
    assert transport.client_quotas.managers.produce.quota("ANONYMOUS", "app") == 5000


def test_request_quota_throttles_any_api_for_at_most_one_window(transport):
    """request_percentage: the edge's time on a request counts; 2.6 throttles every other API (here ApiVersions,
    answered on the I/O thread) with the request quota, capped at one quota window (1,000 ms)."""
    transport.update_client_quota(ClientQuotaConfigChanged(None, "busy", (("request_percentage", "0.00001"),)))
    with BlockingClient(transport.host, transport.port, client_id="busy") as busy:
        throttle = busy.request_raw(18, 3, {"client_software_name": "t", "client_software_version": "1"})[
            "throttle_time_ms"]
        assert 0 < throttle <= 1000
        sent = time.monotonic()
        busy.request_raw(18, 3, {"client_software_name": "t", "client_software_version": "1"})
        assert (time.monotonic() - sent) * 1000 >= throttle * 0.9
