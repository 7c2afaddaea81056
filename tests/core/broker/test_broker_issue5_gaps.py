"""Issue #5 gaps: the remaining ReplicaManagerTest scenarios (§11.11 #2, #4, #29–#33), freezegun frozen-time tests of
ISR expiry at 1× / 1.5× replica.lag.time.max.ms and of the 60 s propagation interval, the deferred-I/O-error mode the
PartitionActors use (a dir goes offline only through a recorded LogDirFailure), and the metadata-cache
introspection request."""

from __future__ import annotations

import os
import shutil
from datetime import timedelta

import pytest
from freezegun import freeze_time

from actors.clock import SystemClock
from core.broker.config import BrokerSideConfig
from core.broker.fetcher_state import TRUNCATING, FollowerFetchState
from core.broker.isr_propagation import IsrChangePropagation
from core.broker.log import REPLICATION_OFFSET_CHECKPOINT, LogManager, read_offset_checkpoint
from core.broker.replica_manager import OFFLINE, ReplicaManager
from messages.common import Errors, TopicPartition
from messages.replication import (
    DescribeMetadataCacheRequest,
    DescribeMetadataCacheResponse,
    FetchPartition,
    FetchRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderPartitionResult,
    OffsetForLeaderTopic,
    OffsetForLeaderTopicResult,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
    ProduceRequest,
)
from tests.support.broker import broker_zk, drive, lai_request, lai_state, make_rm, um_request, um_state

TP = TopicPartition("foo", 0)
TP1 = TopicPartition("foo", 1)
LAG = 30000
T0 = 1_000_000.0


def become(rm, *states, now=T0, zk=None, controller_epoch=0):
    return drive(rm.handle_leader_and_isr(lai_request(states, controller_epoch), now), zk)


def errors(resp):
    return {pe.topic_partition: pe.error for pe in resp.partition_errors}


# ------------------------------------------------------------------------------------ ReplicaManagerTest (§11.11)


@pytest.mark.parametrize("epoch_bumps", [0, 1, 10])
def test_fencedErrorCausedByBecomeLeader(tmp_path, epoch_bumps):
    """testFencedErrorCausedByBecomeLeader (0, 1, 10 epoch bumps). Kafka's version moves a future replica between
    log dirs (AlterReplicaLogDirs, not modelled); what it guards is kept: repeated LeaderAndIsr with increasing
    leader epochs are all accepted, leadership and the log stay, nothing is fenced or offline, no fetcher runs."""
    rm = make_rm(tmp_path)
    zk = broker_zk()
    assert errors(become(rm, lai_state(TP, 0, 0, [0, 1], [0, 1], is_new=True), zk=zk)) == {TP: Errors.NONE}
    drive(rm.handle_produce(ProduceRequest(TP, ("a", "b")), T0), zk)
    for epoch in range(1, epoch_bumps + 1):
        assert errors(become(rm, lai_state(TP, 0, epoch, [0, 1], [0, 1]), zk=zk)) == {TP: Errors.NONE}
    p = rm.online_partition(TP)
    assert p.is_leader and p.get_leader_epoch() == epoch_bumps and p.log.log_end_offset == 2
    assert rm.offline_replica_count == 0 and rm.fetch_states == {}
    assert p.log.leader_epoch_entries[-1] == (epoch_bumps, 0 if epoch_bumps == 0 else 2)


