"""`replay_many` with jobs: this process and forked workers share the brokers' chains; results come back in the
order of the paths given, each broker's incarnations replayed in order; a worker's failure is raised here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from kactor.hashseed import SEED

_JOB = """
import json, logging, sys
logging.disable(logging.CRITICAL)
from kactor.trace.replay import replay_many
try:
    rs = replay_many(sys.argv[2:], jobs=int(sys.argv[1]))
    print(json.dumps([[r.path, r.identical, r.compared] for r in rs]))
except Exception as e:
    print(json.dumps({"error": type(e).__name__, "message": str(e)}))
"""


def _run(jobs: int, paths: list[str]) -> object:
    proc = subprocess.run([sys.executable, "-c", _JOB, str(jobs), *paths], capture_output=True, text=True,
                          timeout=240, env=dict(os.environ, PYTHONHASHSEED=SEED))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_jobs_share_the_chains_and_keep_the_order(recorded_trace: str, tmp_path) -> None:  # noqa: ANN001
    # three "brokers" (the same recording under three names: each replays on its own scratch folder)
    paths = [str(tmp_path / name) for name in ("broker-2.jsonl", "broker-0.jsonl", "broker-1.jsonl")]
    for p in paths:
        shutil.copy(recorded_trace, p)
    serial = _run(1, paths)
    parallel = _run(2, paths)
    assert [row[0] for row in parallel] == paths  # the order given, whichever process replayed each
    assert parallel == serial
    assert all(identical and compared > 0 for _, identical, compared in parallel)


def test_a_workers_failure_is_raised(recorded_trace: str, tmp_path) -> None:  # noqa: ANN001
    good = [str(tmp_path / "broker-0.jsonl"), str(tmp_path / "broker-1.jsonl")]
    for p in good:
        shutil.copy(recorded_trace, p)
    bad = str(tmp_path / "broker-2.jsonl")  # the largest, taken first: by this process or the worker
    with open(recorded_trace, encoding="utf-8") as f:
        header, *body = f.read().splitlines()
    with open(bad, "w", encoding="utf-8") as f:
        f.write("\n".join([header, *body, *body[:50], "{not json", *body[:5]]) + "\n")
    out = _run(2, [*good, bad])
    assert isinstance(out, dict) and out["error"] == "TraceError", out
    assert "broker-2.jsonl" in out["message"], out
