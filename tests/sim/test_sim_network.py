"""`kactor sim`'s network faults (sim/runtime.py, sim/faults.py): the request timeout on simulated time, one-way
cuts, slow links, and their schedule drawn beside the existing faults."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

import sim.faults as faults_module
from kactor.sim_boot import SimBoot
from messages.common import TopicPartition
from messages.net import NetResponse, NetSendFailed
from messages.replication import ListOffsetsPartition, ListOffsetsRequest
from sim.faults import schedule
from sim.run import Cluster, run_seed
from sim.runtime import REQUEST_TIMEOUT_MS, Sim

RID = 990_001  # the request id of the test's own requests (the actors' never get this high in a short run)




def _capture(sim: Sim) -> list[tuple[float, int, Any]]:
    """The answers and failures of the test's requests (time, broker, body), kept from the actors (no actor sent
    them); everything else is delivered as before."""
    seen: list[tuple[float, int, Any]] = []
    deliver = sim.deliver

    def spy(broker: Any, incarnation: int, to: str, body: Any, sender: str, cause: int | None = None) -> None:
        if isinstance(body, NetResponse | NetSendFailed) and body.request_id >= RID:
            seen.append((sim.now, broker.id, body))
            return
        deliver(broker, incarnation, to, body, sender, cause)

    sim.deliver = spy  # type: ignore[method-assign]
    return seen


def _send(sim: Sim, src: int, dst: int, rid: int = RID, timeout_ms: float | None = None) -> float:
    """A ListOffsets from ``src`` to ``dst`` through the broker's own "net" edge (as its NetworkActor hands it on);
    returns when it was sent."""
    broker = sim.brokers[src]
    body = ListOffsetsRequest(-1, 0, (ListOffsetsPartition(TopicPartition("sim", 0), -1),))
    sim.net_send(broker, broker.incarnation, dst, body, rid, "replica-manager", None, timeout_ms)
    return sim.now


def test_a_request_unanswered_by_its_timeout_fails_then_and_its_late_answer_is_dropped(cluster: Cluster) -> None:
    sim = cluster.sim
    seen = _capture(sim)
    sent = _send(sim, 0, 1, timeout_ms=5000)
    sim.run_for(100)
    assert [type(b) for _, _, b in seen] == [NetResponse]  # answered within a round trip on a healthy link
    seen.clear()
    sim.slow_link(0, 1, 4000.0)  # an answer takes 8 s and more there and back
    sent = _send(sim, 0, 1, RID + 1, timeout_ms=5000)
    sim.run_for(20_000)
    assert len(seen) == 1
    at, broker, failure = seen[0]
    assert broker == 0 and isinstance(failure, NetSendFailed) and failure.request_id == RID + 1
    assert at - sent == 5000.0  # Outbound.sweep's deadline, on the simulated clock
    assert failure.error == "request to 127.0.0.1:9093 timed out"
    assert any(e.endswith("b0>b1 request timed out") for e in sim.events)
    # the target did handle it (its answer left for b0 about 4 s later) but the answer found nothing waiting
    assert all(p.request_id != RID + 1 for p in sim.pending.values())
    assert not any("NetResponse" in e and " b0 " in e for e in sim.events[-3:])


def test_a_request_without_a_timeout_of_its_own_has_request_timeout_ms(cluster: Cluster) -> None:
    sim = cluster.sim
    seen = _capture(sim)
    sim.slow_link(0, 2, 40_000.0)
    sent = _send(sim, 0, 2)
    sim.run_for(90_000)
    assert [(at - sent, type(b)) for at, _, b in seen] == [(REQUEST_TIMEOUT_MS, NetSendFailed)]


def test_a_timeout_closes_the_connection_failing_the_rest_on_it(cluster: Cluster) -> None:
    sim = cluster.sim
    seen = _capture(sim)
    sim.slow_link(0, 1, 4000.0)
    _send(sim, 0, 1, RID, timeout_ms=3000)
    sim.run_for(1000)
    _send(sim, 0, 1, RID + 1, timeout_ms=30_000)  # the same connection (sender, destination, actor)
    sim.run_for(2500)
    assert [(b.request_id, b.error) for _, _, b in seen] == [
        (RID, "request to 127.0.0.1:9093 timed out"),
        (RID + 1, "connection to 127.0.0.1:9093 closed after a request timed out")]


def test_a_one_way_cut_holds_one_direction_only_and_its_requests_time_out(cluster: Cluster) -> None:
    sim = cluster.sim
    seen = _capture(sim)
    sim.one_way_cut(0, 1)  # b0's frames to b1 are lost; b1's reach b0
    assert not sim.healthy()
    sent = _send(sim, 0, 1, RID, timeout_ms=3000)
    handled_before = sum(" b0 " in e and "NetRequest" in e for e in sim.events)
    _send(sim, 1, 0, RID + 1, timeout_ms=3000)
    sim.run_for(5000)
    # b1's request reached b0 (that way works) but b0's answer, like b0's own request, is held: both time out
    assert sum(" b0 " in e and "NetRequest" in e for e in sim.events) >= handled_before + 1
    assert sorted((b.request_id, at - sent, type(b)) for at, _, b in seen) == [
        (RID, 3000.0, NetSendFailed), (RID + 1, 3000.0, NetSendFailed)]
    assert "one-way cut b0>b1" in " ".join(sim.events)


def test_what_a_one_way_cut_held_arrives_at_the_retransmission_after_the_heal(cluster: Cluster) -> None:
    sim = cluster.sim
    seen = _capture(sim)
    sim.one_way_cut(0, 1)
    sent = _send(sim, 0, 1, timeout_ms=30_000)
    sim.run_for(2000)
    assert seen == []  # not reset: the request waits
    sim.heal(0, 1)
    assert not sim.healthy()  # until what was held has arrived
    sim.run_for(3000)
    # TCP's retransmissions 0.2, 0.6, 1.4, 3.0 s after the send: the first after the heal carries it
    rtt = sim.latency[(0, 1)] + sim.latency[(1, 0)]
    assert [(round(at - sent - rtt, 3), type(b)) for at, _, b in seen] == [(3000.0, NetResponse)]
    assert sim.healthy()


def test_a_slow_link_delays_each_frame_by_its_latency_until_it_heals(cluster: Cluster) -> None:
    sim = cluster.sim
    seen = _capture(sim)

    def round_trip(rid: int) -> float:
        sent = _send(sim, 0, 1, rid)
        sim.run_for(2000)
        assert seen[-1][2].request_id == rid and isinstance(seen[-1][2], NetResponse)
        return seen[-1][0] - sent

    base = round_trip(RID)
    sim.slow_link(0, 1, 300.0)
    assert not sim.healthy()
    assert round(round_trip(RID + 1) - base, 3) == 600.0  # 300 ms more each way
    sim.heal(0, 1)
    assert round_trip(RID + 2) == base and sim.healthy()


def test_one_way_cuts_and_slow_links_are_a_share_of_the_partitions_keeping_every_fault_in_place(
        monkeypatch: pytest.MonkeyPatch) -> None:
    new = [schedule(seed, 200, 3) for seed in range(1, 21)]
    monkeypatch.setattr(faults_module, "ONE_WAY_SHARE", 0.0)
    monkeypatch.setattr(faults_module, "SLOW_SHARE", 0.0)
    old = [schedule(seed, 200, 3) for seed in range(1, 21)]
    as_before = [[attrs.evolve(f, kind="partition", latency_ms=0.0) if f.kind in ("one-way", "slow-link") else f
                  for f in s] for s in new]
    # the one-way cuts keep their link, in a drawn direction
    assert [[(f.step, f.kind, min(f.a, f.b), max(f.a, f.b)) for f in s] for s in as_before] == \
           [[(f.step, f.kind, min(f.a, f.b), max(f.a, f.b)) for f in s] for s in old]
    kinds = [f for s in new for f in s]
    one_way = [f for f in kinds if f.kind == "one-way"]
    slow = [f for f in kinds if f.kind == "slow-link"]
    assert one_way and slow and {f.a > f.b for f in one_way} == {True, False}
    assert all(50.0 <= f.latency_ms <= 500.0 or 31_000.0 <= f.latency_ms <= 40_000.0 for f in slow)
    assert any(f.latency_ms > REQUEST_TIMEOUT_MS for f in slow)


def test_a_seed_with_one_way_cuts_and_slow_links_runs_clean_and_the_same_twice() -> None:
    # seed 18 (15 steps): a one-way cut b1>b0, then b0|b1 slower than the request timeout for 6 steps
    faults = schedule(18, 15, 3)
    assert [f.kind for f in faults][:4] == ["one-way", "heal", "logdir-fail", "slow-link"]
    assert faults[3].latency_ms > REQUEST_TIMEOUT_MS
    a = run_seed(18, 15, SimBoot())
    b = run_seed(18, 15, SimBoot())
    assert a.violations == ()
    assert a.event_digest == b.event_digest and a.delivered == b.delivered


def test_a_client_request_times_out_at_its_timeout(cluster: Cluster) -> None:
    sim = cluster.sim
    answers: list[tuple[float, Any]] = []
    sim.pause(2)  # its requests wait, unread
    sent = sim.now
    sim.client_request(2, ListOffsetsRequest(-1, 0, (ListOffsetsPartition(TopicPartition("sim", 0), -1),)), 5,
                       lambda a: answers.append((sim.now - sent, a)), timeout_ms=1500)
    sim.run_for(3000)
    assert answers == [(1500.0, None)]


def test_a_connection_reset_fails_what_is_in_flight_on_the_link_and_the_next_request_goes_through(
        cluster: Cluster) -> None:
    sim = cluster.sim
    seen = _capture(sim)
    sim.slow_link(0, 1, 200.0)
    _send(sim, 0, 1, RID)
    sim.run_for(50)
    sim.reset_link(1, 0)
    sim.run_for(1)
    assert [(b.request_id, type(b), b.error) for _, _, b in seen] == [(RID, NetSendFailed, "connection reset by peer")]
    sim.heal(0, 1)
    _send(sim, 0, 1, RID + 1)
    sim.run_for(1000)
    assert [(b.request_id, type(b)) for _, _, b in seen[1:]] == [(RID + 1, NetResponse)]
    resets = [f for seed in range(1, 21) for f in schedule(seed, 50, 3) if f.kind == "reset"]
    assert 5 <= len(resets) <= 40 and all(f.a < f.b for f in resets)  # RESET_RATE of 1000 steps


def test_a_produce_unanswered_past_its_timeout_is_caught_counting_from_when_its_leader_could_read_it(
        cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound "answered within its request timeout + 1 s" runs from when the leader could read the produce: a
    paused leader reads it at its resume, and its DelayedProduce's 30 s start then (seed 277: the produce held 8 s by
    b1's pause, then parked 30 s for a follower whose fetches a slow link stalled, answered REQUEST_TIMED_OUT)."""
    from sim.client import SimClient
    from sim.invariants import Checker

    sim = cluster.sim
    client = SimClient(sim)
    checker = Checker(sim, client, sorted(cluster.assignment), cluster.assignment)
    monkeypatch.setattr(sim, "client_request", lambda *a, **k: None)  # the produce is never answered
    tp = TopicPartition("sim", 0)
    sent = sim.now
    assert client.produce(tp)
    leader = next(iter(client.outstanding.values())).leader
    sim.run_for(20_000)
    sim.pause(leader)
    sim.run_for(5000)
    sim.resume(leader)
    sim.run_for(7000)  # 32 s after the send, 27 s of them with the leader running

    def unanswered() -> list[str]:
        return [v for v in checker.check() if "unanswered after" in v and "healthy" not in v]

    assert unanswered() == []
    assert sim.paused_ms(leader, sent) == 5000.0
    sim.run_for(5000)
    assert unanswered() == [f"produce 's1-1' to b{leader} unanswered after 37000 ms"]
    # seed 277 of the first campaign with slow links (2026-11-27): reported before the bound discounted the pause
    assert run_seed(277, 50, SimBoot()).violations == ()
