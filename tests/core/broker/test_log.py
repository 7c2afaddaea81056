"""core/broker/log.py's record-batch Log (issue #20 item 4): Kafka's segment layout, reads by bytes, validation with
Kafka's errors, rolling, recovery of a torn tail, retention, timestamps and idempotent producers."""

from __future__ import annotations

import os
import struct

import pytest

from core.broker.api_error import ApiError
from core.broker.log import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, Log, OffsetsOutOfOrderError
from core.broker.log_config import LogConfig
from core.broker.log_manager import LogManager
from messages.common import Errors, TopicPartition
from protocol.records import Record, build_batch, iter_batches

TP = TopicPartition("t", 0)
T0 = 1_700_000_000_000


def batch(n: int = 3, size: int = 10, ts: int = T0, pid: int = -1, epoch: int = -1, seq: int = -1,
          tag: str = "v") -> bytes:
    return build_batch([Record(i, i, None, f"{tag}{i}".encode().ljust(size, b".")) for i in range(n)],
                       first_timestamp=ts, producer_id=pid, producer_epoch=epoch, base_sequence=seq)


def values(data: bytes) -> list[tuple[int, bytes]]:
    return [(b.base_offset + r.offset_delta, r.value) for b in iter_batches(data) for r in b.records()]


def small(**kw) -> LogConfig:
    return LogConfig(**kw)


def test_leader_append_assigns_offsets_and_epoch_in_place_and_reads_whole_batches(tmp_path):
    log = Log(str(tmp_path), TP)
    first = log.append_as_leader(batch(3, tag="a"), leader_epoch=5, now_ms=T0)
    assert (first.first_offset, first.last_offset, first.num_records, first.shallow_count) == (0, 2, 3, 1)
    assert (first.max_timestamp, first.offset_of_max_timestamp, first.last_leader_epoch) == (T0 + 2, 2, 5)
    second = log.append_as_leader(batch(2, tag="b"), leader_epoch=6, now_ms=T0)
    assert (second.first_offset, second.last_offset) == (3, 4) and log.log_end_offset == 5
    data = log.read(0, 1 << 20)
    got = list(iter_batches(data))
    assert [(b.base_offset, b.partition_leader_epoch) for b in got] == [(0, 5), (3, 6)]
    assert values(data)[3] == (3, b"b0".ljust(10, b"."))
    # on disk: the same bytes, in Kafka's file name
    with open(os.path.join(log.dir, "00000000000000000000.log"), "rb") as f:
        assert f.read() == data
    assert log.leader_epoch_entries == ((5, 0), (6, 3))
    # a read from inside the second batch returns that whole batch; max_offset stops before the batch holding it
    assert [b.base_offset for b in iter_batches(log.read(4, 1 << 20))] == [3]
    assert [b.base_offset for b in iter_batches(log.read(0, 1 << 20, max_offset=3))] == [0]
    assert log.read(0, 1 << 20, max_offset=2) == b""  # the first batch holds offset 2: not visible yet
    assert log.read(5, 100) == b""  # at the log end
    # max_bytes: one batch at least, whole batches only
    assert [b.base_offset for b in iter_batches(log.read(0, 10))] == [0]
    assert log.read(0, 10, min_one_message=False) == b""
    for bad in (-1, 6):
        with pytest.raises(ApiError) as e:
            log.read(bad, 100)
        assert e.value.error == Errors.OFFSET_OUT_OF_RANGE


def test_invalid_batches_get_kafkas_errors_and_nothing_is_written(tmp_path):
    log = Log(str(tmp_path), TP, config=small(max_message_bytes=200))
    good = batch(1)
    corrupt = bytearray(good)
    corrupt[-1] ^= 0xFF
    bad_codec = bytearray(good)
    bad_codec[22] |= 0x07  # compression codec 7 (the CRC is checked first in Kafka too, so fix it up)
    from crc32c import crc32c
    struct.pack_into(">I", bad_codec, 17, crc32c(bytes(bad_codec[21:])))
    cases = [(bytes(corrupt), Errors.CORRUPT_MESSAGE), (bytes(bad_codec), Errors.UNSUPPORTED_COMPRESSION_TYPE),
             (good[:-3], Errors.CORRUPT_MESSAGE), (batch(1, size=300), Errors.MESSAGE_TOO_LARGE),
             (good + good, Errors.INVALID_RECORD)]
    for records, error in cases:
        with pytest.raises(ApiError) as e:
            log.append_as_leader(records, 0, T0)
        assert e.value.error == error, records
    assert log.log_end_offset == 0 and os.path.getsize(os.path.join(log.dir, "00000000000000000000.log")) == 0


