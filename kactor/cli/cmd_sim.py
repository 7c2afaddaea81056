"""``kactor sim``: seeded fault runs of a whole cluster in one process on simulated time (issue #28, sim/).

``kactor sim --seeds 1-10000 --steps 50 [--brokers 3] [--jobs N] [--trace-dir DIR] [--mutation NAME]`` runs each
seed (sim/run.py): the brokers' real actors, ZooKeeper's model, a simulated network with crashes, restarts and
partitions, an acks=all producer, the invariants checked after every step. Seeds run in ``--jobs`` worker processes
(default: one per core), answered in seed order; a progress bar (kactor chaos's) shows the steps done, the seeds
failed so far, the rate and the time left. A failing seed prints its first violations, the folder its brokers'
traces were recorded into by running it again (the run is deterministic; ``--trace-dir``, default a new temporary
folder) for ``kactor trace replay`` / ``trace show``, and the command that reruns it; a summary line ends the run.
``--mutation NAME`` first puts back one of the historical defects of sim/mutations.py (``--mutation list`` names
them) and ``--stop-at-first`` ends the run at the first failing seed: how the simulator's power is measured. Exit 0
when every seed is clean, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import attrs


def configure_logging(verbose: bool) -> None:
    """The brokers log what Kafka logs about the faults a run injects (connections refused, preferred elections that
    cannot run while the preferred replica is out of the ISR, and at CRITICAL a broker halting because all its log
    dirs failed: a fault the seed injected, once every few seeds): noise among the progress bar and the seed lines,
    so the console shows none of it (WARNING and above with --verbose). The loggers stay at ERROR: an actor handler
    that raises logs its exception there, and sim/run.py's ActorErrors makes it a violation of its seed (with the
    root logger at CRITICAL, until 2026-11-27, the records were dropped before it saw one)."""
    import logging

    root = logging.getLogger()
    if root.handlers:  # configured already (an embedding program, pytest): its levels are its own
        return
    console = logging.StreamHandler()
    console.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    console.setLevel(logging.WARNING if verbose else logging.CRITICAL + 1)
    root.addHandler(console)
    root.setLevel(logging.WARNING if verbose else logging.ERROR)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sim",
        description="Runs N brokers' real actors in one thread on simulated time, with a ZooKeeper model, a "
                    "simulated network (per-link latency, partitions two-way and one-way, slow links, resets, "
                    "request timeouts), a simulated disk (fsync, power loss, a failing log dir) and process "
                    "crashes, pauses, restarts and controlled shutdowns; drives producers (acks=all, idempotent, "
                    "acks=1, acks=0, transactional), consumers (read_uncommitted, read_committed, a consumer group), "
                    "admin operations (topic creation, reassignment, deletion) and, on an eighth of the seeds, a "
                    "hostile client (AddPartitionsToTxn of internal topics, produces to them, corrupt and garbage "
                    "batches, an unknown producer id), and checks the invariants after "
                    "every step (one leader per leader epoch, leader in ISR within replicas, every acknowledged "
                    "record on every ISR replica, replicas identical below the high watermark, no duplicate, "
                    "answers within their bounds, no UNKNOWN_SERVER_ERROR, groups stable, deletions and "
                    "reassignments complete, followers back in the ISR, Kafka's answers to the hostile client and "
                    "nothing of it in an internal topic, every coordinator load complete, nothing acknowledged "
                    "lost). A failing "
                    "seed prints the command that reruns it; its traces replay with `kactor trace replay --check` "
                    "and a campaign's with `kactor trace summarize DIR`.")
    p.add_argument("--seeds", default="1", metavar="SEEDS", help="seeds to run: N, N-M or a list (default 1)")
    p.add_argument("--steps", type=int, default=20, metavar="N", help="steps (1 s of simulated time each) per seed "
                                                                      "(default 20)")
    p.add_argument("--brokers", type=int, default=3, metavar="N", help="brokers per cluster (default 3)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="worker processes running seeds (default: the number of cores)")
    p.add_argument("--trace-dir", default=None, metavar="DIR",
                   help="where a failing seed's traces go (default: a new temporary folder)")
    p.add_argument("--mutation", default=None, metavar="NAME",
                   help="run with one historical defect put back (sim/mutations.py; 'list' names them)")
    p.add_argument("--stop-at-first", action="store_true", help="stop at the first failing seed (in seed order)")
    p.add_argument("--txn-check", action="store_true",
                   help="also run the transactional workload (three transactional producers, consume-transform-"
                        "produce offsets, read_committed and read_uncommitted readers, delayed requests, request "
                        "timeouts and retries, coordinator moves mid-commit) and its Jepsen-style checker "
                        "(sim/txn_checker.py): an aborted read, lost write, torn transaction, duplicate, broken "
                        "order, non-atomic offsets or stalled read_committed reader fails the seed")
    p.add_argument("--verbose", action="store_true",
                   help="show the log lines the simulated brokers write (warnings and errors)")
    p.set_defaults(func=run, _parser=p)


def rerun_command(seed: int, steps: int, brokers: int, mutation: str | None = None, txn_check: bool = False) -> str:
    return f"kactor sim --seeds {seed} --steps {steps} --brokers {brokers}" + \
        (f" --mutation {mutation}" if mutation else "") + (" --txn-check" if txn_check else "")


@attrs.frozen
class Job:
    """What every seed of a run shares (handed to each worker once)."""
    steps: int
    brokers: int
    trace_root: str
    mutation: str | None
    scratch: str | None = None  # the run's folder for the seeds' log dirs, removed at its end whatever happened
    txn_check: bool = False  # the transactional workload and its checker (sim/txn_workload.py, sim/txn_checker.py)
    digest: bool = False  # each seed's event digest (scripts/sim_digests.py); the command shows none


@attrs.frozen
class Outcome:
    """A seed's result as the parent prints it (sim.run.SeedResult, and where a failing seed's traces are)."""
    result: Any
    trace_dir: str | None


GC_YOUNG = 10_000  # a worker's young-generation threshold (the default is 700 allocations)
_job: Job | None = None
_boot: Any = None


def _init_worker(job: Job) -> None:
    """A worker's (or the single process's) set-up: the composition root, and the mutation if any."""
    global _job, _boot
    import gc

    from kactor.sim_boot import SimBoot

    _job, _boot = job, SimBoot()
    # what is imported lives as long as the worker: no full collection walks it again (edges/gc_policy.py's reason);
    # and fewer young collections, as a trace replay runs (the collector decides nothing the actors send)
    gc.collect()
    gc.freeze()
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], GC_YOUNG), *threshold[1:])
    if job.mutation:
        import sim.txn_mutations  # noqa: F401 - registers the transaction mutations (issue #40)
        from sim.mutations import apply

        apply(job.mutation)


def _run_seed(seed: int) -> Outcome:
    from sim.run import run_seed

    job = _job
    assert job is not None
    r = run_seed(seed, job.steps, _boot, brokers=job.brokers, scratch=job.scratch, txn_check=job.txn_check,
                 digest=job.digest)
    _collect_seed()
    if r.ok:
        return Outcome(r, None)
    trace_dir = os.path.join(job.trace_root, f"seed-{seed}")
    run_seed(seed, job.steps, _boot, brokers=job.brokers, trace_dir=trace_dir, scratch=job.scratch,
             txn_check=job.txn_check)
    _collect_seed()
    return Outcome(r, trace_dir)


def _collect_seed() -> None:
    """A seed's closed cluster (its brokers' actors, runtimes and procedures hold one another in cycles) freed now,
    by a collection of the young and middle generations, instead of by the young collections of the seeds after it,
    each of which walked it again: seeds 1-100 in one worker spent 11.4-12.1 ms a seed in the collector without
    this, 4.3-5.9 ms with it, and peaked at 64 MB instead of 83 (a full collection here saved nothing: it walks the
    worker's long-lived objects as well). The collector decides nothing the actors send: every seed's event digest
    is the same."""
    import gc

    gc.collect(1)


def _outcomes(seeds: list[int], job: Job, jobs: int) -> Iterator[Outcome]:
    """Every seed's outcome in seed order: in this process (one job), else in ``jobs`` forked workers (they
    inherit the imported modules and PYTHONHASHSEED)."""
    if jobs <= 1 or len(seeds) <= 1:
        import gc

        threshold = gc.get_threshold()
        _init_worker(job)
        try:
            for seed in seeds:
                yield _run_seed(seed)
        finally:  # this process goes on (a test calling the command): its collector as it was
            gc.unfreeze()
            gc.set_threshold(*threshold)
        return
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(min(jobs, len(seeds)), _init_worker, (job,)) as pool:
        yield from pool.imap(_run_seed, seeds, chunksize=1)


def _duration(s: float) -> str:
    s = max(0, int(s))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def run(args: argparse.Namespace) -> int:
    from kactor.cli.support import seeds_of, usage_error

    if args.mutation == "list":
        import sim.txn_mutations  # noqa: F401 - registers the transaction mutations (issue #40)
        from sim.mutations import MUTATIONS

        for m in MUTATIONS.values():
            print(f"{m.name:<28} {m.defect}")
        return 0
    seeds = seeds_of(args)
    from sim.limits import MAX_BROKERS, MIN_BROKERS

    if not MIN_BROKERS <= args.brokers <= MAX_BROKERS:
        usage_error(args, f"--brokers must be between {MIN_BROKERS} and {MAX_BROKERS} (the topic has 3 replicas)")
    if args.jobs < 1:
        usage_error(args, "--jobs must be at least 1")
    if args.mutation is not None:
        import sim.txn_mutations  # noqa: F401 - registers the transaction mutations (issue #40)
        from sim.mutations import MUTATIONS

        if args.mutation not in MUTATIONS:
            usage_error(args, f"--mutation: no mutation {args.mutation!r} ({', '.join(MUTATIONS)})")
    from kactor.hashseed import ensure_fixed_hash_seed

    # as a broker and a replay run: a rerun in another process, and a replay of the traces, iterate sets alike
    ensure_fixed_hash_seed()
    configure_logging(args.verbose)
    import sim.run  # noqa: F401 - imported once here, before the workers fork
    from kactor.chaos.report import Progress

    trace_root = os.path.abspath(args.trace_dir) if args.trace_dir else tempfile.mkdtemp(prefix="kactor-sim-")
    from sim.runtime import scratch_base

    # a worker ended early (--stop-at-first, Ctrl-C: the pool is terminated) leaves its seed's log dirs: here
    scratch = tempfile.mkdtemp(prefix="kactor-sim-run-", dir=scratch_base())
    job = Job(args.steps, args.brokers, trace_root, args.mutation, scratch, args.txn_check)
    progress = Progress(len(seeds) * args.steps)
    results: list[Any] = []
    failing: list[int] = []
    t0 = time.perf_counter()
    interrupted = False
    try:
        for outcome in _outcomes(seeds, job, args.jobs):
            r = outcome.result
            results.append(r)
            if not r.ok:
                failing.append(r.seed)
                progress.clear()
                _print_failure(outcome, args)
            elif getattr(r, "txn_known", ()):
                progress.clear()
                _print_known(outcome, args)
            elapsed = time.perf_counter() - t0
            rate = len(results) / elapsed
            progress.update(len(results) * args.steps,
                            f"{len(results)}/{len(seeds)} seeds, {len(failing)} failed, {rate:.2f} seeds/s, "
                            f"ETA {_duration((len(seeds) - len(results)) / rate)}")
            if failing and args.stop_at_first:
                break
    except KeyboardInterrupt:
        interrupted = True
    finally:
        import shutil

        shutil.rmtree(scratch, ignore_errors=True)
    progress.clear()
    wall = time.perf_counter() - t0
    for line in summary_lines(results, len(seeds), failing, wall, args.jobs, args.mutation):
        print(line, flush=True)
    if interrupted:
        print("kactor sim: interrupted", file=sys.stderr, flush=True)
        return 130
    if not args.trace_dir and not failing and not os.listdir(trace_root):
        os.rmdir(trace_root)
    return 1 if failing else 0


def _print_failure(outcome: Outcome, args: argparse.Namespace) -> None:
    r = outcome.result
    print(f"seed {r.seed}: FAILED  {r.acks} acks / {r.answers} answers, {r.delivered} inputs, "
          f"{r.sim_ms / 1000:.0f} s simulated in {r.wall_s:.2f} s", flush=True)
    for v in [v for v in r.violations if not v.startswith("txn-check: ")][:5]:
        print(f"  {v}")
    _print_txn_report(r)
    print(f"  traces: {outcome.trace_dir} (kactor trace replay --check {outcome.trace_dir})")
    _print_rerun(r, args)


def _print_known(outcome: Outcome, args: argparse.Namespace) -> None:
    """A clean seed whose transaction checker found only what a 2.6 client cannot be kept from."""
    r = outcome.result
    print(f"seed {r.seed}: clean, {len(r.txn_known)} known for 2.6 clients", flush=True)
    _print_txn_report(r)
    _print_rerun(r, args)


def _print_txn_report(r: Any) -> None:
    """The transaction checker's table (sim/txn_checker.py), its anomalies in full, if it found any."""
    report = getattr(r, "txn_report", "")
    if report:
        print("\n".join("  " + line for line in report.splitlines()))


