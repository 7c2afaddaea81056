"""``kactor topics --bootstrap-server --alter --partitions`` (TopicCommand.AdminClientTopicService.alterTopic) with
the admin client faked: one CreatePartitions per matched topic, NewPartitions.increaseTo(n) or with the manual
assignment of the new partitions, nothing printed on success (2.6.3's alterTopic prints nothing), a refusal one
line, exit 1. (Against a real broker: tests/cluster/test_cluster_topics_alter_partitions.py.)"""

from __future__ import annotations

import concurrent.futures
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from kactor.cli import main
from zk_bridge.server import free_port

B = f"127.0.0.1:{free_port()}"


class _Admin:
    """confluent-kafka's AdminClient for alterTopic: list_topics (Metadata) and create_partitions. Each request's
    NewPartitions go through a real AdminClient's create_partitions first, so what confluent-kafka refuses before
    sending anything (a ValueError) is refused here too; the answers are ``errors`` (topic -> KafkaError)."""

    def __init__(self, topics: dict[str, int], errors: dict[str, KafkaError] | None = None) -> None:
        self.topics = topics
        self.errors = errors or {}
        self.created: list[tuple[str, int, Any]] = []

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        topics = {t: SimpleNamespace(partitions={p: SimpleNamespace(id=p) for p in range(n)})
                  for t, n in self.topics.items()}
        return SimpleNamespace(brokers={1: None, 2: None, 3: None}, topics=topics)

    def create_partitions(self, new: list[Any], **kwargs: Any) -> dict[str, concurrent.futures.Future]:
        from confluent_kafka.admin import AdminClient

        # the real client's own checks: nothing listens at B, and the request is never answered
        AdminClient({"bootstrap.servers": B, "log_level": 0}).create_partitions(new, request_timeout=0.1)
        out = {}
        for n in new:
            self.created.append((n.topic, n.new_total_count, n.replica_assignment))
            f: concurrent.futures.Future = concurrent.futures.Future()
            if n.topic in self.errors:
                f.set_exception(KafkaException(self.errors[n.topic]))
            else:
                f.set_result(None)
            out[n.topic] = f
        return out


def _topics(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], admin: _Admin,
            *argv: str) -> tuple[int, str, str]:
    from kactor import kafka_clients

    monkeypatch.setattr(kafka_clients, "admin_client", lambda *a, **k: admin)
    code = main(["topics", "--bootstrap-server", B, *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_alter_partitions_asks_create_partitions_and_prints_nothing(monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    admin = _Admin({"orders": 3, "orders-2": 1, "other": 1})
    assert _topics(monkeypatch, capsys, admin, "--alter", "--topic", "orders.*", "--partitions", "5") == (0, "", "")
    assert admin.created == [("orders", 5, None), ("orders-2", 5, None)]


def test_alter_partitions_with_the_new_partitions_assignment(monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """alterTopic's replicaAssignment.drop(startPartitionId): the replicas of partitions 2 and 3 only."""
    admin = _Admin({"orders": 2})
    assert _topics(monkeypatch, capsys, admin, "--alter", "--topic", "orders", "--partitions", "4",
                   "--replica-assignment", "1:2,2:3,3:1,1:3") == (0, "", "")
    assert admin.created == [("orders", 4, [[3, 1], [1, 3]])]


def test_a_refused_increase_is_the_brokers_error_exit_1(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    admin = _Admin({"orders": 3}, {"orders": KafkaError(37, "Topic currently has 3 partitions, which is higher "
                                                            "than the requested 2.")})
    code, out, err = _topics(monkeypatch, capsys, admin, "--alter", "--topic", "orders", "--partitions", "2")
    assert (code, out) == (1, "")
    assert err.startswith("kactor topics: ") and "Topic currently has 3 partitions, which is higher than the " \
                                                  "requested 2." in err and len(err.splitlines()) == 1


def test_alter_of_a_missing_topic(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    admin = _Admin({"orders": 3})
    assert _topics(monkeypatch, capsys, admin, "--alter", "--topic", "nope", "--partitions", "4") == (
        1, "", "kactor topics: Topic 'nope' does not exist as expected\n")
    assert _topics(monkeypatch, capsys, admin, "--alter", "--topic", "nope", "--partitions", "4",
                   "--if-exists") == (0, "", "")
    assert admin.created == []
