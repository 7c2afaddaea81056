"""`kactor sim`'s clients beside the acks=all producer (sim/clients.py) and their invariants (sim/invariants.py's
ClientChecks): an idempotent producer that re-sends the same batch until it is acknowledged, acks=1 and acks=0
producers, a consumer; each invariant shown to fail when its property is broken."""

from __future__ import annotations

import pytest

from kactor.sim_boot import SimBoot
from messages.common import TopicPartition
from protocol.records import Record, build_batch
from sim.client import SimClient
from sim.clients import Clients, InFlight, Read
from sim.invariants import Checker, ClientChecks, duplicates
from sim.run import Cluster, run_seed

TP = TopicPartition("sim", 0)




def _checker(c: Cluster) -> tuple[Clients, Checker]:
    clients = Clients(c.sim)
    return clients, Checker(c.sim, SimClient(c.sim), sorted(c.assignment), c.assignment, clients=clients)


def _steps(c: Cluster, clients: Clients, n: int, first: int = 0) -> None:
    for step in range(first, first + n):
        clients.step(step, sorted(c.assignment))
        c.sim.run_for(1000.0)


def test_the_idempotent_producer_gets_a_producer_id_and_its_records_are_acknowledged_in_sequence(
        cluster: Cluster) -> None:
    clients, checker = _checker(cluster)
    _steps(cluster, clients, 6)
    producer = clients.idempotent
    assert producer.answers[0] == ("InitProducerId", "", "NONE")  # from a transaction coordinator, at step 0
    assert producer.producer_id >= 0 and producer.epoch == 0
    # steps 1-5: a batch a step to the partitions in turn, each acknowledged within its step
    assert [(a.value, a.tp.partition) for a in producer.acks] == [
        ("i1-1", 1), ("i1-2", 0), ("i1-3", 1), ("i1-4", 0), ("i1-5", 1)]
    assert producer.sequences == {TopicPartition("sim", 1): 3, TP: 2}
    assert checker.check() == []


def test_a_batch_sent_again_after_its_answer_was_lost_is_not_appended_twice(cluster: Cluster) -> None:
    """The broker's producer state answers a re-sent batch (same producer id, epoch, sequence) with the offset it
    was appended at, without appending it again: what the idempotent producer's retries count on."""
    clients, checker = _checker(cluster)
    _steps(cluster, clients, 3)
    producer = clients.idempotent
    ack = next(a for a in producer.acks if a.tp == TP)
    again = InFlight(TP, ack.value, producer.producer_id, 0,
                     build_batch([Record(0, 0, None, ack.value.encode())], producer_id=producer.producer_id,
                                 producer_epoch=producer.epoch, base_sequence=0))
    producer.in_flight[TP] = again
    acked = len(producer.acks)
    producer._send(again)
    cluster.sim.run_for(1000.0)
    assert producer.answers[-1] == ("Produce", ack.value, "NONE")
    assert len(producer.acks) == acked + 1
    assert producer.acks[-1].value == ack.value and producer.acks[-1].offset == ack.offset
    assert producer.resent == 0 and TP not in producer.in_flight
    assert checker.check() == []


def test_a_producer_that_resends_with_a_new_sequence_creates_a_duplicate_the_invariant_reports(
        cluster: Cluster) -> None:
    """The property broken on purpose: the same record re-sent as the next sequence is a new batch to the broker,
    appended again; the no-duplicate invariant names the value and its two offsets."""
    clients, checker = _checker(cluster)
    _steps(cluster, clients, 3)
    producer = clients.idempotent
    ack = next(a for a in producer.acks if a.tp == TP)
    seq = producer.sequences[TP]
    again = InFlight(TP, ack.value, producer.producer_id, seq,
                     build_batch([Record(0, 0, None, ack.value.encode())], producer_id=producer.producer_id,
                                 producer_epoch=producer.epoch, base_sequence=seq))
    producer.in_flight[TP] = again
    producer._send(again)
    cluster.sim.run_for(1000.0)
    second = producer.acks[-1]
    assert second.value == ack.value and second.offset != ack.offset
    found = checker.check()
    assert found and all("a duplicate" in v for v in found)
    assert f"sim-0: {ack.value!r} at offsets {[ack.offset, second.offset]} of ISR replica b" in found[0]


