"""`kactor sim`'s worker frees each seed's closed cluster as the seed ends (kactor.cli.cmd_sim._collect_seed): its
brokers' actors, runtimes and procedures hold one another in cycles, which otherwise wait for the young collections
of the seeds after it and make each of them walk the dead cluster."""

from __future__ import annotations

import gc

from kactor.cli import cmd_sim
from sim.runtime import Sim


def _sims() -> int:
    return sum(isinstance(o, Sim) for o in gc.get_objects())


def test_a_seeds_cluster_is_gone_when_the_worker_returns_its_outcome(tmp_path) -> None:
    threshold = gc.get_threshold()
    gc.collect()
    before = _sims()
    try:
        cmd_sim._init_worker(cmd_sim.Job(3, 3, str(tmp_path), None, str(tmp_path)))
        outcome = cmd_sim._run_seed(2)
        assert outcome.result.ok and outcome.result.steps == 3
        assert _sims() == before  # no Sim of the seed left, not even in a cycle
    finally:  # the worker's set-up freezes the heap and raises the young threshold: put back for the tests after
        gc.unfreeze()
        gc.set_threshold(*threshold)
