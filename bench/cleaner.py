"""cleaner: the log cleaner's throughput against a plain read-and-rewrite of the same segments, and the load of a
group coordinator's ``__consumer_offsets`` partition compacted against uncompacted, in one run.

``kactor bench cleaner [--mb 64] [--keys 10000] [--value-bytes 100] [--commits 100000] [--runs 3] [--no-doc]``

A compacted log of ``--mb`` MB of overwrites (``--keys`` keys, 1 MiB segments) is built once; each run copies its
directory and times, alternating: (a) the cleaner on it (core/broker/cleaner: offset map, recopy into ``.cleaned``
segments, swap) and (b) every non-active segment read batch by batch, its records parsed and the batch written to a
new file (the same reads, parsing and writes without the offset map and the rebuilt batches). MB/s is over the
bytes read. Then a ``__consumer_offsets`` partition holding one group's ``--commits`` offset commits over 10
partitions is loaded by the group coordinator's own load (GroupMetadataManager.load_groups_and_offsets, Kafka's
doLoadGroupsAndOffsets: read from the log start in offsets.load.buffer.size reads, each key's last record winning),
before and after cleaning.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any

from bench.common import IN_CHECKOUT, append_doc_line, git_commit, load_average, machine_line
from core.broker.cleaner.cleaner import batches, clean_log
from core.broker.cleaner.manager import grab_filthiest_compacted_log, plan_cleaning
from core.broker.cleaner.swap import apply_cleaning
from core.broker.log import Log
from core.broker.log_config import LogConfig
from core.coordinator.coordinator_loader import LogRead, LogStart
from core.coordinator.group.group_metadata_manager import LOAD_BUFFER_SIZE, GroupMetadataManager, ReadLog, ReadLogStart
from core.coordinator.group.message_formats import (
    OffsetAndMetadata,
    offset_commit_key,
    offset_commit_value,
    records_batch,
)
from messages.common import Errors, TopicPartition
from messages.log_cleaner import LogCleaned
from protocol.records import Record, build_batch, read_records

TP = TopicPartition("bench-compacted", 0)
OFFSETS_TP = TopicPartition("__consumer_offsets", 0)
MAP_MEMORY = 128 * 1024 * 1024  # log.cleaner.dedupe.buffer.size, one thread
T0 = 1_700_000_000_000


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mb", type=float, default=64.0, help="MB of overwrites in the compacted log (default 64)")
    p.add_argument("--keys", type=int, default=10_000, help="distinct keys (default 10,000)")
    p.add_argument("--value-bytes", type=int, default=100, help="value size (default 100 B)")
    p.add_argument("--commits", type=int, default=100_000, help="offset commits of the group (default 100,000)")
    p.add_argument("--runs", type=int, default=3, help="measured runs (median, min, max; default 3)")
    p.add_argument("--no-doc", action="store_true", help="do not append the result to docs/performance.md")


def _config(segment_bytes: int = 1 << 20) -> LogConfig:
    return LogConfig(cleanup_policy="compact", segment_bytes=segment_bytes, min_cleanable_dirty_ratio=0.0)


def _build_log(directory: str, mb: float, keys: int, value_bytes: int) -> Log:
    log = Log(directory, TP, config=_config())
    value = b"v" * value_bytes
    n, target = 0, int(mb * 1024 * 1024)
    while log.size < target:
        batch = build_batch([Record(i, 0, f"key-{(n + i) % keys}".encode(), value) for i in range(50)],
                            first_timestamp=T0)
        log.append_as_leader(batch, leader_epoch=0, now_ms=T0)
        n += 50
    log.update_high_watermark(log.log_end_offset)
    log.close()
    return log


def _open(directory: str, tp: TopicPartition = TP) -> Log:
    log = Log(directory, tp, config=_config())
    log.update_high_watermark(log.log_end_offset)
    return log


def _clean(log: Log) -> tuple[float, int, int]:
    """(seconds, bytes read, bytes written) of one full clean."""
    start = time.perf_counter()
    chosen = grab_filthiest_compacted_log({log.topic_partition: log}, {}, (), T0).chosen
    assert chosen is not None
    plan = plan_cleaning(chosen, MAP_MEMORY, 0.9)
    result = clean_log(log.segments, plan, log.config.index_interval_bytes)
    assert apply_cleaning(log, LogCleaned(plan, result.groups, result.end_offset), clean_here=False)
    return time.perf_counter() - start, result.stats.bytes_read, result.stats.bytes_written


def _rewrite(log: Log, out_dir: str) -> tuple[float, int]:
    """(seconds, bytes read) of reading every non-active segment's batches, parsing their records and writing them
    out unchanged."""
    start = time.perf_counter()
    read = 0
    for segment in log.segments[:-1]:
        with open(os.path.join(out_dir, f"{segment.base_offset:020d}.log.copy"), "wb") as out:
            for chunk, size in batches(segment, lambda: None):
                read += size
                for batch in chunk:
                    read_records(batch)
                    out.write(batch.raw)
            out.flush()
            os.fsync(out.fileno())
    return time.perf_counter() - start, read


def _load_groups(log: Log) -> tuple[float, int]:
    """(seconds, offsets loaded) of the group coordinator's own load of the partition
    (GroupMetadataManager.load_groups_and_offsets, doLoadGroupsAndOffsets), its reads answered from the log in
    offsets.load.buffer.size reads as the coordinator's actor answers them."""
    manager = GroupMetadataManager(0, 1, 5000, 4096, lambda: T0)
    start = time.perf_counter()
    proc = manager.load_groups_and_offsets(OFFSETS_TP.partition)
    effect: Any = next(proc)
    try:
        while True:
            if isinstance(effect, ReadLogStart):
                effect = proc.send(LogStart(Errors.NONE, log.log_start_offset))
            elif isinstance(effect, ReadLog):
                effect = proc.send(LogRead(Errors.NONE, log.read(effect.offset, LOAD_BUFFER_SIZE),
                                           log.log_start_offset, log.log_end_offset, log.high_watermark))
            else:
                raise AssertionError(f"the load asked for {effect!r}")
    except StopIteration as done:
        groups = done.value or []
    return time.perf_counter() - start, sum(len(g.offsets) for g in groups)


