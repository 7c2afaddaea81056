"""kactor chaos's Jepsen-style transaction check (issue #40): the workload's records turned into sim/txn_checker.py's
History (kactor/chaos/txn_check.to_history), the runner's path from a History to the seed's violations, table and
replay command, the seed lines and summary that show them, and the connection-delay draws (pure, no cluster)."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from kactor.chaos import txn_check as tc
from kactor.chaos.delay_proxy import delay_draws
from kactor.chaos.history import Violation
from kactor.chaos.report import seed_lines, summary_lines
from kactor.chaos.runner import ChaosConfig, ChaosRun, SeedResult
from kactor.chaos.schedule import make_schedule
from kactor.chaos.txn_check import ABANDONED, ABORT_ACKED, COMMIT_ACKED, OPEN, FinalRead, TxnRecord, to_history
from sim.txn_checker import ABORTED, ABORTED_READ, COMMITTED, OFFSETS, UNKNOWN, Entry, OffsetRead, StableSample, check

P0, P1 = tc.partition_name(0), tc.partition_name(1)
KEY = tc.group_key(tc.group_of(5, 0))


def _record(number: int, end: str, commit_asked: bool, writes: tuple[tuple[str, str], ...],
            offsets: tuple[tuple[str, int], ...] = ()) -> TxnRecord:
    return TxnRecord("p0", number, list(writes), list(offsets), commit_asked, end)


def test_outcomes_are_the_checkers():
    # committed only on an acknowledged commit; aborted on an acknowledged abort, or abandoned / left open before a
    # commit was asked; unknown when a commit was asked and not acknowledged (fatal error, timeouts, still open)
    assert tc.outcome(_record(1, COMMIT_ACKED, True, ())) == COMMITTED
    assert tc.outcome(_record(1, ABORT_ACKED, False, ())) == ABORTED
    assert tc.outcome(_record(1, ABORT_ACKED, True, ())) == ABORTED  # a commit failed abortable, the abort acked
    assert tc.outcome(_record(1, ABANDONED, False, ())) == ABORTED
    assert tc.outcome(_record(1, OPEN, False, ())) == ABORTED
    assert tc.outcome(_record(1, ABANDONED, True, ())) == UNKNOWN
    assert tc.outcome(_record(1, OPEN, True, ())) == UNKNOWN


def test_to_history_carries_writes_outcomes_reads_positions_and_samples():
    records = [_record(1, COMMIT_ACKED, True, ((P0, "v1"), (P1, "v2")), ((KEY, 1),)),
               _record(2, ABORT_ACKED, False, ((P0, "v3"),)),
               _record(3, OPEN, False, ())]  # begun, nothing written: no transaction of the history
    rc = FinalRead((Entry(P0, 0, "v1"), Entry(P1, 0, "v2")), {P0: 3, P1: 1})
    ru = FinalRead((Entry(P0, 0, "v1"), Entry(P0, 1, "v3"), Entry(P1, 0, "v2")), {P0: 3, P1: 1}, {P0: 3, P1: 2})
    reads = [OffsetRead(KEY, -1), OffsetRead(KEY, 1, final=True)]
    samples = [StableSample(100.0, P0, 0, 2, None), StableSample(600.0, P0, 3, 3, 50.0)]
    h = to_history(records, rc, ru, reads, samples, [("g/x-0", "_TIMED_OUT")], stall_bound_ms=25000.0)
    assert [(t.name, t.writes, t.outcome, t.offsets) for t in h.txns] == [
        ("p0:T1", ((P0, "v1"), (P1, "v2")), COMMITTED, ((KEY, 1),)), ("p0:T2", ((P0, "v3"),), ABORTED, ())]
    assert h.committed == rc.entries and h.uncommitted == ru.entries
    # read_committed's position is where it read to; complete where that is the high watermark (P1 holds an open
    # transaction's record at offset 1: not complete, a value past its position not judged)
    assert h.positions == {P0: 3, P1: 1}
    assert h.complete == frozenset({P0})
    assert h.offset_reads == tuple(reads) and h.samples == tuple(samples)
    assert h.stall_bound_ms == 25000.0 and h.unsettled == (("g/x-0", "_TIMED_OUT"),)
    # an offset never stable at the end is the checker's (offsets not atomic); nothing else is wrong here
    assert [(a.kind, a.where) for a in check(h)] == [(OFFSETS, "g/x-0")]
    assert tc.summary(records) == {COMMITTED: 1, ABORTED: 1, UNKNOWN: 0}


def test_an_aborted_value_read_committed_is_an_anomaly_of_the_converted_history():
    records = [_record(1, ABORT_ACKED, False, ((P0, "v1"), (P1, "v2"))), _record(2, COMMIT_ACKED, True, ((P0, "v3"),))]
    rc = FinalRead((Entry(P0, 0, "v1"), Entry(P0, 1, "v3")), {P0: 3, P1: 1})
    ru = FinalRead((Entry(P0, 0, "v1"), Entry(P0, 1, "v3"), Entry(P1, 0, "v2")), {P0: 3, P1: 1}, {P0: 3, P1: 1})
    found = check(to_history(records, rc, ru, [], []))
    assert [(a.kind, a.where, a.txns) for a in found] == [(ABORTED_READ, f"{P0}@0", ("p0:T1 (aborted)",))]


class _Finished:
    """A workload that already ran: `finish` hands over its History."""

    def __init__(self, records: list[TxnRecord], rc: FinalRead, ru: FinalRead) -> None:
        self.records, self.rc, self.ru = records, rc, ru
        self.errors: list[str] = []
        self.stuck: list[str] = []

    def finish(self, delivered=tuple):  # noqa: ANN001, ANN201 - as TxnCheckWorkload.finish: the History
        return to_history(self.records, self.rc, self.ru, [], [], delivered=delivered())


def test_the_runner_reports_an_anomaly_as_a_violation_with_its_table_and_replay(tmp_path: Path):
    run = ChaosRun(ChaosConfig(seed=11, steps=25, zk_servers=3), str(tmp_path / "seed-11"))
    (tmp_path / "seed-11").mkdir()
    records = [_record(1, ABORT_ACKED, False, ((P0, "v1"),)), _record(2, COMMIT_ACKED, True, ((P1, "v2"),))]
    rc = FinalRead((Entry(P0, 0, "v1"), Entry(P1, 0, "v2")), {P0: 2, P1: 1})
    ru = FinalRead((Entry(P0, 0, "v1"), Entry(P1, 0, "v2")), {P0: 2, P1: 1}, {P0: 2, P1: 1})
    run.check = _Finished(records, rc, ru)  # type: ignore[assignment]
    violations = run._check_anomalies()
    assert [v.kind for v in violations] == ["anomaly"]
    assert violations[0].detail.startswith(f"aborted read: {P0}@0: v1 of an aborted transaction")
    table = run._anomaly_table
    assert table is not None and table.splitlines()[0] == "seed 11: 1 transaction anomalies"
    assert "aborted read" in table and "p0:T1 (aborted)" in table
    assert table.splitlines()[-1] == \
        "  replay: kactor chaos --seeds 11 --steps 25 --brokers 3 --zookeeper-ensemble 3 --keep"
    assert run._txn_outcomes == {COMMITTED: 1, ABORTED: 1, UNKNOWN: 0}
    assert (tmp_path / "seed-11" / "txn-history.json").exists()

    # the seed's lines show the table once, the seed's replay line after it; the summary counts it
    result = SeedResult(11, 25, {}, 10, tuple(violations), 50.0, "/w/seed-11", None, 1.0, 7.5,
                        run._txn_outcomes, table)
    lines = seed_lines(result, 3, 3)
    assert "  anomalies 1  " in lines[0] and lines[0].startswith("seed 11   FAIL")
    assert lines[1:3] == table.splitlines()[:2]
    assert not any(line.startswith("  anomaly: ") for line in lines)
    assert lines[-1] == "  replay: kactor chaos --seeds 11 --steps 25 --brokers 3 --zookeeper-ensemble 3 --keep"
    assert sum(line.startswith("  replay: ") for line in lines) == 1
    clean = SeedResult(12, 25, {}, 10, (), 50.0, None, None, 1.0, 7.5, {COMMITTED: 30, ABORTED: 7, UNKNOWN: 1},
                       delays=4)
    summary = summary_lines([result, clean], 100.0)
    assert summary[0] == "transactions checked (sim/txn_checker.py) on 2 seeds: 31 committed, 8 aborted, 1 unknown, " \
                         "4 of their connections held past their request timeout; 1 anomalies (aborted read 1)"
    assert len(summary) == 6 and summary[1].startswith("2 seeds x 25 steps: ")  # the five lines of before after it


def test_a_clean_history_is_no_violation(tmp_path: Path):
    run = ChaosRun(ChaosConfig(seed=3, steps=5), str(tmp_path / "seed-3"))
    (tmp_path / "seed-3").mkdir()
    records = [_record(1, COMMIT_ACKED, True, ((P0, "v1"),))]
    read = FinalRead((Entry(P0, 0, "v1"),), {P0: 2}, {P0: 2})
    run.check = _Finished(records, read, read)  # type: ignore[assignment]
    assert run._check_anomalies() == []
    assert run._anomaly_table is None
    line = seed_lines(SeedResult(3, 5, {}, 1, (), 9.0, None, None, 0.1, 7.5, run._txn_outcomes), 3, 1)[0]
    assert "  txn 0  anomalies 0  gap " in line
    # a run without the checker shows no anomalies count (the lines of before)
    assert "anomalies" not in seed_lines(SeedResult(3, 5, {}, 1, (Violation("txn", "x"),), 9.0, None), 3, 1)[0]


def test_delay_draws_are_pure_and_leave_the_schedule_alone():
    assert delay_draws(7, 25, 3) == delay_draws(7, 25, 3)
    assert delay_draws(7, 10, 3) == delay_draws(7, 25, 3)[:10]  # a shorter run is a prefix, as the schedule's
    draws = [d for seed in range(1, 21) for d in delay_draws(seed, 25, 3) if d is not None]
    assert 150 < len(draws) < 350  # about one step in two
    assert all(0 <= b < 3 and 6.0 <= hold <= 10.0 and 0 <= pick < 1 for b, hold, pick in draws)
    # the hold outlasts the checked producers' request timeout: the client gives up and retries elsewhere
    assert min(hold for _, hold, _ in draws) * 1000 > tc.REQUEST_TIMEOUT_MS
    assert make_schedule(7, 25, 3, 1) == make_schedule(7, 25, 3, 1)


def test_an_end_txn_the_client_gave_up_on_landing_in_its_next_transaction_is_known(tmp_path: Path):
    """Chaos seed 2 (`3c1bfb5`): T40's EndTxn(commit), held by a proxy past the client's timeout, lands in T41 and
    commits its first value; T41 is then aborted and read_committed reads that value. The proxy names the EndTxn
    it delivered after the client left; the runner marks the anomaly known (KIP-890 part 2) and the seed is clean.
    An EndTxn that landed before the transaction began, or on a connection of an older producer instance (another
    epoch), explains nothing."""
    from kactor.chaos.delay_proxy import StrayRequest
    from kactor.chaos.txn_check import delivered_end_txns, stray_end_txns

    t40 = _record(40, COMMIT_ACKED, True, ((P1, "v1"),))
    t41 = _record(41, ABORT_ACKED, False, ((P0, "v2"),))
    t40.instance_ms = t41.instance_ms = 1000.0
    t40.began_ms, t40.ended_ms, t41.began_ms, t41.ended_ms = 10000.0, 16000.0, 16100.0, 20000.0
    t0 = 500.0  # the run's start on the proxies' clock
    stray = StrayRequest("kactor-chaos-check-p0", "EndTxn", t0 + 2.0, t0 + 15.5, t0 + 18.0, "kactor-chaos-check-11-0",
                         1000, 0, True)
    (delivered,) = delivered_end_txns([stray, attrs.evolve(stray, api="Produce")], t0)
    assert delivered.client_gone_ms == 15500.0 and delivered.delivered_ms == 18000.0
    assert [(s.into, s.at_ms) for s in stray_end_txns([t40, t41], [delivered])] == [("p0:T41", 18000.0)]
    assert stray_end_txns([t40, t41], [attrs.evolve(delivered, delivered_ms=16050.0)]) == ()  # before T41 began
    assert stray_end_txns([t40, t41], [attrs.evolve(delivered, opened_ms=900.0)]) == ()  # an older instance's

    run = ChaosRun(ChaosConfig(seed=2, steps=25, zk_servers=3), str(tmp_path / "seed-2"))
    (tmp_path / "seed-2").mkdir()
    run._t0 = t0
    run.proxies = {1: type("P", (), {"stray_requests": [stray], "strays": 1})()}  # type: ignore[dict-item]
    read = FinalRead((Entry(P0, 0, "v2"), Entry(P1, 0, "v1")), {P0: 2, P1: 2}, {P0: 2, P1: 2})
    run.check = _Finished([t40, t41], read, read)  # type: ignore[assignment]
    assert run._check_anomalies() == []
    assert run._known_anomalies == 1
    table = run._anomaly_table
    assert table is not None and "aborted read" in table and "(known, KIP-890 part 2: an EndTxn p0 sent before it " \
        "and gave up on landed in p0:T41 at 18.0 s" in table
    result = SeedResult(2, 25, {}, 10, (), 50.0, None, None, 1.0, 7.5, run._txn_outcomes, table,
                        known_anomalies=1)
    assert result.ok and "  anomalies 0 (+1 known)  " in seed_lines(result, 3, 3)[0]
    assert summary_lines([result], 50.0)[0].endswith("; 1 known for 2.6 clients (KIP-890 part 2: an EndTxn the "
                                                     "client gave up on landing in its next transaction) in seeds 2")


def test_the_final_committed_offsets_are_asked_again_while_the_coordinator_moves(monkeypatch):
    """Chaos seed 11: librdkafka's committed() raised NOT_COORDINATOR (the group's coordinator elected as the faults
    ended); the check asks again until its timeout, and raises what is no coordinator move at once."""
    import confluent_kafka

    from kactor.chaos import txn_workload as tw

    answers = [confluent_kafka.KafkaError.NOT_COORDINATOR, confluent_kafka.KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
               None]

    class Consumer:
        def __init__(self, config: dict) -> None:
            self.asked = 0

        def committed(self, partitions: list, timeout: float) -> list:
            error = answers.pop(0)
            if error is not None:
                raise confluent_kafka.KafkaException(confluent_kafka.KafkaError(error))
            return [confluent_kafka.TopicPartition(tw.INPUT, 0, 7), confluent_kafka.TopicPartition(tw.INPUT, 1, -1001)]

        def close(self) -> None:
            pass

    monkeypatch.setattr(confluent_kafka, "Consumer", Consumer)
    monkeypatch.setattr(tw.time, "sleep", lambda s: None)
    assert tw.committed_offsets("127.0.0.1:1") == {0: 7}
    assert answers == []

    answers[:] = [confluent_kafka.KafkaError.GROUP_AUTHORIZATION_FAILED, None]
    with pytest.raises(confluent_kafka.KafkaException) as raised:
        tw.committed_offsets("127.0.0.1:1")
    assert raised.value.args[0].code() == confluent_kafka.KafkaError.GROUP_AUTHORIZATION_FAILED
    assert answers == [None]  # not asked again


def test_a_producer_left_inside_librdkafka_is_waited_for_once(monkeypatch: pytest.MonkeyPatch):
    """The runner stops the producers, then `finish` asks again: the producer the first stop left there (stuck) is
    not joined again; one that ended meanwhile is joined as before."""
    joined: list[tuple[str, float]] = []

    class Thread:
        ident = None  # no frame of its own: where it waits reads "ended"

        def __init__(self, name: str, alive: bool) -> None:
            self.name, self.alive = name, alive

        def join(self, timeout: float) -> None:
            joined.append((self.name, timeout))

        def is_alive(self) -> bool:
            return self.alive

    w = tc.TxnCheckWorkload("b:1", "b:1", 6, lambda: 0.0, lambda: None)
    w._threads = [Thread("p0", False), Thread("p1", True)]  # type: ignore[list-item]
    clock = iter([100.0, 100.0, 100.0, 200.0, 200.0])
    monkeypatch.setattr(tc.time, "monotonic", lambda: next(clock))
    w.stop_producers(join_s=45.0)
    assert w.stuck == ["p1"] and joined == [("p0", 45.0), ("p1", 45.0)]
    assert w.errors == ["0.0s p1 still inside librdkafka after 45 s: ended"]
    joined.clear()
    w.stop_producers(join_s=45.0)
    assert w.stuck == ["p1"] and joined == [("p0", 45.0)]

