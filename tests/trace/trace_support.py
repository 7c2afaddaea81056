"""Helpers of the trace tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def run_replay_job(trace: str, tamper_seq: int | None = None) -> dict:
    """Replay ``trace`` with --check in a child process running with PYTHONHASHSEED=0, as the broker did (a set's
    iteration order depends on the seed); tests/trace/replay_job.py reports the result as JSON."""
    from kactor.hashseed import SEED

    args = [sys.executable, os.path.join(os.path.dirname(__file__), "replay_job.py"), trace]
    if tamper_seq is not None:
        args.append(str(tamper_seq))
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONHASHSEED=SEED))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])
