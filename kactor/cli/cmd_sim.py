"""``kactor sim``: seeded fault runs of a whole cluster in one process on simulated time (issue #28, sim/).

``kactor sim --seeds 1-20 --steps 20 [--brokers 3] [--trace-dir DIR]`` runs each seed (sim/run.py): the brokers'
real actors, ZooKeeper's model, a simulated network with crashes, restarts and partitions, an acks=all producer, the
invariants checked after every step. One line per seed; a failing seed's line names its first violations and the
command that reruns it, and its brokers' traces are recorded by running it again (the run is deterministic) into
``--trace-dir`` (default: a new temporary folder), for ``kactor trace replay`` / ``trace show``. Exit 0 when every
seed is clean, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sim", help="seeded fault runs of a simulated cluster in one process",
        description="Runs N brokers' real actors in one thread on simulated time, with a ZooKeeper model, a "
                    "simulated network (per-link latency, partitions) and process crashes and restarts, produces "
                    "with acks=all and checks the invariants after every step (one leader per leader epoch, "
                    "leader in ISR within replicas, every acknowledged record on every ISR replica, produce "
                    "answered within its timeout, nothing acknowledged lost).")
    p.add_argument("--seeds", default="1", metavar="SEEDS", help="seeds to run: N, N-M or a list (default 1)")
    p.add_argument("--steps", type=int, default=20, metavar="N", help="steps (1 s of simulated time each) per seed "
                                                                      "(default 20)")
    p.add_argument("--brokers", type=int, default=3, metavar="N", help="brokers per cluster (default 3)")
    p.add_argument("--trace-dir", default=None, metavar="DIR",
                   help="where a failing seed's traces go (default: a new temporary folder)")
    p.add_argument("--verbose", action="store_true",
                   help="show the log lines the simulated brokers write (warnings and errors)")
    p.set_defaults(func=run, _parser=p)


def rerun_command(seed: int, steps: int, brokers: int) -> str:
    return f"kactor sim --seeds {seed} --steps {steps} --brokers {brokers}"


def run(args: argparse.Namespace) -> int:
    from kactor.cli.support import seeds_of, usage_error

    seeds = seeds_of(args)
    if not 3 <= args.brokers <= 9:
        usage_error(args, "--brokers must be between 3 and 9 (the topic has 3 replicas)")
    from kactor.hashseed import ensure_fixed_hash_seed

    # as a broker and a replay run: a rerun in another process, and a replay of the traces, iterate sets alike
    ensure_fixed_hash_seed()
    import logging

    # the brokers log what Kafka logs about the faults this run injects (connections refused, preferred elections
    # that cannot run while the preferred replica is out of the ISR): noise among the seed lines. What matters is
    # checked: an actor handler that raises is a violation of its seed.
    logging.basicConfig(level=logging.WARNING if args.verbose else logging.CRITICAL,
                        format="%(levelname)s %(name)s: %(message)s")
    from kactor.sim_boot import SimBoot
    from sim.run import run_seed

    boot = SimBoot()
    failing: list[int] = []
    t0 = time.perf_counter()
    for seed in seeds:
        r = run_seed(seed, args.steps, boot, brokers=args.brokers)
        head = (f"seed {seed}: {'ok' if r.ok else 'FAILED'}  {r.acks} acks / {r.answers} answers, "
                f"{r.delivered} inputs, {r.sim_ms / 1000:.0f} s simulated in {r.wall_s:.2f} s")
        print(head, flush=True)
        if not r.ok:
            failing.append(seed)
            for v in r.violations[:5]:
                print(f"  {v}")
            trace_dir = os.path.join(os.path.abspath(args.trace_dir) if args.trace_dir
                                     else tempfile.mkdtemp(prefix="kactor-sim-"), f"seed-{seed}")
            run_seed(seed, args.steps, boot, brokers=args.brokers, trace_dir=trace_dir)
            print(f"  traces: {trace_dir} (kactor trace replay --check {trace_dir})")
            print(f"  rerun: {rerun_command(seed, args.steps, args.brokers)}", flush=True)
    wall = time.perf_counter() - t0
    print(f"{len(seeds)} seeds, {len(seeds) - len(failing)} clean, {len(failing)} failing"
          f"{' (' + ','.join(map(str, failing)) + ')' if failing else ''} in {wall:.1f} s: "
          f"{len(seeds) / wall:.2f} seeds/s")
    return 1 if failing else 0
