"""checkpoint_write: the cost of rewriting a small per-partition file (a leader-epoch checkpoint) by rename against
in place, while other threads fsync on the same disk as ZooKeeper's transaction log does.

``.venv/bin/python -m bench.checkpoint_write [--files 400] [--fsyncers 2] [--rounds 3] [--dir DIR]``

Prints µs per write for: write a temp file and ``os.replace`` it over the old one (what core/broker/log.py did), and
``pwrite`` + ``ftruncate`` in place (what it does now, `_overwrite`), alternating, with the ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time


def _replace(path: str, data: bytes) -> None:
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _in_place(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.checkpoint_write", description=__doc__.split("\n\n")[0])
    p.add_argument("--files", type=int, default=400, help="partition dirs, one checkpoint each (default 400)")
    p.add_argument("--fsyncers", type=int, default=2, help="threads appending and fsyncing beside (default 2)")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds of each way (default 3)")
    p.add_argument("--dir", help="where to write (default: a temporary folder on the default temp disk)")
    a = p.parse_args(argv)
    if a.files < 1 or a.rounds < 1 or a.fsyncers < 0:
        p.error("--files and --rounds must be ≥ 1, --fsyncers ≥ 0")
    base = tempfile.mkdtemp(prefix="kactor-checkpoint-bench-", dir=a.dir)
    stop = threading.Event()

    def fsyncer(i: int) -> None:
        fd = os.open(os.path.join(base, f"txnlog-{i}"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            while not stop.is_set():
                os.write(fd, b"x" * 600)
                os.fsync(fd)
        finally:
            os.close(fd)

    threads = [threading.Thread(target=fsyncer, args=(i,), daemon=True) for i in range(a.fsyncers)]
    try:
        dirs = [os.path.join(base, f"t-{i}") for i in range(a.files)]
        for d in dirs:
            os.makedirs(d)
            with open(os.path.join(d, "leader-epoch-checkpoint"), "wb") as f:
                f.write(b"0\n1\n0 0\n")
        for t in threads:
            t.start()
        results: dict[str, list[float]] = {"rename": [], "in place": []}
        for r in range(a.rounds):
            for name, write in (("rename", _replace), ("in place", _in_place)):
                t0 = time.perf_counter()
                for i, d in enumerate(dirs):
                    write(os.path.join(d, "leader-epoch-checkpoint"), f"0\n2\n0 0\n{r + 1} {100 + i}\n".encode())
                results[name].append((time.perf_counter() - t0) / len(dirs) * 1e6)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=5)
        import shutil
        shutil.rmtree(base, ignore_errors=True)
    ren, inp = statistics.median(results["rename"]), statistics.median(results["in place"])
    print(f"{a.files} checkpoints, {a.fsyncers} fsyncing threads beside, {a.rounds} rounds each (median):")
    print(f"  rename (write temp + os.replace): {ren:,.0f} µs per write (min {min(results['rename']):,.0f}, "
          f"max {max(results['rename']):,.0f})")
    print(f"  in place (pwrite + ftruncate):    {inp:,.0f} µs per write (min {min(results['in place']):,.0f}, "
          f"max {max(results['in place']):,.0f})")
    print(f"  ratio rename / in place: {ren / inp:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