def test_acks_1_and_acks_0_producers_and_the_consumer_read_what_was_written(cluster: Cluster) -> None:
    clients, checker = _checker(cluster)
    _steps(cluster, clients, 32)
    # acks=1 on steps 0, 8, 16, 24, acks=0 on steps 4, 12, 20, 28, each to the partitions in turn
    assert [(a.value, a.tp.partition) for a in clients.acks1.acks] == [("o1-1", 0), ("o1-2", 1), ("o1-3", 0),
                                                                        ("o1-4", 1)]
    assert clients.acks0.answers == []  # acks=0: nothing answered, nothing awaited
    assert [(tp.partition, v) for tp, v in clients.acks0.sent] == [(0, "z1-1"), (1, "z1-2"), (0, "z1-3"), (1, "z1-4")]
    read = {r.value for r in clients.consumer.reads}
    # what was sent in the last step may not be read yet; everything before it is
    assert {v for _, v in clients.acks0.sent[:3]} <= read and {a.value for a in clients.acks1.acks[:3]} <= read
    assert all(r.offset < r.high_watermark for r in clients.consumer.reads)
    assert checker.check() == []
    assert checker.check_final() == []


def test_an_offset_read_with_two_values_is_caught() -> None:
    clients = Clients.__new__(Clients)
    checks = _bare_checks(clients)
    clients.consumer.reads.append(Read(TP, 3, "a", 5, 0, 100.0))
    assert checks.check() == []
    clients.consumer.reads.append(Read(TP, 3, "b", 6, 1, 2100.0))
    assert checks.check() == ["sim-0: consumer read offset 3 as 'a' from b0 at 100 ms, then as 'b' from b1 at 2100 ms"]


def test_a_read_at_or_above_the_high_watermark_an_unknown_server_error_and_a_refused_sequence_are_caught() -> None:
    clients = Clients.__new__(Clients)
    checks = _bare_checks(clients)
    clients.consumer.reads.append(Read(TP, 5, "a", 5, 2, 10.0))
    clients.acks1.answers.append(("Produce", "o1-1", "UNKNOWN_SERVER_ERROR"))
    clients.consumer.answers.append(("Fetch", "sim-0", "OFFSET_OUT_OF_RANGE"))
    clients.idempotent.answers.append(("Produce", "i1-2", "OUT_OF_ORDER_SEQUENCE_NUMBER"))
    assert checks.check() == [
        "sim-0: consumer read 'a' at offset 5 from b2, at or above the high watermark 5 of that answer",
        "Produce 'i1-2' answered OUT_OF_ORDER_SEQUENCE_NUMBER",
        "Produce 'o1-1' answered UNKNOWN_SERVER_ERROR",
        "Fetch 'sim-0' answered OFFSET_OUT_OF_RANGE",
    ]


def test_at_the_end_a_read_gone_from_the_log_a_moved_acks_1_record_and_an_unacknowledged_batch_are_caught() -> None:
    from sim.clients import ClientAck

    clients = Clients.__new__(Clients)
    checks = _bare_checks(clients)
    clients.consumer.reads.append(Read(TP, 0, "kept", 1, 0, 10.0))
    clients.consumer.reads.append(Read(TP, 1, "gone", 2, 0, 20.0))
    clients.acks1.acks.append(ClientAck(TP, 2, "lost", 1, 30.0))  # lost: allowed for acks=1
    clients.acks1.acks.append(ClientAck(TP, 3, "moved", 1, 30.0))
    clients.idempotent.in_flight[TP] = InFlight(TP, "i1-9", 7, 4, b"", attempts=3)
    checks.check()
    logs = {TP: (1, {0: "kept", 1: "other", 2: "x", 3: "y", 4: "moved"})}
    assert checks.check_final(logs) == [
        "sim-0: consumer read 'gone' at offset 1 from b0 at 20 ms, leader b1 has 'other' there at the end",
        "sim-0: acks=1 record 'moved' acknowledged at offset 3 is at offset 4 at the end",
        "sim-0: idempotent batch 'i1-9' (sequence 4, 3 tries) still unacknowledged at the end",
    ]


