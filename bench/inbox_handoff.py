"""``python -m bench.inbox_handoff [--runs N] [--rounds N]``: CPU µs a hand-off from an edge's thread to the driver,
through the runtime's inbox (`actors.runtime.Inbox`) and through ``queue.Queue`` (what it replaced), in the same run.

Two threads play ping-pong through two queues of one kind: each round one thread puts, the other, waiting, is woken
and takes, then answers the same way — the worst case for a hand-off, where every put must wake a driver that has
nothing else to do (as a broker between requests). The figure is the process's CPU time over ``--rounds`` rounds,
per hand-off (two a round), the median of ``--runs``; the kinds take turns. The ratio is inbox ÷ queue.Queue (below 1:
the inbox is cheaper). Nothing here is timed by the wall clock: with two threads on a busy machine, CPU time is the
steadier figure.
"""

from __future__ import annotations

import argparse
import queue
import statistics
import sys
import threading
import time
from typing import Any

from bench.common import git_commit, load_average, machine_line


def _ping_pong(kind: type, rounds: int) -> float:
    """CPU µs a hand-off: ``rounds`` round trips between this thread and an echoing one, through two ``kind``s."""
    there: Any = kind()
    back: Any = kind()

    def echo() -> None:
        for _ in range(rounds):
            back.put(there.get(timeout=10))

    thread = threading.Thread(target=echo, daemon=True)
    thread.start()
    c0 = time.process_time()
    for i in range(rounds):
        there.put(i)
        back.get(timeout=10)
    cpu = time.process_time() - c0
    thread.join()
    return cpu / (2 * rounds) * 1e6


def main(argv: list[str] | None = None) -> int:
    from actors.runtime import Inbox

    p = argparse.ArgumentParser(prog="python -m bench.inbox_handoff", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=7, help="measured runs of each kind (median; default 7)")
    p.add_argument("--rounds", type=int, default=50_000, help="round trips a run (default 50,000)")
    args = p.parse_args(argv)
    if args.runs < 1 or args.rounds < 1:
        p.error("--runs and --rounds must be >= 1")
    load = load_average()
    kinds = {"inbox": Inbox, "queue.Queue": queue.Queue}
    figures: dict[str, list[float]] = {name: [] for name in kinds}
    _ping_pong(Inbox, 1000)  # threads and code warm
    for _ in range(args.runs):
        for name, kind in kinds.items():
            figures[name].append(_ping_pong(kind, args.rounds))
    print(f"inbox hand-off: {args.rounds:,} round trips a run, {args.runs} runs; {machine_line()}; "
          f"commit {git_commit()}")
    for name, values in figures.items():
        print(f"  {name:<12} {statistics.median(values):6.2f} µs of CPU a hand-off (median; "
              f"{', '.join(f'{v:.2f}' for v in values)})")
    ratio = statistics.median(figures["inbox"]) / statistics.median(figures["queue.Queue"])
    print(f"ratio inbox ÷ queue.Queue: {ratio:.3f}")
    print(f"load {load} (before) → {load_average()} (after)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
