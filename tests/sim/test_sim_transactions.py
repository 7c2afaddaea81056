"""`kactor sim`'s transactions (sim/transactions.py): a transactional producer and a read_committed consumer against
the real transaction coordinator, markers and last stable offset, and their invariants (`TxnChecks`), each shown to
fail when its property is broken."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import attrs
import pytest

import sim.run as sim_run
from core.broker.log import Log
from core.broker.replica_manager import ReplicaManager
from kactor.sim_boot import SimBoot
from messages.common import TopicPartition
from sim.client import SimClient, zk_partition_state
from sim.invariants import Checker
from sim.run import Cluster, start_cluster
from sim.transactions import (
    ABORTED,
    COMMITTED,
    UNKNOWN,
    Transactions,
    Txn,
    TxnChecks,
    TxnProducer,
    TxnRead,
    transactional,
)

P0, P1 = TopicPartition("sim", 0), TopicPartition("sim", 1)
TXN_STATE = TopicPartition("__transaction_state", 0)



@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[Cluster]:
    monkeypatch.setattr(sim_run, "transactional", lambda seed: True)
    c = start_cluster(1, SimBoot())
    try:
        yield c
    finally:
        c.close()


def _run(c: Cluster, steps: int) -> tuple[Transactions, Checker, list[str]]:
    txns = Transactions(c.sim)
    parts = sorted(c.assignment)
    checker = Checker(c.sim, SimClient(c.sim), parts, c.assignment, txns=txns)
    found: list[str] = []
    for step in range(steps):
        txns.step(step, parts)
        c.sim.run_for(1000.0)
        found += [v for v in checker.check() if v not in found]
    return txns, checker, found


def _finish(c: Cluster, txns: Transactions, checker: Checker) -> list[str]:
    c.sim.run_for(3000.0)  # the last transaction ends
    return checker.check_final(txns.read_to_end(sorted(c.assignment), 5000.0))


def test_the_transaction_state_topic_is_created_small_and_led(cluster: Cluster) -> None:
    state = zk_partition_state(cluster.sim, TXN_STATE)
    assert state is not None and state.leader >= 0 and sorted(state.isr) == [0, 1, 2]
    assert zk_partition_state(cluster.sim, TopicPartition("__transaction_state", 1)) is None


def test_committed_transactions_are_read_committed_once_in_order_and_aborted_ones_never(cluster: Cluster) -> None:
    txns, checker, found = _run(cluster, 21)
    assert found == []
    assert _finish(cluster, txns, checker) == []
    producer = txns.producer
    outcomes = [t.outcome for t in producer.txns]
    assert COMMITTED in outcomes and ABORTED in outcomes, outcomes
    read = [r.value for r in txns.consumer.reads]
    for t in producer.txns:
        for v in t.records.values():
            assert read.count(v) == (1 if t.outcome == COMMITTED else 0), (t, read)
    assert ("FindCoordinator", producer.transactional_id, "NONE") in producer.answers
    assert ("InitProducerId", producer.transactional_id, "NONE") in producer.answers


def test_a_broker_that_forgets_its_aborted_transactions_lets_the_consumer_read_one(
        cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Log, "collect_aborted_transactions", lambda self, start, upper: [])
    txns, checker, found = _run(cluster, 21)  # transaction 4 (steps 20-21) is aborted
    final = _finish(cluster, txns, checker)
    assert any("a record of aborted transaction 4" in v for v in final), final


def test_a_broker_that_forgets_an_abort_marker_leaves_a_transaction_hanging(
        cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    logging.getLogger("kactor.coordinator").setLevel(logging.CRITICAL)  # its marker retries, every 100 ms
    handle = ReplicaManager.handle_write_txn_markers

    def forgetful(self: Any, request: Any, now_ms: float, reply_to: str = "") -> Any:
        kept = tuple(m for m in request.markers if m.committed or m.partitions[0].topic != "sim")
        return handle(self, attrs.evolve(request, markers=kept), now_ms, reply_to)

    monkeypatch.setattr(ReplicaManager, "handle_write_txn_markers", forgetful)
    txns, checker, found = _run(cluster, 26)  # transaction 4 is aborted, 5 comes after it
    final = _finish(cluster, txns, checker)
    assert any("a transaction left hanging" in v for v in final), final
    assert any("did not read every partition to its end" in v for v in final), final
    # (the coordinator, answered for no abort marker, retries it for ever: the next transaction cannot begin)
    assert any("still open at the end" in v for v in final), final


def test_a_last_stable_offset_past_the_high_watermark_is_caught(
        cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Log, "last_stable_offset", property(lambda self: self.high_watermark + 1))
    _, _, found = _run(cluster, 1)
    assert any("past its high watermark" in v for v in found), found


class _Fake:
    """A Transactions stand-in whose producer and consumer are plain lists."""

    def __init__(self, txns: list[Txn], reads: list[TxnRead], answers: list[tuple[str, str, str]] = ()) -> None:
        self.sim = type("S", (), {"brokers": {}})()
        self.producer = type("P", (), {"txns": txns, "answers": list(answers), "txn": None, "phase": ""})()
        self.consumer = type("C", (), {"reads": reads, "answers": [], "positions": {}, "stable": {}})()


def _read(tp: TopicPartition, offset: int, value: str | None, lso: int = 100) -> TxnRead:
    return TxnRead(tp, offset, value, lso, lso, 0, 0.0)


def _none(b: int, tp: TopicPartition) -> None:
    return None


def test_reads_above_the_lso_a_control_record_an_aborted_record_and_an_unknown_server_error_are_caught() -> None:
    txns = [Txn(1, 7, 0, False, {P0: "t1-1"}, ABORTED)]
    reads = [_read(P0, 5, "s1-1", lso=5), _read(P0, 6, "\x00\x00\x00\x00\x00\x00"), _read(P0, 7, "t1-1")]
    checks = TxnChecks(_Fake(txns, reads, [("EndTxn", "1", "UNKNOWN_SERVER_ERROR")]), [P0])  # type: ignore[arg-type]
    found = checks.check(_none)
    assert any("at or above the last stable offset 5" in v for v in found), found
    assert any("no producer's record" in v for v in found), found
    assert any("a record of aborted transaction 1" in v for v in found), found
    assert any("answered UNKNOWN_SERVER_ERROR" in v for v in found), found
    clean = TxnChecks(_Fake([Txn(1, 7, 0, True, {P0: "t1-1"}, COMMITTED)], [_read(P0, 3, "t1-1")]),  # type: ignore
                      [P0])
    assert clean.check(_none) == []


def test_at_the_end_a_committed_record_missing_or_read_twice_out_of_order_or_a_half_read_transaction_is_caught(
        ) -> None:
    txns = [Txn(1, 7, 0, True, {P0: "t1-1", P1: "t1-2"}, COMMITTED),
            Txn(2, 7, 0, True, {P0: "t1-3", P1: "t1-4"}, COMMITTED),
            Txn(3, 7, 0, True, {P0: "t1-5", P1: "t1-6"}, UNKNOWN)]
    reads = [_read(P0, 1, "t1-3"), _read(P0, 2, "t1-1"), _read(P1, 1, "t1-4"), _read(P1, 2, "t1-4"),
             _read(P0, 3, "t1-5")]
    checks = TxnChecks(_Fake(txns, reads), [P0, P1])  # type: ignore[arg-type]
    final = checks.check_final(_none, {}, True)
    assert "committed transaction 1's 't1-2' read committed 0 times, not once" in final
    assert "committed transaction 2's 't1-4' read committed 2 times, not once" in final
    assert any("sim-0: transactional records read committed out of order" in v for v in final), final
    assert any("transaction 3 (outcome unknown) read in part" in v for v in final), final
    whole = [_read(P0, 1, "t1-1"), _read(P1, 1, "t1-2"), _read(P0, 2, "t1-3"), _read(P1, 2, "t1-4")]
    assert TxnChecks(_Fake(txns, whole), [P0, P1]).check_final(_none, {}, True) == []  # type: ignore[arg-type]


def test_a_seed_with_transactions_and_faults_runs_clean() -> None:
    seed = 15  # a transactional seed (TXN_SHARE): 15 is the first of 1-100
    assert transactional(seed)
    result = sim_run.run_seed(seed, 40, SimBoot())
    assert result.violations == ()


def test_a_producer_fenced_by_another_instance_of_its_transactional_id_has_its_transaction_aborted(
        cluster: Cluster) -> None:
    """A second instance of the application (the same transactional id) calls InitProducerId while the first has a
    transaction open: the coordinator aborts it and bumps the epoch, the first is refused as fenced
    (INVALID_PRODUCER_EPOCH), abandons the transaction and starts again; nothing of it is read committed."""
    txns = Transactions(cluster.sim)
    parts = sorted(cluster.assignment)
    checker = Checker(cluster.sim, SimClient(cluster.sim), parts, cluster.assignment, txns=txns)
    other = TxnProducer(cluster.sim)
    assert other.transactional_id == txns.producer.transactional_id
    for step in range(16):
        txns.step(step, parts)
        if step == 5:  # transaction 1 has begun: the other's InitProducerId once its records are being produced
            while txns.producer.phase != "produce":
                cluster.sim.run_for(1.0)
            other.coordinator = txns.producer.coordinator
            other.step(step, [])
        cluster.sim.run_for(1000.0)
        assert checker.check() == []
    first = txns.producer.txns[0]
    # its EndTxn(commit) refused: abandoned, aborted (each step's check: none of its records read committed)
    assert first.outcome == ABORTED and first.commit, first
    assert any(error == "INVALID_PRODUCER_EPOCH" for _, _, error in txns.producer.answers), txns.producer.answers
    assert txns.producer.epoch > 0 and COMMITTED in [t.outcome for t in txns.producer.txns[1:]]
    assert _finish(cluster, txns, checker) == []
    assert not {v for v in first.records.values()} & {r.value for r in txns.consumer.reads}
