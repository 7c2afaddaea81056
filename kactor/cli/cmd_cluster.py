"""``kactor cluster``: an embedded ZooKeeper and N broker processes; Ctrl-C stops brokers, then ZooKeeper."""

from __future__ import annotations

import argparse
import signal
import time

from kactor.cli import CliError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cluster", help="run a local cluster: embedded ZooKeeper + N brokers",
                       description="Start a real ZooKeeper on loopback (unless --zookeeper is given) and N broker "
                                   "processes. Prints the connect string; Ctrl-C stops everything.")
    p.add_argument("--brokers", type=int, default=3)
    p.add_argument("--zookeeper", metavar="HOST:PORT[/chroot]", help="use this ZooKeeper instead of an embedded one")
    p.add_argument("--trace-dir", help="write one message trace per broker process here")
    p.add_argument("--data-dir", help="where log dirs and broker logs go (default: a temp dir)")
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="a broker property for every broker (repeatable)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kactor.cluster import ClusterError, LocalCluster
    from kactor.config import ConfigError, load_config
    from zk_bridge.server import ZooKeeperUnavailable

    if args.brokers < 1:
        raise CliError("--brokers must be at least 1", 2)
    try:  # validate the overrides once, here, rather than N times in N children
        load_config(None, ["broker.id=0", "zookeeper.connect=127.0.0.1:1", *args.override])
    except ConfigError as e:
        raise CliError(str(e)) from None
    cluster = LocalCluster(args.brokers, args.zookeeper, args.data_dir, args.trace_dir, args.override)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    try:
        cluster.start()
        zk = cluster.client()
        try:
            cluster.wait_for(lambda: len(zk.get_children("/brokers/ids")) == args.brokers, 30,
                             f"{args.brokers} brokers to register")
            cluster.wait_for(lambda: cluster.controller_id(zk) is not None, 30, "a controller")
            controller = cluster.controller_id(zk)
        finally:
            zk.stop()
            zk.close()
        print(f"kactor cluster: {args.brokers} brokers up, controller is broker {controller}")
        print(f"zookeeper.connect={cluster.connect_string}")
        print(f"data: {cluster.base_dir}" + (f"   traces: {args.trace_dir}" if args.trace_dir else ""))
        print("Ctrl-C to stop", flush=True)
        while not stop["now"]:
            for broker_id, proc in cluster.procs.items():
                if proc.poll() is not None:
                    print(f"broker {broker_id} exited with {proc.returncode}; see {cluster.logs[broker_id]}")
                    stop["now"] = True
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    except (ClusterError, ZooKeeperUnavailable) as e:
        raise CliError(str(e)) from None
    finally:
        print("stopping brokers, then ZooKeeper...", flush=True)
        cluster.stop()
    return 0
