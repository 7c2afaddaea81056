"""One request in flight per connection on a real broker (Kafka's SocketServer Processor mutes a channel until its
response is sent): a client that pipelines 300 Fetch requests of ~1 MB and never reads costs the broker a few
answers' worth of memory, not 300 MB, and the broker keeps serving everyone else, acks=0 producers included."""

from __future__ import annotations

import socket
import struct
import time
from typing import Any

from cluster_helpers import Cluster
from kafka_clients_helpers import OVERRIDES, bootstrap, closing_producer, read_partition

from protocol.framing import RequestHeader, decode_response, encode_request

FETCH_V4 = 4
MB = 1 << 20


def _fetch_frame(topic: str, correlation_id: int) -> bytes:
    return encode_request(RequestHeader(1, FETCH_V4, correlation_id, "never-reads"), {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": MB, "isolation_level": 0,
        "topics": [{"topic": topic, "partitions": [{"partition": 0, "fetch_offset": 0,
                                                     "partition_max_bytes": MB}]}]})


def _read_frame(s: socket.socket) -> bytes:
    def exactly(n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = s.recv(n - len(buf))
            assert chunk, "the broker closed the connection"
            buf += chunk
        return buf
    return exactly(struct.unpack(">i", exactly(4))[0])


def _rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for pid {pid}")


def test_a_client_pipelining_300_fetches_of_1mb_that_never_reads_costs_a_few_answers(start_cluster: Any) -> None:
    from confluent_kafka import Producer

    c: Cluster = start_cluster(1, overrides=OVERRIDES)
    c.create_topic("big", partitions=1, replication_factor=1)
    c.create_topic("quiet", partitions=1, replication_factor=1)
    servers = bootstrap(c)
    failed: list[Any] = []
    with closing_producer(Producer({"bootstrap.servers": servers, "acks": "all", "linger.ms": 50})) as p:
        for i in range(24):  # 2.4 MB: every Fetch from offset 0 answers ~1 MB (partition_max_bytes)
            p.produce("big", value=f"{i:04d}".encode() + b"x" * 100_000, partition=0,
                      on_delivery=lambda e, m: failed.append(e) if e is not None else None)
        assert p.flush(60) == 0 and failed == []
    host, port = c.lc.broker_address(0)
    pid = c.lc.procs[0].pid
    with socket.create_connection((host, port), timeout=30) as warm:  # the answer's pages and buffers touched once
        warm.sendall(_fetch_frame("big", 1))
        corr, body = decode_response(1, FETCH_V4, _read_frame(warm))
    (part,) = body["responses"][0]["partitions"]
    assert corr == 1 and part["error_code"] == 0 and len(part["records"]) > 900_000
    before = _rss_bytes(pid)

    with socket.socket() as hog:
        hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        hog.connect((host, port))
        hog.sendall(b"".join(_fetch_frame("big", i) for i in range(300)))  # ~18 KB of requests, never read
        peak = before
        deadline = time.monotonic() + 5.0  # unmuted, the broker made all 300 answers (~300 MB) in about this time
        while time.monotonic() < deadline:
            peak = max(peak, _rss_bytes(pid))
            time.sleep(0.05)
        # the broker keeps serving others: an acks=0 producer (no answer: the muted connection is released when the
        # produce is handled) and a consumer reading the whole 2.4 MB partition
        with closing_producer(Producer({"bootstrap.servers": servers, "acks": 0, "linger.ms": 5})) as p:
            for i in range(20):
                p.produce("quiet", value=f"q{i}".encode(), partition=0)
            assert p.flush(30) == 0
        c.wait(lambda: len(read_partition(servers, "quiet", 0)) == 20, 30, "the 20 acks=0 records")
        assert [v for _, v in read_partition(servers, "quiet", 0)] == [f"q{i}" for i in range(20)]
        assert [v[:4] for _, v in read_partition(servers, "big", 0)] == [f"{i:04d}" for i in range(24)]
        peak = max(peak, _rss_bytes(pid))
        assert c.lc.procs[0].poll() is None
    growth = peak - before
    assert growth < 40 * MB, f"the broker grew by {growth / MB:.0f} MB for a client that reads nothing"
