"""``kactor log-dirs``: LogDirsCommand's JSON from the brokers' DescribeLogDirs answers, and its usage errors."""

from __future__ import annotations

import json

import pytest

from kactor.cli import main
from kactor.cli.cmd_log_dirs import format_as_json

ANSWERS = {
    0: [{"error_code": 0, "log_dir": "/data/b0", "topics": [
        {"name": "a", "partitions": [{"partition_index": 0, "partition_size": 120, "offset_lag": 0,
                                      "is_future_key": False}]},
        {"name": "b", "partitions": [{"partition_index": 3, "partition_size": 0, "offset_lag": -1,
                                      "is_future_key": False}]}]},
        {"error_code": 56, "log_dir": "/data/b0-2", "topics": []}],
}


def test_the_json_is_kafka_log_dirs_own() -> None:
    out = format_as_json(ANSWERS, set())
    assert " " not in out  # Jackson's compact form
    assert json.loads(out) == {"version": 1, "brokers": [{"broker": 0, "logDirs": [
        {"logDir": "/data/b0", "error": None, "partitions": [
            {"partition": "a-0", "size": 120, "offsetLag": 0, "isFuture": False},
            {"partition": "b-3", "size": 0, "offsetLag": -1, "isFuture": False}]},
        {"logDir": "/data/b0-2", "error": "org.apache.kafka.common.errors.KafkaStorageException", "partitions": []},
    ]}]}
    only_b = json.loads(format_as_json(ANSWERS, {"b"}))
    assert [p["partition"] for p in only_b["brokers"][0]["logDirs"][0]["partitions"]] == ["b-3"]


@pytest.mark.parametrize("argv, message", [
    (["log-dirs", "--bootstrap-server", "localhost:9092"], "Command must include exactly one action: --describe"),
    (["log-dirs", "--bootstrap-server", "localhost:9092", "--describe", "--broker-list", "a,b"], "--broker-list"),
    (["log-dirs", "--describe"], "--bootstrap-server"),
])
def test_usage_errors_exit_2_with_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_no_broker_answering_is_one_line_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    from zk_bridge.server import free_port

    assert main(["log-dirs", "--bootstrap-server", f"127.0.0.1:{free_port()}", "--describe", "--timeout", "500"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kactor log-dirs: no bootstrap server answered (request to 127.0.0.1:")
    assert err.endswith("is a broker listening there?\n") and len(err.strip().splitlines()) == 1
