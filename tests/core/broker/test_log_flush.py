"""Flushes, recovery points and the clean-shutdown marker (Kafka 2.6.3 Log.flush / Log.roll / LogManager.shutdown /
flushDirtyLogs / checkpointLogRecoveryOffsets; issue #26, audit divergence 9 and the flush settings).

The recovery point moves only past data forced to disk (a rolled segment, flush.messages, flush.ms, shutdown); a
clean shutdown checkpoints it and writes ``.kafka_cleanshutdown``, so the next start recovers (CRC-re-reads)
nothing; a crash recovers from the checkpointed recovery point on. fsyncs are counted through
`core.broker.log_segment.fsync_file`, which every segment flush goes through.
"""

from __future__ import annotations

import os

import pytest

from core.broker import log_segment
from core.broker.checkpoints import LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT, read_offset_checkpoint
from core.broker.log import CLEAN_SHUTDOWN_FILE, Log
from core.broker.log_config import LogConfig, log_defaults_from_broker_config
from core.broker.log_manager import LogManager
from kactor.records import values_batch
from messages.common import TopicPartition
from tests.support.broker import drive, lai_request, lai_state, log_values, make_rm, produce_request

TP = TopicPartition("t", 0)
T0 = 1_000_000


@pytest.fixture
def fsyncs(monkeypatch):
    """The paths fsynced through the segment layer, in order."""
    synced: list[str] = []
    real = log_segment.fsync_file

    def counting(path: str, *disk: object) -> None:
        synced.append(os.path.basename(path))
        real(path, *disk)
    monkeypatch.setattr(log_segment, "fsync_file", counting)
    import core.broker.log as log_module
    monkeypatch.setattr(log_module, "fsync_file", counting)
    return synced


@pytest.fixture
def recovered(monkeypatch):
    """The base offsets of the segments CRC-recovered (LogSegment.recover) while loading."""
    bases: list[int] = []
    real = log_segment.LogSegment.recover

    def counting(self, *args, **kwargs):
        bases.append(self.base_offset)
        return real(self, *args, **kwargs)
    monkeypatch.setattr(log_segment.LogSegment, "recover", counting)
    return bases


def log_files(synced: list[str]) -> list[str]:
    return [name for name in synced if name.endswith(".log")]


def fill(log: Log, n: int, epoch: int = 0) -> None:
    for i in range(n):
        log.append_as_leader(values_batch([f"v{i}" * 20]), epoch, T0 + i)


# ----------------------------------------------------------------------------------------- recovery point (Log)


def test_the_recovery_point_moves_only_past_flushed_segments(tmp_path, fsyncs):
    """Log.roll flushes the segment it rolls (flush(newSegment.baseOffset)): the recovery point is the active
    segment's base offset, never the log end of unflushed data (2.6.3); nothing is fsynced before a roll."""
    log = Log(str(tmp_path), TP, config=LogConfig(segment_bytes=400))
    log.append_as_leader(values_batch(["a" * 50]), 0, T0)
    assert (log.recovery_point, log.unflushed_messages, fsyncs) == (0, 1, [])
    fill(log, 12)
    bases = [seg.base_offset for seg in log.segments]
    assert len(bases) > 2
    assert log.recovery_point == bases[-1] < log.log_end_offset
    assert log_files(fsyncs) == [log_segment.file_name(b, ".log") for b in bases[:-1]]
    log.truncate_to(bases[-2])  # the recovery point never stays above the log end
    assert log.recovery_point == log.log_end_offset == bases[-2]


def test_flush_messages_fsyncs_every_n_messages(tmp_path, fsyncs):
    """Log.append: ``if (unflushedMessages >= config.flushInterval) flush()`` — flush.messages=3 forces the log to
    disk after the 3rd and 6th message; flush.messages=1 after every append."""
    log = Log(str(tmp_path / "three"), TP, config=LogConfig(flush_messages=3))
    points = []
    for i in range(7):
        log.append_as_leader(values_batch([f"m{i}"]), 0, T0)
        points.append(log.recovery_point)
    assert points == [0, 0, 3, 3, 3, 6, 6]
    assert log_files(fsyncs) == ["00000000000000000000.log"] * 2
    fsyncs.clear()
    every = Log(str(tmp_path / "one"), TP, config=LogConfig(flush_messages=1))
    for i in range(4):
        every.append_as_leader(values_batch([f"m{i}", "x"]), 0, T0)
    assert len(log_files(fsyncs)) == 4 and every.recovery_point == 8


def test_default_flush_settings_never_fsync_appends(tmp_path, fsyncs):
    """Kafka's defaults (flush.messages = flush.ms = Long.MaxValue): appends alone are never forced to disk."""
    log = Log(str(tmp_path), TP)
    fill(log, 50)
    assert (fsyncs, log.recovery_point) == ([], 0)
    assert not log.maybe_flush_by_time(T0 + 10**12)


