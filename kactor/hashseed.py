"""Fix Python's string hash seed in processes whose traces must replay exactly.

Kafka's algorithms iterate sets of topics and partitions; a Python set of strings iterates in an order that depends
on the per-process hash seed. Broker processes and replays run with PYTHONHASHSEED=0 so that order is the same.
"""

from __future__ import annotations

import os
import sys

SEED = "0"


def ensure_fixed_hash_seed() -> None:
    """Re-exec the current command with PYTHONHASHSEED=0 unless it already runs with it."""
    if os.environ.get("PYTHONHASHSEED") == SEED:
        return
    env = dict(os.environ, PYTHONHASHSEED=SEED)
    argv = [sys.executable, *sys.orig_argv[1:]] if hasattr(sys, "orig_argv") else [sys.executable, *sys.argv]
    os.execve(sys.executable, argv, env)
