"""Ports of Kafka's PartitionTest (ISR / leadership scenarios, §11.15) to the ZooKeeper ISR path of 2.6.

AlterIsr-specific tests (3.0) are adapted to 2.6: the "AlterIsr request" is the leader's synchronous conditional write
of the partition state znode (ZkPartitionStateStore); on any failure (BADVERSION → INVALID_UPDATE_VERSION, NONODE →
UNKNOWN_TOPIC_OR_PARTITION, anything else) the ISR and zkVersion stay as they were, FailedIsrUpdatesPerSec is marked,
and nothing stays pending: the next fetch or isr-expiration run tries again.
"""

from __future__ import annotations

import json

import pytest

from core.broker.log_manager import LogManager
from core.broker.partition import CountingIsrChangeListener, Partition, submit_isr_updates
from kactor.records import values_batch
from messages.common import Errors, TopicPartition
from messages.zk import BADVERSION, ERROR, SetData
from protocol.zk.paths import TopicPartitionStateZNode
from tests.support.broker import broker_zk, drive, lai_state
from tests.support.fake_zookeeper import FakeZooKeeper

TP = TopicPartition("test-topic", 0)
LAG = 30000
T0 = 1_000_000.0


@pytest.fixture
def listener() -> CountingIsrChangeListener:
    return CountingIsrChangeListener()


@pytest.fixture
def partition(tmp_path, listener) -> Partition:
    return Partition(TP, 0, LogManager([str(tmp_path / "logs")]), LAG, listener, min_insync_replicas=1)


@pytest.fixture
def zk() -> FakeZooKeeper:
    z = broker_zk()
    z.put_partition_state(TP, leader=0, isr=[0], leader_epoch=0, controller_epoch=0)
    return z


def make_leader(p: Partition, epoch: int, isr, replicas, now=T0, zk_version=0, controller_epoch=0) -> bool:
    return p.make_leader(lai_state(TP, 0, epoch, isr, replicas, controller_epoch, zk_version, is_new=True), now)


def append(p: Partition, n: int, now=T0) -> int:
    return p.append_records_to_leader(values_batch([f"r{i}" for i in range(n)]), 1, now).first_offset


def fetch(p: Partition, follower: int, offset: int, now: float):
    """A follower fetch as the ReplicaManager performs it: update state, then the expansion check."""
    assert p.update_follower_fetch_state(follower, offset, 0, now, p.log_end_offset)
    return p.maybe_expand_isr(follower)


def test_makeFollowerWithNoLeaderIdChange(partition):
    """testMakeFollowerWithNoLeaderIdChange."""
    assert partition.make_follower(lai_state(TP, 1, 1, [0, 1], [0, 1], is_new=True), T0)
    assert partition.make_follower(lai_state(TP, 1, 4, [0, 1], [0, 1]), T0)  # same leader, new epoch
    assert not partition.make_follower(lai_state(TP, 1, 4, [0, 1], [0, 1]), T0)  # nothing changed
    assert partition.leader_replica_id == 1 and partition.get_leader_epoch() == 4
    assert partition.isr == ()  # a follower keeps no ISR


def test_followerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch(partition):
    """testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch."""
    make_leader(partition, 8, [0, 1], [0, 1, 2])
    append(partition, 3)
    assert fetch(partition, 1, 2, T0) is None  # HW 2
    assert partition.high_watermark == 2
    make_leader(partition, 10, [0, 1], [0, 1, 2])
    assert partition.leader_epoch_start_offset == 3
    append(partition, 2)  # LEO 5
    # follower 2 reaches the HW (2) but not the start offset of epoch 10 (3): not added
    assert fetch(partition, 2, 2, T0 + 1) is None
    assert partition.isr == (0, 1)
    proposal = fetch(partition, 2, 3, T0 + 2)
    assert proposal is not None and proposal.kind == "expand" and proposal.isr == (0, 1, 2)
    assert partition.isr == (0, 1)  # the ISR changes only when the write succeeds


