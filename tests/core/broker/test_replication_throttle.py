"""Replication throttles in the ReplicaManager core (Kafka 2.6.3): the leader leaves a throttled partition's data out
of a follower's fetch while its leader quota is exceeded (readFromLocalLog / shouldLeaderThrottle) and records what
it sends; the follower leaves a throttled partition out of its fetch while its follower quota is exceeded
(ReplicaFetcherThread.buildFetch / shouldFollowerThrottle) and records what it fetched. Frozen clock."""

from __future__ import annotations

import time

from freezegun import freeze_time

from core.quota.replication_quota_manager import LONG_MAX
from messages.common import Errors, TopicPartition
from messages.replication import FetchPartition, FetchRequest, FetchResponse
from tests.support.broker import (
    broker_zk,
    drive,
    emitted,
    lai_request,
    lai_state,
    log_values,
    make_rm,
    produce_request,
    settle_truncation,
)

TP = TopicPartition("moving", 0)
OTHER = TopicPartition("calm", 0)
BIG = 3000  # one record's value: a batch of a little more than 3000 bytes


def now_ms() -> float:
    return time.time() * 1000


def cluster(tmp_path, **follower_config):
    """Broker 0 leads TP and OTHER, broker 1 is a new replica of both (ISR [0]), as in a reassignment."""
    zk = broker_zk()
    for tp in (TP, OTHER):
        zk.put_partition_state(tp, leader=0, isr=[0], leader_epoch=0, controller_epoch=0)
    leader, follower = make_rm(tmp_path, 0, now_ms=now_ms()), make_rm(tmp_path, 1, now_ms=now_ms(),
                                                                      **follower_config)
    states = [lai_state(tp, 0, 0, [0], [0, 1], is_new=True) for tp in (TP, OTHER)]
    for rm in (leader, follower):
        drive(rm.handle_leader_and_isr(lai_request(states), now_ms()), zk)
    settle_truncation(zk, leader, follower, 0, now_ms())
    return zk, leader, follower


def fetch_round(zk, leader, follower) -> FetchResponse | None:
    """The follower's fetch (None: it sent none), the leader's answer (a parked one at its expiry), applied."""
    request = follower.fetch_request_for(0, now_ms())
    if request is None:
        return None
    effects: list = []
    response = drive(leader.handle_fetch(request, now_ms(), "broker-1"), zk, effects)
    if response is None:
        drive(leader.expire_delayed_operations(now_ms() + request.max_wait_ms), zk, effects)
        (response,) = emitted(effects, "broker-1")
    drive(follower.handle_fetch_response(0, response, now_ms()), zk)
    return response


def part(response: FetchResponse, tp: TopicPartition):
    return next(d for d in response.partitions if d.tp == tp)


def test_unthrottled_replication_is_unchanged_by_a_quota_on_other_partitions(tmp_path):
    with freeze_time("2026-01-01 00:00:00"):
        zk, leader, follower = cluster(tmp_path)
        leader.update_replication_quotas(1, LONG_MAX)  # a tiny quota, but no partition throttled
        drive(leader.handle_produce(produce_request(TP, "x" * BIG), now_ms()), zk)
        drive(leader.handle_produce(produce_request(TP, "y" * BIG), now_ms()), zk)
        fetch_round(zk, leader, follower)
        assert log_values(follower.online_partition(TP).log) == ("x" * BIG, "y" * BIG)
        assert leader.leader_quota.byte_rate(now_ms()) == 0.0  # only throttled partitions are recorded


