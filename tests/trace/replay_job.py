"""``python tests/trace/replay_job.py TRACE [TAMPER_SEQ]``: replay with check, print the result as one JSON line.

With TAMPER_SEQ the external input recorded at that seq is altered before delivery (`tamper_at`): a LeaderAndIsr or
UpdateMetadata request gets controller epoch 0 (stale), a ZooKeeper watch event another path, a TimerFired another
key, a ZkResponse another request id.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from typing import Any

import attrs

from kactor.trace.reader import Record
from kactor.trace.replay import replay


def tamper_at(seq: int, tampered: list[int]) -> Callable[[Record, Any], Any]:
    """A replay's ``tamper`` altering the input recorded at ``seq`` (noted in ``tampered``), the others as they are."""

    def tamper(rec: Record, body: Any) -> Any:
        if rec.seq != seq:
            return body
        tampered.append(rec.seq)
        inner = getattr(body, "body", None)
        if inner is not None and hasattr(inner, "controller_epoch"):
            return attrs.evolve(body, body=attrs.evolve(inner, controller_epoch=0))
        if hasattr(body, "path"):
            return attrs.evolve(body, path=body.path + "-tampered")
        if hasattr(body, "key"):
            return attrs.evolve(body, key=body.key + "-tampered")
        if hasattr(body, "request_id"):  # a ZkResponse: to a request never made
            return attrs.evolve(body, request_id=body.request_id + 1000)
        raise SystemExit(f"do not know how to tamper with {type(body).__name__}")

    return tamper


def main() -> None:
    logging.disable(logging.CRITICAL)
    path = sys.argv[1]
    seq = int(sys.argv[2]) if len(sys.argv) > 2 else None
    tampered: list[int] = []
    r = replay(path, tamper=tamper_at(seq, tampered) if seq is not None else None)
    d = r.divergence
    print(json.dumps({"identical": r.identical, "compared": r.compared, "delivered": r.delivered,
                      "tampered": tampered,
                      "divergence": None if d is None else {"seq": d.seq, "field": d.field,
                                                            "expected": d.expected, "actual": d.actual}}))


if __name__ == "__main__":
    main()
