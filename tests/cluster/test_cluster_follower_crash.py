"""A follower SIGKILLed under an acks=all producer (issue #26, audit divergence 2).

The controller removes the dead follower from the ISR once its ZooKeeper session expires (a LeaderAndIsr to the
leader: same leader, epoch + 1, smaller ISR). Kafka 2.6.3's Partition.makeLeader then advances the high watermark and
completes the parked acks=all produce at once; a leader that does not waits for the produce's timeout (30 s), and
the producer's retry of a request that was in fact committed writes its records twice.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from cluster_helpers import TEST_SESSION_TIMEOUT_MS, Cluster
from kafka_clients_helpers import OVERRIDES, ProducerThread, bootstrap, read_partition

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

# what issue #26 allows between two acknowledgements across the crash: the session timeout (the controller learns
# of the death when the session expires) plus 2 s for the controller's LeaderAndIsr and the producer's round-trip
MAX_ACK_GAP_S = TEST_SESSION_TIMEOUT_MS / 1000 + 2


class TimedProducer(ProducerThread):
    """ProducerThread that also keeps when each acknowledgement arrived (time.monotonic)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ack_times: list[float] = []

    def _report(self, error: Any, msg: Any) -> None:
        super()._report(error, msg)
        if error is None:
            with self._lock:
                self.ack_times.append(time.monotonic())


def test_a_follower_sigkill_stalls_acks_all_only_until_the_controller_shrinks_the_isr(start_cluster) -> None:
    """One request in flight (max.in.flight=1, no idempotence, librdkafka's retries on): the follower of the
    partition is SIGKILLed. The longest gap between two acknowledgements is at most the session timeout + 2 s,
    the ISR ends as [leader], and a consumer reads back every acknowledged record at its offset, each once."""
    c: Cluster = start_cluster(3, overrides=OVERRIDES, killed_under_load=True)
    controller = c.controller_id()
    leader, follower = [b for b in (0, 1, 2) if b != controller]  # the controller stays up: one failover only
    c.create_topic("crash", assignment={0: [leader, follower]})
    c.wait_partition("crash", 0, lambda s: s["isr"] == [leader, follower] and s["leader"] == leader,
                     what="leader and follower in the ISR")
    producer = TimedProducer(bootstrap(c), "crash", extra={
        "max.in.flight.requests.per.connection": 1, "enable.idempotence": False, "linger.ms": 5}).start()
    try:
        seen = producer.wait_acks(c, 100, "before the crash")
        killed_at = time.monotonic()
        c.kill(follower)
        c.wait_partition("crash", 0, lambda s: s["isr"] == [leader], 60, f"broker {follower} out of the ISR")
        producer.wait_acks(c, seen + 100, "after the ISR shrank")
    finally:
        producer.stop()
    assert producer.failed == []
    times = producer.ack_times
    gaps = [(b - a, a) for a, b in zip(times, times[1:], strict=False) if b >= killed_at]
    longest, at = max(gaps)
    print(f"longest gap between acknowledgements across the crash: {longest:.1f} s "
          f"({at - killed_at:+.1f} s after the kill)")
    assert longest <= MAX_ACK_GAP_S, f"acks stalled {longest:.1f} s (allowed {MAX_ACK_GAP_S} s)"
    rows = read_partition(bootstrap(c), "crash", 0)
    values = [v for _, v in rows]
    assert len(set(values)) == len(values), \
        f"duplicates read back: {sorted(v for v in set(values) if values.count(v) > 1)[:5]}"
    log = dict(rows)
    missing = [(o, v) for o, v in producer.acked if log.get(o) != v]
    assert missing == [], f"{len(missing)} acknowledged records not at their offsets: {missing[:5]}"
