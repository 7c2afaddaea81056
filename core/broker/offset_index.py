"""A segment's sparse indexes, in Kafka's file formats: ``kafka.log.OffsetIndex`` (``.index``: int32 offset relative
to the segment's base offset, int32 byte position in the ``.log``) and ``kafka.log.TimeIndex`` (``.timeindex``:
int64 timestamp, int32 relative offset), big-endian, entries appended in increasing key order.

Kafka memory-maps every index; here only the ACTIVE segment's entries are held (two int arrays: 8-12 bytes an
entry), so memory does not grow with the data kept, and they reach the file when the segment becomes inactive or the
log is closed (`flush`): the active segment is re-read and its indexes rebuilt on every open anyway, so a file behind
after a crash costs nothing, and an append costs no index write. An inactive segment's index is searched on its file
with ``os.pread`` (binary search, one 8- or 12-byte read a step). Files are never preallocated: their length is always
``entries * entry size``, which is what Kafka leaves after trimming an index on roll or clean shutdown.
"""

from __future__ import annotations

import array
import bisect
import os
import struct

from core.disk import OS_DISK, Disk


class CorruptIndexError(Exception):
    """An index file that fails ``sanityCheck`` (Kafka: CorruptIndexException): the segment rebuilds it."""


class _SparseIndex:
    """AbstractIndex: (key, value) entries with strictly increasing keys, in a file and, while active, in memory."""

    __slots__ = ("dir", "disk", "base_offset", "_keys", "_values", "_entries", "_flushed")
    _ENTRY: struct.Struct
    _KEY_TYPE: str
    SUFFIX: str

    def __init__(self, directory: str, base_offset: int, disk: Disk = OS_DISK) -> None:
        self.dir = directory  # the segment's (shared) string: a broker may hold tens of thousands of these
        self.disk = disk
        self.base_offset = base_offset
        self._keys: array.array | None = None  # in memory only while the segment is active
        self._values: array.array | None = None
        self._entries = 0
        self._flushed = 0  # how many of the entries are in the file

    # ------------------------------------------------------------------------------------------------- file state

    @property
    def path(self) -> str:
        return os.path.join(self.dir, f"{self.base_offset:020d}{self.SUFFIX}")

    @property
    def entries(self) -> int:
        return self._entries

    def load(self, in_memory: bool) -> None:
        """Read the file's entry count (and its entries when ``in_memory``); CorruptIndexError if its length is not
        a whole number of entries or its keys do not increase."""
        try:
            size = self.disk.getsize(self.path)
        except FileNotFoundError:
            size = 0
        if size % self._ENTRY.size:
            raise CorruptIndexError(f"index file {self.path} has length {size}, not a multiple of {self._ENTRY.size}")
        self._entries = self._flushed = size // self._ENTRY.size
        self._keys = self._values = None
        if in_memory:
            self._load_arrays()

    def init_empty(self) -> None:
        """An index known to have no file yet (a new segment): empty, in memory."""
        self._entries = self._flushed = 0
        self._keys, self._values = array.array(self._KEY_TYPE), array.array("i")

    def _load_arrays(self) -> None:
        keys, values = array.array(self._KEY_TYPE), array.array("i")
        if self._entries:
            data = self.disk.read_file(self.path)[:self._entries * self._ENTRY.size]
            for k, v in self._ENTRY.iter_unpack(data):
                keys.append(k)
                values.append(v)
            if any(keys[i] >= keys[i + 1] for i in range(len(keys) - 1)):
                raise CorruptIndexError(f"index file {self.path} has keys out of order")
        self._keys, self._values = keys, values

    def make_active(self) -> None:
        if self._keys is None:
            self._load_arrays()

    def make_inactive(self) -> None:
        """AbstractIndex.trimToValidSize + dropping the in-memory entries (the file keeps them)."""
        self.flush()
        self._keys = self._values = None

    def flush(self) -> None:
        """AbstractIndex.flush: the entries only in memory go to the file (created if missing)."""
        if self._keys is None or self._flushed >= self._entries:
            return
        data = b"".join(self._ENTRY.pack(self._keys[i], self._values[i])  # type: ignore[index]
                        for i in range(self._flushed, self._entries))
        disk = self.disk
        fd = disk.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            disk.write(fd, data)
        finally:
            disk.close(fd)
        self._flushed = self._entries

    close = flush  # nothing else stays open between operations

    def reset(self, entries: list[tuple[int, int]]) -> None:
        """Rewrite the whole file (a rebuilt index) — unless it already holds exactly these entries (recovery on
        every open must not rewrite every log's indexes), or there are none and it does not exist yet."""
        data = b"".join(self._ENTRY.pack(k, v) for k, v in entries)
        try:
            unchanged = self.disk.read_file(self.path) == data
        except FileNotFoundError:
            unchanged = not data
        if not unchanged:
            self.disk.write_file(self.path, data)
        self._entries = self._flushed = len(entries)
        if self._keys is not None:
            self._keys = array.array(self._KEY_TYPE, (k for k, _ in entries))
            self._values = array.array("i", (v for _, v in entries))

    def delete(self) -> None:
        """The file goes, with any entries not yet in it."""
        self._flushed = self._entries
        try:
            self.disk.unlink(self.path)
        except FileNotFoundError:
            pass

    # ------------------------------------------------------------------------------------------------ entries

    def last_entry(self) -> tuple[int, int] | None:
        if not self._entries:
            return None
        if self._keys is not None:
            return self._keys[-1], self._values[-1]  # type: ignore[index]
        return self._read_entry(self._entries - 1)

    def _append(self, key: int, value: int) -> None:
        self._entries += 1
        if self._keys is not None:  # active: the file gets it with the next flush
            self._keys.append(key)
            self._values.append(value)  # type: ignore[union-attr]
            return
        disk = self.disk
        fd = disk.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            disk.write(fd, self._ENTRY.pack(key, value))
        finally:
            disk.close(fd)
        self._flushed = self._entries

    def _read_entry(self, n: int) -> tuple[int, int]:
        disk = self.disk
        fd = disk.open(self.path, os.O_RDONLY)
        try:
            return self._ENTRY.unpack(disk.pread(fd, self._ENTRY.size, n * self._ENTRY.size))
        finally:
            disk.close(fd)

    def _floor(self, key: int) -> int:
        """The slot of the largest key ≤ ``key`` (AbstractIndex.largestLowerBoundSlotFor), -1 if none."""
        if self._keys is not None:
            return bisect.bisect_right(self._keys, key) - 1
        lo, hi = 0, self._entries - 1
        found = -1
        if hi < 0:
            return -1
        size = self._ENTRY.size
        disk = self.disk
        fd = disk.open(self.path, os.O_RDONLY)
        try:
            while lo <= hi:
                mid = (lo + hi) // 2
                k = self._ENTRY.unpack(disk.pread(fd, size, mid * size))[0]
                if k <= key:
                    found, lo = mid, mid + 1
                else:
                    hi = mid - 1
        finally:
            disk.close(fd)
        return found

    def _entry(self, slot: int) -> tuple[int, int]:
        if self._keys is not None:
            return self._keys[slot], self._values[slot]  # type: ignore[index]
        return self._read_entry(slot)

    def _truncate_entries(self, keep: int) -> None:
        if keep >= self._entries:
            return
        if keep < self._flushed:
            self.disk.truncate(self.path, keep * self._ENTRY.size)
            self._flushed = keep
        self._entries = keep
        if self._keys is not None:
            del self._keys[keep:]
            del self._values[keep:]  # type: ignore[union-attr]


