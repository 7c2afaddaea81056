"""kactor/kafka_clients.py: the --bootstrap-server check, the configuration every tool's client starts from, and a
close given up when librdkafka hangs in it, a watermark lookup that asks again when leadership moved."""

from __future__ import annotations

import threading
import time

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from kactor import kafka_clients
from kactor.kafka_clients import LIBRDKAFKA_LOGGER, client_config, close_within, parse_bootstrap, watermark_offsets


def test_bootstrap_lists_as_kafka_takes_them() -> None:
    assert parse_bootstrap("127.0.0.1:9092") == "127.0.0.1:9092"
    assert parse_bootstrap(" a:1, PLAINTEXT://b.example:65535 ") == "a:1,b.example:65535"
    assert parse_bootstrap("[::1]:9092") == "[::1]:9092"


@pytest.mark.parametrize("value", ["", "a", "a:", ":9092", "a:0", "a:65536", "a:1,", "a b:1"])
def test_malformed_bootstrap_lists_are_refused(value: str) -> None:
    with pytest.raises(ValueError):
        parse_bootstrap(value)


def test_client_config_routes_librdkafka_logs_and_takes_extra_properties_last() -> None:
    conf = client_config("h:1", "tool", {"client.id": "mine", "acks": "all"})
    assert conf["bootstrap.servers"] == "h:1"
    assert conf["logger"] is LIBRDKAFKA_LOGGER and not LIBRDKAFKA_LOGGER.propagate
    assert (conf["client.id"], conf["acks"]) == ("mine", "all")


class _Closing:
    """A client whose close() blocks until released (librdkafka's hang), returns, or raises."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.release = threading.Event()
        self.closed = threading.Event()

    def close(self) -> None:
        if self.mode == "hang":
            self.release.wait(10)
        self.closed.set()
        if self.mode == "raise":
            raise RuntimeError("KafkaError{code=_DESTROY}")


def test_close_within_gives_up_on_a_close_that_hangs_and_waits_for_one_that_returns() -> None:
    hung = _Closing("hang")
    t0 = time.monotonic()
    assert close_within(hung, 0.2) is False
    assert 0.2 <= time.monotonic() - t0 < 5 and not hung.closed.is_set()
    hung.release.set()  # its thread goes on with the close, on its own
    assert hung.closed.wait(5)
    for mode in ("return", "raise"):
        client = _Closing(mode)
        assert close_within(client, 5) is True and client.closed.is_set()


class ScriptedConsumer:
    """get_watermark_offsets answering from a script: an error code raises KafkaException as librdkafka does."""

    def __init__(self, answers: list[int | tuple[int, int]]) -> None:
        self.answers = answers
        self.calls = 0

    def get_watermark_offsets(self, tp: TopicPartition, timeout: float, cached: bool) -> tuple[int, int]:
        assert cached is False and timeout > 0
        answer = self.answers[min(self.calls, len(self.answers) - 1)]
        self.calls += 1
        if isinstance(answer, int):
            raise KafkaException(KafkaError(answer))
        return answer


@pytest.fixture
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kafka_clients, "LOOKUP_BACKOFF_S", 0.0)


def test_watermark_lookup_asks_again_after_not_leader_until_the_new_leader_answers(no_backoff: None) -> None:
    consumer = ScriptedConsumer([KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE, (0, 42)])
    assert watermark_offsets(consumer, TopicPartition("t", 0), time.monotonic() + 5) == (0, 42)
    assert consumer.calls == 3


def test_watermark_lookup_raises_a_non_retriable_error_at_once(no_backoff: None) -> None:
    consumer = ScriptedConsumer([KafkaError.TOPIC_AUTHORIZATION_FAILED, (0, 42)])
    with pytest.raises(KafkaException) as e:
        watermark_offsets(consumer, TopicPartition("t", 0), time.monotonic() + 5)
    assert e.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert consumer.calls == 1


def test_watermark_lookup_raises_a_retriable_error_past_the_deadline(no_backoff: None) -> None:
    consumer = ScriptedConsumer([KafkaError.NOT_LEADER_FOR_PARTITION])
    with pytest.raises(KafkaException) as e:
        watermark_offsets(consumer, TopicPartition("t", 0), time.monotonic() + 0.05)
    assert e.value.args[0].code() == KafkaError.NOT_LEADER_FOR_PARTITION
    assert consumer.calls >= 2
