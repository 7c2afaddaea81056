"""`kactor sim`'s faster paths give the plain path's answers: the invariant checks' parsed-batch cache
(sim/invariants.py) changes no outcome, no event and no violation of a seed, and catches a forged log as the plain
parse does."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from kactor.sim_boot import SimBoot
from messages.common import TopicPartition
from sim.client import zk_partition_state
from sim.invariants import hosted_partition, value_at, values_below_hw
from sim.run import SeedResult, create_topic, run_seed
from sim.runtime import Sim


@contextlib.contextmanager
def _cluster_with_topic() -> Iterator[tuple[Sim, dict[TopicPartition, tuple[int, ...]], TopicPartition]]:
    """Seed 4's three brokers serving, with topic "t" (one partition, RF 3) led and its replicas in sync."""
    sim = Sim(4, SimBoot())
    try:
        for b in sim.brokers:
            sim.start(b)
        sim.run_for(2000)
        assignment = create_topic(sim, "t", 1, 3)
        sim.run_for(2000)
        yield sim, assignment, TopicPartition("t", 0)
    finally:
        sim.close()


@contextlib.contextmanager
def _fast_and_plain_checkers() -> Iterator[tuple[Any, ...]]:
    """`_cluster_with_topic` with a fast-path and a plain-path Checker, each with its own client, every replica of t-0
    holding "a0" and "a1" below a high watermark of 2: (sim, tp, [(checker, client)], the replicas' logs, ack(offset,
    value) for both clients, check() asserting both find the same and returning it)."""
    from sim.client import Ack, SimClient
    from sim.invariants import Checker

    with _cluster_with_topic() as (sim, assignment, tp):
        checkers = []
        for fast in (True, False):
            client = SimClient(sim)
            checkers.append((Checker(sim, client, [tp], assignment, fast=fast), client))
        logs = [hosted_partition(sim, b, tp).log for b in sim.brokers]
        for log in logs:
            log.append_as_follower(_batch_of(["a0"], base=0))
            log.append_as_follower(_batch_of(["a1"], base=1))
            log.update_high_watermark(2)

        def ack(offset: int, value: str) -> None:
            for _, client in checkers:
                client.acks.append(Ack(tp, offset, value, 0.0, 0.0, None))

        def check() -> list[str]:
            found = [checker.check() for checker, _ in checkers]
            assert found[0] == found[1]  # the fast path finds what the plain one finds
            return found[0]

        yield sim, tp, checkers, logs, ack, check


def _outcome(r: SeedResult) -> SeedResult:
    return attrs.evolve(r, wall_s=0.0, cpu_s=0.0)


@pytest.mark.parametrize("seed", [2, 7])
def test_a_seed_gives_the_same_result_and_event_log_on_the_fast_and_the_plain_path(seed: int) -> None:
    fast = run_seed(seed, 15, SimBoot())
    plain = run_seed(seed, 15, SimBoot(), fast=False)
    assert _outcome(fast) == _outcome(plain)
    assert fast.acks > 0 and fast.violations == ()


def test_a_forged_log_gives_the_same_violation_on_both_paths() -> None:
    tp = TopicPartition("sim", 0)

    def forge(sim: Sim, step: int) -> None:
        if step == 6:
            state = zk_partition_state(sim, tp)
            assert state is not None
            p = next(p for b in state.isr if b != state.leader and (p := hosted_partition(sim, b, tp)) is not None)
            p.log.truncate_to(0)
            p.log.append_as_follower(_batch_of(["forged", "forged"]))
            p.log.update_high_watermark(2)

    fast = run_seed(3, 8, SimBoot(), tamper=forge)
    plain = run_seed(3, 8, SimBoot(), tamper=forge, fast=False)
    assert fast.violations and _outcome(fast) == _outcome(plain)
    assert "has 'forged'" in fast.violations[0]


