"""kactor consume without a cluster: kafka-console-consumer's argument checks (exit 2, one line) and an
unreachable bootstrap server (exit 1, one clear line, nothing else printed)."""

from __future__ import annotations

import argparse

import pytest

from kactor.cli import main
from kactor.cli.cmd_consume import consumer_config, start_offset
from zk_bridge.server import free_port


def _usage(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as e:
        main(["consume", *argv])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


@pytest.mark.parametrize(("argv", "message"), [
    (["--topic", "t", "--offset", "3"], "The partition is required when offset is specified."),
    (["--topic", "t", "--partition", "0", "--offset", "3", "--from-beginning"],
     "Options from-beginning and offset cannot be specified together."),
    (["--topic", "t", "--partition", "0", "--offset", "soon"], "--offset must be a non-negative number"),
    (["--topic", "t", "--max-messages", "0"], "--max-messages must be at least 1"),
    (["--topic", "t", "--timeout-ms", "-1"], "--timeout-ms must not be negative"),
    (["--topic", "t", "--property", "print.kye=true"], "unknown --property print.kye"),
    (["--topic", "t", "--property", "print.key"], "--property: expected key=value"),
    (["--topic", "t", "--group", "a", "--consumer-property", "group.id=b"], "disagree"),
])
def test_bad_arguments_get_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str],
                                               message: str) -> None:
    assert message in _usage(capsys, "--bootstrap-server", "127.0.0.1:9092", *argv)


@pytest.mark.parametrize("server", ["localhost", "127.0.0.1:0", "127.0.0.1:99999", "a:1,,b:2", ""])
def test_a_malformed_bootstrap_server_is_a_usage_error(capsys: pytest.CaptureFixture[str], server: str) -> None:
    assert "--bootstrap-server" in _usage(capsys, "--bootstrap-server", server, "--topic", "t")


def test_topic_and_bootstrap_server_are_required(capsys: pytest.CaptureFixture[str]) -> None:
    assert "--bootstrap-server" in _usage(capsys, "--topic", "t")
    assert "Exactly one of whitelist/topic is required." in _usage(capsys, "--bootstrap-server", "127.0.0.1:9092")


def test_an_unreachable_bootstrap_server_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()  # nothing listens there
    code = main(["consume", "--bootstrap-server", f"127.0.0.1:{port}", "--topic", "t", "--metadata-timeout", "1"])
    out, err = capsys.readouterr()
    assert code == 1
    assert out == ""
    assert err == (f"kactor consume: cannot get metadata from the bootstrap server(s) 127.0.0.1:{port} within 1 s "
                   "(_TRANSPORT: Failed to get metadata: Local: Broker transport failure): is a broker listening "
                   "there?\n")


def _args(**kw: object) -> argparse.Namespace:
    base = {"offset": None, "from_beginning": False, "group": None, "isolation_level": "read_uncommitted"}
    return argparse.Namespace(**{**base, **kw})


def test_start_offsets_as_kafka_console_consumer() -> None:
    from confluent_kafka import OFFSET_BEGINNING, OFFSET_END

    assert start_offset(_args()) == OFFSET_END
    assert start_offset(_args(from_beginning=True)) == OFFSET_BEGINNING
    assert start_offset(_args(offset="earliest")) == OFFSET_BEGINNING
    assert start_offset(_args(offset="Latest")) == OFFSET_END
    assert start_offset(_args(offset="42")) == 42


def test_consumer_config_commits_only_for_a_named_group() -> None:
    named = consumer_config(_args(group="g", from_beginning=True), "127.0.0.1:9092", {})
    assert (named["group.id"], named["enable.auto.commit"], named["auto.offset.reset"]) == ("g", True, "earliest")
    anonymous = consumer_config(_args(isolation_level="read_committed"), "127.0.0.1:9092", {"fetch.wait.max.ms": "5"})
    assert anonymous["group.id"].startswith("console-consumer-")
    assert (anonymous["enable.auto.commit"], anonymous["auto.offset.reset"]) == (False, "latest")
    assert (anonymous["isolation.level"], anonymous["fetch.wait.max.ms"]) == ("read_committed", "5")
    assert anonymous["bootstrap.servers"] == "127.0.0.1:9092"
