"""kafka.server.epoch.LeaderEpochFileCache (2.6): the (leader epoch → start offset) history of one partition's log.

Entries are strictly increasing in both epoch and start offset; every change is written through to the
partition's ``leader-epoch-checkpoint`` (Kafka's format: version ``0``, the count, then ``epoch startOffset``
lines). The cache answers OffsetsForLeaderEpoch (`end_offset_for`, KIP-101/KIP-279) and is cut back when the log
is truncated (`truncate_from_end`) or its start moves (`truncate_from_start`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Protocol

UNDEFINED_EPOCH = -1  # EpochEndOffset.UNDEFINED_EPOCH
UNDEFINED_EPOCH_OFFSET = -1  # EpochEndOffset.UNDEFINED_EPOCH_OFFSET

log = logging.getLogger("kactor.broker")

EpochEntry = tuple[int, int]  # kafka.server.epoch.EpochEntry(epoch, startOffset)


class LeaderEpochCheckpoint(Protocol):
    """kafka.server.checkpoints.LeaderEpochCheckpoint."""

    def write(self, entries: Iterable[EpochEntry]) -> None: ...

    def read(self) -> list[EpochEntry]: ...


class InMemoryLeaderEpochCheckpoint:
    """A checkpoint kept in memory (tests; Kafka's tests use a temp file the same way)."""

    def __init__(self, entries: Iterable[EpochEntry] = ()) -> None:
        self.entries: list[EpochEntry] = list(entries)
        self.writes = 0

    def write(self, entries: Iterable[EpochEntry]) -> None:
        self.entries = list(entries)
        self.writes += 1

    def read(self) -> list[EpochEntry]:
        return list(self.entries)


def encode_leader_epoch_checkpoint(entries: Iterable[EpochEntry]) -> str:
    """LeaderEpochCheckpointFile's text: ``0``, count, ``epoch startOffset`` lines."""
    entries = list(entries)
    return "\n".join(["0", str(len(entries))] + [f"{e} {o}" for e, o in entries]) + "\n"


def decode_leader_epoch_checkpoint(text: str) -> list[EpochEntry]:
    """The entries of a checkpoint's text; ValueError if it is malformed (wrong version, count or line)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "0":
        raise ValueError(f"unrecognised leader-epoch checkpoint version {lines[:1]}")
    count = int(lines[1])
    entries = []
    for line in lines[2:2 + count]:
        epoch, offset = line.split(" ")
        entries.append((int(epoch), int(offset)))
    if len(entries) != count:
        raise ValueError(f"expected {count} leader-epoch entries, found {len(entries)}")
    return entries


class LeaderEpochFileCache:
    """kafka.server.epoch.LeaderEpochFileCache: ``log_end_offset`` is the log's current end (a callable, as in
    Kafka); ``checkpoint`` persists every change."""

    def __init__(self, log_end_offset: Callable[[], int], checkpoint: LeaderEpochCheckpoint,
                 entries: Iterable[EpochEntry] | None = None) -> None:
        self._log_end_offset = log_end_offset
        self.checkpoint = checkpoint
        self._epochs: list[EpochEntry] = list(checkpoint.read() if entries is None else entries)

    # ------------------------------------------------------------------------------------------------ queries

    @property
    def epoch_entries(self) -> tuple[EpochEntry, ...]:
        return tuple(self._epochs)

    @property
    def latest_epoch(self) -> int | None:
        """LeaderEpochFileCache.latestEpoch."""
        return self._epochs[-1][0] if self._epochs else None

    @property
    def earliest_entry(self) -> EpochEntry | None:
        return self._epochs[0] if self._epochs else None

    def end_offset_for(self, requested_epoch: int) -> tuple[int, int]:
        """LeaderEpochFileCache.endOffsetFor: (epoch, end offset) for the largest epoch ≤ ``requested_epoch``.

        * UNDEFINED_EPOCH asked, or nothing known at or above it → (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET);
        * the latest epoch → (it, the log end offset);
        * below every known epoch → (requested, start offset of the first epoch);
        * otherwise → (the largest epoch ≤ requested, start offset of the first epoch above it).
        """
        if requested_epoch == UNDEFINED_EPOCH:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if self._epochs and self._epochs[-1][0] == requested_epoch:
            return requested_epoch, self._log_end_offset()
        subsequent = [entry for entry in self._epochs if entry[0] > requested_epoch]
        previous = [entry for entry in self._epochs if entry[0] <= requested_epoch]
        if not subsequent:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if not previous:
            return requested_epoch, subsequent[0][1]
        return previous[-1][0], subsequent[0][1]

    # ---------------------------------------------------------------------------------------------- mutations

    def assign(self, epoch: int, start_offset: int) -> None:
        """LeaderEpochFileCache.assign: record that ``epoch`` starts at ``start_offset`` (a no-op for the latest
        epoch at the same or a later offset). Entries that would break monotonicity are removed first
        (truncateAndAppend: keep only entries with a smaller epoch AND a smaller start offset)."""
        if epoch < 0:
            return
        if self._epochs:
            last_epoch, last_start = self._epochs[-1]
            if last_epoch == epoch and start_offset >= last_start:
                return
            if epoch < last_epoch or start_offset < last_start:
                log.warning("Non-monotonic update of leader epoch cache: (%d, %d) after %s", epoch, start_offset,
                            self._epochs[-1])
        self._epochs = [(e, o) for e, o in self._epochs if e < epoch and o < start_offset]
        self._epochs.append((epoch, start_offset))
        self._flush()

    def truncate_from_end(self, end_offset: int) -> None:
        """LeaderEpochFileCache.truncateFromEnd: drop the entries starting at or after ``end_offset`` (the log was
        truncated to it); a negative offset is ignored."""
        if end_offset >= 0 and self._epochs and self._epochs[-1][1] >= end_offset:
            self._epochs = [(e, o) for e, o in self._epochs if o < end_offset]
            self._flush()

    def truncate_from_start(self, start_offset: int) -> None:
        """LeaderEpochFileCache.truncateFromStart: the log now starts at ``start_offset``: entries before it are
        dropped except the last one, which is moved to start there."""
        previous = [entry for entry in self._epochs if entry[1] <= start_offset]
        if previous:
            self._epochs = [(previous[-1][0], start_offset)] + [entry for entry in self._epochs
                                                                if entry[1] > start_offset]
            self._flush()

    def clear_and_flush(self) -> None:
        """LeaderEpochFileCache.clearAndFlush."""
        self._epochs = []
        self._flush()

    def _flush(self) -> None:
        self.checkpoint.write(self._epochs)
