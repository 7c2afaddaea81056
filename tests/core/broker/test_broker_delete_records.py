"""DeleteRecords on the replica manager (Kafka 2.6.3's ReplicaManager.deleteRecords, Partition.deleteRecordsOnLeader
and lowWatermarkIfLeader, DelayedDeleteRecords; the follower taking the leader's log start from a fetch answer, as
ReplicaFetcherThread.processPartitionData does): the leader moves its log start at once, the answer waits until
every live replica's log start (as its fetches tell the leader) reached the offset, or times out."""

from __future__ import annotations

import attrs

from core.broker.replica_manager import ReplicaManager
from messages.common import Errors, TopicPartition
from messages.replication import (
    DeleteRecordsPartition,
    DeleteRecordsPartitionResult,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    FetchPartition,
    FetchRequest,
    ListOffsetsPartition,
    ListOffsetsRequest,
)
from tests.support.broker import (
    broker_zk,
    drive,
    emitted,
    lai_request,
    lai_state,
    make_rm,
    produce_request,
    settle_truncation,
    um_request,
    um_state,
)

TP0 = TopicPartition("foo", 0)
TP1 = TopicPartition("foo", 1)
T0 = 1_000_000.0


def leader_of(tmp_path, n=5, replicas=(0, 1)) -> ReplicaManager:
    """Broker 0 leading TP0 (replicas ``replicas``, all in the ISR) with ``n`` records all followers fetched: the
    high watermark is ``n``, every follower's log start 0."""
    rm = make_rm(tmp_path)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP0, 0, 0, replicas, replicas, is_new=True)]), T0))
    drive(rm.handle_produce(produce_request(TP0, *(f"v{i}" for i in range(n))), T0, "producer"))
    for follower in replicas[1:]:
        follower_fetch(rm, follower, n, 0)
    assert rm.online_partition(TP0).high_watermark == n
    return rm


def follower_fetch(rm, follower, offset, log_start, now=T0, effects=None):
    request = FetchRequest(follower, (FetchPartition(TP0, offset, 0, log_start),), max_wait_ms=0)
    return drive(rm.handle_fetch(request, now, f"fetcher-{follower}"), broker_zk(), effects)


def delete(rm, *offsets, timeout_ms=30000, now=T0, effects=None):
    """The answer (None: parked in the purgatory); ``offsets``: (tp, offset) pairs."""
    request = DeleteRecordsRequest(timeout_ms, tuple(DeleteRecordsPartition(tp, o) for tp, o in offsets))
    return drive(rm.handle_delete_records(request, now, "client"), None, effects)


def answer(effects) -> dict[TopicPartition, tuple[Errors, int]]:
    (resp,) = emitted(effects, "client")
    assert isinstance(resp, DeleteRecordsResponse)
    return {r.tp: (r.error, r.low_watermark) for r in resp.partitions}


def test_the_answer_waits_for_the_followers_log_start_and_carries_the_low_watermark(tmp_path):
    rm = leader_of(tmp_path)
    effects: list = []
    assert delete(rm, (TP0, 3), effects=effects) is None
    assert rm.delayed_delete_records_count == 1
    log = rm.online_partition(TP0).log
    assert log.log_start_offset == 3  # the leader deleted at once
    follower_fetch(rm, 1, 5, 0, effects=effects)  # the follower has not taken it yet
    assert emitted(effects, "client") == [] and rm.delayed_delete_records_count == 1
    follower_fetch(rm, 1, 5, 3, effects=effects)
    assert answer(effects) == {TP0: (Errors.NONE, 3)}
    assert rm.delayed_delete_records_count == 0


def test_minus_one_deletes_up_to_the_high_watermark(tmp_path):
    rm = leader_of(tmp_path, replicas=(0,))
    resp = delete(rm, (TP0, -1))
    assert resp == DeleteRecordsResponse((DeleteRecordsPartitionResult(TP0, Errors.NONE, 5),))
    assert rm.online_partition(TP0).log.log_start_offset == 5


def test_a_real_follower_takes_the_leaders_log_start_from_its_fetches_and_that_completes_the_purgatory(tmp_path):
    """The leader's fetch answer carries its new log start; the follower applying it moves its own
    (ReplicaFetcherThread.processPartitionData), its next fetch tells the leader, and the purgatory completes."""
    zk = broker_zk()
    leader, follower = make_rm(tmp_path), make_rm(tmp_path, broker_id=1)
    state = lai_state(TP0, 0, 0, (0, 1), (0, 1), is_new=True)
    drive(leader.handle_leader_and_isr(lai_request([state]), T0), zk)
    drive(leader.handle_produce(produce_request(TP0, *(f"v{i}" for i in range(5))), T0, "producer"), zk)
    drive(follower.handle_leader_and_isr(lai_request([state]), T0), zk)
    settle_truncation(zk, leader, follower, 0, T0)
    effects: list = []

    def fetch_round():
        request = follower.fetch_request_for(0)
        assert request is not None
        request = attrs.evolve(request, max_wait_ms=0)  # answered at once, not parked in the fetch purgatory
        drive(follower.handle_fetch_response(0, drive(leader.handle_fetch(request, T0, "fetcher"), zk, effects),
                                             T0), zk)

    fetch_round()
    fetch_round()
    follower_log = follower.online_partition(TP0).log
    assert (follower_log.log_end_offset, leader.online_partition(TP0).high_watermark) == (5, 5)
    assert delete(leader, (TP0, 4), effects=effects) is None
    fetch_round()  # the answer carries log start 4; the follower takes it
    assert follower_log.log_start_offset == 4 and emitted(effects, "client") == []
    fetch_round()  # the follower's fetch says its log start is 4
    assert answer(effects) == {TP0: (Errors.NONE, 4)}


