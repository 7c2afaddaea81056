"""sim/txn_checker.py on hand-made histories: a clean history passes, and each anomaly kind is found, naming the
transactions involved."""

from __future__ import annotations

import attrs

from sim.txn_checker import (
    ABORTED,
    ABORTED_READ,
    COMMITTED,
    DUPLICATE,
    LOST_WRITE,
    OFFSETS,
    ORDER,
    STALL,
    TORN,
    UNKNOWN,
    Entry,
    History,
    OffsetRead,
    StableSample,
    StrayEndTxn,
    TxnWrites,
    check,
    counts,
    table,
)

T1 = TxnWrites("p0", 1, (("t-0", "p0-1"), ("t-1", "p0-2")), COMMITTED, (("g0/t-0", 1),))
T2 = TxnWrites("p0", 2, (("t-0", "p0-3"), ("t-1", "p0-4")), ABORTED, (("g0/t-0", 2),))
T3 = TxnWrites("p0", 3, (("t-0", "p0-5"), ("t-0", "p0-6"), ("t-1", "p0-7")), COMMITTED, (("g0/t-0", 3),))
U1 = TxnWrites("p1", 1, (("t-0", "p1-1"), ("t-1", "p1-2")), COMMITTED)

# the logs as a correct broker leaves them (markers take offsets: gaps), and what each reader read
UNCOMMITTED = (Entry("t-0", 0, "p0-1"), Entry("t-0", 1, "p1-1"), Entry("t-0", 3, "p0-3"), Entry("t-0", 5, "p0-5"),
               Entry("t-0", 6, "p0-6"), Entry("t-1", 0, "p0-2"), Entry("t-1", 1, "p1-2"), Entry("t-1", 3, "p0-4"),
               Entry("t-1", 5, "p0-7"))
COMMITTED_LOG = tuple(e for e in UNCOMMITTED if e.value not in ("p0-3", "p0-4"))
END = {"t-0": 8, "t-1": 7}


def history(**kw: object) -> History:
    base = dict(txns=(T1, T2, T3, U1), committed=COMMITTED_LOG, uncommitted=UNCOMMITTED, positions=END,
                complete=frozenset(END), offset_reads=(OffsetRead("g0/t-0", 1), OffsetRead("g0/t-0", 3, final=True)),
                samples=(StableSample(1000.0, "t-0", 3, 4), StableSample(2000.0, "t-0", 8, 8)),
                stall_bound_ms=25000.0)
    base.update(kw)
    return History(**base)  # type: ignore[arg-type]


def kinds(h: History) -> list[str]:
    return [a.kind for a in check(h)]


def test_a_clean_history_passes() -> None:
    assert check(history()) == []


def test_aborted_read_names_the_aborted_transaction() -> None:
    found = check(history(committed=(*COMMITTED_LOG, Entry("t-0", 3, "p0-3"))))
    assert [a.kind for a in found] == [ABORTED_READ]
    assert found[0].where == "t-0@3" and found[0].txns == ("p0:T2 (aborted)",)


def test_lost_write_when_the_reader_read_past_it() -> None:
    gone = tuple(e for e in COMMITTED_LOG if e.value not in ("p1-1", "p1-2"))
    found = check(history(committed=gone))
    assert [a.kind for a in found] == [LOST_WRITE]
    assert found[0].txns == ("p1:T1 (committed)",)


def test_a_value_beyond_a_stalled_reader_is_not_lost() -> None:
    # the reader stopped at t-1's offset 1 (a stall): p1-2 above it is not judged; nor is T1 torn
    h = history(committed=tuple(e for e in COMMITTED_LOG if e.partition == "t-0"), positions={"t-0": 8, "t-1": 0},
                complete=frozenset({"t-0"}))
    assert LOST_WRITE not in kinds(h) and TORN not in kinds(h)


def test_torn_when_a_committed_transaction_is_partly_visible() -> None:
    found = check(history(committed=tuple(e for e in COMMITTED_LOG if e.value != "p0-7")))
    assert TORN in [a.kind for a in found]
    assert any(a.kind == TORN and "p0-7" in a.detail for a in found)


def test_torn_when_a_value_lands_inside_a_later_transactions_span() -> None:
    # T1's p0-2 delayed: it reached t-1 after T3's first value (Jepsen's delayed produce)
    late = tuple(e for e in COMMITTED_LOG if e.value != "p0-2") + (Entry("t-1", 6, "p0-2"),)
    found = check(history(committed=late, uncommitted=tuple(e for e in UNCOMMITTED if e.value != "p0-2")
                          + (Entry("t-1", 6, "p0-2"),)))
    torn = [a for a in found if a.kind == TORN]
    assert torn and torn[0].txns == ("p0:T1 (committed)", "p0:T3 (committed)")