def test_leader_answers_a_throttled_partition_empty_while_its_quota_is_exceeded(tmp_path):
    with freeze_time("2026-01-01 00:00:00") as clock:
        zk, leader, follower = cluster(tmp_path)
        leader.log_configs.update_topic(TP.topic, {"leader.replication.throttled.replicas": "0:0"},
                                        leader.online_partitions())
        leader.update_replication_quotas(1000, LONG_MAX)
        drive(leader.handle_produce(produce_request(TP, "x" * BIG), now_ms()), zk)
        first = fetch_round(zk, leader, follower)
        assert first is not None and part(first, TP).records  # nothing measured yet: sent, and recorded
        sent = len(part(first, TP).records)
        assert leader.leader_quota.byte_rate(now_ms()) == sent  # over one window
        drive(leader.handle_produce(produce_request(TP, "y" * BIG), now_ms()), zk)
        drive(leader.handle_produce(produce_request(OTHER, "z"), now_ms()), zk)
        throttled = fetch_round(zk, leader, follower)
        assert throttled is not None
        d = part(throttled, TP)
        assert (d.error, d.records, d.high_watermark, d.log_end_offset) == (Errors.NONE, b"", 2, 2)
        assert part(throttled, OTHER).records  # an unthrottled partition of the same fetch gets its data
        assert leader.leader_quota.byte_rate(now_ms()) == sent  # nothing more recorded
        assert leader.replication_quota_metrics(now_ms()) == {"LeaderReplication.byte-rate": sent,
                                                              "FollowerReplication.byte-rate": 0,
                                                              "AlterLogDirsReplication.byte-rate": 0}
        assert log_values(follower.online_partition(TP).log) == ("x" * BIG,)
        # a consumer is never throttled by the replication quota
        consumer = FetchRequest(-1, (FetchPartition(TP, 1, 0, -1, 1 << 20),), 0, 1, 1 << 20)
        got = drive(leader.handle_fetch(consumer, now_ms(), "client"), zk)
        assert part(got, TP).records
        clock.tick(4.0)  # about 3 kB over 4.5 s: below 1000 B/s
        fetch_round(zk, leader, follower)
        assert log_values(follower.online_partition(TP).log) == ("x" * BIG, "y" * BIG)


def test_leader_does_not_throttle_a_follower_in_the_isr(tmp_path):
    with freeze_time("2026-01-01 00:00:00"):
        zk, leader, follower = cluster(tmp_path)
        drive(leader.handle_produce(produce_request(TP, "a"), now_ms()), zk)
        fetch_round(zk, leader, follower)
        fetch_round(zk, leader, follower)
        assert leader.online_partition(TP).isr == (0, 1)
        leader.log_configs.update_topic(TP.topic, {"leader.replication.throttled.replicas": "*"},
                                        leader.online_partitions())
        leader.update_replication_quotas(1, LONG_MAX)
        leader.leader_quota.record(10_000, now_ms())
        drive(leader.handle_produce(produce_request(TP, "b" * BIG), now_ms()), zk)
        fetch_round(zk, leader, follower)
        assert log_values(follower.online_partition(TP).log) == ("a", "b" * BIG)


def test_follower_leaves_a_throttled_partition_out_while_its_quota_is_exceeded(tmp_path):
    with freeze_time("2026-01-01 00:00:00") as clock:
        zk, leader, follower = cluster(tmp_path, replica_fetch_max_bytes=BIG)  # one batch per partition and fetch
        follower.log_configs.update_topic(TP.topic, {"follower.replication.throttled.replicas": "0:1"},
                                          follower.online_partitions())
        follower.update_replication_quotas(LONG_MAX, 1000)
        for v in ("x", "y", "z"):
            drive(leader.handle_produce(produce_request(TP, v * BIG), now_ms()), zk)
        fetch_round(zk, leader, follower)
        log = follower.online_partition(TP).log
        assert log.log_end_offset == 1  # behind the leader's HW (3): not in sync
        assert follower.follower_quota.byte_rate(now_ms()) > 1000
        request = follower.fetch_request_for(0, now_ms())
        assert request is not None  # the session's other partition is still fetched; TP is left out of it
        assert TP not in [fp.tp for fp in request.partitions] and request.forgotten == (TP,)
        follower.fetch_failed(0)
        follower.remove_fetchers([OTHER])
        assert follower.fetch_request_for(0, now_ms()) is None
        assert follower.throttled_fetch_leaders == {0}  # the fetcher backs off
        clock.tick(4.0)
        fetch_round(zk, leader, follower)
        assert log.log_end_offset == 2 and follower.throttled_fetch_leaders == set()
        clock.tick(4.0)
        fetch_round(zk, leader, follower)
        assert log_values(log) == ("x" * BIG, "y" * BIG, "z" * BIG)
