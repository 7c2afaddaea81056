"""log.initial.task.delay.ms (Kafka 3.9's ServerLogConfigs.LOG_INITIAL_TASK_DELAY_MS_CONFIG; 2.6's
LogManager.InitialTaskDelayMs, a fixed 30000): LogManager.startup schedules kafka-log-retention, kafka-log-flusher,
kafka-recovery-point-checkpoint and kafka-log-start-offset-checkpoint that long after the broker starts. Frozen time
(freezegun under SystemClock, as tests/core/broker/test_broker_timing.py)."""

from __future__ import annotations

import os
from datetime import timedelta

import pytest
from freezegun import freeze_time

from actors.clock import SystemClock
from core.broker.checkpoints import RECOVERY_POINT_CHECKPOINT, read_offset_checkpoint
from core.broker.kafka_configs import ConfigError
from core.broker.log_manager import log_initial_task_delay_ms
from core.broker.replica_manager import ReplicaManager
from messages.common import TopicPartition
from tests.support.broker import drive, lai_request, lai_state, make_rm, produce_request

TP = TopicPartition("t", 0)
# 200-byte segments, at most 200 bytes kept; the flusher every second, flushing a log 1 s after its last flush (and
# log.retention.check.interval.ms=1000)
LOG_PROPS = (("log.segment.bytes", "200"), ("log.retention.bytes", "200"), ("log.flush.scheduler.interval.ms", "1000"),
             ("log.flush.interval.ms", "1000"))


def _started(tmp_path, now_ms: float, delay: str | None) -> ReplicaManager:
    """A broker started at ``now_ms`` leading TP with 6 records over several segments, none of them flushed."""
    props = LOG_PROPS if delay is None else (*LOG_PROPS, ("log.initial.task.delay.ms", delay))
    rm = make_rm(tmp_path, now_ms=now_ms, log_props=props, log_retention_check_interval_ms=1000)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 0, [0], [0], is_new=True)]), now_ms))
    for i in range(6):
        drive(rm.handle_produce(produce_request(TP, f"value-{i:040d}", acks=1), now_ms))
    return rm


def _tasks_ran(rm: ReplicaManager) -> tuple[bool, bool, bool]:
    """(kafka-log-retention deleted the oldest segments, kafka-log-flusher flushed the active one,
    kafka-recovery-point-checkpoint wrote its file)."""
    log = rm.online_partition(TP).log
    checkpoint = os.path.join(rm.log_manager.log_dirs[0], RECOVERY_POINT_CHECKPOINT)
    return (log.log_start_offset > 0, log.recovery_point == log.log_end_offset,
            os.path.exists(checkpoint) and read_offset_checkpoint(checkpoint) == {TP: log.recovery_point})


@pytest.mark.parametrize(("delay", "expected_ms"), [("1000", 1000), (None, 30000), ("0", 0)])
def test_the_log_tasks_first_run_log_initial_task_delay_ms_after_start(tmp_path, delay, expected_ms):
    """Set to 1000 the retention check, the flusher and the checkpoints first run at start + 1000 ms; unset, at
    start + 30000 as in 2.6; 0 (Kafka's validator allows it) at start."""
    with freeze_time("2020-06-01 00:00:00") as frozen:
        clock = SystemClock()
        start = clock.now_ms()
        rm = _started(tmp_path, start, delay)
        assert min(rm._next_log_retention_ms, *rm._next_log_task_ms.values()) == start + expected_ms
        assert rm.next_task_due_ms() == min(start + expected_ms, start + 2500)  # or isr-change-propagation's
        if expected_ms:
            frozen.tick(timedelta(milliseconds=expected_ms - 1))
            drive(rm.run_scheduled_tasks(clock.now_ms()))
            assert _tasks_ran(rm) == (False, False, False)
            frozen.tick(timedelta(milliseconds=1))
        assert clock.now_ms() >= rm.next_task_due_ms()
        drive(rm.run_scheduled_tasks(clock.now_ms()))
        # a log created at start is flushed by the flusher once flush.ms (1000) passed since: not at start + 0
        assert _tasks_ran(rm) == (True, expected_ms >= 1000, True)
        # then every log.retention.check.interval.ms from the first run
        assert rm._next_log_retention_ms == start + expected_ms + 1000


def test_a_negative_delay_is_refused_in_kafkas_words(tmp_path):
    """ConfigDef.Range.atLeast(0) and the LONG type, as Kafka 3.9's LogConfig defines the key."""
    with pytest.raises(ConfigError, match=r"^Invalid value -1 for configuration log.initial.task.delay.ms: Value must "
                                          r"be at least 0$"):
        make_rm(tmp_path, log_props=(("log.initial.task.delay.ms", "-1"),))
    with pytest.raises(ConfigError, match=r"^Invalid value soon for configuration log.initial.task.delay.ms: Not a "
                                          r"number of type LONG$"):
        log_initial_task_delay_ms({"log.initial.task.delay.ms": "soon"})
    assert log_initial_task_delay_ms({}) == 30000
    assert log_initial_task_delay_ms({"log.initial.task.delay.ms": " 5 "}) == 5
