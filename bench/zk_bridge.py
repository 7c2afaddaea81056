"""zk-bridge: creates, sets and reads of 10,000 znodes through kactor's ZooKeeper edge
(zk_bridge.executor.ZkExecutor, the code every ZkRequest of every actor goes through): sync (one op at a time),
async (one batch of all ops, pipelined; a batch of reads goes as multiReads of 256, zk_bridge/multi_read.py) and
multi (Multi batches of 64 writes), with ZooKeeper's data dir on disk (fsync on) and on tmpfs.

Ceiling: the same ops with kazoo's async API directly (pipelined, 2,000 in flight), against the same server.
Anchors: kazoo 1.2.1 async 1,421 creates/s and 2,430 sets/s (python-zk/kazoo#117, 2013, 3-node ZK); standalone ZK on
disk about 9 ms per sync write; multi batches of 8 about 2.4× single ops (Pulsar #12812, Java client).
"""

from __future__ import annotations

import threading
import time

from bench import common as c
from messages.zk import Create, GetData, Multi, SetData, ZkBatch

ANCHOR = ("kazoo 1.2.1 async 1,421 creates/s, 2,430 sets/s (2013); standalone ZK on disk ≈ 9 ms per sync write "
          "(~111/s); multi ×8 ≈ 2.4× single ops (Pulsar, Java)")


def _submit_wait(executor, batch: ZkBatch) -> tuple:  # type: ignore[no-untyped-def]
    done = threading.Event()
    box: list[tuple] = []

    def cb(results: tuple) -> None:
        box.append(results)
        done.set()

    executor.submit(batch, cb)
    done.wait(120)
    return box[0]


def _through_executor(executor, mode: str, ops: list) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    if mode == "sync":
        for op in ops:
            _submit_wait(executor, ZkBatch((op,)))
    elif mode == "async":
        _submit_wait(executor, ZkBatch(tuple(ops)))
    else:
        multis = tuple(Multi(tuple(ops[i:i + 64])) for i in range(0, len(ops), 64))
        _submit_wait(executor, ZkBatch(multis))
    return time.perf_counter() - t0


def measure(connect_string: str, n: int) -> dict[str, float]:
    from zk_bridge.executor import ZkExecutor
    zk = c.connect(connect_string)
    out: dict[str, float] = {}
    try:
        executor = ZkExecutor(zk)
        data = c.state_json(1, [1, 2, 3]).decode()
        for mode in ("sync", "async", "multi"):
            count = min(n, 1000) if mode == "sync" else n  # sync is slow by design; 1,000 ops give its rate
            base = f"/bench-zkb-{mode}"
            zk.ensure_path(base)
            creates = [Create(f"{base}/{i}", data) for i in range(count)]
            out[f"{mode} creates/s"] = count / _through_executor(executor, mode, creates)
            sets = [SetData(f"{base}/{i}", data, 0) for i in range(count)]
            out[f"{mode} sets/s"] = count / _through_executor(executor, mode, sets)
            if mode != "multi":  # a write multi holds no reads; a batch of reads goes as multiReads (async)
                reads = [GetData(f"{base}/{i}") for i in range(count)]
                out[f"{mode} reads/s"] = count / _through_executor(executor, mode, reads)
            zk.delete(base, recursive=True)
        executor.close()
        # ceiling: kazoo async directly
        base = "/bench-zkb-raw"
        zk.ensure_path(base)
        raw = data.encode()
        secs, _ = c.pipelined((lambda i=i: zk.create_async(f"{base}/{i}", raw)) for i in range(n))
        out["kazoo creates/s"] = n / secs
        secs, _ = c.pipelined((lambda i=i: zk.set_async(f"{base}/{i}", raw, 0)) for i in range(n))
        out["kazoo sets/s"] = n / secs
        secs, _ = c.pipelined((lambda i=i: zk.get_async(f"{base}/{i}")) for i in range(n))
        out["kazoo reads/s"] = n / secs
        zk.delete(base, recursive=True)
    finally:
        c.close(zk)
    return out


def run(scale: float = 1.0, runs: int = 3, tmpfs: bool = False) -> c.Result:
    import shutil
    import tempfile

    from zk_bridge.server import EmbeddedZooKeeper
    n = c.scale_count(10000, scale, minimum=10)
    load_before = c.load_average()
    per: dict[str, list[float]] = {}
    for on_tmpfs in (False, True):
        d = tempfile.mkdtemp(prefix="kactor-zkb-", dir="/dev/shm" if on_tmpfs else None)
        server = EmbeddedZooKeeper(data_dir=d)
        try:
            server.start()
            for _ in range(runs):
                for k, v in measure(server.connect_string, n).items():
                    per.setdefault(f"{k} ({'tmpfs' if on_tmpfs else 'disk'})", []).append(v)
        finally:
            server.stop()
            shutil.rmtree(d, ignore_errors=True)
    unit = "ops/s"
    fig = per["async sets/s (disk)"]
    ceil = per["kazoo sets/s (disk)"]
    extra: dict[str, c.Measure] = {k: c.Measure(v, unit) for k, v in per.items()
                                   if k not in ("async sets/s (disk)", "kazoo sets/s (disk)")}
    return c.Result(name="zk-bridge", scale_text=f"{n:,} znodes per mode; sync mode {min(n, 1000):,}",
                    figure_label="ZkExecutor async sets (one ZkBatch, pipelined), disk", figure=c.Measure(fig, unit),
                    ceiling_label="kazoo set_async directly, 2,000 in flight, disk", ceiling=c.Measure(ceil, unit),
                    anchor=ANCHOR, higher_is_better=True, extra=extra, load_before=load_before,
                    load_after=c.load_average())