def test_an_unknown_outcome_must_be_whole_or_absent() -> None:
    u = TxnWrites("p1", 1, U1.writes, UNKNOWN)
    assert check(history(txns=(T1, T2, T3, u))) == []
    absent = tuple(e for e in COMMITTED_LOG if not e.value.startswith("p1"))
    assert check(history(txns=(T1, T2, T3, u), committed=absent)) == []
    assert kinds(history(txns=(T1, T2, T3, u), committed=tuple(e for e in COMMITTED_LOG if e.value != "p1-2"))) \
        == [TORN]


def test_duplicate_in_either_log() -> None:
    found = check(history(uncommitted=(*UNCOMMITTED, Entry("t-0", 7, "p0-6"))))
    assert [a.kind for a in found] == [DUPLICATE]
    assert "read_uncommitted" in found[0].detail and found[0].txns == ("p0:T3 (committed)",)


def test_order_broken_within_a_transaction() -> None:
    swapped = tuple(Entry(e.partition, e.offset, {"p0-5": "p0-6", "p0-6": "p0-5"}.get(e.value, e.value))
                    for e in COMMITTED_LOG)
    found = check(history(committed=swapped))
    assert ORDER in [a.kind for a in found]
    assert all(a.txns == ("p0:T3 (committed)",) for a in found if a.kind == ORDER)


def test_offsets_of_an_aborted_transaction_visible() -> None:
    found = check(history(offset_reads=(OffsetRead("g0/t-0", 2),)))
    assert [a.kind for a in found] == [OFFSETS] and found[0].txns == ("p0:T2 (aborted)",)


def test_offsets_visible_without_their_output() -> None:
    h = history(committed=tuple(e for e in COMMITTED_LOG if not e.value.startswith("p0")))
    assert OFFSETS in kinds(h)


def test_offsets_at_the_end_older_than_the_last_commit() -> None:
    found = check(history(offset_reads=(OffsetRead("g0/t-0", 1, final=True),)))
    assert [a.kind for a in found] == [OFFSETS]
    assert found[0].txns == ("p0:T1 (committed)", "p0:T3 (committed)")


def test_stalled_reader_past_the_bound() -> None:
    samples = (StableSample(1000.0, "t-0", 3, 4), StableSample(20000.0, "t-0", 3, 8),
               StableSample(31000.0, "t-0", 3, 9))
    found = check(history(samples=samples))
    assert [a.kind for a in found] == [STALL]
    assert found[0].where == "t-0@3" and found[0].txns == ("p0:T2 (aborted)",)
    assert "30.0 s" in found[0].detail
    # within the bound: none
    assert check(history(samples=samples[:2])) == []


def test_table_names_kinds_transactions_and_the_replay_command() -> None:
    found = check(history(committed=(*COMMITTED_LOG, Entry("t-0", 3, "p0-3"))))
    text = table(found, head="txn-check seed 7: 1 anomaly", rerun="kactor sim --seeds 7 --steps 50 --txn-check")
    assert "aborted read" in text and "p0:T2 (aborted)" in text and "t-0@3" in text
    assert text.splitlines()[-1] == "  replay: kactor sim --seeds 7 --steps 50 --txn-check"
    assert counts(found)[ABORTED_READ] == 1 and counts(found)[STALL] == 0


def test_a_stall_counts_only_while_the_cluster_is_whole() -> None:
    # held 30 s, but a broker was down until 20 s: 11 s of it count, within the bound
    samples = (StableSample(1000.0, "t-0", 3, 4, None), StableSample(20000.0, "t-0", 3, 8, 20000.0),
               StableSample(31000.0, "t-0", 3, 9, 20000.0))
    assert check(history(samples=samples)) == []
    # whole from 2 s on: 29 s count
    whole = tuple(attrs.evolve(s, healthy_since_ms=2000.0) for s in samples[1:])
    assert [a.kind for a in check(history(samples=(samples[0], *whole)))] == [STALL]


def test_offsets_never_stable_at_the_end() -> None:
    found = check(history(unsettled=(("g0/t-0", "UNSTABLE_OFFSET_COMMIT"),)))
    assert [a.kind for a in found] == [OFFSETS] and "UNSTABLE_OFFSET_COMMIT" in found[0].detail