def test_isrExpansion(partition, zk, listener):
    """testIsrExpansion."""
    make_leader(partition, 0, [0], [0, 1])
    append(partition, 10)
    assert partition.high_watermark == 10
    assert fetch(partition, 1, 3, T0 + 1) is None
    proposal = fetch(partition, 1, 10, T0 + 2)
    assert proposal is not None
    assert drive(submit_isr_updates([(partition, proposal)], T0 + 2), zk) == [True]
    assert partition.isr == (0, 1)
    assert partition.zk_version == 1
    assert listener.expands == 1 and listener.recorded == [TP]
    assert json.loads(zk.get(TopicPartitionStateZNode.path(TP))) == {
        "version": 1, "leader": 0, "leader_epoch": 0, "controller_epoch": 0, "isr": [0, 1]}


def test_isrNotExpandedIfUpdateFails(partition, zk, listener):
    """testIsrNotExpandedIfUpdateFails (2.6): the conditional write fails (INVALID_UPDATE_VERSION): ISR and zkVersion
    unchanged, FailedIsrUpdatesPerSec marked; the next fetch tries again (and fails again with the same cached
    zkVersion), and once a LeaderAndIsr brings the znode's version the write succeeds."""
    zk.nodes[TopicPartitionStateZNode.path(TP)].version = 7  # someone else (the controller) changed the znode
    make_leader(partition, 0, [0], [0, 1])
    append(partition, 10)
    proposal = fetch(partition, 1, 10, T0 + 1)
    assert drive(submit_isr_updates([(partition, proposal)], T0 + 1), zk) == [False]
    assert partition.isr == (0,) and partition.zk_version == 0
    assert listener.failures == 1 and listener.expands == 0 and listener.recorded == []
    retry = fetch(partition, 1, 10, T0 + 2)  # nothing pending: the next fetch tries again
    assert retry is not None and retry.zk_version == 0
    assert drive(submit_isr_updates([(partition, retry)], T0 + 2), zk) == [False]
    assert listener.failures == 2 and partition.isr == (0,)
    make_leader(partition, 1, [0], [0, 1], now=T0 + 3, zk_version=7)
    fresh = fetch(partition, 1, 10, T0 + 4)
    assert fresh is not None and fresh.zk_version == 7
    assert drive(submit_isr_updates([(partition, fresh)], T0 + 4), zk) == [True]
    assert partition.isr == (0, 1) and partition.zk_version == 8 and listener.expands == 1


def test_maybeShrinkIsr(partition, zk, listener):
    """testMaybeShrinkIsr."""
    make_leader(partition, 0, [0, 1], [0, 1])
    append(partition, 10)
    assert partition.high_watermark == 0  # the ISR follower has not fetched yet
    assert partition.maybe_shrink_isr(T0) is None  # just became leader: considered caught up
    proposal = partition.maybe_shrink_isr(T0 + LAG + 1)
    assert proposal is not None and proposal.isr == (0,)
    assert partition.high_watermark == 0  # follower 1 is still in the ISR until the write succeeds
    assert drive(submit_isr_updates([(partition, proposal)], T0 + LAG + 1), zk) == [True]
    assert partition.isr == (0,) and listener.shrinks == 1
    assert partition.high_watermark == 10