def test_segments_roll_with_kafka_files_and_indexes(tmp_path):
    log = Log(str(tmp_path), TP, config=small(segment_bytes=1000, index_interval_bytes=100))
    for i in range(20):
        log.append_as_leader(batch(2, size=50, ts=T0 + i), 0, T0)
    names = sorted(os.listdir(log.dir))
    bases = [seg.base_offset for seg in log.segments]
    assert len(bases) > 3 and bases[0] == 0
    for base in bases[:-1]:  # the rolled ones; the active segment's index files come when it rolls or closes
        for suffix in (".log", ".index", ".timeindex"):
            assert f"{base:020d}{suffix}" in names
    for seg in log.segments:
        assert seg.size <= 1000
    # only the active segment's index entries are held in memory
    assert [seg.offset_index._keys is not None for seg in log.segments] == [False] * (len(bases) - 1) + [True]
    # the index's entries point at batch starts holding their offsets (relative offset, position)
    seg = log.segments[1]
    with open(seg.offset_index.path, "rb") as f:
        entries = list(struct.iter_unpack(">ii", f.read()))
    assert entries
    with open(seg.log_path, "rb") as f:
        raw = f.read()
    for rel, pos in entries:
        b = next(iter_batches(raw[pos:]))
        assert b.base_offset <= seg.base_offset + rel
    # time index: increasing timestamps
    with open(seg.time_index.path, "rb") as f:
        times = list(struct.iter_unpack(">qi", f.read()))
    assert times == sorted(times) and times[-1][0] == seg.max_timestamp
    # every offset reads back across segments
    offset, seen = 0, []
    while offset < log.log_end_offset:
        data = log.read(offset, 1 << 20)
        for o, _ in values(data):
            if o >= offset:
                seen.append(o)
        offset = seen[-1] + 1
    assert seen == list(range(40))


def test_recovery_truncates_a_torn_or_corrupt_tail(tmp_path):
    log = Log(str(tmp_path), TP)
    for i in range(3):
        log.append_as_leader(batch(2, tag=f"{i}-"), 1, T0)
    path = os.path.join(log.dir, "00000000000000000000.log")
    good_size = os.path.getsize(path)
    log.close()
    with open(path, "ab") as f:
        f.write(batch(2)[:40])  # a torn write
    again = Log(str(tmp_path), TP)
    assert again.log_end_offset == 6 and os.path.getsize(path) == good_size
    assert [o for o, _ in values(again.read(0, 1 << 20))] == list(range(6))
    again.close()
    # a flipped byte in the last batch: its CRC fails, it goes
    with open(path, "r+b") as f:
        f.seek(good_size - 2)
        f.write(b"\x00\x01")
    third = Log(str(tmp_path), TP)
    assert third.log_end_offset == 4 and third.leader_epoch_entries == ((1, 0),)
    assert third.append_as_leader(batch(1), 2, T0).first_offset == 4


def test_missing_or_corrupt_index_is_rebuilt(tmp_path):
    config = small(segment_bytes=600, index_interval_bytes=50)
    log = Log(str(tmp_path), TP, config=config)
    for _ in range(10):
        log.append_as_leader(batch(2, size=40), 0, T0)
    before = log.read(7, 1 << 20)
    first = log.segments[0]
    log.close()
    os.unlink(first.offset_index.path)
    with open(log.segments[1].offset_index.path, "ab") as f:
        f.write(b"\x01\x02\x03")  # not a whole entry
    again = Log(str(tmp_path), TP, config=config, recovery_point=log.log_end_offset)
    assert again.read(7, 1 << 20) == before and again.log_end_offset == 20
    assert os.path.getsize(again.segments[0].offset_index.path) % 8 == 0