def test_above_the_high_watermark_is_offset_out_of_range_answered_at_once(tmp_path):
    rm = leader_of(tmp_path)
    resp = delete(rm, (TP0, 6), (TP1, 0))
    assert {r.tp: (r.error, r.low_watermark) for r in resp.partitions} == {
        TP0: (Errors.OFFSET_OUT_OF_RANGE, -1), TP1: (Errors.UNKNOWN_TOPIC_OR_PARTITION, -1)}
    assert rm.online_partition(TP0).log.log_start_offset == 0 and rm.delayed_delete_records_count == 0


def test_a_negative_offset_other_than_minus_one_is_offset_out_of_range(tmp_path):
    rm = leader_of(tmp_path)
    assert delete(rm, (TP0, -2)).partitions[0].error == Errors.OFFSET_OUT_OF_RANGE


def test_a_compacted_topic_is_policy_violation(tmp_path):
    rm = leader_of(tmp_path, replicas=(0,))
    assert rm.log_configs.update_topic("foo", {"cleanup.policy": "compact"}, rm.online_partitions())
    assert delete(rm, (TP0, 2)).partitions[0].error == Errors.POLICY_VIOLATION
    assert rm.log_configs.update_topic("foo", {"cleanup.policy": "compact,delete"}, rm.online_partitions())
    assert delete(rm, (TP0, 2)).partitions[0] == DeleteRecordsPartitionResult(TP0, Errors.NONE, 2)


def test_a_follower_answers_not_leader_or_follower_and_an_internal_topic_invalid_topic(tmp_path):
    rm = make_rm(tmp_path)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP0, 1, 0, (0, 1), (0, 1), is_new=True)]), T0))
    internal = TopicPartition("__consumer_offsets", 0)
    resp = delete(rm, (TP0, 0), (internal, 0))
    assert {r.tp: r.error for r in resp.partitions} == {TP0: Errors.NOT_LEADER_OR_FOLLOWER,
                                                       internal: Errors.UNKNOWN_TOPIC_OR_PARTITION}
    drive(rm.handle_update_metadata(um_request([um_state(internal, 0, (0,), (0,))]), T0))
    assert delete(rm, (internal, 0)).partitions[0].error == Errors.INVALID_TOPIC_EXCEPTION


def test_the_purgatory_times_out_with_request_timed_out_and_the_low_watermark_it_had(tmp_path):
    rm = leader_of(tmp_path)
    effects: list = []
    assert delete(rm, (TP0, 2), timeout_ms=500, effects=effects) is None
    assert rm.next_task_due_ms() <= T0 + 500
    drive(rm.expire_delayed_operations(T0 + 499), None, effects)
    assert emitted(effects, "client") == []
    drive(rm.expire_delayed_operations(T0 + 500), None, effects)
    assert answer(effects) == {TP0: (Errors.REQUEST_TIMED_OUT, 0)}
    assert rm.online_partition(TP0).log.log_start_offset == 2  # the leader's deletion stands


def test_losing_leadership_answers_not_leader_or_follower(tmp_path):
    rm = leader_of(tmp_path)
    effects: list = []
    assert delete(rm, (TP0, 2), effects=effects) is None
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP0, 1, 1, (0, 1), (0, 1))]), T0 + 10), None, effects)
    assert answer(effects) == {TP0: (Errors.NOT_LEADER_OR_FOLLOWER, -1)}


def test_a_replica_on_a_dead_broker_is_not_waited_for(tmp_path):
    """lowWatermarkIfLeader counts the remote replicas on live brokers only."""
    rm = leader_of(tmp_path, replicas=(0, 1, 2))
    drive(rm.handle_update_metadata(um_request(live=(0, 1)), T0))
    effects: list = []
    assert delete(rm, (TP0, 3), effects=effects) is None
    follower_fetch(rm, 1, 5, 3, effects=effects)
    assert answer(effects) == {TP0: (Errors.NONE, 3)}


def test_list_offsets_earliest_and_a_fetch_below_answer_the_new_log_start(tmp_path):
    rm = leader_of(tmp_path, replicas=(0,))
    delete(rm, (TP0, 3))
    listed = drive(rm.handle_list_offsets(ListOffsetsRequest(-1, 0, (ListOffsetsPartition(TP0, -2),)), T0))
    assert listed.partitions[0].offset == 3
    below = drive(rm.handle_fetch(FetchRequest(-1, (FetchPartition(TP0, 2, -1),)), T0, "consumer"))
    assert below.partitions[0].error == Errors.OFFSET_OUT_OF_RANGE


def test_segments_wholly_below_the_log_start_go_at_the_next_retention_pass_and_it_survives_a_restart(tmp_path):
    rm = make_rm(tmp_path, log_props=(("log.segment.bytes", "200"),))
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP0, 0, 0, (0,), (0,), is_new=True)]), T0))
    for i in range(6):
        drive(rm.handle_produce(produce_request(TP0, f"value-{i:040d}"), T0, "producer"))
    log = rm.online_partition(TP0).log
    bases = [s.base_offset for s in log.segments]
    assert len(bases) > 2
    cut = bases[2]  # the two segments before it lie wholly below the new log start
    delete(rm, (TP0, cut))
    assert [s.base_offset for s in log.segments] == bases  # nothing removed until retention runs
    assert rm.cleanup_logs(T0) == 2
    assert [s.base_offset for s in log.segments] == bases[2:] and log.log_start_offset == cut
    drive(rm.shutdown())
    again = make_rm(tmp_path, log_props=(("log.segment.bytes", "200"),))
    reloaded = again.log_manager.get_log(TP0)
    assert reloaded is not None and reloaded.log_start_offset == cut
