"""sim/hostile.py's transactional produce of an unknown producer id when the leader cannot ask the transaction
coordinator (kactor sim's seed 130 with --txn-check: the leader's broker paused and cut off from the coordinator):
the leader answers NOT_ENOUGH_REPLICAS, as Kafka 3.7.1+ does (KAFKA-16386), which the hostile client retries as a
producer does; the coordinator's verdict, INVALID_PRODUCER_ID_MAPPING, is the answer held against Kafka's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import sim.hostile
from messages.common import Errors, TopicPartition
from messages.replication import ProducePartitionResponse, ProduceResponse
from sim.clients import RETRIABLE
from sim.hostile import UNKNOWN_PRODUCER_ID, VERIFICATION_NOT_ASKED, HostileChecks, HostileClient, Sent

TP = TopicPartition("sim", 0)


class _Broker:
    serving = True


class _ZooKeeper:
    nodes: dict[str, Any] = {}  # no internal topic: the check looks in no internal log


class _Sim:
    """What the hostile client's produce uses of the simulator: its clock, brokers, timers, notes and requests."""

    seed = 130
    now = 25_200.0

    def __init__(self) -> None:
        self.brokers = {0: _Broker()}
        self.zk = _ZooKeeper()
        self.events: list[str] = []
        self.timers: list[Callable[[], None]] = []
        self.sent: list[tuple[int, Any, Callable[[Any], None]]] = []

    def at(self, delay_ms: float, fn: Callable[[], None]) -> None:
        self.timers.append(fn)

    def note(self, text: str) -> None:
        self.events.append(text)

    def client_request(self, target: int, request: Any, version: int, on_answer: Callable[[Any], None],
                       **_: Any) -> None:
        self.sent.append((target, request, on_answer))


def _answer(error: Errors) -> ProduceResponse:
    return ProduceResponse((ProducePartitionResponse(TP, error),))


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> tuple[_Sim, HostileClient, Sent]:
    monkeypatch.setattr(sim.hostile, "zk_partition_leader", lambda s, tp: 0)
    fake = _Sim()
    c = HostileClient(fake, [TP], transactional=False)  # type: ignore[arg-type]
    c.started_ms = fake.now
    sent = Sent("Transactional produce of unknown producer id", {str(TP): Errors.INVALID_PRODUCER_ID_MAPPING.name})
    c._produce(sent, TP, b"batch", c.transactional_id)
    return fake, c, sent


def test_not_enough_replicas_is_retried_until_the_coordinators_verdict(client) -> None:
    fake, c, sent = client
    assert Errors.NOT_ENOUGH_REPLICAS.name == VERIFICATION_NOT_ASKED and VERIFICATION_NOT_ASKED in RETRIABLE
    (_, request, answered), = fake.sent
    assert request.transactional_id == c.transactional_id and UNKNOWN_PRODUCER_ID > 0
    answered(_answer(Errors.NOT_ENOUGH_REPLICAS))  # the leader could not ask the coordinator
    assert not sent.done and len(fake.timers) == 1
    fake.timers.pop()()  # after retry.backoff.ms: sent again
    assert len(fake.sent) == 2
    fake.sent[-1][2](_answer(Errors.INVALID_PRODUCER_ID_MAPPING))
    assert sent.done
    assert HostileChecks(c).check() == []


def test_an_unmapped_network_exception_is_held_against_kafka(client) -> None:
    """3.6.0's answer (the ask's NETWORK_EXCEPTION as it was) is not kactor's: it would be a regression of the
    KAFKA-16386 mapping, and the check says so."""
    fake, c, sent = client
    fake.sent[0][2](_answer(Errors.NETWORK_EXCEPTION))
    assert sent.done
    (found,) = HostileChecks(c).check()
    assert "NETWORK_EXCEPTION" in found and "INVALID_PRODUCER_ID_MAPPING" in found
