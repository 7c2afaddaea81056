"""``kactor zookeeper``: run a real standalone ZooKeeper on loopback until Ctrl-C (for local clusters and demos)."""

from __future__ import annotations

import argparse

from kactor.cli import CliError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("zookeeper", help="run a standalone ZooKeeper on 127.0.0.1 until interrupted",
                              description="Run Debian's ZooKeeper 3.8 standalone on 127.0.0.1 until SIGINT/SIGTERM.")
    p.add_argument("--port", type=int, default=2181, help="client port (default 2181)")
    p.add_argument("--data-dir", default=None,
                   help="keep ZooKeeper's data here (default: a temporary directory removed on exit)")
    p.add_argument("--tick-ms", type=int, default=2000, help="ZooKeeper tickTime in ms (default 2000)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from zk_bridge.server import ZooKeeperUnavailable, serve_forever

    if not 0 < args.port < 65536:
        raise CliError(f"--port must be between 1 and 65535, not {args.port}", code=2)
    try:
        return serve_forever(port=args.port, data_dir=args.data_dir, tick_ms=args.tick_ms)
    except ZooKeeperUnavailable as e:
        raise CliError(str(e)) from None
