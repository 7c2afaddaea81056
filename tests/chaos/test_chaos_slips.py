"""`kactor chaos`'s operator slips (kactor/chaos/slips.py, issue #39): drawn without moving any step's operation or
fault, and judged as Kafka 2.6.3 refuses them (tests/cluster/test_cluster_chaos_slips.py runs them on a real
broker)."""

from __future__ import annotations

import pytest

import kactor.chaos.schedule
from kactor.chaos.schedule import Step, make_schedule
from kactor.chaos.slips import SLIP_PROBABILITY, SlipOutcome, judge, refusal, slip_args

DIR = "/data/broker-0"


def test_slips_keep_every_steps_operation_and_fault(monkeypatch: pytest.MonkeyPatch) -> None:
    with_slips = {seed: make_schedule(seed, 25, 3, 3) for seed in range(60)}
    monkeypatch.setattr(kactor.chaos.schedule, "SLIP_PROBABILITY", 0.0)
    for seed, steps in with_slips.items():
        without = make_schedule(seed, 25, 3, 3)
        assert [(s.op, s.topic, s.args, s.fault, s.targets, s.hold_s) for s in steps] == \
            [(s.op, s.topic, s.args, s.fault, s.targets, s.hold_s) for s in without]
        assert all(s.slip is None for s in without)
        assert all(s.fault is None for s in steps if s.slip is not None)  # a slip only on a step without a fault


def test_slips_fall_on_their_share_of_the_steps_without_a_fault() -> None:
    steps = [s for seed in range(200) for s in make_schedule(seed, 25, 3) if s.fault is None]
    share = sum(s.slip is not None for s in steps) / len(steps)
    assert abs(share - SLIP_PROBABILITY) < 0.05
    assert {s.slip for s in steps} == {None, "second-process", "other-dir"}
    assert {s.slip_target for s in steps if s.slip} == {0, 1, 2}


def test_a_slip_is_described_with_its_step() -> None:
    assert Step(4, "preferred", "t1", slip="other-dir", slip_target=2).describe() == \
        "preferred t1; other-dir on broker 2's log dir"


def test_a_slips_command_line_overrides_the_live_brokers_listener_metrics_port_and_for_other_dir_its_id() -> None:
    base = ["python", "-m", "kactor", "broker", "--override", "broker.id=1", "--override", "log.dirs=/d/broker-1"]
    assert slip_args(base, "second-process", 1, "PLAINTEXT://127.0.0.1:5", 6)[len(base):] == \
        ["--override", "listeners=PLAINTEXT://127.0.0.1:5", "--override", "kactor.metrics.port=6"]
    assert slip_args(base, "other-dir", 1, "PLAINTEXT://127.0.0.1:5", None)[len(base):] == \
        ["--override", "listeners=PLAINTEXT://127.0.0.1:5", "--override", "broker.id=101"]


def _outcome(kind: str, code: int | None, output: str, registered: bool = False, alive: bool = True) -> SlipOutcome:
    return SlipOutcome(kind, 0, code, output, registered, alive)


def test_a_slip_refused_as_kafka_refuses_it_is_no_violation() -> None:
    lock = ("ERROR Fatal error during KafkaServer startup: org.apache.kafka.common.KafkaException: Failed to acquire "
            f"lock on file .lock in {DIR}. A Kafka instance in another process or thread is using this directory.")
    broker_id = ("ERROR Fatal error during KafkaServer startup: kafka.common.InconsistentBrokerIdException: "
                 "Configured broker.id 100 doesn't match stored broker.id 0 in meta.properties.")
    assert judge(_outcome("second-process", 1, lock), DIR) == []
    assert judge(_outcome("other-dir", 1, broker_id), DIR) == []
    assert refusal("other-dir", 0, DIR) in broker_id


def test_a_slip_not_refused_or_refused_otherwise_is_a_violation() -> None:
    assert [v.detail for v in judge(_outcome("second-process", None, "started"), DIR)] == [
        f"second-process on broker 0's log dir {DIR}: still running after 60 s (killed): not refused"]
    assert [v.detail for v in judge(_outcome("other-dir", 0, ""), DIR)] == [
        f"other-dir on broker 0's log dir {DIR}: exited 0, not refused"]
    found = judge(_outcome("second-process", 1, "Address already in use", registered=True, alive=False), DIR)
    assert [v.kind for v in found] == ["operator"] * 3
    assert "without Kafka's refusal" in found[0].detail and found[0].detail.endswith("Address already in use")
    assert found[1].detail.endswith("registered broker 0 in ZooKeeper")
    assert found[2].detail.endswith("the live broker 0 exited meanwhile")


