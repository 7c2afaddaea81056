"""``kactor demo``: a 3-broker cluster on an embedded ZooKeeper runs a short story, then its traces are replayed
with ``--check`` and summarised by Spark into an HTML report with plots.

The story (kactor.demo): topics created, records produced with `kactor produce`, a broker
SIGKILLed and its leaderships moved, the broker restarted, a preferred replica election, a reassignment, a
controller failover, a topic deleted. Each step prints a progress line; a step that fails is reported and the demo
goes on, so it always ends with traces and a report.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from kactor.cli import CliError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo",
                       description="Start an embedded ZooKeeper and 3 brokers with tracing on, run a scripted story "
                                   "(create, produce, kill, restart, preferred election, reassignment, controller "
                                   "failover, delete), stop the cluster, replay every broker's trace with --check, "
                                   "and write a Spark HTML report of the traces.")
    p.add_argument("--out", default="kactor-demo", metavar="DIR",
                   help="where traces/, report/ and the brokers' logs go (default: ./kactor-demo)")
    p.add_argument("--brokers", type=int, default=3)
    p.add_argument("--partitions", type=int, default=6, help="partitions of the demo topic (default 6)")
    p.add_argument("--steps", default=",".join(_all_steps()),
                   help="comma-separated scenario steps to run (default: all, in story order)")
    p.add_argument("--no-replay", action="store_true", help="skip the replay check")
    p.add_argument("--no-report", action="store_true", help="skip the Spark report")
    p.set_defaults(func=run)


def _all_steps() -> tuple[str, ...]:
    from kactor.demo import ALL_STEPS

    return ALL_STEPS


def _say(line: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {line}", flush=True)


def run(args: argparse.Namespace) -> int:
    from kactor.cluster import ClusterError, LocalCluster
    from kactor.demo import ALL_STEPS, Scenario
    from zk_bridge.server import ZooKeeperUnavailable

    steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    unknown = [s for s in steps if s not in ALL_STEPS]
    if unknown:
        raise CliError(f"unknown --steps {unknown}; known: {','.join(ALL_STEPS)}", 2)
    if args.brokers < 1:
        raise CliError("--brokers must be at least 1", 2)
    out = os.path.abspath(args.out)
    traces = os.path.join(out, "traces")
    report = os.path.join(out, "report")
    if os.path.isdir(traces) and os.listdir(traces):
        raise CliError(f"{traces} is not empty: give another --out (a demo never mixes two runs' traces)")
    os.makedirs(traces, exist_ok=True)
    t_start = time.monotonic()

    _say(f"kactor demo: {args.brokers} brokers on an embedded ZooKeeper; traces → {traces}")
    # A short session timeout, so a killed broker expires in seconds (the embedded server's tick allows ≥ 4 s); a
    # short controlled-shutdown backoff, so the last broker to stop, whose leaderships nobody can take, gives up its
    # retries in a second (Kafka's 5 s backoff made the demo's stop 12 s).
    lc = LocalCluster(args.brokers, base_dir=os.path.join(out, "data"), trace_dir=traces,
                      overrides=["zookeeper.session.timeout.ms=6000", "controlled.shutdown.retry.backoff.ms=200"])
    sc = Scenario(lc, partitions=args.partitions, say=_say)
    failures: list[str] = []
    try:
        try:
            lc.start()
        except (ClusterError, ZooKeeperUnavailable) as e:
            raise CliError(f"could not start the cluster: {e}") from None
        _say(f"ZooKeeper at {lc.connect_string}; brokers' logs in {lc.base_dir}")
        result = sc.run(steps)
        failures = result.failures
        _say(f"[stop] {sc.stop_cluster()}")
    except KeyboardInterrupt:
        _say("interrupted: stopping the cluster")
        raise
    finally:
        sc.close()
        lc.stop()

    rc = 0
    if not args.no_replay:
        _say("[replay] every broker process's trace, with --check ...")
        proc = subprocess.run([sys.executable, "-m", "kactor", "trace", "replay", traces, "--check", "--jobs", "0"],
                              capture_output=True, text=True)
        for line in proc.stdout.splitlines():
            print(f"    {line.replace(traces + os.sep, '')}", flush=True)
        if proc.returncode != 0:
            _say(f"[replay] DIVERGED (exit {proc.returncode}) {proc.stderr.strip()[-500:]}")
            rc = 1
        else:
            _say("[replay] every trace replayed identically")
    if not args.no_report:
        _say("[report] summarising the traces with Spark (local mode) ...")
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "kactor", "trace", "summarize", traces, "--out", report],
                              text=True)
        if proc.returncode != 0:
            raise CliError(f"kactor trace summarize exited {proc.returncode}")
        _say(f"[report] written in {time.monotonic() - t0:.0f}s")
    print()
    print(f"traces:  {traces}")
    if not args.no_report:
        print(f"report:  {os.path.join(report, 'index.html')}")
    print(f"logs:    {os.path.join(out, 'data')}")
    if failures:
        print(f"steps that did not complete: {'; '.join(failures)}")
        rc = 1
    print(f"kactor demo finished in {time.monotonic() - t_start:.0f}s")
    return rc
