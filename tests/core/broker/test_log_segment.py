"""core/broker/log_segment.py's walks over a segment's batches: `frames_in` (frame_at inlined) against frame_at's
own answers, and `LogSegment.frames` (no header views) against `headers`, over chunk edges and a batch bigger
than a chunk."""
from __future__ import annotations

import random

import pytest

from core.broker import log_segment
from core.broker.log import Log
from core.broker.log_config import LogConfig
from core.broker.log_segment import frame_at, frames_in
from messages.common import TopicPartition
from protocol.records import Record, build_batch

T0 = 1_700_000_000_000


def _frames_by_frame_at(data: bytes) -> list[tuple[int, int, int, int]]:
    """The plain walk: frame_at at each position until it gives None or the batch runs past the data."""
    out, pos = [], 0
    while True:
        frame = frame_at(data, pos, pos)
        if frame is None or pos + frame[3] > len(data):
            return out
        out.append(frame)
        pos += frame[3]


def _batch(rng: random.Random, base: int) -> bytes:
    n = rng.randint(1, 5)
    return build_batch([Record(i, i, None, bytes(rng.randint(0, 300))) for i in range(n)], base_offset=base,
                       first_timestamp=T0)


@pytest.mark.parametrize("seed", range(40))
def test_frames_in_gives_frame_ats_frames_whatever_the_tail(seed):
    rng = random.Random(seed)
    data, base = b"", 0
    for _ in range(rng.randint(0, 8)):
        data += _batch(rng, base)
        base += 10
    cut = rng.choice(["whole", "torn", "garbage", "short-length"])
    if cut == "torn" and data:
        data = data[:rng.randrange(len(data))]
    elif cut == "garbage":
        data += bytes(rng.randrange(256) for _ in range(rng.randint(1, 80)))
    elif cut == "short-length":  # a length too small to be a v2 batch
        data += (7).to_bytes(8, "big") + (3).to_bytes(4, "big") + bytes(60)
    assert list(frames_in(data)) == _frames_by_frame_at(data)
    assert list(frames_in(memoryview(data))) == _frames_by_frame_at(data)


