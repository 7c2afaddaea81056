"""``kactor describe``: a live view of the cluster from ZooKeeper: controller and epoch, brokers, and every
partition's leader / leader epoch / ISR / replicas with under-replicated, offline and reassigning ones marked."""

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
from kactor.cli.support import add_zookeeper_args, admin_client, usage_error
from zk_bridge.znodes import ZnodeDecodeError

if TYPE_CHECKING:
    from rich.console import Console


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "describe", help="show controller, brokers and partition states (rich table, --watch, --json)",
        description="Reads the cluster's ZooKeeper state and shows it: controller id and epoch, live brokers "
                    "with endpoints, every partition's leader, leader epoch, ISR and replicas, with "
                    "under-replicated, offline and reassigning partitions marked.")
    add_zookeeper_args(p)
    p.add_argument("--watch", action="store_true", help="refresh until Ctrl-C")
    p.add_argument("--interval", type=float, default=1.0, metavar="S", help="refresh interval (default 1 s)")
    p.add_argument("--json", action="store_true", help="print the view as JSON")
    p.set_defaults(func=run, _parser=p)


def _console() -> Console:
    from rich.console import Console

    return Console(width=None if sys.stdout.isatty() else 160)


def run(args: argparse.Namespace) -> int:
    if args.watch and args.json:
        usage_error(args, "--json can't be used with --watch")
    if args.interval <= 0:
        usage_error(args, "--interval must be positive")
    with admin_client(args) as admin:
        if not args.watch:
            view = describe.read_cluster(admin, args.zookeeper)
            if args.json:
                print(json.dumps(describe.to_json(view), indent=2))
            else:
                _console().print(describe.render(view))
            return 0
        console = _console()
        # Ctrl-C only sets a flag, seen between refreshes: raised as KeyboardInterrupt in the middle of a kazoo
        # call, it could leave the client's connection thread waiting and the process hanging in stop()
        stop = threading.Event()
        previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
        try:
            if console.is_terminal:
                _watch_live(admin, args, console, stop)
            else:
                _watch_log(admin, args, console, stop)
        finally:
            signal.signal(signal.SIGINT, previous)
    return 0


def _read(admin: object, args: argparse.Namespace) -> tuple[object, str]:
    """(renderable, change key) for one refresh; a read failure is shown, not raised (ZooKeeper may come back)."""
    try:
        view = describe.read_cluster(admin, args.zookeeper)  # type: ignore[arg-type]
    except (KazooException, ZnodeDecodeError) as e:
        message = f"cannot read ZooKeeper: {type(e).__name__} {e}"
        return describe.render_error(args.zookeeper, message), message
    return describe.render(view), json.dumps(describe.to_json(view), sort_keys=True)


def _watch_live(admin: object, args: argparse.Namespace, console: Console, stop: threading.Event) -> None:
    """On a terminal: one rich Live frame, redrawn every interval until ``stop``."""
    from rich.live import Live

    with Live(_read(admin, args)[0], console=console, auto_refresh=False, screen=False) as live:
        while not stop.wait(args.interval):
            live.update(_read(admin, args)[0], refresh=True)


def _watch_log(admin: object, args: argparse.Namespace, console: Console, stop: threading.Event) -> None:
    """Piped: print a new frame (under a time rule) only when the cluster changed, until ``stop``."""
    last = None
    while not stop.is_set():
        renderable, key = _read(admin, args)
        if key != last:
            console.rule(time.strftime("%H:%M:%S"))
            console.print(renderable)
            console.file.flush()
            last = key
        stop.wait(args.interval)