def test_becomeFollowerWhenLeaderIsUnchangedButMissedLeaderUpdate(tmp_path):
    """testBecomeFollowerWhenLeaderIsUnchangedButMissedLeaderUpdate (2.6): same leader 1, epoch 1 → 3: the
    become-follower steps run (epoch taken, fetcher restarted at the new epoch, Truncating at the HW); the fetcher
    asks the leader for its latest epoch (1) under current epoch 3, keeps what the leader has, then fetches."""
    rm = make_rm(tmp_path)
    become(rm, lai_state(TP, 1, 1, [0, 1], [0, 1], is_new=True))
    p = rm.online_partition(TP)
    p.log.append(["a", "b"], 1)
    p.log.update_high_watermark(2)
    assert errors(become(rm, lai_state(TP, 1, 3, [0, 1], [0, 1]))) == {TP: Errors.NONE}
    assert p.get_leader_epoch() == 3 and p.leader_replica_id == 1 and not p.is_leader
    assert rm.fetch_states[TP] == FollowerFetchState(1, 3, 2, TRUNCATING)
    request = rm.epoch_request_for(1)
    assert request == OffsetsForLeaderEpochRequest((OffsetForLeaderTopic("foo", (OffsetForLeaderPartition(0, 3, 1),)),),
                                                   replica_id=0)
    assert rm.fetch_request_for(1) is None  # the fetcher waits for the answer
    answer = OffsetsForLeaderEpochResponse((OffsetForLeaderTopicResult("foo", (
        OffsetForLeaderPartitionResult(Errors.NONE, 0, 1, 2),)),))
    assert drive(rm.handle_epoch_response(1, answer, T0)) == 0
    assert p.log.log_end_offset == 2 and rm.fetch_states[TP].is_ready_for_fetch
    assert rm.fetch_request_for(1).partitions == (FetchPartition(TP, 2, 3, high_watermark=2),)


@pytest.mark.parametrize("kafka_test", [
    "testPartitionMetadataFile", "testPartitionMetadataFileCreatedWithExistingLog",
    "testPartitionMetadataFileCreatedAfterPreviousRequestWithoutIds", "testInconsistentIdReturnsError"])
def test_partition_metadata_file_topic_id_scenarios(kafka_test):
    """ReplicaManagerTest #29–#32 need topic IDs (KIP-516, LeaderAndIsr v5, Kafka 2.8+); 2.6's LeaderAndIsr v4 has
    none, so there is nothing to port. #33 (no file without ids) is ported below."""
    pytest.skip(f"{kafka_test}: topic IDs are Kafka 2.8+ (LeaderAndIsr v5); kactor implements 2.6")


def test_partitionMetadataFileNotCreated(tmp_path):
    """testPartitionMetadataFileNotCreated: a request without topic ids creates the log, NONE, and no
    partition.metadata file."""
    rm = make_rm(tmp_path)
    assert errors(become(rm, lai_state(TP, 0, 0, [0], [0], is_new=True))) == {TP: Errors.NONE}
    log_dir = rm.online_partition(TP).log.dir
    assert os.path.isdir(log_dir) and not os.path.exists(os.path.join(log_dir, "partition.metadata"))


# ---------------------------------------------------------------------------------------------- frozen time


def _leader_with_follower(tmp_path, clock, zk):
    rm = make_rm(tmp_path, now_ms=clock.now_ms())
    zk.put_partition_state(TP, leader=0, isr=[0, 1], leader_epoch=0, controller_epoch=0)
    become(rm, lai_state(TP, 0, 0, [0, 1], [0, 1], is_new=True), now=clock.now_ms(), zk=zk)
    return rm