def test_the_batch_cache_reads_every_log_as_the_plain_parse_does_as_it_changes() -> None:
    """One cache across the reads of three replicas' logs, before and after one is rewritten under it."""
    with _cluster_with_topic() as (sim, _, tp):
        logs = [hosted_partition(sim, b, tp).log for b in sim.brokers]
        for log in logs:
            log.append_as_follower(_batch_of([f"v{i}" for i in range(3)], base=log.log_end_offset))
            log.append_as_follower(_batch_of(["w"], base=log.log_end_offset))
            log.update_high_watermark(4)
        cache: dict = {}
        for log in logs:
            assert values_below_hw(log, cache) == values_below_hw(log) == {0: "v0", 1: "v1", 2: "v2", 3: "w"}
        assert len(cache) == 2  # the replicas' identical batches parsed once
        logs[1].truncate_to(3)
        logs[1].append_as_follower(_batch_of(["x"], base=3))
        logs[1].update_high_watermark(4)
        assert values_below_hw(logs[1], cache) == values_below_hw(logs[1]) == {0: "v0", 1: "v1", 2: "v2", 3: "x"}
        logs[2].update_high_watermark(2)
        assert values_below_hw(logs[2], cache) == values_below_hw(logs[2]) == {0: "v0", 1: "v1"}
        # the final check's read of a leader's log to its end answers as value_at does at every offset, above the
        # high watermark too
        for log in logs:
            end = log.log_end_offset
            assert values_below_hw(log, cache, end=end) == {o: value_at(log, o) for o in range(end)}
        assert values_below_hw(logs[1], cache, end=logs[1].log_end_offset)[3] == "x"
        assert values_below_hw(logs[2], cache, end=logs[2].log_end_offset) == {0: "v0", 1: "v1", 2: "v2", 3: "w"}


def test_the_checker_reuses_a_replica_s_values_only_while_its_bytes_and_watermarks_are_unchanged() -> None:
    """A log rewritten under the Checker to the same size, the same log end and the same high watermark (a truncation
    then an append of an equally long batch) reads as the plain path reads it, not as the step before."""
    from sim.client import SimClient
    from sim.invariants import Checker

    with _cluster_with_topic() as (sim, assignment, tp):
        log = hosted_partition(sim, 0, tp).log
        log.append_as_follower(_batch_of(["a1"], base=0))
        log.append_as_follower(_batch_of(["a2"], base=1))
        log.update_high_watermark(2)
        checker = Checker(sim, SimClient(sim), [tp], assignment)
        first = checker._below_hw(log)
        assert first == values_below_hw(log) == {0: "a1", 1: "a2"}
        assert checker._below_hw(log) is first  # unchanged: the last answer again
        size = log.segments[-1].size
        log.truncate_to(1)
        log.append_as_follower(_batch_of(["b2"], base=1))
        log.update_high_watermark(2)
        assert (log.segments[-1].size, log.log_end_offset, log.high_watermark) == (size, 2, 2)  # as they were
        assert checker._below_hw(log) == values_below_hw(log) == {0: "a1", 1: "b2"}
        log.update_high_watermark(1)
        assert checker._below_hw(log) == values_below_hw(log) == {0: "a1"}


def test_the_checker_reads_on_from_where_it_stopped_as_a_read_from_the_start_does(monkeypatch) -> None:
    """A log that grows under the Checker (its high watermark behind its end, then past records read above it;
    segments rolled; its log start moved; truncated; a forged batch whose offsets go back) reads at every turn as the
    plain path reads it, to the order of its offsets, whether the Checker went on from its last read or started
    over."""
    from sim import invariants
    from sim.client import SimClient
    from sim.invariants import Checker

    # each of the Checker's reads' (first segment, byte): (0, 0) from the start, else going on (not the reads from the
    # start that values_below_hw makes for the comparison)
    reads: list[tuple[int, int]] = []
    checking = False
    plain_read = invariants._Scan.read

    def read(self, first, pos, cache):
        if checking:
            reads.append((first, pos))
        return plain_read(self, first, pos, cache)

    monkeypatch.setattr(invariants._Scan, "read", read)
    with _cluster_with_topic() as (sim, assignment, tp):
        log = hosted_partition(sim, 0, tp).log
        checker = Checker(sim, SimClient(sim), [tp], assignment)

        def same(plain: bool = True) -> None:
            nonlocal checking
            checking = True
            got = list(checker._below_hw(log).items())
            checking = False
            assert got == list(values_below_hw(log, {}).items())  # the segments' walk from the start
            if plain:  # a forged log is read otherwise by Log.read's offset translations
                assert got == list(values_below_hw(log).items())

        same()
        for i in range(12):
            log.append_as_follower(_batch_of([f"a{i}", f"b{i}"], base=log.log_end_offset))
            log.update_high_watermark(log.log_end_offset - 1 - i % 2)  # behind the end: records kept above it
            same()
            if i in (3, 7):
                log._roll(log.log_end_offset, 0)  # a new segment: the next read goes on into it
        assert len(log.segments) == 3
        assert sum(r != (0, 0) for r in reads) == 11  # every append but the first read on from the last read
        log.maybe_increment_log_start_offset(5)
        same()
        log.update_high_watermark(log.log_end_offset)
        same()
        log.truncate_to(20)
        log.update_high_watermark(18)
        same()
        log.append_as_follower(_batch_of(["c"], base=20))
        same()
        assert reads[-4:] == [(0, 0), (2, reads[-3][1]), (0, 0), reads[-1]] and reads[-1] != (0, 0)
        # a forged batch whose offsets go back over two records below the high watermark: read on from an ordered
        # read (what went before is in offset order), then from the start
        end = log.log_end_offset
        log.segments[-1].append(_batch_of(["back0", "back1", "back2", "back3"], base=end - 2), end + 1, 0, end + 1)
        log.append_as_follower(_batch_of(["z"], base=end))
        log.update_high_watermark(log.log_end_offset)
        same(plain=False)
        assert not checker._scans[id(log)].ordered
        assert checker._below_hw(log)[end - 1] == "back1"
        log.append_as_follower(_batch_of(["w"], base=log.log_end_offset))
        log.update_high_watermark(log.log_end_offset)
        same(plain=False)
        assert reads[-2] != (0, 0) and reads[-1] == (0, 0)


