"""Follower truncation by leader epoch (Kafka 2.6, KIP-101/KIP-279): ports of the truncation cases of
AbstractFetcherThreadTest and ReplicaFetcherThreadTest, the leader's OffsetsForLeaderEpoch answers
(Partition.lastOffsetForLeaderEpoch), and issue #19's scenario — a follower whose leader epoch is only bumped keeps
every acknowledged record and, elected after the leader dies, still has them.

Leader and followers are real core ReplicaManagers over real logs in a temp dir, exchanging the requests the
PartitionActor would carry; ZooKeeper is the in-memory FakeZooKeeper (tests/support/fake_zookeeper.py)."""

from __future__ import annotations

import pytest

from core.broker.fetcher_state import FETCHING, TRUNCATING, OffsetTruncationState, offset_truncation_state
from core.broker.leader_epoch_cache import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
from core.broker.replica_manager import ReplicaManager
from kactor.records import values_batch
from messages.common import Errors, TopicPartition
from messages.replication import (
    DEBUGGING_REPLICA_ID,
    FetchResponse,
    OffsetForLeaderPartition,
    OffsetForLeaderPartitionResult,
    OffsetForLeaderTopic,
    OffsetForLeaderTopicResult,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
)
from tests.support.broker import (
    broker_zk,
    drive,
    emitted,
    lai_request,
    lai_state,
    log_records,
    log_values,
    make_rm,
    produce_request,
    settle_truncation,
)
from tests.support.fake_zookeeper import FakeZooKeeper

TP = TopicPartition("topic", 0)
T0 = 1_000_000.0


def become(rm: ReplicaManager, *states, zk: FakeZooKeeper | None = None, now: float = T0):
    return drive(rm.handle_leader_and_isr(lai_request(states), now), zk)


def seed_log(rm: ReplicaManager, records: list[str], runs: tuple[tuple[int, int], ...], hw: int = 0) -> None:
    """The broker's log of TP before it hears of the partition: ``records`` in (epoch, base offset) runs, one batch
    per record (so that any offset is a batch boundary a log can be truncated to)."""
    log = rm.log_manager.get_or_create_log(TP, is_new=True)
    ends = [o for _, o in runs[1:]] + [len(records)]
    log.append_as_follower(b"".join(values_batch([records[i]], 0, base_offset=i, leader_epoch=e)
                                    for (e, o), end in zip(runs, ends, strict=True) for i in range(o, end)))
    log.update_high_watermark(hw)


def answer(rm: ReplicaManager, request: OffsetsForLeaderEpochRequest) -> OffsetsForLeaderEpochResponse:
    return drive(rm.handle_offsets_for_leader_epoch(request, T0))


def one(error: Errors, epoch: int, end_offset: int, topic: str = TP.topic, partition: int = 0
        ) -> OffsetsForLeaderEpochResponse:
    return OffsetsForLeaderEpochResponse((OffsetForLeaderTopicResult(topic, (
        OffsetForLeaderPartitionResult(error, partition, epoch, end_offset),)),))


def asked(request: OffsetsForLeaderEpochRequest) -> list[tuple[str, int, int, int]]:
    return [(t.topic, q.partition, q.current_leader_epoch, q.leader_epoch) for t in request.topics
            for q in t.partitions]


def fetch_round(zk: FakeZooKeeper, leader: ReplicaManager, follower: ReplicaManager, leader_id: int, now: float,
                client_effects: list | None = None) -> None:
    """One fetch of the follower from the leader; what the leader emits to others (produce acks) goes to
    ``client_effects``."""
    request = follower.fetch_request_for(leader_id)
    effects: list = []
    response = drive(leader.handle_fetch(request, now, "f"), zk, effects)
    if response is None:
        drive(leader.expire_delayed_operations(now + request.max_wait_ms), zk, effects)
        (response,) = emitted(effects, "f")
    assert isinstance(response, FetchResponse)
    if client_effects is not None:
        client_effects.extend(e for e in effects if getattr(e, "reply_to", "f") != "f")
    drive(follower.handle_fetch_response(leader_id, response, now), zk)


# ---------------------------------------------------------------------------------- the decision (pure function)


def _ends(table: dict[int, tuple[int, int]]):
    return lambda epoch: table.get(epoch)


