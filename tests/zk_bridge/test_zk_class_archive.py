"""The ZooKeeper JVM's class-data archive (zk_bridge/server.py, issue #41): the first server stopped in order writes
it into the user's cache, every later one maps it; a JVM killed writes none; its name follows the JVM's and the
jars' files; KACTOR_ZOOKEEPER_CDS=0 turns it off."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from zk_bridge import server
from zk_bridge.server import EmbeddedZooKeeper, check_prerequisites, class_archive, class_archive_flags, four_letter


def _cmdline(pid: int) -> list[str]:
    with open(f"/proc/{pid}/cmdline", encoding="utf-8") as f:
        return f.read().split("\0")


def test_the_archive_lives_in_the_users_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = class_archive("/bin/sh")
    assert path is not None
    assert os.path.dirname(path) == str(tmp_path / "kactor")
    assert os.path.basename(path).startswith("zookeeper-") and path.endswith(".jsa")
    assert class_archive("/bin/sh") == path  # the same files, the same archive


def test_a_new_jar_gets_an_archive_of_its_own(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    jar = tmp_path / "zookeeper.jar"
    jar.write_bytes(b"3.8.0")
    monkeypatch.setattr(server, "ZOOKEEPER_JAR", str(jar))
    before = class_archive("/bin/sh")
    jar.write_bytes(b"3.8.4 upgraded")
    assert class_archive("/bin/sh") != before


def test_no_archive_when_turned_off_or_without_a_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("KACTOR_ZOOKEEPER_CDS", "0")
    assert class_archive("/bin/sh") is None
    monkeypatch.delenv("KACTOR_ZOOKEEPER_CDS")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", "")
    monkeypatch.setattr(os.path, "expanduser", lambda p: p)  # no home: "~" stays as it is
    assert class_archive("/bin/sh") is None


def test_the_flags_map_an_archive_that_exists_else_write_one(tmp_path: Path) -> None:
    archive = tmp_path / "zookeeper-x.jsa"
    dump = str(tmp_path / "work" / "classes.jsa")
    assert class_archive_flags(None, dump) == []
    assert class_archive_flags(str(archive), dump) == ["-XX:+IgnoreUnrecognizedVMOptions",
                                                       f"-XX:ArchiveClassesAtExit={dump}"]
    archive.write_bytes(b"archive")
    assert class_archive_flags(str(archive), dump) == ["-XX:+IgnoreUnrecognizedVMOptions",
                                                       f"-XX:SharedArchiveFile={archive}"]


@pytest.mark.cluster
def test_the_first_server_stopped_writes_the_archive_the_next_maps(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    archive = class_archive(check_prerequisites())
    assert archive is not None

    killed = EmbeddedZooKeeper(tick_ms=200).start()
    assert f"-XX:ArchiveClassesAtExit={killed.work_dir}/classes.jsa" in _cmdline(killed.pid)
    killed.kill(signal.SIGKILL)  # a crash runs no shutdown hook: no archive, whole or not
    killed.stop()
    assert not os.path.exists(archive)

    with EmbeddedZooKeeper(tick_ms=200) as first:
        assert f"-XX:ArchiveClassesAtExit={first.work_dir}/classes.jsa" in _cmdline(first.pid)
    assert os.path.getsize(archive) > 0
    assert os.listdir(os.path.dirname(archive)) == [os.path.basename(archive)]  # no partial copy left behind

    with EmbeddedZooKeeper(tick_ms=200) as second:
        assert f"-XX:SharedArchiveFile={archive}" in _cmdline(second.pid)
        assert four_letter("127.0.0.1", second.port, "ruok") == "imok"
        assert "Mode: standalone" in four_letter("127.0.0.1", second.port, "srvr")