class OffsetIndex(_SparseIndex):
    """kafka.log.OffsetIndex: offset → the byte position of the append that holds it (every index.interval.bytes)."""

    __slots__ = ()
    SUFFIX = ".index"
    _ENTRY = struct.Struct(">ii")
    _KEY_TYPE = "i"

    def append(self, offset: int, position: int) -> None:
        """OffsetIndex.append (the caller keeps offsets increasing)."""
        self._append(offset - self.base_offset, position)

    def lookup(self, target_offset: int) -> tuple[int, int]:
        """OffsetIndex.lookup: (offset, position) of the largest indexed offset ≤ ``target_offset``; (base, 0) if
        none."""
        slot = self._floor(target_offset - self.base_offset)
        if slot < 0:
            return self.base_offset, 0
        rel, position = self._entry(slot)
        return self.base_offset + rel, position

    def truncate_to(self, offset: int) -> None:
        """OffsetIndex.truncateTo: drop the entries at or after ``offset``."""
        self._truncate_entries(self._floor(offset - self.base_offset - 1) + 1)

    def check(self, next_offset: int, log_size: int) -> None:
        """OffsetIndex.sanityCheck plus: the last entry lies inside the segment."""
        last = self.last_entry()
        if last is not None and (last[0] < 0 or self.base_offset + last[0] >= next_offset or last[1] > log_size):
            raise CorruptIndexError(f"index {self.path}: last entry {last} outside the segment")


class TimeIndex(_SparseIndex):
    """kafka.log.TimeIndex: timestamp → the offset of the record with the segment's max timestamp so far."""

    __slots__ = ()
    SUFFIX = ".timeindex"
    _ENTRY = struct.Struct(">qi")
    _KEY_TYPE = "q"

    def maybe_append(self, timestamp: int, offset: int) -> None:
        """TimeIndex.maybeAppend: only a timestamp larger than the last entry's is added."""
        last = self.last_entry()
        if last is None or timestamp > last[0]:
            self._append(timestamp, offset - self.base_offset)

    def lookup(self, target_timestamp: int) -> tuple[int, int]:
        """TimeIndex.lookup: (timestamp, offset) of the largest indexed timestamp ≤ target; (-1, base) if none."""
        slot = self._floor(target_timestamp)
        if slot < 0:
            return -1, self.base_offset
        ts, rel = self._entry(slot)
        return ts, self.base_offset + rel

    def truncate_to(self, offset: int) -> None:
        """TimeIndex.truncateTo: drop the entries whose offset is at or after ``offset``."""
        keep = self._entries
        while keep and self._entry(keep - 1)[1] + self.base_offset >= offset:
            keep -= 1
        self._truncate_entries(keep)

    def check(self, next_offset: int) -> None:
        last = self.last_entry()
        if last is not None and (last[1] < 0 or self.base_offset + last[1] >= next_offset):
            raise CorruptIndexError(f"time index {self.path}: last entry {last} outside the segment")