def _print_rerun(r: Any, args: argparse.Namespace) -> None:
    rerun = rerun_command(r.seed, args.steps, args.brokers, args.mutation, getattr(args, "txn_check", False))
    print(f"  rerun: {rerun}", flush=True)


def summary_lines(results: list[Any], planned: int, failing: list[int], wall: float, jobs: int,
                  mutation: str | None) -> list[str]:
    if not results:
        return ["no seed ran"]
    walls = [r.wall_s for r in results]
    head = f"{len(results)} seeds" + (f" of {planned}" if len(results) < planned else "")
    lines = [f"{head}, {len(results) - len(failing)} clean, {len(failing)} failing"
             f"{' (' + ','.join(map(str, sorted(failing))) + ')' if failing else ''} in {wall:.1f} s: "
             f"{len(results) / wall:.2f} seeds/s",
             f"  {results[0].steps} steps a seed, {jobs} jobs{', mutation ' + mutation if mutation else ''}; "
             f"per seed {statistics.median(walls):.2f} s (median; {min(walls):.2f}-{max(walls):.2f}), "
             f"{statistics.mean(r.cpu_s for r in results):.2f} s of CPU (mean), "
             f"{statistics.median(r.sim_ms for r in results) / 1000:.0f} s simulated; "
             f"{sum(r.acks for r in results)} acks of {sum(r.answers for r in results)} answers, "
             f"{sum(r.delivered for r in results)} inputs"]
    checked = [r for r in results if getattr(r, "txn_summary", "")]
    if checked:  # --txn-check: the anomalies found, by kind, and in how many seeds
        kinds: dict[str, set[int]] = {}
        for r in checked:
            for v in r.violations:
                if v.startswith("txn-check: "):
                    kinds.setdefault(v[len("txn-check: "):].split(":", 1)[0], set()).add(r.seed)
        found = "; ".join(f"{k} in {len(s)} ({','.join(map(str, sorted(s)[:10]))}{',...' if len(s) > 10 else ''})"
                          for k, s in sorted(kinds.items()))
        lines.append(f"  txn-check: {len(checked)} seeds checked, "
                     f"{len({x for s in kinds.values() for x in s})} with anomalies" + (f": {found}" if found else ""))
        known = sorted(r.seed for r in checked if getattr(r, "txn_known", ()))
        if known:
            lines.append(f"  txn-check: known in {len(known)} seeds (KIP-890 part 2: an EndTxn of an earlier "
                         f"transaction landing in a later one under the same producer id and epoch; or a sole ISR "
                         f"member's power loss): {','.join(map(str, known))}")
    return lines
