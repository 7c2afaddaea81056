"""``python -m bench NAME [--scale S] [--runs N]`` (same as ``kactor bench``)."""

from __future__ import annotations

import argparse
import shlex
import sys

from bench.workloads import MODULES, run_workload


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
