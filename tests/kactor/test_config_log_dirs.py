"""KafkaConfig.logDirs (issue #39): ``log.dirs`` when set — even to nothing — else ``log.dir``, each a
comma-separated list, and 2.6.3's validateValues refuses an empty one ("At least one log directory must be defined
via log.dirs or log.dir."): an empty ``log.dirs=`` (a ``${DATA}`` left unset) does not fall back to log.dir's
default, where a reboot wipes the data."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kactor.config import ConfigError, build_config

REQUIRED = {"broker.id": "0", "zookeeper.connect": "127.0.0.1:2181"}
REFUSAL = "requirement failed: At least one log directory must be defined via log.dirs or log.dir."


@pytest.mark.parametrize("given", [{"log.dirs": ""}, {"log.dirs": " , "}, {"log.dir": ""},
                                   {"log.dirs": "", "log.dir": "/var/kafka"}])
def test_an_empty_log_dirs_is_refused(given: dict[str, str]) -> None:
    with pytest.raises(ConfigError) as e:
        build_config({**REQUIRED, **given})
    assert str(e.value) == REFUSAL


@pytest.mark.parametrize(("given", "dirs"), [
    ({}, ("/tmp/kafka-logs",)),
    ({"log.dir": "/a, /b"}, ("/a", "/b")),
    ({"log.dirs": "/c,/d", "log.dir": "/a"}, ("/c", "/d")),
])
def test_log_dirs_else_log_dir_each_a_list(given: dict[str, str], dirs: tuple[str, ...]) -> None:
    assert build_config({**REQUIRED, **given}).log_dirs == dirs


def test_kactor_broker_exits_with_the_refusal() -> None:
    # a process of its own: `kactor broker` re-executes itself with a fixed hash seed
    done = subprocess.run([sys.executable, "-m", "kactor", "broker", "--override", "broker.id=0",
                           "--override", "zookeeper.connect=127.0.0.1:1", "--override", "log.dirs="],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert (done.returncode, done.stderr) == (1, f"kactor broker: {REFUSAL}\n")
