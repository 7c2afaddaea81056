"""The log cleaner over transactions, as Kafka 2.6.3's Cleaner (cleanInto / CleanedTransactionMetadata): records of
aborted transactions go (and are never mapped, so they hide no committed value), markers stay while their
transaction's batches do and then go after delete.retention.ms as tombstones do, a cleaned segment's ``.txnindex``
keeps the aborted transactions whose markers it keeps with their batches, the last batch of each producer stays so
its state survives, and the cleaning stops below the first unstable offset.

Small logs on disk whose segments are cut by record timestamps (segment.ms), each read back by a READ_UNCOMMITTED
reader (every record) and a READ_COMMITTED one (the consumer's algorithm over the ``.txnindex`` entries the log
answers a fetch with, up to the last stable offset)."""

from __future__ import annotations

import os

from core.broker.cleaner.cleaner import clean_log
from core.broker.cleaner.manager import grab_filthiest_compacted_log, plan_cleaning
from core.broker.cleaner.swap import apply_cleaning
from core.broker.cleaner.transactions import AbortedTransactions, CleanedTransactionMetadata
from core.broker.log import Log
from core.broker.log_config import LogConfig
from core.broker.producer_state import COORDINATOR, SNAPSHOT_FILE_SUFFIX
from core.broker.transaction_index import AbortedTxn
from messages.common import TopicPartition
from messages.log_cleaner import LogCleaned
from protocol.records import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    TRANSACTIONAL_BIT,
    EndTransactionMarker,
    Record,
    RecordBatch,
    build_batch,
    build_end_txn_marker_batch,
    iter_batches,
    read_batch_header,
)

TP = TopicPartition("compacted-txn", 0)
T0 = 1_700_000_000_000
SEGMENT_MS = 5_000


def config(**kw) -> LogConfig:
    kw.setdefault("min_cleanable_dirty_ratio", 0.01)
    return LogConfig(cleanup_policy="compact", segment_bytes=1 << 20, segment_ms=SEGMENT_MS, **kw)


class Writer:
    """Appends to a log as producers, a transaction coordinator and plain clients would; ``roll()`` makes the next
    append start a new segment (its records' timestamps are past segment.ms)."""

    def __init__(self, log: Log) -> None:
        self.log = log
        self.segment = 0
        self.seqs: dict[int, int] = {}

    @property
    def ts(self) -> int:
        return T0 + self.segment * 2 * SEGMENT_MS

    def roll(self) -> None:
        self.segment += 1

    def plain(self, pairs: list[tuple[str, str | None]]) -> int:
        batch = build_batch([Record(i, 0, k.encode(), None if v is None else v.encode())
                             for i, (k, v) in enumerate(pairs)], first_timestamp=self.ts)
        return self._append(batch)

    def txn(self, pid: int, pairs: list[tuple[str, str]]) -> int:
        seq = self.seqs.get(pid, 0)
        self.seqs[pid] = seq + len(pairs)
        batch = build_batch([Record(i, 0, k.encode(), v.encode()) for i, (k, v) in enumerate(pairs)],
                            first_timestamp=self.ts, producer_id=pid, producer_epoch=0, base_sequence=seq,
                            attributes=TRANSACTIONAL_BIT)
        return self._append(batch)

    def end(self, pid: int, commit: bool) -> int:
        marker = EndTransactionMarker(CONTROL_COMMIT if commit else CONTROL_ABORT, 0)
        return self._append(build_end_txn_marker_batch(pid, 0, marker, self.ts), COORDINATOR)

    def _append(self, batch: bytes, origin: str = "Client") -> int:
        first = self.log.append_as_leader(batch, 0, self.ts, origin).first_offset
        self.log.update_high_watermark(self.log.log_end_offset)
        return first


def batches(log: Log) -> list[RecordBatch]:
    out, offset = [], log.log_start_offset
    while offset < log.log_end_offset:
        data = log.read(offset, 1 << 20)
        if not data:
            break
        got = list(iter_batches(data))
        out += got
        offset = got[-1].next_offset
    return out


def read_uncommitted(log: Log) -> list[tuple[int, str, str | None]]:
    return [(b.base_offset + r.offset_delta, r.key.decode(), None if r.value is None else r.value.decode())
            for b in batches(log) if not b.is_control for r in b.records()]