def test_flush_ms_flushes_a_log_from_the_flusher_task(tmp_path, fsyncs):
    """LogManager.flushDirtyLogs: a log whose last flush is flush.ms or more ago is flushed; a clean one is not
    fsynced again."""
    lm = LogManager([str(tmp_path)])
    lm.default_config = LogConfig(flush_ms=1000)
    log = lm.get_or_create_log(TP, is_new=True)
    log.append_as_leader(values_batch(["a"]), 0, T0)
    lm.flush_dirty_logs(T0 + 999)
    assert (fsyncs, log.recovery_point) == ([], 0)
    lm.flush_dirty_logs(T0 + 1000)
    assert log_files(fsyncs) == ["00000000000000000000.log"] and log.recovery_point == 1
    lm.flush_dirty_logs(T0 + 5000)  # nothing new: flush(offset <= recoveryPoint) returns at once
    assert len(log_files(fsyncs)) == 1


def test_broker_flush_settings_are_the_logs_defaults():
    """log.flush.interval.messages / log.flush.interval.ms are flush.messages / flush.ms's broker defaults; without
    log.flush.interval.ms, log.flush.scheduler.interval.ms (KafkaConfig.logFlushIntervalMs)."""
    defaults = log_defaults_from_broker_config({"log.flush.interval.messages": "10",
                                                "log.flush.scheduler.interval.ms": "2000"})
    config = LogConfig.from_props(defaults, {})
    assert (config.flush_messages, config.flush_ms) == (10, 2000)
    explicit = LogConfig.from_props(log_defaults_from_broker_config(
        {"log.flush.interval.ms": "500", "log.flush.scheduler.interval.ms": "2000"}), {"flush.messages": "1"})
    assert (explicit.flush_messages, explicit.flush_ms) == (1, 500)
    assert (LogConfig().flush_messages, LogConfig().flush_ms) == (2**63 - 1, 2**63 - 1)
    with pytest.raises(ValueError, match="flush.ms"):
        LogConfig.from_props({}, {"flush.ms": "-1"})


# ------------------------------------------------------------------------------------- clean shutdown (LogManager)


def _broker_with_segments(tmp_path):
    rm = make_rm(tmp_path)
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 1, [0], [0], is_new=True)]), 0))
    p = rm.online_partition(TP)
    p.log.config = LogConfig(segment_bytes=4096)
    for i in range(200):
        drive(rm.handle_produce(produce_request(TP, f"{i:03d}" + "x" * 97, acks=1), 1000 + i))
    return rm, p.log


def test_a_clean_shutdown_restart_recovers_nothing(tmp_path, recovered):
    """LogManager.shutdown: logs flushed, recovery points (= log ends) and log starts checkpointed, the clean-shutdown
    marker written; the restart loads every segment without CRC-recovering any, with the same records, and removes
    the marker (a crash after it recovers again). Before: 9 of 9 segments re-read."""
    rm, log = _broker_with_segments(tmp_path)
    segments, leo = len(log.segments), log.log_end_offset
    assert segments > 5
    drive(rm.shutdown())
    d = rm.log_manager.log_dirs[0]
    assert read_offset_checkpoint(os.path.join(d, RECOVERY_POINT_CHECKPOINT)) == {TP: leo}
    assert os.path.exists(os.path.join(d, LOG_START_OFFSET_CHECKPOINT))
    with open(os.path.join(d, CLEAN_SHUTDOWN_FILE)) as f:
        assert f.read() == "t-0\n"
    rm2 = make_rm(tmp_path)
    log2 = rm2.log_manager.get_log(TP)
    assert recovered == []
    assert (len(log2.segments), log2.log_end_offset, log2.recovery_point) == (segments, leo, leo)
    assert log_values(log2)[0].startswith("000") and log_values(log2, leo - 1)[-1].startswith("199")
    assert not os.path.exists(os.path.join(d, CLEAN_SHUTDOWN_FILE))
    # appended after the clean start, then a crash (no close): the next load recovers from the recovery point on
    log2.append_as_leader(values_batch(["after"]), 1, 5000)
    make_rm(tmp_path)
    assert recovered == [log2.segments[-1].base_offset]


