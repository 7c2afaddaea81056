"""Instructions per message, this checkout against a base commit (issue #43, item 1).

``python -m bench.instructions --base REV [--workloads replay,sim,produce] [--trace DIR] [--seeds 1-3] [--mb 8]
[--runs 3]``

Seconds on this VM move by a fifth within minutes for the same code; instruction counts do not. So every workload
runs under ``valgrind --tool=callgrind`` with ``PYTHONHASHSEED=0``, once for its per-process set-up alone and once
with the work, in two trees: this checkout and ``git archive REV`` unpacked beside it (both byte-compiled first, so
that compiling is not counted). The work's share is the difference; it is divided by the workload's messages:

- ``replay``: every broker chain of a kept recording (``--trace DIR``, else `kactor.demo`'s story recorded once here
  with the base's code: a later tree reads an earlier tree's traces, not always the other way round) replayed once
  without the check, per traced message (the replay bench's ``--once replay --no-check`` minus ``--once setup``);
- ``sim``: ``kactor sim`` seeds (default 1-3, 50 steps), per seed;
- ``produce``: the brokers' instructions per MB of produced batches (``--mb``, default 8: batches of 100 records of
  1,000 bytes, as the produce bench's 1 KB records): a leader's and its follower's ReplicaManager, in process on temp
  log dirs with a fake ZooKeeper (tests/support/broker.py), each batch a ProduceRequest (acks=1) through the leader's
  handle_produce (LogValidator's check, the log append) and then the follower's fetch of it (the leader's
  handle_fetch, the follower's handle_fetch_response and append): the core of a produce at RF 2, no sockets or actors.

Then the same two trees run each workload natively, ``--runs`` times alternately, and the medians' ratio is printed
beside the instruction ratio, with the load, so that a reader sees both what the code did and what the hour did.
The probes import only what both trees have (``kactor.trace.replay``, ``kactor.cli.cmd_sim``): a base older than
those APIs cannot be measured here.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# every package a probe imports, tests/ too (the produce probe's fake ZooKeeper is tests/support): a package left out
# is compiled inside the set-up probe of a fresh tree, and the base's set-up then counted ~17.7 M instructions more
PACKAGES = ("actors", "bench", "core", "edges", "kactor", "messages", "protocol", "sim", "spark", "tests", "zk_bridge")

# Each probe runs in the measured tree (cwd and PYTHONPATH): argv is [phase, ...]; phase "setup" stops after what
# every run of the workload does whatever its input, "run" does the work and prints "work_s=<seconds> units=<n>".
_REPLAY_PROBE = r"""
import logging, os, sys, time
logging.disable(logging.CRITICAL)
phase, trace_dir = sys.argv[1], sys.argv[2]
from kactor.trace.reader import broker_chains, ensure_registered, trace_files
from kactor.trace.replay import prepare, replay_chain
ensure_registered()
prepare()
files = trace_files(trace_dir)
if phase == "run":
    t0 = time.perf_counter()
    for chain in broker_chains(files):
        replay_chain(chain, check=False)
    work_s = time.perf_counter() - t0
    units = 0
    for f in files:
        with open(f, encoding="utf-8") as fh:
            units += sum(1 for _ in fh) - 1
    print(f"work_s={work_s} units={units}")
"""

_SIM_PROBE = r"""
import atexit, logging, shutil, sys, tempfile, time
logging.disable(logging.CRITICAL)
phase, first, last, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
from kactor.cli import cmd_sim
scratch = tempfile.mkdtemp(prefix="kactor-instr-sim-")
atexit.register(shutil.rmtree, scratch, True)
cmd_sim._init_worker(cmd_sim.Job(steps, 3, scratch, None, scratch))
if phase == "run":
    t0 = time.perf_counter()
    for seed in range(first, last + 1):
        cmd_sim._run_seed(seed)
    print(f"work_s={time.perf_counter() - t0} units={last - first + 1}")
"""

_PRODUCE_PROBE = r"""
import atexit, logging, pathlib, shutil, sys, tempfile, time
logging.disable(logging.CRITICAL)
phase, mb = sys.argv[1], int(sys.argv[2])
from messages.common import TopicPartition
from messages.replication import ProducePartition, ProduceRequest
from protocol.records import Record, build_batch
from tests.support.broker import broker_zk, drive, lai_request, lai_state, make_rm, settle_truncation
B = 1_000_000
TP = TopicPartition("produce-bench", 0)
VALUE = bytes(i % 251 for i in range(1000))
zk = broker_zk()
zk.put_partition_state(TP, leader=0, isr=[0, 1], leader_epoch=0, controller_epoch=0)
tmp = pathlib.Path(tempfile.mkdtemp(prefix="kactor-instr-produce-"))
atexit.register(shutil.rmtree, tmp, True)
leader, follower = make_rm(tmp, 0, now_ms=B), make_rm(tmp, 1, now_ms=B)
for rm in (leader, follower):
    drive(rm.handle_leader_and_isr(lai_request([lai_state(TP, 0, 0, [0, 1], [0, 1], is_new=True)]), B), zk)
