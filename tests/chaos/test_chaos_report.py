"""kactor/chaos/report.py: the seed lines (with issue #26's three figures), the replay command of a failing seed,
the summary."""

from __future__ import annotations

import io

import attrs

from kactor.chaos.history import Violation
from kactor.chaos.report import Progress, seed_lines, summary_lines
from kactor.chaos.runner import SeedResult

CLEAN = SeedResult(3, 25, {"sigkill": 2, "partition": 1}, 900, (), 80.04, None, None, 2.34, 7.5)
BROKEN = SeedResult(7, 25, {"zk-kill": 1}, 500, (
    Violation("lost", "t0-0: acknowledged 'a' ..."), Violation("stuck", "t1-0 has no leader"),
    Violation("gap", "30.0 s waiting on live leaders ..."), Violation("duplicate", "t0-0: 'b' at offsets 1, 2 ..."),
    Violation("duplicate", "t0-0: 'c' at offsets 3, 4 ..."),
    Violation("server-error", "broker 1's log: no actor 'replica-manager' for Produce")), 95.0, "/w/seed-7", None,
    30.04, 7.5)
FAILED_RUN = SeedResult(9, 25, {}, 0, (), 3.0, "/w/seed-9", "RuntimeError: timed out")


def test_seed_lines() -> None:
    assert seed_lines(CLEAN, 3, 1) == [
        "seed 3    ok    25 steps, 3 faults, 900 acked  safety 0  lost 0  divergent 0  stuck 0  txn 0  gap 2.3/7.5 s  "
        "duplicates 0  unknown-server-error 0  80.0 s"]
    assert seed_lines(BROKEN, 3, 3) == [
        "seed 7    FAIL  25 steps, 1 faults, 500 acked  safety 0  lost 1  divergent 0  stuck 1  txn 0  gap 30.0/7.5 s  "
        "duplicates 2  unknown-server-error 1  95.0 s",
        "  lost: t0-0: acknowledged 'a' ...",
        "  stuck: t1-0 has no leader",
        "  gap: 30.0 s waiting on live leaders ...",
        "  duplicate: t0-0: 'b' at offsets 1, 2 ...",
        "  duplicate: t0-0: 'c' at offsets 3, 4 ...",
        "  server-error: broker 1's log: no actor 'replica-manager' for Produce",
        "  kept: /w/seed-7 (events.log, result.json, traces/, cluster/)",
        "  replay: kactor chaos --seeds 7 --steps 25 --brokers 3 --zookeeper-ensemble 3 --keep"]
    # copies the producer re-sent under a new epoch are shown beside the duplicates, not counted among them
    resent = attrs.evolve(CLEAN, client_resends=2)
    assert seed_lines(resent, 3, 1)[0].endswith(
        "duplicates 0 (+2 re-sent by the client)  unknown-server-error 0  80.0 s")
    assert resent.ok
    # a run that failed before its checks has no gap to show
    assert seed_lines(FAILED_RUN, 3, 1)[0].endswith(
        "stuck 0  txn 0  gap -  duplicates 0  unknown-server-error 0  3.0 s")


def test_summary() -> None:
    assert summary_lines([CLEAN, BROKEN], 176.2) == [
        "2 seeds x 25 steps: 0 safety violations, 1 lost records, 0 divergent records, 1 stuck operations, "
        "0 transaction violations",
        "faults: partition 1, sigkill 2, zk-kill 1",
        "acknowledged records checked: 1400; longest acknowledgement gap 30.0 s (seed 7; bound 7.5 s, 1 over it), "
        "2 duplicated records, 1 UNKNOWN_SERVER_ERROR answers",
        "1 seeds clean, 1 failed: 7",
        "time: 176 s in all, 87.5 s per seed (median; 80.0-95.0)"]
    assert summary_lines([FAILED_RUN], 3.0)[2] == (
        "acknowledged records checked: 0; longest acknowledgement gap -, 0 duplicated records, "
        "0 UNKNOWN_SERVER_ERROR answers")
    assert summary_lines([], 0) == ["no seed ran"]


def test_progress_off_a_terminal_writes_plain_lines_at_most_every_30_s() -> None:
    out = io.StringIO()
    p = Progress(50, out)
    p.update(0, "seed 1 starting")
    p.update(1, "seed 1 step 1")  # within 30 s of the last line: not written
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("[" + "." * 30 + "] 0/50 steps  seed 1 starting  ")
