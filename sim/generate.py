"""Traces built by running the simulator: ``kactor trace generate --messages N --brokers B --partitions P --out DIR``.

`generate` runs `kactor sim` seeds (``seed``, ``seed + 1``, ...) as sim/run.py runs them — the brokers' real actors,
ZooKeeper's model, the seed's faults, clients and checks — with the seed's topic of ``partitions`` partitions, each
recording its brokers' traces, until the seeds' record lines reach N or ``sim_lines``, whichever is smaller. Beyond
``sim_lines`` the simulator is too slow for the Spark bench's millions of lines (a few thousand lines a second, against
the tens of thousands a template writer managed), so the rest is *tiled*: copies of the simulated seeds' files, in
turn. The last unit (a seed or a tile) is cut so that exactly N record lines remain: every process's file keeps the
lines up to one instant and one line of it (the merge of the unit's files by (ts, file, line)), as if the unit's
processes had all been killed then; a file left with no line goes. Every record line is one the real actors wrote.

One flat folder, as the Spark summary and DuckDB read it: unit ``u`` (the first seed is unit 0, each further seed or
tile the next) writes its brokers as ``broker-<10u + b>[.k].jsonl`` (and its ``.bin``), ``b`` the simulated broker, so
the last digit names it and a broker's incarnations still form one chain for ``kactor trace replay`` (every unit,
tiles and the cut one too, replays with ``--check``). A renamed file's header has its new ``process``
(``broker-<10u + b>``) and ``sim_process``, the name the simulator gave it (``broker-<b>``); a tile's also
``tile_of``, the name of the file it copies (``broker-2.1``). The units' clocks all
start at the same simulated instant (sim.runtime.START_MS), so they overlap in time.

The brokers iterate sets in an order that depends on the string hash seed: traces replay, and two runs give the same
bytes, only in processes with the same PYTHONHASHSEED (`kactor trace generate` fixes it to 0, as `kactor sim` does).
"""

from __future__ import annotations

import heapq
import json
import logging
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator

import attrs

from protocol.zk import paths
from sim.coordinator_loads import LoadChecks
from sim.groups import grouped
from sim.limits import MAX_BROKERS, MIN_BROKERS, SIM_LINES, STEPS
from sim.run import (
    START_MS_MAX,
    TOPIC,
    ActorErrors,
    Cluster,
    SeedResult,
    create_offsets_topic,
    create_topic,
    create_transaction_state_topic,
    play,
    run_until,
    topic_ready,
)
from sim.runtime import Boot, Sim
from sim.transactions import transactional

UNIT_IDS = 10  # unit u's broker b is named broker-<UNIT_IDS * u + b>

_NAME = re.compile(r"^broker-(\d+)((?:\.\d+)?)\.jsonl$")
_TS = re.compile(rb'^\{"seq":-?[0-9]+,"ts":([^,]+),')


@attrs.frozen
class GenerateStats:
    """What `generate` wrote: ``messages`` record lines in ``files`` (their paths, in name order)."""

    messages: int
    files: tuple[str, ...]
    partitions: int  # the seeds' topic's
    topics: int  # the most topics a seed's cluster held at its end (its own, the internal ones, the admin ops')
    elapsed_s: float
    seeds: tuple[int, ...] = ()  # the seeds simulated, in order (unit 0 is the first)
    simulated: int = 0  # the record lines the seeds wrote, before any cut
    sim_s: float = 0.0  # the time running them took
    tiles: int = 0  # the units copied from simulated ones
    failing: tuple[int, ...] = ()  # seeds whose run broke an invariant (their traces are as real as the others')


@attrs.frozen
class _File:
    path: str
    broker: int  # the simulated broker
    incarnation: int
    lines: int  # record lines


