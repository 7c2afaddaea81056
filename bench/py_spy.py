"""Sampling profiles of running processes with py-spy (``--profile DIR`` of the data-path benches).

py-spy (PyPI) reads another Python process's stacks from outside, ``--nonblocking`` so the process is not paused: a
broker is profiled as it runs, with no hook in its code. Only samples of the thread holding the GIL are kept
(``--gil``): the Python CPU of the process (without it, threads blocked in select() or a condition wait were
counted as busy); time in C with the GIL released (socket and file system calls) is not in these profiles. Each
profiled process writes a raw file (collapsed stacks: ``frame;frame;... count``), summarised here by *self* samples
(the function on top of the stack: where the CPU is) and *inclusive* samples (anywhere on the stack: what the time
is spent under), in percent of the process's samples, with its threads told apart by their entry function.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass

RATE = 100


def py_spy_binary() -> str | None:
    here = os.path.join(os.path.dirname(sys.executable), "py-spy")
    return here if os.access(here, os.X_OK) else shutil.which("py-spy")


@dataclass
class Recording:
    name: str
    path: str
    proc: subprocess.Popen[bytes]


class Profiler:
    """py-spy recording each of ``pids`` (name → pid) into ``directory`` from start() to stop()."""

    def __init__(self, directory: str, pids: dict[str, int], label: str) -> None:
        binary = py_spy_binary()
        if binary is None:
            from kactor.cli import CliError

            raise CliError("--profile needs py-spy (pip install py-spy; it is in kactor's test extra)", 2)
        self.binary = binary
        self.directory = directory
        self.pids = pids
        self.label = label
        self.recordings: list[Recording] = []

    def start(self) -> None:
        from edges.children import spawn

        os.makedirs(self.directory, exist_ok=True)
        for name, pid in self.pids.items():
            path = os.path.join(self.directory, f"{self.label}-{name.replace(' ', '-')}.txt")
            proc = spawn([self.binary, "record", "--pid", str(pid), "--rate", str(RATE), "--format", "raw",
                          "--nolineno", "--nonblocking", "--gil", "--output", path],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
            self.recordings.append(Recording(name, path, proc))

    def stop(self) -> list[str]:
        """End the recordings (SIGINT: py-spy writes its file) and return each process's summary lines."""
        for r in self.recordings:
            if r.proc.poll() is None:
                r.proc.send_signal(signal.SIGINT)
        out = []
        for r in self.recordings:
            try:
                r.proc.wait(30)
            except subprocess.TimeoutExpired:
                r.proc.kill()
                r.proc.wait()
            out += summarise(r.name, r.path)
        return out


def read_stacks(path: str) -> Counter[tuple[str, ...]]:
    stacks: Counter[tuple[str, ...]] = Counter()
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                stack, _, count = line.rstrip("\n").rpartition(" ")
                if stack and count.isdigit():
                    stacks[tuple(stack.split(";"))] += int(count)
    except OSError:
        pass
    return stacks


def summarise(name: str, path: str, top: int = 15) -> list[str]:
    """Self and inclusive shares of the top functions, and the share of each thread (by its entry frame)."""
    stacks = read_stacks(path)
    total = sum(stacks.values())
    if not total:
        return [f"{name}: no samples ({path})"]
    own: Counter[str] = Counter()
    under: Counter[str] = Counter()
    threads: Counter[str] = Counter()
    for frames, n in stacks.items():
        own[frames[-1]] += n
        for f in set(frames):
            under[f] += n
        threads[_thread_entry(frames)] += n
    lines = [f"{name}: {total:,} samples at {RATE}/s holding the GIL ({total / RATE:.1f} s of Python CPU) — {path}",
             "  threads: " + "; ".join(f"{t} {100 * n / total:.0f}%" for t, n in threads.most_common(6))]
    lines += ["  self    " + f"{100 * n / total:5.1f}%  {f}" for f, n in own.most_common(top)]
    lines += ["  incl.   " + f"{100 * n / total:5.1f}%  {f}" for f, n in under.most_common(top)
              if not _is_plumbing(f)]
    return lines


def _thread_entry(frames: tuple[str, ...]) -> str:
    """The first frame below threading's bootstrap: what the thread runs."""
    for f in frames:
        if not _is_plumbing(f):
            return f
    return frames[-1]


def _is_plumbing(frame: str) -> bool:
    return frame.startswith(("_bootstrap ", "_bootstrap_inner ", "run (threading.py", "<module> ", "_run_module",
                             "_run_code ", "process ", "thread ")) or "(threading.py)" in frame
