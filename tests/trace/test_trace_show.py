"""`kactor trace show`: listing with filters, the cause chain behind a message, the tree of its effects, --json
passthrough, and the same clear errors as `trace replay` — on small traces written by hand in the documented
format (docs/trace-format.md)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from messages.codec import TRACE_VERSION, to_json
from messages.common import Errors, TopicPartition
from messages.observability import (
    ChannelRequestCompleted,
    ControllerEventProcessed,
    LeaderElection,
    PartitionStateChange,
    StateChangeBatch,
)
from messages.requests import LeaderAndIsrPartitionState, LeaderAndIsrRequest, LeaderAndIsrResponse, PartitionError
from messages.runtime import TimerFired
from messages.zk import ZkWatchEvent

ORDERS_1 = TopicPartition("orders", 1)
ORDERS_10 = TopicPartition("orders", 10)


def _leader_and_isr(*tps: TopicPartition) -> LeaderAndIsrRequest:
    return LeaderAndIsrRequest(controller_id=0, controller_epoch=3, broker_epoch=40, live_leaders=(),
                               partition_states=tuple(LeaderAndIsrPartitionState(tp, 3, 0, 5, (0,), 7, (0, 1))
                                                      for tp in tps))


def _line(seq: int, ts: float, sender: str, receiver: str, message: Any, cause: int | None) -> str:
    """A record exactly as the writer lays it out: keys in order, no spaces."""
    return json.dumps({"seq": seq, "ts": ts, "sender": sender, "receiver": receiver, "type": type(message).__name__,
                       "payload": to_json(message), "cause": cause}, separators=(",", ":"))


def _header(process: str, broker_id: int, started_ms: float = 1000.0, version: int = TRACE_VERSION) -> str:
    return json.dumps({"trace_version": version, "process": process, "started_ms": started_ms,
                       "broker_id": broker_id, "config": {}, "kactor": "0.1.0"}, separators=(",", ":"))


def _write(path: Path, lines: list[str], newline_at_end: bool = True) -> Path:
    path.write_text("\n".join(lines) + ("\n" if newline_at_end else ""), encoding="utf-8")
    return path


# broker-0, the controller: broker 1's znode goes (seq 1), partition orders-1 moves to a new leader (2, 3), the
# channel reports the request done (7) and broker 0 answers (8); a timer (4) sends a request for orders-10 (5).
# File order 6 then 7, tree order 7 (under 3) before 6 (under 1): the tree must not follow the file.
BROKER_0 = [
    _line(1, 1001.0, "edge:zk", "controller", ZkWatchEvent("/brokers/ids", "CHILD"), None),
    _line(2, 1001.25, "controller", "state-change-log", StateChangeBatch(
        3, partition_changes=(PartitionStateChange(ORDERS_1, "OnlinePartition", "OfflinePartition"),),
        elections=(LeaderElection(ORDERS_1, "OfflinePartition", 0, 5, (0,)),)), 1),
    _line(3, 1001.5, "controller", "channel-0", _leader_and_isr(ORDERS_1), 1),
    _line(4, 1002.0, "edge:timer", "controller", TimerFired("auto-leader-rebalance-task"), None),
    _line(5, 1002.25, "controller", "channel-0", _leader_and_isr(ORDERS_10), 4),
    _line(6, 1003.0, "controller", "metrics",
          ControllerEventProcessed("BrokerChange", "BrokerChange", 1001.0, 1001.1, 1003.0, 0), 1),
    _line(7, 1003.5, "channel-0", "metrics",
          ChannelRequestCompleted(0, "LeaderAndIsr", 1001.5, 1001.6, 1003.5, 1, "NONE", 0), 3),
    _line(8, 1004.0, "edge:net", "channel-0",
          LeaderAndIsrResponse(Errors.NONE, (PartitionError(ORDERS_1, Errors.NONE),)), 7),
]
# broker-1: receives the request; its seq 1 has the same ts as broker-0's seq 1 (the process name breaks the tie)
BROKER_1 = [
    _line(1, 1001.0, "edge:net", "replica-manager", _leader_and_isr(ORDERS_1), None),
    _line(2, 1002.5, "edge:timer", "replica-manager", TimerFired("isr-expiration"), None),
]


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    d = tmp_path / "traces"
    d.mkdir()
    _write(d / "broker-0.jsonl", [_header("broker-0", 0), *BROKER_0])
    _write(d / "broker-1.jsonl", [_header("broker-1", 1, started_ms=1000.5), *BROKER_1])
    return d


def _show(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kactor", "trace", "show", *map(str, args)],
                          capture_output=True, text=True, timeout=60)


def _ok(*args: str | Path) -> list[str]:
    proc = _show(*args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == "", proc.stderr
    return proc.stdout.splitlines()


LAIR = "controller_id=0 controller_epoch=3 broker_epoch=40 partition_states=[1×LeaderAndIsrPartitionState]…"


def test_one_process_lists_every_message_in_file_order(traces: Path) -> None:
    assert _ok(traces, "--broker", "1") == [
        # times from the process's start (its header's started_ms, 1000.5)
        f"      1        0.500  edge:net → replica-manager      LeaderAndIsrRequest       {LAIR}",
        "      2        2.000  edge:timer → replica-manager    TimerFired                key=isr-expiration",
    ]
    assert _ok(traces, "--process", "broker-1") == _ok(traces, "--broker", "1") == _ok(traces / "broker-1.jsonl")


def test_several_processes_merge_by_time_then_process_then_seq(traces: Path) -> None:
    rows = _ok(traces, "--limit", "4")
    assert rows == [
        "broker-0        1        1.000  edge:zk → controller            ZkWatchEvent              "
        "path=/brokers/ids kind=CHILD",
        f"broker-1        1        1.000  edge:net → replica-manager      LeaderAndIsrRequest       {LAIR}",
        "broker-0        2        1.250  controller → state-change-log   StateChangeBatch          "
        "controller_epoch=3 partition_changes=[1×PartitionStateChange] replica_changes=[] elections=[1×Leade…",
        f"broker-0        3        1.500  controller → channel-0          LeaderAndIsrRequest       {LAIR}",
        "… 6 more (--limit N to show them)",
    ]
    order = [(r.split()[0], int(r.split()[1])) for r in _ok(traces)]
    assert order == [("broker-0", 1), ("broker-1", 1), ("broker-0", 2), ("broker-0", 3), ("broker-0", 4),
                     ("broker-0", 5), ("broker-1", 2), ("broker-0", 6), ("broker-0", 7), ("broker-0", 8)]


def _keys(rows: list[str]) -> list[tuple[str, str]]:
    """(process, seq) of rows listing several processes."""
    return [(r.split()[0], r.split()[1]) for r in rows]


def _seqs(rows: list[str]) -> list[str]:
    """The seq column of one process's rows."""
    return [r.split()[0] for r in rows]


