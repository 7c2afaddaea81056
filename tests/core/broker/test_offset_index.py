"""core/broker/offset_index.py: Kafka's .index / .timeindex files, searched in memory (active) or on file."""

from __future__ import annotations

import os
import struct

import pytest

from core.broker.offset_index import CorruptIndexError, OffsetIndex, TimeIndex


def test_offset_index_file_format_and_lookups_in_memory_and_on_file(tmp_path):
    index = OffsetIndex(str(tmp_path), 100)
    index.init_empty()
    for rel, pos in ((3, 0), (9, 4200), (20, 8500)):
        index.append(100 + rel, pos)
    assert not os.path.exists(index.path)  # an active index reaches its file when flushed
    index.flush()
    with open(tmp_path / f"{100:020d}.index", "rb") as f:
        assert list(struct.iter_unpack(">ii", f.read())) == [(3, 0), (9, 4200), (20, 8500)]
    expected = {99: (100, 0), 100: (100, 0), 103: (103, 0), 108: (103, 0), 109: (109, 4200), 500: (120, 8500)}
    assert {o: index.lookup(o) for o in expected} == expected
    index.make_inactive()
    assert {o: index.lookup(o) for o in expected} == expected  # binary search with pread
    index.make_active()
    index.append(130, 9000)  # in memory only, then truncated away with the flushed ones
    index.truncate_to(109)
    assert index.entries == 1 and index.lookup(500) == (103, 0)
    assert os.path.getsize(index.path) == 8
    index.append(110, 4300)
    index.make_inactive()
    with open(index.path, "rb") as f:
        assert list(struct.iter_unpack(">ii", f.read())) == [(3, 0), (10, 4300)]


def test_time_index_appends_only_growing_timestamps_and_truncates_by_offset(tmp_path):
    index = TimeIndex(str(tmp_path), 0)
    index.init_empty()
    for ts, offset in ((1000, 4), (999, 6), (1000, 7), (2000, 9)):
        index.maybe_append(ts, offset)
    assert index.entries == 2 and index.lookup(1500) == (1000, 4) and index.lookup(5) == (-1, 0)
    index.flush()
    with open(index.path, "rb") as f:
        assert list(struct.iter_unpack(">qi", f.read())) == [(1000, 4), (2000, 9)]
    index.truncate_to(9)
    assert index.last_entry() == (1000, 4)


def test_a_torn_index_file_is_corrupt(tmp_path):
    index = OffsetIndex(str(tmp_path), 0)
    with open(index.path, "wb") as f:
        f.write(struct.pack(">ii", 1, 0) + b"\x00\x01")
    with pytest.raises(CorruptIndexError):
        index.load(in_memory=False)
    with open(index.path, "wb") as f:
        f.write(struct.pack(">iiii", 5, 0, 2, 100))  # keys must increase
    with pytest.raises(CorruptIndexError):
        index.load(in_memory=True)
