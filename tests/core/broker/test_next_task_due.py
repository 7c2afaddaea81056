"""ReplicaManager.next_task_due_ms keeps the fixed-rate tasks' minimum instead of taking it after every step of a
PartitionActor (issue #43): through leadership, produces that wait (acks=all), fetches that park, and scheduled
tasks run at and between their due times, it answers what the minimum taken afresh answers."""

from __future__ import annotations

from core.broker.replica_manager import ReplicaManager
from kactor.records import values_batch
from messages.common import TopicPartition
from messages.replication import ProducePartition, ProduceRequest
from tests.support.broker import broker_zk, drive, lai_request, lai_state, make_rm, produce_request, settle_truncation

B = 1_000_000
TP = TopicPartition("t", 0)


def _plain_next_task_due(rm: ReplicaManager) -> float:
    """next_task_due_ms as it was: every due time and deadline taken afresh."""
    due = min(rm._next_isr_expiration_ms, rm._next_isr_propagation_ms, rm._next_log_retention_ms,
              *rm._next_log_task_ms.values())
    if rm._next_hw_checkpoint_ms is not None:
        due = min(due, rm._next_hw_checkpoint_ms)
    for ops in (rm._delayed_produce, rm._delayed_fetch, rm._delayed_delete_records, rm._delayed_txn_markers):
        for op in ops:
            due = min(due, op.deadline_ms)
    return due


def test_next_task_due_is_the_minimum_taken_afresh(tmp_path):
    zk = broker_zk()
    zk.put_partition_state(TP, leader=0, isr=[0, 1], leader_epoch=0, controller_epoch=0)
    leader = make_rm(tmp_path, 0, now_ms=B, replica_high_watermark_checkpoint_interval_ms=700,
                     replica_lag_time_max_ms=2600)
    follower = make_rm(tmp_path, 1, now_ms=B)
    seen: set[float] = set()

    def check() -> None:
        for rm in (leader, follower):
            assert rm.next_task_due_ms() == _plain_next_task_due(rm)
            seen.add(leader.next_task_due_ms())

    check()
    for rm in (leader, follower):
        drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 0, [0, 1], [0, 1], is_new=True)]), B), zk)
        check()
    settle_truncation(zk, leader, follower, 0, B)
    now = B
    for step in range(120):
        now += 97
        # acks=all waits in the produce purgatory until the follower's fetch moves the high watermark
        drive(leader.handle_produce(produce_request(TP, f"v{step}", acks=-1, timeout_ms=300 + step), now), zk)
        check()
        if step % 3:
            fetched = drive(leader.handle_fetch(follower.fetch_request_for(0, now), now, "broker-1"), zk)
            check()
            if fetched is not None:
                drive(follower.handle_fetch_response(0, fetched, now), zk)
        for rm in (leader, follower):
            if now >= rm.next_task_due_ms():
                drive(rm.run_scheduled_tasks(now), zk)
            check()
    assert len(seen) > 20  # the due time moved with the tasks and the waiting operations


def _scheduled_run(tmp_path, plain: bool) -> list[object]:
    """The leader's and follower's effects and answers through produces that wait, fetches that park and the
    scheduled tasks run after every step (mostly with nothing due); ``plain``: run_scheduled_tasks without its fast
    path (every task's due time tested, the purgatories walked)."""
    zk = broker_zk()
    zk.put_partition_state(TP, leader=0, isr=[0, 1], leader_epoch=0, controller_epoch=0)
    leader = make_rm(tmp_path / "l", 0, now_ms=B, replica_high_watermark_checkpoint_interval_ms=700,
                     replica_lag_time_max_ms=2600)
    follower = make_rm(tmp_path / "f", 1, now_ms=B)
    out: list[object] = []

    def scheduled(rm: ReplicaManager, now: float) -> None:
        effects: list[object] = []
        if plain:
            rm._periodic_due_ms = float("-inf")
        drive(rm.run_scheduled_tasks(now), zk, effects)
        if plain:
            rm._refresh_periodic_due()
        out.append((rm.local_broker_id, now, effects, rm.next_task_due_ms()))

    for rm in (leader, follower):
        drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 0, [0, 1], [0, 1], is_new=True)]), B), zk)
    settle_truncation(zk, leader, follower, 0, B)
    now = B
    for step in range(120):
        now += 97 if step % 10 else 1200  # now and then past the waiting operations' deadlines
        for rm in (leader, follower):
            scheduled(rm, now)
        effects: list[object] = []
        request = ProduceRequest(-1, 300 + step, (ProducePartition(TP, values_batch([f"v{step}"], int(now))),))
        out.append(drive(leader.handle_produce(request, now), zk, effects))
        if step % 3:
            fetched = drive(leader.handle_fetch(follower.fetch_request_for(0, now), now, "broker-1"), zk, effects)
            if fetched is not None:
                drive(follower.handle_fetch_response(0, fetched, now), zk, effects)
            out.append(fetched)
        out.append(effects)
        for rm in (leader, follower):
            scheduled(rm, now + 1)
    return out


def test_scheduled_tasks_with_nothing_due_do_what_the_full_pass_does(tmp_path):
    """run_scheduled_tasks' fast path (no periodic task due: only the purgatories' expired operations) answers and
    emits what the pass over every task does."""
    fast = _scheduled_run(tmp_path / "fast", plain=False)
    assert fast == _scheduled_run(tmp_path / "plain", plain=True)
    assert any(effects for _b, _now, effects, _due in (x for x in fast if isinstance(x, tuple) and len(x) == 4))
