"""``kactor cluster``: an embedded ZooKeeper (one server or an ensemble) and N broker processes, on loopback or
(``--hosts netns``) each on a network namespace of its own; Ctrl-C, SIGTERM or SIGHUP stops brokers, then ZooKeeper,
and removes the temporary directories (and the namespaces and their bridge). The brokers and ZooKeeper run in
sessions of their own, so a terminal's Ctrl-C or hang-up reaches this command alone, which stops the brokers one at a
time, the controller last, in bounded time. Started with SIGINT ignored (a script's background job, as POSIX shells
start one), Ctrl-C stays ignored, as a JVM running Kafka leaves it; SIGTERM stops the cluster then.

A broker that dies does not stop the others, as in a real cluster: the command prints how it ended and the exact
``kactor broker ...`` line that starts it again (same id, listener, metrics port and log dir), or, with
``--restart-dead-brokers``, starts it again itself. ``--port-base`` / ``--metrics-port-base`` choose the ports."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from typing import TYPE_CHECKING

from kactor.cli import CliError
from kactor.secure_cluster import PROTOCOLS

if TYPE_CHECKING:
    from core.security.jaas import ZkSaslLogin
    from kactor.cluster import LocalCluster

MIN_LIFE_S = 5.0  # --restart-dead-brokers restarts a broker that had run at least this long


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cluster",
                       description="Start a real ZooKeeper on loopback (unless --zookeeper is given; "
                                   "--zookeeper-ensemble N for N servers in one quorum) and N broker processes. "
                                   "Prints the connect string; Ctrl-C (or SIGTERM, or closing the terminal) stops "
                                   "everything it started. A broker that dies leaves the others serving: the command "
                                   "prints the line that starts it again, or restarts it (--restart-dead-brokers).")
    p.add_argument("--brokers", type=int, default=3, metavar="N", help="how many brokers, ids 0..N-1 (default 3)")
    p.add_argument("--port-base", type=int, default=None, metavar="PORT",
                   help="broker i listens on PORT+i (default: free ports, different on every start)")
    p.add_argument("--metrics-port-base", type=int, default=None, metavar="PORT",
                   help="broker i serves its Prometheus metrics on PORT+i (default: free ports)")
    p.add_argument("--restart-dead-brokers", action="store_true",
                   help="start a broker that died again, with the same id, ports and log dir (default: keep "
                        "serving without it and print the command that restarts it)")
    p.add_argument("--restart-min-life", type=float, default=MIN_LIFE_S, help=argparse.SUPPRESS)
    p.add_argument("--zookeeper", metavar="HOST:PORT[/chroot]", help="use this ZooKeeper instead of an embedded one")
    p.add_argument("--zookeeper-ensemble", type=int, default=1, metavar="N",
                   help="embed N ZooKeeper servers forming one quorum (default 1: standalone); brokers get all N "
                        "in zookeeper.connect and ride out the loss of any one of them")
    p.add_argument("--trace-dir", help="write one message trace per broker process here")
    p.add_argument("--data-dir",
                   help="where the brokers' log dirs, their logs and the embedded ZooKeeper's data go, kept after "
                        "exit: run again on the same dir, the same cluster comes back with its topics and records. "
                        "One cluster at a time on a dir (default: a temp dir, removed on exit)")
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="a broker property for every broker (repeatable)")
    p.add_argument("--security", choices=PROTOCOLS, default="plaintext",
                   help="the brokers' one listener's security protocol, between the brokers too (default "
                        "plaintext). ssl and sasl_*: a CA and a broker certificate made for this cluster; sasl_*: an "
                        "admin user (SASL PLAIN) with a fresh password. Prints the client properties file for "
                        "--command-config and the librdkafka one (kcat -F)")
    p.add_argument("--zookeeper-sasl", action="store_true",
                   help="zookeeper.set.acl=true with a SASL login, as Kafka secures ZooKeeper: the embedded ZooKeeper "
                        "runs SASLAuthenticationProvider, the brokers log in as user kafka (DIGEST-MD5, a fresh "
                        "password) from a JAAS file's Client section given in KAFKA_OPTS, and every znode is theirs "
                        "to write. Prints the KAFKA_OPTS that gives Kafka's tools (and zkCli.sh, as CLIENT_JVMFLAGS) "
                        "the same login. Without it, a KAFKA_OPTS naming a JAAS Client section is the brokers' login "
                        "and the embedded ZooKeeper accepts it")
    p.add_argument("--hosts", choices=("loopback", "netns"), default="loopback",
                   help="loopback (default): everything on 127.0.0.1. netns: each broker and each ZooKeeper server "
                        "in a network namespace of its own, with its own address on a private bridge that this "
                        "command creates and removes (root; nothing is reachable from outside the machine)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.security.jaas import ZkSaslLogin
    from edges.children import install_stop_signals
    from kactor.cluster import ClusterError, LocalCluster
    from kactor.config import ConfigError, build_config, load_config, parse_overrides
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
    ports = _port_range(args.port_base, args.brokers, "--port-base")
    metrics_ports = _port_range(args.metrics_port_base, args.brokers, "--metrics-port-base")
    if (ports or metrics_ports) and args.hosts == "netns":
        raise CliError("--port-base and --metrics-port-base are for --hosts loopback: in a namespace a broker has "
                       f"port {9092} to itself and serves no metrics", 2)
    taken = set(ports.values()) & set(metrics_ports.values())
    if taken:
        raise CliError(f"--port-base and --metrics-port-base overlap on port {min(taken)}", 2)
    for port in sorted({*ports.values(), *metrics_ports.values()}):
        if not _free(port):
            raise CliError(f"port {port} is already in use on 127.0.0.1")
    if args.zookeeper_sasl and args.zookeeper:
        raise CliError("--zookeeper-sasl sets up the embedded ZooKeeper's SASL: with --zookeeper, name a JAAS file "
                       "whose Client section that ZooKeeper accepts in KAFKA_OPTS=-Djava.security.auth.login.config="
                       "<file> instead", 2)
    try:  # validate the overrides once, here, rather than N times in N children
        probe = ["broker.id=0", "zookeeper.connect=127.0.0.1:1", *args.override]
        if args.zookeeper_sasl:  # the login LocalCluster makes: only the overrides are checked here
            checked = build_config(parse_overrides(["zookeeper.set.acl=true", *probe]), ZkSaslLogin("kafka", ""))
        else:
            checked = load_config(None, probe)
    except ConfigError as e:
        raise CliError(str(e)) from None
    if args.security != "plaintext" and args.hosts == "netns":
        raise CliError("--security is for --hosts loopback: the certificate names 127.0.0.1 and localhost", 2)
    try:  # a --data-dir in use, or holding logs this cluster cannot serve, is refused here, before anything starts
        cluster = LocalCluster(args.brokers, args.zookeeper, args.data_dir, args.trace_dir, args.override,
                               zookeeper_ensemble=args.zookeeper_ensemble, hosts=args.hosts, ports=ports,
                               metrics_ports=metrics_ports, security=args.security,
                               persistent=args.data_dir is not None, zookeeper_sasl=args.zookeeper_sasl)
    except ClusterError as e:
        raise CliError(str(e)) from None
    stop = {"now": False}
    # SIGTERM and SIGHUP (the terminal closed) ask for the same orderly stop as Ctrl-C, at any time: the handlers
    # stay in place during the stop itself, so a hang-up in the middle of a Ctrl-C shutdown does not cut it short.
    install_stop_signals(lambda signum: stop.update(now=True))
    try:
        cluster.start()
        zk = cluster.client()
        try:
            cluster.wait_registered(zk, 30)
            cluster.wait_for(lambda: cluster.controller_id(zk) is not None, 30, "a controller")
            cluster.wait_for(cluster.metadata_complete, 30, "every broker's metadata to list them all")
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
        if (secure := cluster.secure) is not None:
            print(f"security: {secure.protocol}, between the brokers too"
                  + (f"; admin user {secure.librdkafka['sasl.username']} (SASL PLAIN)"
                     if "sasl.username" in secure.librdkafka else ""))
            print(f"client properties (kactor and kafka-*.sh tools' --command-config): {secure.client_properties}")
            print(f"librdkafka properties (kcat -F, confluent-kafka): {secure.librdkafka_properties}")
        for b in sorted(cluster.procs):
            host, port = cluster.broker_address(b)
            metrics = f"   metrics {cluster.metrics_url(b)}" if b in cluster.metrics_ports else ""
            print(f"broker {b}: {host}:{port}{metrics}   pid {cluster.procs[b].pid}   log {cluster.logs[b]}")
        if cluster.layout is not None:
            hosts = ", ".join(f"{h.name} {h.address}" for h in cluster.layout.hosts.values())
            print(f"hosts (network namespaces on bridge {cluster.layout.bridge}, {cluster.layout.subnet}; this "
                  f"machine is {cluster.layout.host_address}): {hosts}")
        if (login := cluster.zookeeper_sasl) is not None:
            _print_zookeeper_sasl(cluster, login, checked["zookeeper.set.acl"])
        where = cluster.base_dir + (" (removed on exit)" if args.data_dir is None else "")
        print(f"data: {where}" + (f"   traces: {args.trace_dir}" if args.trace_dir else ""))
        print(_how_to_stop(), flush=True)
        reported: set[int] = set()
        started = {b: time.monotonic() for b in cluster.procs}
        while not stop["now"]:
            for broker_id, proc in list(cluster.procs.items()):
                if proc.poll() is not None and broker_id not in reported:
                    reported.add(broker_id)
                    # a broker that cannot even start (a port taken, a bad disk) is not restarted in a loop
                    lived = time.monotonic() - started[broker_id]
                    restart = args.restart_dead_brokers and lived >= args.restart_min_life
                    _broker_died(cluster, broker_id, proc.returncode, restart)
                    if restart:
                        cluster.start_broker(broker_id)
                        started[broker_id] = time.monotonic()
                        reported.discard(broker_id)
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


def _how_to_stop() -> str:
    """The last line of the start-up report: Ctrl-C, unless this process was started with SIGINT ignored (Python
    then leaves it ignored, as the JVM leaves Kafka's shutdown signals): a script's background job, which the
    terminal's Ctrl-C is not meant for. The line still begins "Ctrl-C to stop", the mark tools wait for."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        return (f"Ctrl-C to stop is off: this process was started with SIGINT ignored (a background job); "
                f"kill -TERM {os.getpid()} stops it")
    return "Ctrl-C to stop"