def run_generated_seed(seed: int, steps: int, boot: Boot, brokers: int, partitions: int, trace_dir: str,
                       scratch: str | None = None) -> tuple[SeedResult, int]:
    """sim.run.run_seed with the seed's topic of ``partitions`` partitions (sim.run.start_cluster's has
    sim.run.PARTITIONS) and its brokers' traces in ``trace_dir``: the cluster started on an empty ZooKeeper, the
    topic created and, on the seeds that have them, the internal topics, then `sim.run.play`. Returns the seed's
    result and how many topics its cluster held at the end."""
    t0, c0 = time.perf_counter(), time.process_time()
    sim = Sim(seed, boot, brokers, trace_dir=trace_dir, scratch=scratch)
    errors = ActorErrors(sim)
    logging.getLogger().addHandler(errors)
    cluster = Cluster(sim, errors, {}, LoadChecks(sim).install())
    try:
        for b in sim.brokers:
            sim.start(b)
        run_until(sim, lambda: all(b.serving for b in sim.brokers.values()) and paths.ControllerZNode in sim.zk.nodes,
                  START_MS_MAX)
        cluster.assignment = create_topic(sim, TOPIC, partitions, min(3, brokers))
        internal = {**(create_offsets_topic(sim) if grouped(seed) else {}),
                    **(create_transaction_state_topic(sim) if transactional(seed) else {})}
        run_until(sim, lambda: topic_ready(sim, {**cluster.assignment, **internal}), START_MS_MAX)
        result = play(cluster, seed, steps, t0=t0, c0=c0)
        prefix = paths.TopicsZNode + "/"
        topics = sum(1 for p in sim.zk.nodes if p.startswith(prefix) and "/" not in p[len(prefix):])
        return result, topics
    finally:
        cluster.close()


def generate(out: str, messages: int, brokers: int, partitions: int, seed: int, boot: Boot, *,
             sim_lines: int = SIM_LINES, steps: int = STEPS, scratch: str | None = None) -> GenerateStats:
    """Write exactly ``messages`` record lines of simulated brokers' traces into the folder ``out`` (made if
    missing; it must hold no ``*.jsonl``): seeds ``seed``, ``seed + 1``, ... of ``steps`` steps with ``brokers``
    brokers and a topic of ``partitions`` partitions until ``min(messages, sim_lines)`` lines, then tiles, the last
    unit cut (the module's docstring). ``boot`` builds the simulated brokers (kactor/sim_boot.py's SimBoot: the
    shell hands it in); ``scratch``: where the runs' log dirs go (default tmpfs)."""
    if messages < 1 or partitions < 1 or sim_lines < 1 or steps < 1:
        raise ValueError("messages, partitions, sim_lines and steps must all be at least 1")
    if not MIN_BROKERS <= brokers <= MAX_BROKERS:
        raise ValueError(f"brokers must be between {MIN_BROKERS} and {MAX_BROKERS} (the simulator's topic has 3 "
                         "replicas)")
    t0 = time.perf_counter()
    os.makedirs(out, exist_ok=True)
    if any(name.endswith(".jsonl") for name in os.listdir(out)):
        raise ValueError(f"{out}: holds a trace already (*.jsonl); give an empty or new folder")
    units: list[list[_File]] = []
    seeds: list[int] = []
    failing: list[int] = []
    topics = 0
    total = 0
    work = tempfile.mkdtemp(prefix=".kactor-generate-", dir=out)  # beside the output: the files move by rename
    try:
        while total < min(messages, sim_lines):
            s = seed + len(units)
            trace_dir = os.path.join(work, f"seed-{s}")
            result, n_topics = run_generated_seed(s, steps, boot, brokers, partitions, trace_dir, scratch)
            seeds.append(s)
            topics = max(topics, n_topics)
            if not result.ok:
                failing.append(s)
            units.append(_move_unit(trace_dir, out, len(units)))
            total += sum(f.lines for f in units[-1])
            shutil.rmtree(trace_dir)
        simulated, sim_s = total, time.perf_counter() - t0
        sources = list(units)
        while total < messages:
            units.append(_tile(sources[(len(units) - len(sources)) % len(sources)], out, len(units)))
            total += sum(f.lines for f in units[-1])
        if total > messages:
            _cut(units[-1], total - messages)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    files = tuple(sorted((f.path for unit in units for f in unit if os.path.exists(f.path)), key=_name_order))
    return GenerateStats(messages, files, partitions, topics, time.perf_counter() - t0, tuple(seeds), simulated,
                         sim_s, len(units) - len(seeds), tuple(failing))


def _name_order(path: str) -> tuple[int, int]:
    m = _NAME.match(os.path.basename(path))
    assert m is not None
    return int(m.group(1)), int(m.group(2)[1:] or 0)


def _count_lines(path: str) -> int:
    """The record lines of a closed trace file (every line but the header ends with a newline)."""
    n = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            n += chunk.count(b"\n")
    return n - 1


