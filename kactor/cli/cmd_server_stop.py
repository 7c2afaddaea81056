"""``kactor server-stop``: Kafka 2.6.3's ``bin/kafka-server-stop.sh``.

The script finds the local broker processes (``ps ax | grep -i 'kafka\\.Kafka' | grep java``) and sends each the
signal ``$SIGNAL`` names (default TERM: the broker's controlled shutdown); with none it prints ``No kafka server to
stop`` and exits 1. It takes no options in 2.6.3 (``--process-role`` is KRaft's, 2.8 on). A kactor broker is the
process ``kactor broker ...`` (or ``python -m kactor broker ...``, as ``kactor cluster`` starts them), found here by
its command line in /proc.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "server-stop",
        description="Sends SIGTERM (or the signal the SIGNAL environment variable names, as kafka-server-stop.sh) "
                    "to every local 'kactor broker' process; 'No kafka server to stop' and exit 1 when there is none.")
    p.set_defaults(func=run, _parser=p)


def is_broker_command(argv: list[str]) -> bool:
    """Whether a command line is a kactor broker's: ``.../kactor broker ...`` or ``python -m kactor broker ...``."""
    for i, word in enumerate(argv[:-1]):
        script = i == 0 or (i == 1 and "python" in os.path.basename(argv[0]))  # the program, or python's script
        named = (script and os.path.basename(word) == "kactor") or (word == "kactor" and i > 0 and argv[i - 1] == "-m")
        if named and argv[i + 1] == "broker":
            return True
    return False


def broker_pids(proc: Path = Path("/proc"), me: int | None = None) -> list[int]:
    """The pids of the local kactor broker processes (the script's ``ps ax | grep``), this process excluded."""
    me = os.getpid() if me is None else me
    pids = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if is_broker_command([w.decode(errors="replace") for w in raw.split(b"\0") if w]):
            pids.append(int(entry.name))
    return sorted(pids)


def signal_of(name: str) -> int:
    """``kill -s $SIGNAL``: TERM, SIGTERM, KILL, 9, ..."""
    text = name.strip().upper()
    if text.isdigit():
        return int(text)
    try:
        return int(getattr(signal, text if text.startswith("SIG") else f"SIG{text}"))
    except AttributeError:
        raise ValueError(f"{name}: invalid signal specification") from None


def stop(proc: Path, environ: dict[str, str] | os._Environ[str],
         kill: Callable[[int, int], None] = os.kill) -> int:
    """kafka-server-stop.sh: the signal to every broker; exit 1 with its line when there is none."""
    try:
        sig = signal_of(environ.get("SIGNAL") or "TERM")
    except ValueError as e:
        print(f"kill: {e}", file=sys.stderr)
        return 1
    pids = broker_pids(proc)
    if not pids:
        print("No kafka server to stop")
        return 1
    code = 0
    for pid in pids:
        try:
            kill(pid, sig)
        except ProcessLookupError:  # ended between the scan and the signal: stopped anyway
            continue
        except PermissionError:
            print(f"kill: ({pid}) - Operation not permitted", file=sys.stderr)
            code = 1
    return code


def run(args: argparse.Namespace) -> int:
    return stop(Path("/proc"), os.environ)