def test_type_filter_is_exact_and_repeatable(traces: Path) -> None:
    assert _keys(_ok(traces, "--type", "TimerFired")) == [("broker-0", "4"), ("broker-1", "2")]
    assert _seqs(_ok(traces, "--broker", "0", "--type", "TimerFired", "--type", "ZkWatchEvent")) == ["1", "4"]
    proc = _show(traces, "--type", "Timer")  # a class name, not a prefix
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "no matching messages\n")


def test_partition_filter_finds_the_topic_partition_anywhere_in_the_payload(traces: Path) -> None:
    # orders-1 sits in a StateChangeBatch's changes and elections, LeaderAndIsr partition states, a response's
    # partition errors; orders-10 (seq 5) shares its text prefix but is another partition
    assert _keys(_ok(traces, "--partition", "orders-1")) == [
        ("broker-1", "1"), ("broker-0", "2"), ("broker-0", "3"), ("broker-0", "8")]
    assert _seqs(_ok(traces, "--broker", "0", "--partition", "orders-10")) == ["5"]
    assert _keys(_ok(traces, "--partition", "orders-1", "--type", "LeaderAndIsrRequest")) == [
        ("broker-1", "1"), ("broker-0", "3")]
    assert _show(traces, "--partition", "orders-2").stderr == "no matching messages\n"


def test_cause_chain_runs_from_the_root_input_down_to_the_message(traces: Path) -> None:
    assert _ok(traces, "--broker", "0", "--follow-cause", "8") == [
        "      1        0.000  edge:zk → controller            ZkWatchEvent              path=/brokers/ids kind=CHILD",
        f"      3        0.500  controller → channel-0          LeaderAndIsrRequest       {LAIR}",
        "      7        2.500  channel-0 → metrics             ChannelRequestCompleted   broker_id=0 "
        "request_type=LeaderAndIsr enqueued_ms=1001.5 sent_ms=1001.6 completed_ms=1003.5 attempt…",
        "      8        3.000  edge:net → channel-0            LeaderAndIsrResponse      error=NONE "
        "partition_errors=[1×PartitionError]",
    ]
    # a root is its own chain
    assert _seqs(_ok(traces, "--broker", "0", "--follow-cause", "4")) == ["4"]
    # one file: no --broker needed
    assert _ok(traces / "broker-0.jsonl", "--follow-cause", "5") == _ok(traces, "--process", "broker-0",
                                                                          "--follow-cause", "5")


