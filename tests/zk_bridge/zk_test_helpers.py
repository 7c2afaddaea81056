"""Helpers the ZooKeeper tests share: polling with a deadline, and what /proc says about sockets and processes."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from messages.zk import ZkSessionEvent, ZkWatchEvent
from zk_bridge.executor import ZkExecutor

DEADLINE_S = 10.0
LOOPBACK_HEX = {"0100007F", "0000000000000000FFFF00000100007F"}  # 127.0.0.1 and ::ffff:127.0.0.1 as /proc shows them


def wait_for(predicate: Callable[[], Any], timeout: float = DEADLINE_S, what: str = "condition") -> Any:
    """Poll ``predicate()`` until it returns a truthy value (returned); AssertionError naming ``what`` on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.005)
    raise AssertionError(f"timed out waiting for {what}")


def listening_addresses(port: int) -> set[str]:
    """Local addresses (hex, as /proc/net shows them) of sockets listening on ``port``."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            addr, hexport = fields[1].rsplit(":", 1)
            if fields[3] == "0A" and int(hexport, 16) == port:  # 0A = LISTEN
                found.add(addr)
    return found


def pid_alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie is gone for our purposes)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Recorder:
    """Collects an executor's watch and session events (thread-safe)."""

    def __init__(self, ex: ZkExecutor) -> None:
        self.watches: list[ZkWatchEvent] = []
        self.sessions: list[ZkSessionEvent] = []
        ex.on_watch = self.watches.append
        ex.on_session = self.sessions.append

    def states(self) -> list[str]:
        return [e.state for e in self.sessions]