settle_truncation(zk, leader, follower, 0, B)
batches = [build_batch([Record(i, i, None, VALUE) for i in range(100)]) for _ in range(mb * 10)]
if phase == "run":
    t0, now = time.perf_counter(), B
    for batch in batches:
        now += 1
        drive(leader.handle_produce(ProduceRequest(1, 30000, (ProducePartition(TP, batch),)), now), zk)
        fetched = drive(leader.handle_fetch(follower.fetch_request_for(0), now, "broker-1"), zk)
        drive(follower.handle_fetch_response(0, fetched, now), zk)
    ends = {rm.online_partition(TP).log.log_end_offset for rm in (leader, follower)}
    assert ends == {100 * len(batches)}, ends  # every record on both replicas: the work was done
    print(f"work_s={time.perf_counter() - t0} units={sum(len(b) for b in batches)}")
"""

_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")
_WORK = re.compile(r"work_s=([0-9.e+-]+) units=(\d+)")


@dataclass(frozen=True, slots=True)
class Workload:
    name: str
    unit: str  # what one unit of the work is: the divisor of the instructions
    probe: str
    args: tuple[str, ...]
    scale: float = 1.0  # the probe's units in one reported unit (bytes in a MB)


@dataclass(frozen=True, slots=True)
class Count:
    instructions: int  # the work's own: run minus set-up
    units: int

    @property
    def per_unit(self) -> float:
        return self.instructions / self.units if self.units else float("nan")


def _env(tree: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONPATH"] = tree  # ahead of the editable install's finder, so the tree's packages are the ones imported
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # attrs' generated code compiled in every probe (kactor/attrs_code_cache.py off): in a fresh tree the set-up
    # probe, the first process, wrote the cache that the run probe then read, and the run minus the set-up
    # undercounted such a base by what the cache saves (~700 M instructions: 117 k a replayed message against 186 k
    # for the same code measured in the checkout, whose cache both probes read)
    env["KACTOR_ATTRS_CODE_CACHE"] = "0"
    return env


def _run_probe(tree: str, w: Workload, phase: str, valgrind: bool) -> tuple[int | None, float, int]:
    """(instructions if under valgrind, the work's seconds, its units) of one probe process in ``tree``."""
    cmd = [sys.executable, "-c", w.probe, phase, *w.args]
    if valgrind:
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd]
    p = subprocess.run(cmd, cwd=tree, env=_env(tree), capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"bench.instructions: {w.name} {phase} failed in {tree} (exit {p.returncode}):\n"
                         f"{p.stderr[-3000:]}")
    instr = None
    if valgrind:
        m = _COLLECTED.search(p.stderr)
        if m is None:
            raise SystemExit(f"bench.instructions: no 'Collected' line from callgrind:\n{p.stderr[-2000:]}")
        instr = int(m.group(1))
    work = _WORK.search(p.stdout)
    return instr, float(work.group(1)) if work else 0.0, int(work.group(2)) if work else 0


def count(tree: str, w: Workload) -> Count:
    """The work's instructions: the probe with the work minus the probe that stops after the set-up."""
    setup, _, _ = _run_probe(tree, w, "setup", valgrind=True)
    run, _, units = _run_probe(tree, w, "run", valgrind=True)
    assert setup is not None and run is not None
    return Count(run - setup, units)


def base_tree(rev: str, parent: str) -> str:
    """``git archive rev`` unpacked under ``parent``: the base as committed, nothing of the working tree."""
    out = os.path.join(parent, "base")
    os.makedirs(out)
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", out], input=archive, check=True)
    return out


def record_in(tree: str) -> str:
    """`kactor.demo`'s story recorded by ``tree``'s code (its brokers too: they inherit the PYTHONPATH); the folder.
    The base's recording, so that both trees can read it: a trace carries each message's fields as its tree had
    them, and an older tree refuses a field added since (8bf4639 and ReplicaManagerInit's
    transactional_id_expiration_ms)."""
    code = ("from bench.common import scenario_trace\n"
            "print('recorded:', scenario_trace(None, 60, 'kactor-instructions-trace-')[0])")
    p = subprocess.run([sys.executable, "-c", code], cwd=tree, env=_env(tree), capture_output=True, text=True)
    folder = next((line.split(": ", 1)[1] for line in p.stdout.splitlines() if line.startswith("recorded: ")), None)
    if p.returncode != 0 or folder is None:
        raise SystemExit(f"bench.instructions: recording the replay workload's trace in {tree} failed "
                         f"(exit {p.returncode}):\n{p.stdout[-1500:]}{p.stderr[-3000:]}")
    return folder