def _print_zookeeper_sasl(cluster: LocalCluster, login: ZkSaslLogin, set_acl: bool) -> None:
    """The brokers' ZooKeeper SASL login, and how Kafka's tools and ZooKeeper's CLI log in as them."""
    print(f"zookeeper: the brokers' SASL login is {login.username} (DIGEST-MD5, JAAS file {login.path}, section "
          f"{login.section}), zookeeper.set.acl={str(set_acl).lower()}")
    if cluster.broker_env:
        opts = cluster.kafka_opts(login.path)
        print(f"the same login for Kafka's tools (kafka-configs.sh --zookeeper ..., kactor's): KAFKA_OPTS='{opts}'; "
              f"for zkCli.sh: CLIENT_JVMFLAGS='-Djava.security.auth.login.config={login.path}'")


def _port_range(base: int | None, brokers: int, option: str) -> dict[int, int]:
    """Broker id → base + id; a usage error when the range leaves 1..65535."""
    if base is None:
        return {}
    if base < 1 or base + brokers - 1 > 65535:
        raise CliError(f"{option} {base}: brokers 0..{brokers - 1} need ports {base}..{base + brokers - 1}, within "
                       "1..65535", 2)
    return {b: base + b for b in range(brokers)}


def _free(port: int) -> bool:
    """Whether a broker's listener could bind ``port`` now. As the listeners bind with SO_REUSEADDR (Kafka's too),
    so does this check: the TIME-WAIT sockets a cluster that just stopped leaves on its ports (a minute on Linux)
    do not count, a live listener still does."""
    from zk_bridge.server import port_in_use

    return not port_in_use("127.0.0.1", port)


def _broker_died(cluster: LocalCluster, broker_id: int, code: int, restart: bool) -> None:
    """A broker exited: how (stderr, with the end of its log), then what happens now (stdout)."""
    print(f"broker {broker_id} exited with {code}; the end of its log:\n{cluster.log_tail(broker_id, 2000)}",
          file=sys.stderr, flush=True)
    command = cluster.restart_command(broker_id)
    if restart:
        print(f"broker {broker_id} died (exit {code}); restarting it: {command}", flush=True)
        return
    print(f"broker {broker_id} died (exit {code}); the other brokers keep serving. To start it again (same id, "
          f"ports and log dir), run:\n  {command}", flush=True)