def test_a_crash_recovers_from_the_periodically_checkpointed_recovery_point(tmp_path, recovered):
    """"kafka-recovery-point-checkpoint" runs every log.flush.offset.checkpoint.interval.ms (60000, first after
    30 s) from the broker's periodic tasks: after a crash only the segment past the recovery point (the active one,
    never flushed) is recovered; before the task ran, everything is."""
    rm, log = _broker_with_segments(tmp_path)
    d = rm.log_manager.log_dirs[0]
    drive(rm.run_scheduled_tasks(29_999))
    assert not os.path.exists(os.path.join(d, RECOVERY_POINT_CHECKPOINT))
    drive(rm.run_scheduled_tasks(30_000))
    active = log.segments[-1].base_offset
    assert read_offset_checkpoint(os.path.join(d, RECOVERY_POINT_CHECKPOINT)) == {TP: active}
    assert 0 < active < log.log_end_offset and log.recovery_point == active
    drive(rm.handle_produce(produce_request(TP, "y" * 4000, acks=1), 40_000))  # rolls: the recovery point moves
    assert log.recovery_point > active
    drive(rm.run_scheduled_tasks(89_999))
    assert read_offset_checkpoint(os.path.join(d, RECOVERY_POINT_CHECKPOINT)) == {TP: active}
    drive(rm.run_scheduled_tasks(90_000))
    assert read_offset_checkpoint(os.path.join(d, RECOVERY_POINT_CHECKPOINT)) == {TP: log.recovery_point}
    make_rm(tmp_path)  # a crash: no shutdown
    assert recovered == [log.segments[-1].base_offset]


def test_the_flusher_task_runs_every_log_flush_scheduler_interval(tmp_path, fsyncs):
    """"kafka-log-flusher" (LogManager.flushDirtyLogs) every log.flush.scheduler.interval.ms, first after 30 s,
    with the broker's log.flush.interval.ms as every log's flush.ms."""
    rm = make_rm(tmp_path, log_props=(("log.flush.scheduler.interval.ms", "1000"), ("log.flush.interval.ms", "5000")))
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 1, [0], [0], is_new=True)]), 0))
    drive(rm.handle_produce(produce_request(TP, "a", acks=1), 1000))
    log = rm.online_partition(TP).log
    drive(rm.run_scheduled_tasks(29_999))
    assert log.recovery_point == 0
    drive(rm.run_scheduled_tasks(30_000))  # the log's last flush (its creation at 0) is 30 s ago
    assert log.recovery_point == 1 and log_files(fsyncs) == ["00000000000000000000.log"]
    drive(rm.handle_produce(produce_request(TP, "b", acks=1), 31_000))
    drive(rm.run_scheduled_tasks(31_000))
    assert log.recovery_point == 1  # flushed 1 s ago: not yet
    drive(rm.run_scheduled_tasks(35_000))
    assert log.recovery_point == 2


def test_shards_sharing_a_dir_each_vouch_for_their_own_logs(tmp_path, recovered):
    """Two LogManagers over one dir (a broker's PartitionActor shards): each clean shutdown adds its logs to the
    marker and each start removes its own, so a shard that did not shut down cleanly is recovered while the other
    is not, and the marker never vouches for a log that was written after it."""
    d = str(tmp_path)
    tps = [TopicPartition("t", p) for p in range(4)]

    def shard(even: bool) -> LogManager:
        return LogManager([d], owns=lambda tp: (tp.partition % 2 == 0) == even)
    first = [shard(True), shard(False)]
    for lm in first:
        for tp in tps:
            if lm.owns(tp):
                lm.get_or_create_log(tp, is_new=True).append_as_leader(values_batch(["a", "b"]), 0, T0)
    first[0].close()  # the odd shard crashes
    with open(os.path.join(d, CLEAN_SHUTDOWN_FILE)) as f:
        assert f.read() == "t-0\nt-2\n"
    even, odd = shard(True), shard(False)
    assert sorted(recovered) == [0, 0]  # t-1 and t-3 only
    assert not os.path.exists(os.path.join(d, CLEAN_SHUTDOWN_FILE))
    assert read_offset_checkpoint(os.path.join(d, RECOVERY_POINT_CHECKPOINT)) == {tps[0]: 2, tps[2]: 2}
    odd.close()
    even.close()
    assert read_offset_checkpoint(os.path.join(d, RECOVERY_POINT_CHECKPOINT)) == {tp: 2 for tp in tps}
    recovered.clear()
    shard(False)
    with open(os.path.join(d, CLEAN_SHUTDOWN_FILE)) as f:
        assert f.read() == "t-0\nt-2\n"  # still the even shard's to use
    shard(True)
    assert recovered == [] and not os.path.exists(os.path.join(d, CLEAN_SHUTDOWN_FILE))


def test_an_empty_marker_from_kafka_vouches_for_every_log(tmp_path, recovered):
    """Kafka's own ``.kafka_cleanshutdown`` is empty and covers the whole dir."""
    lm = LogManager([str(tmp_path)])
    lm.get_or_create_log(TP, is_new=True).append_as_leader(values_batch(["a"]), 0, T0)
    lm.close()
    with open(os.path.join(str(tmp_path), CLEAN_SHUTDOWN_FILE), "w"):
        pass
    LogManager([str(tmp_path)])
    assert recovered == []
