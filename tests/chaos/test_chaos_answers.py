"""UNKNOWN_SERVER_ERROR answers as a chaos run counts them: the lines of the brokers' logs that record one
(kactor/chaos/answers.py), the data client's record of those it received (kactor/chaos/kafka_client.py), and the
runner gathering both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kactor.chaos.answers import broker_log_answers
from kactor.chaos.history import ErrorAnswer

LOG = """\
2026-11-25 20:01:02,003 INFO kactor.transport: broker-1 listening on 127.0.0.1:9093
2026-11-25 20:01:02,104 ERROR edges.transport: broker-1: no actor 'replica-manager' for Produce
2026-11-25 20:01:02,105 ERROR edges.transport: broker-1: no edge handler 'admin' for CreateTopics
2026-11-25 20:01:03,000 ERROR edges.transport: edge handler failed on DescribeConfigsRequest
2026-11-25 20:01:04,000 ERROR actors.partition_actor: partition-2: ProduceRequest failed: boom
Traceback (most recent call last):
2026-11-25 20:01:05,000 ERROR actors.group_coordinator_actor: group coordinator procedure failed: oops
2026-11-25 20:01:06,000 INFO kactor.broker: partition-2: task failed: not an answer
2026-11-25 20:01:07,000 WARNING edges.transport: broker-1: dropped a one-way message: gone
"""


def test_the_brokers_log_lines_of_an_unknown_server_error_answer() -> None:
    assert broker_log_answers(1, LOG.splitlines()) == [
        ErrorAnswer(None, "broker 1's log", "no actor 'replica-manager' for Produce"),
        ErrorAnswer(None, "broker 1's log", "no edge handler 'admin' for CreateTopics"),
        ErrorAnswer(None, "broker 1's log", "edge handler failed on DescribeConfigsRequest"),
        ErrorAnswer(None, "broker 1's log", "partition-2: ProduceRequest failed: boom"),
        ErrorAnswer(None, "broker 1's log", "group coordinator procedure failed: oops")]
    assert broker_log_answers(0, ["INFO broker-0 listening on 127.0.0.1:9092"]) == []


class _FakeProducer:
    def __init__(self) -> None:
        self.flushed = 0

    def flush(self, timeout: float = 0) -> int:
        self.flushed += 1
        return 0


def _client() -> Any:
    """A KafkaDataClient without its librdkafka clients: only the bookkeeping of its answers is exercised."""
    from kactor.chaos.kafka_client import KafkaDataClient, UnknownServerErrorAnswers

    client = object.__new__(KafkaDataClient)
    client._server_errors, client._fatal, client.fatal_errors = UnknownServerErrorAnswers(), [], 0
    client._producer = _FakeProducer()
    client._new_producer = lambda: _FakeProducer()
    return client


def test_the_data_client_counts_one_unknown_server_error_per_batch() -> None:
    kafka = pytest.importorskip("confluent_kafka")
    client = _client()
    unknown = kafka.KafkaError(-1)
    client._after_produce("t", 0, [(unknown, -1), (unknown, -1), (None, 5)])
    client._after_produce("t", 1, [(kafka.KafkaError(kafka.KafkaError.NOT_LEADER_FOR_PARTITION), -1)])
    client._after_produce("t", 2, [(None, 7)])
    answers = client.error_answers()
    assert [(a.source, a.detail.split(":")[0]) for a in answers] == [("the producer", "Produce to t-0")]
    assert client.fatal_errors == 0


def test_a_fatal_error_from_an_unknown_server_error_is_counted_and_the_producer_replaced() -> None:
    kafka = pytest.importorskip("confluent_kafka")
    client = _client()
    first = client._producer
    client._on_producer_error(kafka.KafkaError(-1, "Unknown broker error", fatal=True))
    client._after_produce("t", 0, [(kafka.KafkaError(kafka.KafkaError._FATAL), -1)])
    assert [a.detail for a in client.error_answers()] == [
        "Produce to t-0: UNKNOWN: Unknown broker error (fatal)"]
    assert client.fatal_errors == 1 and client._producer is not first
    # a non-fatal -1 through the error callback (a consumer's too) is recorded as such
    client._on_producer_error(kafka.KafkaError(-1, "Unknown broker error"))
    client._on_consumer_error(kafka.KafkaError(kafka.KafkaError._TRANSPORT))
    assert len(client.error_answers()) == 2


def test_the_runner_gathers_the_clients_answers_and_the_brokers_logs(tmp_path: Path) -> None:
    from kactor.chaos.runner import ChaosConfig, ChaosRun

    run = ChaosRun(ChaosConfig(1, 1, brokers=2), str(tmp_path))
    (tmp_path / "cluster").mkdir()
    (tmp_path / "cluster" / "broker-1.log").write_text(LOG)

    class Client:
        def error_answers(self) -> tuple[ErrorAnswer, ...]:
            return (ErrorAnswer(run._t0 + 4.0, "the producer", "Produce to t-0: UNKNOWN: Unknown broker error"),)
    run.client = Client()
    found = run.error_answers()
    assert found[0] == ErrorAnswer(4.0, "the producer", "Produce to t-0: UNKNOWN: Unknown broker error")
    assert [a.source for a in found[1:]] == ["broker 1's log"] * 5
