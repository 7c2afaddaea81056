"""Child processes that never outlive the kactor command that started them (issue #19 item 7).

Two mechanisms, because each alone has a hole:

- ``PR_SET_PDEATHSIG``: the kernel signals the child when its parent dies, however it dies (SIGKILL included). It
  fires when the *thread* that forked the child exits, not the process: a broker or ZooKeeper (re)started from a
  short-lived thread would be killed when that thread ends. So every child is forked by one daemon thread that
  lives as long as the process (``spawn``).
- A **janitor**: a small child that holds the read end of a pipe from us. When the pipe reaches EOF (we exited, or
  were SIGKILLed), it SIGTERMs every child we registered that is still the same process (pid + start time, so a
  recycled pid is never hit), SIGKILLs what is left after a grace period, removes the temporary directories we
  registered, and runs the undo commands we registered, newest first (``ip netns delete`` and ``ip link delete``
  for ``--hosts netns``: edges/netns.py). A SIGKILLed parent runs no cleanup code of its own, so without
  the janitor its temporary directories (and namespaces) would stay.

The janitor ignores SIGINT and SIGHUP (a terminal's Ctrl-C or hang-up reaches the whole foreground group; the
janitor must outlive its parent to clean up) and exits as soon as it has cleaned up.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

_PR_SET_PDEATHSIG = 1
# How long the janitor lets children stop on SIGTERM before it SIGKILLs them.
JANITOR_GRACE_S = 5.0


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """preexec_fn: ask the kernel to send ``sig`` to this child when the thread that forked it dies."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, sig)


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc/<pid>/stat field 22), None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    return int(text[text.rindex(")") + 2:].split()[19])


# -- the spawner thread ----------------------------------------------------------------------------------------------
class _Spawner:
    """One daemon thread that forks every child, so PR_SET_PDEATHSIG fires only when the process dies."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[tuple[Callable[[], Any], queue.SimpleQueue[tuple[bool, Any]]]] = \
            queue.SimpleQueue()
        self.pid = os.getpid()
        threading.Thread(target=self._loop, name="kactor-spawner", daemon=True).start()

    def _loop(self) -> None:
        while True:
            fn, answer = self.jobs.get()
            try:
                answer.put((True, fn()))
            except BaseException as e:  # noqa: BLE001 - handed back to the caller
                answer.put((False, e))

    def call(self, fn: Callable[[], Any]) -> Any:
        answer: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        self.jobs.put((fn, answer))
        ok, value = answer.get()
        if not ok:
            raise value
        return value


_spawner: _Spawner | None = None
_spawner_lock = threading.Lock()


def spawn(args: list[str], *, janitor_dirs: tuple[str, ...] = (), **popen: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(args, **popen)`` for a child that dies with this process: forked by the spawner thread with
    PR_SET_PDEATHSIG = SIGTERM, and registered with the janitor (with ``janitor_dirs`` to remove after it)."""
    global _spawner
    with _spawner_lock:
        if _spawner is None or _spawner.pid != os.getpid():  # a forked copy of us has no spawner thread
            _spawner = _Spawner()
        spawner = _spawner
    proc: subprocess.Popen[bytes] = spawner.call(lambda: subprocess.Popen(args, preexec_fn=die_with_parent, **popen))
    jan = janitor()
    jan.watch_pid(proc.pid)
    for d in janitor_dirs:
        jan.watch_dir(d)
    return proc


# -- the janitor -----------------------------------------------------------------------------------------------------
class Janitor:
    """Our end of the janitor's pipe: register pids and directories it must clean up if we die."""

    def __init__(self) -> None:
        read_fd, self._write_fd = os.pipe()
        self.pid_of_owner = os.getpid()
        self._lock = threading.Lock()
        try:
            # No PDEATHSIG and a session of its own: it must outlive us (and a terminal's hang-up) to clean up.
            self.proc = subprocess.Popen([sys.executable, "-S", "-c", _JANITOR_SOURCE, str(JANITOR_GRACE_S)],
                                         stdin=read_fd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         start_new_session=True)
        finally:
            os.close(read_fd)

    def _send(self, line: str) -> None:
        with self._lock, contextlib.suppress(OSError):
            os.write(self._write_fd, (line + "\n").encode("utf-8", "surrogateescape"))

    def watch_pid(self, pid: int) -> None:
        started = start_time(pid)
        if started is not None:
            self._send(f"pid {pid} {started}")

    def watch_dir(self, path: str) -> None:
        self._send(f"dir {os.path.abspath(path)}")

    def forget_dir(self, path: str) -> None:
        """A directory that is no longer temporary (or that we removed ourselves)."""
        self._send(f"undir {os.path.abspath(path)}")

    def watch_undo(self, argv: list[str]) -> None:
        """A command to run if we die (after the pids are gone), e.g. ``["ip", "netns", "delete", name]``."""
        self._send(f"undo {json.dumps(argv)}")

    def forget_undo(self, argv: list[str]) -> None:
        """We ran that command ourselves."""
        self._send(f"keep {json.dumps(argv)}")


_janitor: Janitor | None = None


def janitor() -> Janitor:
    """This process's janitor, started on first use."""
    global _janitor
    with _spawner_lock:
        if _janitor is None or _janitor.pid_of_owner != os.getpid():
            _janitor = Janitor()
        return _janitor


def install_stop_signals(on_stop: Callable[[int], None]) -> None:
    """SIGTERM and SIGHUP (a closed terminal) both ask for an orderly stop, as Kafka's scripts treat them; the
    handler only records the request, so a signal in the middle of a shutdown does not cut it short."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: on_stop(signum))


# The janitor's program: stdlib only, run with -S so it starts in a few milliseconds.
_JANITOR_SOURCE = r"""
import os, shutil, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
grace = float(sys.argv[1])
pids, dirs, undo = {}, [], []
def started(pid):
    try:
        text = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return None if fields[0] == "Z" else int(fields[19])
for raw in sys.stdin.buffer:
    kind, _, arg = raw.decode("utf-8", "surrogateescape").rstrip("\n").partition(" ")
    if kind == "pid":
        pid, t = arg.split()
        pids[int(pid)] = int(t)
    elif kind == "dir":
        dirs.append(arg)
    elif kind == "undir" and arg in dirs:
        dirs.remove(arg)
    elif kind == "undo":
        undo.append(arg)
    elif kind == "keep" and arg in undo:
        undo.remove(arg)
live = lambda: [p for p, t in pids.items() if started(p) == t]
for sig in (signal.SIGTERM, signal.SIGKILL):
    for p in live():
        try:
            os.kill(p, sig)
        except OSError:
            pass
    deadline = time.monotonic() + grace
    while live() and time.monotonic() < deadline:
        time.sleep(0.05)
for d in dirs:
    shutil.rmtree(d, ignore_errors=True)
if undo:
    import json, subprocess
    for argv in reversed(undo):
        try:
            subprocess.run(json.loads(argv), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=30)
        except Exception:
            pass
"""
