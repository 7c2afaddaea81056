"""kactor/chaos/gaps.py on hand-made histories: the producer's longest acknowledgement gap, what is left out of it
(pauses between sends, a partition with no leader, a leader the run took down, an ISR below min.insync.replicas)
and the bound it is held to."""

from __future__ import annotations

from kactor.chaos.gaps import Gap, ack_gaps, check_gaps, gap_bound_s, longest, unavailable
from kactor.chaos.history import MinIsrSetting, Outage, PartitionSample, Sample, Send, Violation

TP = ("t", 0)
R = frozenset({0, 1, 2})
BOUND = gap_bound_s(3000, 3000)


def led(ts: float, leader: int = 0, isr: tuple[int, ...] = (0, 1, 2)) -> Sample:
    return Sample(ts, 1, {TP: PartitionSample(leader, 0, isr, R)})


def every(step: float, until: float, **kw: object) -> list[Sample]:
    """A sample every ``step`` seconds from 0 to ``until``, all with the same state."""
    return [led(i * step, **kw) for i in range(int(until / step) + 1)]  # type: ignore[arg-type]


def send(start: float, end: float, acked: bool = True, tp: tuple[str, int] = TP) -> Send:
    return Send(start, end, tp[0], tp[1], 1, acked)


def test_the_bound_is_the_slower_isr_removal_plus_the_margin() -> None:
    # a crashed follower leaves the ISR at session expiry (3 s), a cut-off one within 1.5 x replica.lag.time.max.ms
    assert BOUND == 4.5 + 3.0
    assert gap_bound_s(6000, 3000) == 6.0 + 3.0
    assert gap_bound_s(6000, 3000, margin_s=1.0) == 7.0


def test_a_follower_crash_that_stalls_the_producer_for_the_request_timeout_is_over_the_bound() -> None:
    # broker 1, a follower, is killed at 1.5 s and back at 12 s; leader 0 holds the produce sent at 1.0 s for 30 s
    samples = every(0.2, 40.0)
    outages = [Outage(1, 1.5, 12.0, "sigkill")]
    sends = [send(0.0, 0.05), send(0.5, 0.55), send(1.0, 31.0), send(31.1, 31.15)]
    gaps = ack_gaps(sends, samples, outages)
    assert [round(g.seconds, 3) for g in gaps] == [0.05, 0.05, 30.0, 0.05]
    assert longest(gaps) == Gap(30.0, 0.55, 31.0, TP, True)
    assert check_gaps(gaps, BOUND) == [Violation(
        "gap", "30.0 s waiting on live leaders without an acknowledgement (bound 7.5 s), 0.6-31.0s of the run, "
               "acknowledged on t-0")]


def test_a_follower_crash_answered_within_the_bound_is_no_violation() -> None:
    # the same crash, the produce completed once the ISR shrank (session expiry + election: 5.0 s)
    samples = every(0.2, 40.0)
    gaps = ack_gaps([send(0.0, 0.05), send(1.0, 6.0), send(6.1, 6.15)], samples, [Outage(1, 1.5, 12.0, "sigkill")])
    assert round(longest(gaps).seconds, 3) == 5.0  # type: ignore[union-attr]
    assert check_gaps(gaps, BOUND) == []


def test_failed_sends_count_until_the_next_acknowledgement_and_pauses_between_sends_do_not() -> None:
    samples = every(0.2, 100.0)
    # two requests timed out (5 s each) on a live leader, then an ack; then a long pause with nothing sent
    sends = [send(0.0, 0.1), send(1.0, 6.0, acked=False), send(6.1, 11.1, acked=False), send(11.2, 11.3),
             send(90.0, 90.1)]
    gaps = ack_gaps(sends, samples, [])
    assert [round(g.seconds, 3) for g in gaps] == [0.1, 10.1, 0.1]
    assert len(check_gaps(gaps, BOUND)) == 1
    # sends never acknowledged again at the end of the run are a gap too
    tail = ack_gaps([send(0.0, 0.1), send(1.0, 9.0, acked=False)], samples, [])
    assert tail[-1] == Gap(8.0, 0.1, 9.0, TP, False)
    assert check_gaps(tail, BOUND)[0].detail.endswith("never acknowledged again (last send to t-0)")


