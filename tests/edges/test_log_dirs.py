"""edges.log_dirs.LogDirProbe: a dir that stops being usable is reported once, as a LogDirFailure input to the
replica manager; a poke checks at once; close stops the thread."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from actors.names import EDGE_LOG_DIRS as EDGE_SENDER
from actors.names import REPLICA_MANAGER
from edges.log_dirs import LogDirProbe, RecordedLogDirs
from messages.partition import LogAppendFailed, LogDirFailure


class Inbox:
    """Stands in for the runtime: keeps what the probe injects (thread-safe, as Runtime.inject is)."""

    def __init__(self) -> None:
        self.items: list[tuple[str, Any, str]] = []
        self.lock = threading.Lock()

    def inject(self, to: str, body: Any, sender: str, cause: int | None = None) -> None:
        with self.lock:
            self.items.append((to, body, sender))


def _dirs(tmp_path: Path, n: int) -> tuple[str, ...]:
    dirs = tuple(str(tmp_path / f"d{i}") for i in range(n))
    for d in dirs:
        os.makedirs(d)
    return dirs


def _poll(predicate: Any, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_dir_that_goes_away_is_reported_once(tmp_path: Path) -> None:
    inbox = Inbox()
    dirs = _dirs(tmp_path, 3)
    probe = LogDirProbe(inbox, dirs)
    assert probe.check(write_test=True) == []
    shutil.rmtree(dirs[1])
    shutil.rmtree(dirs[2])
    Path(dirs[2]).write_text("")  # not a directory any more
    assert probe.check(write_test=False) == [1, 2]
    assert probe.check(write_test=True) == []  # reported once
    assert inbox.items == [(REPLICA_MANAGER, LogDirFailure(1, dirs[1]), EDGE_SENDER),
                           (REPLICA_MANAGER, LogDirFailure(2, dirs[2]), EDGE_SENDER)]


def test_dirs_are_reported_by_absolute_path(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    os.makedirs("rel")
    probe = LogDirProbe(Inbox(), ("rel",))
    assert probe.log_dirs == (str(tmp_path / "rel"),)


def test_a_poke_checks_at_once_and_close_stops_the_thread(tmp_path: Path) -> None:
    inbox = Inbox()
    dirs = _dirs(tmp_path, 2)
    probe = LogDirProbe(inbox, dirs, interval_s=3600.0)  # only a poke can wake it within the test
    probe.start()
    try:
        shutil.rmtree(dirs[0])
        probe.poke()
        _poll(lambda: inbox.items)
        assert inbox.items == [(REPLICA_MANAGER, LogDirFailure(0, dirs[0]), EDGE_SENDER)]
    finally:
        probe.close(timeout_s=10.0)
    assert not probe._thread.is_alive()


def test_no_thread_runs_before_start(tmp_path: Path) -> None:
    """The broker process starts it once ReplicaManagerInit is queued, so no LogDirFailure can overtake that."""
    probe = LogDirProbe(Inbox(), _dirs(tmp_path, 1), interval_s=0.01)
    assert not probe._thread.is_alive()
    probe.close(timeout_s=1.0)  # closing an unstarted probe is fine


def test_a_refused_append_becomes_an_input_and_a_replay_refuses_it_again(tmp_path: Path) -> None:
    """Live, the write answers (append_refused is False) and a refusal is injected as LogAppendFailed to the shard
    that saw it; a replay's RecordedLogDirs refuses exactly the recorded (dir index, seq) pairs."""
    inbox = Inbox()
    probe = LogDirProbe(inbox, (str(tmp_path / "a"),))
    assert probe.append_refused(0, 7) is False
    probe.append_failed("partition-3", 0, 7)
    assert inbox.items == [("partition-3", LogAppendFailed(0, 7), EDGE_SENDER)]
    recorded = RecordedLogDirs(frozenset({(0, 7), (1, 9)}))
    assert [recorded.append_refused(d, s) for d, s in ((0, 7), (1, 9), (0, 9), (1, 7))] == [True, True, False, False]