@pytest.mark.parametrize(("leader_epoch", "leader_end", "follower_ends", "expected"), [
    # UNDEFINED_EPOCH_OFFSET: the leader cannot place our epoch → the fetch offset (our high watermark)
    (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, {}, OffsetTruncationState(3, True)),
    # an offset without an epoch (pre-2.0 leader) → min(its offset, our LEO)
    (UNDEFINED_EPOCH, 7, {}, OffsetTruncationState(7, True)),
    (UNDEFINED_EPOCH, 70, {}, OffsetTruncationState(10, True)),
    # the same epoch known to both → min(leader's end, ours, our LEO)
    (5, 6, {5: (8, 5)}, OffsetTruncationState(6, True)),
    (5, 9, {5: (8, 5)}, OffsetTruncationState(8, True)),
    # the leader's epoch is unknown to us: our end of the largest epoch below it, and ask again (KIP-279)
    (4, 9, {4: (6, 3)}, OffsetTruncationState(6, False)),
    # we know no epoch ≤ the leader's → min(its offset, our LEO)
    (1, 4, {}, OffsetTruncationState(4, True)),
])
def test_offset_truncation_state(leader_epoch, leader_end, follower_ends, expected):
    """AbstractFetcherThread.getOffsetTruncationState: fetch offset 3, follower LEO 10."""
    assert offset_truncation_state(leader_epoch, leader_end, 3, 10, _ends(follower_ends)) == expected


# ---------------------------------------------------------------------------------------- AbstractFetcherThreadTest


def test_truncation_multiple_rounds_to_diverging_point(tmp_path):
    """AbstractFetcherThreadTest.testTruncation: replica log epochs 0,2,4 and leader log epochs 1,3,5 (one record
    each): three OffsetsForLeaderEpoch rounds (two of them intermediate, KIP-279) truncate the replica to 0, then
    it fetches the leader's log and both logs end up equal, epochs included."""
    zk = broker_zk()
    leader, follower = make_rm(tmp_path, 0), make_rm(tmp_path, 1)
    seed_log(leader, ["a", "b", "c"], ((1, 0), (3, 1), (5, 2)), hw=2)
    seed_log(follower, ["a", "b", "c"], ((0, 0), (2, 1), (4, 2)), hw=0)
    state = lai_state(TP, 0, 5, [0, 1], [0, 1])
    become(leader, state, zk=zk)
    become(follower, state, zk=zk)
    assert follower.fetch_states[TP].state == TRUNCATING and follower.fetch_states[TP].fetch_offset == 0
    requests = []
    while (request := follower.epoch_request_for(0)) is not None:
        requests.append(asked(request))
        drive(follower.handle_epoch_response(0, answer(leader, request), T0), zk)
    assert requests == [[("topic", 0, 5, 4)], [("topic", 0, 5, 2)], [("topic", 0, 5, 0)]]
    fp = follower.online_partition(TP)
    assert fp.log.log_end_offset == 0 and follower.fetch_states[TP].state == FETCHING
    fetch_round(zk, leader, follower, 0, T0 + 1)
    assert log_records(fp.log) == [(0, 1, "a"), (1, 3, "b"), (2, 5, "c")]
    assert fp.log.leader_epoch_entries == leader.online_partition(TP).log.leader_epoch_entries == (
        (1, 0), (3, 1), (5, 2))


def test_truncate_to_high_watermark_if_leader_epoch_info_not_available(tmp_path):
    """AbstractFetcherThreadTest.testTruncateToHighWatermarkIfLeaderEpochInfoNotAvailable: the leader answers
    (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET) → truncate to the high watermark and fetch."""
    follower = make_rm(tmp_path, 1)
    seed_log(follower, ["a", "b", "c"], ((0, 0), (2, 1), (4, 2)), hw=2)
    become(follower, lai_state(TP, 0, 5, [0, 1], [0, 1]))
    request = follower.epoch_request_for(0)
    assert asked(request) == [("topic", 0, 5, 4)]
    drive(follower.handle_epoch_response(0, one(Errors.NONE, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET), T0))
    assert follower.online_partition(TP).log.log_end_offset == 2
    assert follower.fetch_states[TP].fetch_offset == 2 and follower.fetch_states[TP].is_ready_for_fetch


def test_truncate_to_high_watermark_if_no_leader_epochs(tmp_path):
    """maybeTruncate's partitionsWithoutEpochs: a log with no leader-epoch entries is truncated to its high
    watermark without asking the leader."""
    follower = make_rm(tmp_path, 1)
    log = follower.log_manager.get_or_create_log(TP, is_new=True)
    log.append_as_follower(b"".join(values_batch([v], base_offset=o, leader_epoch=UNDEFINED_EPOCH)
                                    for o, v in enumerate("abc")))  # records without an epoch (old format)
    log.update_high_watermark(1)
    become(follower, lai_state(TP, 0, 5, [0, 1], [0, 1]))
    assert log.latest_epoch is None
    assert follower.epoch_request_for(0) is None
    assert log.log_end_offset == 1 and follower.fetch_states[TP].is_ready_for_fetch


