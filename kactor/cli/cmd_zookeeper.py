"""``kactor zookeeper``: run a real ZooKeeper on loopback — one server, or ``--ensemble N`` servers in one quorum —
until Ctrl-C, SIGTERM or SIGHUP (for local clusters and demos)."""

from __future__ import annotations

import argparse

from kactor.cli import CliError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("zookeeper",
                              description="Run Debian's ZooKeeper 3.8 on 127.0.0.1 until SIGINT/SIGTERM/SIGHUP: "
                                          "standalone, or --ensemble N servers forming one quorum (ready once a "
                                          "quorum serves; prints the connect string).")
    p.add_argument("--port", type=int, default=None,
                   help="client port (default 2181); with --ensemble N the servers use PORT..PORT+N-1 "
                        "(default: free ports)")
    p.add_argument("--ensemble", type=int, default=1, metavar="N",
                   help="run N servers as one ensemble (quorum on loopback; default 1 = standalone)")
    p.add_argument("--data-dir", default=None,
                   help="keep ZooKeeper's data here (standalone only; default: a temporary directory removed on exit)")
    p.add_argument("--tick-ms", type=int, default=2000, help="ZooKeeper tickTime in ms (default 2000)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from zk_bridge.server import ZooKeeperUnavailable, serve_forever

    if args.ensemble < 1:
        raise CliError(f"--ensemble must be at least 1, not {args.ensemble}", code=2)
    if args.ensemble > 1 and args.data_dir is not None:
        raise CliError("--data-dir is for a standalone server; an ensemble keeps each server's data in a "
                       "temporary directory", code=2)
    last = (args.port or 1) + args.ensemble - 1
    if args.port is not None and not (args.port > 0 and last < 65536):
        raise CliError(f"--port must be between 1 and {65536 - args.ensemble}, not {args.port}", code=2)
    if args.tick_ms < 1:
        raise CliError(f"--tick-ms must be positive, not {args.tick_ms}", code=2)
    try:
        return serve_forever(port=args.port, data_dir=args.data_dir, tick_ms=args.tick_ms, ensemble=args.ensemble)
    except ZooKeeperUnavailable as e:
        raise CliError(str(e)) from None
