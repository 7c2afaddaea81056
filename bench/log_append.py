"""Micro-benchmark of the segment log's produce path (core/broker/log.py): Log.append_as_leader of 16 KB batches of
1 KB records (validate + assign offsets + one write + index bookkeeping), against the raw ceiling measured in the
same run: os.write of the same bytes to a file in the same directory (no validation).

    python -m bench.log_append [--mb 200] [--runs 5] [--codec none|lz4|...]

Prints appends/s and MB/s per run, the medians, and the ratio to the ceiling; then how long reopening the last run's
log takes (recovery: every batch of the active segment re-read and CRC-checked) against reading the same file."""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from core.broker.log import Log
from core.broker.log_config import LogConfig
from messages.common import TopicPartition
from protocol import compression
from protocol.records import Record, build_batch


def _batch(codec: int) -> bytes:
    records = [Record(i, i, None, os.urandom(1000)) for i in range(16)]
    return build_batch(records, first_timestamp=int(time.time() * 1000), compression_codec=codec)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=200, help="megabytes appended per run")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--codec", default="none", choices=sorted(compression.NAMES.values()))
    args = parser.parse_args()
    codec = {v: k for k, v in compression.NAMES.items()}[args.codec]
    payload = _batch(codec)
    n = args.mb * 1024 * 1024 // len(payload)
    print(f"batch {len(payload)} bytes (16 x 1 KB records, {args.codec}), {n} appends a run, load "
          f"{os.getloadavg()[0]:.2f}")
    log_rates, raw_rates, recoveries = [], [], []
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as d:
            log = Log(d, TopicPartition("bench", 0), config=LogConfig(segment_bytes=256 * 1024 * 1024))
            t = time.perf_counter()
            for _ in range(n):
                log.append_as_leader(payload, 0, 0)
            log_s = time.perf_counter() - t
            log.close()
            t = time.perf_counter()
            reopened = Log(d, TopicPartition("bench", 0), config=LogConfig(segment_bytes=256 * 1024 * 1024))
            recover_s = time.perf_counter() - t
            assert reopened.log_end_offset == log.log_end_offset
            t = time.perf_counter()
            for seg in reopened.segments:
                with open(seg.log_path, "rb") as f:
                    while f.read(1 << 20):
                        pass
            read_s = time.perf_counter() - t
            recoveries.append((recover_s, read_s, log.size))
            raw_path = os.path.join(d, "raw")
            fd = os.open(raw_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            t = time.perf_counter()
            for _ in range(n):
                os.write(fd, payload)
            raw_s = time.perf_counter() - t
            os.close(fd)
        log_rates.append(n / log_s)
        raw_rates.append(n / raw_s)
        print(f"run {run}: log {n / log_s:,.0f} appends/s ({n * len(payload) / log_s / 1e6:.1f} MB/s); "
              f"raw write {n / raw_s:,.0f}/s ({n * len(payload) / raw_s / 1e6:.1f} MB/s)")
    lm, rm = statistics.median(log_rates), statistics.median(raw_rates)
    recover_s, read_s, size = sorted(recoveries)[len(recoveries) // 2]
    print(f"reopen (recovery of the active segment, {size / 1e6:.0f} MB): median {recover_s:.3f} s = "
          f"{size / recover_s / 1e6:.0f} MB/s; plain read of the files {read_s:.3f} s")
    print(f"median: log {lm:,.0f} appends/s = {lm * len(payload) / 1e6:.1f} MB/s; raw {rm:,.0f}/s = "
          f"{rm * len(payload) / 1e6:.1f} MB/s; ratio log/raw {lm / rm:.2f}")


if __name__ == "__main__":
    main()