def test_isr_expiry_at_1x_and_1_5x_lag_with_freezegun(tmp_path):
    """Partition.getOutOfSyncReplicas under freezegun: a follower whose last caught-up fetch is exactly
    replica.lag.time.max.ms old is still in sync (strictly more is required); 1 ms later it is out of sync; the
    isr-expiration task (every lag/2) removes it by 1.5× the lag — not at 1×, where the task has not run yet."""
    with freeze_time("2020-06-01 00:00:00") as frozen:
        clock = SystemClock()
        zk = broker_zk()
        rm = _leader_with_follower(tmp_path, clock, zk)
        start = clock.now_ms()
        drive(rm.handle_fetch(FetchRequest(1, (FetchPartition(TP, 0, 0),)), start), zk)  # caught up at start
        drive(rm.handle_produce(ProduceRequest(TP, ("a",)), start), zk)  # then it lags
        p = rm.online_partition(TP)
        frozen.tick(timedelta(milliseconds=LAG))
        assert p.get_out_of_sync_replicas(clock.now_ms()) == ()
        if clock.now_ms() >= rm.next_task_due_ms():
            drive(rm.run_scheduled_tasks(clock.now_ms()), zk)
        assert p.isr == (0, 1)  # at 1×: still in the ISR
        frozen.tick(timedelta(milliseconds=1))
        assert p.get_out_of_sync_replicas(clock.now_ms()) == (1,)
        while p.isr != (0,) and clock.now_ms() < start + 2 * LAG:  # jump from one due task to the next
            frozen.tick(timedelta(milliseconds=rm.next_task_due_ms() - clock.now_ms()))
            drive(rm.run_scheduled_tasks(clock.now_ms()), zk)
        assert p.isr == (0,) and clock.now_ms() == start + 1.5 * LAG
        assert zk.get("/brokers/topics/foo/partitions/0/state") == (
            '{"controller_epoch":0,"leader":0,"version":1,"leader_epoch":0,"isr":[0]}')
        assert zk.version("/brokers/topics/foo/partitions/0/state") == 1


def test_isr_change_propagation_max_interval_with_freezegun():
    """maybePropagateIsrChanges under freezegun: changes every 2 s never leave the 5 s blackout, yet once 60 s
    passed since the last publication the checks (every 2.5 s) publish anyway: at 62.5 s, then 125 s."""
    with freeze_time("2020-06-01 00:00:00") as frozen:
        clock = SystemClock()
        t0 = clock.now_ms()
        prop = IsrChangePropagation(t0)
        zk = broker_zk()
        published = []
        for step in range(1, 261):  # 500 ms steps up to 130 s
            frozen.tick(timedelta(milliseconds=500))
            elapsed = step * 500
            if elapsed % 2000 == 0:
                prop.record_isr_change(TP, clock.now_ms())
            if elapsed % 2500 == 0 and drive(prop.maybe_propagate_isr_changes(clock.now_ms()), zk):
                published.append(elapsed)
        assert published == [62_500, 125_000]


# ------------------------------------------------------------------------------------- deferred I/O errors


def _deferring_rm(tmp_path, n_dirs=2):
    dirs = tuple(str(tmp_path / f"logs{i}") for i in range(n_dirs))
    config = BrokerSideConfig(0, dirs, replica_high_watermark_checkpoint_interval_ms=5000)
    rm = ReplicaManager(config, T0, LogManager(dirs, defer_io_errors=True))
    drive(rm.handle_update_metadata(um_request(), T0))
    return rm


def test_deferred_io_errors_change_no_decision_until_log_dir_failure(tmp_path):
    """With defer_io_errors (the PartitionActors' mode) a dir replaced by a file changes nothing the broker answers:
    appends and reads go on in memory and the dir is only remembered; the checkpoint skips it. Only
    handle_log_dir_failure (the recorded LogDirFailure) takes its partitions offline and notifies the controller —
    so a replay on healthy scratch dirs makes the same decisions."""
    rm = _deferring_rm(tmp_path)
    zk = broker_zk()
    become(rm, lai_state(TP, 0, 0, [0], [0], is_new=True), lai_state(TP1, 0, 0, [0], [0], is_new=True), zk=zk)
    broken = rm.online_partition(TP).log.parent_dir
    assert rm.online_partition(TP1).log.parent_dir != broken  # one log per dir (fewest logs first)
    shutil.rmtree(broken)
    with open(broken, "w") as f:
        f.write("x")
    resp = drive(rm.handle_produce(ProduceRequest(TP, ("a", "b")), T0), zk)
    assert resp.error == Errors.NONE and resp.base_offset == 0
    assert rm.log_manager.deferred_io_failures == {broken}
    assert rm.online_partition(TP).read_records(0, -1, 10) == (("a", "b"), 2, 2)
    drive(rm.run_scheduled_tasks(T0 + 5000), zk)  # HW checkpoint: the broken dir is skipped, the other written
    assert rm.get_partition(TP) is not OFFLINE and zk.children("/log_dir_event_notification") == []
    other = rm.online_partition(TP1).log.parent_dir
    assert read_offset_checkpoint(os.path.join(other, REPLICATION_OFFSET_CHECKPOINT)) == {TP1: 0}

    assert drive(rm.handle_log_dir_failure(broken), zk) == [TP]
    assert rm.get_partition(TP) is OFFLINE and rm.online_partition(TP1) is not None
    assert drive(rm.handle_produce(ProduceRequest(TP, ("c",)), T0), zk).error == Errors.KAFKA_STORAGE_ERROR
    (child,) = zk.children("/log_dir_event_notification")
    assert zk.get(f"/log_dir_event_notification/{child}") == '{"version":1,"broker":0,"event":1}'