def test_an_anomaly_of_a_transaction_a_stray_end_txn_landed_in_is_known() -> None:
    """KIP-890 part 2's case: T2 aborted, but T1's delayed EndTxn(commit) landed in it under the same epoch and
    committed it; the aborted read is named known, with the EndTxn that did it. Without the stray it is a defect."""
    read = (*COMMITTED_LOG, Entry("t-0", 3, "p0-3"))
    (plain,) = check(history(committed=read))
    assert plain.known == ""
    (known,) = check(history(committed=read, strays=(StrayEndTxn("p0:T1's EndTxn", "p0:T2", 34400.0),)))
    assert (known.kind, known.txns) == (ABORTED_READ, ("p0:T2 (aborted)",))
    assert known.known == ("KIP-890 part 2: p0:T1's EndTxn landed in p0:T2 at 34.4 s under the same producer id "
                           "and epoch")
    assert "known, KIP-890 part 2" in table([known])
    # a stray into another transaction explains nothing here
    (other,) = check(history(committed=read, strays=(StrayEndTxn("p0:T1's EndTxn", "p0:T3", 34400.0),)))
    assert other.known == ""


def test_values_of_a_partition_its_sole_isr_member_lost_power_are_known_and_its_last_reads_count() -> None:
    """Seed 2845: t-1's sole ISR member lost power, so what was committed and read there may be gone and its offsets
    reused (Kafka acknowledges without fsync). An anomaly about t-1's values only is known; one about another
    partition is not; and a later read of an offset there replaces the first."""
    gone = tuple(e for e in COMMITTED_LOG if e.value != "p1-2")  # U1's t-1 value lost
    (torn,) = check(history(committed=gone))
    assert torn.kind == TORN and torn.known == ""
    (known,) = check(history(committed=gone, power_losses=(("t-1", "b0 lost power at 21.0 s"),)))
    assert known.kind == TORN and known.known.startswith("power loss: t-1: b0 lost power at 21.0 s")
    assert check(history(committed=gone, power_losses=(("t-0", "b0 lost power at 21.0 s"),)))[0].known == ""
    # t-1's offset 0 read again after the loss holds another value: there the last read counts (p0:T1's p0-2 gone,
    # known), elsewhere the first (the same reads on t-0 change nothing)
    reread = (*COMMITTED_LOG, Entry("t-1", 0, "x"))
    found = check(history(committed=reread, power_losses=(("t-1", "b0 lost power"),)))
    assert [(a.kind, a.txns, bool(a.known)) for a in found] == [(TORN, ("p0:T1 (committed)",), True),
                                                                 (OFFSETS, ("p0:T1 (committed)",), True)]
    assert check(history(committed=(*COMMITTED_LOG, Entry("t-0", 0, "x")))) == []


def test_a_stall_on_a_partition_its_sole_isr_member_lost_power_is_known() -> None:
    """Seed 7856 (as `kactor sim` ran it before sim/disk.py's mount): txn-1's sole ISR member lost power with the
    COMMIT marker of p1:T6 unflushed; the marker was gone, its transaction open at 37 for good (Kafka's hanging
    transaction: the coordinator had completed it). Known on that partition, not on another."""
    samples = (StableSample(1000.0, "t-0", 3, 4), StableSample(20000.0, "t-0", 3, 8),
               StableSample(31000.0, "t-0", 3, 9))
    (stall,) = check(history(samples=samples, power_losses=(("t-0", "b0 lost power at 0.5 s"),)))
    assert (stall.kind, stall.partitions) == (STALL, ("t-0",))
    assert stall.known.startswith("power loss: t-0: b0 lost power at 0.5 s")
    assert check(history(samples=samples, power_losses=(("t-1", "b0 lost power at 0.5 s"),)))[0].known == ""


def test_a_coordinators_log_lost_to_power_makes_its_anomalies_known() -> None:
    """Seed 7012: b2 came back on a new disk as the sole ISR member of every partition, the coordinators' logs too:
    the group offsets it held are gone (offsets not atomic: known through __consumer_offsets-0), and a lost
    transaction log takes every guarantee (any kind known through __transaction_state-0)."""
    final = (OffsetRead("g0/t-0", 1), OffsetRead("g0/t-0", -1, final=True))
    (plain,) = check(history(offset_reads=final))
    assert plain.kind == OFFSETS and plain.known == ""
    (offsets,) = check(history(offset_reads=final, power_losses=(("__consumer_offsets-0", "b2 on a new disk"),)))
    assert offsets.known.startswith("power loss: __consumer_offsets-0: b2 on a new disk")
    read = (*COMMITTED_LOG, Entry("t-0", 3, "p0-3"))
    assert check(history(committed=read, power_losses=(("__consumer_offsets-0", "x"),)))[0].known == ""
    assert check(history(committed=read, power_losses=(("__transaction_state-0", "x"),)))[0].known.startswith(
        "power loss: __transaction_state-0")