def test_alterIsrLeaderAndIsrRace(partition, zk):
    """testAlterIsrLeaderAndIsrRace (ZK adaptation): a LeaderAndIsr arrives while a shrink write is in flight; the
    write's late result is ignored, and shrinking proceeds from the new state."""
    make_leader(partition, 0, [0, 1], [0, 1])
    append(partition, 10)
    first = partition.maybe_shrink_isr(T0 + LAG + 1)
    gen = submit_isr_updates([(partition, first)], T0 + LAG + 1)
    batch = next(gen)  # in flight
    make_leader(partition, 1, [0, 1], [0, 1], now=T0 + LAG + 2, zk_version=0)
    assert partition.isr == (0, 1)
    with pytest.raises(StopIteration) as stop:
        gen.send(zk(batch))
    assert stop.value.value == [False]  # stale proposal: ignored
    assert partition.isr == (0, 1) and partition.zk_version == 0
    second = partition.maybe_shrink_isr(T0 + 2 * LAG + 3)
    assert second is not None and second.leader_epoch == 1
    zk.nodes[TopicPartitionStateZNode.path(TP)].version = 0
    assert drive(submit_isr_updates([(partition, second)], T0 + 2 * LAG + 3), zk) == [True]
    assert partition.isr == (0,)


def test_shouldNotShrinkIsrIfPreviousFetchIsCaughtUp(partition):
    """testShouldNotShrinkIsrIfPreviousFetchIsCaughtUp."""
    make_leader(partition, 0, [0, 1], [0, 1])
    append(partition, 10)
    fetch(partition, 1, 5, T0 + 20000)  # leader LEO 10 at this fetch
    append(partition, 5, T0 + 22000)
    fetch(partition, 1, 10, T0 + 25000)  # reached the LEO of the previous fetch: caught up as of T0+20000
    assert partition.remote_replicas[1].last_caught_up_time_ms == T0 + 20000
    assert partition.maybe_shrink_isr(T0 + LAG + 1) is None
    assert partition.maybe_shrink_isr(T0 + 20000 + LAG + 1) is not None


def test_shouldNotShrinkIsrIfFollowerCaughtUpToLogEnd(partition):
    """testShouldNotShrinkIsrIfFollowerCaughtUpToLogEnd."""
    make_leader(partition, 0, [0, 1], [0, 1])
    append(partition, 10)
    fetch(partition, 1, 10, T0 + 1)
    assert partition.maybe_shrink_isr(T0 + LAG + 2) is None
    assert partition.maybe_shrink_isr(T0 + 10 * LAG) is None  # LEO equal: never out of sync


def test_isrNotShrunkIfUpdateFails(partition, zk, listener):
    """testIsrNotShrunkIfUpdateFails."""
    zk.put_partition_state(TP, leader=0, isr=[0, 1], leader_epoch=0, controller_epoch=0, zk_version=3)
    make_leader(partition, 0, [0, 1], [0, 1])
    append(partition, 10)
    proposal = partition.maybe_shrink_isr(T0 + LAG + 1)
    assert drive(submit_isr_updates([(partition, proposal)], T0 + LAG + 1), zk) == [False]
    assert partition.isr == (0, 1) and partition.zk_version == 0
    assert partition.high_watermark == 0
    assert listener.failures == 1 and listener.shrinks == 0
    again = partition.maybe_shrink_isr(T0 + 2 * LAG)  # the next isr-expiration run tries again
    assert again is not None and again.isr == (0,)


def test_alterIsrUnknownTopic(partition, listener):
    """testAlterIsrUnknownTopic (2.6): the state znode is gone (NONODE): the update fails, ISR unchanged, and the
    next fetch tries again."""
    zk = broker_zk()  # no state znode
    make_leader(partition, 0, [0], [0, 1])
    append(partition, 10)
    proposal = fetch(partition, 1, 10, T0 + 1)
    assert drive(submit_isr_updates([(partition, proposal)], T0 + 1), zk) == [False]
    assert partition.isr == (0,) and listener.failures == 1
    assert fetch(partition, 1, 10, T0 + 2) is not None


