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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kactor", description="Kafka 2.6's ZooKeeper-mode controller as an actor system.")
    parser.add_argument("--version", action="version", version=f"kactor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    package = importlib.import_module("kactor.cli")
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("cmd_"):
            importlib.import_module(f"kactor.cli.{info.name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
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
