"""The ``kactor`` command. Each subcommand lives in its own module ``kactor/cli/cmd_<name>.py`` that defines
``register(subparsers)``; the parser it adds sets ``func`` (taking the parsed args, returning an exit code).

Usage errors exit 2 with one line; a `CliError` raised by a command exits with its code and one line, no traceback.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from kactor import __version__


class CliError(Exception):
    """A clear, one-line failure of a command (bad input, missing dependency, unreachable ZooKeeper...)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
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
    parser.add_argument("--version", action="version", version=f"kactor {__version__}")
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
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except CliError as e:
        print(f"kactor {args.command}: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