def _write_renamed(src: str, dst: str, header_keys: dict[str, str]) -> None:
    """``src`` copied to ``dst`` with its header's keys set (the trace writer's header encoding) and every record
    line as it is; its bytes file (``.bin``) copied beside it."""
    with open(src, "rb") as f, open(dst, "wb") as g:
        header = json.loads(f.readline())
        header.update(header_keys)
        g.write(json.dumps(header, separators=(",", ":")).encode() + b"\n")
        shutil.copyfileobj(f, g, 1 << 20)
    src_bin, dst_bin = src[: -len(".jsonl")] + ".bin", dst[: -len(".jsonl")] + ".bin"
    if os.path.exists(src_bin):
        shutil.copyfile(src_bin, dst_bin)


def _unit_name(unit: int, broker: int, incarnation: int) -> str:
    return f"broker-{UNIT_IDS * unit + broker}" + (f".{incarnation}" if incarnation else "")


def _move_unit(trace_dir: str, out: str, unit: int) -> list[_File]:
    """A simulated seed's files into ``out`` as unit ``unit``: moved as they are for unit 0, renamed for the others."""
    files = []
    for name in sorted(os.listdir(trace_dir)):
        m = _NAME.match(name)
        if m is None:
            continue
        broker, incarnation = int(m.group(1)), int(m.group(2)[1:] or 0)
        stem = _unit_name(unit, broker, incarnation)
        src, dst = os.path.join(trace_dir, name), os.path.join(out, stem + ".jsonl")
        if unit == 0:
            os.rename(src, dst)
            if os.path.exists(src_bin := src[: -len(".jsonl")] + ".bin"):
                os.rename(src_bin, dst[: -len(".jsonl")] + ".bin")
        else:
            _write_renamed(src, dst, {"process": _unit_name(unit, broker, 0), "sim_process": f"broker-{broker}"})
        files.append(_File(dst, broker, incarnation, _count_lines(dst)))
    return files


def _tile(source: list[_File], out: str, unit: int) -> list[_File]:
    """A copy of a simulated unit's files as unit ``unit``: every record line as it is, the header renamed."""
    files = []
    for f in source:
        stem = _unit_name(unit, f.broker, f.incarnation)
        dst = os.path.join(out, stem + ".jsonl")
        _write_renamed(f.path, dst, {"process": _unit_name(unit, f.broker, 0), "sim_process": f"broker-{f.broker}",
                                     "tile_of": os.path.basename(f.path)[: -len(".jsonl")]})
        files.append(attrs.evolve(f, path=dst))
    return files


def _timestamps(path: str) -> Iterator[tuple[float, int]]:
    """Each record line's ts and its index in the file, in file order (the writer's key order: ts second)."""
    with open(path, "rb") as f:
        f.readline()
        for i, line in enumerate(f):
            m = _TS.match(line)
            if m is None:
                raise ValueError(f"{path}: line {i + 2}: not a record line in the trace writer's key order")
            yield float(m.group(1)), i


def _cut(unit: list[_File], excess: int) -> None:
    """Drop the unit's last ``excess`` record lines in (ts, broker, incarnation, line) order: each file keeps a
    prefix, the lines up to one instant (and some of that instant's), as if every process had been killed then; a
    file left with no record line is removed with its bytes file. A process's clock never goes back (the
    simulator's is one ManualClock), so the lines kept of each file are its first ones."""
    keep = sum(f.lines for f in unit) - excess
    order = sorted(range(len(unit)), key=lambda i: (unit[i].broker, unit[i].incarnation))
    kept = [0] * len(unit)

    def keyed(rank: int, i: int) -> Iterator[tuple[float, int, int, int]]:
        return ((ts, rank, line, i) for ts, line in _timestamps(unit[i].path))

    merged = heapq.merge(*[keyed(rank, i) for rank, i in enumerate(order)])
    for _, (_ts, _rank, _line, i) in zip(range(keep), merged, strict=False):
        kept[i] += 1
    for f, k in zip(unit, kept, strict=True):
        if k == 0:
            os.remove(f.path)
            if os.path.exists(bin_path := f.path[: -len(".jsonl")] + ".bin"):
                os.remove(bin_path)
            continue
        with open(f.path, "rb+") as fh:
            fh.readline()
            for _ in range(k):
                fh.readline()
            fh.truncate(fh.tell())


__all__ = ["MAX_BROKERS", "MIN_BROKERS", "SIM_LINES", "STEPS", "GenerateStats", "generate", "run_generated_seed"]
