"""`kactor chaos`'s Jepsen-style transaction check on real brokers (issue #40): one short seed whose transactional
producers reach the brokers through the run's proxies, some of their connections held past their request timeout,
judged by sim/txn_checker.py: transactions committed and aborted, and no anomaly.

Seed 6 is chosen (delay_draws and the schedule being pure, checked below) for connection delays at three of its
first four steps and one fault only (an unusable log dir at step 3), so the producers have time to commit and abort.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kactor.chaos.delay_proxy import delay_draws
from kactor.chaos.runner import ChaosConfig, ChaosRun
from kactor.chaos.schedule import make_schedule

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

SEED, STEPS = 6, 4


def test_a_seed_with_connection_delays_is_checked_clean(tmp_path: Path):
    assert sum(d is not None for d in delay_draws(SEED, STEPS, 3)) == 3
    assert [s.fault for s in make_schedule(SEED, STEPS, 3, 1)] == [None, None, None, "logdir"]
    run = ChaosRun(ChaosConfig(SEED, STEPS, trace=False), str(tmp_path / f"seed-{SEED}"), keep=True)
    result = run.run()
    folder = tmp_path / f"seed-{SEED}"
    events = (folder / "events.log").read_text()
    assert result.error is None, events
    assert [v for v in result.violations if v.kind == "anomaly"] == [], (result.anomaly_table, events)
    assert result.ok, (result.violations, events)
    outcomes = result.txn_outcomes
    assert outcomes is not None and outcomes["committed"] > 0 and outcomes["aborted"] > 0, (outcomes, events)
    # the producers went through the proxies, and connections of theirs were held
    assert "through the proxies 127.0.0.1:" in events
    assert len(run.delays_held) >= 1, events
    assert json.loads((folder / "result.json").read_text())["txn_outcomes"] == outcomes
    history = json.loads((folder / "txn-history.json").read_text())
    committed_values = {e["value"] for e in history["committed"]}
    written = {v for t in history["txns"] if t["outcome"] == "committed" for _, v in t["writes"]}
    assert written and written <= committed_values  # every committed value read back at read_committed
    assert history["samples"], "no last-stable-offset sample taken"
    assert any(r["final"] for r in history["offset_reads"])
