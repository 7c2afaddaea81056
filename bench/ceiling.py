"""The produce benchmark's ceiling: the same bytes moved the same way with no broker logic at all.

What it measures: a sender in the benchmark's process sends length-prefixed frames over a loopback TCP socket to a
*leader* process, which appends each frame to a file (``os.write`` to an O_APPEND file: the page cache, no fsync,
as a Kafka broker's log by default) and forwards it over loopback to ``rf - 1`` *follower* processes, which append
it to files of their own and answer an 8-byte acknowledgement; the leader answers the sender once every follower
has (acks=all). Each frame holds one real v2 record batch of ``batch_records`` 1-KB records — the batch size the
librdkafka producer really sent in the same run (its statistics) — and at most ``window`` frames are in flight, as
the producer's max.in.flight. Plain Python on the same 2 cores as everything else: the figure is what a Python
process of this machine can move through loopback sockets and the page cache for the workload, the bound that any
Python broker's protocol, validation, replication and bookkeeping then take their share of. Followers are pushed to
rather than fetching (the same bytes over the same sockets, one round trip fewer).

``python -m bench.ceiling serve leader|follower ...`` is the processes' entry point (spawned by `run_ceiling`).
"""

from __future__ import annotations

import argparse
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

from bench.common import load_average
from bench.data_path import RECORD_BYTES, CpuMeter, Rate, record_value
from protocol.records import Record, build_batch

_SIZE = struct.Struct(">i")
_ACK = struct.Struct(">q")
SOCKET_BUFFER = 4 * 1024 * 1024


@dataclass
class CeilingRun(Rate):
    records: int
    bytes: int  # record values acknowledged (the producer runs' measure)
    frame_bytes: int
    seconds: float
    cpu: dict[str, float]
    load: str = ""
    appended: dict[str, int] = field(default_factory=dict)  # bytes in each process's file at the end, by role


def batch_payload(batch_records: int, value: bytes) -> bytes:
    """One v2 record batch of ``batch_records`` records of ``value``, as a producer builds it."""
    now = int(time.time() * 1000)
    return build_batch([Record(i, 0, None, value) for i in range(batch_records)], first_timestamp=now)


# -- the processes ---------------------------------------------------------------------------------------------------
def _recv_exact(sock: socket.socket, view: memoryview) -> bool:
    """Fill ``view`` from ``sock``; False at EOF."""
    got = 0
    while got < len(view):
        n = sock.recv_into(view[got:])
        if n == 0:
            return False
        got += n
    return True


def _tune(sock: socket.socket) -> None:
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER)


def _listen() -> socket.socket:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    print(srv.getsockname()[1], flush=True)  # the parent reads the port from our first line
    return srv


def _frames(sock: socket.socket, fd: int, forward: list[socket.socket], ack: bool) -> None:
    """Read frames until EOF: append each to ``fd``, forward it whole to ``forward``, and with ``ack`` answer the
    count so far (an 8-byte acknowledgement) once it is appended."""
    head = bytearray(4)
    buf = bytearray(1 << 20)
    count = 0
    while _recv_exact(sock, memoryview(head)):
        (size,) = _SIZE.unpack(head)
        if size > len(buf):
            buf = bytearray(size)
        body = memoryview(buf)[:size]
        if not _recv_exact(sock, body):
            break
        os.write(fd, body)
        for f in forward:
            f.sendall(head)
            f.sendall(body)
        count += 1
        if ack:
            sock.sendall(_ACK.pack(count))


def serve(role: str, path: str, followers: list[int]) -> None:
    """One leader or follower process: accept one connection, append every frame, acknowledge it (a leader with
    followers: once every follower has)."""
    srv = _listen()
    conn, _ = srv.accept()
    _tune(conn)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    links = [socket.create_connection(("127.0.0.1", port)) for port in followers] if role == "leader" else []
    try:
        if not links:
            _frames(conn, fd, [], ack=True)
            return
        for s in links:
            _tune(s)

        def acks() -> None:
            ack = bytearray(_ACK.size)
            while True:
                for s in links:
                    if not _recv_exact(s, memoryview(ack)):
                        return
                conn.sendall(ack)

        t = threading.Thread(target=acks, daemon=True)
        t.start()
        _frames(conn, fd, links, ack=False)
        for s in links:
            s.shutdown(socket.SHUT_WR)
        t.join()
    finally:
        os.close(fd)
        conn.close()


