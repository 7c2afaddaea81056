"""scripts/sim_digests.py prints each seed's event digest as `kactor sim` computes it (what issue #43's performance
work compares before and after each change)."""

from __future__ import annotations

import gc
import importlib.util
import logging
import os
import re

from kactor.cli import cmd_sim

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_sim_digests_prints_each_seeds_digest(capsys, tmp_path) -> None:
    spec = importlib.util.spec_from_file_location("sim_digests", os.path.join(ROOT, "scripts", "sim_digests.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    threshold = gc.get_threshold()
    try:  # the script silences logging, and the worker's set-up freezes the heap and raises the collector's
        # threshold: all put back after (the sim's tests that follow in this process count log records)
        assert module.main(["2", "3", "3"]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert [line.split()[0] for line in lines] == ["2", "3"]
        assert all(re.fullmatch(r"\d+ [0-9a-f]{16} \d+ \d+ \d+ 0", line) for line in lines)
        cmd_sim._init_worker(cmd_sim.Job(3, 3, str(tmp_path), None, str(tmp_path), digest=True))
        assert lines[0].split()[1] == cmd_sim._run_seed(2).result.event_digest
        # `kactor sim` itself shows no digest, so its workers write no event log out
        cmd_sim._init_worker(cmd_sim.Job(3, 3, str(tmp_path), None, str(tmp_path)))
        plain = cmd_sim._run_seed(2).result
        assert plain.event_digest == "" and plain.ok
        # --txn-check: the seed as `kactor sim --txn-check` runs it (another digest: the workload's events too)
        assert module.main(["2", "2", "3", "--txn-check"]) == 0
        (txn,) = capsys.readouterr().out.splitlines()
        cmd_sim._init_worker(cmd_sim.Job(3, 3, str(tmp_path), None, str(tmp_path), True, digest=True))
        assert txn.split()[1] == cmd_sim._run_seed(2).result.event_digest != lines[0].split()[1]
        assert module.main(["1"]) == 2
    finally:
        logging.disable(logging.NOTSET)
        gc.set_threshold(*threshold)
        gc.unfreeze()
