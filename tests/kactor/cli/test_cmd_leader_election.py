"""kactor leader-election's option checks (LeaderElectionCommandOptions' joptsimple rules and messages, exit 1 as the
tool dies of the exception), its JSON file's messages, and the Java exception text a failed partition is printed
with."""

from __future__ import annotations

import pytest

from kactor.admin import preferred
from kactor.cli import main
from kactor.cli.kafka_support import java_exception
from messages.common import TopicPartition
from zk_bridge.admin import AdminOperationException
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


# -- the answers, from a faked admin client (LeaderElectionCommand.electLeaders' succeeded / noop / failed) ---------
class _Admin:
    """AdminClient.elect_leaders answering each partition from ``answers`` (None, or a KafkaError code)."""

    def __init__(self, answers: dict[tuple[str, int], int | None]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, object]] = []

    def elect_leaders(self, election_type: object, partitions: object) -> object:
        import concurrent.futures

        from confluent_kafka import KafkaError
        from confluent_kafka import TopicPartition as Tp

        self.asked.append((str(election_type), partitions))
        f: concurrent.futures.Future = concurrent.futures.Future()
        f.set_result({Tp(t, p): None if code is None else KafkaError(code)
                      for (t, p), code in self.answers.items()})
        return f


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], answers: dict,
         *argv: str) -> tuple[int, list[str], str]:
    from kactor.cli import cmd_leader_election

    admin = _Admin(answers)
    monkeypatch.setattr(cmd_leader_election, "admin_client", lambda *a, **k: admin)
    monkeypatch.setattr(cmd_leader_election, "cluster_metadata", lambda *a, **k: None)
    code = main(["leader-election", "--bootstrap-server", B, *argv])
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


def test_a_partition_whose_preferred_leader_leads_is_no_failure(monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """LeaderElectionCommand 2.6.3: ElectionNotNeededException goes to ``noop``: "Valid replica already elected for
    partitions ...", exit 0."""
    assert _run(monkeypatch, capsys, {("pref", 0): 84}, "--election-type", "preferred", "--topic", "pref",
                "--partition", "0") == (0, ["Valid replica already elected for partitions pref-0"], "")


def test_succeeded_noop_and_failed_partitions_each_get_kafkas_line(monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str],
                                                                   tmp_path) -> None:
    f = tmp_path / "e.json"
    f.write_text('{"partitions": [{"topic": "a", "partition": 0}, {"topic": "a", "partition": 1}, '
                 '{"topic": "b", "partition": 0}, {"topic": "b", "partition": 1}, {"topic": "c", "partition": 9}]}')
    answers = {("a", 0): None, ("b", 1): None, ("a", 1): 84, ("b", 0): 84, ("c", 9): 3}
    assert _run(monkeypatch, capsys, answers, "--election-type", "unclean", "--path-to-json-file", str(f)) == (1, [
        "Successfully completed leader election (UNCLEAN) for partitions a-0, b-1",
        "Valid replica already elected for partitions a-1, b-0",
        "Error completing leader election (UNCLEAN) for partition: c-9: "
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this "
        "topic-partition."], "kactor leader-election: 1 replica(s) could not be elected\n")


def test_preferred_replica_election_still_fails_a_partition_that_needs_none(monkeypatch: pytest.MonkeyPatch,
                                                                            capsys: pytest.CaptureFixture[str]
                                                                            ) -> None:
    """kafka-preferred-replica-election.sh --bootstrap-server (PreferredReplicaLeaderElectionCommand, which shares
    LeaderElectionCommand's request): its own lines, each failure with the Java exception."""
    from kactor import kafka_clients

    admin = _Admin({("p", 0): None, ("p", 1): 84})
    monkeypatch.setattr(kafka_clients, "admin_client", lambda *a, **k: admin)
    monkeypatch.setattr(kafka_clients, "cluster_metadata", lambda *a, **k: None)
    assert main(["preferred-replica-election", "--bootstrap-server", B]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        "Successfully completed preferred replica election for partitions p-0",
        "Error completing preferred replica election for partition p-1: org.apache.kafka.common.errors."
        "ElectionNotNeededException: Leader election not needed for topic partition."]
    assert captured.err == "kactor preferred-replica-election: 1 preferred replica(s) could not be elected\n"
