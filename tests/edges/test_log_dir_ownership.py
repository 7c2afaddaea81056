"""edges/log_dirs.py's ownership of a log dir (issue #39): LogDirLocks takes ``<dir>/.lock`` as Kafka 2.6.3's
LogManager.lockLogDirs does — a POSIX record lock, what Java's FileLock is on Linux — so a second process (or a
second broker in this one) is refused with Kafka's message; and meta.properties is written atomically and read back,
a leftover ``.tmp`` deleted first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.broker.broker_metadata import BrokerMetadata, MetaPropertiesError
from edges.log_dirs import (
    LogDirLockError,
    LogDirLocks,
    read_broker_metadata,
    remove_broker_metadata_leftovers,
    write_broker_metadata,
)

# another process takes the lock as a JVM's FileChannel.tryLock does (fcntl F_SETLK, a write lock on the whole file)
HOLDER = ("import fcntl, os, sys\n"
          "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)\n"
          "fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
          "print('locked', flush=True)\n"
          "sys.stdin.read()\n")


def _hold(path: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
    return holder


def _busy(log_dir: Path) -> str:
    return (f"Failed to acquire lock on file .lock in {log_dir}. A Kafka instance in another process or thread is "
            "using this directory.")


def test_a_dir_locked_by_another_process_is_refused_until_it_lets_go(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    holder = _hold(b / ".lock")
    try:
        locks = LogDirLocks((str(a), str(b)))
        with pytest.raises(LogDirLockError) as e:
            locks.acquire()
        assert str(e.value) == _busy(b)
        # all or none: a's lock was let go too, so another process could have a now
        probe = subprocess.run([sys.executable, "-c", HOLDER, str(a / ".lock")], input="", capture_output=True,
                               text=True, timeout=30)
        assert probe.returncode == 0, probe.stderr
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(10)
    locks.acquire()  # the holder is gone, and the kernel dropped its lock with it
    locks.release()


def test_a_held_lock_keeps_every_other_process_out_until_released(tmp_path: Path) -> None:
    locks = LogDirLocks((str(tmp_path),)).acquire()
    try:
        other = subprocess.run([sys.executable, "-c", HOLDER, str(tmp_path / ".lock")], input="",
                               capture_output=True, text=True, timeout=30)
        assert other.returncode != 0 and "BlockingIOError" in other.stderr  # EAGAIN: the lock is ours
        # this process again (a second broker here): refused as Java's OverlappingFileLockException is
        with pytest.raises(LogDirLockError) as e:
            LogDirLocks((str(tmp_path),)).acquire()
        assert str(e.value) == _busy(tmp_path)
    finally:
        locks.release()
    again = subprocess.run([sys.executable, "-c", HOLDER, str(tmp_path / ".lock")], input="", capture_output=True,
                           text=True, timeout=30)
    assert again.returncode == 0, again.stderr
    locks.release()  # idempotent


def test_the_lock_file_is_created_and_never_written(tmp_path: Path) -> None:
    (tmp_path / ".lock").write_bytes(b"left by Kafka")
    locks = LogDirLocks((str(tmp_path),)).acquire()
    locks.release()
    assert (tmp_path / ".lock").read_bytes() == b"left by Kafka"
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    LogDirLocks((str(fresh),)).acquire().release()
    assert (fresh / ".lock").read_bytes() == b""
    with pytest.raises(OSError):  # a dir that is not there: the broker refuses it as unusable
        LogDirLocks((str(tmp_path / "missing"),)).acquire()


def test_meta_properties_round_trip_in_every_dir(tmp_path: Path) -> None:
    dirs = (str(tmp_path / "d0"), str(tmp_path / "d1"), str(tmp_path / "d2"))
    for d in dirs:
        os.mkdir(d)
    (tmp_path / "d2" / "meta.properties.tmp").write_text("torn")  # a write cut short
    write_broker_metadata(dirs[:2], BrokerMetadata(3, "abc"), clock=lambda: 0.0)
    assert (tmp_path / "d0" / "meta.properties").read_text() == (
        "#\n#Thu Jan 01 00:00:00 UTC 1970\ncluster.id=abc\nversion=0\nbroker.id=3\n")
    assert sorted(os.listdir(dirs[0])) == ["meta.properties"]  # the .tmp it went through was renamed
    assert read_broker_metadata(dirs) == {dirs[0]: BrokerMetadata(3, "abc"), dirs[1]: BrokerMetadata(3, "abc")}
    assert os.listdir(dirs[2]) == ["meta.properties.tmp"]  # a read writes nothing: the dir may be a live broker's
    remove_broker_metadata_leftovers(dirs)  # once locked, as BrokerMetadataCheckpoint.read does
    assert os.listdir(dirs[2]) == []
    (tmp_path / "d1" / "meta.properties").write_text("version=9\nbroker.id=3\n")
    with pytest.raises(MetaPropertiesError, match="Unrecognized version of the server meta.properties file: 9"):
        read_broker_metadata(dirs)
