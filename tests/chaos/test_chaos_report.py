"""kactor/chaos/report.py: the seed lines, the replay command of a failing seed, the summary."""

from __future__ import annotations

import io

from kactor.chaos.history import Violation
from kactor.chaos.report import Progress, seed_lines, summary_lines
from kactor.chaos.runner import SeedResult

CLEAN = SeedResult(3, 25, {"sigkill": 2, "partition": 1}, 900, (), 80.04, None)
BROKEN = SeedResult(7, 25, {"zk-kill": 1}, 500, (Violation("lost", "t0-0: acknowledged 'a' ..."),
                                                 Violation("stuck", "t1-0 has no leader")), 95.0, "/w/seed-7")


def test_seed_lines() -> None:
    assert seed_lines(CLEAN, 3, 1) == [
        "seed 3    ok    25 steps, 3 faults, 900 acked  safety 0  lost 0  divergent 0  stuck 0  80.0 s"]
    assert seed_lines(BROKEN, 3, 3) == [
        "seed 7    FAIL  25 steps, 1 faults, 500 acked  safety 0  lost 1  divergent 0  stuck 1  95.0 s",
        "  lost: t0-0: acknowledged 'a' ...",
        "  stuck: t1-0 has no leader",
        "  kept: /w/seed-7 (events.log, result.json, traces/, cluster/)",
        "  replay: kactor chaos --seeds 7 --steps 25 --brokers 3 --zookeeper-ensemble 3 --keep"]


def test_summary() -> None:
    assert summary_lines([CLEAN, BROKEN], 176.2) == [
        "2 seeds x 25 steps: 0 safety violations, 1 lost records, 0 divergent records, 1 stuck operations",
        "faults: partition 1, sigkill 2, zk-kill 1",
        "acknowledged records checked: 1400",
        "1 seeds clean, 1 failed: 7",
        "time: 176 s in all, 87.5 s per seed (median; 80.0-95.0)"]
    assert summary_lines([], 0) == ["no seed ran"]


def test_progress_off_a_terminal_writes_plain_lines_at_most_every_30_s() -> None:
    out = io.StringIO()
    p = Progress(50, out)
    p.update(0, "seed 1 starting")
    p.update(1, "seed 1 step 1")  # within 30 s of the last line: not written
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("[" + "." * 30 + "] 0/50 steps  seed 1 starting  ")
