"""The file system a broker's logs live on, as one injectable object (issue #28: a simulated disk).

Kafka's log layer talks to the OS through FileChannel / RandomAccessFile / Files; here core/broker's logs, segments,
indexes and checkpoint files make every file-system call through a `Disk`. A live broker (and every unit test that
builds a LogManager without one) uses `OS_DISK`, whose methods ARE the ``os`` functions (bound as instance
attributes: ``disk.write`` costs what ``os.write`` cost, no wrapper frame); the simulator hands its own
(``sim/disk.py`` ``SimDisk``: files in memory with fsync semantics, torn by a power loss, a log dir that fails) through
the replica manager actor's ``disk`` edge slot.

The protocol is the smallest set of calls the logs make, named and typed as ``os`` names them (descriptors are ints;
errors are the ``OSError`` subclasses ``os`` raises: FileNotFoundError, ...), plus six whole-file helpers the logs
used ``open()`` and ``shutil`` for (read_file, reader, write_file, append_file, fsync_path, rmtree).
"""

from __future__ import annotations

import os
import shutil
from typing import BinaryIO, Protocol


class Disk(Protocol):
    """What the logs need of a file system (POSIX semantics; ``os``'s signatures)."""

    # descriptors (os.open's flags: O_RDONLY, O_WRONLY, O_RDWR, O_APPEND, O_CREAT, O_TRUNC)
    def open(self, path: str, flags: int, mode: int = 0o777) -> int: ...

    def close(self, fd: int) -> None: ...

    def write(self, fd: int, data: bytes | bytearray | memoryview) -> int: ...

    def pread(self, fd: int, size: int, offset: int) -> bytes: ...

    def pwrite(self, fd: int, data: bytes | bytearray | memoryview, offset: int) -> int: ...

    def ftruncate(self, fd: int, length: int) -> None: ...

    def fsync(self, fd: int) -> None: ...

    # paths
    def truncate(self, path: str, length: int) -> None: ...

    def unlink(self, path: str) -> None: ...

    def replace(self, src: str, dst: str) -> None: ...

    def rename(self, src: str, dst: str) -> None: ...

    def listdir(self, path: str) -> list[str]: ...

    def mkdir(self, path: str) -> None: ...

    def makedirs(self, path: str, exist_ok: bool = False) -> None: ...

    def getsize(self, path: str) -> int: ...

    def getmtime(self, path: str) -> float: ...

    def exists(self, path: str) -> bool: ...

    def isdir(self, path: str) -> bool: ...

    def utime(self, path: str, times: tuple[float, float]) -> None: ...

    # whole files and trees (what the logs used open() and shutil for)
    def read_file(self, path: str) -> bytes: ...

    def reader(self, path: str) -> BinaryIO:
        """The file opened to be read front to back in large buffered reads (LogSegment.recover)."""
        ...

    def write_file(self, path: str, data: bytes, fsync: bool = False) -> None: ...

    def append_file(self, path: str, data: bytes) -> None: ...

    def fsync_path(self, path: str) -> None: ...

    def rmtree(self, path: str) -> None: ...


def _read_file(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _reader(path: str) -> BinaryIO:
    return open(path, "rb", buffering=1 << 20)  # noqa: SIM115 (the caller closes it: a context manager)


def _write_file(path: str, data: bytes, fsync: bool = False) -> None:
    """The file's whole contents (created or truncated); with ``fsync``, forced to disk before it is closed (a
    checkpoint's temp file: CheckpointFile.write)."""
    with open(path, "wb") as f:
        f.write(data)
        if fsync:
            f.flush()
            os.fsync(f.fileno())


def _append_file(path: str, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


def _fsync_path(path: str) -> None:
    """FileChannel.force of a file opened by name (or a directory: Utils.flushDir)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _rmtree(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


class OsDisk:
    """The live file system: each method is the ``os`` function itself, set on the instance so that a call costs a
    slot read and a dict hit more than ``os.write`` did, and no Python frame."""

    def __init__(self) -> None:
        self.open = os.open
        self.close = os.close
        self.write = os.write
        self.pread = os.pread
        self.pwrite = os.pwrite
        self.ftruncate = os.ftruncate
        self.fsync = os.fsync
        self.truncate = os.truncate
        self.unlink = os.unlink
        self.replace = os.replace
        self.rename = os.rename
        self.listdir = os.listdir
        self.mkdir = os.mkdir
        self.makedirs = os.makedirs
        self.getsize = os.path.getsize
        self.getmtime = os.path.getmtime
        self.exists = os.path.exists
        self.isdir = os.path.isdir
        self.utime = os.utime
        self.read_file = _read_file
        self.reader = _reader
        self.write_file = _write_file
        self.append_file = _append_file
        self.fsync_path = _fsync_path
        self.rmtree = _rmtree

    def __repr__(self) -> str:
        return "OS_DISK"


OS_DISK: Disk = OsDisk()
