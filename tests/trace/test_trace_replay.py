"""Issue #8: replay a recorded broker trace exactly; a tampered input is reported at the first divergence; bad trace
files give one clear error naming the file and line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from trace_support import run_replay_job

from kactor.trace.reader import is_external


def _records(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f.read().splitlines()[1:]]


def _kactor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kactor", *args], capture_output=True, text=True, timeout=120)


def test_recorded_trace_replays_identically(recorded_trace: str) -> None:
    recs = _records(recorded_trace)
    result = run_replay_job(recorded_trace)
    assert result["identical"], result["divergence"]
    assert result["compared"] == len(recs)
    assert result["delivered"] == sum(1 for r in recs if is_external(r["sender"]))
    # and through the command, which re-executes itself with the brokers' hash seed
    proc = _kactor("trace", "replay", os.path.dirname(recorded_trace), "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"identical: {len(recs)} messages" in proc.stdout


@pytest.mark.parametrize("kind", ["LeaderAndIsrRequest", "ZkWatchEvent"])
def test_tampered_input_diverges_at_its_first_consequence(recorded_trace: str, kind: str) -> None:
    recs = _records(recorded_trace)
    if kind == "ZkWatchEvent":
        target = next(r for r in recs if r["type"] == "ZkWatchEvent" and is_external(r["sender"])
                      and r["payload"]["path"] == "/brokers/topics")
    else:
        target = next(r for r in recs if r["type"] == "NetRequest" and r["payload"]["body"]["@"] == kind)
    seq = target["seq"]
    first_consequence = recs[seq]  # seq n is line n+1, i.e. recs[n-1]; its successor recs[n]
    assert first_consequence["cause"] == seq, "the input's handler sends at least one message"
    result = run_replay_job(recorded_trace, tamper_seq=seq)
    assert result["tampered"] == [seq]
    d = result["divergence"]
    assert d is not None and d["seq"] == seq + 1, d
    assert d["expected"] == first_consequence
    assert d["field"] in ("receiver", "type", "payload"), d
    assert result["compared"] == seq  # everything before the divergence matched


def test_until_stops_at_the_given_seq(recorded_trace: str) -> None:
    recs = _records(recorded_trace)
    mid = len(recs) // 2
    proc = _kactor("trace", "replay", recorded_trace, "--check", "--until", str(mid), "--dump-state", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"identical: {mid} messages" in proc.stdout
    state = json.loads(proc.stdout[proc.stdout.index("{"):])
    assert state["process"] == "broker-0" and state["controller"]["initialised"]


def _write(path: str, lines: list[str], newline_at_end: bool = True) -> str:
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + ("\n" if newline_at_end else ""))
    return path


def test_bad_inputs_give_one_clear_error(tmp_path, recorded_trace: str) -> None:  # noqa: ANN001
    with open(recorded_trace, encoding="utf-8") as f:
        header, *body = f.read().splitlines()
    cases = {
        "missing": (str(tmp_path / "nope"), "no such trace folder"),
        "not-a-trace": (_write(str(tmp_path / "a.jsonl"), ["hello"]), "a.jsonl:1: not a kactor trace"),
        "version": (_write(str(tmp_path / "v.jsonl"), [json.dumps({"trace_version": 99})]),
                    "unsupported trace_version 99"),
        "corrupt": (_write(str(tmp_path / "c.jsonl"), [header, body[0], "{oops", *body[1:3]]),
                    "c.jsonl:3: corrupt trace line"),
    }
    for name, (path, message) in cases.items():
        proc = _kactor("trace", "replay", path, "--check")
        assert proc.returncode == 1, (name, proc.stdout, proc.stderr)
        assert message in proc.stderr, (name, proc.stderr)
        assert "Traceback" not in proc.stderr, name
    # a crash's truncated last line is accepted with a warning
    cut = _write(str(tmp_path / "t.jsonl"), [header, *body[:10], body[10][:25]], newline_at_end=False)
    proc = _kactor("trace", "replay", cut, "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "t.jsonl:12: truncated last line ignored" in proc.stderr
    assert "identical: 10 messages" in proc.stdout


def test_replay_parses_lines_as_the_stdlib_does(recorded_trace: str) -> None:
    """The replay reads lines with orjson; every value must come back as json.loads gives it, including what orjson
    alone would read differently (an integer past 64 bits becomes a float there) or refuse (NaN, lone surrogates)."""
    from kactor.trace.replay import _loads

    with open(recorded_trace, encoding="utf-8") as f:
        lines = f.read().splitlines()
    odd = ['{"a":123456789012345678901234567890,"b":-12345678901234567890}', '{"x":NaN,"y":-Infinity}',
           '{"s":"\\ud83d","t":"\\u00e9"}', '{"q":-9223372036854775808,"r":1.5e-07,"z":-0.0}']
    for text in lines + odd:
        got, want = _loads(text), json.loads(text)
        assert repr(got) == repr(want), text  # repr: nan != nan, and 1 == 1.0 would hide an int read as a float
    assert type(_loads(odd[0])["a"]) is int


def test_several_folders_replay_in_one_command(recorded_trace: str, tmp_path) -> None:  # noqa: ANN001
    import shutil

    recs = _records(recorded_trace)
    folders = [tmp_path / name for name in ("a", "b")]
    for folder in folders:
        folder.mkdir()
        shutil.copy(recorded_trace, folder / os.path.basename(recorded_trace))
    proc = _kactor("trace", "replay", *map(str, folders), "--check", "--jobs", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for folder in folders:
        assert f"{folder / os.path.basename(recorded_trace)}: identical: {len(recs)} messages" in proc.stdout