def test_alterIsrInvalidVersion(partition, zk, listener):
    """testAlterIsrInvalidVersion (2.6): BADVERSION and the znode holds something else → failed, ISR and zkVersion
    unchanged; the next fetch writes again (here the znode's version matches again and it succeeds)."""
    make_leader(partition, 0, [0], [0, 1])
    append(partition, 10)
    proposal = fetch(partition, 1, 10, T0 + 1)
    zk.force[TopicPartitionStateZNode.path(TP)] = BADVERSION
    assert drive(submit_isr_updates([(partition, proposal)], T0 + 1), zk) == [False]
    assert partition.isr == (0,) and partition.zk_version == 0 and listener.failures == 1
    retry = fetch(partition, 1, 10, T0 + 2)
    assert drive(submit_isr_updates([(partition, retry)], T0 + 2), zk) == [True]
    assert partition.isr == (0, 1)


def test_alterIsrUnexpectedError(partition, zk, listener):
    """testAlterIsrUnexpectedError: any other failure drops the proposal, so the next fetch proposes again."""
    make_leader(partition, 0, [0], [0, 1])
    append(partition, 10)
    proposal = fetch(partition, 1, 10, T0 + 1)
    zk.force[TopicPartitionStateZNode.path(TP)] = ERROR
    assert drive(submit_isr_updates([(partition, proposal)], T0 + 1), zk) == [False]
    assert partition.isr == (0,) and listener.failures == 1
    retry = fetch(partition, 1, 10, T0 + 2)
    assert retry is not None
    assert drive(submit_isr_updates([(partition, retry)], T0 + 2), zk) == [True]
    assert partition.isr == (0, 1)


def test_failed_expansion_does_not_block_a_later_shrink(partition, zk, listener):
    """3.0's testSingleInFlightAlterIsr does not hold in 2.6: there is no in-flight ISR state. An expansion whose write
    failed leaves nothing behind, and the next isr-expiration run shrinks the ISR."""
    zk.put_partition_state(TP, leader=0, isr=[0, 1], leader_epoch=0, controller_epoch=0)
    make_leader(partition, 0, [0, 1], [0, 1, 2])
    append(partition, 10)
    expand = fetch(partition, 2, 10, T0 + 1)
    assert expand is not None and expand.isr == (0, 1, 2)
    zk.force[TopicPartitionStateZNode.path(TP)] = ERROR
    assert drive(submit_isr_updates([(partition, expand)], T0 + 1), zk) == [False]
    shrink = partition.maybe_shrink_isr(T0 + LAG + 1)  # follower 1 never fetched
    assert shrink is not None and shrink.isr == (0,)
    assert drive(submit_isr_updates([(partition, shrink)], T0 + LAG + 1), zk) == [True]
    assert partition.isr == (0,) and listener.failures == 1 and listener.shrinks == 1


def test_zkIsrManagerAsyncCallback(partition, listener):
    """testZkIsrManagerAsyncCallback: the ZK write succeeds → committed synchronously (ISR of 4); a write whose
    znode already holds the same content (duplicate) also completes instead of staying in flight."""
    zk = broker_zk()
    zk.put_partition_state(TP, leader=0, isr=[0, 1, 2], leader_epoch=0, controller_epoch=5)
    partition.make_leader(lai_state(TP, 0, 0, [0, 1, 2], [0, 1, 2, 3], controller_epoch=5, is_new=True), T0)
    append(partition, 4)
    for f in (1, 2):
        fetch(partition, f, 4, T0 + 1)
    proposal = fetch(partition, 3, 4, T0 + 2)
    assert drive(submit_isr_updates([(partition, proposal)], T0 + 2), zk) == [True]
    assert partition.isr == (0, 1, 2, 3)
    assert json.loads(zk.get(TopicPartitionStateZNode.path(TP)))["controller_epoch"] == 5
    # duplicate: the znode already has exactly the content we want, at a version we do not know
    zk.put_partition_state(TP, leader=0, isr=[0, 1, 2, 3], leader_epoch=1, controller_epoch=5, zk_version=9)
    partition.make_leader(lai_state(TP, 0, 1, [0, 1, 2], [0, 1, 2, 3], controller_epoch=5, zk_version=8), T0 + 3)
    for f in (1, 2):
        assert fetch(partition, f, 4, T0 + 4) is None  # already in the ISR
    dup = fetch(partition, 3, 4, T0 + 4)
    assert dup is not None and dup.isr == (0, 1, 2, 3)
    assert drive(submit_isr_updates([(partition, dup)], T0 + 4), zk) == [True]
    assert partition.isr == (0, 1, 2, 3) and partition.zk_version == 9


