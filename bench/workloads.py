"""The workloads ``kactor bench NAME`` and ``python -m bench NAME`` run: name → the module measuring it."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bench.common import Result

# name → (module, keyword arguments of its run())
MODULES: dict[str, tuple[str, dict]] = {
    "failover": ("bench.failover", {"kind": "rf1"}),
    "failover-rf3": ("bench.failover", {"kind": "rf3"}),
    "controlled-shutdown": ("bench.controller_shutdown", {}),
    "broker-crash": ("bench.broker_crash", {}),
    "zk-bridge": ("bench.zk_bridge", {}),
    "event-storm": ("bench.event_storm", {}),
    "topic-churn": ("bench.topic_churn", {}),
    "cluster-start": ("bench.cluster_start", {}),
}


def run_workload(name: str, scale: float, runs: int, tmpfs: bool = False, write_doc: bool = True) -> Result:
    """Run workload ``name`` and report it (printed; appended to docs/performance.md when ``write_doc``)."""
    from bench.common import report

    module, kwargs = MODULES[name]
    command = f"kactor bench {name} --scale {scale:g} --runs {runs}" + (" --tmpfs" if tmpfs else "")
    result: Result = importlib.import_module(module).run(scale=scale, runs=runs, tmpfs=tmpfs, **kwargs)
    report(result, command, write_doc)
    return result
