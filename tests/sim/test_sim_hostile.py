"""`kactor sim`'s hostile client (sim/hostile.py) and the invariant that coordinators load completely
(sim/coordinator_loads.py), issue #39: the fault keeps every other fault of a seed, the brokers answer the hostile
requests as Kafka 2.6.3 does, and issue #39's defects put back are caught — by the answers, and by the load check
alone when the answers are not looked at."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import sim.faults
from kactor.sim_boot import SimBoot
from protocol.records import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    EndTransactionMarker,
    Record,
    build_batch,
    build_end_txn_marker_batch,
)
from sim import mutations
from sim.coordinator_loads import LogUnreadableError, expected_groups, expected_transactions
from sim.faults import HOSTILE_SHARE, hostile_step_of, schedule
from sim.hostile import HostileChecks
from sim.run import play, run_seed, start_cluster

SEED = 7  # grouped, not transactional, hostile at step 3 of 20 and step 6 of 50; its __transaction_state-0 moves later


def test_the_hostile_fault_keeps_every_other_fault_of_every_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    with_hostile = {seed: (schedule(seed, 50, 3), hostile_step_of(seed, 50)) for seed in range(1, 401)}
    monkeypatch.setattr(sim.faults, "HOSTILE_SHARE", 0.0)
    for seed, (faults, step) in with_hostile.items():
        assert [f for f in faults if f.kind != "hostile"] == schedule(seed, 50, 3), seed
        hostile = [f for f in faults if f.kind == "hostile"]
        assert [f.step for f in hostile] == ([step] if step >= 0 else [])
        if hostile:
            # the step's last fault: the others of its step keep their order
            same_step = [f for f in faults if f.step == hostile[0].step]
            assert same_step[-1] == hostile[0]


def test_the_hostile_fault_falls_on_its_share_of_the_seeds() -> None:
    share = sum(hostile_step_of(seed, 50) >= 0 for seed in range(1, 4001)) / 4000
    assert abs(share - HOSTILE_SHARE) < 0.02
    assert {hostile_step_of(seed, 50) for seed in range(1, 4001)} - {-1} == set(range(50))


def _hostile_notes(events: list[str]) -> dict[str, str]:
    """The last answer of each hostile request, from the event log's notes."""
    out = {}
    for e in events:
        _, _, text = e.partition(" hostile client: ")
        if text and ": " in text and " at b" not in text.rsplit(": ", 1)[1]:
            what, answer = text.rsplit(": ", 1)
            out[what] = answer
    return out


def test_the_brokers_answer_the_hostile_requests_as_kafka_does_and_keep_serving() -> None:
    cluster = start_cluster(SEED, SimBoot())
    try:
        result = play(cluster, SEED, 20)
        answers = _hostile_notes(cluster.sim.events)
        loads = cluster.loads
    finally:
        cluster.close()
    assert result.violations == ()
    assert answers["Produce to __transaction_state-0"] == "INVALID_TOPIC_EXCEPTION"
    assert answers["Produce to __consumer_offsets-0"] == "INVALID_TOPIC_EXCEPTION"
    assert answers["Produce of a batch with a wrong CRC to sim-0"] == "CORRUPT_MESSAGE"
    assert answers["Produce of garbage bytes to sim-0"] == "INVALID_RECORD"
    # Kafka 3.6's transaction verification (KIP-890 part 1): the coordinator knows no such producer for the id
    assert answers["Transactional produce of unknown producer id 1099511627776 to sim-0"] == \
        "INVALID_PRODUCER_ID_MAPPING"
    assert answers["AddPartitionsToTxn"] == ("[('__consumer_offsets-0', 'TOPIC_AUTHORIZATION_FAILED'), "
                                             "('__transaction_state-0', 'TOPIC_AUTHORIZATION_FAILED'), "
                                             "('sim-0', 'OPERATION_NOT_ATTEMPTED')]")
    assert answers["EndTxn"] == "INVALID_TXN_STATE"
    assert loads is not None and loads.loads >= 2 and loads.found == []
    # the producers went on being acknowledged after the hostile requests (at 3.3 s)
    assert result.acks > 20


def test_a_seed_is_deterministic_with_its_hostile_client() -> None:
    assert run_seed(SEED, 20, SimBoot()).event_digest == run_seed(SEED, 20, SimBoot()).event_digest


