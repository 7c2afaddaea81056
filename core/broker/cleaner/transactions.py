"""kafka.log.CleanedTransactionMetadata: the transaction state the cleaner tracks while it reads a log, which decides
what of a transaction a cleaning may drop.

Built from the aborted transactions of the log's ``.txnindex`` files (`AbortedTransactions`, Kafka's
Log.collectAbortedTransactions) for the range read: the offset map's [first dirty, first uncleanable), or one segment
being recopied, [its base, the next segment's base or the map's end). As the cleaner reads batches in offset order:

- a data batch of an aborted transaction (its producer has an aborted transaction begun at or before the batch) is
  discarded whole, and not mapped;
- an ABORT marker is kept while the segment it is read in still held batches of its transaction (they are dropped
  by this cleaning, the marker by a later one), and its transaction is then written to the cleaned segment's
  ``.txnindex`` for READ_COMMITTED readers; with none left it may go;
- a COMMIT marker may go when no batch of its transaction was read in the segment before it;
- a marker that may go still stays while its segment is not past the delete horizon (Cleaner.shouldDiscardBatch
  ``retainTxnMarkers``: markers age out as tombstones do).
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Sequence

from core.broker.log_segment import LogSegment
from core.broker.transaction_index import AbortedTxn, TransactionIndex
from protocol.records import CONTROL_ABORT, CONTROL_COMMIT, RecordBatch, control_record_type, read_records


class AbortedTransactions:
    """Log.collectAbortedTransactions over ``segments`` (the log's, in order), for the many ranges of one cleaning:
    the segments with ``.txnindex`` entries are found once, so a log of thousands of segments and no transaction
    costs nothing per range."""

    __slots__ = ("_bases", "_indexed", "_log_start")

    def __init__(self, segments: Sequence[LogSegment]) -> None:
        self._bases = [s.base_offset for s in segments]
        self._indexed = [s for s in segments if s.txn_index.size]
        self._log_start = segments[0].base_offset if segments else 0

    def collect(self, start_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        """The ``.txnindex`` entries of the segment holding ``start_offset`` and those after it that overlap [log
        start, upper bound), until an entry's last stable offset reaches the bound. The log start is the first
        segment's base here (Kafka's logStartOffset may lie inside it: an entry wholly below it names records no
        reader sees either way)."""
        if not self._indexed or start_offset >= upper_bound_offset:
            return []
        floor = self._bases[max(0, bisect.bisect_right(self._bases, start_offset) - 1)]
        out: list[AbortedTxn] = []
        for segment in self._indexed:
            if segment.base_offset < floor:
                continue
            result = segment.collect_aborted_txns(self._log_start, upper_bound_offset)
            out.extend(result.aborted)
            if result.is_complete:
                break
        return out


class CleanedTransactionMetadata:
    """kafka.log.CleanedTransactionMetadata: the aborted transactions not reached yet (by first offset), those under
    way (producer id → the aborted transaction and whether a batch of it was read), the producers with a committed
    transaction under way, and the cleaned segment's transaction index, if the cleaner is recopying."""

    __slots__ = ("_aborted", "_ongoing_aborted", "_ongoing_committed", "transaction_index")

    def __init__(self, aborted: Sequence[AbortedTxn], transaction_index: TransactionIndex | None = None) -> None:
        self._aborted = [(t.first_offset, i, t) for i, t in enumerate(aborted)]
        heapq.heapify(self._aborted)
        self._ongoing_aborted: dict[int, tuple[AbortedTxn, list[bool]]] = {}
        self._ongoing_committed: set[int] = set()
        self.transaction_index = transaction_index

    def _consume_aborted_up_to(self, offset: int) -> None:
        """consumeAbortedTxnsUpTo: the aborted transactions begun at or before ``offset`` are under way."""
        while self._aborted and self._aborted[0][0] <= offset:
            txn = heapq.heappop(self._aborted)[2]
            self._ongoing_aborted[txn.producer_id] = (txn, [False])

    def on_control_batch_read(self, batch: RecordBatch) -> bool:
        """onControlBatchRead: True if the marker may be discarded (subject to the delete horizon)."""
        self._consume_aborted_up_to(batch.last_offset)
        records = read_records(batch)
        if not records:
            # a control batch emptied by an earlier cleaning (2.6.3 fails on it: iterator.next() of no record)
            return True
        control_type = control_record_type(records[0].key)
        producer_id = batch.producer_id
        if control_type == CONTROL_ABORT:
            ongoing = self._ongoing_aborted.pop(producer_id, None)
            if ongoing is not None and ongoing[1][0]:
                # kept until the transaction's batches are gone; READ_COMMITTED readers still need its entry
                if self.transaction_index is not None:
                    self.transaction_index.append(ongoing[0])
                return False
            return True
        if control_type == CONTROL_COMMIT:
            if producer_id in self._ongoing_committed:
                self._ongoing_committed.discard(producer_id)
                return False
            return True
        return False

    def on_batch_read(self, batch: RecordBatch) -> bool:
        """onBatchRead: True if the data batch belongs to an aborted transaction (it may be discarded)."""
        self._consume_aborted_up_to(batch.last_offset)
        if not batch.is_transactional:
            return False
        ongoing = self._ongoing_aborted.get(batch.producer_id)
        if ongoing is not None:
            ongoing[1][0] = True
            return True
        self._ongoing_committed.add(batch.producer_id)
        return False