def test_follower_append_keeps_leader_offsets_and_epochs(tmp_path):
    leader = Log(str(tmp_path / "l"), TP)
    leader.append_as_leader(batch(2), 3, T0)
    leader.append_as_leader(batch(2), 4, T0)
    follower = Log(str(tmp_path / "f"), TP)
    info = follower.append_as_follower(leader.read(0, 1 << 20))
    assert (info.first_offset, info.last_offset, info.shallow_count) == (0, 3, 2)
    assert follower.leader_epoch_entries == ((3, 0), (4, 2)) and follower.read(0, 1 << 20) == leader.read(0, 1 << 20)
    with pytest.raises(OffsetsOutOfOrderError):
        follower.append_as_follower(leader.read(2, 1 << 20))


def test_truncate_to_drops_whole_batches(tmp_path):
    log = Log(str(tmp_path), TP, config=small(segment_bytes=300))
    for epoch in range(6):
        log.append_as_leader(batch(2), epoch, T0)
    assert len(log.segments) > 1
    assert log.truncate_to(5)  # inside the batch [4, 5]: the whole batch goes
    assert log.log_end_offset == 4 and log.leader_epoch_entries == ((0, 0), (1, 2))
    assert [o for o, _ in values(log.read(0, 1 << 20))][-1] <= 3
    assert log.append_as_leader(batch(1), 9, T0).first_offset == 4
    log.truncate_fully_and_start_at(42)
    assert (log.log_start_offset, log.log_end_offset, log.leader_epoch_entries) == (42, 42, ())
    assert [seg.base_offset for seg in log.segments] == [42]
    assert log.append_as_leader(batch(1), 10, T0).first_offset == 42


def test_truncate_to_end_offset_clears_epoch_cache(tmp_path):
    """LogTest.testTruncateToEndOffsetClearsEpochCache (2.6.3, KAFKA-10706): a truncation at or past the log end
    truncates nothing but still drops the epoch entries starting at the log end (an epoch this replica started as
    leader without writing a record)."""
    log = Log(str(tmp_path), TP)
    seed = build_batch([Record(0, 0, None, b"a"), Record(1, 1, None, b"b")], base_offset=27,
                       partition_leader_epoch=19, first_timestamp=T0)
    log.append_as_follower(seed)
    assert log.leader_epoch_entries[-1] == (19, 27) and log.log_end_offset == 29
    for epoch, target in ((20, log.log_end_offset), (24, log.log_end_offset + 1)):
        log.assign_epoch_start_offset(epoch, log.log_end_offset)  # becoming leader
        assert log.leader_epoch_entries[-1] == (epoch, 29) and log.log_end_offset == 29
        assert log.truncate_to(target) is False  # then follower, truncating to the log end or past it
        assert log.leader_epoch_entries[-1] == (19, 27) and log.log_end_offset == 29


def test_a_truncated_segment_keeps_the_largest_timestamp_of_its_batches(tmp_path):
    """LogSegment.truncateTo → loadLargestTimestamp: batches smaller than index.interval.bytes leave no time-index
    entry, so the largest timestamp after a truncation must be read from the batches themselves. Found by
    `kactor sim --seeds 7 --steps 20`: a follower that truncated to its high watermark judged its segment by its
    creation time (0), and retention deleted acknowledged records below the high watermark of an ISR replica."""
    follower = Log(str(tmp_path), TP, config=small(retention_ms=7 * 24 * 3600 * 1000))
    for i in range(4):
        follower.append_as_follower(build_batch([Record(0, 0, None, b"r")], base_offset=i, partition_leader_epoch=0,
                                                first_timestamp=T0 + i))
    assert follower.segments[0].time_index.last_entry() is None  # small batches: no index entry
    follower.update_high_watermark(2)
    assert follower.truncate_to(2)  # becoming a follower of a new leader: truncate to the high watermark
    assert follower.segments[0].largest_timestamp() == T0 + 1
    assert follower.delete_old_segments(T0 + 60_000) == 0
    assert (follower.log_start_offset, [o for o, _ in values(follower.read(0, 1 << 20))]) == (0, [0, 1])


