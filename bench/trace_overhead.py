"""What recording every message costs (issue #3 budget: ≤ 15 % of throughput).

``.venv/bin/python -m bench.trace_overhead [--trace DIR] [--runs 5] [--partitions 60]``
``.venv/bin/python -m bench.trace_overhead --live [--runs 9] [--records 6000] [--chunks 10] [--clients 4]``

``--live`` measures the throughput of a live 3-broker cluster with and without recording (bench/trace_overhead_live.py):
what the budget is about. Without it, the actors alone are measured, as follows.

The workload is a broker process's real message mix: the traces of a recorded cluster run (3 broker processes on an
embedded ZooKeeper running `kactor.demo`: topics created, records produced, a broker SIGKILLed and
restarted, a preferred election, a reassignment, a controller failover, a topic deleted), or ``--trace DIR``. Each
broker's incarnations are replayed (no compare) on simpleSystemBase — the same actors, handlers and driver a live
broker runs, fed the recorded inputs — once with no trace (the baseline) and once recording their own trace into a
scratch folder with the live TraceWriter (buffer, background encoding and flush every second, final flush on close,
all inside the timed span). Runs alternate baseline / recording; the figure is the median throughput of each, and the
overhead is 1 − recording / baseline. Throughput is messages per CPU-second of this process (all its threads, so the
background encoding counts), which other work on a shared 2-core machine disturbs far less than wall time; the
wall-clock figures are printed too. Replay seconds include decoding the inputs, which a live broker also does (it
decodes ZooKeeper and network replies), so the ratio is that of a busy broker, not of the actors in isolation.

``--instructions`` counts instead of timing: the machine's CPUs are shared and their speed swings with whatever
else runs (on 2 noisy cores one mode's median moves by a third between runs), while the number of instructions a
replay executes does not. Each mode then runs under valgrind's cachegrind (``apt install valgrind``), once with one
replay of every broker and once with three; the difference over two is the instructions of one warm replay, and the
overhead is 1 − baseline / recording instructions. Instructions are not time (recording touches more memory, which
a count does not weigh), so the timed figure stays the one to quote; the count says which way a change moved it.

As a by-product the re-recorded traces are compared with the originals record by record (seq, sender, receiver,
type, payload, cause): a replay that records what the live run recorded is one more proof of determinism.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time

BUDGET = 0.15


def _differing(recorded: str, rerecorded: str) -> tuple[int, int]:
    """(lines that differ, of which naming the replay's scratch log dirs instead of the broker's): replay runs the
    brokers' log dirs in a scratch folder, so those paths are the one expected difference."""
    a, b = _records(recorded), _records(rerecorded)
    diff = [(x, y) for x, y in zip(a, b, strict=False) if x != y] + [((), ())] * abs(len(a) - len(b))
    return len(diff), sum("kactor-replay-" in y[4] for x, y in diff if y)


def _records(path: str) -> list[tuple]:
    out = []
    with open(path, encoding="utf-8") as f:
        next(f, None)
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                break  # a SIGKILLed incarnation's cut last line
            out.append((r["seq"], r["sender"], r["receiver"], r["type"], json.dumps(r["payload"]), r["cause"]))
    return out


