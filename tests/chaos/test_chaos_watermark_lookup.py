"""kactor chaos's high-watermark lookup (kactor/chaos/txn_workload.high_watermark): a leadership that moved is asked
again, as a Java consumer retries after a metadata update; a lasting or a non-retriable error is raised."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from kactor.chaos import txn_workload
from kactor.chaos.txn_workload import high_watermark


class Consumer:
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


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(txn_workload, "LOOKUP_BACKOFF_S", 0.0)


def test_not_leader_is_asked_again_until_the_new_leader_answers() -> None:
    consumer = Consumer([KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE, (0, 42)])
    assert high_watermark(consumer, TopicPartition("t", 0), time.monotonic() + 5) == 42
    assert consumer.calls == 3


def test_a_non_retriable_error_is_raised_at_once() -> None:
    consumer = Consumer([KafkaError.TOPIC_AUTHORIZATION_FAILED, (0, 42)])
    with pytest.raises(KafkaException) as e:
        high_watermark(consumer, TopicPartition("t", 0), time.monotonic() + 5)
    assert e.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert consumer.calls == 1


def test_a_retriable_error_past_the_deadline_is_raised() -> None:
    consumer = Consumer([KafkaError.NOT_LEADER_FOR_PARTITION])
    with pytest.raises(KafkaException) as e:
        high_watermark(consumer, TopicPartition("t", 0), time.monotonic() + 0.05)
    assert e.value.args[0].code() == KafkaError.NOT_LEADER_FOR_PARTITION
    assert consumer.calls >= 2