def read_committed(log: Log) -> list[tuple[int, str, str | None]]:
    """A READ_COMMITTED consumer (Fetcher's abortedProducerIds): up to the last stable offset, the batches of a
    producer past the first offset of one of the fetch's aborted transactions are skipped until its ABORT marker."""
    lso = log.last_stable_offset
    pending = sorted(log.collect_aborted_transactions(log.log_start_offset, lso), key=lambda t: t.first_offset)
    aborted: set[int] = set()
    out = []
    for b in batches(log):
        if b.base_offset >= lso:
            break
        while pending and pending[0].first_offset <= b.last_offset:
            aborted.add(pending.pop(0).producer_id)
        if b.is_control:
            records = b.records()
            if records and records[0].key == b"\x00\x00\x00\x00":
                aborted.discard(b.producer_id)
            continue
        if b.is_transactional and b.producer_id in aborted:
            continue
        out += [(b.base_offset + r.offset_delta, r.key.decode(), None if r.value is None else r.value.decode())
                for r in b.records()]
    return out


def newest(records: list[tuple[int, str, str | None]]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for _offset, key, value in records:
        out[key] = value
    return out


def markers(log: Log) -> list[tuple[int, int, str]]:
    """(offset, producer id, COMMIT/ABORT/empty) of every control batch."""
    out = []
    for b in batches(log):
        if b.is_control:
            records = b.records()
            kind = "empty" if not records else ("ABORT" if records[0].key == b"\x00\x00\x00\x00" else "COMMIT")
            out.append((b.base_offset, b.producer_id, kind))
    return out


def clean(log: Log, checkpoints: dict, now: int = T0) -> int:
    chosen = grab_filthiest_compacted_log({TP: log}, checkpoints, (), now).chosen
    assert chosen is not None
    plan = plan_cleaning(chosen, 1 << 20, 0.9)
    result = clean_log(log.segments, plan, log.config.index_interval_bytes)
    assert apply_cleaning(log, LogCleaned(plan, result.groups, result.end_offset), clean_here=False)
    checkpoints[TP] = result.end_offset
    return result.end_offset


def age_all_segments(log: Log, ms: int) -> None:
    """Every non-active segment last modified at ``ms`` (so the delete horizon, the last clean segment's time less
    delete.retention.ms, is at or past all of them when delete.retention.ms is 0)."""
    for segment in log.segments[:-1]:
        os.utime(segment.log_path, (ms / 1000, ms / 1000))


def interleaved(w: Writer) -> dict[str, str | None]:
    """Plain records, a committed transaction of producer 7 and an aborted one of producer 8 interleaved over three
    segments (each overwriting plain keys: an aborted value must hide nothing), then both producers' next
    transactions committed in the active segment's neighbourhood; the newest committed value per key."""
    w.plain([(f"k{i}", f"plain-{i}") for i in range(10)])
    w.txn(7, [("k0", "c7"), ("k1", "c7")])
    w.txn(8, [("k2", "a8"), ("k3", "a8"), ("only-aborted", "a8")])
    w.plain([("k4", "plain-4b")])
    w.roll()
    w.txn(8, [("k5", "a8")])
    w.txn(7, [("k6", "c7")])
    w.end(7, commit=True)
    w.plain([("k7", "plain-7b")])
    w.end(8, commit=False)
    w.roll()
    w.plain([("k8", "plain-8b")])
    w.txn(7, [("k9", "c7-2")])
    w.txn(8, [("k8", "c8-2")])
    w.end(7, commit=True)
    w.end(8, commit=True)
    w.roll()
    w.plain([("tail", "t")])  # the active segment
    expected = {f"k{i}": f"plain-{i}" for i in range(10)}
    expected.update(k0="c7", k1="c7", k4="plain-4b", k6="c7", k7="plain-7b", k8="c8-2", k9="c7-2", tail="t")
    return expected


# ------------------------------------------------------------------------------------------------ aborted records


def test_aborted_records_go_and_both_readers_read_the_newest_committed_value_per_key(tmp_path):
    log = Log(str(tmp_path), TP, config=config())
    expected = interleaved(Writer(log))
    assert newest(read_committed(log)) == expected  # what the log answers before any cleaning
    assert "a8" in {v for _, _, v in read_uncommitted(log)}
    end = clean(log, {})
    assert end == log.segments[-1].base_offset
    uncommitted, committed = read_uncommitted(log), read_committed(log)
    # no aborted record is left, and each key below the active segment appears once: both readers read the same
    assert "a8" not in {v for _, _, v in uncommitted} and "only-aborted" not in {k for _, k, _ in uncommitted}
    assert uncommitted == committed
    assert newest(committed) == expected
    assert len({k for _, k, _ in committed}) == len(committed)


def test_an_aborted_overwrite_is_not_mapped_so_the_committed_value_it_follows_survives(tmp_path):
    """buildOffsetMap skips aborted batches: mapping k's aborted offset would drop k's committed value and leave
    only the aborted record, which a READ_COMMITTED reader skips — the key would vanish."""
    log = Log(str(tmp_path), TP, config=config())
    w = Writer(log)
    w.plain([("k", "committed"), ("other", "1")])
    w.txn(5, [("k", "aborted")])
    w.end(5, commit=False)
    w.roll()
    w.txn(5, [("z", "next")])
    w.end(5, commit=True)
    w.roll()
    w.plain([("tail", "t")])
    clean(log, {})
    assert newest(read_committed(log)) == {"k": "committed", "other": "1", "z": "next", "tail": "t"}
    assert newest(read_uncommitted(log)) == {"k": "committed", "other": "1", "z": "next", "tail": "t"}


# ---------------------------------------------------------------------------------------------------- markers


def test_markers_stay_while_their_batches_do_and_go_after_delete_retention_as_tombstones(tmp_path):
    log = Log(str(tmp_path), TP, config=config(delete_retention_ms=0))
    w = Writer(log)
    w.plain([("a", "1")])
    w.roll()
    w.plain([("pad", "x")])  # the first cleaning's clean section ends here
    w.roll()
    w.plain([("b", "1")])
    checkpoints: dict = {}
    clean(log, checkpoints)
    aborted_first = w.txn(3, [("c", "aborted")])
    w.txn(4, [("d", "committed")])
    w.end(3, commit=False)
    w.end(4, commit=True)
    w.plain([("d", "plain")])  # d's committed value is overwritten: its transaction's batch will be emptied
    w.roll()
    w.txn(3, [("e", "3")])  # each producer's last batch lies beyond the markers under test
    w.txn(4, [("f", "4")])
    w.end(3, commit=True)
    w.end(4, commit=True)
    w.roll()
    w.plain([("tail", "t")])
    before = markers(log)
    assert [kind for _, pid, kind in before if pid in (3, 4)] == ["ABORT", "COMMIT", "COMMIT", "COMMIT"]
    # every segment as old as the last clean one: past the delete horizon
    age_all_segments(log, T0)
    clean(log, checkpoints)
    # the aborted batch went, but its ABORT marker stays (its segment held the transaction's batch this time) and
    # the cleaned .txnindex still names it; the COMMIT marker stays too (its transaction's batch was read, emptied)
    after_first = markers(log)
    assert after_first == before
    assert [(t.producer_id, t.first_offset) for t in log.collect_aborted_transactions(0, log.log_end_offset)] \
        == [(3, aborted_first)]
    assert newest(read_committed(log)) == newest(read_uncommitted(log)) == {
        "a": "1", "pad": "x", "b": "1", "d": "plain", "e": "3", "f": "4", "tail": "t"}
    # the next cleaning finds no batch of either transaction: past the horizon both markers go, and the entry
    w.roll()
    w.plain([("b", "2")])
    w.roll()
    w.plain([("tail", "t2")])
    age_all_segments(log, T0)
    clean(log, checkpoints)
    assert [(o, pid, kind) for o, pid, kind in markers(log) if pid in (3, 4)] == [
        m for m in before if m[0] > after_first[1][0]]
    assert log.collect_aborted_transactions(0, log.log_end_offset) == []
    assert newest(read_committed(log)) == newest(read_uncommitted(log)) == {
        "a": "1", "pad": "x", "b": "2", "d": "plain", "e": "3", "f": "4", "tail": "t2"}


def test_markers_without_batches_stay_while_their_segment_is_within_delete_retention(tmp_path):
    """shouldDiscardBatch's retainTxnMarkers: a marker that may go stays while deletes are retained (the first
    cleaning has no clean section: the delete horizon is 0), as a tombstone does."""
    log = Log(str(tmp_path), TP, config=config(delete_retention_ms=86_400_000))
    w = Writer(log)
    w.txn(3, [("c", "aborted")])
    w.roll()
    w.end(3, commit=False)  # its segment holds no batch of the transaction
    w.txn(3, [("e", "3")])
    w.end(3, commit=True)
    w.roll()
    w.plain([("tail", "t")])
    before = markers(log)
    clean(log, {})
    assert markers(log) == before
    assert "aborted" not in {v for _, _, v in read_uncommitted(log)}
    # the ABORT marker's segment held no batch of its transaction: its entry is not carried into the cleaned index
    assert log.collect_aborted_transactions(0, log.log_end_offset) == []


# ------------------------------------------------------------------------------------- producers and the LSO


def test_each_producers_last_batch_stays_emptied_so_its_state_survives_a_restart(tmp_path):
    log = Log(str(tmp_path), TP, config=config())
    w = Writer(log)
    w.txn(7, [("k", "c7")])
    w.end(7, commit=True)
    w.txn(8, [("j", "a8")])
    w.end(8, commit=False)
    w.roll()
    w.plain([("k", "plain"), ("j", "plain")])
    w.roll()
    w.plain([("tail", "t")])
    state = {pid: (e.producer_epoch, e.last_seq, e.last_offset) for pid, e in log.producer_state.producers.items()}
    assert state == {7: (0, 0, 0), 8: (0, 0, 2)}
    clean(log, {})
    kept = {b.producer_id: b for b in batches(log) if not b.is_control and b.producer_id >= 0}
    # RETAIN_EMPTY: both producers' last batches stay with their offsets and sequences but no record (7's was
    # overwritten, 8's aborted)
    assert {pid: (b.base_offset, b.last_offset, b.base_sequence, b.records_count) for pid, b in kept.items()} == {
        7: (0, 0, 0, 0), 8: (2, 2, 0, 0)}
    assert [(pid, kind) for _, pid, kind in markers(log)] == [(7, "COMMIT"), (8, "ABORT")]
    log.close()
    for name in os.listdir(log.dir):  # rebuilt from the batches, not from a snapshot
        if name.endswith(SNAPSHOT_FILE_SUFFIX):
            os.unlink(os.path.join(log.dir, name))
    reopened = Log(str(tmp_path), TP, config=config())
    assert {pid: (e.producer_epoch, e.last_seq, e.last_offset)
            for pid, e in reopened.producer_state.producers.items()} == state
    reopened.update_high_watermark(reopened.log_end_offset)
    assert reopened.last_stable_offset == reopened.log_end_offset  # no transaction reopened by the cleaning


def test_the_cleaning_never_passes_the_first_unstable_offset(tmp_path):
    log = Log(str(tmp_path), TP, config=config())
    w = Writer(log)
    w.plain([(f"k{i}", "old") for i in range(5)])
    w.roll()
    w.plain([(f"k{i}", "newer") for i in range(5)])
    open_first = w.txn(9, [("k0", "open")])  # an open transaction: the first unstable offset
    w.roll()
    w.plain([(f"k{i}", "newest") for i in range(5)])
    w.roll()
    w.plain([("tail", "t")])
    assert log.last_stable_offset == open_first
    unstable_base = next(s.base_offset for s in reversed(log.segments) if s.base_offset <= open_first)
    frozen = [(s.base_offset, s.size) for s in log.segments if s.base_offset >= unstable_base]
    checkpoints: dict = {}
    end = clean(log, checkpoints)
    # cleaned up to the segment holding the open transaction's first offset; it and all after it untouched
    assert end == unstable_base
    assert [(s.base_offset, s.size) for s in log.segments if s.base_offset >= unstable_base] == frozen
    assert [(k, v) for _, k, v in read_uncommitted(log)][:5] == [(f"k{i}", "old") for i in range(5)]
    assert log.collect_aborted_transactions(0, log.log_end_offset) == []
    # the transaction commits: the next cleaning passes it, keeping k0's newest value and the open one's commit
    w.end(9, commit=True)
    w.roll()
    w.plain([("tail", "t2")])
    clean(log, checkpoints)
    assert newest(read_committed(log)) == newest(read_uncommitted(log)) == {
        **{f"k{i}": "newest" for i in range(5)}, "tail": "t2"}
    assert {k for _, k, v in read_uncommitted(log) if v == "open"} == set()


def test_a_replay_cleans_transactions_again_into_the_same_segments_and_txnindex(tmp_path):
    live = Log(str(tmp_path / "live"), TP, config=config())
    replay = Log(str(tmp_path / "replay"), TP, config=config())
    for log in (live, replay):
        interleaved(Writer(log))
    chosen = grab_filthiest_compacted_log({TP: live}, {}, (), T0).chosen
    plan = plan_cleaning(chosen, 1 << 20, 0.9)
    result = clean_log(live.segments, plan, live.config.index_interval_bytes)
    msg = LogCleaned(plan, result.groups, result.end_offset)
    assert apply_cleaning(live, msg, clean_here=False)
    assert apply_cleaning(replay, msg, clean_here=True)
    assert [b.raw for b in batches(live)] == [b.raw for b in batches(replay)]
    assert live.collect_aborted_transactions(0, live.log_end_offset) == \
        replay.collect_aborted_transactions(0, replay.log_end_offset)


# ------------------------------------------------------------------------------------ CleanedTransactionMetadata


def _batch(pid: int, base: int, transactional: bool = True) -> RecordBatch:
    return read_batch_header(build_batch([Record(0, 0, b"k", b"v")], base_offset=base, first_timestamp=T0,
                                         producer_id=pid, producer_epoch=0, base_sequence=0,
                                         attributes=TRANSACTIONAL_BIT if transactional else 0))


def _marker(pid: int, base: int, commit: bool) -> RecordBatch:
    marker = EndTransactionMarker(CONTROL_COMMIT if commit else CONTROL_ABORT, 0)
    return read_batch_header(build_end_txn_marker_batch(pid, 0, marker, T0, base_offset=base))


def test_the_cleaners_aborted_transactions_are_the_logs_for_every_range(tmp_path):
    """AbortedTransactions.collect is Log.collectAbortedTransactions (the log starting at its first segment)."""
    log = Log(str(tmp_path), TP, config=config())
    w = Writer(log)
    for r in range(6):
        w.txn(3, [("a", f"{r}")])
        w.plain([("p", f"{r}")])
        w.txn(4, [("b", f"{r}")])
        if r % 2:
            w.roll()
        w.end(3, commit=r % 3 == 0)
        w.end(4, commit=r % 2 == 0)
    w.roll()
    w.plain([("tail", "t")])
    aborted = AbortedTransactions(log.segments)
    ends = [0, *(s.base_offset for s in log.segments), log.log_end_offset]
    for start in ends:
        for upper in ends:
            assert aborted.collect(start, upper) == (log.collect_aborted_transactions(start, upper)
                                                     if start < upper else []), (start, upper)
    assert len(aborted.collect(0, log.log_end_offset)) == 7


def test_cleaned_transaction_metadata_decides_as_kafkas(tmp_path):
    from core.broker.transaction_index import TransactionIndex

    index = TransactionIndex(str(tmp_path), 0)
    meta = CleanedTransactionMetadata([AbortedTxn(2, 10, 30, 31), AbortedTxn(1, 5, 20, 21)], index)
    assert meta.on_batch_read(_batch(1, 4)) is False  # before producer 1's aborted transaction begins: committed
    assert meta.on_control_batch_read(_marker(1, 4, commit=True)) is False  # its batch was read: kept
    assert meta.on_batch_read(_batch(1, 5)) is True  # aborted
    assert meta.on_batch_read(_batch(3, 6, transactional=False)) is False
    assert meta.on_control_batch_read(_marker(3, 7, commit=True)) is True  # no batch of it read: may go
    assert meta.on_control_batch_read(_marker(1, 20, commit=False)) is False  # its batch was read: kept, indexed
    assert meta.on_control_batch_read(_marker(2, 30, commit=False)) is True  # none of its batches read here
    assert index.entries() == [AbortedTxn(1, 5, 20, 21)]


# ------------------------------------------------------------------------------------------ the .txnindex on disk


def _crash_in_swap(log: Log, monkeypatch) -> None:
    """Clean ``log`` and crash inside Log.replaceSegments once its ``.cleaned`` files are ``.swap`` files, before the
    old segments are deleted (the first delete fails), then close it as a restart would find it."""
    from core.broker.kafka_storage_error import KafkaStorageError
    from core.broker.log_segment import LogSegment

    def crash(self):
        raise OSError("crash")

    chosen = grab_filthiest_compacted_log({TP: log}, {}, (), T0).chosen
    plan = plan_cleaning(chosen, 1 << 20, 0.9)
    result = clean_log(log.segments, plan, log.config.index_interval_bytes)
    assert len(result.groups[0]) > 1
    with monkeypatch.context() as m:
        m.setattr(LogSegment, "delete", crash)
        try:
            apply_cleaning(log, LogCleaned(plan, result.groups, result.end_offset), clean_here=False)
        except KafkaStorageError:
            pass
        else:
            raise AssertionError("the swap did not crash")
    assert f"{0:020d}.log.swap" in os.listdir(log.dir)


def test_the_cleaned_txnindex_survives_a_restart_and_a_swap_completed_after_a_crash(tmp_path, monkeypatch):
    """The cleaned segment's ``.txnindex`` is the cleaner's (only the transaction whose marker it kept with a batch
    of its), swapped in with the segment; a crash after the ``.swap`` renames, before the old segments went, is
    completed on open with the cleaned index."""
    log = Log(str(tmp_path), TP, config=config())
    w = Writer(log)
    gone = w.txn(3, [("a", "aborted")])
    w.roll()
    w.end(3, commit=False)  # another segment than its batch: no entry after the cleaning
    kept = w.txn(4, [("b", "aborted")])
    w.end(4, commit=False)  # the same segment as its batch: kept with its entry
    w.txn(3, [("c", "3")])
    w.txn(4, [("d", "4")])
    w.end(3, commit=True)
    w.end(4, commit=True)
    w.roll()
    w.plain([("tail", "t")])
    assert [(t.producer_id, t.first_offset) for t in log.collect_aborted_transactions(0, log.log_end_offset)] == [
        (3, gone), (4, kept)]
    _crash_in_swap(log, monkeypatch)
    # the broker's recovery point is past the cleaned segments (they were flushed long ago): they are not recovered
    reopened = Log(str(tmp_path), TP, config=config(), recovery_point=log.segments[-1].base_offset)
    reopened.update_high_watermark(reopened.log_end_offset)
    assert [s.base_offset for s in reopened.segments][:1] == [0] and len(reopened.segments) == 2
    assert [(t.producer_id, t.first_offset)
            for t in reopened.collect_aborted_transactions(0, reopened.log_end_offset)] == [(4, kept)]
    assert newest(read_committed(reopened)) == newest(read_uncommitted(reopened)) == {"c": "3", "d": "4", "tail": "t"}


def test_a_cleaned_segment_without_entries_replaces_the_old_txnindex_even_after_a_crash(tmp_path, monkeypatch):
    """The first old segment's ``.txnindex`` holds an entry the cleaning drops (its transaction's batch went in an
    earlier cleaning): the swap carries an empty index in its place, so a crash's completed swap does not leave the
    old entry under the new segment."""
    logs = []
    for name in ("live", "crash"):
        log = Log(str(tmp_path / name), TP, config=config())
        w = Writer(log)
        w.plain([("p", "1")])
        w.txn(3, [("a", "aborted")])
        w.end(3, commit=False)
        w.txn(3, [("c", "3")])
        w.end(3, commit=True)
        w.roll()
        w.plain([("tail", "t")])
        checkpoints: dict = {}
        clean(log, checkpoints)  # the aborted batch goes; its marker and entry stay in segment 0
        assert [t.producer_id for t in log.collect_aborted_transactions(0, log.log_end_offset)] == [3]
        w.roll()
        w.plain([("p", "2")])
        w.roll()
        w.plain([("tail", "t2")])
        logs.append((log, checkpoints))
    (live, checkpoints), (crashed, _) = logs
    clean(live, checkpoints)
    assert live.collect_aborted_transactions(0, live.log_end_offset) == []
    _crash_in_swap(crashed, monkeypatch)
    reopened = Log(str(tmp_path / "crash"), TP, config=config(), recovery_point=crashed.segments[-1].base_offset)
    assert reopened.collect_aborted_transactions(0, reopened.log_end_offset) == []
    reopened.update_high_watermark(reopened.log_end_offset)
    assert newest(read_committed(reopened)) == {"p": "2", "c": "3", "tail": "t2"}