def test_the_checker_verifies_only_new_acks_while_a_replica_s_values_are_unchanged_and_every_ack_after_a_change(
        ) -> None:
    """An ack found in a replica's values is not looked up again while the Checker's answer for that replica is the
    same values at the same high watermark; a new ack is, and a log rewritten under an ack verified before is caught
    at the next check, as the plain path (which verifies every ack at every check) catches it."""
    with _fast_and_plain_checkers() as (sim, tp, checkers, logs, ack, check):
        ack(0, "a0")
        assert check() == []
        fast = checkers[0][0]
        assert {key[0]: n for key, (_, n, _) in fast._verified.items()} == {0: 1, 1: 1, 2: 1}
        ack(1, "a1")
        ack(2, "a2")  # at the high watermark: not yet a record the ISR must hold
        assert check() == []
        assert {(n, above) for _, n, above in fast._verified.values()} == {(3, (2,))}  # a2 at the HW: looked again
        logs[1].truncate_to(1)  # under acks verified before: b1 read again, every ack looked up again
        logs[1].append_as_follower(_batch_of(["forged"], base=1))
        logs[1].update_high_watermark(2)
        assert check() == ["t-0: acknowledged 'a1' at offset 1, ISR replica b1 has 'forged' (its HW 2)"]
        ack(0, "wrong")  # a new ack b0's and b2's unchanged values do not hold: found all the same
        assert sorted(check()) == [
            "t-0: acknowledged 'a1' at offset 1, ISR replica b1 has 'forged' (its HW 2)",
            "t-0: acknowledged 'wrong' at offset 0, ISR replica b0 has 'a0' (its HW 2)",
            "t-0: acknowledged 'wrong' at offset 0, ISR replica b1 has 'a0' (its HW 2)",
            "t-0: acknowledged 'wrong' at offset 0, ISR replica b2 has 'a0' (its HW 2)"]


def _batch_of(values: list[str], base: int = 0) -> bytes:
    from protocol.records import Record, build_batch

    return build_batch([Record(i, 0, None, v.encode()) for i, v in enumerate(values)], first_timestamp=0,
                       base_offset=base, partition_leader_epoch=0)


def test_the_checker_looks_again_at_an_ack_it_found_above_the_high_watermark_once_a_log_read_on_has_it_below() -> None:
    """After a log grew (the Checker reads on from its last scan), the acks verified below the old high watermark are
    not looked up again, those it found at or above it are: one the log then holds wrongly is caught, as the plain
    path catches it."""
    with _fast_and_plain_checkers() as (sim, tp, checkers, logs, ack, check):
        for offset, value in ((0, "a0"), (2, "a2")):  # a2 at the high watermark
            ack(offset, value)
        assert check() == []
        fast = checkers[0][0]
        scans = {b: fast._verified[(b, tp, 0)][0] for b in sim.brokers}
        for b, log in enumerate(logs):
            log.append_as_follower(_batch_of(["x2" if b == 1 else "a2"], base=2))
            log.update_high_watermark(3)
        assert check() == ["t-0: acknowledged 'a2' at offset 2, ISR replica b1 has 'x2' (its HW 3)"]
        # read on from the last scans (the same values), not read again from the start
        assert all(fast._scans[id(log)].values is scans[b].values for b, log in enumerate(logs))