def test_time_without_a_live_replica_is_left_out() -> None:
    # t-0's only ISR replica died: leader -1 from 2.0 s to 30.0 s; the send waited from 1.0 s to 31.0 s
    samples = [*every(0.2, 1.9), *[led(2.0 + i * 0.2, leader=-1, isr=(1,)) for i in range(140)], *[
        led(30.0 + i * 0.2) for i in range(20)]]
    gaps = ack_gaps([send(0.0, 0.1), send(1.0, 31.0)], samples, [])
    assert round(longest(gaps).seconds, 3) == 2.0  # type: ignore[union-attr]
    assert check_gaps(gaps, BOUND) == []
    # the same wait with a leader all along is over the bound: the exclusion is what made it pass
    assert len(check_gaps(ack_gaps([send(0.0, 0.1), send(1.0, 31.0)], every(0.2, 40.0), []), BOUND)) == 1


def test_the_outage_of_the_partitions_leader_is_left_out_until_it_is_registered_again() -> None:
    # leader 0 killed at 5.0 s; ZooKeeper names it leader until its session expires (8.0 s), then leader 1;
    # broker 0 is registered again at 25.0 s
    samples = [*every(0.2, 7.9), *[led(8.0 + i * 0.2, leader=1, isr=(1, 2)) for i in range(150)]]
    outages = [Outage(0, 5.0, 25.0, "sigkill")]
    assert unavailable(TP, samples, outages, [], 40.0) == [(float("-inf"), 0.0), (5.0, 25.0)]
    gaps = ack_gaps([send(0.0, 0.1), send(4.0, 26.0)], samples, outages)
    assert round(longest(gaps).seconds, 3) == 2.0  # type: ignore[union-attr]
    # a follower's outage leaves nothing out
    assert unavailable(TP, samples, [Outage(2, 5.0, 25.0, "sigkill")], [], 40.0) == [(float("-inf"), 0.0)]


def test_an_isr_below_min_insync_replicas_is_left_out() -> None:
    samples = [*every(0.2, 9.9), *[led(10.0 + i * 0.2, isr=(0,)) for i in range(100)]]
    sends = [send(0.0, 0.1), send(9.0, 30.0)]
    # min.insync.replicas=2 (set at 1.0 s): NOT_ENOUGH_REPLICAS from 10.0 s is Kafka's answer, not a stall
    settings = [MinIsrSetting(1.0, "t", 2)]
    assert round(longest(ack_gaps(sends, samples, [], settings)).seconds, 3) == 1.0  # type: ignore[union-attr]
    # with the default of 1 the single-replica ISR takes writes: the whole wait counts
    assert round(longest(ack_gaps(sends, samples, [])).seconds, 3) == 21.0  # type: ignore[union-attr]
    # a change to 1 is taken as the larger value for CONFIG_LAG_S after it
    lowered = [MinIsrSetting(1.0, "t", 2), MinIsrSetting(20.0, "t", 1)]
    assert unavailable(TP, samples, [], lowered, 40.0)[-1] == (10.0, 22.0)


def test_a_partition_not_yet_in_the_samples_is_unavailable() -> None:
    other = ("u", 0)
    samples = every(0.2, 5.0)  # only t-0 exists
    gaps = ack_gaps([send(0.0, 0.1), send(0.2, 20.0, tp=other)], samples, [])
    assert gaps == [Gap(0.1, 0.0, 0.1, TP, True), Gap(0.0, 0.1, 20.0, other, True)]
    assert ack_gaps([], samples, []) == []


def test_faults_struck_one_after_another_each_get_a_bound() -> None:
    """Chaos seed 4 (25 steps, ensemble 3): a follower cut off from its leader at 49.62 s for 4.8 s, leadership moved
    meanwhile, then the controller killed at 54.48 s before its LeaderAndIsr reached the cut-off broker: the produce
    sent at 49.75 s was acknowledged at 59.25 s, each stall within one bound."""
    gaps = [Gap(9.5, 49.75, 59.25, TP, True)]
    assert check_gaps(gaps, BOUND, fault_starts=[49.62, 54.48]) == []
    # one fault behind it: over its bound
    assert check_gaps(gaps, BOUND, fault_starts=[49.62])[0].detail.startswith(
        "9.5 s waiting on live leaders without an acknowledgement (bound 7.5 s), ")
    # a fault more than a bound before the gap began holds nothing back; one after its end neither
    assert len(check_gaps(gaps, BOUND, fault_starts=[40.0, 49.62, 60.0])) == 1
    # the 30 s stall of issue #26 stays a violation behind two faults
    stall = [Gap(30.0, 0.55, 31.0, TP, True)]
    assert check_gaps(stall, BOUND, fault_starts=[1.5, 5.0])[0].detail.startswith(
        "30.0 s waiting on live leaders without an acknowledgement (bound 15.0 s for 2 faults), ")
