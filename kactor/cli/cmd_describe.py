"""``kactor describe``: a live view of the cluster from ZooKeeper: controller and epoch, brokers, and every
partition's leader / leader epoch / ISR / replicas with under-replicated, offline and reassigning ones marked.

With ``--bootstrap-server`` each partition's end offset (ListOffsets through Kafka's protocol) is shown too, and
``--watch --produce TOPIC`` runs a producer in the same command (``--rate`` records a second, ``--acks``) whose
acknowledgements are shown next to the leaders: the last acknowledged offset per partition, acks per second, the
time since the last ack (red while records wait), the longest pause (what a leader's move cost the producer),
records waiting and failed. Stop it with Ctrl-C; the producer flushes what it sent.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING

from kazoo.exceptions import KazooException

from kactor.admin import describe
from kactor.admin.acks import AckSnapshot, AckTracker
from kactor.admin.watch_producer import WatchProducer
from kactor.cli.client_properties import Servers
from kactor.cli.kafka_support import (
    add_bootstrap_args,
    add_client_config_arg,
    check_client_config,
    kafka_errors,
    servers,
)
from kactor.cli.support import add_zookeeper_args, admin_client, usage_error
from kactor.kafka_clients import DEFAULT_TIMEOUT_S, cluster_metadata, end_offsets
from kactor.kafka_clients import admin_client as kafka_admin_client
from protocol.zk.znodes import ZnodeDecodeError

if TYPE_CHECKING:
    from rich.console import Console


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "describe",
        description="Reads the cluster's ZooKeeper state and shows it: controller id and epoch, live brokers "
                    "with endpoints, every partition's leader, leader epoch, ISR and replicas, with "
                    "under-replicated, offline and reassigning partitions marked.")
    add_zookeeper_args(p)
    p.add_argument("--watch", action="store_true", help="refresh until Ctrl-C")
    p.add_argument("--interval", type=float, default=1.0, metavar="S", help="refresh interval (default 1 s)")
    p.add_argument("--json", action="store_true", help="print the view as JSON")
    add_bootstrap_args(p, required=False, note="with --zookeeper, which it does not replace: adds each partition's "
                                               "end offset and --watch --produce, through Kafka's protocol")
    add_client_config_arg(p, "--command-config", "Property file containing configs to be passed to the Kafka "
                                                 "clients of --bootstrap-server (Admin Client, --produce's producer).")
    p.add_argument("--produce", default=None, metavar="TOPIC",
                   help="with --watch --bootstrap-server: run a producer to TOPIC and show its acknowledgements")
    p.add_argument("--rate", type=float, default=20.0, metavar="N", help="--produce: records per second (default 20)")
    p.add_argument("--acks", choices=("0", "1", "-1", "all"), default="all", help="--produce: acks (default all)")
    p.set_defaults(func=run, _parser=p)


def _console() -> Console:
    from rich.console import Console

    return Console(width=None if sys.stdout.isatty() else 160)


class KafkaSide:
    """What --bootstrap-server adds: an AdminClient for end offsets, and the --produce producer with its tracker."""

    def __init__(self, args: argparse.Namespace, target: Servers) -> None:
        self.admin = kafka_admin_client(target.bootstrap, "kactor-describe", target.librdkafka())
        self.timeout_s = min(args.interval, 2.0)
        cluster_metadata(self.admin, target.bootstrap)
        self.tracker: AckTracker | None = None
        self.producer: WatchProducer | None = None
        if args.produce is not None:
            acks = "all" if args.acks == "-1" else args.acks
            self.tracker = AckTracker(args.produce, acks, args.rate)
            self.producer = WatchProducer(target.bootstrap, args.produce, args.rate, acks, self.tracker,
                                          connection=target.librdkafka())
            self.producer.check_topic(DEFAULT_TIMEOUT_S)
            self.producer.start()

    def end_offsets(self, view: describe.ClusterView) -> dict[tuple[str, int], int]:
        return end_offsets(self.admin, [(t.name, p.info.partition) for t in view.topics for p in t.partitions],
                           self.timeout_s)

    def acks(self) -> AckSnapshot | None:
        return None if self.tracker is None else self.tracker.snapshot()

    def close(self) -> None:
        if self.producer is not None:
            self.producer.stop()


def run(args: argparse.Namespace) -> int:
    if args.watch and args.json:
        usage_error(args, "--json can't be used with --watch")
    if args.interval <= 0:
        usage_error(args, "--interval must be positive")
    if args.produce is not None and not (args.watch and args.bootstrap_server):
        usage_error(args, "--produce needs --watch and --bootstrap-server")
    if args.rate <= 0:
        usage_error(args, "--rate must be positive")
    check_client_config(args)
    target = servers(args) if args.bootstrap_server is not None else None
    with admin_client(args) as admin:
        with kafka_errors():
            kafka = KafkaSide(args, target) if target is not None else None
        try:
            return _run(admin, args, kafka)
        finally:
            if kafka is not None:
                kafka.close()


def _run(admin: object, args: argparse.Namespace, kafka: KafkaSide | None) -> int:
    if not args.watch:
        view = describe.read_cluster(admin, args.zookeeper)  # type: ignore[arg-type]
        ends = None if kafka is None else kafka.end_offsets(view)
        if args.json:
            print(json.dumps(describe.to_json(view, ends), indent=2))
        else:
            _console().print(describe.render(view, end_offsets=ends))
        return 0
    console = _console()
    # Ctrl-C only sets a flag, seen between refreshes: raised as KeyboardInterrupt in the middle of a kazoo
    # call, it could leave the client's connection thread waiting and the process hanging in stop()
    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        if console.is_terminal:
            _watch_live(admin, args, kafka, console, stop)
        else:
            _watch_log(admin, args, kafka, console, stop)
    finally:
        signal.signal(signal.SIGINT, previous)
    return 0


def _read(admin: object, args: argparse.Namespace, kafka: KafkaSide | None = None) -> tuple[object, str]:
    """(renderable, change key) for one refresh; a read failure is shown, not raised (ZooKeeper may come back).
    The key changes with the cluster and with the producer's health (describe.producer_health: its first
    acknowledgements, failures, a pause), not with every ack."""
    try:
        view = describe.read_cluster(admin, args.zookeeper)  # type: ignore[arg-type]
    except (KazooException, ZnodeDecodeError) as e:
        message = f"cannot read ZooKeeper: {type(e).__name__} {e}"
        return describe.render_error(args.zookeeper, message), message
    ends = None if kafka is None else kafka.end_offsets(view)
    acks = None if kafka is None else kafka.acks()
    health = None if acks is None else describe.producer_health(acks)
    return (describe.render(view, acks, ends),
            json.dumps([describe.to_json(view), health], sort_keys=True))


def _watch_live(admin: object, args: argparse.Namespace, kafka: KafkaSide | None, console: Console,
                stop: threading.Event) -> None:
    """On a terminal: one rich Live frame, redrawn every interval until ``stop``."""
    from rich.live import Live

    with Live(_read(admin, args, kafka)[0], console=console, auto_refresh=False, screen=False) as live:
        while not stop.wait(args.interval):
            live.update(_read(admin, args, kafka)[0], refresh=True)


def _watch_log(admin: object, args: argparse.Namespace, kafka: KafkaSide | None, console: Console,
               stop: threading.Event) -> None:
    """Piped: print a new frame (under a time rule) only when the cluster changed, until ``stop``."""
    last = None
    while not stop.is_set():
        renderable, key = _read(admin, args, kafka)
        if key != last:
            console.rule(time.strftime("%H:%M:%S"))
            console.print(renderable)
            console.file.flush()
            last = key
        stop.wait(args.interval)
