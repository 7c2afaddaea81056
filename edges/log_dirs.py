"""LogDirProbe: a broker process's watcher of its ``log.dirs`` (Kafka's ReplicaManager LogDirFailureHandler).

It is the only way a dir goes offline in a broker process: the shards' LogManagers defer I/O errors and `poke` the
probe (through ``runtime.edges.log_dirs``), and the probe decides from its own thread, injecting one
`LogDirFailure` per dir that stops being usable (missing, not a directory, not writable). The decision is thus a
recorded input, and a replay on healthy scratch dirs takes the same dir offline at the same point. Kafka notices
failures only through I/O errors (LogDirFailureChannel); the probe adds a once-a-second check, O(log dirs),
independent of the number of partitions.

Who owns a dir is settled here too, before the broker opens any log: `LogDirLocks` holds each dir's ``.lock`` for
the broker's life (LogManager.lockLogDirs), so a second process refuses the dir instead of writing into it, and
`read_broker_metadata` / `write_broker_metadata` are the ``meta.properties`` file I/O of
``core.broker.broker_metadata`` (which cluster and which broker the dir belongs to).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from actors import names
from core.broker.broker_metadata import (
    META_PROPERTIES,
    BrokerMetadata,
    MetaPropertiesError,
    format_meta_properties,
    read_meta_properties,
)
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


# --------------------------------------------------------------------------------------------- ownership of a dir

LOCK_FILE = ".lock"  # LogManager.LockFile

# the lock files this process holds: fcntl locks are per process, so a second lock of the same file from this
# process would succeed; Java's FileChannel.tryLock refuses it (OverlappingFileLockException), and so does this
_held: set[str] = set()
_held_guard = threading.Lock()


class LogDirLockError(RuntimeError):
    """Another process (or another broker in this one) holds the dir's ``.lock``: Kafka's message."""


class LogDirLocks:
    """LogManager.lockLogDirs: an exclusive ``fcntl`` lock on ``<dir>/.lock`` of every log dir (a
    ``java.nio.channels.FileLock``, which on Linux is this same POSIX record lock, so a Kafka broker and a kactor
    broker exclude each other too), held until ``release()`` — the broker's whole life. The kernel drops the locks
    when the process dies, however it dies."""

    def __init__(self, log_dirs: tuple[str, ...]) -> None:
        self.log_dirs = tuple(os.path.abspath(d) for d in log_dirs)
        self._fds: dict[str, int] = {}

    def acquire(self) -> LogDirLocks:
        """Lock every dir (creating ``.lock`` if absent, as FileLock does); LogDirLockError with Kafka's message for
        the first dir already locked, OSError for a dir where the file cannot be opened. All or none are held."""
        try:
            for d in self.log_dirs:
                self._lock(d)
        except BaseException:
            self.release()
            raise
        return self

    def _lock(self, log_dir: str) -> None:
        path = os.path.join(log_dir, LOCK_FILE)
        busy = LogDirLockError(f"Failed to acquire lock on file {LOCK_FILE} in {log_dir}. A Kafka instance in "
                               "another process or thread is using this directory.")
        with _held_guard:
            if path in _held:
                raise busy
            # no O_TRUNC, nothing written: the file's content is not ours (FileChannel.open with CREATE, READ, WRITE)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                os.close(fd)
                if e.errno in (errno.EACCES, errno.EAGAIN):
                    raise busy from None
                raise
            _held.add(path)
            self._fds[path] = fd

    def release(self) -> None:
        """FileLock.destroy of every held lock; idempotent."""
        with _held_guard:
            for path, fd in self._fds.items():
                _held.discard(path)
                with contextlib.suppress(OSError):
                    os.close(fd)  # closing the descriptor drops its fcntl lock
            self._fds.clear()


def read_broker_metadata(log_dirs: tuple[str, ...]) -> dict[str, BrokerMetadata]:
    """BrokerMetadataCheckpoint.read of every dir: dir → its meta.properties, dirs without one left out.
    MetaPropertiesError for a file that exists but cannot be read or parsed. Nothing is written: the dirs may be a
    live broker's (the lock is taken after this check, as in Kafka)."""
    found: dict[str, BrokerMetadata] = {}
    for d in log_dirs:
        path = os.path.join(d, META_PROPERTIES)
        try:
            with open(path, encoding="latin-1") as f:  # Properties.load reads ISO 8859-1
                text = f.read()
        except FileNotFoundError:
            # Kafka warns; a first start is no reason to, and before start-up a warning would bury the one line
            # that says why a broker could not start
            log.debug("No meta.properties file under dir %s", os.path.abspath(path))
            continue
        except OSError as e:
            raise MetaPropertiesError(f"Failed to read meta.properties file under dir {os.path.abspath(path)} due "
                                      f"to {e.strerror or e}") from None
        found[d] = read_meta_properties(text, os.path.abspath(path))
    return found


def remove_broker_metadata_leftovers(log_dirs: tuple[str, ...]) -> None:
    """The ``meta.properties.tmp`` a write cut short left behind, deleted as BrokerMetadataCheckpoint.read deletes it
    (here once the dirs are locked: in a live broker's dir it could be that broker's write under way)."""
    for d in log_dirs:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(d, META_PROPERTIES + ".tmp"))


def write_broker_metadata(log_dirs: tuple[str, ...], metadata: BrokerMetadata,
                          clock: Callable[[], float] = time.time) -> None:
    """KafkaServer.checkpointBrokerMetadata → BrokerMetadataCheckpoint.write in every dir: the whole file to
    ``meta.properties.tmp``, fsynced, then renamed over ``meta.properties`` (Utils.atomicMoveWithFallback) and the
    rename made durable, so a crash leaves the old file or the new one, never a torn one."""
    text = format_meta_properties(metadata, clock()).encode("latin-1")
    for d in log_dirs:
        path = os.path.join(d, META_PROPERTIES)
        tmp = path + ".tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, text)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        dir_fd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
