"""kafka.log.TransactionIndex: a segment's ``%020d.txnindex``, the transactions aborted in it.

One 34-byte entry per ABORT marker appended to the segment (``AbortedTxn``: version int16 0, producerId int64,
firstOffset int64, lastOffset int64 — the marker's offset — and lastStableOffset int64, the log's last stable offset
once the marker completed the transaction), in the order of their markers. A READ_COMMITTED fetch collects the
entries overlapping what it read (`collect_aborted_txns`) so the consumer can drop the aborted records. The file is
created with its first entry, truncated with its segment, rebuilt by a segment's recovery and deleted with it.
Entries are read from the file when asked for: the segment keeps only the file's size.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Iterable, Iterator

import attrs

from core.disk import OS_DISK, Disk

TXN_INDEX_FILE_SUFFIX = ".txnindex"
ABORTED_TXN_VERSION = 0  # AbortedTxn.CurrentVersion
_ENTRY = struct.Struct(">hqqqq")
ENTRY_SIZE = _ENTRY.size  # AbortedTxn.TotalSize: 34


class CorruptIndexError(Exception):
    """Kafka's CorruptIndexException: a txnindex whose size is not whole entries, or of an unknown version."""


@attrs.frozen(slots=True)
class AbortedTxn:
    """kafka.log.AbortedTxn."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int

    def encode(self) -> bytes:
        return _ENTRY.pack(ABORTED_TXN_VERSION, self.producer_id, self.first_offset, self.last_offset,
                           self.last_stable_offset)


@attrs.frozen(slots=True)
class TxnIndexSearchResult:
    """kafka.log.TxnIndexSearchResult: the entries found, and whether the search may stop at this segment (an
    entry's last stable offset reached the upper bound: no later segment can hold an overlapping one)."""

    aborted: tuple[AbortedTxn, ...]
    is_complete: bool


def decode_entries(data: bytes) -> list[AbortedTxn]:
    """The entries of a txnindex file's bytes; CorruptIndexError for a partial entry or an unknown version."""
    if len(data) % ENTRY_SIZE:
        raise CorruptIndexError(f"transaction index of {len(data)} bytes is not whole {ENTRY_SIZE}-byte entries")
    out = []
    for version, pid, first, last, lso in _ENTRY.iter_unpack(data):
        if version != ABORTED_TXN_VERSION:
            raise CorruptIndexError(f"Unexpected aborted transaction version {version}")
        out.append(AbortedTxn(pid, first, last, lso))
    return out


class TransactionIndex:
    """kafka.log.TransactionIndex of one segment. ``size`` is the file's length, known without reading it."""

    __slots__ = ("path", "disk", "start_offset", "size", "_last_offset")

    def __init__(self, directory: str, start_offset: int, disk: Disk = OS_DISK) -> None:
        self.path = os.path.join(directory, f"{start_offset:020d}{TXN_INDEX_FILE_SUFFIX}")
        self.disk = disk
        self.start_offset = start_offset
        self.size = 0
        self._last_offset: int | None = None  # the last entry's lastOffset, once known

    def load(self) -> None:
        """An existing file's size (the segment opened without recovery); a partial last entry is cut off."""
        try:
            size = self.disk.getsize(self.path)
        except FileNotFoundError:
            size = 0
        whole = size - size % ENTRY_SIZE
        if whole != size:
            self.disk.truncate(self.path, whole)
        self.size = whole
        self._last_offset = None

    def sanity_check(self, next_offset: int) -> None:
        """TransactionIndex.sanityCheck: CorruptIndexError for an entry whose marker (last offset) is below the
        segment's start offset, or, beyond Kafka's check, at or past the segment's ``next_offset``: a power loss can
        keep an index append whose marker the log lost, and appending that marker again would then fail."""
        if not self.size:
            return
        for txn in self.entries():
            if txn.last_offset < self.start_offset:
                raise CorruptIndexError(f"Last offset of aborted transaction {txn} in index {self.path} is less "
                                        f"than start offset {self.start_offset}")
            if txn.last_offset >= next_offset:
                raise CorruptIndexError(f"Last offset of aborted transaction {txn} in index {self.path} is not "
                                        f"below the segment's next offset {next_offset}")

    def entries(self) -> list[AbortedTxn]:
        """TransactionIndex.allAbortedTxns."""
        if not self.size:
            return []
        try:
            data = self.disk.read_file(self.path)[:self.size]
        except FileNotFoundError:
            return []
        return decode_entries(data[:len(data) - len(data) % ENTRY_SIZE])

    def __iter__(self) -> Iterator[AbortedTxn]:
        return iter(self.entries())

    def append(self, txn: AbortedTxn) -> None:
        """TransactionIndex.append: entries come in the order of their markers (an out-of-order one is a
        programming error, as Kafka's IllegalArgumentException)."""
        last = self._last_offset
        if last is None and self.size:
            last = self.entries()[-1].last_offset
        if last is not None and last >= txn.last_offset:
            raise ValueError(f"The last offset of appended transactions must increase sequentially, but "
                             f"{txn.last_offset} is not greater than current last offset {last} of index {self.path}")
        self.disk.append_file(self.path, txn.encode())
        self.size += ENTRY_SIZE
        self._last_offset = txn.last_offset

    def reset(self, entries: Iterable[AbortedTxn] = ()) -> None:
        """TransactionIndex.reset (a segment's recovery) followed by the recovered entries; no file when none."""
        data = b"".join(t.encode() for t in entries)
        self._last_offset = None
        if not data:
            self.delete()
            return
        self.disk.write_file(self.path, data)
        self.size = len(data)

    def truncate_to(self, offset: int) -> None:
        """TransactionIndex.truncateTo: the entries of transactions whose marker is at ``offset`` or later go."""
        if not self.size:
            return
        kept = [t for t in self.entries() if t.last_offset < offset]
        if len(kept) * ENTRY_SIZE != self.size:
            self.reset(kept)

    def flush(self) -> None:
        if not self.size:
            return
        with contextlib.suppress(FileNotFoundError):
            self.disk.fsync_path(self.path)

    def delete(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.disk.unlink(self.path)
        self.size = 0
        self._last_offset = None

    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int) -> TxnIndexSearchResult:
        """TransactionIndex.collectAbortedTxns: the transactions overlapping [fetch_offset, upper_bound_offset)
        (ended at or after the fetch offset, begun before the bound)."""
        found = []
        for txn in self.entries():
            if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound_offset:
                found.append(txn)
            if txn.last_stable_offset >= upper_bound_offset:
                return TxnIndexSearchResult(tuple(found), True)
        return TxnIndexSearchResult(tuple(found), False)