def _median(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} (min {min(xs):.2f}, max {max(xs):.2f}, n={len(xs)})"


def run(args: argparse.Namespace, command: str) -> int:
    from kactor.cli import CliError

    if args.mb <= 0 or args.keys < 1 or args.value_bytes < 0 or args.commits < 10 or args.runs < 1:
        raise CliError("--mb must be > 0, --keys and --runs >= 1, --commits >= 10, --value-bytes >= 0", 2)
    load_before = load_average()
    print(f"cleaner: {args.mb:g} MB of overwrites of {args.keys:,} keys ({args.value_bytes} B values), "
          f"{args.commits:,} offset commits; {machine_line()}; load {load_before}", flush=True)
    base = tempfile.mkdtemp(prefix="kactor-bench-cleaner-")
    try:
        source = os.path.join(base, "source")
        built = _build_log(source, args.mb, args.keys, args.value_bytes)
        print(f"  built {built.size / 1e6:.1f} MB in {len(built.segments)} segments", flush=True)
        clean_mbs, copy_mbs, reduction = [], [], []
        for i in range(args.runs):
            for kind in (("clean", "copy") if i % 2 == 0 else ("copy", "clean")):
                work = os.path.join(base, f"run-{i}-{kind}")
                shutil.copytree(source, work)
                log = _open(work)
                if kind == "clean":
                    secs, read, written = _clean(log)
                    clean_mbs.append(read / 1e6 / secs)
                    reduction.append(100 * (1 - written / read))
                else:
                    out = os.path.join(base, f"run-{i}-out")
                    os.mkdir(out)
                    secs, read = _rewrite(log, out)
                    copy_mbs.append(read / 1e6 / secs)
                    shutil.rmtree(out)
                shutil.rmtree(work)
            print(f"  run {i + 1}: cleaner {clean_mbs[-1]:.1f} MB/s, read-and-rewrite {copy_mbs[-1]:.1f} MB/s "
                  f"(load {load_average()})", flush=True)
        # a group's __consumer_offsets partition: --commits commits over 10 partitions
        offsets_dir = os.path.join(base, "offsets")
        log = Log(offsets_dir, OFFSETS_TP, config=_config(100 * 1024))  # offsets.topic.segment.bytes, scaled
        keys = [offset_commit_key("bench-group", TopicPartition("input", p)) for p in range(10)]
        for n in range(args.commits):
            om = OffsetAndMetadata(n, commit_timestamp=T0)
            log.append_as_leader(records_batch([(keys[n % 10], offset_commit_value(om))], T0), 0, T0)
        log.update_high_watermark(log.log_end_offset)
        uncompacted, compacted = [], []
        size_before = log.size
        for _ in range(args.runs):
            secs, loaded = _load_groups(log)
            assert loaded == 10
            uncompacted.append(secs)
        _clean(log)
        size_after = log.size
        for _ in range(args.runs):
            secs, loaded = _load_groups(log)
            assert loaded == 10
            compacted.append(secs)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    ratio = statistics.median(clean_mbs) / statistics.median(copy_mbs)
    load_ratio = statistics.median(uncompacted) / statistics.median(compacted)
    lines = [f"  cleaner          : {_median(clean_mbs)} MB/s read ({statistics.median(reduction):.1f}% smaller)",
             f"  read-and-rewrite : {_median(copy_mbs)} MB/s",
             f"  ratio            : {ratio:.2f}x",
             f"  group load       : uncompacted {size_before / 1e6:.1f} MB {_median(uncompacted)} s; compacted "
             f"{size_after / 1e3:.1f} KB {_median(compacted)} s ({load_ratio:.0f}x faster)",
             f"  load             : {load_before} (before) -> {load_average()} (after)"]
    print("\n".join(lines), flush=True)
    if not args.no_doc and IN_CHECKOUT:
        import datetime

        append_doc_line(
            f"- {datetime.date.today().isoformat()} `{git_commit()}` ({machine_line()}; load {load_before} → "
            f"{load_average()}) **cleaner** {args.mb:g} MB of overwrites of {args.keys:,} keys: cleaner "
            f"**{_median(clean_mbs)} MB/s** ({statistics.median(reduction):.1f}% smaller); read-and-rewrite of the "
            f"same segments {_median(copy_mbs)} MB/s; ratio {ratio:.2f}×; group load of a __consumer_offsets "
            f"partition of {args.commits:,} commits: uncompacted ({size_before / 1e6:.1f} MB) {_median(uncompacted)} "
            f"s, compacted ({size_after / 1e3:.1f} KB) {_median(compacted)} s. `{command}`")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.cleaner", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    a = p.parse_args(argv)
    return run(a, "python -m bench.cleaner " + " ".join(argv if argv is not None else sys.argv[1:]))


if __name__ == "__main__":
    sys.exit(main())
