"""``kactor chaos``: seeded fault runs against real broker processes, checked for safety, data and liveness.

``kactor chaos --seeds 1-50 --steps 25 [--brokers 3] [--zookeeper-ensemble 3]`` runs each seed's schedule
(kactor/chaos/schedule.py) on a fresh cluster, prints one line per seed and a summary, keeps the folder of a
failing seed (traces, logs, events, violations) and prints the command that replays it. Ctrl-C, SIGTERM and
SIGHUP stop the run and everything it started. Exit 0 when every seed is clean, 1 otherwise. Each seed line and
the summary also show the longest acknowledgement gap, the duplicated records and the UNKNOWN_SERVER_ERROR answers
(docs/reliability.md); the seed's result.json carries them.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time

from kactor.secure_cluster import PROTOCOLS

_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "chaos",
        description="Starts ZooKeeper and broker processes for each seed, produces with acks=all while it applies "
                    "the seed's operations and faults (and an operator's slips: a second broker process on a live "
                    "broker's log dir, which must be refused), heals, and checks safety (leaders, epochs, ISR), data "
                    "(every acknowledged record on every ISR replica, identical logs, no record written twice by "
                    "the idempotent producer), liveness, the producer's longest acknowledgement gap against "
                    "max(zookeeper.session.timeout.ms, 1.5 x replica.lag.time.max.ms) + 3 s, that no answer "
                    "was UNKNOWN_SERVER_ERROR and that no coordinator load failed at a batch it could not pass.")
    p.add_argument("--seeds", default="1", metavar="SEEDS", help="seeds to run: N, N-M or a list (default 1)")
    p.add_argument("--steps", type=int, default=25, metavar="N", help="steps per seed (default 25)")
    p.add_argument("--brokers", type=int, default=3, metavar="N", help="brokers per cluster (default 3)")
    p.add_argument("--zookeeper-ensemble", type=int, default=0, metavar="N",
                   help="run on a real N-server ZooKeeper ensemble (N >= 3, odd) and kill its servers too "
                        "(default: one standalone server, no ZooKeeper faults)")
    p.add_argument("--session-timeout-ms", type=int, default=3000, metavar="MS",
                   help="the brokers' zookeeper.session.timeout.ms (default 3000)")
    p.add_argument("--work-dir", default=None, metavar="DIR",
                   help="where each seed's folder goes (default: a new temporary folder)")
    p.add_argument("--keep", action="store_true", help="keep every seed's folder, not only the failing ones'")
    p.add_argument("--no-trace", action="store_true", help="brokers record no message traces")
    p.add_argument("--no-txn-check", action="store_true",
                   help="leave out the Jepsen-style transaction checker's producers, readers and connection delays "
                        "(the other workloads and checks run as before)")
    p.add_argument("--security", choices=PROTOCOLS, default="plaintext",
                   help="the brokers' listener and the clients' connections, between the brokers too, as "
                        "kactor cluster --security sets them up (default plaintext)")
    p.set_defaults(func=run, _parser=p)


def _validate(args: argparse.Namespace) -> tuple[int, ...]:
    from kactor.cli.support import seeds_of, usage_error

    seeds = seeds_of(args)
    if not 2 <= args.brokers <= 9:
        usage_error(args, "--brokers must be between 2 and 9")
    if args.zookeeper_ensemble and (args.zookeeper_ensemble < 3 or args.zookeeper_ensemble % 2 == 0):
        usage_error(args, "--zookeeper-ensemble must be an odd number of at least 3 (a quorum survives a kill)")
    if args.session_timeout_ms < 1000:
        usage_error(args, "--session-timeout-ms must be at least 1000")
    return seeds


def run(args: argparse.Namespace) -> int:
    seeds = _validate(args)
    import logging

    logging.getLogger("kazoo").setLevel(logging.CRITICAL)  # a ZooKeeper server killed on purpose is not news
    from edges.children import install_stop_signals
    from kactor.chaos.report import Progress, seed_lines, summary_lines
    from kactor.chaos.runner import ChaosConfig, ChaosRun, Interrupted

    zk_servers = args.zookeeper_ensemble or 1
    work = os.path.abspath(args.work_dir) if args.work_dir else tempfile.mkdtemp(prefix="kactor-chaos-")
    os.makedirs(work, exist_ok=True)
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, *_STOP_SIGNALS)}
    current: list[ChaosRun] = []
    stop_requested: list[int] = []

    def on_stop(signum: int) -> None:
        # SIGTERM / SIGHUP: as Ctrl-C, but without raising into whatever the main thread is doing; the run notices
        # at its next step of waiting and stops everything it started
        stop_requested.append(signum)
        for r in current:
            r.interrupt()
    install_stop_signals(on_stop)
    progress = Progress(len(seeds) * args.steps)
    results = []
    t0 = time.monotonic()
    print(f"kactor chaos: seeds {args.seeds}, {args.steps} steps, {args.brokers} brokers, "
          f"{'a ' + str(zk_servers) + '-server ZooKeeper ensemble' if zk_servers > 1 else 'one ZooKeeper server'}"
          f"{'' if args.security == 'plaintext' else ', every connection ' + args.security.upper()}; "
          f"folders in {work}", flush=True)
    try:
        for n, seed in enumerate(seeds):
            cfg = ChaosConfig(seed, args.steps, args.brokers, zk_servers, args.session_timeout_ms,
                              trace=not args.no_trace, txn_check=not args.no_txn_check, security=args.security)
            base = n * args.steps
            if stop_requested:
                raise Interrupted()
            runner = ChaosRun(cfg, os.path.join(work, f"seed-{seed}"), keep=args.keep,
                              on_step=lambda i, s=seed, b=base: progress.update(b + i, f"seed {s} step {i}"))
            current[:] = [runner]
            progress.update(base, f"seed {seed} starting")
            result = runner.run()
            results.append(result)
            progress.clear()
            for line in seed_lines(result, args.brokers, zk_servers):
                print(line, flush=True)
    except (KeyboardInterrupt, Interrupted):
        progress.clear()
        print("kactor chaos: interrupted; everything it started has been stopped", file=sys.stderr, flush=True)
        for line in summary_lines(results, time.monotonic() - t0):
            print(line, flush=True)
        return 130
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    progress.clear()
    for line in summary_lines(results, time.monotonic() - t0):
        print(line, flush=True)
    if not args.work_dir and not os.listdir(work):
        os.rmdir(work)
    return 0 if all(r.ok for r in results) else 1
