"""``python -m bench.transport_receive [--partitions 1000] [--rounds 7]``: what a frame costs the transport's I/O
thread as it arrives — `Transport._on_frame`: the frame split at its body, the body parsed and decoded by the codec
(messages.codec), and, with a trace writer open, its text noted for the trace (messages.codec.note_text) — with no
trace and with one, measured in the same run.

Frames: a LeaderAndIsr request of ``--partitions`` partitions (what a controller sends a broker after a failover)
and one of a single partition. Each round times a loop of each frame in both modes, alternating which goes first;
the figure is process CPU time per frame (all threads: the trace's flusher counts), the median over the rounds, and
the ratio traced / untraced. The runtime is a stand-in that drops what the transport injects: only the edge's own
work is measured.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import tempfile
import time
from typing import Any

from bench.common import git_commit, load_average, machine_line
from edges import transport as transport_module
from edges.trace_writer import TraceWriter
from messages.common import Broker, EndPoint, TopicPartition
from messages.net import NetWireRequest
from messages.requests import LeaderAndIsrPartitionState, LeaderAndIsrRequest


class _Runtime:
    """What the transport calls on its runtime: inputs are dropped, every actor exists."""

    process_name = "bench"

    def inject(self, to: str, body: Any, sender: str, cause: int | None = None) -> None:
        pass

    def has_actor(self, name: str) -> bool:
        return True


def _frame(partitions: int) -> bytes:
    states = tuple(LeaderAndIsrPartitionState(TopicPartition(f"topic-{p // 50}", p % 50), 3, 1, 7, (1, 2, 3), 4,
                                              (1, 2, 3)) for p in range(partitions))
    leaders = (Broker(1, (EndPoint("127.0.0.1", 9092),)),)
    request = LeaderAndIsrRequest(1, 3, 100, states, leaders)
    return transport_module.encode_frame(NetWireRequest(1, "replica-manager", request, True))[4:]


def _per_frame_us(t: Any, conn: Any, payload: bytes, reps: int) -> float:
    t0 = time.process_time()
    for _ in range(reps):
        t._on_frame(conn, payload)
    return (time.process_time() - t0) / reps * 1e6


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.transport_receive")
    p.add_argument("--partitions", type=int, default=1000, help="partitions of the big LeaderAndIsr (default 1000)")
    p.add_argument("--rounds", type=int, default=7, help="rounds, each timing every frame in both modes (default 7)")
    a = p.parse_args(argv)
    load_before = load_average()
    frames = {f"LeaderAndIsr, {a.partitions} partitions": (_frame(a.partitions), max(5, 60_000 // a.partitions)),
              "LeaderAndIsr, 1 partition": (_frame(1), 3000)}
    t = transport_module.Transport(_Runtime(), "127.0.0.1", 0)
    a_sock, b_sock = socket.socketpair()
    conn = transport_module._Conn(1, a_sock, False, None, "bench-peer")
    times: dict[tuple[str, str], list[float]] = {(f, m): [] for f in frames for m in ("untraced", "traced")}
    scratch = tempfile.mkdtemp(prefix="kactor-transport-bench-")
    try:
        for r in range(a.rounds):
            for mode in (("untraced", "traced") if r % 2 == 0 else ("traced", "untraced")):
                writer = TraceWriter(os.path.join(scratch, f"{r}-{mode}.jsonl"), {"process": "bench"}) \
                    if mode == "traced" else None
                try:
                    for name, (payload, reps) in frames.items():
                        times[(name, mode)].append(_per_frame_us(t, conn, payload, reps))
                finally:
                    if writer is not None:
                        writer.close()
    finally:
        t.close()
        a_sock.close()
        b_sock.close()
        for f in os.listdir(scratch):
            os.remove(os.path.join(scratch, f))
        os.rmdir(scratch)
    print(f"transport receive path (Transport._on_frame), {a.rounds} rounds; commit {git_commit()}; {machine_line()}; "
          f"load {load_before} → {load_average()}")
    for name in frames:
        untraced = statistics.median(times[(name, "untraced")])
        traced = statistics.median(times[(name, "traced")])
        print(f"{name}: untraced {untraced:,.1f} µs/frame (min {min(times[(name, 'untraced')]):,.1f}), traced "
              f"{traced:,.1f} µs/frame (min {min(times[(name, 'traced')]):,.1f}); ratio traced/untraced "
              f"{traced / untraced:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
