"""LogDirProbe: a broker process's watcher of its ``log.dirs`` (Kafka's ReplicaManager LogDirFailureHandler).

It is the only way a dir goes offline in a broker process: the shards' LogManagers defer I/O errors and `poke` the
probe (through ``runtime.edges.log_dirs``), and the probe decides from its own thread, injecting one
`LogDirFailure` per dir that stops being usable (missing, not a directory, not writable). The decision is thus a
recorded input, and a replay on healthy scratch dirs takes the same dir offline at the same point. Kafka notices
failures only through I/O errors (LogDirFailureChannel); the probe adds a once-a-second check, O(log dirs),
independent of the number of partitions.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any, Protocol

from actors import names
from messages.partition import LogAppendFailed, LogDirFailure

log = logging.getLogger("kactor.broker")

LOG_DIR_PROBE_INTERVAL_S = 1.0


class Injector(Protocol):
    def inject(self, to: str, body: Any, sender: str, cause: int | None = None) -> None: ...


class LogDirProbe:
    """Checks every dir each ``interval_s`` and at once when poked (then with a write test); reports a dir once."""

    def __init__(self, runtime: Injector, log_dirs: tuple[str, ...],
                 interval_s: float = LOG_DIR_PROBE_INTERVAL_S) -> None:
        self.runtime = runtime
        self.log_dirs = tuple(os.path.abspath(d) for d in log_dirs)
        self.interval_s = interval_s
        self._wake = threading.Event()
        self._closed = False
        self._reported: set[int] = set()
        self._thread = threading.Thread(target=self._run, name="log-dir-probe", daemon=True)

    def start(self) -> None:
        """Start watching (the broker process does this once the replica manager has its ReplicaManagerInit
        queued, so a LogDirFailure never reaches it first)."""
        self._thread.start()

    def poke(self) -> None:
        """An I/O error was seen: check now, with a write test."""
        self._wake.set()

    def append_failed(self, shard: str, dir_index: int, seq: int) -> None:
        """Record that ``shard``'s append to dir ``dir_index`` was refused while it handled message ``seq``: the file
        system's answer decided something, so it becomes an input of the trace (a replay re-enacts it)."""
        self.runtime.inject(shard, LogAppendFailed(dir_index, seq), names.EDGE_LOG_DIRS)

    def append_refused(self, dir_index: int, seq: int) -> bool:
        """Live, the write itself says whether it failed."""
        return False

    def close(self, timeout_s: float | None = None) -> None:
        """Stop watching; idempotent. With ``timeout_s``, wait that long for the thread to end."""
        self._closed = True
        self._wake.set()
        if timeout_s is not None and self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout_s)

    @staticmethod
    def usable(log_dir: str, write_test: bool) -> bool:
        if not (os.path.isdir(log_dir) and os.access(log_dir, os.W_OK | os.X_OK)):
            return False
        if write_test:
            probe = os.path.join(log_dir, ".kactor-log-dir-probe")
            try:
                os.close(os.open(probe, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644))
                os.unlink(probe)
            except OSError:
                return False
        return True

    def check(self, write_test: bool) -> list[int]:
        """One round: report every dir that has become unusable since the last; returns their indexes."""
        failed = []
        for i, d in enumerate(self.log_dirs):
            if i not in self._reported and not self.usable(d, write_test=write_test):
                self._reported.add(i)
                failed.append(i)
                log.error("log dir %s is unusable: taking its partitions offline", d)
                self.runtime.inject(names.REPLICA_MANAGER, LogDirFailure(i, d), names.EDGE_LOG_DIRS)
        return failed

    def _run(self) -> None:
        while not self._closed:
            poked = self._wake.wait(self.interval_s)
            self._wake.clear()
            if self._closed:
                return
            self.check(write_test=poked)


class RecordedLogDirs:
    """A replay's log-dir edge: the recorded run's file system, as far as it decided anything. The appends it refused
    (the trace's LogAppendFailed inputs, read ahead) are refused again at the same message; every dir failure
    itself arrives as the recorded LogDirFailure input, so there is nothing to probe."""

    def __init__(self, refused: frozenset[tuple[int, int]]) -> None:
        self.refused = refused

    def poke(self) -> None:
        pass

    def append_failed(self, shard: str, dir_index: int, seq: int) -> None:
        pass  # already in the trace being replayed

    def append_refused(self, dir_index: int, seq: int) -> bool:
        return (dir_index, seq) in self.refused

    def close(self) -> None:
        pass
