"""``kactor delete-records``: DeleteRecordsCommand's offset JSON (version 1, its refusals with Kafka's messages), its
output lines from the admin client's answers, and its usage errors."""

from __future__ import annotations

import concurrent.futures
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from kactor.cli import main
from kactor.cli.cmd_delete_records import delete_records, parse_offset_json


def test_the_offset_json_of_kafka_delete_records() -> None:
    text = '{"partitions":[{"topic":"t","partition":0,"offset":3},{"topic":"u","partition":2,"offset":-1}],"version":1}'
    assert parse_offset_json(text) == [("t", 0, 3), ("u", 2, -1)]
    assert parse_offset_json('{"partitions":[]}') == []  # no version: the earliest, 1


@pytest.mark.parametrize("text, message", [
    ("{not json", "The input string is not a valid JSON"),
    ('{"partitions":[],"version":2}', "Not supported version field value 2"),
    ('{"version":1}', "Missing partitions field"),
    ('{"partitions":[{"topic":"t","partition":0}],"version":1}', "Missing field 'offset'"),
    ('{"partitions":[{"topic":"t","partition":0,"offset":1},{"topic":"t","partition":0,"offset":2}],"version":1}',
     "Offset json file contains duplicate topic partitions: t-0"),
])
def test_what_the_offset_json_refuses(text: str, message: str) -> None:
    from kactor.cli import CliError

    with pytest.raises(CliError) as e:
        parse_offset_json(text)
    assert message in str(e.value)


class _Admin:
    """AdminClient.delete_records answering each partition from ``answers`` (a low watermark or a KafkaError)."""

    def __init__(self, answers: dict[tuple[str, int], Any]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, int, int]] = []

    def delete_records(self, tps: list[Any], **kwargs: Any) -> dict[Any, concurrent.futures.Future]:
        out = {}
        for tp in tps:
            self.asked.append((tp.topic, tp.partition, tp.offset))
            f: concurrent.futures.Future = concurrent.futures.Future()
            answer = self.answers[(tp.topic, tp.partition)]
            if isinstance(answer, KafkaError):
                f.set_exception(KafkaException(answer))
            else:
                f.set_result(type("DeletedRecords", (), {"low_watermark": answer})())
            out[tp] = f
        return out


def test_each_partition_answers_its_low_watermark_or_the_java_exception() -> None:
    admin = _Admin({("t", 0): 3, ("t", 1): KafkaError(1, "Broker: Offset out of range")})
    assert delete_records(admin, [("t", 1, 9), ("t", 0, 3)]) == {
        ("t", 1): (-1, "org.apache.kafka.common.errors.OffsetOutOfRangeException: The requested offset is not within "
                       "the range of offsets maintained by the server."),
        ("t", 0): (3, None)}
    assert admin.asked == [("t", 1, 9), ("t", 0, 3)]


def test_the_offset_json_file_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["delete-records", "--bootstrap-server", "localhost:9092"])
    assert exit_.value.code == 2 and "--offset-json-file" in capsys.readouterr().err


def test_a_bad_file_is_one_line_exit_1(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "offsets.json"
    f.write_text('{"partitions":[],"version":3}')
    assert main(["delete-records", "--bootstrap-server", "localhost:9092", "--offset-json-file", str(f)]) == 1
    err = capsys.readouterr().err
    assert "Not supported version field value 3" in err and len(err.strip().splitlines()) == 1


class _AdminWithMetadata(_Admin):
    """... and list_topics: the cluster's topics and their partition counts."""

    def __init__(self, answers: dict[tuple[str, int], Any], topics: dict[str, int]) -> None:
        super().__init__(answers)
        self.topics = topics

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        from types import SimpleNamespace

        return SimpleNamespace(topics={t: SimpleNamespace(error=None, partitions=dict.fromkeys(range(n)))
                                       for t, n in self.topics.items()})


def test_a_missing_topic_or_partition_gets_the_exception_of_kafkas_admin_client() -> None:
    """librdkafka finds no leader (_NOENT "No leaders found" when no partition of the request has one,
    _UNKNOWN_PARTITION beside others that do); KafkaAdminClient.deleteRecords 2.6.3 fails such a partition with its
    topic's metadata error — UNKNOWN_TOPIC_OR_PARTITION for a missing topic — else LEADER_NOT_AVAILABLE."""
    unknown_topic = ("org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host "
                     "this topic-partition.")
    admin = _AdminWithMetadata({("nope", 0): KafkaError(-156, "Failed to query partition leaders: No leaders found"),
                                ("t", 5): KafkaError(-190, "Local: Unknown partition"), ("t", 0): 0},
                               {"t": 1})
    assert delete_records(admin, [("nope", 0, 1), ("t", 5, 1), ("t", 0, 0)]) == {
        ("nope", 0): (-1, unknown_topic),
        ("t", 5): (-1, "org.apache.kafka.common.errors.LeaderNotAvailableException: There is no leader for this "
                       "topic-partition as we are in the middle of a leadership election."),
        ("t", 0): (0, None)}
    only_missing = _AdminWithMetadata({("nope", 0): KafkaError(-156, "No leaders found")}, {})
    assert delete_records(only_missing, [("nope", 0, 1)]) == {("nope", 0): (-1, unknown_topic)}
