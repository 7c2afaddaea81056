"""kactor's command table (kactor.cli.COMMANDS): ``kactor --help`` lists every command without importing one, a
command imports its own module only, and every command module is in the table (issue #42: the CLI starts without
importing what a command does not use, and kactor/ imports nothing of bench/)."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from pathlib import Path

from kactor.cli import COMMANDS, Commands, build_parser

CLI_DIR = Path(__file__).resolve().parents[3] / "kactor" / "cli"


def _commands_imported(argv: list[str]) -> list[str]:
    """The command modules a fresh interpreter holds after building the parser for ``argv``."""
    modules = sorted({module for module, _help in COMMANDS.values()})
    code = (f"import sys; from kactor.cli import build_parser; build_parser({argv!r}); "
            f"print(','.join(m for m in {modules!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return [m for m in out.strip().split(",") if m]


def test_the_help_lists_every_command_without_importing_one() -> None:
    assert _commands_imported(["--help"]) == []
    assert _commands_imported(["no-such-command"]) == []


def test_a_command_imports_its_own_module_only() -> None:
    assert _commands_imported(["topics", "--help"]) == ["kactor.cli.cmd_topics"]
    assert _commands_imported(["bench", "--help"]) == ["bench.cli"]


def test_the_help_shows_each_command_with_its_line() -> None:
    parser = build_parser(["--help"])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {a.dest: a.help for a in sub._choices_actions} == {name: text for name, (_m, text) in COMMANDS.items()}


def test_every_command_module_is_in_the_table_and_registers_its_command() -> None:
    on_disk = {f"kactor.cli.{p.stem}" for p in CLI_DIR.glob("cmd_*.py")}
    assert on_disk <= {module for module, _help in COMMANDS.values()}, "a kactor/cli/cmd_*.py missing in COMMANDS"
    for name, (module, text) in COMMANDS.items():
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers(action=Commands)
        importlib.import_module(module).register(sub)
        assert list(sub.choices) == [name], module
        assert [a.help for a in sub._choices_actions] == [text], module