def test_retention_by_time_and_size_never_past_the_high_watermark(tmp_path):
    config = small(segment_bytes=300, retention_ms=1000)
    log = Log(str(tmp_path), TP, config=config)
    for i in range(6):
        log.append_as_leader(batch(2, ts=T0 + i), 0, T0 + i)
    n = len(log.segments)
    assert log.delete_old_segments(T0 + 5000) == 0  # the high watermark is 0: nothing may go
    log.update_high_watermark(log.log_end_offset)
    deleted = log.delete_old_segments(T0 + 5000)
    assert deleted == n and log.log_start_offset == log.log_end_offset == 12
    assert [seg.base_offset for seg in log.segments] == [12]  # rolled first, as Kafka does when all go
    # retention.bytes: whole segments go while the log stays above it (Kafka: only if the excess covers them)
    sized = Log(str(tmp_path / "s"), TP, config=small(segment_bytes=300, retention_bytes=250, retention_ms=-1))
    for i in range(6):
        sized.append_as_leader(batch(2, ts=T0 + i), 0, T0)
    assert [seg.size for seg in sized.segments] == [285, 285]
    sized.update_high_watermark(sized.log_end_offset)
    assert sized.delete_old_segments(T0) == 1
    assert (sized.size, sized.log_start_offset, sized.segments[0].base_offset) == (285, 6, 6)
    assert sized.delete_old_segments(T0) == 0


def test_fetch_offset_by_timestamp(tmp_path):
    log = Log(str(tmp_path), TP, config=small(segment_bytes=300))
    for i in range(5):
        log.append_as_leader(batch(2, ts=T0 + 10 * i), i, T0)  # records at T0+10i, T0+10i+1
    assert log.fetch_offset_by_timestamp(LATEST_TIMESTAMP) == (10, -1, 4)
    assert log.fetch_offset_by_timestamp(EARLIEST_TIMESTAMP) == (0, -1, 0)
    assert log.fetch_offset_by_timestamp(T0 + 21) == (5, T0 + 21, 2)
    assert log.fetch_offset_by_timestamp(T0 + 22) == (6, T0 + 30, 3)
    assert log.fetch_offset_by_timestamp(T0 + 100) is None


def test_log_append_time(tmp_path):
    log = Log(str(tmp_path), TP, config=small(message_timestamp_type="LogAppendTime"))
    info = log.append_as_leader(batch(2, ts=5), 0, T0)
    assert info.log_append_time == T0 and info.max_timestamp == T0
    b = next(iter_batches(log.read(0, 1 << 20)))
    assert b.max_timestamp == T0 and b.attributes & 0x08
    from protocol.records import check_batch
    check_batch(b)  # the CRC was recomputed


def test_idempotent_producer_dedupe_and_sequence_errors(tmp_path):
    log = Log(str(tmp_path), TP)
    first = log.append_as_leader(batch(3, pid=7, epoch=0, seq=0), 0, T0)
    again = log.append_as_leader(batch(3, pid=7, epoch=0, seq=0), 0, T0)
    assert (again.first_offset, again.last_offset) == (first.first_offset, first.last_offset) == (0, 2)
    assert log.log_end_offset == 3
    with pytest.raises(ApiError) as e:
        log.append_as_leader(batch(1, pid=7, epoch=0, seq=5), 0, T0)
    assert e.value.error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert log.log_end_offset == 3
    assert log.append_as_leader(batch(1, pid=7, epoch=1, seq=0), 0, T0).first_offset == 3
    with pytest.raises(ApiError) as e:
        log.append_as_leader(batch(1, pid=7, epoch=0, seq=3), 0, T0)
    assert e.value.error == Errors.INVALID_PRODUCER_EPOCH
    # rebuilt on open: the duplicate is still recognised
    reopened = Log(str(tmp_path), TP)
    dup = reopened.append_as_leader(batch(1, pid=7, epoch=1, seq=0), 0, T0)
    assert (dup.first_offset, reopened.log_end_offset) == (3, 4)