@pytest.fixture
def answers_not_looked_at(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the load check left to find a poisoned log: the hostile checks see nothing."""
    monkeypatch.setattr(HostileChecks, "check", lambda self: [])
    monkeypatch.setattr(HostileChecks, "check_final", lambda self: [])


@pytest.fixture
def mutation(request: pytest.FixtureRequest) -> Iterator[None]:
    undo = mutations.apply(request.param)
    try:
        yield
    finally:
        undo()


@pytest.mark.parametrize("mutation", ["add-partitions-internal-topics"], indirect=True)
def test_internal_topics_open_to_add_partitions_are_caught_by_the_answers(mutation: None) -> None:
    violations = run_seed(SEED, 50, SimBoot()).violations
    assert violations[0].startswith("hostile AddPartitionsToTxn of __transaction_state-0, __consumer_offsets-0 and "
                                    "sim-0 answered [('__consumer_offsets-0', 'NONE'), ('__transaction_state-0', "
                                    "'NONE'), ('sim-0', 'NONE')], Kafka 2.6.3 answers")
    assert ("__transaction_state-0: b0's log holds a control batch (a transaction marker of producer id 1000) at "
            "offset 3") in violations


@pytest.mark.parametrize("mutation", ["add-partitions-internal-topics"], indirect=True)
def test_a_marker_in_the_transaction_log_fails_the_next_load_and_the_load_check_says_so(
        mutation: None, answers_not_looked_at: None) -> None:
    violations = run_seed(SEED, 50, SimBoot()).violations
    assert violations == ("b1's load of __transaction_state-0 failed at 21233.700 ms: Error loading transactions from "
                          "__transaction_state-0 at offset 3 (coordinator epoch 2): a control batch (a transaction "
                          "marker), which no client can have written since AddPartitionsToTxn refuses internal "
                          "topics",)


@pytest.mark.parametrize("mutation", ["transaction-loader-partial"], indirect=True)
def test_a_loader_installing_part_of_its_partition_is_caught_by_the_load_check(
        mutation: None, answers_not_looked_at: None) -> None:
    violations = run_seed(SEED, 50, SimBoot()).violations
    assert violations == ("b1 loaded __transaction_state-0 at 21233.700 ms (1 transactional ids) past a control batch "
                          "(producer id 1000) at offset 3: a partial cache, where the load must fail",)


# -- the full read the load check compares a load with ---------------------------------------------------------------
class _Segment:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.size = len(data)

    def read(self, pos: int, size: int) -> bytes:
        return self.data[pos:pos + size]


class _Log:
    def __init__(self, *batches: bytes, log_start_offset: int = 0) -> None:
        self.segments = [_Segment(b"".join(batches))]
        self.log_start_offset = log_start_offset


def _marker(producer_id: int, commit: bool, offset: int) -> bytes:
    marker = EndTransactionMarker(CONTROL_COMMIT if commit else CONTROL_ABORT, 0)
    return build_end_txn_marker_batch(producer_id, 0, marker, 0, base_offset=offset)


def _txn_batch(offset: int, txn_id: str, producer_id: int | None, state: int = 0) -> bytes:
    from core.coordinator.transaction.transaction_log import TxnLogValue, key_to_bytes, value_to_bytes

    value = None if producer_id is None else value_to_bytes(TxnLogValue(producer_id, 0, 60000, state, frozenset(),
                                                                        1, 1))
    return build_batch([Record(0, 0, key_to_bytes(txn_id), value)], base_offset=offset)


def test_the_full_read_of_a_transaction_log_keeps_each_ids_last_record_and_refuses_a_marker() -> None:
    log = _Log(_txn_batch(0, "a", 5), _txn_batch(1, "b", 6), _txn_batch(2, "a", 7, state=1), _txn_batch(3, "b", None))
    assert expected_transactions(log) == {"a": (7, 0, "ONGOING")}
    with pytest.raises(LogUnreadableError, match="a control batch .producer id 99. at offset 1"):
        expected_transactions(_Log(_txn_batch(0, "a", 5), _marker(99, True, 1)))


def test_the_full_read_of_an_offsets_log_counts_a_transactions_offsets_once_committed() -> None:
    from core.coordinator.group.message_formats import OffsetAndMetadata, offset_commit_key, offset_commit_value
    from messages.common import TopicPartition

    tp = TopicPartition("sim", 0)

    def commit(offset: int, value: int, producer_id: int = -1) -> bytes:
        record = Record(0, 0, offset_commit_key("g", tp), offset_commit_value(OffsetAndMetadata(value)))
        if producer_id < 0:
            return build_batch([record], base_offset=offset)
        from protocol.records import TRANSACTIONAL_BIT
        return build_batch([record], base_offset=offset, producer_id=producer_id, producer_epoch=0,
                           base_sequence=0, attributes=TRANSACTIONAL_BIT)

    plain = _Log(commit(0, 10))
    assert expected_groups(plain) == {"g": (None, {"sim-0": 10})}
    pending = _Log(commit(0, 10), commit(1, 20, producer_id=7))
    assert expected_groups(pending) == {"g": (None, {"sim-0": 10})}
    committed = _Log(commit(0, 10), commit(1, 20, producer_id=7),
                     _marker(7, True, 2))
    assert expected_groups(committed) == {"g": (None, {"sim-0": 20})}
    aborted = _Log(commit(0, 10), commit(1, 20, producer_id=7), _marker(7, False, 2))
    assert expected_groups(aborted) == {"g": (None, {"sim-0": 10})}


