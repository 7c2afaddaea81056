"""Frozen-time tests: ISR expiry (1× / 1.5× replica.lag.time.max.ms), ISR-change propagation blackout (5 s) and maximum
interval (60 s), the HW checkpoint interval — with an injected clock (ManualClock, or SystemClock under freezegun)."""

from __future__ import annotations

import os
from datetime import timedelta

from freezegun import freeze_time

from actors.clock import ManualClock, SystemClock
from core.broker.checkpoints import REPLICATION_OFFSET_CHECKPOINT, read_offset_checkpoint
from core.broker.isr_propagation import IsrChangePropagation
from messages.common import TopicPartition
from messages.replication import (
    FetchPartition,
    FetchRequest,
)
from tests.support.broker import broker_zk, drive, lai_request, lai_state, make_rm, produce_request

TP = TopicPartition("t", 0)
TP2 = TopicPartition("u", 3)
FOO = TopicPartition("foo", 0)
LAG = 30000


def _leader_with_lagging_follower(tmp_path, clock, zk):
    rm = make_rm(tmp_path, now_ms=clock.now_ms())
    zk.put_partition_state(TP, leader=0, isr=[0, 1], leader_epoch=0, controller_epoch=0)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 0, [0, 1], [0, 1], is_new=True)]),
                                   clock.now_ms()), zk)
    drive(rm.handle_produce(produce_request(TP, "a", "b"), clock.now_ms()), zk)
    return rm


def _tick(rm, clock, zk, until_ms, step_ms=500):
    """Advance the clock in steps, running whatever periodic task is due; returns when the ISR first shrank."""
    shrunk_at = None
    while clock.now_ms() < until_ms:
        clock.advance(step_ms)
        if clock.now_ms() >= rm.next_task_due_ms():
            drive(rm.run_scheduled_tasks(clock.now_ms()), zk)
        if shrunk_at is None and rm.online_partition(TP).isr == (0,):
            shrunk_at = clock.now_ms()
    return shrunk_at


def test_isr_expiry_between_1x_and_1_5x_lag(tmp_path):
    """A follower that stops fetching is out of sync after replica.lag.time.max.ms, but the isr-expiration task runs
    every lag/2, so it leaves the ISR after more than 1× and by 1.5× the lag."""
    clock = ManualClock(1_000_000)
    zk = broker_zk()
    rm = _leader_with_lagging_follower(tmp_path, clock, zk)
    start = clock.now_ms()
    shrunk_at = _tick(rm, clock, zk, start + 2 * LAG)
    assert shrunk_at is not None
    assert start + LAG < shrunk_at <= start + 1.5 * LAG
    assert rm.isr_shrinks == 1


def test_isr_expiry_follower_caught_up_at_last_fetch_stays(tmp_path):
    clock = ManualClock(1_000_000)
    zk = broker_zk()
    rm = _leader_with_lagging_follower(tmp_path, clock, zk)
    start = clock.now_ms()
    clock.advance(LAG * 0.9)
    drive(rm.handle_fetch(FetchRequest(1, (FetchPartition(TP, 2, 0),)), clock.now_ms()), zk)  # caught up
    drive(rm.handle_produce(produce_request(TP, "c"), clock.now_ms()), zk)  # follower lags again
    assert _tick(rm, clock, zk, start + 1.5 * LAG) is None  # caught up at 0.9×: not out before 1.9×
    assert _tick(rm, clock, zk, start + 2.5 * LAG) is not None


def test_isr_change_propagation_blackout_with_freezegun():
    """maybePropagateIsrChanges: nothing while changes keep coming within 5 s; published 5 s after the last one."""
    with freeze_time("2020-06-01 00:00:00") as frozen:
        clock = SystemClock()
        prop = IsrChangePropagation(clock.now_ms())
        zk = broker_zk()
        prop.record_isr_change(TP, clock.now_ms())
        frozen.tick(timedelta(milliseconds=2500))
        assert drive(prop.maybe_propagate_isr_changes(clock.now_ms()), zk) == ()
        prop.record_isr_change(TP2, clock.now_ms())
        frozen.tick(timedelta(milliseconds=5000))  # exactly 5 s after the last change: not yet (strictly more)
        assert drive(prop.maybe_propagate_isr_changes(clock.now_ms()), zk) == ()
        frozen.tick(timedelta(milliseconds=1))
        assert drive(prop.maybe_propagate_isr_changes(clock.now_ms()), zk) == (TP, TP2)
        (child,) = zk.children("/isr_change_notification")
        assert child == "isr_change_0000000000"
        assert zk.get("/isr_change_notification/" + child) == (
            '{"version":1,"partitions":[{"topic":"t","partition":0},{"topic":"u","partition":3}]}')
        assert prop.isr_change_set == set()


