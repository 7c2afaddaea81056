"""``kactor trace generate --messages N --brokers B --partitions P --out DIR [--seed S] [--sim-lines L] [--steps K]``:
a trace of N record lines built by running the simulator (sim/generate.py)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from kactor.cli import CliError


def register(trace_subparsers: argparse._SubParsersAction) -> None:
    from sim.limits import MAX_BROKERS, MIN_BROKERS, SIM_LINES, STEPS

    p = trace_subparsers.add_parser(
        "generate", help="write a trace of N record lines by running the simulator (one folder, broker-<id>.jsonl)",
        description="Run `kactor sim` seeds S, S+1, ... (the brokers' real actors on simulated time, with the "
                    "seed's faults and clients) with B brokers and a topic of P partitions, recording their "
                    "brokers' traces into DIR, until N record lines or --sim-lines, whichever is fewer; beyond "
                    "--sim-lines the rest are copies of the simulated seeds' files (tiles), and the last seed or "
                    "tile is cut to exactly N lines. The k-th seed or tile, from 0, writes its broker b as "
                    "broker-<10k+b>.jsonl. Every line is one the actors wrote, and every broker's files replay with "
                    "`kactor trace replay --check DIR`. Deterministic for a given --seed.")
    p.add_argument("--messages", type=int, default=10_000, metavar="N", help="record lines in all (default 10000)")
    p.add_argument("--brokers", type=int, default=3, metavar="B",
                   help=f"brokers per simulated cluster, {MIN_BROKERS}-{MAX_BROKERS} (default 3)")
    p.add_argument("--partitions", type=int, default=100, metavar="P",
                   help="partitions of each seed's topic (default 100)")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (new, or holding no *.jsonl)")
    p.add_argument("--seed", type=int, default=0, help="the first seed (default 0)")
    p.add_argument("--sim-lines", type=int, default=SIM_LINES, metavar="L",
                   help=f"record lines to simulate at most; the rest are tiles (default {SIM_LINES})")
    p.add_argument("--steps", type=int, default=STEPS, metavar="K",
                   help=f"steps (1 s of simulated time each) per seed (default {STEPS})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for name in ("messages", "partitions", "sim_lines", "steps"):
        if getattr(args, name) < 1:
            raise CliError(f"--{name.replace('_', '-')} must be at least 1", code=2)
    from sim.limits import MAX_BROKERS, MIN_BROKERS

    if not MIN_BROKERS <= args.brokers <= MAX_BROKERS:
        raise CliError(f"--brokers must be between {MIN_BROKERS} and {MAX_BROKERS} (the simulator's topic has 3 "
                       "replicas)", code=2)
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise CliError(f"{args.out}: exists and is not a folder")
    if os.path.isdir(args.out) and any(name.endswith(".jsonl") for name in os.listdir(args.out)):
        raise CliError(f"{args.out}: holds a trace already (*.jsonl); give an empty or new folder")
    from kactor.hashseed import SEED

    if os.environ.get("PYTHONHASHSEED") != SEED:
        return _in_child_with_fixed_hash_seed(args, SEED)
    from kactor.cli.cmd_sim import configure_logging

    configure_logging(verbose=False)
    from kactor.sim_boot import SimBoot
    from sim.generate import generate

    stats = generate(args.out, args.messages, args.brokers, args.partitions, args.seed, SimBoot(),
                     sim_lines=args.sim_lines, steps=args.steps)
    rate = stats.messages / stats.elapsed_s if stats.elapsed_s > 0 else 0.0
    sim_rate = stats.simulated / stats.sim_s if stats.sim_s > 0 else 0.0
    seeds = f"{stats.seeds[0]}" if len(stats.seeds) == 1 else f"{stats.seeds[0]}-{stats.seeds[-1]}"
    print(f"wrote {stats.messages:,} messages in {len(stats.files)} files to {args.out} in {stats.elapsed_s:.2f} s "
          f"({rate:,.0f} lines/s): seed{'s' if len(stats.seeds) > 1 else ''} {seeds} simulated "
          f"({args.brokers} brokers, a topic of {stats.partitions} partitions; at most {stats.topics} "
          f"topic{'s' if stats.topics != 1 else ''} at a seed's end), "
          f"{stats.simulated:,} lines in {stats.sim_s:.2f} s ({sim_rate:,.0f} lines/s), {stats.tiles} tiles")
    if stats.failing:
        print(f"note: seed(s) {', '.join(map(str, stats.failing))} broke one of kactor sim's invariants; their traces "
              "are written all the same")
    return 0


def _in_child_with_fixed_hash_seed(args: argparse.Namespace, seed: str) -> int:
    """The command again in a child process with PYTHONHASHSEED fixed, its output passed on. The brokers iterate sets
    in the hash seed's order, and `kactor trace replay` runs with that seed (as `kactor sim` and the broker process
    do). Those re-execute themselves (kactor.hashseed.ensure_fixed_hash_seed); a child instead keeps a caller that runs
    the command in its own process (tests, through kactor.cli.main) alive and its own."""
    argv = [sys.executable, "-m", "kactor", "trace", "generate", "--messages", str(args.messages),
            "--brokers", str(args.brokers), "--partitions", str(args.partitions), "--out", args.out,
            "--seed", str(args.seed), "--sim-lines", str(args.sim_lines), "--steps", str(args.steps)]
    done = subprocess.run(argv, env=dict(os.environ, PYTHONHASHSEED=seed), capture_output=True, text=True, check=False)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done.returncode