def test_an_idempotent_producer_whose_batches_retention_deleted_continues(tmp_path):
    """KIP-360 (Kafka 2.5+, ProducerAppendInfo.checkSequence): retention deletes the segment holding producer 8's
    only batch, so the partition forgets it; its next batch, sequence 3, is appended (2.4 answered
    UNKNOWN_PRODUCER_ID), and a retry of that batch is still a duplicate."""
    log = Log(str(tmp_path), TP, config=small(segment_bytes=1, retention_ms=1000))
    log.append_as_leader(batch(3, pid=8, epoch=0, seq=0, ts=T0), 0, T0)
    log.append_as_leader(batch(3, pid=7, epoch=0, seq=0, ts=T0 + 5000), 0, T0 + 5000)
    log.update_high_watermark(log.log_end_offset)
    assert log.delete_old_segments(T0 + 5000) == 1 and log.log_start_offset == 3
    assert 8 not in log.producer_state.producers
    info = log.append_as_leader(batch(2, pid=8, epoch=0, seq=3, ts=T0 + 6000), 0, T0 + 6000)
    assert (info.first_offset, info.last_offset) == (6, 7)
    again = log.append_as_leader(batch(2, pid=8, epoch=0, seq=3, ts=T0 + 6000), 0, T0 + 6000)
    assert (again.first_offset, again.last_offset, log.log_end_offset) == (6, 7, 8)


@pytest.mark.parametrize("timestamp_type", ["LogAppendTime", "CreateTime"])
def test_a_duplicate_batchs_answer_carries_the_original_timestamp(tmp_path, timestamp_type):
    """Log.analyzeAndValidateProducerState (2.6): a duplicate's appendInfo.logAppendTime = duplicate.timestamp, the
    stored batch's max timestamp: the original append time on a LogAppendTime topic (kactor answered -1), and, as
    in Kafka, the batch's max create time on a CreateTime topic."""
    log = Log(str(tmp_path), TP, config=small(message_timestamp_type=timestamp_type))
    first = log.append_as_leader(batch(2, ts=5, pid=3, epoch=0, seq=0), 0, T0)
    again = log.append_as_leader(batch(2, ts=5, pid=3, epoch=0, seq=0), 0, T0 + 7000)
    original = T0 if timestamp_type == "LogAppendTime" else 6
    assert first.log_append_time == (T0 if timestamp_type == "LogAppendTime" else -1)
    assert (again.first_offset, again.last_offset, again.log_append_time) == (0, 1, original)
    assert log.log_end_offset == 2


def test_log_holds_no_record_bytes(tmp_path):
    import tracemalloc
    log = Log(str(tmp_path), TP, config=small(segment_bytes=1 << 20))
    payload = batch(16, size=1000)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    for _ in range(640):  # 10 MB
        log.append_as_leader(payload, 0, T0)
    grown = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert log.size >= 10_000_000
    assert grown < 500_000, grown


def test_log_manager_recovers_from_checkpoints(tmp_path):
    lm = LogManager([str(tmp_path)])
    log = lm.get_or_create_log(TP, is_new=True)
    log.append_as_leader(batch(2), 0, T0)
    lm.checkpoint_log_offsets()
    lm.close()
    again = LogManager([str(tmp_path)])
    assert again.get_log(TP).log_end_offset == 2 and again.get_log(TP).recovery_point == 2