def test_leader_epoch_change_during_epoch_request_ignores_the_answer(tmp_path):
    """AbstractFetcherThreadTest.testLeaderEpochChangeDuringSuccessfulFetchEpochsFromLeader: the follower's leader
    epoch changes while OffsetsForLeaderEpoch is out: the answer (for epoch 5) is ignored, the partition stays
    truncating and is asked again under epoch 6."""
    follower = make_rm(tmp_path, 1)
    seed_log(follower, ["a", "b", "c"], ((4, 0),), hw=1)
    become(follower, lai_state(TP, 0, 5, [0, 1], [0, 1]))
    first = follower.epoch_request_for(0)
    become(follower, lai_state(TP, 0, 6, [0, 1], [0, 1]))
    drive(follower.handle_epoch_response(0, one(Errors.NONE, 4, 1), T0))
    assert follower.online_partition(TP).log.log_end_offset == 3  # not truncated by the stale answer
    assert follower.fetch_states[TP].state == TRUNCATING
    assert asked(first) == [("topic", 0, 5, 4)] and asked(follower.epoch_request_for(0)) == [("topic", 0, 6, 4)]


def test_fenced_truncation_removes_the_partition_from_the_fetcher(tmp_path):
    """AbstractFetcherThreadTest.testFencedTruncation (2.6 onPartitionFenced → markPartitionFailed): FENCED_LEADER_EPOCH
    takes the partition out of the fetcher until the next LeaderAndIsr; nothing is truncated."""
    zk = broker_zk()
    leader, follower = make_rm(tmp_path, 0), make_rm(tmp_path, 1)
    seed_log(follower, ["a", "b"], ((0, 0),), hw=0)
    become(leader, lai_state(TP, 0, 1, [0], [0, 1], is_new=True), zk=zk)
    become(follower, lai_state(TP, 0, 0, [0, 1], [0, 1]), zk=zk)
    response = answer(leader, follower.epoch_request_for(0))
    assert response == one(Errors.FENCED_LEADER_EPOCH, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
    drive(follower.handle_epoch_response(0, response, T0), zk)
    assert TP not in follower.fetch_states and follower.online_partition(TP).log.log_end_offset == 2


def test_unrequested_partitions_in_the_answer_are_ignored(tmp_path):
    """AbstractFetcherThreadTest.testTruncationThrowsExceptionIfLeaderReturnsPartitionsNotRequestedInFetchEpochs:
    Kafka throws; here a partition the follower did not ask about changes nothing."""
    follower = make_rm(tmp_path, 1)
    seed_log(follower, ["a", "b"], ((0, 0),), hw=0)
    become(follower, lai_state(TP, 0, 1, [0, 1], [0, 1]))
    follower.epoch_request_for(0)
    drive(follower.handle_epoch_response(0, one(Errors.NONE, 0, 0, partition=7), T0))
    assert follower.online_partition(TP).log.log_end_offset == 2 and follower.fetch_states[TP].state == TRUNCATING


# ----------------------------------------------------------------------------------------- ReplicaFetcherThreadTest


def test_fetch_leader_epoch_only_while_truncating(tmp_path):
    """ReplicaFetcherThreadTest.shouldFetchLeaderEpochOnFirstFetchOnlyIfLeaderEpochKnownToBoth and
    shouldMovePartitionsOutOfTruncatingLogState: one OffsetsForLeaderEpoch (no fetch while it is out), then only
    fetches."""
    zk = broker_zk()
    leader, follower = make_rm(tmp_path, 0), make_rm(tmp_path, 1)
    seed_log(leader, ["a", "b"], ((0, 0),), hw=2)
    seed_log(follower, ["a", "b"], ((0, 0),), hw=1)
    state = lai_state(TP, 0, 1, [0, 1], [0, 1])
    become(leader, state, zk=zk)
    become(follower, state, zk=zk)
    request = follower.next_request_for(0)
    assert isinstance(request, OffsetsForLeaderEpochRequest) and request.replica_id == 1
    assert follower.next_request_for(0) is None  # waiting for the answer
    drive(follower.handle_epoch_response(0, answer(leader, request), T0), zk)
    assert follower.online_partition(TP).log.log_end_offset == 2
    assert follower.fetch_states[TP].state == FETCHING
    assert follower.epoch_request_for(0) is None
    assert follower.next_request_for(0).partitions[0].fetch_offset == 2


def test_truncate_to_offset_specified_in_epoch_offset_response(tmp_path):
    """ReplicaFetcherThreadTest.shouldTruncateToOffsetSpecifiedInEpochOffsetResponse: same epoch on both sides,
    the leader's end is below ours → truncate to it."""
    follower = make_rm(tmp_path, 1)
    seed_log(follower, [str(i) for i in range(10)], ((5, 0),), hw=2)
    become(follower, lai_state(TP, 0, 6, [0, 1], [0, 1]))
    follower.epoch_request_for(0)
    drive(follower.handle_epoch_response(0, one(Errors.NONE, 5, 6), T0))
    assert follower.online_partition(TP).log.log_end_offset == 6 and follower.fetch_states[TP].fetch_offset == 6


def test_truncate_when_leader_answers_an_epoch_below_all_of_ours(tmp_path):
    """ReplicaFetcherThreadTest.shouldTruncateToOffsetSpecifiedInEpochOffsetResponseIfFollowerHasNoMoreEpochs, with
    a real cache instead of the test's mock: the leader answers epoch 3, below every epoch we know (5 from offset
    2); our LeaderEpochFileCache places the end of epoch 3 at the start of our first epoch (2), so we truncate to
    min(2, the leader's 4) = 2; a follower with no epoch ≤ 3 at all (None) would take the leader's offset."""
    follower = make_rm(tmp_path, 1)
    seed_log(follower, [str(i) for i in range(10)], ((UNDEFINED_EPOCH, 0), (5, 2)), hw=1)
    become(follower, lai_state(TP, 0, 6, [0, 1], [0, 1]))
    assert follower.online_partition(TP).log.end_offset_for_epoch(3) == (2, 3)
    follower.epoch_request_for(0)
    drive(follower.handle_epoch_response(0, one(Errors.NONE, 3, 4), T0))
    assert follower.online_partition(TP).log.log_end_offset == 2 and follower.fetch_states[TP].is_ready_for_fetch


def test_fetch_leader_epoch_second_time_if_leader_replies_with_epoch_not_known_to_follower(tmp_path):
    """ReplicaFetcherThreadTest.shouldFetchLeaderEpochSecondTimeIfLeaderRepliesWithEpochNotKnownToFollower: we
    know epochs 1 and 3, the leader answers epoch 2 → truncate to our end of epoch 1 and ask again with epoch 1."""
    follower = make_rm(tmp_path, 1)
    seed_log(follower, [str(i) for i in range(10)], ((1, 0), (3, 5)), hw=0)
    become(follower, lai_state(TP, 0, 4, [0, 1], [0, 1]))
    assert asked(follower.epoch_request_for(0)) == [("topic", 0, 4, 3)]
    drive(follower.handle_epoch_response(0, one(Errors.NONE, 2, 8), T0))
    log = follower.online_partition(TP).log
    assert log.log_end_offset == 5 and follower.fetch_states[TP].state == TRUNCATING
    assert asked(follower.epoch_request_for(0)) == [("topic", 0, 4, 1)]
    drive(follower.handle_epoch_response(0, one(Errors.NONE, 1, 3), T0))
    assert log.log_end_offset == 3 and follower.fetch_states[TP].is_ready_for_fetch


def test_poll_indefinitely_if_leader_returns_any_error(tmp_path):
    """ReplicaFetcherThreadTest.shouldPollIndefinitelyIfLeaderReturnsAnyException: NOT_LEADER_FOR_PARTITION (and any
    error but FENCED) → nothing truncated, still truncating, asked again."""
    follower = make_rm(tmp_path, 1)
    seed_log(follower, ["a", "b", "c"], ((0, 0),), hw=1)
    become(follower, lai_state(TP, 0, 1, [0, 1], [0, 1]))
    for error in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.UNKNOWN_LEADER_EPOCH, Errors.UNKNOWN_TOPIC_OR_PARTITION):
        follower.epoch_request_for(0)
        assert drive(follower.handle_epoch_response(0, one(error, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET), T0)) == 1
        assert follower.online_partition(TP).log.log_end_offset == 3 and follower.fetch_states[TP].is_truncating
    follower.epoch_request_for(0)
    drive(follower.handle_epoch_response(0, one(Errors.NONE, 0, 2), T0))
    assert follower.online_partition(TP).log.log_end_offset == 2 and follower.fetch_states[TP].is_ready_for_fetch


