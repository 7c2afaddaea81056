"""Each `kactor sim` seed's event digest, one line a seed, to tell whether a change moved the simulator's behaviour.

``PYTHONHASHSEED=0 python scripts/sim_digests.py FIRST LAST STEPS [--txn-check] > digests.txt`` (run from the
tree to measure; ``PYTHONPATH`` on it for a ``git archive`` copy): seeds FIRST..LAST of STEPS steps, each run as
``kactor sim`` runs it in one process (`kactor.cli.cmd_sim`'s worker: the composition root, the garbage-collector
policy), printing ``seed digest acks answers delivered violations``; ``--txn-check`` runs them as ``kactor sim
--txn-check`` does (the transactional workload and its checker on every seed). Two trees with the same lines ran
every seed alike, event by event (sim.run's digest is a hash of the seed's event log); ``diff`` the two files
(issue #43's performance work keeps them identical, docs/performance-log.md).
"""

from __future__ import annotations

import logging
import shutil
import sys
import tempfile


def main(argv: list[str]) -> int:
    txn_check = "--txn-check" in argv
    argv = [a for a in argv if a != "--txn-check"]
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    first, last, steps = (int(a) for a in argv)
    logging.disable(logging.CRITICAL)
    from kactor.cli import cmd_sim

    scratch = tempfile.mkdtemp(prefix="kactor-sim-digests-")
    try:
        cmd_sim._init_worker(cmd_sim.Job(steps, 3, scratch, None, scratch, txn_check, digest=True))
        for seed in range(first, last + 1):
            r = cmd_sim._run_seed(seed).result
            print(seed, r.event_digest, r.acks, r.answers, r.delivered, len(r.violations), flush=True)
    finally:
        shutil.rmtree(scratch, True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
