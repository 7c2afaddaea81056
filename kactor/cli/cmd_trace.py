"""``kactor trace``: commands on message traces (docs/trace-format.md).

This module owns the ``trace`` parser and its sub-commands' list; each sub-command lives in its own module
``kactor/cli/trace_<name>.py`` defining ``register(trace_subparsers)``, found here with pkgutil like the top-level
``cmd_*`` modules are.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil

NO_SUBCOMMAND = 2


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("trace",
                                   description="Commands on kactor message traces (one <process>.jsonl per process).")
    trace_sub = parser.add_subparsers(dest="trace_command", metavar="SUBCOMMAND",
                                      parser_class=type(parser))
    package = importlib.import_module("kactor.cli")
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("trace_"):
            importlib.import_module(f"kactor.cli.{info.name}").register(trace_sub)

    def run(args: argparse.Namespace) -> int:
        parser.print_help()
        return NO_SUBCOMMAND

    parser.set_defaults(func=run)
