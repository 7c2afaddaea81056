"""zk_reconnect: how soon a kazoo client is back after a ZooKeeper ensemble loses its quorum for a while (issue #22).

``.venv/bin/python -m bench.zk_reconnect [--outage 10] [--runs 1]``

A 3-server ZooKeeperEnsemble (tickTime 200 ms, maxSessionTimeout 60 s); a client with a 40 s session; 2 of the 3
servers SIGKILLed for ``--outage`` seconds, then relaunched. Figures, from the relaunch: when a quorum serves again,
and when the client is CONNECTED again (same session). Baseline, same run, same ensemble: kazoo's default
reconnection backoff (doubling up to an hour) against zk_bridge.executor.reconnect_policy() (at most 1 s apart, as
Java's ClientCnxn); the ratio is default / policy of the time to reconnect.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

from kazoo.client import KazooClient

from zk_bridge.executor import reconnect_policy
from zk_bridge.server import ZooKeeperEnsemble


def _one(ens: ZooKeeperEnsemble, outage_s: float, policy: bool) -> tuple[float, float]:
    """(quorum back, client back) in seconds after relaunching the killed servers."""
    kw = {"connection_retry": reconnect_policy()} if policy else {}
    client = KazooClient(ens.connect_string, timeout=40.0, **kw)
    client.start(timeout=30)
    back: list[float] = []
    reconnected = threading.Event()
    client.add_listener(lambda s: (back.append(time.monotonic()), reconnected.set()) if s == "CONNECTED" else None)
    try:
        session = client.client_id[0]
        survivor = ens.leader()
        down = [i for i in range(ens.n) if i != survivor]
        for i in down:
            ens.kill(i)
        time.sleep(outage_s)  # the outage itself: the scenario, not a wait for a state
        reconnected.clear()
        back.clear()
        t0 = time.monotonic()
        for i in down:
            ens.servers[i].launch()
        ens.wait_quorum(60)
        quorum = time.monotonic() - t0
        if not reconnected.wait(600):
            raise RuntimeError("the client did not reconnect within 600 s")
        if client.client_id[0] != session:
            raise RuntimeError("the session expired: the outage was longer than the session")
        return quorum, back[0] - t0
    finally:
        client.stop()
        client.close()
        ens.wait_serving(60)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--outage", type=float, default=10.0, help="seconds without a quorum (default 10)")
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args(argv)
    with open("/proc/loadavg", encoding="ascii") as f:
        print(f"load before: {f.read().split()[:3]}")
    ens = ZooKeeperEnsemble(3, tick_ms=200, max_session_timeout_ms=60000).start()
    try:
        ens.wait_serving(60)
        default, policy = [], []
        for run in range(args.runs):
            d = _one(ens, args.outage, policy=False)
            p = _one(ens, args.outage, policy=True)
            default.append(d[1])
            policy.append(p[1])
            print(f"run {run + 1}: quorum back {d[0]:.2f} s / {p[0]:.2f} s; client back: kazoo default {d[1]:.2f} s, "
                  f"reconnect_policy {p[1]:.2f} s")
        md, mp = statistics.median(default), statistics.median(policy)
        print(f"outage {args.outage:g} s, median time to reconnect after the relaunch: kazoo default {md:.2f} s, "
              f"reconnect_policy {mp:.2f} s, ratio {md / mp:.1f}x")
    finally:
        ens.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
