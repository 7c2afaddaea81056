"""``kactor cluster``: an embedded ZooKeeper (one server or an ensemble) and N broker processes, on loopback or
(``--hosts netns``) each on a network namespace of its own; Ctrl-C, SIGTERM or SIGHUP stops brokers, then ZooKeeper,
and removes the temporary directories (and the namespaces and their bridge)."""

from __future__ import annotations

import argparse
import signal
import sys
import time

from kactor.cli import CliError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cluster", help="run a local cluster: embedded ZooKeeper (or ensemble) + N brokers",
                       description="Start a real ZooKeeper on loopback (unless --zookeeper is given; "
                                   "--zookeeper-ensemble N for N servers in one quorum) and N broker processes. "
                                   "Prints the connect string; Ctrl-C (or SIGTERM, or closing the terminal) stops "
                                   "everything it started.")
    p.add_argument("--brokers", type=int, default=3)
    p.add_argument("--zookeeper", metavar="HOST:PORT[/chroot]", help="use this ZooKeeper instead of an embedded one")
    p.add_argument("--zookeeper-ensemble", type=int, default=1, metavar="N",
                   help="embed N ZooKeeper servers forming one quorum (default 1: standalone); brokers get all N "
                        "in zookeeper.connect and ride out the loss of any one of them")
    p.add_argument("--trace-dir", help="write one message trace per broker process here")
    p.add_argument("--data-dir", help="where log dirs and broker logs go (default: a temp dir, removed on exit)")
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="a broker property for every broker (repeatable)")
    p.add_argument("--hosts", choices=("loopback", "netns"), default="loopback",
                   help="loopback (default): everything on 127.0.0.1. netns: each broker and each ZooKeeper server "
                        "in a network namespace of its own, with its own address on a private bridge that this "
                        "command creates and removes (root; nothing is reachable from outside the machine)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from edges.children import install_stop_signals
    from kactor.cluster import ClusterError, LocalCluster
    from kactor.config import ConfigError, load_config
    from zk_bridge.blocking import BlockingZk
    from zk_bridge.server import ZooKeeperUnavailable

    if args.brokers < 1:
        raise CliError("--brokers must be at least 1", 2)
    if args.zookeeper_ensemble < 1:
        raise CliError("--zookeeper-ensemble must be at least 1", 2)
    if args.zookeeper and args.zookeeper_ensemble != 1:
        raise CliError("--zookeeper and --zookeeper-ensemble exclude each other: an ensemble is embedded", 2)
    if args.hosts == "netns":
        from edges.netns import unavailable_reason

        if args.zookeeper:
            raise CliError("--hosts netns runs its own ZooKeeper in namespaces: --zookeeper cannot be given", 2)
        if reason := unavailable_reason():
            raise CliError(reason)
    try:  # validate the overrides once, here, rather than N times in N children
        load_config(None, ["broker.id=0", "zookeeper.connect=127.0.0.1:1", *args.override])
    except ConfigError as e:
        raise CliError(str(e)) from None
    stop = {"now": False}
    # SIGTERM and SIGHUP (the terminal closed) ask for the same orderly stop as Ctrl-C, at any time: the handlers
    # stay in place during the stop itself, so a hang-up in the middle of a Ctrl-C shutdown does not cut it short.
    install_stop_signals(lambda signum: stop.update(now=True))
    cluster = LocalCluster(args.brokers, args.zookeeper, args.data_dir, args.trace_dir, args.override,
                           zookeeper_ensemble=args.zookeeper_ensemble, hosts=args.hosts)
    try:
        cluster.start()
        zk = cluster.client()
        try:
            with BlockingZk(zk) as b:
                cluster.wait_for(lambda: len(b.run(b.zk.get_sorted_broker_list())) == args.brokers, 30,
                                 f"{args.brokers} brokers to register")
            cluster.wait_for(lambda: cluster.controller_id(zk) is not None, 30, "a controller")
            controller = cluster.controller_id(zk)
        finally:
            zk.stop()
            zk.close()
        embedded = (f", zookeeper ensemble of {args.zookeeper_ensemble}" if args.zookeeper_ensemble > 1 else "")
        print(f"kactor cluster: {args.brokers} brokers up{embedded}, controller is broker {controller}")
        print(f"zookeeper.connect={cluster.connect_string}")
        # what a Kafka client needs (kcat -b, bootstrap.servers, kactor consume --bootstrap-server)
        addresses = [cluster.broker_address(b) for b in sorted(cluster.procs)]
        print("bootstrap.servers=" + ",".join(f"{host}:{port}" for host, port in addresses))
        if cluster.layout is not None:
            hosts = ", ".join(f"{h.name} {h.address}" for h in cluster.layout.hosts.values())
            print(f"hosts (network namespaces on bridge {cluster.layout.bridge}, {cluster.layout.subnet}; this "
                  f"machine is {cluster.layout.host_address}): {hosts}")
        where = cluster.base_dir + (" (removed on exit)" if args.data_dir is None else "")
        print(f"data: {where}" + (f"   traces: {args.trace_dir}" if args.trace_dir else ""))
        print("Ctrl-C to stop", flush=True)
        while not stop["now"]:
            for broker_id, proc in cluster.procs.items():
                if proc.poll() is not None:
                    print(f"broker {broker_id} exited with {proc.returncode}; the end of its log:\n"
                          f"{cluster.log_tail(broker_id, 2000)}", file=sys.stderr)
                    stop["now"] = True
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    except (ClusterError, ZooKeeperUnavailable) as e:
        raise CliError(str(e)) from None
    finally:
        # A second Ctrl-C while stopping is ignored, as a JVM ignores it while its shutdown hooks run.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print("stopping brokers, then ZooKeeper...", flush=True)
        cluster.stop()
    return 0