def test_effects_are_a_depth_first_tree(traces: Path) -> None:
    assert _ok(traces, "--broker", "0", "--follow-cause", "1", "--effects") == [
        "      1        0.000  edge:zk → controller            ZkWatchEvent              path=/brokers/ids kind=CHILD",
        "      2        0.250  └─ controller → state-change-log  StateChangeBatch          controller_epoch=3 "
        "partition_changes=[1×PartitionStateChange] replica_changes=[] elections=[1×Leade…",
        f"      3        0.500  └─ controller → channel-0       LeaderAndIsrRequest       {LAIR}",
        "      7        2.500    └─ channel-0 → metrics        ChannelRequestCompleted   broker_id=0 "
        "request_type=LeaderAndIsr enqueued_ms=1001.5 sent_ms=1001.6 completed_ms=1003.5 attempt…",
        "      8        3.000      └─ edge:net → channel-0     LeaderAndIsrResponse      error=NONE "
        "partition_errors=[1×PartitionError]",
        "      6        2.000  └─ controller → metrics         ControllerEventProcessed  event=BrokerChange "
        "controller_state=BrokerChange enqueued_ms=1001.0 started_ms=1001.1 finished_ms=1…",
    ]
    assert _seqs(_ok(traces, "--broker", "0", "--follow-cause", "3", "--effects")) == ["3", "7", "8"]
    # a filtered-out member still carries its effects: 8 hangs below the hidden 7
    assert _seqs(_ok(traces, "--broker", "0", "--follow-cause", "1", "--effects", "--partition", "orders-1")) == [
        "2", "3", "8"]
    rows = _ok(traces, "--broker", "0", "--follow-cause", "1", "--effects", "--limit", "2")
    assert _seqs(rows[:2]) == ["1", "2"] and rows[2:] == ["… 4 more (--limit N to show them)"]


def test_json_prints_the_matching_lines_unchanged(traces: Path, tmp_path: Path) -> None:
    # a line spaced out by hand is still a valid record, and comes out exactly as it went in
    spaced = json.dumps(json.loads(BROKER_0[3]))
    one = _write(tmp_path / "broker-0.jsonl", [_header("broker-0", 0), *BROKER_0[:3], spaced, *BROKER_0[4:]])
    assert _ok(one, "--json", "--type", "TimerFired") == [spaced]
    assert _ok(traces, "--json", "--partition", "orders-1") == [BROKER_1[0], *BROKER_0[1:3], BROKER_0[7]]
    assert _ok(traces, "--broker", "0", "--follow-cause", "8", "--json") == [BROKER_0[i] for i in (0, 2, 6, 7)]
    # effects as JSON stay in file order: a valid excerpt of the trace
    assert _ok(traces, "--broker", "0", "--follow-cause", "1", "--effects", "--json") == [
        BROKER_0[i] for i in (0, 1, 2, 5, 6, 7)]
    # no limit by default; past --limit, a note on stderr keeps stdout JSON lines
    assert len(_ok(traces, "--json")) == len(BROKER_0) + len(BROKER_1)
    proc = _show(traces, "--json", "--limit", "3")
    assert proc.stdout.splitlines() == [BROKER_0[0], BROKER_1[0], BROKER_0[1]]
    assert proc.stderr == "… 7 more (--limit N to show them)\n"


def test_default_limit_is_200_rows(tmp_path: Path) -> None:
    lines = [_line(n, 1000.0 + n, "edge:timer", "controller", TimerFired("tick"), None) for n in range(1, 251)]
    path = _write(tmp_path / "broker-0.jsonl", [_header("broker-0", 0), *lines])
    rows = _ok(path)
    assert len(rows) == 201 and rows[-1] == "… 50 more (--limit N to show them)"
    assert len(_ok(path, "--json")) == 250


def test_a_terminal_gets_a_table(traces: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    from kactor.cli import main

    monkeypatch.setenv("COLUMNS", "150")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["trace", "show", str(traces), "--broker", "0", "--follow-cause", "8"]) == 0
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out).splitlines()
    assert out[0].strip() == "broker-0: the causes of seq 8"
    assert [c.strip() for c in out[2].strip("┃").split("┃")] == [
        "seq", "ms after root", "sender → receiver", "type", "payload"]
    body = [[c.strip() for c in line.strip("│").split("│")] for line in out if line.startswith("│")]
    assert [r[:4] for r in body] == [
        ["1", "0.000", "edge:zk → controller", "ZkWatchEvent"],
        ["3", "0.500", "controller → channel-0", "LeaderAndIsrRequest"],
        ["7", "2.500", "channel-0 → metrics", "ChannelRequestCompleted"],
        ["8", "3.000", "edge:net → channel-0", "LeaderAndIsrResponse"]]
    assert body[0][4] == "path=/brokers/ids kind=CHILD"


def _fails(code: int, message: str, *args: str | Path, stdout: str = "") -> None:
    proc = _show(*args)
    assert proc.returncode == code, (args, proc.stdout, proc.stderr)
    assert message in proc.stderr, (args, proc.stderr)
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout == stdout, proc.stdout


