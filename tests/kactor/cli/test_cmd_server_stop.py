"""``kactor server-stop`` as bin/kafka-server-stop.sh of 2.6.3: the signal $SIGNAL names (TERM by default) to every
local broker process, "No kafka server to stop" and exit 1 when there is none. Only a fake /proc is scanned here
(the machine's real brokers are not this test's to stop); the processes signalled are this test's own."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from kactor.cli.cmd_server_stop import broker_pids, is_broker_command, signal_of, stop


def _proc(root: Path, pid: int, *argv: str) -> None:
    (root / str(pid)).mkdir(parents=True)
    (root / str(pid) / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")


@pytest.mark.parametrize(("argv", "broker"), [
    (["/usr/bin/python3", "-m", "kactor", "broker", "--log-level", "INFO", "b.properties"], True),
    (["/venv/bin/kactor", "broker", "server.properties"], True),
    (["kactor", "broker"], True),
    (["/usr/bin/python3", "/venv/bin/kactor", "broker"], True),
    (["/venv/bin/kactor", "server-stop"], False),
    (["/venv/bin/kactor", "cluster", "--brokers", "3"], False),
    (["python3", "-m", "pytest", "kactor", "broker"], False),
    (["vim", "kactor/broker_process.py"], False),
])
def test_a_broker_is_a_kactor_broker_command_line(argv: list[str], broker: bool) -> None:
    assert is_broker_command(argv) is broker


def test_no_broker_prints_the_scripts_line_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _proc(tmp_path, 10, "/venv/bin/kactor", "cluster")
    (tmp_path / "self").mkdir()
    assert stop(tmp_path, {}, kill=lambda pid, sig: pytest.fail("nothing to signal")) == 1
    assert capsys.readouterr().out == "No kafka server to stop\n"


@pytest.mark.parametrize(("env", "expected"), [({}, -signal.SIGTERM), ({"SIGNAL": "KILL"}, -signal.SIGKILL)])
def test_each_broker_gets_the_signal(tmp_path: Path, env: dict[str, str], expected: int) -> None:
    children = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    try:
        for child in children:
            _proc(tmp_path, child.pid, "/usr/bin/python3", "-m", "kactor", "broker", "b.properties")
        _proc(tmp_path, 1, "/sbin/init")
        assert broker_pids(tmp_path) == sorted(c.pid for c in children)
        assert stop(tmp_path, env) == 0
        assert [c.wait(timeout=10) for c in children] == [expected, expected]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()


def test_signal_names_as_kill_s_takes_them() -> None:
    assert [signal_of(s) for s in ("TERM", "SIGTERM", "kill", "9")] == [15, 15, 9, 9]
    with pytest.raises(ValueError, match="invalid signal"):
        signal_of("NOPE")