def test_producer_snapshots_in_kafkas_format_on_roll_and_close(tmp_path):
    from core.broker.producer_state import decode_snapshot
    config = small(segment_bytes=250)
    log = Log(str(tmp_path), TP, config=config)
    seq = 0
    for _ in range(6):
        log.append_as_leader(batch(2, pid=11, epoch=2, seq=seq), 0, T0)
        seq += 2
    snapshots = sorted(n for n in os.listdir(log.dir) if n.endswith(".snapshot"))
    assert len(log.segments) > 2 and snapshots == [f"{seg.base_offset:020d}.snapshot" for seg in log.segments[1:]]
    with open(os.path.join(log.dir, snapshots[0]), "rb") as f:
        data = f.read()
    assert struct.unpack_from(">h", data)[0] == 1 and len(data) == 2 + 4 + 4 + 46  # version, crc, count, one entry
    (entry,) = decode_snapshot(data)
    first_snap = int(snapshots[0][:20])
    assert (entry.producer_id, entry.producer_epoch, entry.last_seq, entry.last_offset) == (11, 2, first_snap - 1,
                                                                                            first_snap - 1)
    log.close()
    assert f"{log.log_end_offset:020d}.snapshot" in os.listdir(log.dir)
    again = Log(str(tmp_path), TP, config=config)
    # the last batch is known again (a retry of it is a duplicate); the next sequence follows
    dup = again.append_as_leader(batch(2, pid=11, epoch=2, seq=10), 0, T0)
    assert (dup.first_offset, again.log_end_offset) == (10, 12)
    assert again.append_as_leader(batch(1, pid=11, epoch=2, seq=12), 0, T0).first_offset == 12
    # truncation below a snapshot removes it and rebuilds from an older one plus the batches after it
    again.truncate_to(4)
    assert all(int(n[:20]) <= 4 for n in os.listdir(again.dir) if n.endswith(".snapshot"))
    with pytest.raises(ApiError) as e:
        again.append_as_leader(batch(1, pid=11, epoch=2, seq=12), 0, T0)
    assert e.value.error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert again.append_as_leader(batch(1, pid=11, epoch=2, seq=4), 0, T0).first_offset == 4


def test_a_corrupt_snapshot_is_ignored(tmp_path):
    log = Log(str(tmp_path), TP)
    log.append_as_leader(batch(2, pid=3, epoch=0, seq=0), 0, T0)
    log.close()
    path = os.path.join(log.dir, f"{2:020d}.snapshot")
    with open(path, "r+b") as f:
        f.seek(12)
        f.write(b"\xff")
    again = Log(str(tmp_path), TP)
    assert not os.path.exists(path)
    assert again.append_as_leader(batch(2, pid=3, epoch=0, seq=0), 0, T0).first_offset == 0  # still a duplicate


def test_segment_ms_rolls_on_the_first_batchs_timestamp(tmp_path):
    log = Log(str(tmp_path), TP, config=small(segment_ms=1000), now_ms=T0)
    log.append_as_leader(batch(1, ts=T0), 0, T0)
    log.append_as_leader(batch(1, ts=T0 + 999), 0, T0 + 5000)  # LogSegment.timeWaitedForRoll: 999 ms of timestamps
    assert len(log.segments) == 1
    log.append_as_leader(batch(1, ts=T0 + 1001), 0, T0 + 5000)
    assert [seg.base_offset for seg in log.segments] == [0, 2]


def test_log_manager_checkpoints_the_log_start_after_retention_and_cleans_up(tmp_path):
    from core.broker.checkpoints import LOG_START_OFFSET_CHECKPOINT, read_offset_checkpoint
    lm = LogManager([str(tmp_path)])
    lm.default_config = small(segment_bytes=300, retention_ms=1000)
    log = lm.get_or_create_log(TP, is_new=True)
    for i in range(6):
        log.append_as_leader(batch(2, ts=T0 + i), 0, T0)
    log.update_high_watermark(8)  # the segment holding offsets 8.. reaches past the HW: it stays
    assert [seg.base_offset for seg in log.segments] == [0, 6]
    assert lm.cleanup_logs(T0 + 10_000) == 1 and log.log_start_offset == 6
    assert read_offset_checkpoint(str(tmp_path / LOG_START_OFFSET_CHECKPOINT)) == {TP: 6}
    lm.close()
    again = LogManager([str(tmp_path)]).get_log(TP)
    assert (again.log_start_offset, again.log_end_offset) == (6, 12)
    with pytest.raises(ApiError):
        again.read(4, 100)
    assert [o for o, _ in values(again.read(6, 1 << 20))][0] == 6