def test_log_reads_come_from_memory_and_survive_recovery(tmp_path):
    """Log.read serves records from memory; a reopened log recovers the same records from its segment."""
    rm = _deferring_rm(tmp_path, n_dirs=1)
    become(rm, lai_state(TP, 0, 0, [0], [0], is_new=True))
    log = rm.online_partition(TP).log
    log.append(["x", "y", "z"], 0)
    log.truncate_to(2)
    assert log.read(0, 10) == ("x", "y") and log.read(1, 1) == ("y",)
    again = LogManager(rm.config.log_dirs).get_log(TP)
    assert again.read(0, 10) == ("x", "y") and again.log_end_offset == 2


# ---------------------------------------------------------------------------------------- introspection


def test_describe_metadata_cache_returns_states_as_sent(tmp_path):
    """DescribeMetadataCacheRequest: the cached UpdateMetadata partition states (ISR not filtered by liveness),
    the alive brokers and the controller id."""
    rm = make_rm(tmp_path)
    st0 = um_state(TP, 1, [1, 2], [1, 2], leader_epoch=4)
    st1 = um_state(TP1, 2, [2], [1, 2])
    drive(rm.handle_update_metadata(um_request([st0, st1], live=(0, 1)), T0))
    resp = drive(rm.handle_describe_metadata_cache(DescribeMetadataCacheRequest(("foo",))))
    assert isinstance(resp, DescribeMetadataCacheResponse)
    assert resp.alive_brokers == (0, 1) and resp.partition_states == (st0, st1)
    assert drive(rm.handle_describe_metadata_cache(DescribeMetadataCacheRequest(("bar",)))).partition_states == ()
    assert drive(rm.handle_describe_metadata_cache(DescribeMetadataCacheRequest())).partition_states == (st0, st1)


# ----------------------------------------------------------------------------------------- idle fetch cost


def test_idle_follower_fetch_leaves_out_partitions_with_nothing_new(tmp_path):
    """A follower that states its high watermark gets back only the partitions with news (records, a new HW, an
    error); caught-up idle partitions are left out (the effect of KIP-227's incremental fetch sessions), yet its
    fetch still counts as caught up for each of them. Consumers (replica id −1) always get every partition."""
    rm = make_rm(tmp_path)
    zk = broker_zk()
    become(rm, lai_state(TP, 0, 0, [0, 1], [0, 1], is_new=True), lai_state(TP1, 0, 0, [0, 1], [0, 1], is_new=True),
           zk=zk)
    drive(rm.handle_produce(ProduceRequest(TP, ("a",)), T0), zk)
    both = (FetchPartition(TP, 0, 0, high_watermark=0), FetchPartition(TP1, 0, 0, high_watermark=0))
    resp = drive(rm.handle_fetch(FetchRequest(1, both), T0 + 10), zk)
    assert [(d.tp, d.records) for d in resp.partitions] == [(TP, ("a",))]  # TP1: nothing new, left out
    caught_up = (FetchPartition(TP, 1, 0, high_watermark=0), FetchPartition(TP1, 0, 0, high_watermark=0))
    resp = drive(rm.handle_fetch(FetchRequest(1, caught_up), T0 + 20), zk)
    assert [(d.tp, d.high_watermark) for d in resp.partitions] == [(TP, 1)]  # the HW moved to 1: news
    resp = drive(rm.handle_fetch(FetchRequest(1, (FetchPartition(TP, 1, 0, high_watermark=1),) + caught_up[1:]),
                                 T0 + 30), zk)
    assert resp.partitions == ()
    assert rm.online_partition(TP1).remote_replicas[1].last_caught_up_time_ms == T0 + 30
    consumer = FetchRequest(-1, (FetchPartition(TP1, 0, high_watermark=0),))
    assert [d.tp for d in drive(rm.handle_fetch(consumer, T0 + 40), zk).partitions] == [TP1]