# -- the sender ------------------------------------------------------------------------------------------------------
def _spawn_server(role: str, path: str, followers: list[int]) -> tuple[subprocess.Popen[bytes], int]:
    from edges.children import spawn

    args = [sys.executable, "-m", "bench.ceiling", "serve", role, path]
    if followers:
        args += ["--followers", ",".join(map(str, followers))]
    proc = spawn(args, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.strip():
        proc.kill()
        raise RuntimeError(f"ceiling {role} did not start (exit {proc.wait()})")
    return proc, int(line)


def run_ceiling(records: int, batch_records: int, rf: int = 3, window: int = 5, directory: str | None = None,
                value: bytes | None = None) -> CeilingRun:
    """Send ``records`` 1-KB records in frames of ``batch_records`` through a leader and ``rf - 1`` followers."""
    value = value if value is not None else record_value(RECORD_BYTES)
    batch_records = max(1, batch_records)
    payload = batch_payload(batch_records, value)
    frame = _SIZE.pack(len(payload)) + payload
    frames = max(1, -(-records // batch_records))
    base = tempfile.mkdtemp(prefix="kactor-bench-ceiling-", dir=directory)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        followers = []
        for k in range(rf - 1):
            proc, port = _spawn_server("follower", os.path.join(base, f"follower-{k + 1}.log"), [])
            procs.append(proc)
            followers.append(port)
        leader, port = _spawn_server("leader", os.path.join(base, "leader.log"), followers)
        procs.insert(0, leader)
        roles = {"leader": leader.pid, **{f"follower {k + 1}": p.pid for k, p in enumerate(procs[1:])}}
        sock = socket.create_connection(("127.0.0.1", port))
        _tune(sock)
        in_flight = threading.Semaphore(window)
        acked = [0]
        last_ack = [0.0]

        def read_acks() -> None:
            ack = bytearray(_ACK.size)
            while acked[0] < frames and _recv_exact(sock, memoryview(ack)):
                acked[0] += 1
                last_ack[0] = time.perf_counter()
                in_flight.release()

        reader = threading.Thread(target=read_acks, daemon=True)
        load = load_average()
        meter = CpuMeter(roles)
        t0 = time.perf_counter()
        reader.start()
        for _ in range(frames):
            in_flight.acquire()
            sock.sendall(frame)
        reader.join(300)
        cpu = meter.used()
        sock.shutdown(socket.SHUT_WR)
        sock.close()
        if acked[0] != frames:
            raise RuntimeError(f"ceiling: {acked[0]} of {frames} frames acknowledged")
        n = frames * batch_records
        files = {"leader": "leader.log", **{f"follower {k + 1}": f"follower-{k + 1}.log" for k in range(rf - 1)}}
        appended = {role: os.path.getsize(os.path.join(base, f)) for role, f in files.items()}
        return CeilingRun(n, n * len(value), len(frame), last_ack[0] - t0, cpu, load, appended)
    finally:
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        import shutil

        shutil.rmtree(base, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.ceiling", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve", help="(internal) one leader or follower process")
    s.add_argument("role", choices=["leader", "follower"])
    s.add_argument("path")
    s.add_argument("--followers", default="")
    r = sub.add_parser("run", help="measure the ceiling alone")
    r.add_argument("--records", type=int, default=200_000)
    r.add_argument("--batch-records", type=int, default=915)
    r.add_argument("--rf", type=int, default=3)
    a = p.parse_args(argv)
    if a.cmd == "serve":
        serve(a.role, a.path, [int(x) for x in a.followers.split(",") if x])
        return 0
    run = run_ceiling(a.records, a.batch_records, a.rf)
    print(f"ceiling RF {a.rf}: {run.mb_per_s:,.1f} MB/s, {run.records_per_s:,.0f} records/s "
          f"({run.frame_bytes:,}-byte frames); CPU-s {', '.join(f'{k} {v:.2f}' for k, v in run.cpu.items())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