def test_atMinIsr(partition):
    """testAtMinIsr."""
    make_leader(partition, 0, [0], [0, 1, 2])
    assert partition.is_at_min_isr()
    assert partition.is_under_replicated


def test_isr_write_is_conditional_and_keeps_controller_epoch(partition):
    """The ISR write is one SetData on the state znode with expected version = cached zkVersion and the znode's
    controller_epoch = the controller epoch the broker last received for the partition (§1.3)."""
    zk = broker_zk()
    zk.put_partition_state(TP, leader=0, isr=[0], leader_epoch=3, controller_epoch=7, zk_version=4)
    partition.make_leader(lai_state(TP, 0, 3, [0], [0, 1], controller_epoch=7, zk_version=4, is_new=True), T0)
    append(partition, 1)
    proposal = fetch(partition, 1, 1, T0 + 1)
    drive(submit_isr_updates([(partition, proposal)], T0 + 1), zk)
    (op,) = zk.batches[0].ops
    assert isinstance(op, SetData) and op.version == 4 and op.path == "/brokers/topics/test-topic/partitions/0/state"
    # TopicPartitionStateZNode.encode, the controller's encoder too (ReplicationUtils.updateLeaderAndIsr)
    assert op.data == '{"controller_epoch":7,"leader":0,"version":1,"leader_epoch":3,"isr":[0,1]}'
    assert partition.zk_version == 5 and partition.leader_epoch == 3  # the leader epoch does not change


def test_high_watermark_counts_caught_up_out_of_isr_replicas(partition):
    """maybeIncrementLeaderHW (2.6): a replica outside the ISR that caught up within the lag time holds the HW."""
    make_leader(partition, 0, [0], [0, 1])
    append(partition, 10)
    proposal = fetch(partition, 1, 10, T0 + 1)  # caught up at T0+1 (expansion proposed, then dropped)
    partition.complete_isr_update(proposal, None, Errors.UNKNOWN_SERVER_ERROR, T0 + 1)
    assert partition.isr == (0,)
    append(partition, 5, T0 + 2)
    assert partition.high_watermark == 10  # replica 1 (not in ISR, but caught up recently) holds it
    partition.update_follower_fetch_state(1, 12, 0, T0 + 3, 15)
    assert partition.high_watermark == 12
    append(partition, 1, T0 + 3 + LAG + 1)  # replica 1 no longer caught up within the lag: ignored
    assert partition.high_watermark == 16


def test_failed_update_leaves_isr_and_zk_version_and_nothing_pending(partition, listener):
    """complete_isr_update contract (2.6 maybeUpdateIsrAndVersion): a failure (here UNKNOWN_TOPIC_OR_PARTITION, what
    submit_isr_updates maps NONODE to) changes neither ISR nor zkVersion, marks FailedIsrUpdatesPerSec once, and the
    follower's next fetch proposes the same expansion again."""
    make_leader(partition, 0, [0], [0, 1], zk_version=3)
    append(partition, 1)
    proposal = fetch(partition, 1, 1, T0 + 1)
    assert not partition.complete_isr_update(proposal, None, Errors.UNKNOWN_TOPIC_OR_PARTITION, T0 + 1)
    assert partition.isr == (0,) and partition.zk_version == 3
    assert listener.failures == 1 and listener.recorded == []
    again = fetch(partition, 1, 1, T0 + 2)
    assert again is not None and again.isr == (0, 1) and again.zk_version == 3
