"""Kill every process whose environment carries a given marker (the test run's KACTOR_TEST_RUN).

Thespian admins, brokers and JVMs can outlive a crashed test; this finds them through /proc/<pid>/environ
and ends them by pid: SIGTERM, then SIGKILL for the ones still alive after a grace period.
"""

from __future__ import annotations

import os
import signal
import sys
import time


def marked_pids(marker: str, var: str = "KACTOR_TEST_RUN") -> list[int]:
    """Processes (not this one) whose environment has ``var=marker``."""
    needle = f"{var}={marker}".encode()
    me = os.getpid()
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    out.append(int(entry))
        except OSError:
            continue
    return out


def sweep(marker: str, grace_s: float = 3.0) -> list[int]:
    pids = [p for p in marked_pids(marker) if p != os.getppid()]
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    for pid in pids:
        if _alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return pids


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")[:160].strip()
    except OSError:
        return "?"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


if __name__ == "__main__":
    if len(sys.argv) != 2 or not sys.argv[1]:
        print("usage: python scripts/sweep.py MARKER", file=sys.stderr)
        sys.exit(2)
    names = {p: _cmdline(p) for p in marked_pids(sys.argv[1])}
    left = sweep(sys.argv[1])
    if left:
        print(f"sweep: ended {len(left)} leftover process(es): "
              + "; ".join(f"{p} {names.get(p, '?')}" for p in left), file=sys.stderr)