def test_failed_request_is_sent_again(tmp_path):
    """A request with no answer (connection lost): the partitions stay truncating and are asked again."""
    follower = make_rm(tmp_path, 1)
    seed_log(follower, ["a"], ((0, 0),), hw=0)
    become(follower, lai_state(TP, 0, 1, [0, 1], [0, 1]))
    first = follower.epoch_request_for(0)
    follower.fetch_failed(0)
    assert follower.epoch_request_for(0) == first


def test_filter_partitions_made_leader_during_leader_epoch_request(tmp_path):
    """ReplicaFetcherThreadTest.shouldFilterPartitionsMadeLeaderDuringLeaderEpochRequest: the partition became
    leader while the request was out: the answer does not truncate the leader's log."""
    follower = make_rm(tmp_path, 1)
    seed_log(follower, ["a", "b", "c"], ((0, 0),), hw=0)
    become(follower, lai_state(TP, 0, 1, [0, 1], [0, 1]))
    follower.epoch_request_for(0)
    become(follower, lai_state(TP, 1, 2, [1], [0, 1]))
    drive(follower.handle_epoch_response(0, one(Errors.NONE, 0, 0), T0))
    assert follower.online_partition(TP).log.log_end_offset == 3 and TP not in follower.fetch_states


# ---------------------------------------------------------------------------------- the leader's answers


