"""Issue #19 on a real cluster: nothing acknowledged is lost when a follower's leader epoch is bumped and the leader
then dies (Kafka 2.6 truncates followers by OffsetsForLeaderEpoch, never to their high watermark on a bump).

3 broker processes, a topic with replication factor 3 and min.insync.replicas=2 led by a broker that is not the
controller. Records are produced with acks=all and acknowledged. The followers learn a new high watermark only from
their next fetch response, which a long replica.fetch.wait.max.ms holds back, so each follower holds acknowledged
records above its own high watermark. The leader is SIGSTOPped (it can neither answer nor be fetched from), a
reassignment to the same replicas makes the controller bump the leader epoch (B3: same leader, same ISR: what
reassignment A1 or another broker's controlled shutdown also send), the leader is SIGKILLed and the controller elects
the next ISR member. Every acknowledged record, offset and value, must be in the new leader's log. A follower that
truncated to its high watermark on the bump (what kactor did before) would be elected without them.
"""

from __future__ import annotations

import json
import signal

import pytest
from cluster_helpers import Cluster, produce, segment_records

from messages.common import Errors

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

TOPIC = "acked"


def test_epoch_bump_then_leader_death_keeps_every_acknowledged_record(start_cluster) -> None:
    # the followers' parked fetch (nothing new after the records) holds the new HW back for 20 s
    c: Cluster = start_cluster(3, overrides=("replica.fetch.wait.max.ms=20000", "replica.lag.time.max.ms=60000"))
    controller = c.controller_id()
    assert controller is not None
    leader, follower = (b for b in range(3) if b != controller)
    c.create_topic(TOPIC, assignment={0: [leader, follower, controller]}, configs={"min.insync.replicas": "2"})
    c.wait_partition(TOPIC, 0, lambda st: st["leader"] == leader and sorted(st["isr"]) == [0, 1, 2],
                     what=f"{TOPIC}-0 led by {leader} with ISR of all 3")

    acknowledged: dict[int, str] = {}
    for batch in (("a", "b"), ("c", "d", "e", "f")):
        answer = produce(c, TOPIC, 0, batch, acks=-1)
        assert answer.error == Errors.NONE, answer
        acknowledged.update({answer.base_offset + i: v for i, v in enumerate(batch)})
    assert acknowledged == {0: "a", 1: "b", 2: "c", 3: "d", 4: "e", 5: "f"}

    c.lc.signal_broker(leader, signal.SIGSTOP)
    before = c.partition_state(TOPIC, 0)
    assert before is not None and before["leader"] == leader
    c.zk.create("/admin/reassign_partitions", json.dumps(
        {"version": 1, "partitions": [{"topic": TOPIC, "partition": 0, "replicas": [leader, follower, controller]}]},
        separators=(",", ":")).encode())
    c.wait(lambda: not c.zk.exists("/admin/reassign_partitions"), what="the same-replicas reassignment completed")
    bumped = c.wait_partition(TOPIC, 0, lambda st: st["leader_epoch"] == before["leader_epoch"] + 1,
                              what="the leader epoch bumped by the reassignment")
    assert bumped["leader"] == leader and sorted(bumped["isr"]) == [0, 1, 2]  # only the epoch changed

    c.kill(leader)
    elected = c.wait_partition(TOPIC, 0, lambda st: st["leader"] == follower, timeout=60,
                               what=f"broker {follower} elected after broker {leader} died")
    assert elected["leader_epoch"] == bumped["leader_epoch"] + 1 and leader not in elected["isr"]

    def kept() -> dict[int, str] | None:
        records = {offset: value for offset, _epoch, value in segment_records(c, follower, TOPIC, 0)}
        return records if all(records.get(o) == v for o, v in acknowledged.items()) else None

    assert c.wait(kept, 30, f"every acknowledged record in broker {follower}'s log") is not None
    # offset, leader epoch and value exactly as the dead leader wrote them (followers keep the batches' epochs)
    written = [r for r in segment_records(c, leader, TOPIC, 0) if r[0] in acknowledged]
    assert [r for r in segment_records(c, follower, TOPIC, 0) if r[0] in acknowledged] == written
    assert [(o, v) for o, _e, v in written] == sorted(acknowledged.items())
    # the controller's broker (a follower of the new leader) keeps them too once it has truncated by epoch
    c.wait(lambda: [v for _o, _e, v in segment_records(c, controller, TOPIC, 0)][:6] == list(acknowledged.values()),
           30, f"every acknowledged record in broker {controller}'s log")
    answer = produce(c, TOPIC, 0, ("g",), acks=-1)
    assert answer.error == Errors.NONE and answer.base_offset == 6
