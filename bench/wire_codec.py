"""``python -m bench.wire_codec [--runs N]``: encode/decode µs per message of the generated Kafka codec (protocol/)
against kio 0.5.0's serializer, the independent encoder the tests compare with, measured in the same run.

Messages: a Metadata v9 response (100 topics x 10 partitions, 3 brokers), a Produce v8 request and a Fetch v11
response (10 partitions x one 16 KiB record batch each), a LeaderAndIsr v4 request with 5,000 partitions (50 topics x
100, replicas [1,2,3]). Each figure is the median of ``--runs`` timings (process CPU time) of a loop sized to about
0.2 s. kio works on its own dataclasses, so its side is timed on the entity it decodes from our bytes (equal bytes
back).
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
from collections.abc import Callable

from kio.serial import entity_reader, entity_writer

from bench.common import git_commit, load_average, machine_line
from protocol.codec import codec
from protocol.records import Record, build_batch
from protocol.schema import kio_class

BATCH = build_batch([Record(i, i, b"key-%d" % i, b"v" * 160) for i in range(100)], first_timestamp=1_700_000_000_000)


def metadata() -> dict:
    partitions = [
        {"partition_index": p, "leader_id": 1 + p % 3, "leader_epoch": 4, "replica_nodes": [1, 2, 3],
         "isr_nodes": [1, 2, 3], "offline_replicas": []}
        for p in range(10)
    ]  # fmt: skip
    return {
        "brokers": [{"node_id": b, "host": "127.0.0.1", "port": 9092 + b, "rack": None} for b in (1, 2, 3)],
        "cluster_id": "kactor-cluster-id-00000",
        "controller_id": 1,
        "topics": [{"name": f"topic-{t:03d}", "partitions": partitions} for t in range(100)],
    }


def produce() -> dict:
    return {
        "acks": -1,
        "timeout_ms": 30000,
        "topic_data": [{"name": "orders", "partition_data": [{"index": p, "records": BATCH} for p in range(10)]}],
    }


def fetch() -> dict:
    parts = [
        {"partition_index": p, "high_watermark": 1000, "last_stable_offset": 1000, "log_start_offset": 0,
         "aborted_transactions": [], "preferred_read_replica": -1, "records": BATCH}
        for p in range(10)
    ]  # fmt: skip
    return {"session_id": 7, "responses": [{"topic": "orders", "partitions": parts}]}


def leader_and_isr() -> dict:
    return {
        "controller_id": 1,
        "controller_epoch": 3,
        "broker_epoch": 25,
        "topic_states": [
            {"topic_name": f"topic-{t:02d}", "partition_states": [
                {"partition_index": p, "controller_epoch": 3, "leader": 1 + p % 3, "leader_epoch": 2,
                 "isr": [1, 2, 3], "zk_version": 2, "replicas": [1, 2, 3], "adding_replicas": [],
                 "removing_replicas": [], "is_new": False}
                for p in range(100)]}
            for t in range(50)
        ],
        "live_leaders": [{"broker_id": b, "host_name": "127.0.0.1", "port": 9092 + b} for b in (1, 2, 3)],
    }  # fmt: skip


CASES: list[tuple[str, int, int, str, Callable[[], dict]]] = [
    ("Metadata v9 response (1,000 partitions)", 3, 9, "response", metadata),
    ("Produce v8 request (10 x 16 KiB batches)", 0, 8, "request", produce),
    ("Fetch v11 response (10 x 16 KiB batches)", 1, 11, "response", fetch),
    ("LeaderAndIsr v4 request (5,000 partitions)", 4, 4, "request", leader_and_isr),
]


def _median_us(fn: Callable[[], object], runs: int, seconds: float = 0.2) -> float:
    """Median CPU time of ``fn`` in µs: this process's CPU time, not wall time, so that the other work on a shared
    machine stretches neither side (the codec is single-threaded pure Python)."""
    start = time.process_time()
    fn()
    once = time.process_time() - start
    loops = max(1, int(seconds / max(once, 1e-6)))
    times = []
    for _ in range(runs):
        start = time.process_time()
        for _ in range(loops):
            fn()
        times.append((time.process_time() - start) / loops)
    return statistics.median(times) * 1e6


def measure(runs: int, seconds: float = 0.2) -> list[tuple[str, int, float, float, float, float]]:
    rows = []
    for label, key, version, direction, make in CASES:
        encode, decode = codec(key, version, direction)
        value = make()
        data = encode(value)
        cls = kio_class(key, version, direction)
        read, write = entity_reader(cls), entity_writer(cls)
        entity, _ = read(memoryview(data), 0)

        def kio_encode(entity: object = entity, write: Callable = write) -> bytes:
            out = io.BytesIO()
            write(out, entity)
            return out.getvalue()

        assert kio_encode() == data, label  # the same bytes from both before timing either
        rows.append((
            label, len(data),
            _median_us(lambda value=value, encode=encode: encode(value), runs, seconds),
            _median_us(lambda data=data, decode=decode: decode(data, 0), runs, seconds),
            _median_us(kio_encode, runs, seconds),
            _median_us(lambda data=data, read=read: read(memoryview(data), 0), runs, seconds),
        ))  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.wire_codec")
    p.add_argument("--runs", type=int, default=5)
    a = p.parse_args(argv)
    print(f"{machine_line()}  commit {git_commit()}  load before {load_average()}")
    rows = measure(a.runs)
    print(f"{'message':44} {'bytes':>9} {'enc µs':>9} {'kio enc':>9} {'x':>6} {'dec µs':>9} {'kio dec':>9} {'x':>6}")
    for label, size, enc, dec, kenc, kdec in rows:
        print(f"{label:44} {size:>9,} {enc:>9,.0f} {kenc:>9,.0f} {kenc / enc:>5.1f}x {dec:>9,.0f} {kdec:>9,.0f} "
              f"{kdec / dec:>5.1f}x")  # fmt: skip
    print(f"medians of {a.runs} runs, CPU time; x = kio time / ours; load after {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
