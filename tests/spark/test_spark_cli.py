"""`kactor trace summarize` / `convert`: bad input gives one clear line naming the file and line, exit 1 (2 for
usage); good input writes the tables, the report and a terminal summary."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from spark_support import BROKER_0, header, lines, write_trace

from kactor.cli import main

pytestmark = pytest.mark.spark


def summarize(*argv: str) -> int:
    return main(["trace", "summarize", *argv])


def one_line(err: str) -> str:
    text = err.strip()
    assert "\n" not in text and "Traceback" not in text, text
    return text


def test_missing_folder(tmp_path, capsys) -> None:
    assert summarize(str(tmp_path / "nope"), "--out", str(tmp_path / "o")) == 1
    assert one_line(capsys.readouterr().err) == f"kactor trace: {tmp_path / 'nope'}: no such trace folder"


def test_no_trace_files(tmp_path, capsys) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    assert summarize(str(tmp_path), "--out", str(tmp_path / "o")) == 1
    assert "no trace files" in one_line(capsys.readouterr().err)


def test_unknown_trace_version(tmp_path, capsys) -> None:
    (tmp_path / "broker-0.jsonl").write_text(header("broker-0", 0, version=99) + "\n")
    assert summarize(str(tmp_path), "--out", str(tmp_path / "o")) == 1
    err = one_line(capsys.readouterr().err)
    assert "broker-0.jsonl: unsupported trace_version 99 (this reader knows 1, 2, 3, 4)" in err


def test_corrupt_header(tmp_path, capsys) -> None:
    (tmp_path / "broker-0.jsonl").write_text('{"trace_vers\n')
    assert summarize(str(tmp_path), "--out", str(tmp_path / "o")) == 1
    assert "broker-0.jsonl: line 1: corrupt trace header" in one_line(capsys.readouterr().err)


def test_corrupt_line_in_the_middle(spark: Any, tmp_path, capsys) -> None:
    body = lines(BROKER_0)
    body[2] = body[2][:40]  # line 4 of the file (after the header) is cut short, and is not the last line
    (tmp_path / "broker-0.jsonl").write_text("\n".join([header("broker-0", 0), *body]) + "\n")
    assert summarize(str(tmp_path), "--out", str(tmp_path / "o"), "--no-report") == 1
    err = one_line(capsys.readouterr().err)
    assert f"{tmp_path / 'broker-0.jsonl'}: line 4: corrupt trace line: not JSON" in err


def test_usage_errors(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        summarize()
    assert e.value.code == 2
    assert main(["trace", "summarize", "x", "--bucket-ms", "0"]) == 2
    capsys.readouterr()
    for argv, message in ((["--master", "spark:/m:7077"], "--master spark:/m:7077: not a Spark master URL"),
                          (["--conf", "spark.executor.memory"], "--conf spark.executor.memory: expected KEY=VALUE"),
                          (["--executor-timeout", "0"], "--executor-timeout must be positive")):
        assert summarize("x", *argv) == 2
        assert one_line(capsys.readouterr().err).startswith(f"kactor trace: {message}")


def test_unreachable_master(tmp_path, capsys) -> None:
    """Refused at once with one line, before any Spark session starts (none is used even if one runs)."""
    from zk_bridge.server import free_port

    trace, port = write_trace(str(tmp_path / "t")), free_port()
    assert summarize(trace, "--out", str(tmp_path / "o"), "--master", f"spark://127.0.0.1:{port}") == 1
    assert one_line(capsys.readouterr().err) == (
        f"kactor trace: cannot reach the Spark master spark://127.0.0.1:{port} (127.0.0.1:{port}: Connection refused)")
    assert not os.path.exists(tmp_path / "o")


def test_summarize_generated_trace(spark: Any, tmp_path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    trace, out = str(tmp_path / "trace"), str(tmp_path / "out")
    # generated here, not in a child of its own with the fixed hash seed (a Python start; what that child does is
    # test_spark_generate.py's): only the summary of a generated trace is this test's
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    assert main(["trace", "generate", "--messages", "2000", "--brokers", "3", "--partitions", "16",
                 "--out", trace, "--seed", "5"]) == 0
    assert summarize(trace, "--out", out, "--master", "local[2]") == 0
    text = capsys.readouterr().out
    processes = sorted(name[: -len(".jsonl")] for name in os.listdir(trace) if name.endswith(".jsonl"))
    assert f"2,000 messages from {len(processes)} process(es)" in text and "index.html" in text
    with open(os.path.join(out, "summary.json")) as f:
        meta = json.load(f)
    assert meta["messages"] == 2000 and meta["processes"] == processes
    for name in ("index.html", "event_queue_time.png", "messages_by_type.csv", "controller_event_times.json"):
        assert os.path.exists(os.path.join(out, name)), name
    assert spark.sparkContext._jsc is not None  # the shared session was reused, not stopped


def test_convert_refuses_bad_input(tmp_path, capsys) -> None:
    assert main(["trace", "convert", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 1
    assert "no such trace folder" in one_line(capsys.readouterr().err)
    trace = write_trace(str(tmp_path / "t"))
    assert main(["trace", "convert", trace, "--out", trace]) == 1
    assert "the output folder is an input folder" in one_line(capsys.readouterr().err)