def test_a_load_failed_at_a_batch_it_could_not_pass_is_a_violation_a_failed_read_is_not() -> None:
    from kactor.chaos.loads import failed_loads

    lines = [
        "2026-11-27 ERROR broker-1 [kactor.coordinator] Error loading transactions from __transaction_state-0 at "
        "offset 3 (coordinator epoch 2): a control batch (a transaction marker), which no client can have written "
        "since AddPartitionsToTxn refuses internal topics. Nothing of the partition is loaded: its transactional ids "
        "answer COORDINATOR_LOAD_IN_PROGRESS until it is loaded again at its next election",
        "2026-11-27 ERROR broker-1 [kactor.coordinator] Error loading offsets from __consumer_offsets-4 at offset 17: "
        "reading failed: KAFKA_STORAGE_ERROR. Nothing of the partition is loaded: its groups answer "
        "COORDINATOR_LOAD_IN_PROGRESS until it is loaded again at its next election",
        "2026-11-27 INFO broker-1 [kactor.coordinator] Finished loading 1 transaction metadata from "
        "__transaction_state-0",
    ]
    assert [(v.kind, v.detail) for v in failed_loads(1, lines)] == [
        ("load", "broker 1's load of __transaction_state-0 failed at offset 3: a control batch (a transaction marker), "
                 "which no client can have written since AddPartitionsToTxn refuses internal topics")]


def _hostile_client(answers: dict[int, dict]):  # noqa: ANN202
    from kactor.chaos.hostile import ChaosHostileClient

    client = ChaosHostileClient(3, lambda: {0: ("127.0.0.1", 1)}, lambda t, p: ("127.0.0.1", 1),
                                lambda t: True, ("t0", 0), bound_s=1.0)
    client._ask = lambda address, api_key, version, body: answers[api_key]  # type: ignore[method-assign]
    return client


def _add_answer(code: int) -> dict:
    return {"results_by_topic_v3_and_below": [{"name": t, "results_by_partition": [
        {"partition_index": 0, "partition_error_code": code}]} for t in ("__transaction_state", "__consumer_offsets")]}


def _produce_answer(code: int) -> dict:
    return {"responses": [{"partition_responses": [{"error_code": code}]}]}


def test_the_chaos_hostile_client_holds_the_answers_to_kafkas() -> None:
    coordinator = {"error_code": 0, "host": "127.0.0.1", "port": 1}
    init = {"error_code": 0, "producer_id": 7, "producer_epoch": 0}
    kafka = _hostile_client({10: coordinator, 22: init, 24: _add_answer(29), 26: {"error_code": 48},
                             0: _produce_answer(17)})
    kafka.run()
    # the internal produces are 17 as expected; the data partition's corrupt and garbage batches got 17 here too
    assert [v.detail for v in kafka.violations] == [
        "Produce of a batch with a wrong CRC to t0-0 answered 17, Kafka 2.6.3 answers 2",
        "Produce of garbage bytes to t0-0 answered 17, Kafka 2.6.3 answers 87"]
    poisoned = _hostile_client({10: coordinator, 22: init, 24: _add_answer(0), 26: {"error_code": 0},
                                0: _produce_answer(0)})
    poisoned.run()
    assert [v.kind for v in poisoned.violations] == ["hostile"] * 6
    assert poisoned.violations[0].detail == (
        "AddPartitionsToTxn of __transaction_state-0 and __consumer_offsets-0 answered [('__consumer_offsets-0', 0), "
        "('__transaction_state-0', 0)], Kafka 2.6.3 answers [('__consumer_offsets-0', 29), ('__transaction_state-0', "
        "29)]")


def test_the_chaos_hostile_client_holds_nothing_against_a_broker_it_could_not_reach() -> None:
    unreachable = _hostile_client({})
    unreachable._ask = lambda address, api_key, version, body: None  # type: ignore[method-assign]
    unreachable.bound_s = 0.3
    unreachable.run()
    assert unreachable.violations == []
    assert unreachable.notes[0].startswith("InitProducerId: no definitive answer within")