def test_isr_replicas_that_differ_below_both_high_watermarks_are_caught() -> None:
    checks = _bare_checks(Clients.__new__(Clients))
    same = {0: "a", 1: "b", 2: "c"}
    assert checks.check_replicas("sim-0", {0: (3, same), 1: (2, {0: "a", 1: "b", 2: "other"})}) == []  # above HW
    assert checks.check_replicas("sim-0", {0: (3, same), 1: (3, {0: "a", 1: "x", 2: "c"})}) == [
        "sim-0: offset 1 is 'b' on b0 (HW 3) but 'x' on b1 (HW 3): ISR replicas differ below the HW"]
    assert duplicates({0: "a", 1: "b", 2: "a"}) == {"a": [0, 2]}


def test_isr_replicas_one_holding_the_other_are_compared_as_offset_by_offset() -> None:
    # check_replicas skips the offset-by-offset look when one replica's values are a subset of the other's: the
    # findings are those of that look, over replicas alike, a prefix of each other, gapped, differing, tombstoned
    import random

    def plain(replicas: dict[int, tuple[int, dict[int, str | None]]]) -> list[str]:
        out = []
        ordered = sorted(replicas.items())
        for i, (a, (hw_a, values_a)) in enumerate(ordered):
            for b, (hw_b, values_b) in ordered[i + 1:]:
                for offset in range(min(hw_a, hw_b)):
                    if offset in values_a and offset in values_b and values_a[offset] != values_b[offset]:
                        out.append(f"sim-0: offset {offset} is {values_a[offset]!r} on b{a} (HW {hw_a}) but "
                                   f"{values_b[offset]!r} on b{b} (HW {hw_b}): ISR replicas differ below the HW")
                        break
        return out

    checks = _bare_checks(Clients.__new__(Clients))
    rng = random.Random(7)
    for _ in range(3000):
        log = {o: rng.choice("ab") + str(o) if rng.random() < 0.9 else None for o in range(12)}
        replicas = {}
        for b in range(rng.randint(1, 3)):
            hw = rng.randint(0, 12)
            values = {o: v for o, v in log.items() if o < hw + rng.choice([0, 0, 2]) and rng.random() < 0.95}
            if rng.random() < 0.2 and values:
                values[rng.choice(list(values))] = "other"
            replicas[b] = (hw, values)
        duplicate_free = [v for v in checks.check_replicas("sim-0", replicas) if "a duplicate" not in v]
        assert duplicate_free == plain(replicas), replicas


def test_a_seed_with_crashes_retries_idempotent_batches_and_runs_clean() -> None:
    """Seed 2 (a crash, a partition): the idempotent producer's batches to the crashed leader are sent again until
    a new leader acknowledges them, and every client invariant holds through the faults and at the end."""
    import sim.run as run

    made: list[Clients] = []

    original = run.Clients

    class Recording(original):  # type: ignore[valid-type, misc]
        def __init__(self, sim: object) -> None:
            super().__init__(sim)  # type: ignore[arg-type]
            made.append(self)

    run.Clients = Recording  # type: ignore[misc]
    try:
        r = run_seed(2, 20, SimBoot())
    finally:
        run.Clients = original  # type: ignore[misc]
    assert r.violations == ()
    clients = made[0]
    assert clients.idempotent.resent > 0 and clients.idempotent.failed == []
    assert not clients.idempotent.in_flight
    assert len(clients.consumer.reads) > 25  # 29 (seed 2's records of every producer, some read again)


def _bare_checks(clients: Clients) -> ClientChecks:
    """ClientChecks on clients with no simulation behind them (their record lists filled by the test)."""
    from sim.clients import IdempotentProducer, PlainProducer, SimConsumer

    class NoSim:
        seed = 1

        def lost_to_power(self, tp: object, since_ms: float) -> None:
            return None

        def lost_any_to_power(self) -> bool:
            return False

    clients.sim = NoSim()  # type: ignore[assignment]
    clients.idempotent = IdempotentProducer(NoSim())  # type: ignore[arg-type]
    clients.acks1 = PlainProducer(NoSim(), 1, "o")  # type: ignore[arg-type]
    clients.acks0 = PlainProducer(NoSim(), 0, "z")  # type: ignore[arg-type]
    clients.consumer = SimConsumer(NoSim())  # type: ignore[arg-type]
    return ClientChecks(clients)