def test_bad_traces_give_one_clear_error(tmp_path: Path) -> None:
    head = _header("broker-0", 0)
    _fails(1, f"kactor trace: {tmp_path / 'nope'}: no such trace folder", tmp_path / "nope")
    empty = tmp_path / "empty"
    empty.mkdir()
    _fails(1, "no trace files (*.jsonl) in this folder", empty)
    _fails(1, "a.jsonl:1: not a kactor trace", _write(tmp_path / "a.jsonl", ["hello"]))
    _fails(1, "v.jsonl:1: unsupported trace_version 99 (this kactor reads versions 1, 2, 3, 4)",
           _write(tmp_path / "v.jsonl", [_header("v", 0, version=99), *BROKER_0]))
    corrupt = _write(tmp_path / "c.jsonl", [head, BROKER_0[0], "{oops", *BROKER_0[1:]])
    # a listing streams: the rows before the bad line are out already
    _fails(1, "c.jsonl:3: corrupt trace line (JSONDecodeError", corrupt, "--json", stdout=BROKER_0[0] + "\n")
    _fails(1, "c.jsonl:3: corrupt trace line", corrupt, "--follow-cause", "4")
    no_type = json.loads(BROKER_0[1])
    del no_type["type"]
    _fails(1, "m.jsonl:3: corrupt trace line (KeyError: 'type')",
           _write(tmp_path / "m.jsonl", [head, BROKER_0[0], json.dumps(no_type)]), "--follow-cause", "2")


def test_a_truncated_last_line_is_ignored_with_a_warning(tmp_path: Path) -> None:
    cut = _write(tmp_path / "t.jsonl", [_header("t", 0), *BROKER_0[:3], BROKER_0[3][:30]], newline_at_end=False)
    proc = _show(cut, "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == BROKER_0[:3]
    assert proc.stderr == f"WARNING {cut}:5: truncated last line ignored (the process stopped mid-write)\n"
    # ... but a cut line with others after it is corruption
    _fails(1, "u.jsonl:2: corrupt trace line",
           _write(tmp_path / "u.jsonl", [_header("u", 0), BROKER_0[0][:30], *BROKER_0[1:]]), "--json")


def test_bad_selections(traces: Path) -> None:
    b0 = traces / "broker-0.jsonl"
    _fails(1, "broker-0.jsonl: no message with seq 99 (its seqs end at 8)", traces, "--broker", "0",
           "--follow-cause", "99")
    _fails(1, "broker-0.jsonl: no message with seq 99 (its seqs end at 8)", b0, "--follow-cause", "99", "--effects")
    _fails(1, f"{traces}: no trace for broker 7 (found: broker-0, broker-1)", traces, "--broker", "7")
    _fails(1, f"{traces}: no trace for process broker-0.1 (found: broker-0, broker-1)", traces, "--process",
           "broker-0.1")
    _fails(2, "--follow-cause needs one process: --broker N or --process NAME (found: broker-0, broker-1)", traces,
           "--follow-cause", "3")
    _fails(2, "--effects needs --follow-cause SEQ", traces, "--broker", "0", "--effects")
    _fails(2, "argument --partition: 'orders' is not TOPIC-PARTITION", traces, "--partition", "orders")
    _fails(2, "argument --limit: must be at least 1", traces, "--limit", "0")
    _fails(2, "not allowed with argument", traces, "--broker", "0", "--process", "broker-0")
    _fails(2, "argument --follow-cause: invalid int value", traces, "--broker", "0", "--follow-cause", "x")


def test_type_filter_matches_a_carried_message() -> None:
    """SendRequest.request / NetSend.body / NetRequest.body / ShardRequest.body carry the controller's requests."""
    from kactor.trace.show import carried_type

    lair = {"@": "LeaderAndIsrRequest", "controller_id": 0}
    assert carried_type({"@": "SendRequest", "broker_id": 1, "request": lair}) == "LeaderAndIsrRequest"
    assert carried_type({"@": "NetRequest", "connection_id": 3, "body": lair}) == "LeaderAndIsrRequest"
    assert carried_type({"@": "TimerFired", "key": "x"}) is None
    assert carried_type({"@": "ZkResponse", "body": [1, 2]}) is None


def test_bytes_fields_show_their_length_in_either_trace_version() -> None:
    import base64

    from kactor.trace.show import _brief

    for n in (0, 1, 2, 3, 1000):
        data = bytes(range(256)) * 4
        assert _brief({"@b64": base64.b64encode(data[:n]).decode()}, False) == f"<{n} bytes>"
        assert _brief({"@b": data[:n].decode("latin-1")}, False) == f"<{n} bytes>"
