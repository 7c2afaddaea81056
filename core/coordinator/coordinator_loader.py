"""The coordinators' loader: how the group and the transaction coordinator read a partition of their log
(``__consumer_offsets``, ``__transaction_state``) from its start to its committed end before they serve it.

Kafka 2.6.3 writes this loop twice (GroupMetadataManager.doLoadGroupsAndOffsets and
TransactionStateManager.loadTransactionsForTxnTopicPartition); 3.6's new group coordinator has one,
CoordinatorLoaderImpl.load. Each coordinator gives it its asks (the log start, a read from an offset) and how it
applies one read's batches; the loader does the reading, the log start moving under it, the wait for the high
watermark (`await_committed`) and the reads appended meanwhile, and says how it ended. No I/O: the asks are effects
the coordinator's actor answers through the internal topic edge (actors/internal_topic.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from core.effects import Proc
from messages import message
from messages.common import Errors


@message
class AwaitHighWatermark:
    """Ask: wait until the high watermark of this coordinator's log partition ``partition`` is past ``offset`` (a
    consumer's Fetch from ``offset`` with min_bytes 1, parked in the leader's fetch purgatory up to ``max_wait_ms``);
    resumed with a `LogRead` carrying the leader's high watermark, moved or not. Both coordinators ask it before
    acting on a load (`await_committed`)."""

    partition: int
    offset: int
    max_wait_ms: int = 500


@message
class LogStart:
    """The answer to a coordinator's log-start ask: Log.logStartOffset of this broker's replica, or the error."""

    error: Errors
    offset: int = -1


@message
class LogRead:
    """The answer to a coordinator's read (and to `AwaitHighWatermark`): the bytes read, whole batches, and the
    log's start, end and high watermark then; or the error."""

    error: Errors
    records: bytes = b""
    log_start_offset: int = -1
    log_end_offset: int = -1
    high_watermark: int = -1


class UnreadableBatchError(Exception):
    """A batch of the log that its coordinator cannot read, at ``offset``: the load fails there."""

    def __init__(self, offset: int, reason: str) -> None:
        super().__init__(reason)
        self.offset = offset
        self.reason = reason


@attrs.frozen(slots=True)
class LoadFailed:
    """How a load ended when it could not read its log: where, and why (the coordinator's ERROR line)."""

    offset: int
    reason: str


def await_committed(partition: int, last: LogRead, current: Callable[[], bool]) -> Proc[LogRead | None]:
    """Wait, before a coordinator acts on what it loaded, until the high watermark of its log partition reaches the
    log end: the answer that showed it (its log end may be past ``last``'s, the load's last read, if records were
    appended meanwhile: the caller reads them too), ``last`` itself if it showed it already, an answer with the error
    of a wait that failed, or None if the load was overtaken meanwhile (``current()`` false: resigned or elected
    again).

    Beyond Kafka: 2.6.3 and 3.6 load to the log end (FetchLogEnd) and act at once, so records the previous leader
    appended but never committed count. If this broker fails before its followers copy them, the next leader (an ISR
    member) has never seen them, while clients were answered from them: sim seed 4864's coordinator passed a
    verification on such an AddPartitionsToTxn, the record was lost with it, and the next InitProducerId bumped the
    epoch without aborting, so the next COMMIT markers committed that transaction's data. This is Raft's rule that
    a new leader acts only on committed entries; it costs one follower fetch round after an election, or
    replica.lag.time.max.ms if a follower has stopped (the ISR then shrinks and the high watermark moves)."""
    answer = last
    while answer.high_watermark < answer.log_end_offset:
        waited: LogRead = yield AwaitHighWatermark(partition, max(answer.high_watermark, 0))
        if not current():
            return None
        if waited.error is not Errors.NONE:
            return waited
        answer = waited
    return answer


def load_log(partition: int, read_start: Callable[[], Any], read: Callable[[int], Any], current: Callable[[], bool],
             apply: Callable[[bytes, int], int | None]) -> Proc[LoadFailed | bool | None]:
    """CoordinatorLoaderImpl.load (3.6; 2.6.3's two loaders' loop): from the log start (``read_start()``'s ask:
    retention or DeleteRecords may have moved it above 0), each ``read(offset)`` ask's batches handed to
    ``apply(records, offset)`` (the offset after the last batch, None for none; it raises `UnreadableBatchError`),
    until the log end; then `await_committed`, reading on if the log end moved while it waited. True once loaded;
    None if ``current()`` turned false at an answer (the partition given up, or loaded again); `LoadFailed` if a
    read or the wait failed or a batch did not decode."""
    start: LogStart = yield read_start()
    if not current():
        return None
    if start.error is not Errors.NONE:
        return LoadFailed(-1, f"reading the log start offset failed: {start.error.name}")
    offset = max(start.offset, 0)
    while True:
        answer: LogRead = yield read(offset)
        if not current():
            return None  # resigned (or reloaded) while reading
        if answer.error is Errors.OFFSET_OUT_OF_RANGE:
            # the log start moved past ``offset`` while the load ran (retention): go on from the new one
            moved: LogStart = yield read_start()
            if not current():
                return None
            if moved.error is Errors.NONE and moved.offset > offset:
                offset = moved.offset
                continue
        if answer.error is not Errors.NONE:
            return LoadFailed(offset, f"reading failed: {answer.error.name}")
        try:
            next_offset = apply(answer.records, offset)
        except UnreadableBatchError as e:
            return LoadFailed(e.offset, e.reason)
        if next_offset is None or next_offset >= answer.log_end_offset:
            # 2.6.3's readAtLeastOneRecord / logEndOffset: the log's end; then its commit (beyond Kafka)
            committed = yield from await_committed(partition, answer, current)
            if committed is None:
                return None
            if committed.error is not Errors.NONE:
                return LoadFailed(answer.log_end_offset,
                                  f"reading the high watermark failed: {committed.error.name}")
            if committed.log_end_offset <= answer.log_end_offset:
                return True
            # appended while the load waited (a transaction's marker, which the group completes): read on
            next_offset = answer.log_end_offset
        offset = next_offset