def test_the_consumer_reads_again_from_a_new_leader_what_the_old_one_served(cluster: Cluster) -> None:
    """After a leader change the consumer seeks back to where it began reading from the old leader, so what the old
    leader served is read again from the new one (an offset with two values would be caught)."""
    clients, checker = _checker(cluster)
    _steps(cluster, clients, 6)
    consumer = clients.consumer
    old_leader = consumer.leaders[TP][0]
    before = [(r.offset, r.value) for r in consumer.reads if r.tp == TP]
    assert before and all(r.leader == old_leader for r in consumer.reads if r.tp == TP)
    cluster.sim.crash(old_leader)
    _steps(cluster, clients, 14, first=6)  # its session expires (6 s), then the controller elects another
    again = [(r.offset, r.value) for r in consumer.reads if r.tp == TP and r.leader != old_leader]
    assert consumer.rewinds >= 1
    assert again[:len(before)] == before  # the same offsets, the same values, from the new leader
    assert checker.check() == []


def test_seed_20_resends_a_batch_its_new_leader_already_holds_and_no_duplicate_follows(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed 20 (20 steps; seed 5 before the quiet partitions, the simulated disk's faults and the quick restarts
    changed the schedules) re-sends an idempotent batch that the leader's log already holds (its first answer was
    lost): the broker's producer state acknowledges it without appending it again, and the run is clean."""
    from sim.client import zk_partition_leader
    from sim.clients import IdempotentProducer
    from sim.invariants import hosted_partition, values_below_hw

    made: list[Clients] = []
    held: list[str] = []
    send = IdempotentProducer._send

    def watching(self: IdempotentProducer, batch: InFlight) -> None:
        if self.in_flight.get(batch.tp) is batch and not batch.sent and batch.attempts >= 1:
            leader = zk_partition_leader(self.sim, batch.tp)
            p = hosted_partition(self.sim, leader, batch.tp) if leader >= 0 else None
            if p is not None and batch.value in values_below_hw(p.log, None, end=p.log.log_end_offset).values():
                held.append(batch.value)
        send(self, batch)

    monkeypatch.setattr(IdempotentProducer, "_send", watching)
    init = IdempotentProducer.__init__

    def keep(self: IdempotentProducer, sim: object, prefix: str = "i") -> None:
        init(self, sim, prefix)  # type: ignore[arg-type]
        made.append(self)  # type: ignore[arg-type]

    monkeypatch.setattr(IdempotentProducer, "__init__", keep)
    r = run_seed(20, 20, SimBoot())
    assert held  # re-sent though already appended
    assert r.violations == ()  # and not appended twice: the no-duplicate invariant holds
    producer = made[0]
    assert producer.failed == [] and set(held) <= {a.value for a in producer.acks}  # each acknowledged


def test_a_client_request_failed_by_a_crash_is_answered_once_and_an_acks_0_one_not_at_all(cluster: Cluster) -> None:
    """Sim.client_request: a request in flight when its target crashes is answered None once (not again when its
    arrival comes up, as before 2026-11-27); one that awaits no answer (acks=0) is not kept pending, so the crash
    tells it nothing."""
    from messages.replication import ProducePartition, ProduceRequest

    sim = cluster.sim
    batch = build_batch([Record(0, 0, None, b"x")])
    answers: list[object] = []
    quiet: list[object] = []
    sim.client_request(0, ProduceRequest(-1, 30000, (ProducePartition(TP, batch),)), 8, answers.append)
    sim.client_request(0, ProduceRequest(0, 30000, (ProducePartition(TP, batch),)), 8, quiet.append, expects=False)
    sim.crash(0)  # before either arrives (CLIENT_LATENCY_MS)
    sim.run_for(1000.0)
    assert answers == [None] and quiet == []
