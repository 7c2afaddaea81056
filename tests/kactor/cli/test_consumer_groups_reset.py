"""kactor consumer-groups --reset-offsets / --delete / --delete-offsets without a cluster: ConsumerGroupCommand's
option checks and messages (exit 1), its timestamp and duration parsing, each scenario's plan from given log and
committed offsets (clamped as checkOffsetsRange, with its warning), and the plan's table as 2.6 prints it."""

from __future__ import annotations

import pytest
from freezegun import freeze_time

from kactor.cli import CliError, main
from kactor.cli.consumer_groups_reset import (
    NO_EXECUTE_WARNING,
    CommandFailedError,
    OffsetsView,
    Scenario,
    check_offsets_range,
    convert_timestamp,
    parse_duration_ms,
    parse_topic_args,
    prepare_offsets,
    render_plan,
)
from zk_bridge.server import free_port

B = f"127.0.0.1:{free_port()}"  # nothing listens: every case must stop before connecting


@pytest.mark.parametrize(("argv", "message"), [
    (["--group", "g"], "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, "
                       "--delete-offsets"),
    (["--list", "--delete", "--group", "g"], "Command must include exactly one action: --list, --describe, "
                                             "--delete, --reset-offsets, --delete-offsets"),
    (["--delete"], "Option [delete] takes one of these options: [group], [all-groups]"),
    (["--delete", "--group", "g", "--topic", "t"],
     "The consumer does not support topic-specific offset deletion from a consumer group."),
    (["--delete-offsets", "--group", "g"], "Option [delete-offsets] takes the following options: [group], [topic]"),
    (["--reset-offsets", "--group", "g", "--topic", "t", "--to-earliest", "--dry-run", "--execute"],
     "Option [reset-offsets] only accepts one of [execute] and [dry-run]"),
    (["--reset-offsets", "--topic", "t", "--to-earliest", "--dry-run"],
     "Option [reset-offsets] takes one of these options: [group], [all-groups]"),
    (["--reset-offsets", "--group", "g", "--topic", "t", "--to-offset", "3", "--to-latest", "--dry-run"],
     'Option "[to-offset]" can\'t be used with option "[to-latest]"'),
    (["--reset-offsets", "--group", "g", "--all-groups", "--topic", "t", "--to-latest", "--dry-run"],
     'Option "[group]" can\'t be used with option "[all-groups]"'),
    (["--describe", "--group", "g", "--all-groups"], 'Option "[group]" can\'t be used with option "[all-groups]"'),
    (["--describe", "--group", "g", "--topic", "t"], 'Option "[topic]" can\'t be used with option "[describe]"'),
    (["--reset-offsets", "--group", "g", "--topic", "t", "--dry-run"],
     "Option '[reset-offsets]' requires one of the following scenarios: Set([to-offset], [shift-by], "
     "[to-datetime], [by-duration], [to-earliest], [to-latest], [to-current], [from-file])"),
    (["--reset-offsets", "--group", "g", "--to-earliest", "--dry-run"],
     "One of the reset scopes should be defined: --all-topics, --topic."),
    (["--reset-offsets", "--group", "g", "--topic", "t", "--to-offset", "x", "--dry-run"],
     "Cannot parse argument 'x' of option to-offset"),
])
def test_bad_options_get_kafkas_message_and_exit_1(argv: list[str], message: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["consumer-groups", "--bootstrap-server", B, *argv]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines()[-1] == f"kactor consumer-groups: {message}"


def test_a_reset_without_execute_or_dry_run_warns_as_kafka(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["consumer-groups", "--bootstrap-server", B, "--reset-offsets", "--group", "g"]) == 1
    assert capsys.readouterr().err.splitlines()[0] == NO_EXECUTE_WARNING


@pytest.mark.parametrize(("text", "ms"), [
    ("2020-01-02T03:04:05.678", 1577934245678),  # no zone: UTC
    ("2020-01-02T03:04:05.678Z", 1577934245678),
    ("2020-01-02T05:04:05.678+02:00", 1577934245678),
    ("2020-01-02T05:04:05.678+0200", 1577934245678),
    ("2020-01-02T01:04:05.678-02", 1577934245678),
])
def test_to_datetime_is_converttimestamps(text: str, ms: int) -> None:
    assert convert_timestamp(text) == ms


@pytest.mark.parametrize("text", ["2020-01-02T03:04:05", "2020-01-02 03:04:05.000", "2020-13-02T03:04:05.000"])
def test_a_datetime_java_cannot_parse(text: str) -> None:
    with pytest.raises(CommandFailedError, match="^Unparseable date: "):
        convert_timestamp(text)


@pytest.mark.parametrize(("text", "ms"), [
    ("PT5M", 300_000), ("P1D", 86_400_000), ("P1DT2H", 93_600_000), ("PT1.5S", 1500), ("-PT6H", -21_600_000),
    ("pt10s", 10_000),
])
def test_by_duration_is_java_durations(text: str, ms: int) -> None:
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize("text", ["5M", "PT", "P", "1D", "PTxS"])
def test_a_duration_java_cannot_parse(text: str) -> None:
    with pytest.raises(CommandFailedError, match="^Text cannot be parsed to a Duration$"):
        parse_duration_ms(text)


START = {("t", 0): 2, ("t", 1): 0}
END = {("t", 0): 10, ("t", 1): 5}
TIMES = {1000: {("t", 0): 4, ("t", 1): -1}}  # no record of t-1 at or after 1000


def view(committed: dict[tuple[str, int], int] | None = None) -> OffsetsView:
    return OffsetsView(earliest=lambda tps: {tp: START[tp] for tp in tps},
                       latest=lambda tps: {tp: END[tp] for tp in tps},
                       for_time=lambda tps, ts: {tp: TIMES[ts][tp] for tp in tps},
                       committed=lambda: dict(committed or {}),
                       now_ms=lambda: 61_000)


PARTS = [("t", 0), ("t", 1)]


def test_each_scenarios_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert prepare_offsets(Scenario("to-earliest"), PARTS, view()) == {("t", 0): 2, ("t", 1): 0}
    assert prepare_offsets(Scenario("to-latest"), PARTS, view()) == {("t", 0): 10, ("t", 1): 5}
    assert prepare_offsets(Scenario("to-offset", "3"), PARTS, view()) == {("t", 0): 3, ("t", 1): 3}
    assert prepare_offsets(Scenario("shift-by", "-2"), PARTS, view({("t", 0): 7, ("t", 1): 4})) == {
        ("t", 0): 5, ("t", 1): 2}
    # a time past every record of a partition: its log end
    assert prepare_offsets(Scenario("to-datetime", "1970-01-01T00:00:01.000"), PARTS, view()) == {
        ("t", 0): 4, ("t", 1): 5}
    assert prepare_offsets(Scenario("by-duration", "PT1M"), PARTS, view()) == {("t", 0): 4, ("t", 1): 5}
    # to-current: the committed offset, the log end where none is committed
    assert prepare_offsets(Scenario("to-current"), PARTS, view({("t", 0): 7})) == {("t", 0): 7, ("t", 1): 5}
    assert capsys.readouterr().err == ""


def test_offsets_outside_the_log_are_clamped_with_kafkas_warning(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_offsets_range({("t", 0): 11, ("t", 1): 3}, START, END) == {("t", 0): 10, ("t", 1): 3}
    assert prepare_offsets(Scenario("shift-by", "-5"), PARTS, view({("t", 0): 6, ("t", 1): 4})) == {
        ("t", 0): 2, ("t", 1): 0}
    assert capsys.readouterr().err.splitlines() == [
        "WARN New offset (11) is higher than latest offset for topic partition t-0. Value will be set to 10",
        "WARN New offset (1) is lower than earliest offset for topic partition t-0. Value will be set to 2",
        "WARN New offset (-1) is lower than earliest offset for topic partition t-1. Value will be set to 0"]


def test_shift_by_needs_a_committed_offset() -> None:
    with pytest.raises(CommandFailedError) as e:
        prepare_offsets(Scenario("shift-by", "1"), PARTS, view({("t", 0): 6}))
    assert str(e.value) == "Cannot shift offset for partition t-1 since there is no current committed offset"


@freeze_time("2020-01-01 00:01:01")
def test_by_duration_counts_back_from_now() -> None:
    from kactor.cli.consumer_groups_reset import AdminView

    got = AdminView(admin=None, timeout_s=1).offsets_view("g").now_ms()
    assert got == 1577836861000


def test_topic_arguments_name_partitions_or_every_partition() -> None:
    assert parse_topic_args(["a:0,2", "b"], lambda t: [0, 1]) == [("a", 0), ("a", 2), ("b", 0), ("b", 1)]
    with pytest.raises(CommandFailedError, match='For input string: "x"'):
        parse_topic_args(["a:x"], lambda t: [])


def test_the_plan_as_kafka_prints_it() -> None:
    assert render_plan({"g": {("t", 1): 5, ("t", 0): 12}}) == [
        "",
        "GROUP                          TOPIC                          PARTITION  NEW-OFFSET     ",
        "g                              t                              0          12             ",
        "g                              t                              1          5              "]
    assert render_plan({}) == []
    assert render_plan({"g": {}}) == ["", "GROUP                          TOPIC                          PARTITION  "
                                          "NEW-OFFSET     "]


def test_no_scenario_is_a_usage_error() -> None:
    with pytest.raises(CliError):
        prepare_offsets(Scenario("from-file"), PARTS, view())


class _Topics:
    """AdminView.partitions_of for a cluster with topic t (2 partitions) and nothing else."""

    def partitions_of(self, topic: str) -> list[int]:
        if topic != "t":
            raise CommandFailedError("org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server "
                                     "does not host this topic-partition.")
        return [0, 1]


def _offset_delete(monkeypatch: pytest.MonkeyPatch, answer: dict | None, supported: bool = True) -> list[dict]:
    from kactor.cli import kafka_wire

    sent: list[dict] = []
    monkeypatch.setattr(kafka_wire, "supports", lambda bootstrap, api, timeout_s: supported)

    def request(bootstrap, group, api_key, version, body, timeout_s):  # type: ignore[no-untyped-def]
        sent.append(body)
        return answer
    monkeypatch.setattr(kafka_wire, "coordinator_request", request)
    return sent


ROW = "{:<30} {:<15} {:<15}".format


def test_delete_offsets_prints_kafkas_table(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from kactor.cli.consumer_groups_reset import delete_offsets

    sent = _offset_delete(monkeypatch, {"error_code": 0, "topics": [
        {"name": "t", "partitions": [{"partition_index": 0, "error_code": 0}, {"partition_index": 1,
                                                                                "error_code": 86}]}]})
    delete_offsets("b:1", _Topics(), "g", ["t", "nope"], 5)  # type: ignore[arg-type]
    assert sent == [{"group_id": "g", "topics": [{"name": "t", "partitions": [{"partition_index": 0},
                                                                             {"partition_index": 1}]}]}]
    assert capsys.readouterr().out.splitlines() == [
        "", "Error: Encounter some partition level error, see the follow-up details:",
        "", ROW("TOPIC", "PARTITION", "STATUS"),
        ROW("nope", "Not Provided", "Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This "
                                    "server does not host this topic-partition."),
        ROW("t", "0", "Successful"),
        ROW("t", "1", "Error: org.apache.kafka.common.errors.GroupSubscribedToTopicException: Deleting offsets of a "
                      "topic is forbidden while the consumer group is actively subscribed to it.")]


def test_delete_offsets_of_a_group_that_does_not_exist(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from kactor.cli.consumer_groups_reset import delete_offsets

    _offset_delete(monkeypatch, {"error_code": 69, "topics": []})
    delete_offsets("b:1", _Topics(), "g", ["t:1"], 5)  # type: ignore[arg-type]
    assert capsys.readouterr().out.splitlines() == [
        "", "Error: 'g' does not exist.", "", ROW("TOPIC", "PARTITION", "STATUS"),
        ROW("t", "1", "Error: org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.")]


def test_delete_offsets_on_a_broker_without_offset_delete(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from kactor.cli.consumer_groups_reset import delete_offsets

    sent = _offset_delete(monkeypatch, None, supported=False)
    delete_offsets("b:1", _Topics(), "g", ["t:0"], 5)  # type: ignore[arg-type]
    assert sent == []
    assert capsys.readouterr().out.splitlines() == [
        "", "Error: Encounter some unknown error: UNSUPPORTED_VERSION", "", ROW("TOPIC", "PARTITION", "STATUS"),
        ROW("t", "0", "Error: org.apache.kafka.common.errors.UnsupportedVersionException: The broker does not "
                      "support OFFSET_DELETE")]


def test_delete_offsets_done(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from kactor.cli.consumer_groups_reset import delete_offsets

    _offset_delete(monkeypatch, {"error_code": 0, "topics": [{"name": "t", "partitions": [
        {"partition_index": 0, "error_code": 0}, {"partition_index": 1, "error_code": 0}]}]})
    delete_offsets("b:1", _Topics(), "g", ["t"], 5)  # type: ignore[arg-type]
    assert capsys.readouterr().out.splitlines() == [
        "Request succeed for deleting offsets with topic t group g", "", ROW("TOPIC", "PARTITION", "STATUS"),
        ROW("t", "0", "Successful"), ROW("t", "1", "Successful")]


def test_a_reset_plan_file_as_export_writes_it() -> None:
    from kactor.cli.consumer_groups_reset import export_csv, parse_reset_plan

    plan = {"g": {("t", 1): 5, ("t", 0): 7}}
    assert export_csv(plan, single_group=True) == "t,0,7\nt,1,5\n"
    assert parse_reset_plan(export_csv(plan, single_group=True), ["g"]) == plan
    two = {"g": {("t", 0): 7}, "h": {("u", 2): 0}}
    assert export_csv(two, single_group=False) == "g,t,0,7\nh,u,2,0\n"
    assert parse_reset_plan(export_csv(two, single_group=False), ["g", "h"]) == two
    with pytest.raises(CommandFailedError, match="^Cannot parse reset plan line: t,x,1$"):
        parse_reset_plan("t,0,1\nt,x,1\n", ["g"])
