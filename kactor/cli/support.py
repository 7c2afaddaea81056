"""What the admin subcommands share: the ``--zookeeper`` / ``--connect-timeout`` options, reading input files,
and turning every admin / ZooKeeper failure into one `CliError` line."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from kazoo.exceptions import KazooException

from core.broker.log_config import InvalidConfigurationException
from kactor.admin.zk_session import zk_session
from kactor.cli import CliError
from protocol.zk.znodes import ZnodeDecodeError
from zk_bridge.admin import AdminError
from zk_bridge.admin.admin_zk import DEFAULT_CONNECT_TIMEOUT_S, AdminZkClient


def add_zookeeper_args(parser: argparse.ArgumentParser, required: bool = True) -> None:
    """--zookeeper and --connect-timeout (--zookeeper optional where --bootstrap-server is the other way in)."""
    parser.add_argument("--zookeeper", required=required, metavar="HOSTS",
                        help="ZooKeeper connect string host:port[,host:port...][/chroot]")
    parser.add_argument("--connect-timeout", type=float, default=DEFAULT_CONNECT_TIMEOUT_S, metavar="S",
                        help=f"seconds to wait for ZooKeeper (default {DEFAULT_CONNECT_TIMEOUT_S:g})")


def usage_error(args: argparse.Namespace, message: str) -> None:
    """Exit 2 with one line, like argparse (the subcommand's parser is stored as ``args._parser``)."""
    args._parser.error(message)


def seeds_of(args: argparse.Namespace) -> list[int]:
    """``--seeds`` parsed and ``--steps`` checked, for the commands that run fault schedules (chaos, sim)."""
    from kactor.chaos.schedule import parse_seeds

    try:
        seeds = parse_seeds(args.seeds)
    except ValueError as e:
        usage_error(args, f"--seeds: {e}")
    if args.steps < 1:
        usage_error(args, "--steps must be at least 1")
    return seeds


@contextmanager
def admin_errors() -> Iterator[None]:
    """AdminError, a config LogConfig refuses, kazoo and znode-decode failures inside the block become one CliError
    line (exit 1)."""
    try:
        yield
    except (AdminError, InvalidConfigurationException) as e:
        raise CliError(str(e)) from None
    except ZnodeDecodeError as e:
        raise CliError(f"Unexpected znode content: {e}") from None
    except KazooException as e:
        raise CliError(f"ZooKeeper error: {type(e).__name__} {e}".rstrip()) from None


@contextmanager
def admin_client(args: argparse.Namespace) -> Iterator[AdminZkClient]:
    """An AdminZkClient on ``args.zookeeper`` (inside `admin_errors`)."""
    with admin_errors(), zk_session(args.zookeeper, args.connect_timeout) as zk:
        yield AdminZkClient(zk)


def read_text_file(path: str, what: str) -> str:
    """The file's text, or a one-line CliError."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise CliError(f"Cannot read {what} {path}: {e.strerror or e}") from None


def printer() -> Callable[[str], None]:
    """The ``out`` callable the admin actions print through (flushes, so progress shows when piped)."""
    return lambda line: print(line, flush=True)