def test_fetch_sessions_incremental_requests_carry_only_changes(tmp_path):
    """KIP-227 fetch sessions between a follower (broker 1) and a leader (broker 0): the first request is full and
    opens a session; the next ones carry only changed partitions (and forgotten ones) and stand for the whole
    session; an unknown session or a wrong epoch is a top-level error after which the follower starts over."""
    from core.broker.replica_manager import FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH
    from messages.replication import INITIAL_EPOCH

    zk = broker_zk()
    leader = make_rm(tmp_path / "l", broker_id=0)
    follower = make_rm(tmp_path / "f", broker_id=1, replica_fetch_wait_max_ms=0)  # answered at once
    states = [lai_state(tp, 0, 0, [0, 1], [0, 1], is_new=True) for tp in (TP, TP1)]
    become(leader, *states, zk=zk)
    become(follower, *states, zk=zk)

    def round_trip(now):
        req = follower.fetch_request_for(0)
        resp = drive(leader.handle_fetch(req, now, "f"), zk)
        drive(follower.handle_fetch_response(0, resp, now), zk)
        return req, resp

    assert follower.epoch_request_for(0) is None  # new logs: no epochs, truncated to the HW and fetching
    req, resp = round_trip(T0)
    assert req.session_epoch == INITIAL_EPOCH and [fp.tp for fp in req.partitions] == [TP, TP1]
    assert resp.session_id != 0 and resp.partitions == ()  # both idle: nothing new
    req, resp = round_trip(T0 + 1)
    assert (req.session_id, req.session_epoch, req.partitions, req.forgotten) == (resp.session_id, 1, (), ())
    drive(leader.handle_produce(ProduceRequest(TP1, ("x",)), T0 + 2), zk)
    req, resp = round_trip(T0 + 3)
    assert req.partitions == () and [(d.tp, d.records) for d in resp.partitions] == [(TP1, ("x",))]
    req, resp = round_trip(T0 + 4)  # the follower's LEO of TP1 moved: only TP1 in the request; the HW moves
    assert [fp.tp for fp in req.partitions] == [TP1] and [(d.tp, d.high_watermark) for d in resp.partitions] == [
        (TP1, 1)]
    req, resp = round_trip(T0 + 5)
    assert [fp.tp for fp in req.partitions] == [TP1] and resp.partitions == ()
    p1 = follower.online_partition(TP1)
    assert p1.log.read(0, 10) == ("x",) and p1.high_watermark == 1
    follower.remove_fetchers([TP])
    req, resp = round_trip(T0 + 6)
    assert req.partitions == () and req.forgotten == (TP,)
    # errors: a wrong epoch, an unknown session
    bad = FetchRequest(1, (), session_id=req.session_id, session_epoch=99)
    assert drive(leader.handle_fetch(bad, T0 + 7), zk).error == INVALID_FETCH_SESSION_EPOCH
    unknown = FetchRequest(1, (), session_id=req.session_id + 1024, session_epoch=1)
    assert drive(leader.handle_fetch(unknown, T0 + 7), zk).error == FETCH_SESSION_ID_NOT_FOUND
    follower.fetch_request_for(0)
    drive(follower.handle_fetch_response(0, drive(leader.handle_fetch(unknown, T0 + 8), zk), T0 + 8), zk)
    assert follower.fetch_request_for(0).session_epoch == INITIAL_EPOCH  # starts over with a full request
