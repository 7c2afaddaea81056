"""The longest acknowledgement gap of a chaos run's producer, and its bound (pure functions over the history).

The producer sends one batch at a time (kactor/chaos/runner.py), so a gap is the time it spent inside its sends
between two acknowledgements: the pauses between sends and its consumer's reads are not waiting for an
acknowledgement and are not counted. Nor is the time a send spent on a partition that could not take an acks=all
write, whatever the brokers did: its sampled state had no leader (no replica alive, or not yet created), its ISR
was below the topic's min.insync.replicas (NOT_ENOUGH_REPLICAS is Kafka's answer there), or its leader was a
broker the run had taken down (killed, stopped, frozen, log dir broken) — the whole outage of that broker, until
the runner saw it registered again. What is left is the time the producer waited on a live leader: a follower
crashing, frozen or cut off, a controller dying elsewhere. Kafka answers those within the bound below.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

import attrs

from kactor.chaos.history import TP, MinIsrSetting, Outage, Sample, Send, Violation

# The margin over the failure detection: the controller's election and LeaderAndIsr, the ISR znode write, the
# leader completing the delayed produce, the client's retry backoff and metadata refresh, and ZooKeeper expiring
# a session up to a tick or two late; loose, for 2 busy cores running every process of the cluster.
ELECTION_MARGIN_S = 3.0
# A min.insync.replicas change reaches the leaders through the config change notification: for this long after
# it, the larger of the old and new values is taken.
CONFIG_LAG_S = 2.0
DEFAULT_MIN_ISR = 1  # Kafka 2.6's min.insync.replicas

Interval = tuple[float, float]


def gap_bound_s(session_timeout_ms: int, replica_lag_time_max_ms: int, margin_s: float = ELECTION_MARGIN_S) -> float:
    """The longest a producer may wait on a live leader: until the replica that holds the acknowledgement back
    leaves the ISR, plus the margin. A crashed or frozen follower leaves it when its ZooKeeper session expires
    (zookeeper.session.timeout.ms; the controller shrinks the ISR); one cut off from the leader when the leader's
    "isr-expiration" task (every replica.lag.time.max.ms / 2) finds it behind for replica.lag.time.max.ms, so
    within 1.5 x replica.lag.time.max.ms (Kafka's ReplicaManager.maybeShrinkIsr)."""
    return max(session_timeout_ms, 1.5 * replica_lag_time_max_ms) / 1000.0 + margin_s


@attrs.frozen(slots=True)
class Gap:
    """Seconds of waiting on live leaders between two acknowledgements (``acked`` False: after the last one,
    the run's last sends never acknowledged); ``start``-``end``: the run's time span, ``tp`` the last send's."""

    seconds: float
    start: float
    end: float
    tp: TP
    acked: bool


def _merge(intervals: Iterable[Interval]) -> list[Interval]:
    out: list[Interval] = []
    for a, b in sorted(intervals):
        if b <= a:
            continue
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _min_isr_at(settings: Sequence[MinIsrSetting], t: float) -> int:
    """The topic's min.insync.replicas at ``t``: the larger of the values in force at ``t`` and CONFIG_LAG_S before."""
    def in_force(at: float) -> int:
        value = DEFAULT_MIN_ISR
        for s in settings:
            if s.ts <= at:
                value = s.value
        return value
    return max(in_force(t), in_force(t - CONFIG_LAG_S))


def unavailable(tp: TP, samples: Sequence[Sample], outages: Sequence[Outage],
                min_isr: Sequence[MinIsrSetting], end: float) -> list[Interval]:
    """When ``tp`` could take no acks=all write, up to ``end`` (merged, sorted). A sample's state holds until the
    next sample; before the first sample nothing is known and the partition counts as unavailable."""
    settings = [s for s in min_isr if s.topic == tp[0]]
    out: list[Interval] = []
    ordered = sorted(samples, key=lambda s: s.ts)
    first = ordered[0].ts if ordered else end
    out.append((float("-inf"), first))
    for i, s in enumerate(ordered):
        until = ordered[i + 1].ts if i + 1 < len(ordered) else end
        p = s.partitions.get(tp)
        needed = max(_min_isr_at(settings, s.ts), _min_isr_at(settings, until))
        if p is None or p.leader < 0 or len(p.isr) < needed:
            out.append((s.ts, until))
    times = [s.ts for s in ordered]
    for o in outages:
        o_end = end if o.end is None else o.end
        # the leader when the fault struck (the last sample before it) and any sampled during the outage
        lo = max(0, bisect.bisect_right(times, o.start) - 1)
        hi = bisect.bisect_right(times, o_end)
        led = any((p := s.partitions.get(tp)) is not None and p.leader == o.broker for s in ordered[lo:hi])
        if led:
            out.append((o.start, o_end))
    return _merge(out)


def _available_time(a: float, b: float, holes: Sequence[Interval]) -> float:
    """The length of [a, b] outside ``holes`` (merged, sorted)."""
    total = max(0.0, b - a)
    for lo, hi in holes:
        if hi <= a:
            continue
        if lo >= b:
            break
        total -= min(b, hi) - max(a, lo)
    return max(0.0, total)


def ack_gaps(sends: Sequence[Send], samples: Sequence[Sample], outages: Sequence[Outage],
             min_isr: Sequence[MinIsrSetting] = ()) -> list[Gap]:
    """Every gap of the producer, in order: the time inside its sends, off the unavailable windows of the
    partition each send went to, from one acknowledgement to the next (and after the last, if it kept sending)."""
    ordered = sorted(sends, key=lambda s: s.start)
    if not ordered:
        return []
    end = max(s.end for s in ordered)
    holes: dict[TP, list[Interval]] = {}
    gaps: list[Gap] = []
    counted = 0.0
    since = ordered[0].start
    for s in ordered:
        tp = (s.topic, s.partition)
        if tp not in holes:
            holes[tp] = unavailable(tp, samples, outages, min_isr, end)
        counted += _available_time(s.start, s.end, holes[tp])
        if s.acked:
            gaps.append(Gap(counted, since, s.end, tp, True))
            counted, since = 0.0, s.end
    if not ordered[-1].acked:
        last = ordered[-1]
        gaps.append(Gap(counted, since, last.end, (last.topic, last.partition), False))
    return gaps


def longest(gaps: Sequence[Gap]) -> Gap | None:
    return max(gaps, key=lambda g: g.seconds, default=None)


def faults_behind(gap: Gap, fault_starts: Sequence[float], bound_s: float) -> int:
    """How many of the run's faults may hold ``gap`` back: those struck while it ran or within one bound before it
    began (a fault's effect outlives its heal: a restarted broker rejoins the ISR later, a LeaderAndIsr its
    controller could not deliver across a partition is never delivered if that controller is killed next); at
    least 1."""
    return max(1, sum(1 for t in fault_starts if gap.start - bound_s < t <= gap.end))


def check_gaps(gaps: Sequence[Gap], bound_s: float, fault_starts: Sequence[float] = ()) -> list[Violation]:
    """A violation for each gap over its bound: ``bound_s`` for each fault behind it (`faults_behind`). Faults
    struck one after another stall a produce one after another, in Kafka too: a follower cut off for 4.8 s, then
    the controller killed before its LeaderAndIsr reached it (chaos seed 4: 9.5 s, the two within 7.5 s each)."""
    out = []
    for g in gaps:
        k = faults_behind(g, fault_starts, bound_s)
        if g.seconds > k * bound_s:
            ended = f"acknowledged on {g.tp[0]}-{g.tp[1]}" if g.acked else \
                f"never acknowledged again (last send to {g.tp[0]}-{g.tp[1]})"
            behind = "" if k == 1 else f" for {k} faults"
            out.append(Violation("gap", f"{g.seconds:.1f} s waiting on live leaders without an acknowledgement "
                                        f"(bound {k * bound_s:.1f} s{behind}), {g.start:.1f}-{g.end:.1f}s of the run, "
                                        f"{ended}"))
    return out
