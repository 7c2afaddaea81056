"""kafka.log.SkimpyOffsetMap: the log cleaner's dedupe buffer, key → the latest offset seen for it, in a fixed
number of bytes.

Kafka's layout exactly: one buffer of ``memory`` bytes (anonymous memory, see `_zeroed`) holding ``memory // 24``
slots of (the key's MD5 digest, a big-endian int64 offset); a key's slot is found by probing with successive 4-byte
words of its digest, then linearly. Nothing but the digest of a key is kept, so the map's memory is its buffer
whatever the keys' sizes (``log.cleaner.dedupe.buffer.size`` / ``log.cleaner.threads``); the cleaner fills it to at
most ``log.cleaner.io.buffer.load.factor`` (0.9) of its slots and cleans the part of the dirty section that fitted.
"""

from __future__ import annotations

import hashlib
import mmap
import struct

HASH_SIZE = 16  # MD5, Kafka's default log.cleaner hash algorithm
BYTES_PER_ENTRY = HASH_SIZE + 8
_EMPTY = bytes(BYTES_PER_ENTRY)
_INT = struct.Struct(">i")
_LONG = struct.Struct(">q")


def _zeroed(size: int) -> mmap.mmap:
    """``size`` zero bytes in anonymous memory: pages are only backed once written, so a large dedupe buffer costs
    what the keys put in it touch, and clearing it is a new mapping, not a pass over the old one."""
    return mmap.mmap(-1, size)


class OffsetMapFullError(Exception):
    """SkimpyOffsetMap.put on a full map (Kafka's ``require(entries < slots)``)."""


class SkimpyOffsetMap:
    """kafka.log.SkimpyOffsetMap over a ``bytearray`` of ``memory`` bytes (not thread-safe: one per cleaner)."""

    __slots__ = ("memory", "slots", "_bytes", "_entries", "_last_offset")

    def __init__(self, memory: int) -> None:
        self.memory = memory
        self.slots = memory // BYTES_PER_ENTRY
        if self.slots < 1:
            raise ValueError(f"an offset map of {memory} bytes holds no entry of {BYTES_PER_ENTRY} bytes")
        self._bytes = _zeroed(self.slots * BYTES_PER_ENTRY)
        self._entries = 0
        self._last_offset = -1

    @property
    def size(self) -> int:
        """The number of keys put (SkimpyOffsetMap.size)."""
        return self._entries

    @property
    def utilization(self) -> float:
        """OffsetMap.utilization: size / slots (the cleaner's max-buffer-utilization-percent)."""
        return self._entries / self.slots

    @property
    def latest_offset(self) -> int:
        """The latest offset put (or told by update_latest_offset); -1 when empty."""
        return self._last_offset

    def update_latest_offset(self, offset: int) -> None:
        self._last_offset = offset

    def _position(self, digest: bytes, attempt: int) -> int:
        """SkimpyOffsetMap.positionOf: the attempt-th probe's byte position."""
        probe = _INT.unpack_from(digest, min(attempt, HASH_SIZE - 4))[0] + max(0, attempt - HASH_SIZE + 4)
        probe = (probe + 2**31) % 2**32 - 2**31  # Scala Int arithmetic wraps
        return (0 if probe == -(2**31) else abs(probe)) % self.slots * BYTES_PER_ENTRY  # Utils.abs

    def put(self, key: bytes, offset: int) -> None:
        """Associate ``offset`` with ``key`` (a key already present keeps its slot; the size grows otherwise). A full
        map refuses any put, as Kafka's (the cleaner stops filling it at the load factor)."""
        if self._entries >= self.slots:
            raise OffsetMapFullError("Attempt to add a new entry to a full offset map.")
        digest = hashlib.md5(key).digest()
        buf = self._bytes
        attempt = 0
        pos = self._position(digest, 0)
        while buf[pos:pos + BYTES_PER_ENTRY] != _EMPTY:
            if buf[pos:pos + HASH_SIZE] == digest:
                _LONG.pack_into(buf, pos + HASH_SIZE, offset)
                self._last_offset = offset
                return
            attempt += 1
            pos = self._position(digest, attempt)
        buf[pos:pos + HASH_SIZE] = digest
        _LONG.pack_into(buf, pos + HASH_SIZE, offset)
        self._last_offset = offset
        self._entries += 1

    def get(self, key: bytes) -> int:
        """The offset last put for ``key``, -1 if none."""
        digest = hashlib.md5(key).digest()
        buf = self._bytes
        max_attempts = self.slots + HASH_SIZE - 4
        attempt = 0
        while attempt < max_attempts:
            pos = self._position(digest, attempt)
            if buf[pos:pos + BYTES_PER_ENTRY] == _EMPTY:
                return -1
            if buf[pos:pos + HASH_SIZE] == digest:
                return _LONG.unpack_from(buf, pos + HASH_SIZE)[0]
            attempt += 1
        return -1

    def clear(self) -> None:
        """SkimpyOffsetMap.clear: empty, the buffer zeroed (a map never written to is zero already)."""
        if self._entries:
            self._bytes.close()
            self._bytes = _zeroed(self.slots * BYTES_PER_ENTRY)
        self._entries = 0
        self._last_offset = -1