def test_batches_without_timestamps_roll_on_the_segments_age_from_its_first_append(tmp_path):
    log = Log(str(tmp_path), TP, config=small(segment_ms=1000))  # no clock at open (LogManager)
    for now in (T0, T0 + 500, T0 + 1000):
        log.append_as_leader(batch(1, ts=-1), 0, now)
    assert len(log.segments) == 1
    log.append_as_leader(batch(1, ts=-1), 0, T0 + 1001)
    assert [seg.base_offset for seg in log.segments] == [0, 3]


def test_a_log_that_cannot_load_refuses_appends_when_io_errors_are_deferred(tmp_path):
    from core.broker.kafka_storage_error import KafkaStorageError
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")  # the log dir's parent is a file: mkdir fails
    deferred = []
    log = Log(str(blocker), TP, defer=lambda e: deferred.append(e) or True)
    assert len(deferred) == 1 and log.log_end_offset == 0 and log.read(0, 100) == b""
    with pytest.raises(KafkaStorageError):
        log.append_as_leader(batch(1), 0, T0)
    assert log.log_end_offset == 0


def test_reopening_does_not_rewrite_a_correct_epoch_checkpoint_nor_warn(tmp_path, caplog):
    log = Log(str(tmp_path), TP)
    log.append_as_leader(batch(2), 0, T0)
    log.append_as_leader(batch(1), 1, T0)
    path = os.path.join(log.dir, "leader-epoch-checkpoint")
    before = os.stat(path).st_mtime_ns
    with open(path) as f:
        assert f.read() == "0\n2\n0 0\n1 2\n"
    with caplog.at_level("WARNING"):
        again = Log(str(tmp_path), TP)
    assert again.leader_epoch_entries == ((0, 0), (1, 2)) and "Non-monotonic" not in caplog.text
    assert os.stat(path).st_mtime_ns == before
    # a stale checkpoint (a crash between the append and its write) is corrected from the batches, once
    with open(path, "w") as f:
        f.write("0\n1\n0 0\n")
    assert Log(str(tmp_path), TP).leader_epoch_entries == ((0, 0), (1, 2))
    with open(path) as f:
        assert f.read() == "0\n2\n0 0\n1 2\n"


def test_a_full_index_rolls_the_segment(tmp_path):
    # segment.index.bytes 36: 4 offset-index entries, 3 time-index entries (Kafka's maxEntries of each)
    log = Log(str(tmp_path), TP, config=small(index_interval_bytes=0, segment_index_bytes=36))
    for i in range(5):
        log.append_as_leader(batch(1, ts=T0 + i), 0, T0)
    # an entry in each per append after the first (bytes since the last entry > 0): the time index is full after
    # the 4th append, so the 5th rolls
    assert [seg.base_offset for seg in log.segments] == [0, 4]


def test_log_append_time_records_are_found_by_the_batchs_timestamp(tmp_path):
    log = Log(str(tmp_path), TP, config=small(message_timestamp_type="LogAppendTime"))
    log.append_as_leader(batch(3, ts=5), 2, T0)
    log.append_as_leader(batch(3, ts=5), 3, T0 + 100)
    assert log.fetch_offset_by_timestamp(T0 + 1) == (3, T0 + 100, 3)  # every record of a batch has its time
    assert log.fetch_offset_by_timestamp(T0) == (0, T0, 2)


def test_maybe_increment_log_start_offset_only_forward_and_never_past_the_high_watermark(tmp_path):
    log = Log(str(tmp_path), TP)
    log.append_as_leader(batch(2), 0, T0)
    log.append_as_leader(batch(2), 1, T0)
    with pytest.raises(ApiError) as e:
        log.maybe_increment_log_start_offset(1)  # the high watermark is 0
    assert e.value.error == Errors.OFFSET_OUT_OF_RANGE
    log.update_high_watermark(4)
    assert log.maybe_increment_log_start_offset(3) and not log.maybe_increment_log_start_offset(2)
    assert log.log_start_offset == 3 and log.leader_epoch_entries == ((1, 3),)
    with pytest.raises(ApiError):
        log.read(2, 100)
    assert [b.base_offset for b in iter_batches(log.read(3, 100))] == [2]  # the batch holding the log start
