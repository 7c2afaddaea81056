"""Replay speed (issue #8): ``python -m bench.replay_speed [--trace DIR] [--partitions N] [--no-check]``.

Records a real cluster workload — 3 broker processes on an embedded ZooKeeper running the scripted story of
`kactor.demo` (topics created, a broker SIGKILLed and restarted, a preferred election, a reassignment, a
controller failover, a topic deleted) — unless ``--trace`` names a recorded trace folder; then replays every broker
process's trace with ``--check`` (each emitted message compared with the recorded line) in this process, one after
the other, and prints per file and in total: messages compared, replay seconds, messages/s, and the speed-up over
the recorded wall time (last ts − first ts of the file; for the total, the cluster run's span from the first record
of any file to the last). Replay seconds include reading the file, building the actors and tearing them down. Beside
it, the same delivery loop's rate with handlers that do nothing (`_empty_rate`, measured in the same run): the ceiling
of the design, and the replay's share of it (issue #43). With more than one core, the replay in worker processes:
by broker (``--split brokers``: the best split of the per-file times is printed too) and cut by actor
(kactor/trace/split.py: ``--split actors``, every broker; ``--split auto``, where it evens out the cores), with the
units' CPU time against one process's and the largest unit's share of it.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import time

# acceptance thresholds of issue #8
MIN_MSGS_PER_S = 20_000
MIN_SPEEDUP = 20.0


def _first_last_ts(path: str) -> tuple[float, float] | None:
    with open(path, encoding="utf-8") as f:
        lines = [ln for ln in f.read().split("\n")[1:] if ln]
    for_first = lines[:1]
    for_last = lines[-1:]
    try:
        return json.loads(for_first[0])["ts"], json.loads(for_last[0])["ts"]
    except (IndexError, ValueError, KeyError):
        return None


def _count_records(path: str) -> int:
    with open(path, encoding="utf-8") as f:
        return sum(1 for _ in f) - 1


def _replay_serial(files: list[str], check: bool) -> tuple[list, float, float]:
    """Every broker's incarnations in order, one process: (results without runtimes, wall s, CPU s)."""
    from kactor.trace.reader import broker_chains
    from kactor.trace.replay import replay_chain

    t0, c0 = time.perf_counter(), time.process_time()
    results = [r for chain in broker_chains(files) for r in replay_chain(chain, check=check)]
    return results, time.perf_counter() - t0, time.process_time() - c0


def _replay_parallel(files: list[str], check: bool, jobs: int) -> tuple[list, float, float]:
    from kactor.trace.replay import replay_many

    t0 = time.perf_counter()
    results = replay_many(files, check=check, jobs=jobs)
    return results, time.perf_counter() - t0, 0.0


def _replay_split(files: list[str], check: bool, jobs: int, split: str) -> tuple[list, float, list]:
    """`kactor trace replay --jobs N --split SPLIT`'s replay (kactor/trace/split.py): (results, wall s, each unit's
    UnitTime: label, size, wall s). The plan (reading the chains it cuts) is inside the wall time."""
    from kactor.trace.split import replay_split

    times: list = []
    t0 = time.perf_counter()
    results = replay_split(files, check=check, jobs=jobs, split=split, times=times)
    return results, time.perf_counter() - t0, times


EMPTY_MESSAGES = 100_000


def _empty_rate(n: int) -> float:
    """The ceiling of the design (issue #43 item 3): messages a second through the replay's own delivery loop —
    `Runtime.deliver` (the clock set from each input's instant) on `InlineActorSystem`, into a `KActor` that records
    the message and dispatches it to a handler that does nothing — with no trace file and no check."""
    from actors import names
    from actors.base import KActor
    from actors.clock import ManualClock
    from actors.runtime import Runtime
    from kactor.trace.inline_system import InlineActorSystem
    from messages.runtime import TimerFired

    class Idle(KActor):
        def on_TimerFired(self, body: TimerFired, sender: str) -> None:  # noqa: N802 - the dispatch's name
            pass

    rt = Runtime("empty", clock=ManualClock(0.0), actor_system=InlineActorSystem())
    rt.spawn(Idle, "idle")
    deliver, body = rt.deliver, TimerFired("k")
    t0 = time.perf_counter()
    for i in range(n):
        deliver("idle", body, names.TIMER, None, float(i))
    wall = time.perf_counter() - t0
    assert rt.seq == n  # each delivery was recorded and handled: the loop did the work it is the ceiling of
    rt.shutdown()
    return n / wall


def _best_split(sizes: list[float], parts: int) -> float:
    """The smallest possible largest share when ``sizes`` (whole chains: a chain is never split) are dealt to
    ``parts`` processes: every assignment tried (a recording has a handful of brokers)."""
    import itertools

    best = float("inf")
    for assign in itertools.product(range(parts), repeat=len(sizes)):
        loads = [0.0] * parts
        for size, part in zip(sizes, assign, strict=True):
            loads[part] += size
        best = min(best, max(loads))
    return best


