"""``python -m bench.transport_receive [--partitions 1000] [--rounds 7]``: what a Kafka request frame costs the
transport's I/O thread as it arrives — `Inbound.on_request`: the frame decoded (header + body), its ApiSpec found,
the body converted to the internal request (core/api) and the NetRequest handed to the runtime — against the codec's
decode alone (`protocol.framing.decode_request`) of the same frame, measured in the same run.

Frames: a LeaderAndIsr v4 request of ``--partitions`` partitions (what a controller sends a broker after a failover)
and one of a single partition, when a LeaderAndIsr converter is registered; a Metadata v9 request naming
``--partitions // 10`` topics always. Each round times a loop of each frame both ways, alternating which goes first;
the figure is process CPU time per frame, the median over the rounds, and the ratio edge / codec. The runtime is a
stand-in that drops what the transport injects: only the edge's own work is measured.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import time
from collections.abc import Callable
from typing import Any

import core.api  # noqa: F401 - registers every API family
from bench.common import git_commit, load_average, machine_line
from core.api.registry import spec_for_key
from edges import transport as transport_module
from edges.net.selector import Conn
from messages.common import Broker, EndPoint, TopicPartition
from messages.metadata import MetadataRequest
from messages.requests import LeaderAndIsrPartitionState, LeaderAndIsrRequest
from protocol.framing import decode_request

LEADER_AND_ISR_KEY = 4


class _Runtime:
    """What the transport calls on its runtime: inputs are dropped, every actor exists."""

    process_name = "bench"

    def inject(self, to: str, body: Any, sender: str, cause: int | None = None) -> None:
        pass

    def has_actor(self, name: str) -> bool:
        return True


def _payload(body: Any) -> bytes:
    """The request frame (without its size) kactor's own outbound path writes for ``body``."""
    spec = transport_module.outbound_spec(body)
    return transport_module.encode_outbound(spec, body, 1, "controller-1")[4:]


def _leader_and_isr(partitions: int) -> LeaderAndIsrRequest:
    states = tuple(LeaderAndIsrPartitionState(TopicPartition(f"topic-{p // 50}", p % 50), 3, 1, 7, (1, 2, 3), 4,
                                              (1, 2, 3)) for p in range(partitions))
    leaders = (Broker(1, (EndPoint("127.0.0.1", 9092),)),)
    return LeaderAndIsrRequest(1, 3, 100, states, leaders)


def _per_frame_us(fn: Callable[[bytes], Any], payload: bytes, reps: int) -> float:
    t0 = time.process_time()
    for _ in range(reps):
        fn(payload)
    return (time.process_time() - t0) / reps * 1e6


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.transport_receive")
    p.add_argument("--partitions", type=int, default=1000, help="partitions of the big LeaderAndIsr (default 1000)")
    p.add_argument("--rounds", type=int, default=7, help="rounds, each timing every frame both ways (default 7)")
    a = p.parse_args(argv)
    load_before = load_average()
    frames: dict[str, tuple[bytes, int]] = {}
    if spec_for_key(LEADER_AND_ISR_KEY) is not None:
        frames[f"LeaderAndIsr v4, {a.partitions} partitions"] = (_payload(_leader_and_isr(a.partitions)),
                                                                 max(5, 60_000 // a.partitions))
        frames["LeaderAndIsr v4, 1 partition"] = (_payload(_leader_and_isr(1)), 3000)
    topics = max(1, a.partitions // 10)
    frames[f"Metadata v9, {topics} topics"] = (_payload(MetadataRequest(tuple(f"topic-{i}" for i in range(topics)))),
                                               max(20, 200_000 // topics))
    t = transport_module.Transport(_Runtime(), "127.0.0.1", 0)
    a_sock, b_sock = socket.socketpair()
    conn = Conn(1, a_sock, False, None, "bench-peer", "PLAINTEXT", "127.0.0.1")

    def edge(payload: bytes) -> None:
        t.inbound.on_request(conn, payload)
        conn.waiting.clear()  # nobody answers the stand-in runtime's requests
        t.inbound.inflight.clear()

    ways: dict[str, Callable[[bytes], Any]] = {"edge": edge, "codec": decode_request}
    times: dict[tuple[str, str], list[float]] = {(f, w): [] for f in frames for w in ways}
    try:
        for r in range(a.rounds):
            for way in (("edge", "codec") if r % 2 == 0 else ("codec", "edge")):
                for name, (payload, reps) in frames.items():
                    times[(name, way)].append(_per_frame_us(ways[way], payload, reps))
    finally:
        t.close()
        a_sock.close()
        b_sock.close()
    print(f"transport receive path (Inbound.on_request vs protocol.framing.decode_request), {a.rounds} rounds; "
          f"commit {git_commit()}; {machine_line()}; load {load_before} → {load_average()}")
    for name in frames:
        e = statistics.median(times[(name, "edge")])
        c = statistics.median(times[(name, "codec")])
        print(f"{name}: edge {e:,.1f} µs/frame (min {min(times[(name, 'edge')]):,.1f}), codec alone {c:,.1f} "
              f"µs/frame (min {min(times[(name, 'codec')]):,.1f}); ratio edge/codec {e / c:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
