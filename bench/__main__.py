"""``python -m bench NAME [--scale S] [--runs N]`` (same as ``kactor bench``)."""

from __future__ import annotations

import argparse
import importlib
import shlex
import sys

from bench.common import Result, report

# name → (module, keyword arguments of its run())
MODULES: dict[str, tuple[str, dict]] = {
    "failover": ("bench.failover", {"kind": "rf1"}),
    "failover-rf3": ("bench.failover", {"kind": "rf3"}),
    "controlled-shutdown": ("bench.controller_shutdown", {}),
    "broker-crash": ("bench.broker_crash", {}),
    "zk-bridge": ("bench.zk_bridge", {}),
    "event-storm": ("bench.event_storm", {}),
    "topic-churn": ("bench.topic_churn", {}),
}


def run_workload(name: str, scale: float, runs: int, tmpfs: bool = False, write_doc: bool = True) -> Result:
    module, kwargs = MODULES[name]
    command = f"kactor bench {name} --scale {scale:g} --runs {runs}" + (" --tmpfs" if tmpfs else "")
    result: Result = importlib.import_module(module).run(scale=scale, runs=runs, tmpfs=tmpfs, **kwargs)
    report(result, command, write_doc)
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench")
    p.add_argument("name", choices=sorted(MODULES))
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--tmpfs", action="store_true")
    p.add_argument("--no-doc", action="store_true")
    a = p.parse_args(argv)
    print(f"$ {shlex.join(['python', '-m', 'bench', *(argv or sys.argv[1:])])}", flush=True)
    run_workload(a.name, a.scale, a.runs, a.tmpfs, not a.no_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