def test_leader_answers_from_its_leader_epoch_cache(tmp_path):
    """Partition.lastOffsetForLeaderEpoch on the leader: the end of the largest epoch ≤ the one asked; its own
    (current) epoch ends at its LEO; an epoch below all → the first epoch's start; checked against the current
    leader epoch (FENCED / UNKNOWN_LEADER_EPOCH); any request to a non-leader → NOT_LEADER_FOR_PARTITION;
    an unknown partition → UNKNOWN_TOPIC_OR_PARTITION."""
    leader = make_rm(tmp_path, 0)
    seed_log(leader, ["a", "b", "c", "d"], ((1, 0), (3, 2)), hw=4)
    become(leader, lai_state(TP, 0, 5, [0], [0, 1]))
    assert leader.online_partition(TP).log.leader_epoch_entries == ((1, 0), (3, 2), (5, 4))
    leader.online_partition(TP).append_records_to_leader(values_batch(["e"]), 1, T0)

    def ask(current: int, epoch: int, topic: str = TP.topic, replica_id: int = 1):
        request = OffsetsForLeaderEpochRequest((OffsetForLeaderTopic(topic, (
            OffsetForLeaderPartition(0, current, epoch),)),), replica_id)
        (result,) = answer(leader, request).topics[0].partitions
        return result.error_code, result.leader_epoch, result.end_offset

    assert ask(5, 1) == (Errors.NONE, 1, 2)
    assert ask(5, 2) == (Errors.NONE, 1, 2)
    assert ask(5, 3) == (Errors.NONE, 3, 4)
    assert ask(5, 4) == (Errors.NONE, 3, 4)
    assert ask(5, 5) == (Errors.NONE, 5, 5)  # the latest epoch: the log end offset
    assert ask(5, 0) == (Errors.NONE, 0, 0)
    assert ask(5, 6) == (Errors.NONE, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
    assert ask(4, 3) == (Errors.FENCED_LEADER_EPOCH, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
    assert ask(6, 3) == (Errors.UNKNOWN_LEADER_EPOCH, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
    assert ask(-1, 3) == (Errors.NONE, 3, 4)  # no current epoch given: not fenced
    assert ask(5, 3, topic="nope") == (Errors.UNKNOWN_TOPIC_OR_PARTITION, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
    follower = make_rm(tmp_path, 1)
    become(follower, lai_state(TP, 0, 5, [0, 1], [0, 1], is_new=True))
    request = OffsetsForLeaderEpochRequest((OffsetForLeaderTopic(TP.topic, (OffsetForLeaderPartition(0, 5, 5),)),), 2)
    assert answer(follower, request) == one(Errors.NOT_LEADER_OR_FOLLOWER, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
    # a consumer's (replica id -2) is refused by a follower too: 2.6.3 passes fetchOnlyFromLeader = true for all
    debug = OffsetsForLeaderEpochRequest(request.topics, DEBUGGING_REPLICA_ID)
    assert answer(follower, debug) == one(Errors.NOT_LEADER_OR_FOLLOWER, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


# ------------------------------------------------------------------------------------------- issue #19's scenario


def _three_brokers(tmp_path):
    zk = broker_zk()
    zk.put_partition_state(TP, leader=0, isr=[0, 1, 2], leader_epoch=0, controller_epoch=0)
    rms = {b: make_rm(tmp_path, b, now_ms=T0) for b in (0, 1, 2)}
    state = lai_state(TP, 0, 0, [0, 1, 2], [0, 1, 2], is_new=True)
    for rm in rms.values():
        become(rm, state, zk=zk)
    return zk, rms


def _replicate(zk, rms, leader_id: int, now: float, client_effects: list | None = None) -> None:
    """One round of every follower's fetcher against ``leader_id``: truncation (if any), then one fetch."""
    for b, rm in rms.items():
        if b == leader_id or leader_id not in rm.fetch_leaders():
            continue
        settle_truncation(zk, rms[leader_id], rm, leader_id, now)
        fetch_round(zk, rms[leader_id], rm, leader_id, now, client_effects)


@pytest.mark.parametrize("truncation_answered", [True, False])
def test_epoch_bump_then_leader_death_keeps_every_acknowledged_record(tmp_path, truncation_answered):
    """Issue #19: the leader acknowledges (acks=all) records its followers hold above their own high watermark; a
    LeaderAndIsr only bumps the leader epoch (reassignment A1 / an ISR change by a third broker); the leader dies;
    the controller cleanly elects a follower from the ISR. Every acknowledged record (offset and value) is in the
    new leader's log — whether or not the follower's OffsetsForLeaderEpoch was answered before the leader died.
    (Truncating to the high watermark on becoming follower, as before, drops offsets 2..5 here.)"""
    zk, rms = _three_brokers(tmp_path)
    leader = rms[0]
    drive(leader.handle_produce(produce_request(TP, "a", "b"), T0), zk)
    for i in range(3):
        _replicate(zk, rms, 0, T0 + 1 + i)
    assert leader.online_partition(TP).isr == (0, 1, 2)
    effects: list = []
    assert drive(leader.handle_produce(produce_request(TP, "c", "d", "e", "f", acks=-1), T0 + 10, "client"), zk,
                 effects) is None
    _replicate(zk, rms, 0, T0 + 11, effects)  # followers append c..f
    _replicate(zk, rms, 0, T0 + 12, effects)  # their fetches at 6 move the leader's HW: the produce is acknowledged
    (ack,) = emitted(effects, "client")
    acknowledged = {0: "a", 1: "b", 2: "c", 3: "d", 4: "e", 5: "f"}
    assert [(r.error, r.base_offset) for r in ack.partitions] == [(Errors.NONE, 2)]
    assert leader.online_partition(TP).high_watermark == 6
    follower = rms[1].online_partition(TP)
    assert follower.log.log_end_offset == 6 and follower.high_watermark == 2  # the HW it last heard: 2

    # the epoch bump: same leader, same ISR, epoch 1 (reassignment A1 sends exactly this)
    bump = lai_state(TP, 0, 1, [0, 1, 2], [0, 1, 2], zk_version=1)
    for rm in rms.values():
        become(rm, bump, zk=zk, now=T0 + 20)
    assert follower.log.log_end_offset == 6  # becoming follower truncates nothing
    assert rms[1].fetch_states[TP].is_truncating and rms[1].fetch_states[TP].fetch_offset == 2
    if truncation_answered:
        assert settle_truncation(zk, leader, rms[1], 0, T0 + 21) == 1
        assert follower.log.log_end_offset == 6 and rms[1].fetch_states[TP].is_ready_for_fetch

    # the leader dies; the controller elects broker 1 (in the ISR) in epoch 2
    elect = lai_state(TP, 1, 2, [1, 2], [0, 1, 2], zk_version=2)
    for b in (1, 2):
        become(rms[b], elect, zk=zk, now=T0 + 30)
    new_leader = rms[1].online_partition(TP)
    assert new_leader.is_leader and new_leader.leader_epoch == 2
    assert {o: v for o, _, v in log_records(new_leader.log)} == acknowledged
    # the other follower truncates against the new leader and keeps them too
    settle_truncation(zk, rms[1], rms[2], 1, T0 + 31)
    assert log_values(rms[2].online_partition(TP).log) == tuple(acknowledged.values())
    assert new_leader.log.leader_epoch_entries == ((0, 0), (2, 6))


def test_follower_appends_records_with_the_leaders_batch_epochs(tmp_path):
    """FINDINGS (chaos, seed 1): a follower wrote every fetched record with its OWN current leader epoch, so the
    replicas' leader-epoch caches differed. Kafka's appendAsFollower keeps each batch's partitionLeaderEpoch: a
    follower at epoch 3 fetching records the leader wrote at epochs 1 and 2 stores 1 and 2 (segment lines and
    cache), exactly as the leader has them."""
    zk = broker_zk()
    leader, follower = make_rm(tmp_path, 0), make_rm(tmp_path, 1)
    seed_log(leader, ["a", "b", "c", "d"], ((1, 0), (2, 2)), hw=4)
    state = lai_state(TP, 0, 3, [0, 1], [0, 1], is_new=True)
    become(leader, state, zk=zk)
    become(follower, state, zk=zk)
    settle_truncation(zk, leader, follower, 0, T0)
    fetch_round(zk, leader, follower, 0, T0 + 1)
    log = follower.online_partition(TP).log
    assert log_records(log) == [(0, 1, "a"), (1, 1, "b"), (2, 2, "c"), (3, 2, "d")]
    (segment,) = log.segments
    with open(segment.log_path, "rb") as fh:  # the leader's batches byte for byte
        assert fh.read() == leader.online_partition(TP).log.read(0, 1 << 20)
    assert log.leader_epoch_entries == ((1, 0), (2, 2))
    assert leader.online_partition(TP).log.leader_epoch_entries == ((1, 0), (2, 2), (3, 4))
    drive(leader.handle_produce(produce_request(TP, "e"), T0 + 2), zk)
    fetch_round(zk, leader, follower, 0, T0 + 3)
    assert log.leader_epoch_entries == leader.online_partition(TP).log.leader_epoch_entries


def test_divergent_suffix_of_a_dead_leader_is_truncated_before_new_records_are_acknowledged(tmp_path):
    """FINDINGS (chaos, seed 1): follower C holds records 9-11 that leader A wrote at epoch 2 and nobody else has; A
    dies and B (which has 0-8) leads at epoch 3. C asks B for epoch 2: B answers (1, 9) (its epoch 1 ends where its
    epoch 3 starts); C's own end of epoch 1 is 9, so it truncates to 9 and then fetches B's records. B's acks=all
    records at 9-11 are acknowledged only once C holds them, and both logs are then equal, epochs included."""
    zk = broker_zk()
    zk.put_partition_state(TP, leader=1, isr=[1, 2], leader_epoch=3, controller_epoch=0)
    b, c = make_rm(tmp_path, 1, now_ms=T0), make_rm(tmp_path, 2, now_ms=T0)
    seed_log(b, [f"r{i}" for i in range(9)], ((1, 0),), hw=9)
    seed_log(c, [f"r{i}" for i in range(9)] + ["a-9", "a-10", "a-11"], ((1, 0), (2, 9)), hw=9)
    state = lai_state(TP, 1, 3, [1, 2], [0, 1, 2])
    become(b, state, zk=zk)
    become(c, state, zk=zk)
    effects: list = []
    assert drive(b.handle_produce(produce_request(TP, "b-9", "b-10", "b-11", acks=-1), T0, "client"), zk,
                 effects) is None
    request = c.epoch_request_for(1)
    assert asked(request) == [("topic", 0, 3, 2)]
    response = answer(b, request)
    assert response == one(Errors.NONE, 1, 9)
    drive(c.handle_epoch_response(1, response, T0), zk)
    c_log = c.online_partition(TP).log
    assert c_log.log_end_offset == 9 and c_log.leader_epoch_entries == ((1, 0),)
    fetch_round(zk, b, c, 1, T0 + 1, effects)
    assert emitted(effects, "client") == []  # C appended 9-11 but has not fetched past them yet
    fetch_round(zk, b, c, 1, T0 + 2, effects)
    (ack,) = emitted(effects, "client")
    assert [(r.error, r.base_offset) for r in ack.partitions] == [(Errors.NONE, 9)]
    assert c_log.read(0, 1 << 20) == b.online_partition(TP).log.read(0, 1 << 20)
    assert log_records(c_log, 9) == [(9, 3, "b-9"), (10, 3, "b-10"), (11, 3, "b-11")]
    assert c_log.leader_epoch_entries == b.online_partition(TP).log.leader_epoch_entries == ((1, 0), (3, 9))


def test_fenced_fetch_removes_the_partition_until_the_next_leader_and_isr(tmp_path):
    """AbstractFetcherThread.processFetchRequest, FENCED_LEADER_EPOCH (2.6 onPartitionFenced → markPartitionFailed):
    a follower whose leader epoch (1) is older than the leader's (2) stops fetching the partition; the LeaderAndIsr
    with epoch 2 adds it back (truncating first). Any other error leaves it in the fetcher."""
    zk = broker_zk()
    leader, follower = make_rm(tmp_path, 0), make_rm(tmp_path, 1)
    become(leader, lai_state(TP, 0, 2, [0], [0, 1], is_new=True), zk=zk)
    become(follower, lai_state(TP, 0, 1, [0, 1], [0, 1], is_new=True), zk=zk)
    assert follower.epoch_request_for(0) is None  # a new log: straight to fetching at its HW
    request = follower.fetch_request_for(0)
    response = drive(leader.handle_fetch(request, T0, "f"), zk)
    assert [(d.tp, d.error) for d in response.partitions] == [(TP, Errors.FENCED_LEADER_EPOCH)]
    drive(follower.handle_fetch_response(0, response, T0), zk)
    assert TP not in follower.fetch_states and follower.fetch_leaders() == set()
    become(follower, lai_state(TP, 0, 2, [0, 1], [0, 1]), zk=zk)
    assert follower.fetch_states[TP].is_truncating and follower.fetch_states[TP].leader_epoch == 2
    unknown = make_rm(tmp_path / "other", 1)
    become(unknown, lai_state(TP, 0, 3, [0, 1], [0, 1], is_new=True), zk=zk)
    unknown.epoch_request_for(0)
    response = drive(leader.handle_fetch(unknown.fetch_request_for(0), T0, "f"), zk)
    assert [(d.tp, d.error) for d in response.partitions] == [(TP, Errors.UNKNOWN_LEADER_EPOCH)]
    drive(unknown.handle_fetch_response(0, response, T0), zk)
    assert unknown.fetch_states[TP].is_ready_for_fetch  # retried after the back-off


def test_an_epoch_led_without_writing_does_not_keep_the_follower_truncating_for_ever(tmp_path):
    """KAFKA-10706 (2.6.1) on two replica managers: A leads epoch 1 and writes 0..9, B copies 0..4; B leads epoch 2
    and writes 5..9 (A never fetches them); A leads epoch 3 writing nothing; B leads epoch 4. A asks for epoch 3, B
    answers (2, 10) and A truncates to its log end: a no-op that must still drop A's trailing (3, 10) entry, so the
    next round asks for epoch 1, B answers (1, 5), A truncates to 5 and fetches epoch 2's records. Before the fix A
    asked for epoch 3 for ever and never fetched again."""
    zk = broker_zk()
    a, b = make_rm(tmp_path / "a", 0), make_rm(tmp_path / "b", 1)

    def lai(rm: ReplicaManager, leader: int, epoch: int) -> None:
        become(rm, lai_state(TP, leader, epoch, [0, 1], [0, 1], zk_version=epoch - 1, is_new=epoch == 1), zk=zk,
               now=1000.0 * epoch)

    def produce(rm: ReplicaManager, value: str, now: float) -> None:
        drive(rm.handle_produce(produce_request(TP, *[value] * 5, acks=1), now), zk)

    lai(a, 0, 1)
    lai(b, 0, 1)
    produce(a, "a1", 1000)
    settle_truncation(zk, a, b, 0, 1000)
    fetch_round(zk, a, b, 0, 1001)
    produce(a, "a1-lost", 1002)  # 5..9 in epoch 1, never fetched by B
    lai(b, 1, 2)
    lai(a, 1, 2)
    produce(b, "b2", 2000)  # 5..9 in epoch 2
    lai(a, 0, 3)  # A leads epoch 3 and writes nothing
    lai(b, 0, 3)
    lai(b, 1, 4)
    lai(a, 1, 4)
    log_a = a.online_partition(TP).log
    assert log_a.leader_epoch_entries == ((1, 0), (3, 10)) and log_a.log_end_offset == 10
    epochs_asked = []
    while (request := a.epoch_request_for(1)) is not None and len(epochs_asked) < 5:
        epochs_asked.append(asked(request)[0][3])
        drive(a.handle_epoch_response(1, answer(b, request), 5000), zk)
    assert epochs_asked == [3, 1]
    assert log_a.log_end_offset == 5 and log_a.leader_epoch_entries == ((1, 0),)
    fetch_round(zk, b, a, 1, 5001)
    assert log_values(log_a) == ("a1",) * 5 + ("b2",) * 5
    assert log_a.leader_epoch_entries == ((1, 0), (2, 5))