def _dealt(units: list, cores: int) -> float:
    """The longest of ``cores`` processes' CPU times when the units (UnitTime) are dealt to them as the replay
    deals them, the largest first to the first free one: what an otherwise idle machine would take, less the plan."""
    loads = [0.0] * cores
    for u in sorted(units, key=lambda u: -u.work):
        loads[loads.index(min(loads))] += u.cpu_s
    return max(loads)


def _in_fork(fn, *args):  # noqa: ANN001, ANN202 - a bench helper
    """``fn(*args)`` in a child forked from this process (its imports done, no replay run yet). Not a Pool: its
    daemonic workers may not fork the ``--jobs`` workers."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)

    def child() -> None:
        send.send(fn(*args))

    proc = ctx.Process(target=child)
    proc.start()
    try:
        return recv.recv()
    finally:
        proc.join()


def _once(files: list[str], what: str, check: bool) -> int:
    """--once: the set-up alone, or one serial replay of every chain in this process (no fork, no timing)."""
    if what == "setup":
        return 0
    from kactor.trace.reader import broker_chains
    from kactor.trace.replay import replay_chain

    results = [r for chain in broker_chains(files) for r in replay_chain(chain, check=check)]
    ok = all(r.identical for r in results)
    print(f"replayed once: {sum(r.compared for r in results)} messages compared, "
          f"identical: {'yes, every file' if ok else 'NO'}")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    from kactor.hashseed import ensure_fixed_hash_seed

    ensure_fixed_hash_seed()  # the brokers ran with PYTHONHASHSEED=0; set iteration order must match
    p = argparse.ArgumentParser(prog="python -m bench.replay_speed", description=__doc__.split("\n\n")[0])
    p.add_argument("--trace", help="replay this recorded trace folder instead of recording a new one")
    p.add_argument("--partitions", type=int, default=60, help="partitions of the scenario's main topic (default 60)")
    p.add_argument("--keep", action="store_true", help="keep the recorded trace folder")
    p.add_argument("--no-check", action="store_true", help="replay without comparing (feeding inputs only)")
    p.add_argument("--runs", type=int, default=3, help="measurements of each mode, each in a fresh process "
                   "(default 3; the median is reported)")
    p.add_argument("--once", choices=("setup", "replay"), help="for instruction counts (valgrind --tool=cachegrind "
                   "--cache-sim=no, PYTHONHASHSEED=0): stop after the per-process set-up, or replay every broker's "
                   "chain once in this process, nothing timed; the replay's share is the difference of the two")
    a = p.parse_args(argv)
    logging.disable(logging.CRITICAL)  # the replayed actors re-log what the brokers logged live

    import kactor.trace.replay  # noqa: F401 - imported once, before the forks
    from bench.common import cpu_model, load_average, scenario_trace
    from kactor.trace.reader import ensure_registered, trace_files

    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, load {load_average()}", flush=True)
    trace_dir, recorded_here = scenario_trace(a.trace, a.partitions, "kactor-replay-bench-")
    ensure_registered()
    from kactor.trace.replay import prepare

    # outside the timed replays, as the imports are: what every replay process sets up whatever the trace (the actor
    # modules, the code digest, the code generated per message class: kactor.trace.replay.prepare); --jobs workers
    # inherit it, as `replay_many` arranges for the command too
    t0 = time.perf_counter()
    prepare()
    print(f"per-process set-up (kactor.trace.replay.prepare, not timed below): {time.perf_counter() - t0:.3f}s",
          flush=True)

    files = trace_files(trace_dir)
    if a.once is not None:
        return _once(files, a.once, not a.no_check)
    jobs = min(os.cpu_count() or 1, len(files))
    # every measurement in a fresh forked process: a replay leaves per-process caches warm (generated encoders, the
    # trace encoder's values kept by value), which would flatter every run after the first
    empties = sorted(_in_fork(_empty_rate, EMPTY_MESSAGES) for _ in range(a.runs))
    # the modes taken in turn, run by run, so that a change in the machine's load falls on all of them alike; every
    # core for the replay cut by actor (every chain: actors; where it evens out the cores: auto), one broker too
    cores = os.cpu_count() or 1
    singles: list = []
    par: list = []
    splits: dict[str, list] = {"actors": [], "auto": []} if cores > 1 else {}
    for _ in range(a.runs):
        singles.append(_in_fork(_replay_serial, files, not a.no_check))
        if jobs > 1:
            par.append(_in_fork(_replay_parallel, files, not a.no_check, jobs))
        for split, runs in splits.items():
            runs.append(_in_fork(_replay_split, files, not a.no_check, cores, split))
    median_run = sorted(singles, key=lambda r: r[1])[len(singles) // 2]
    results = {r.path: r for r in median_run[0]}
    cpu_s = median_run[2]
    total_msgs = 0
    total_s = 0.0
    first, last = float("inf"), float("-inf")
    ok = True
    print(f"\n{'trace file':<22}{'messages':>10}{'inputs':>8}{'replay s':>10}{'msg/s':>10}"
          f"{'recorded s':>12}{'speed-up':>10}")
    for path in files:
        span = _first_last_ts(path)
        r = results[path]
        if not a.no_check and not r.identical:
            ok = False
            print(f"{os.path.basename(path)}: DIVERGED at seq {r.divergence.seq if r.divergence else '?'}")
        msgs = r.compared if not a.no_check else _count_records(path)
        total_msgs += msgs
        total_s += r.wall_s
        rec_s = (span[1] - span[0]) / 1000.0 if span else 0.0
        if span:
            first, last = min(first, span[0]), max(last, span[1])
        rate = msgs / r.wall_s if r.wall_s > 0 else 0.0
        speedup = rec_s / r.wall_s if r.wall_s > 0 else 0.0
        print(f"{os.path.basename(path):<22}{msgs:>10}{r.delivered:>8}{r.wall_s:>10.3f}{rate:>10,.0f}"
              f"{rec_s:>12.1f}{speedup:>9.0f}x")
    run_s = (last - first) / 1000.0 if last > first else 0.0
    rate = total_msgs / total_s if total_s > 0 else 0.0
    speedup = run_s / total_s if total_s > 0 else 0.0
    mode = "replay --check" if not a.no_check else "replay (no check)"
    print(f"\n{mode}: {total_msgs} messages of {len(files)} broker processes in {total_s:.2f}s "
          f"= {rate:,.0f} msg/s; the recorded cluster run took {run_s:.1f}s of wall time → {speedup:.0f}x faster "
          f"(targets: ≥ {MIN_MSGS_PER_S:,} msg/s and ≥ {MIN_SPEEDUP:.0f}x)")
    empty = empties[len(empties) // 2]
    print(f"  the same delivery loop with handlers that do nothing (Runtime.deliver on the replay's InlineActorSystem "
          f"into one KActor, {EMPTY_MESSAGES:,} messages, no check; median of {a.runs}, each in a fresh process): "
          f"{empty:,.0f} msg/s; {mode} runs at {rate / empty:.3f}x of it")
    totals = sorted(r[1] for r in singles)
    print(f"  one process, {a.runs} runs (each in a fresh process): median {totals[len(totals) // 2]:.2f}s "
          f"(min {totals[0]:.2f}, max {totals[-1]:.2f}); the table is the median run")
    if jobs > 1:
        from kactor.trace.reader import broker_chains

        chain_s = [sum(results[p].wall_s for p in chain) for chain in broker_chains(files)]
        bound = _best_split(chain_s, jobs)
        print(f"  broker chains in the median run: {', '.join(f'{c:.2f}s' for c in sorted(chain_s, reverse=True))}; "
              f"the best split over {jobs} processes leaves {bound:.2f}s ({100 * bound / total_s:.0f} %) on one, "
              f"i.e. --jobs {jobs} can reach at most {total_msgs / bound:,.0f} msg/s at these per-file times")
    if par:
        ok = ok and all(r.identical for p in par for r in p[0])
        walls = sorted(p[1] for p in par)
        par_s = walls[len(walls) // 2]
        print(f"{mode} --jobs {jobs} --split brokers (this process and {jobs - 1} forked worker(s), each taking the "
              f"next broker's chain, {jobs} at a time): the same "
              f"{total_msgs} messages in {par_s:.2f}s = {total_msgs / par_s:,.0f} msg/s, "
              f"{run_s / par_s:.0f}x faster than the recorded run (worker start-up included; median of {a.runs}, "
              f"min {walls[0]:.2f}s, max {walls[-1]:.2f}s)")
    for split, runs in splits.items():
        ok = ok and all(r.identical for p in runs for r in p[0])
        walls = sorted(p[1] for p in runs)
        split_s = walls[len(walls) // 2]
        units = next(p[2] for p in runs if p[1] == split_s)  # the median run's
        units_cpu = sum(u.cpu_s for u in units)
        largest = max(units, key=lambda u: u.cpu_s)
        cut = sorted({u.label.split(":")[0] for u in units if not u.label.endswith(":whole")})
        print(f"{mode} --jobs {cores} --split {split} ({len(units)} units; "
              f"{'cut by actor: ' + ', '.join(cut) if cut else 'no broker cut'}): the same {total_msgs} messages in "
              f"{split_s:.2f}s = {total_msgs / split_s:,.0f} msg/s, {run_s / split_s:.0f}x faster than the recorded "
              f"run (median of {a.runs}, min {walls[0]:.2f}s, max {walls[-1]:.2f}s); its units took {units_cpu:.2f} "
              f"CPU-s ({units_cpu / cpu_s:.2f}x one process's), the largest ({largest.label}) {largest.cpu_s:.2f} = "
              f"{100 * largest.cpu_s / units_cpu:.0f} % of the work; dealt to {cores} idle cores, largest first, "
              f"they would take {_dealt(units, cores):.2f}s = {total_msgs / _dealt(units, cores):,.0f} msg/s")
    print(f"CPU time of the replays: {cpu_s:.2f}s = {total_msgs / cpu_s:,.0f} msg per CPU-second "
          f"(what the wall-clock figures would be on an otherwise idle core)")
    print(f"identical: {'yes, every file' if ok else 'NO'}; load average now {load_average()}")
    if recorded_here and not a.keep:
        shutil.rmtree(trace_dir, ignore_errors=True)
    elif recorded_here:
        print(f"trace kept in {trace_dir}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