def main(argv: list[str] | None = None) -> int:
    from kactor.hashseed import ensure_fixed_hash_seed

    ensure_fixed_hash_seed()  # the brokers ran with PYTHONHASHSEED=0; set iteration order must match
    p = argparse.ArgumentParser(prog="python -m bench.trace_overhead", description=__doc__.split("\n\n")[0])
    p.add_argument("--trace", help="use this recorded trace folder instead of recording a new one")
    p.add_argument("--partitions", type=int, default=60, help="partitions of the scenario's main topic (default 60)")
    p.add_argument("--runs", type=int, default=5, help="runs of each mode (default 5)")
    p.add_argument("--instructions", action="store_true",
                   help="count instructions under valgrind instead of timing (deterministic; needs valgrind)")
    p.add_argument("--live", action="store_true",
                   help="measure a live 3-broker cluster's produce throughput instead (bench/trace_overhead_live.py)")
    p.add_argument("--records", type=int, default=6000,
                   help="--live: produce requests to each cluster per run (default 6000)")
    p.add_argument("--chunks", type=int, default=10, help="--live: pieces the workload alternates in (default 10)")
    p.add_argument("--clients", type=int, default=4, help="--live: client threads (default 4)")
    p.add_argument("--warm-up", type=int, default=300,
                   help="--live: produce requests to each cluster before the measured ones (default 300; at least "
                        "one per partition)")
    p.add_argument("--replay-only", choices=("baseline", "recording"), help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.runs < 1 or a.partitions < 1:
        p.error("--runs and --partitions must be ≥ 1")
    if a.live:
        from bench import trace_overhead_live

        if a.clients < 1 or a.chunks < 1 or a.records < a.clients * a.chunks or a.warm_up < 0:
            p.error("--clients and --chunks must be ≥ 1, --records ≥ --clients × --chunks and --warm-up ≥ 0")
        return trace_overhead_live.main(a.runs, a.partitions, a.records, a.clients, BUDGET, a.chunks, a.warm_up)
    logging.disable(logging.CRITICAL)  # the replayed actors re-log what the brokers logged live
    if a.replay_only:
        return _replay_only(a.trace, a.replay_only, a.runs)

    from bench.common import git_commit, machine_line, scenario_trace
    from kactor.trace.reader import broker_chains, ensure_registered, trace_files
    from kactor.trace.replay import replay_chain

    print(f"machine: {machine_line()}", flush=True)
    trace_dir, recorded_here = scenario_trace(a.trace, a.partitions, "kactor-trace-overhead-")
    if a.instructions:
        try:
            return _count_instructions(trace_dir)
        finally:
            if recorded_here:
                shutil.rmtree(trace_dir, ignore_errors=True)
    ensure_registered()
    from actors.broker import broker_actor_classes

    broker_actor_classes()  # the actors' imports outside the timed runs (the first run would pay them)

    files = trace_files(trace_dir)
    chains = broker_chains(files)
    messages = sum(len(_records(f)) for f in files)
    rates: dict[str, list[float]] = {"baseline": [], "recording": []}
    wall: dict[str, list[float]] = {"baseline": [], "recording": []}
    out_dir = tempfile.mkdtemp(prefix="kactor-trace-overhead-out-")
    try:
        for run in range(a.runs):
            for mode in ("baseline", "recording"):
                shutil.rmtree(out_dir, ignore_errors=True)
                os.makedirs(out_dir)
                t0, c0 = time.perf_counter(), time.process_time()
                for chain in chains:
                    replay_chain(chain, check=False, record_dir=out_dir if mode == "recording" else None)
                rates[mode].append(messages / (time.process_time() - c0))
                wall[mode].append(messages / (time.perf_counter() - t0))
            b, r = rates["baseline"][-1], rates["recording"][-1]
            print(f"  run {run + 1}: baseline {b:,.0f} msg/CPU-s ({wall['baseline'][-1]:,.0f} msg/s wall), "
                  f"recording {r:,.0f} msg/CPU-s ({wall['recording'][-1]:,.0f} msg/s wall)", flush=True)
        diffs = [_differing(f, os.path.join(out_dir, os.path.basename(f))) for f in files]
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
        if recorded_here:
            shutil.rmtree(trace_dir, ignore_errors=True)
    base, rec = statistics.median(rates["baseline"]), statistics.median(rates["recording"])
    overhead = 1 - rec / base
    print(f"\n{messages} messages, {len(files)} broker processes, {a.runs} runs each (commit {git_commit()})")
    for mode, median in (("baseline (no trace)", base), ("recording", rec)):
        key = mode.split()[0]
        lo, hi = min(rates[key]), max(rates[key])
        print(f"{mode + ':':<21}median {median:,.0f} msg/CPU-s (min {lo:,.0f}, max {hi:,.0f}); "
              f"wall median {statistics.median(wall[key]):,.0f} msg/s")
    wall_ratio = statistics.median(wall["recording"]) / statistics.median(wall["baseline"])
    print(f"ratio recording/baseline {rec / base:.3f} (wall {wall_ratio:.3f}) → overhead {overhead:.1%} "
          f"(budget ≤ {BUDGET:.0%})")
    n_diff, n_paths = sum(d for d, _ in diffs), sum(p for _, p in diffs)
    print(f"re-recorded traces vs the recorded ones: {n_diff} of {messages} records differ, {n_paths} of them only "
          f"naming the replay's scratch log dirs" + (" (identical otherwise)" if n_diff == n_paths else ""))
    return 0 if overhead <= BUDGET else 1


def _replay_only(trace_dir: str, mode: str, runs: int) -> int:
    """Replay every broker of ``trace_dir`` ``runs`` times in ``mode`` and nothing else (what valgrind counts)."""
    from kactor.trace.reader import broker_chains, ensure_registered, trace_files
    from kactor.trace.replay import replay_chain

    ensure_registered()
    from actors.broker import broker_actor_classes

    broker_actor_classes()  # imported as in the timed runs

    chains = broker_chains(trace_files(trace_dir))
    out_dir = tempfile.mkdtemp(prefix="kactor-trace-overhead-out-")
    try:
        for _ in range(runs):
            shutil.rmtree(out_dir, ignore_errors=True)
            os.makedirs(out_dir)
            for chain in chains:
                replay_chain(chain, check=False, record_dir=out_dir if mode == "recording" else None)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    return 0


def _count_instructions(trace_dir: str) -> int:
    import re
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    from bench.common import git_commit

    if shutil.which("valgrind") is None:
        print("--instructions needs valgrind (apt install valgrind)", file=sys.stderr)
        return 2
    env = {**os.environ, "PYTHONHASHSEED": "0"}  # set here: the re-exec that would fix it escapes valgrind

    def count(mode: str, runs: int) -> int:
        cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
               sys.executable, "-m", "bench.trace_overhead", "--trace", trace_dir, "--replay-only", mode,
               "--runs", str(runs)]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        m = re.search(r"I\s+refs:\s+([\d,]+)", p.stderr)
        if p.returncode != 0 or m is None:
            raise SystemExit(f"valgrind run failed ({' '.join(cmd)}):\n{p.stderr[-2000:]}")
        return int(m.group(1).replace(",", ""))

    print("counting instructions under valgrind (a few minutes) ...", flush=True)
    jobs = [(mode, runs) for mode in ("baseline", "recording") for runs in (1, 3)]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        counts = dict(zip(jobs, pool.map(lambda j: count(*j), jobs), strict=True))
    per_run = {mode: (counts[(mode, 3)] - counts[(mode, 1)]) / 2 for mode in ("baseline", "recording")}
    base, rec = per_run["baseline"], per_run["recording"]
    overhead = 1 - base / rec
    print(f"\ninstructions of one warm replay of every broker (commit {git_commit()}):")
    print(f"baseline (no trace): {base / 1e6:,.0f} M\nrecording:           {rec / 1e6:,.0f} M")
    print(f"ratio baseline/recording {base / rec:.3f} → overhead {overhead:.1%} (budget ≤ {BUDGET:.0%})")
    return 0 if overhead <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