def test_segment_frames_are_headers_frames_across_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(log_segment, "_CHUNK", 700)  # several chunks, and batches bigger than one
    rng = random.Random(7)
    log = Log(str(tmp_path), TopicPartition("t", 0), config=LogConfig(index_interval_bytes=500))
    for _ in range(30):
        log.append_as_leader(build_batch([Record(i, i, None, bytes(rng.choice([10, 200, 900]))) for i in range(3)],
                                         first_timestamp=T0), leader_epoch=0, now_ms=T0)
    segment = log.segments[-1]
    sizes = [f[3] for f in segment.frames()]
    assert len(sizes) == 30 and max(sizes) > 700
    for start, end in [(0, None), (0, segment.size // 2), (sizes[0], None), (sizes[0] + sizes[1], segment.size - 1)]:
        assert list(segment.frames(start, end)) == [f for f, _ in segment.headers(start, end)]
    # the offset translation finds each batch from its index entry
    for frame in segment.frames():
        assert segment.translate_offset(frame[2]) == frame
        assert segment.translate_offset(frame[1]) == frame
    assert segment.translate_offset(log.log_end_offset) is None


def _translate_by_frames(segment: log_segment.LogSegment, offset: int, start_position: int = 0):
    """The plain LogSegment.translateOffset: the walk over `frames` from the index entry below ``offset``."""
    _, position = segment.offset_index.lookup(offset)
    return next((f for f in segment.frames(max(position, start_position)) if f[2] >= offset), None)


@pytest.mark.parametrize("chunk", [300, 700, 65536])
def test_translate_offset_is_the_walk_over_frames(tmp_path, monkeypatch, chunk):
    """translate_offset inlines `frames` (issue #43): for every offset and start position it finds the frame the
    walk over `frames` finds, with the same reads, over chunk edges, batches bigger than a chunk and a torn tail."""
    monkeypatch.setattr(log_segment, "_CHUNK", chunk)
    rng = random.Random(chunk)
    log = Log(str(tmp_path), TopicPartition("t", 0), config=LogConfig(index_interval_bytes=500))
    for _ in range(25):
        log.append_as_leader(build_batch([Record(i, i, None, bytes(rng.choice([10, 200, 900])))
                                          for i in range(rng.randint(1, 4))], first_timestamp=T0),
                             leader_epoch=0, now_ms=T0)
    segment = log.segments[-1]
    positions = [0, *(f[0] for f in segment.frames()), 5, segment.size - 3]
    reads: list[tuple[int, int]] = []
    plain_read = log_segment.LogSegment.read

    def read(self: log_segment.LogSegment, position: int, size: int) -> bytes:
        reads.append((position, size))
        return plain_read(self, position, size)

    monkeypatch.setattr(log_segment.LogSegment, "read", read)
    segment._appended = []  # the walk from the index entry (the appends' hints: test_translate_offset_from_appends)
    for offset in range(-1, log.log_end_offset + 2):
        for start in rng.sample(positions, 4):
            reads.clear()
            expected = _translate_by_frames(segment, offset, start)
            plain_reads = list(reads)
            reads.clear()
            assert segment.translate_offset(offset, start) == expected, (offset, start)
            assert reads == plain_reads
    # a torn last batch: found by neither
    segment.size -= 7
    assert segment.translate_offset(log.log_end_offset - 1) == _translate_by_frames(segment, log.log_end_offset - 1)


@pytest.mark.parametrize("chunk", [300, 700, 65536])
def test_translate_offset_from_appends_is_the_walk_over_frames(tmp_path, monkeypatch, chunk):
    """translate_offset may start at a recent append's first batch instead of the index entry: for every offset and
    start position its answer is the walk's, over leader appends and follower appends of several batches (with
    gaps between their offsets), after truncations and with a hint gone stale (the bytes changed under it); the
    batch an append began with is found with one read."""
    monkeypatch.setattr(log_segment, "_CHUNK", chunk)
    rng = random.Random(chunk)
    log = Log(str(tmp_path), TopicPartition("t", 0), config=LogConfig(index_interval_bytes=500))
    segment = log.segments[-1]

    plain_read = log_segment.LogSegment.read
    reads: list[int] = []

    def counted_read(self: log_segment.LogSegment, position: int, size: int) -> bytes:
        reads.append(position)
        return plain_read(self, position, size)

    def records() -> list[Record]:
        return [Record(i, i, None, bytes(rng.choice([10, 200, 900]))) for i in range(rng.randint(1, 4))]

    def check() -> None:
        positions = [0, *(f[0] for f in segment.frames()), 5, max(0, segment.size - 3)]
        for offset in range(-1, log.log_end_offset + 2):
            for start in rng.sample(positions, 3):
                assert segment.translate_offset(offset, start) == _translate_by_frames(segment, offset, start), (
                    offset, start)

    for round_ in range(6):
        for _ in range(rng.randint(1, 8)):
            if rng.random() < 0.5:
                log.append_as_leader(build_batch(records(), first_timestamp=T0), leader_epoch=0, now_ms=T0)
            else:  # a follower's append of several batches, offsets as a (compacted) leader's, gaps between them
                out, base = b"", log.log_end_offset
                for _ in range(rng.randint(1, 3)):
                    rs = records()
                    out += build_batch(rs, base_offset=base, first_timestamp=T0, partition_leader_epoch=0)
                    base += len(rs) + rng.choice([0, 0, 2])
                log.append_as_follower(out)
            assert segment is log.segments[-1]
            base, at = segment._appended[-1]
            reads.clear()
            monkeypatch.setattr(log_segment.LogSegment, "read", counted_read)
            found = segment.translate_offset(base)
            monkeypatch.setattr(log_segment.LogSegment, "read", plain_read)
            assert found is not None and found[:2] == (at, base) and len(reads) == 1
        check()
        if round_ % 2:
            log.truncate_to(rng.randint(log.log_start_offset, log.log_end_offset))
            check()
    # a hint whose place now holds another batch (the bytes changed under the segment) is dropped, not followed
    log = Log(str(tmp_path / "stale"), TopicPartition("t", 0), config=LogConfig(index_interval_bytes=1 << 20))
    segment = log.segments[-1]
    for _ in range(3):
        log.append_as_leader(build_batch(records(), first_timestamp=T0), leader_epoch=0, now_ms=T0)
    last_base, last_at = segment._appended[-1]
    segment._appended[-1] = (last_base + 1, last_at)
    assert segment.translate_offset(last_base + 1) == _translate_by_frames(segment, last_base + 1)
    assert segment._appended == []
    for offset in range(-1, log.log_end_offset + 2):
        assert segment.translate_offset(offset) == _translate_by_frames(segment, offset)


def _plain_log_read(log: Log, start_offset: int, max_bytes: int, max_offset: int | None, min_one: bool) -> bytes:
    """Log.read as it was: the frame found by translate_offset, then the segment read again from it."""
    limit = log.log_end_offset if max_offset is None else min(max_offset, log.log_end_offset)
    if start_offset >= limit:
        return b""
    for segment in log.segments:
        frame = segment.translate_offset(start_offset)
        if frame is None:
            continue
        if frame[2] >= limit:
            return b""
        if frame[3] > max_bytes:
            return segment.read(frame[0], frame[3]) if min_one else b""
        data = segment.read(frame[0], min(max_bytes, segment.size - frame[0]))
        end = 0
        for _pos, _base, last, size in frames_in(data):
            if last >= limit:
                break
            end += size
        return data[:end]
    return b""


@pytest.mark.parametrize("chunk", [300, 700, 65536])
def test_a_log_read_from_the_searched_chunk_is_the_read_from_the_segment(tmp_path, monkeypatch, chunk):
    """Log.read takes its bytes from the chunk LogSegment.locate read when it holds them: the same bytes as a second
    read of the segment, for every start offset, size limit and upper offset, over several segments."""
    monkeypatch.setattr(log_segment, "_CHUNK", chunk)
    rng = random.Random(chunk)
    log = Log(str(tmp_path), TopicPartition("t", 0), config=LogConfig(index_interval_bytes=500, segment_bytes=6000))
    for _ in range(30):
        log.append_as_leader(build_batch([Record(i, i, None, bytes(rng.choice([10, 200, 900])))
                                          for i in range(rng.randint(1, 4))], first_timestamp=T0),
                             leader_epoch=0, now_ms=T0)
    assert len(log.segments) > 2
    end = log.log_end_offset
    for start in range(0, end + 1):
        for max_bytes in (1, 100, 1000, 5000, 1 << 20):
            for max_offset in (None, start, start + 1, start + 5, end):
                for min_one in (True, False):
                    assert log.read(start, max_bytes, max_offset, min_one) == _plain_log_read(
                        log, start, max_bytes, max_offset, min_one), (start, max_bytes, max_offset, min_one)
