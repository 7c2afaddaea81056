"""The ``kactor`` command. Each subcommand lives in its own module ``kactor/cli/cmd_<name>.py`` that defines
``register(subparsers)``; the parser it adds sets ``func`` (taking the parsed args, returning an exit code).

Usage errors exit 2 with one line; a `CliError` raised by a command exits with its code and one line, no traceback.
Every command (and ``kactor`` itself) takes ``--version``, as Kafka's tools do. Output piped into a reader that stops
early (``| head``) ends the command quietly, with a Unix tool's SIGPIPE status.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
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


def command_modules() -> list[str]:
    """Every ``cmd_<name>`` module of this package, sorted (``consumer-groups`` is ``cmd_consumer_groups``)."""
    package = importlib.import_module("kactor.cli")
    return sorted(m.name for m in pkgutil.iter_modules(package.__path__) if m.name.startswith("cmd_"))


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser for ``argv``: when its first word names a command, only that command's module is imported.

    Importing every command costs ~2 s (the wire schemas, the admin tools); a test suite and an operator's scripts
    start ``kactor`` hundreds of times, and a broker process once per restart. Without a known command (``--help``,
    a typo) every command is registered, so the help and argparse's "invalid choice" list them all.
    """
    parser = _Parser(prog="kactor", description="Kafka 2.6's ZooKeeper-mode controller as an actor system.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    modules = command_modules()
    first = next((a for a in argv or [] if not a.startswith("-")), None)
    wanted = f"cmd_{first.replace('-', '_')}" if first else None
    for name in [wanted] if wanted in modules else modules:
        importlib.import_module(f"kactor.cli.{name}").register(sub)
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
