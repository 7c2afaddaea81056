"""kactor leader-election's option checks (LeaderElectionCommandOptions' joptsimple rules and messages, exit 1 as the
tool dies of the exception), its JSON file's messages, and the Java exception text a failed partition is printed
with."""

from __future__ import annotations

import pytest

from kactor.admin import AdminOperationException, preferred
from kactor.cli import main
from kactor.cli.kafka_support import java_exception
from messages.common import TopicPartition
from zk_bridge.server import free_port

B = f"127.0.0.1:{free_port()}"  # nothing listens there: every case must be refused before connecting


@pytest.mark.parametrize(("argv", "message"), [
    (["--election-type", "preferred", "--all-topic-partitions"], "Missing required option(s) [bootstrap-server]"),
    (["--bootstrap-server", B, "--all-topic-partitions"], "Missing required option(s) [election-type]"),
    (["--bootstrap-server", B, "--election-type", "preferred"], "Missing required option(s) [all-topic-partitions]"),
    (["--bootstrap-server", B, "--election-type", "preferred", "--topic", "t"],
     "Missing required option(s) [partition]"),
    (["--bootstrap-server", B, "--election-type", "preferred", "--topic", "t", "--partition", "0",
      "--path-to-json-file", "f.json"], "Option(s) [topic] are unavailable given other options on the command line"),
    (["--bootstrap-server", B, "--election-type", "preferred", "--topic", "t", "--partition", "0",
      "--all-topic-partitions"], "Option(s) [topic] are unavailable given other options on the command line"),
    (["--bootstrap-server", B, "--election-type", "dirty", "--all-topic-partitions"],
     "Cannot parse argument 'dirty' of option election-type"),
    (["--bootstrap-server", B, "--election-type", "unclean", "--topic", "t", "--partition", "x"],
     "Cannot parse argument 'x' of option partition"),
])
def test_bad_options_get_joptsimples_message_and_exit_1(argv: list[str], message: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["leader-election", *argv]) == 1
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"kactor leader-election: {message}\n")


@pytest.mark.parametrize(("text", "message"), [
    ("", "Replica election data is empty"),
    ("[]", "Replica election data is empty"),
    ('{"version": 1}', 'Replica election data is missing "partition" field'),
    ('{"partitions": [{"topic": "a", "partition": 0}, {"topic": "a", "partition": 0}]}',
     "Replica election data contains duplicate partitions: a-0"),
])
def test_the_json_files_errors_are_leader_election_commands(text: str, message: str) -> None:
    with pytest.raises(AdminOperationException) as e:
        preferred.parse_replica_election_data(text)
    assert str(e.value) == message


def test_a_json_file_names_the_partitions() -> None:
    assert preferred.parse_replica_election_data(
        '{"partitions": [{"topic": "a", "partition": 1}, {"topic": "b", "partition": 0}]}') == {
        TopicPartition("a", 1), TopicPartition("b", 0)}


def test_a_bad_json_file_exits_1_before_connecting(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "e.json"
    f.write_text("{}")
    assert main(["leader-election", "--bootstrap-server", B, "--election-type", "preferred",
                 "--path-to-json-file", str(f)]) == 1
    assert capsys.readouterr().err == 'kactor leader-election: Replica election data is missing "partition" field\n'


def test_a_failed_partition_is_printed_as_the_java_exception_kafkas_client_makes() -> None:
    from confluent_kafka import KafkaError

    assert java_exception(KafkaError(84)) == ("org.apache.kafka.common.errors.ElectionNotNeededException: "
                                              "Leader election not needed for topic partition.")
    assert java_exception(KafkaError(3, "The partition does not exist.")) == (
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: The partition does not exist.")
    assert java_exception(KafkaError(83)).startswith(
        "org.apache.kafka.common.errors.EligibleLeadersNotAvailableException: ")