def compile_tree(tree: str) -> None:
    """Byte-compile a tree's packages, so that neither side's count includes compiling its modules."""
    dirs = [os.path.join(tree, d) for d in PACKAGES if os.path.isdir(os.path.join(tree, d))]
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", *dirs], check=True,
                   stdout=subprocess.DEVNULL)


def _seeds(text: str) -> tuple[int, int]:
    first, _, last = text.partition("-")
    a, b = int(first), int(last or first)
    if a < 1 or b < a:
        raise argparse.ArgumentTypeError(f"--seeds takes FIRST-LAST with 1 <= FIRST <= LAST, not {text!r}")
    return a, b


def _fmt(n: float) -> str:
    return f"{n / 1e6:,.1f} M" if n >= 1e6 else f"{n / 1e3:,.1f} k"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.instructions", description=__doc__.split("\n\n")[0])
    p.add_argument("--base", required=True, help="the commit to compare with (e.g. 8bf4639)")
    p.add_argument("--workloads", default="replay,sim",
                   help="comma-separated: replay, sim, produce (default replay,sim)")
    p.add_argument("--trace", help="the kept recording the replay workload replays (default: record one now)")
    p.add_argument("--seeds", type=_seeds, default=(1, 3), help="the sim workload's seeds, FIRST-LAST (default 1-3)")
    p.add_argument("--steps", type=int, default=50, help="the sim workload's steps a seed (default 50)")
    p.add_argument("--mb", type=int, default=8, help="the produce workload's MB of batches (default 8)")
    p.add_argument("--runs", type=int, default=3, help="native runs of each tree for the wall-clock ratio (default 3)")
    a = p.parse_args(argv)
    names = [n.strip() for n in a.workloads.split(",") if n.strip()]
    unknown = sorted(set(names) - {"replay", "sim", "produce"})
    if unknown:
        p.error(f"unknown workload(s) {', '.join(unknown)}: replay, sim, produce")
    if a.mb < 1:
        p.error("--mb takes a whole number >= 1")
    if shutil.which("valgrind") is None:
        p.error("valgrind is not installed (Debian: apt-get install valgrind)")
    if a.runs < 1:
        p.error("--runs takes a whole number >= 1")

    from bench.common import cpu_model, load_average

    head_rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip() or "?"
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True).stdout.strip()
    head_name = head_rev + ("+changes" if dirty else "")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, load {load_average()}", flush=True)
    work = tempfile.mkdtemp(prefix="kactor-instructions-")
    try:
        base = base_tree(a.base, work)
        for tree in (base, ROOT):
            compile_tree(tree)
        workloads: list[Workload] = []
        for name in names:
            if name == "replay":
                trace = a.trace
                if trace is None:
                    trace = record_in(base)
                    print(f"the recording is kept: pass --trace {trace} to measure again on the same input",
                          flush=True)
                workloads.append(Workload("replay --no-check", "message", _REPLAY_PROBE, (os.path.abspath(trace),)))
            elif name == "produce":
                workloads.append(Workload(f"produce {a.mb} MB RF 2", "MB", _PRODUCE_PROBE, (str(a.mb),), 1e6))
            else:
                first, last = a.seeds
                workloads.append(Workload(f"sim seeds {first}-{last}", "seed", _SIM_PROBE,
                                          (str(first), str(last), str(a.steps))))
        rows = []
        for w in workloads:
            print(f"{w.name}: callgrind, {a.base} then {head_name} ...", flush=True)
            cb, ch = count(base, w), count(ROOT, w)
            walls: dict[str, list[float]] = {"base": [], "head": []}
            for _ in range(a.runs):  # alternately, so that both see the same hour
                for side, tree in (("base", base), ("head", ROOT)):
                    walls[side].append(_run_probe(tree, w, "run", valgrind=False)[1])
            rows.append((w, cb, ch, statistics.median(walls["base"]), statistics.median(walls["head"])))
        print(f"\nload after: {load_average()}")
        print(f"{'workload':<22}{'unit':<9}{a.base:>14}{head_name:>18}{'ratio':>8}"
              f"{'wall ' + a.base:>16}{'wall head':>12}{'ratio':>8}")
        for w, cb, ch, wb, wh in rows:
            if cb.units != ch.units:
                print(f"  note: {w.name}: the base counted {cb.units} {w.unit}s, this checkout {ch.units}")
            print(f"{w.name:<22}{w.unit:<9}{_fmt(cb.per_unit * w.scale):>14}{_fmt(ch.per_unit * w.scale):>18}"
                  f"{ch.per_unit / cb.per_unit:>7.3f}x{wb:>15.2f}s{wh:>11.2f}s{wh / wb:>7.3f}x")
        print("(instructions: callgrind, PYTHONHASHSEED=0, the work minus the set-up; wall: median of "
              f"{a.runs} native runs each, alternating)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
