"""``python -m bench.malloc_policy [--runs N] [--mb N]``: µs to build a 1 MB Fetch answer's frame and copy it the way
a broker's data path does, in a fresh process with glibc's default allocator and in one with `edges.malloc_policy`
installed, measured in the same run.

Each process runs the same loop: a Fetch v11 answer carrying one partition of ``--mb`` MB of records is encoded
(`protocol.framing.encode_response`), then the frame is copied as a follower's side copies it (a read buffer, the
frame cut from it, the records sliced out of it). Every buffer is allocated afresh, as in a broker; with the
default allocator each large one is a new mapping whose pages fault in on first touch. The figure is the median of
``--runs`` timings of 50 iterations, wall time; the ratio is default ÷ installed (higher: the policy saves more).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from bench.common import git_commit, load_average, machine_line


def _child(mb: int, runs: int, install: bool) -> list[float]:
    from edges import malloc_policy
    from protocol.framing import encode_response

    if install and not malloc_policy.install():
        raise SystemExit("malloc_policy.install() did not apply here (not glibc, or MALLOC_*_ set)")
    records = bytes(range(256)) * (4096 * mb)
    body = {"throttle_time_ms": 0, "error_code": 0, "session_id": 1, "responses": [{"topic": "t", "partitions": [
        {"partition_index": 0, "error_code": 0, "high_watermark": 1, "last_stable_offset": 1, "log_start_offset": 0,
         "aborted_transactions": [], "preferred_read_replica": -1, "records": records}]}]}
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(50):
            frame = encode_response(1, 11, 7, body)
            received = bytearray()
            received += frame  # the follower's read buffer
            cut = bytes(memoryview(received)[4:])  # the frame cut from it
            sliced = cut[60:]  # the records sliced out of it
            del frame, received, cut, sliced
        out.append((time.perf_counter() - start) / 50 * 1e6)
    return out


def measure(mb: int, runs: int) -> dict[str, list[float]]:
    """Each mode in a process of its own (the allocator's state is per process)."""
    result = {}
    for mode in ("default", "installed"):
        proc = subprocess.run([sys.executable, "-m", "bench.malloc_policy", "--child", mode, "--mb", str(mb),
                               "--runs", str(runs)], capture_output=True, text=True, check=True)
        result[mode] = json.loads(proc.stdout)
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.malloc_policy")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--mb", type=int, default=1)
    p.add_argument("--child", choices=("default", "installed"), help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        print(json.dumps(_child(a.mb, a.runs, a.child == "installed")))
        return 0
    print(f"{machine_line()}  commit {git_commit()}  load before {load_average()}")
    r = measure(a.mb, a.runs)
    default, installed = statistics.median(r["default"]), statistics.median(r["installed"])
    for mode, times in r.items():
        print(f"{mode:10} {statistics.median(times):9,.1f} µs a {a.mb} MB answer (min {min(times):,.1f}, "
              f"max {max(times):,.1f}, n={len(times)})")
    print(f"ratio default/installed: {default / installed:.1f}x  load after {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
