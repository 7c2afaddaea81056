"""Issue #8 on real clusters: every broker process's trace recorded by this session's cluster tests replays with
``kactor trace replay --check`` as identical.

Named ``zz`` so that it runs after the other cluster tests (pytest runs files in order), when their clusters have
stopped and their traces are flushed under the session's `cluster_trace_root`. Run alone, it records its own: a
3-broker story (topics created, a broker SIGKILLed and restarted, a preferred election, a reassignment, a controller
failover, a topic deleted — kactor.demo) and replays that.
"""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

import pytest
from cluster_helpers import KILLED_UNDER_LOAD, run_kactor, stop_shared_clusters

pytestmark = pytest.mark.cluster

OWN = "test_zz_"  # folders this file's own clusters write
_INPUT = re.compile(rb'\{"seq":\d+,"ts":[^,]+,"sender":"(?:edge:|cli)')


def _recorded_folders(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and glob.glob(str(p / "*.jsonl")))


def _run_own_scenario(start_cluster) -> list[str]:  # noqa: ANN001
    from kactor.demo import Scenario

    c = start_cluster(3)
    sc = Scenario(c.lc, partitions=4, say=lambda _: None, wait_s=40.0)
    try:
        result = sc.run()
        sc.stop_cluster()  # one broker at a time, controller last; every trace flushed and closed
    finally:
        sc.close()
        c.stop()
    assert result.failures == [], result.steps
    assert result.victim is not None and len(result.controllers) == 2
    assert result.controllers[1][1] == result.controllers[0][1] + 1  # failover: the next controller epoch
    return [name for name, _, _ in result.steps]


def test_every_recorded_broker_trace_replays_identically(cluster_trace_root: Path, start_cluster) -> None:  # noqa: ANN001
    stop_shared_clusters()
    others = [p for p in _recorded_folders(cluster_trace_root) if not p.name.startswith(OWN)]
    if not others:
        steps = _run_own_scenario(start_cluster)
        assert steps == ["start", "create", "produce", "kill", "restart", "preferred", "reassign", "failover",
                         "delete"]
    folders = _recorded_folders(cluster_trace_root)
    assert folders, f"no trace folder under {cluster_trace_root}"
    jobs = str(min(2, os.cpu_count() or 1))
    files: list[str] = []
    for folder in folders:
        found = sorted(glob.glob(str(folder / "*.jsonl")))
        if (folder / KILLED_UNDER_LOAD).exists():
            # only each broker's first incarnation (broker-<id>.jsonl): see conftest's killed_under_load
            found = [f for f in found if re.fullmatch(r"broker-\d+\.jsonl", os.path.basename(f))]
        files += found
    # one replay process for every file: started once per folder, its start-up cost more than the suite's timeout
    proc = run_kactor("trace", "replay", *files, "--check", "--jobs", jobs, check=False, timeout=600)
    identical = {m.group(1) for m in re.finditer(r"^(.+\.jsonl): identical: \d+ messages", proc.stdout, re.M)}
    failures = [] if proc.returncode == 0 else [f"exit {proc.returncode}\n{proc.stderr[-2000:]}"]
    failures += [f"{f}: not identical" for f in files if f not in identical]
    if failures:
        failures.append(proc.stdout[-5000:])
    replayed = len(files)
    assert not failures, "\n\n".join(failures)
    assert replayed >= 3
    # the traces replayed from their inputs alone, and no input holds a summary (trace version 3): a replay never
    # needs bytes a trace does not have
    inputs_summarised = summaries = 0
    for folder in folders:
        for path in glob.glob(str(folder / "*.jsonl")):
            with open(path, "rb") as f:
                for line in f:
                    if b'"@rec":' in line:
                        summaries += 1
                        inputs_summarised += _INPUT.match(line) is not None
    assert inputs_summarised == 0
    if not others:  # the story produced records: the leaders' ShardRequests and the fetches' answers summarise them
        assert summaries > 0
