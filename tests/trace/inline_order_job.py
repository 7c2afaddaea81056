"""``python tests/trace/inline_order_job.py TRACE OUT_DIR``: replay TRACE with --check twice, on thespian's
simpleSystemBase and on kactor.trace.inline_system, each replayed runtime recording its own trace into OUT_DIR
(``thespian.jsonl``, ``inline.jsonl``); print both results as one JSON line. Run with PYTHONHASHSEED=0, as the
broker was."""

from __future__ import annotations

import json
import logging
import os
import sys

from kactor.trace.replay import replay


def main() -> None:
    logging.disable(logging.CRITICAL)
    path, out = sys.argv[1], sys.argv[2]
    report = {}
    for mode in ("thespian", "inline"):
        r = replay(path, record_to=os.path.join(out, f"{mode}.jsonl"), thespian=mode == "thespian")
        report[mode] = {"identical": r.identical, "compared": r.compared, "delivered": r.delivered}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
