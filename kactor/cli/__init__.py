"""The ``kactor`` command. `COMMANDS` names each subcommand's module by string (most are ``kactor/cli/cmd_<name>.py``;
``bench`` is bench/cli.py) with its one-line help; the module defines ``register(subparsers)``, and the parser it adds
sets ``func`` (taking the parsed args, returning an exit code). Only the module of the command that runs is imported:
``kactor --help`` imports none, and kactor's package imports none of the shell packages (bench/) it starts.

Usage errors exit 2 with one line; a `CliError` raised by a command exits with its code and one line, no traceback.
Every command (and ``kactor`` itself) takes ``--version``, as Kafka's tools do. Output piped into a reader that stops
early (``| head``) ends the command quietly, with a Unix tool's SIGPIPE status.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from kactor import __version__


class CliError(Exception):
    """A clear, one-line failure of a command (bad input, missing dependency, unreachable ZooKeeper...)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


KAFKA_VERSION = "2.6.3"  # the Kafka release whose controller, brokers and tools kactor rebuilds
VERSION_TEXT = f"kactor {__version__} (Kafka {KAFKA_VERSION})"
SIGPIPE_EXIT = 128 + 13  # what a shell reports for a Unix tool killed by SIGPIPE


class _Parser(argparse.ArgumentParser):
    """Every parser of the command line: one clear usage-error line, and ``--version`` (Kafka's tools all take it:
    CommandDefaultOptions.versionOpt, CommandLineUtils.printVersionAndDieIfNeeded prints the version, exit 0)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.add_argument("--version", action="version", version=VERSION_TEXT,
                          help=f"Display kactor's version and the Kafka version it implements ({KAFKA_VERSION}).")

    def error(self, message: str) -> None:  # one clear line, exit 2, as Kafka's tools do for usage errors
        self.exit(2, f"{self.prog}: error: {message}\n")


# command -> (its module, its line in ``kactor --help``)
COMMANDS: dict[str, tuple[str, str]] = {
    "acls": ("kactor.cli.cmd_acls", "add, remove or list ACLs (as kafka-acls.sh)"),
    "bench": ("bench.cli", "run a benchmark against Kafka's published figures"),
    "broker": ("kactor.cli.cmd_broker", "run one broker (as kafka-server-start.sh)"),
    "broker-api-versions": ("kactor.cli.cmd_broker_api_versions",
                            "print each broker's API versions (kafka-broker-api-versions.sh)"),
    "chaos": ("kactor.cli.cmd_chaos", "seeded fault runs with data invariants against a real cluster"),
    "cluster": ("kactor.cli.cmd_cluster", "run a local cluster: embedded ZooKeeper (or ensemble) + N brokers"),
    "configs": ("kactor.cli.cmd_configs",
                "describe or change topic, broker, user and client configs (as kafka-configs.sh)"),
    "consume": ("kactor.cli.cmd_consume",
                "print a topic's records (kafka-console-consumer, through Kafka's protocol)"),
    "consumer-groups": ("kactor.cli.cmd_consumer_groups",
                        "list, describe, delete consumer groups, reset their offsets (kafka-consumer-groups.sh)"),
    "delete-records": ("kactor.cli.cmd_delete_records",
                       "delete the records of partitions up to given offsets (kafka-delete-records.sh)"),
    "demo": ("kactor.cli.cmd_demo", "run a 3-broker cluster through a short story, then replay and report"),
    "describe": ("kactor.cli.cmd_describe",
                 "show controller, brokers and partition states (rich table, --watch, --json)"),
    "dump-log": ("kactor.cli.cmd_dump_log", "print log segments, indexes and snapshots (kafka-dump-log.sh)"),
    "get-offsets": ("kactor.cli.cmd_get_offsets", "print partitions' offsets by time (kafka.tools.GetOffsetShell)"),
    "leader-election": ("kactor.cli.cmd_leader_election",
                        "elect partition leaders: preferred or unclean (as kafka-leader-election.sh)"),
    "log-dirs": ("kactor.cli.cmd_log_dirs", "describe the brokers' log directories (kafka-log-dirs.sh)"),
    "preferred-replica-election": (
        "kactor.cli.cmd_preferred_replica_election",
        "move leadership back to preferred replicas (as kafka-preferred-replica-election.sh)"),
    "produce": ("kactor.cli.cmd_produce", "append N records to a topic's partition leaders"),
    "reassign-partitions": ("kactor.cli.cmd_reassign_partitions",
                            "move partitions between brokers (as kafka-reassign-partitions.sh)"),
    "server-stop": ("kactor.cli.cmd_server_stop", "stop the local kactor brokers (kafka-server-stop.sh)"),
    "sim": ("kactor.cli.cmd_sim", "seeded fault runs of a simulated cluster in one process"),
    "topics": ("kactor.cli.cmd_topics", "create, delete, describe, or change a topic (as kafka-topics.sh)"),
    "transactions": ("kactor.cli.cmd_transactions",
                     "list, describe, find hanging and abort transactions (kafka-transactions.sh, KIP-664)"),
    "trace": ("kactor.cli.cmd_trace", "summarise, generate, convert, replay or show message traces"),
    "zookeeper": ("kactor.cli.cmd_zookeeper", "run a ZooKeeper (or an ensemble) on 127.0.0.1 until interrupted"),
}


class Commands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """The subcommands' action: a command's parser takes its help line from `COMMANDS` (its module gives none)."""

    def add_parser(self, name: str, **kwargs: object) -> argparse.ArgumentParser:
        if name in COMMANDS:
            kwargs.setdefault("help", COMMANDS[name][1])
        return super().add_parser(name, **kwargs)  # type: ignore[arg-type]


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser for ``argv``: when its first word names a command, only that command's module is imported.

    Importing every command costs ~2 s (the wire schemas, the admin tools); a test suite and an operator's scripts
    start ``kactor`` hundreds of times, and a broker process once per restart. Without a known command (``--help``,
    a typo) every command is listed from `COMMANDS` without importing any, so the help and argparse's "invalid
    choice" list them all.
    """
    parser = _Parser(prog="kactor", description="Kafka 2.6's ZooKeeper-mode controller as an actor system.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser, action=Commands)
    first = next((a for a in argv or [] if not a.startswith("-")), None)
    if first in COMMANDS:
        importlib.import_module(COMMANDS[first][0]).register(sub)
    else:
        for name in COMMANDS:
            sub.add_parser(name)
    return parser


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        try:
            code = int(args.func(args) or 0)
        except CliError as e:
            print(f"kactor {args.command}: {e}", file=sys.stderr)
            code = e.code
        sys.stdout.flush()  # what is still buffered meets a closed pipe here, not at the interpreter's exit
        return code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        if not _stdout_closed():
            raise  # a pipe of the command's own (a socket, a child's stdin): a failure to report, not a reader gone
        return _reader_gone()


def _stdout_closed() -> bool:
    """Whether stdout is a pipe (or socket) whose reader is gone: poll reports POLLERR on it then."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _reader_gone() -> int:
    """The reader of stdout went away (``kactor topics --list | head -1``): stop quietly, as a Unix tool killed by
    SIGPIPE, not with a traceback. stdout is pointed at /dev/null so the interpreter's last flush of what is still
    buffered fails no more (Python's documented way: "Note on SIGPIPE" of the signal module)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout (a test's capture): nothing left to flush into the pipe
        pass
    return SIGPIPE_EXIT


if __name__ == "__main__":
    sys.exit(main())
