"""``kactor broker [server.properties] [--override key=value ...]``: one broker process (kafka-server-start.sh)."""

from __future__ import annotations

import argparse
import logging

from kactor.cli import CliError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("broker",
                       description="Run one kactor broker: it registers in ZooKeeper, runs a controller candidate "
                                   "and the broker side. SIGTERM stops it in order (controlled shutdown).")
    p.add_argument("properties", nargs="?", help="a server.properties file (Kafka's config names)")
    p.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                   help="override a property (repeatable), as kafka-server-start.sh --override")
    p.add_argument("--trace-dir", help="write this process's message trace here (kactor.trace.dir)")
    p.add_argument("--log-level", default="INFO")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from kactor.broker_process import BrokerProcess, BrokerStartError
    from kactor.config import ConfigError, load_config
    from kactor.hashseed import ensure_fixed_hash_seed
    from kactor.logging_setup import setup_logging

    ensure_fixed_hash_seed()  # so this process's trace replays exactly (see kactor/hashseed.py)

    try:
        config = load_config(args.properties, args.override)
    except ConfigError as e:
        raise CliError(str(e)) from None
    setup_logging(args.log_level, prefix=f"broker-{config.broker_id} ")
    config.log_startup_notes()
    process = BrokerProcess(config, args.trace_dir)
    # Until the first session is up, kazoo's per-attempt connection warnings would bury the one line that says why
    # the broker cannot start (BrokerStartError); once started, they are worth logging again.
    quiet = _UntilStarted(process)
    kazoo_log = logging.getLogger("kazoo.client")
    kazoo_log.addFilter(quiet)
    try:
        return process.run()
    except BrokerStartError as e:
        raise CliError(str(e)) from None
    finally:
        kazoo_log.removeFilter(quiet)


class _UntilStarted(logging.Filter):
    """Drops kazoo's connection warnings while the broker process has no runtime yet (it is still connecting)."""

    def __init__(self, process: object) -> None:
        super().__init__()
        self.process = process

    def filter(self, record: logging.LogRecord) -> bool:
        return getattr(self.process, "runtime", None) is not None or record.levelno >= logging.ERROR
