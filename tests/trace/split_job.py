"""``python tests/trace/split_job.py SPLIT JOBS TAMPER_SEQ|- TRACE...``: replay the traces whole (as `replay_chain`,
each broker's chain in this process) and as units (`replay_split` with SPLIT and JOBS), with the input recorded at
TAMPER_SEQ altered in both (replay_job.py's `tamper_at`), and print both as one JSON line, with the units the split
replay ran."""

from __future__ import annotations

import json
import logging
import shutil
import sys
from typing import Any

from replay_job import tamper_at  # this folder's: a script's own folder is on its path

from kactor.trace.reader import broker_chains
from kactor.trace.replay import ReplayResult, _scratch_dir, replay
from kactor.trace.split import UnitTime, replay_split


def _row(r: ReplayResult) -> dict[str, Any]:
    d = r.divergence
    return {"path": r.path, "identical": r.identical, "compared": r.compared, "delivered": r.delivered,
            "divergence": None if d is None else {"seq": d.seq, "field": d.field}}


def main() -> None:
    logging.disable(logging.CRITICAL)
    split, jobs, seq_arg, *paths = sys.argv[1:]
    seq = None if seq_arg == "-" else int(seq_arg)
    tampered: list[int] = []
    tamper = tamper_at(seq, tampered) if seq is not None else None

    whole: dict[str, ReplayResult] = {}
    for chain in broker_chains(paths):  # replay_chain's order and scratch folder, with the tamper
        scratch = _scratch_dir()
        try:
            whole.update((p, replay(p, tamper=tamper, scratch=scratch)) for p in chain)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    times: list[UnitTime] = []
    parts = replay_split(paths, jobs=int(jobs), split=split, tamper=tamper, times=times)
    print(json.dumps({"whole": [_row(whole[p]) for p in paths], "split": [_row(r) for r in parts],
                      "units": sorted(t.label for t in times), "tampered": sorted(set(tampered))}))


if __name__ == "__main__":
    main()
