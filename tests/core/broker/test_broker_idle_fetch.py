"""A parked follower fetch's expiry (ReplicaManager.expire_delayed_operations): the fast path, which reads only the
partitions that were not idle when the fetch was parked unless something touched the fetch since, answers exactly
what the plain path (every partition of the session tested again) answers."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from core.broker.replica_manager import ReplicaManager
from messages.common import Errors, TopicPartition
from messages.replication import DeleteRecordsPartition, DeleteRecordsRequest, FetchResponse
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
from tests.support.fake_zookeeper import FakeZooKeeper

B = 1_000_000
N = 12
TPS = [TopicPartition("idle", i) for i in range(N)]


def _cluster(tmp_path, name: str, fast: bool) -> tuple[FakeZooKeeper, ReplicaManager, ReplicaManager]:
    """Broker 0 leads N partitions, broker 1 follows them in one incremental fetch session; each partition holds a
    record, and the follower has caught up and joined every ISR."""
    zk = broker_zk()
    for tp in TPS:
        zk.put_partition_state(tp, leader=0, isr=[0], leader_epoch=0, controller_epoch=0)
    d = tmp_path / name
    d.mkdir()
    leader, follower = make_rm(d, 0, now_ms=B), make_rm(d, 1, now_ms=B)
    leader.fast_fetch_expiry = fast
    states = [lai_state(tp, 0, 0, [0], [0, 1], is_new=True) for tp in TPS]
    for rm in (leader, follower):
        drive(rm.handle_leader_and_isr(lai_request(states), B), zk)
    for tp in TPS:
        drive(leader.handle_produce(produce_request(tp, f"v{tp.partition}"), B), zk)
    for i in range(6):
        _round(zk, leader, follower, 10 * i)
    assert all(leader.online_partition(tp).isr == (0, 1) for tp in TPS)
    return zk, leader, follower


def _round(zk, leader, follower, now, between: Callable[[], None] | None = None) -> FetchResponse:
    """One fetch round of the follower; a parked fetch sees ``between`` happen, then expires."""
    settle_truncation(zk, leader, follower, 0, B + now)
    req = follower.fetch_request_for(0)
    effects: list = []
    resp = drive(leader.handle_fetch(req, B + now, "broker-1"), zk, effects)
    if resp is None:
        if between is not None:
            between()
        drive(leader.expire_delayed_operations(B + now + req.max_wait_ms), zk, effects)
        (resp,) = emitted(effects, "broker-1")
    assert isinstance(resp, FetchResponse)
    drive(follower.handle_fetch_response(0, resp, B + now), zk)
    return resp


def _answer(d) -> tuple:
    return (d.tp, d.error, d.high_watermark, d.last_stable_offset, d.log_start_offset, bytes(d.records))


def _new_epoch(zk, leader, tp: TopicPartition) -> None:
    """The controller bumps ``tp``'s leader epoch, leader and ISR unchanged: the high watermark does not move, so
    nothing completes the parked fetch, but its answer must fence the follower's old epoch."""
    drive(leader.handle_leader_and_isr(lai_request([lai_state(tp, 0, 1, [0, 1], [0, 1], zk_version=1)]), B), zk)


def _delete_records(zk, leader, tp: TopicPartition) -> None:
    drive(leader.handle_delete_records(DeleteRecordsRequest(30000, (DeleteRecordsPartition(tp, 1),)), B, "c"), zk)


SCENARIOS: dict[str, Callable[[FakeZooKeeper, ReplicaManager], None]] = {
    "nothing": lambda zk, leader: None,
    "new leader epoch": lambda zk, leader: _new_epoch(zk, leader, TPS[5]),
    "delete records": lambda zk, leader: _delete_records(zk, leader, TPS[7]),
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_expiry_fast_path_answers_as_the_plain_path(tmp_path, scenario):
    answers = {}
    for fast in (False, True):
        zk, leader, follower = _cluster(tmp_path, f"{scenario}-{fast}".replace(" ", "-"), fast)
        resp = _round(zk, leader, follower, 100, lambda zk=zk, leader=leader: SCENARIOS[scenario](zk, leader))
        answers[fast] = [_answer(d) for d in resp.partitions]
    assert answers[True] == answers[False]
    if scenario == "nothing":
        assert answers[True] == []  # an idle round's incremental answer names no partition
    elif scenario == "new leader epoch":
        assert [(a[0], a[1]) for a in answers[True]] == [(TPS[5], Errors.FENCED_LEADER_EPOCH)]
    else:
        assert [(a[0], a[1], a[4]) for a in answers[True]] == [(TPS[7], Errors.NONE, 1)]


def test_expiry_of_an_untouched_fetch_tests_only_what_it_read(tmp_path, monkeypatch):
    """The point of the fast path: an idle round's expiry does not test the session's partitions again."""
    zk, leader, follower = _cluster(tmp_path, "count", True)
    calls = []
    real = leader._idle
    monkeypatch.setattr(leader, "_idle", lambda *a: calls.append(a[1].tp) or real(*a))
    resp = _round(zk, leader, follower, 100)
    assert resp.partitions == () and len(calls) == N  # handle_fetch's pass only
    calls.clear()
    resp = _round(zk, leader, follower, 200, lambda: _new_epoch(zk, leader, TPS[3]))
    assert [d.tp for d in resp.partitions] == [TPS[3]] and len(calls) == 2 * N  # touched: tested again


def test_a_write_the_fetch_waits_for_still_completes_it(tmp_path):
    """A produce to a session's partition completes the parked fetch at once, with the records."""
    zk, leader, follower = _cluster(tmp_path, "produce", True)
    req = follower.fetch_request_for(0)
    assert drive(leader.handle_fetch(req, B + 100, "broker-1"), zk) is None
    effects: list = []
    drive(leader.handle_produce(produce_request(TPS[2], "w"), B + 110), zk, effects)
    (resp,) = emitted(effects, "broker-1")
    assert [d.tp for d in resp.partitions] == [TPS[2]]
    drive(follower.handle_fetch_response(0, resp, B + 110), zk)
    assert log_values(follower.online_partition(TPS[2]).log) == ("v2", "w")