def test_isr_change_propagation_max_interval():
    """Changes arriving every 2 s never leave a 5 s gap; they are still published once 60 s passed since the last
    publication."""
    clock = ManualClock(0)
    prop = IsrChangePropagation(clock.now_ms())
    zk = broker_zk()
    published_at = []
    while clock.now_ms() < 130_000:
        clock.advance(500)
        if clock.now_ms() % 2000 == 0:
            prop.record_isr_change(TP, clock.now_ms())
        if clock.now_ms() % 2500 == 0 and drive(prop.maybe_propagate_isr_changes(clock.now_ms()), zk):
            published_at.append(clock.now_ms())
    assert published_at == [62_500, 125_000]
    assert len(zk.children("/isr_change_notification")) == 2


def test_isr_change_propagation_failed_create_keeps_set():
    prop = IsrChangePropagation(0)
    prop.record_isr_change(TP, 0)
    zk = broker_zk()
    zk.force["/isr_change_notification/isr_change_"] = "CONNECTIONLOSS"
    assert drive(prop.maybe_propagate_isr_changes(10_000), zk) == ()
    assert prop.isr_change_set == {TP}
    assert drive(prop.maybe_propagate_isr_changes(12_500), zk) == (TP,)


def test_scheduled_isr_propagation_runs_every_2500ms(tmp_path):
    """Through ReplicaManager.run_scheduled_tasks: the ISR expansion is published by the first check > 5 s later."""
    clock = ManualClock(0)
    zk = broker_zk()
    rm = make_rm(tmp_path, now_ms=0)
    zk.put_partition_state(TP, leader=0, isr=[0], leader_epoch=0, controller_epoch=0)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 0, [0], [0, 1], is_new=True)]), 0), zk)
    drive(rm.handle_produce(produce_request(TP, "a"), 0), zk)
    clock.set(1000)
    drive(rm.handle_fetch(FetchRequest(1, (FetchPartition(TP, 1, 0),)), clock.now_ms()), zk)  # expands at 1000
    while not zk.children("/isr_change_notification"):
        clock.advance(100)
        if clock.now_ms() >= rm.next_task_due_ms():
            drive(rm.run_scheduled_tasks(clock.now_ms()), zk)
    assert clock.now_ms() == 7500  # checks at 2500, 5000, 7500; 7500 − 1000 > 5000


def test_hw_checkpoint_interval_with_freezegun(tmp_path):
    """The highwatermark-checkpoint task starts with the first LeaderAndIsr and runs every 5000 ms; the file is
    Kafka's format (0, count, "topic partition hw")."""
    with freeze_time("2020-06-01 00:00:00") as frozen:
        clock = SystemClock()
        zk = broker_zk()
        rm = make_rm(tmp_path, now_ms=clock.now_ms())
        drive(rm.run_scheduled_tasks(clock.now_ms() + 10_000), zk)
        path = os.path.join(rm.log_manager.log_dirs[0], REPLICATION_OFFSET_CHECKPOINT)
        assert not os.path.exists(path)  # not started before the first LeaderAndIsr
        t0 = clock.now_ms()
        drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 0, [0], [0], is_new=True)]), t0), zk)
        drive(rm.handle_produce(produce_request(TP, "a", "b", "c"), t0), zk)
        frozen.tick(timedelta(milliseconds=4999))
        if clock.now_ms() >= rm.next_task_due_ms():
            drive(rm.run_scheduled_tasks(clock.now_ms()), zk)
        assert not os.path.exists(path)
        frozen.tick(timedelta(milliseconds=1))
        assert clock.now_ms() >= rm.next_task_due_ms()
        drive(rm.run_scheduled_tasks(clock.now_ms()), zk)
        with open(path) as f:
            assert f.read() == "0\n1\nt 0 3\n"
        assert read_offset_checkpoint(path) == {TP: 3}


def _leader_with_follower(tmp_path, clock, zk):
    rm = make_rm(tmp_path, now_ms=clock.now_ms())
    zk.put_partition_state(FOO, leader=0, isr=[0, 1], leader_epoch=0, controller_epoch=0)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(FOO, 0, 0, [0, 1], [0, 1], is_new=True)]),
                                   clock.now_ms()), zk)
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
        drive(rm.handle_fetch(FetchRequest(1, (FetchPartition(FOO, 0, 0),)), start), zk)  # caught up at start
        drive(rm.handle_produce(produce_request(FOO, "a"), start), zk)  # then it lags
        p = rm.online_partition(FOO)
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
                prop.record_isr_change(FOO, clock.now_ms())
            if elapsed % 2500 == 0 and drive(prop.maybe_propagate_isr_changes(clock.now_ms()), zk):
                published.append(elapsed)
        assert published == [62_500, 125_000]
