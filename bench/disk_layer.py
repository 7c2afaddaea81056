"""What the Disk layer (core/disk.py) costs a live log: a loop of small appends (one 100-byte record a batch, as the
simulator's producer sends), a read of each back, a roll to a new segment every 200 appends, and a reopen that
recovers the active segment — on the OS disk, as a live broker runs it.

    python -m bench.disk_layer [--appends 3000] [--dir DIR]

Run it under ``valgrind --tool=callgrind`` on two trees (``PYTHONPATH=<tree>``) to compare instruction counts; with
``--appends 0`` for the start-up both share (imports), which the comparison subtracts. Prints the wall time too.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from core.broker.log import Log
from core.broker.log_config import LogConfig
from messages.common import TopicPartition
from protocol.records import Record, build_batch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--appends", type=int, default=3000)
    parser.add_argument("--dir", default=os.environ.get("BENCH_DIR"))
    args = parser.parse_args()
    payload = build_batch([Record(0, 0, None, b"v" * 100)], first_timestamp=1_700_000_000_000)
    tp = TopicPartition("bench", 0)
    config = LogConfig(segment_bytes=200 * len(payload))
    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        t = time.perf_counter()
        log = Log(d, tp, config=config, now_ms=1_700_000_000_000)
        for i in range(args.appends):
            log.append_as_leader(payload, 0, 1_700_000_000_000 + i)
            log.read(i, 1 << 20)
        log.close()
        reopened = Log(d, tp, config=config, recovery_point=0)
        assert reopened.log_end_offset == args.appends
        elapsed = time.perf_counter() - t
    print(f"{args.appends} appends + reads, {len(reopened.segments)} segments, reopen: {elapsed:.3f} s")


if __name__ == "__main__":
    main()
